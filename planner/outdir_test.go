package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
)

// outDirWorkspace writes a workspace whose manifest hashes three source
// directories (a javascript package, a python package, a skill directory)
// and names a fourth through a disabled tool, and returns it with the
// symbolic links its tests spell directories through.
func outDirWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"agent.acl": `
agent "assistant" {
  capabilities = ["math", "skills"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "adder" {
  kind         = "javascript"
  source       = "./tools/adder"
  capabilities = ["math::add"]
}

tool "py" {
  kind   = "python"
  source = "tools/py"
}

tool "off" {
  kind    = "javascript"
  source  = "./tools/off"
  enabled = false
}

skill "research" {
  source = "./skills/research"
}
`,
		"tools/adder/package.json":   "{}",
		"tools/py/pyproject.toml":    "",
		"tools/off/package.json":     "{}",
		"skills/research/SKILL.md":   "---\ndescription: Research.\n---\n",
		"skills/research-notes/x.md": "",
	}
	writeFiles(t, dir, files)
	for link, target := range map[string]string{"research-link": "skills/research", "skills-link": "skills"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestOutDirInSource plans with artifact directories inside, and beside,
// the sources the plan hashes, however they are spelled: inside one (but
// for a directory the hash leaves out) is an error naming the directory,
// the setting and the block; anywhere else is none.
func TestOutDirInSource(t *testing.T) {
	dir := outDirWorkspace(t)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		outDir string
		block  string // "" for no error
	}{
		{outDir: "skills/research/out", block: "skill.research"},
		{outDir: "skills/research", block: "skill.research"},
		{outDir: "skills/research/", block: "skill.research"},
		{outDir: "./skills/other/../research/out", block: "skill.research"},
		{outDir: "research-link/out", block: "skill.research"},
		{outDir: "skills-link/research/deeper/out", block: "skill.research"},
		{outDir: filepath.Join(real, "skills", "research", "out"), block: "skill.research"},
		{outDir: "tools/adder/build", block: "tool.adder"},
		{outDir: "tools/py", block: "tool.py"},
		// Left out of every package hash.
		{outDir: "skills/research/dist"},
		{outDir: "tools/adder/node_modules/out"},
		// Not hashed, or not inside a source.
		{outDir: "tools/off/out"},
		{outDir: "skills"},
		{outDir: "skills/research-notes"},
		{outDir: "dist"},
		{outDir: "."},
	} {
		t.Run(tc.outDir, func(t *testing.T) {
			p := planDir(t, dir, Options{OutDir: tc.outDir})
			var got []string
			for _, d := range p.Diagnostics {
				if d.Summary == SummaryOutDirInSource {
					got = append(got, d.Detail)
				}
			}
			if tc.block == "" {
				if len(got) > 0 {
					t.Fatalf("got:\n%q\nwant:\nno error", got)
				}
				return
			}
			want := `The artifact directory "` + tc.outDir + `" (-out-dir) is inside the source of ` + tc.block + ` (`
			if len(got) != 1 || !strings.HasPrefix(got[0], want) {
				t.Fatalf("got:\n%q\nwant:\none error starting %q", got, want)
			}
			if p.Applyable {
				t.Errorf("got:\napplyable\nwant:\nnot applyable")
			}
		})
	}
}

// TestSourceHolding: a file written inside a source the plan hashes, however
// spelled, names that block and its source; one in a directory the hash
// leaves out, in a disabled tool's source or outside every source, none.
func TestSourceHolding(t *testing.T) {
	dir := outDirWorkspace(t)
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tc := range []struct {
		file, block, source string // block "" for none
	}{
		{"skills/research/x.plan", "skill.research", "./skills/research"},
		{"skills/research/deeper/x.plan", "skill.research", "./skills/research"},
		{"research-link/x.plan", "skill.research", "./skills/research"},
		{"skills/other/../research/x.plan", "skill.research", "./skills/research"},
		{filepath.Join(dir, "tools", "py", "x.plan"), "tool.py", "tools/py"},
		{"tools/adder/x.plan", "tool.adder", "./tools/adder"},
		{"tools/adder/node_modules/x.plan", "", ""},
		{"skills/research/dist/x.plan", "", ""},
		{"tools/off/x.plan", "", ""},
		{"skills/research-notes/x.plan", "", ""},
		{"x.plan", "", ""},
		{filepath.Join(filepath.Dir(dir), "x.plan"), "", ""},
	} {
		block, src, ok := SourceHolding(cfg, tc.file)
		if ok != (tc.block != "") || block != tc.block || src.Value != tc.source {
			t.Errorf("SourceHolding(%q):\ngot:  %q, %q, %v\nwant: %q, %q", tc.file, block, src.Value, ok, tc.block, tc.source)
		}
		if ok && (src.Range.Filename != "agent.acl" || src.Range.Start.Line == 0) {
			t.Errorf("SourceHolding(%q): source range %v, want its place in agent.acl", tc.file, src.Range)
		}
	}
}

// TestOutDirInSourceNamed checks the setting's name the caller gives, and
// a workspace loaded through a symbolic link.
func TestOutDirInSourceNamed(t *testing.T) {
	dir := outDirWorkspace(t)
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	p := planDir(t, link, Options{OutDir: filepath.Join(dir, "skills", "research", "out"), OutDirName: "out_dir"})
	if !hasDiag(p.Diagnostics, hcl.DiagError, SummaryOutDirInSource) {
		t.Fatalf("got:\n%v\nwant:\na %s error", p.Diagnostics, SummaryOutDirInSource)
	}
	for _, d := range p.Diagnostics {
		if d.Summary == SummaryOutDirInSource && (!strings.Contains(d.Detail, "(out_dir)") || strings.Contains(d.Detail, "-out-dir") || d.Subject != nil) {
			t.Errorf("got:\n%s (subject %v)\nwant:\nthe out_dir setting named, and no manifest location", d.Detail, d.Subject)
		}
	}
}

// TestOutDirInSourceFromState plans without an artifact directory a
// workspace whose state has the artifacts inside a source (an apply from
// before the check put them there): the plan would keep them there, so
// it is an error that says how to move them.
func TestOutDirInSourceFromState(t *testing.T) {
	dir := outDirWorkspace(t)
	applied := &Applied{Serial: 1, Resources: map[string]AppliedResource{
		"agent.assistant": {Type: "agent", Name: "assistant", Artifact: &AppliedArtifact{Path: "skills/research/out/assistant.agent.tgz"}},
	}}
	p := planDir(t, dir, Options{Applied: applied})
	want := `The artifacts of agent.assistant are in "skills/research/out", where an earlier apply put them: that directory is inside the source of skill.research (`
	var got []string
	for _, d := range p.Diagnostics {
		if d.Summary == SummaryOutDirInSource {
			got = append(got, d.Detail)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.Contains(got[0], `Apply with -out-dir set to a directory outside`) {
		t.Fatalf("got:\n%q\nwant:\none error starting %q that says to apply with -out-dir", got, want)
	}
	// Moving them with -out-dir is no error.
	if p := planDir(t, dir, Options{Applied: applied, OutDir: "dist"}); hasDiag(p.Diagnostics, hcl.DiagError, SummaryOutDirInSource) {
		t.Errorf("with -out-dir=dist\ngot:\n%v\nwant:\nno error", p.Diagnostics)
	}
}

// TestOutDirInSourceThroughLinkAndDotDot: a source spelled as an absolute
// path with ".." after a symbolic link ("/ws/notes/../research", notes
// linking to skills/notes) is the directory resolution hashes, the ".."
// taken after the link is followed (skills/research), not lexically (a
// /ws/research that does not exist): an artifact directory inside it is
// refused.
func TestOutDirInSourceThroughLinkAndDotDot(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "notes") + string(filepath.Separator) + ".." + string(filepath.Separator) + "research"
	files := map[string]string{
		"agent.acl": `
agent "assistant" {
  capabilities = ["skills"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

skill "research" {
  source = "` + filepath.ToSlash(src) + `"
}
`,
		"skills/research/SKILL.md": "---\ndescription: Research.\n---\n",
		"skills/notes/x.md":        "",
	}
	writeFiles(t, dir, files)
	if err := os.Symlink(filepath.Join("skills", "notes"), filepath.Join(dir, "notes")); err != nil {
		t.Fatal(err)
	}
	p := planDir(t, dir, Options{OutDir: "skills/research/out"})
	if !hasDiag(p.Diagnostics, hcl.DiagError, SummaryOutDirInSource) {
		t.Fatalf("got:\n%v\nwant:\na %s error", p.Diagnostics, SummaryOutDirInSource)
	}
}

// writeFiles writes each file of files (slash-separated path → text)
// under dir, creating its directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOutDirIsAFile: an artifact directory that is a file, or under one,
// is a plan error, where apply would find out only after removing the
// artifacts it moves; a directory that does not exist yet is not.
func TestOutDirIsAFile(t *testing.T) {
	dir := outDirWorkspace(t)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		outDir, want string
	}{
		{"notes.txt", `The artifact directory "notes.txt" (out_dir) is a file`},
		{"notes.txt/agents", `The artifact directory "notes.txt/agents" (out_dir) is under ` + filepath.Join(dir, "notes.txt") + `, which is a file`},
		{"new/agents", ""},
	} {
		p := planDir(t, dir, Options{OutDir: tc.outDir, OutDirName: "out_dir"})
		var got []string
		for _, d := range p.Diagnostics {
			if d.Summary == SummaryOutDirNotDirectory {
				got = append(got, d.Detail)
			}
		}
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s\ngot:  %q\nwant: no error", tc.outDir, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
			t.Errorf("%s\ngot:  %q\nwant: one error starting %q", tc.outDir, got, tc.want)
		}
	}
}
