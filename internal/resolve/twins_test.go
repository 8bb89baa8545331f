package resolve

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
)

// writeTwins writes files (relative path → content) under dir, skipping
// the test on a file system that takes two of them for one file (macOS,
// Windows), where the problem cannot arise.
func writeTwins(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := PackageFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < len(files) {
		t.Skipf("the file system of %s ignores letter case or Unicode form: %q", dir, got)
	}
}

// TestResolveSkillFilesDifferingOnlyInCase: a skill directory holding two
// files that one file system on macOS or Windows would take for one (which
// the artifact builder refuses) fails to resolve, at its source argument,
// naming both files.
func TestResolveSkillFilesDifferingOnlyInCase(t *testing.T) {
	const skillMD = "---\ndescription: Researches.\n---\n\n# Research\n"
	tests := []struct {
		name    string
		files   map[string]string
		detail  []string
		summary string
	}{
		{
			name:   "letter case",
			files:  map[string]string{"SKILL.md": skillMD, "A.txt": "one", "a.txt": "two"},
			detail: []string{"skills/research/A.txt and skills/research/a.txt", "differ only in letter case", "under skills/research/"},
		},
		{
			name:   "in a directory",
			files:  map[string]string{"SKILL.md": skillMD, "Docs/guide.md": "one", "docs/guide.md": "two"},
			detail: []string{"skills/research/Docs/guide.md and skills/research/docs/guide.md"},
		},
		{
			// On macOS and Windows, notes/ cannot be made beside the file.
			name:   "a file and a directory",
			files:  map[string]string{"SKILL.md": skillMD, "Notes": "one", "notes/todo.md": "two"},
			detail: []string{"skills/research/Notes and skills/research/notes"},
		},
		{
			name:   "SKILL.md itself",
			files:  map[string]string{"SKILL.md": skillMD, "Skill.md": skillMD},
			detail: []string{"skills/research/SKILL.md and skills/research/Skill.md"},
		},
		{
			name:    "Unicode form",
			files:   map[string]string{"SKILL.md": skillMD, "e\u0301.txt": "decomposed", "\u00e9.txt": "precomposed"},
			detail:  []string{`("e\u0301.txt" and "\u00e9.txt")`, "two Unicode normalisation forms"},
			summary: "File names differ only in Unicode form",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			writeTwins(t, filepath.Join(ws, "skills", "research"), tt.files)
			req := skillTwinRequest(t, ws)
			res, diags := ResolveSkill(context.Background(), req)
			summary := "File names differ only in letter case"
			if tt.summary != "" {
				summary = tt.summary
			}
			d := oneDiag(t, diags, hcl.DiagError, summary, req.Skill.Source.Range)
			for _, w := range append(tt.detail, `skill directory "./skills/research"`, "macOS and Windows", "Rename or remove one of them.") {
				if !strings.Contains(d.Detail, w) {
					t.Errorf("detail:\ngot:  %s\nwant: contains %q", d.Detail, w)
				}
			}
			if res != nil {
				t.Errorf("result:\ngot:  %+v\nwant: nil", res)
			}
		})
	}
}

// TestResolveSkillMDInOtherCase: a skill directory whose SKILL.md is
// spelled in other letter case is told to rename it.
func TestResolveSkillMDInOtherCase(t *testing.T) {
	ws := t.TempDir()
	writeTwins(t, filepath.Join(ws, "skills", "research"), map[string]string{"Skill.md": "---\ndescription: Researches.\n---\n"})
	req := skillTwinRequest(t, ws)
	_, diags := ResolveSkill(context.Background(), req)
	d := oneDiag(t, diags, hcl.DiagError, "Missing SKILL.md", req.Skill.Source.Range)
	if w := "has skills/research/Skill.md: the name must be SKILL.md exactly, in this letter case. Rename Skill.md to SKILL.md."; !strings.Contains(d.Detail, w) {
		t.Errorf("detail:\ngot:  %s\nwant: contains %q", d.Detail, w)
	}
}

// skillTwinRequest is the request for skill "research" with source
// ./skills/research in the workspace ws.
func skillTwinRequest(t *testing.T, ws string) SkillRequest {
	t.Helper()
	cfg, diags := manifest.LoadSources(ws, map[string][]byte{"main.acl": []byte("skill \"research\" {\n  source = \"./skills/research\"\n}\n" + resolveTestPreamble)})
	if diags.HasErrors() {
		t.Fatal(diagText(diags))
	}
	return SkillRequest{Config: cfg, Skill: cfg.Skills[0], Dir: ws, Root: ws}
}

// TestResolvePythonFilesDifferingOnlyInCase: a python package holding two
// files that differ only in letter case fails to resolve, at its source
// argument, naming both.
func TestResolvePythonFilesDifferingOnlyInCase(t *testing.T) {
	ws := copyPythonFixture(t, "generic")
	writeTwins(t, filepath.Join(ws, "generic"), map[string]string{"Notes.py": "", "notes.py": ""})
	req := pythonRequest(t, ws, "tool \"greeter\" {\n  kind   = \"python\"\n  source = \"./generic\"\n  export = \"Greeter\"\n}\n", "greeter")
	res, diags := ResolvePython(context.Background(), req)
	d := oneDiag(t, errorsOnly(diags), hcl.DiagError, "File names differ only in letter case", req.Tool.Python.Source.Range)
	for _, w := range []string{`python package "./generic"`, "generic/Notes.py and generic/notes.py", "under tools/greeter/src/", "Rename or remove one of them."} {
		if !strings.Contains(d.Detail, w) {
			t.Errorf("detail:\ngot:  %s\nwant: contains %q", d.Detail, w)
		}
	}
	if res != nil {
		t.Errorf("result:\ngot:  %+v\nwant: nil", res)
	}
}

// TestResolveFileNamesArtifactsCannotHold: a file of a skill directory or
// a python package whose name an artifact cannot hold (a backslash, a
// control character, invalid UTF-8) fails the plan at the source
// argument, naming the file, rather than the apply, unlocated.
func TestResolveFileNamesArtifactsCannotHold(t *testing.T) {
	const skillMD = "---\ndescription: Researches.\n---\n\n# Research\n"
	for _, tc := range []struct{ name, file, want string }{
		{"backslash", `notes\todo.md`, "the path contains a backslash"},
		{"control character", "notes\x1b[31m.md", "the path contains a control character"},
		{"invalid UTF-8", "notes\xff.md", "the path is not valid UTF-8"},
	} {
		t.Run("skill "+tc.name, func(t *testing.T) {
			ws := t.TempDir()
			writeTwins(t, filepath.Join(ws, "skills", "research"), map[string]string{"SKILL.md": skillMD, tc.file: "x"})
			req := skillTwinRequest(t, ws)
			res, diags := ResolveSkill(context.Background(), req)
			d := oneDiag(t, diags, hcl.DiagError, "File name an artifact cannot hold", req.Skill.Source.Range)
			for _, w := range []string{`skill directory "./skills/research"`, strconv.Quote("skills/research/" + tc.file), "under skills/research/", tc.want, "Rename or remove the file."} {
				if !strings.Contains(d.Detail, w) {
					t.Errorf("detail:\ngot:  %s\nwant: contains %q", d.Detail, w)
				}
			}
			if res != nil {
				t.Errorf("result:\ngot:  %+v\nwant: nil", res)
			}
		})
		t.Run("python "+tc.name, func(t *testing.T) {
			ws := copyPythonFixture(t, "generic")
			writeTwins(t, filepath.Join(ws, "generic"), map[string]string{tc.file: ""})
			req := pythonRequest(t, ws, "tool \"greeter\" {\n  kind   = \"python\"\n  source = \"./generic\"\n  export = \"Greeter\"\n}\n", "greeter")
			res, diags := ResolvePython(context.Background(), req)
			d := oneDiag(t, errorsOnly(diags), hcl.DiagError, "File name an artifact cannot hold", req.Tool.Python.Source.Range)
			for _, w := range []string{`python package "./generic"`, strconv.Quote("generic/" + tc.file), "under tools/greeter/src/", tc.want} {
				if !strings.Contains(d.Detail, w) {
					t.Errorf("detail:\ngot:  %s\nwant: contains %q", d.Detail, w)
				}
			}
			if res != nil {
				t.Errorf("result:\ngot:  %+v\nwant: nil", res)
			}
		})
	}
}
