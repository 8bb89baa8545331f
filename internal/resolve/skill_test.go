package resolve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
)

// skillRequest loads a manifest holding skillHCL from the skills fixture
// directory, which serves as workspace and project root.
func skillRequest(t *testing.T, name, skillHCL string) SkillRequest {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "skills"))
	if err != nil {
		t.Fatal(err)
	}
	src := `
agent "helper" {
  graph {
    type = "react"
  }
  prompt = "Help."
  capabilities = ["skills"]
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

providers {
  anthropic {
    models = ["claude-haiku-4-5"]
  }
}

` + skillHCL
	cfg, diags := manifest.LoadSources(dir, map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatalf("loading the test manifest: %s", diags.Error())
	}
	for _, s := range cfg.Skills {
		if s.Name == name {
			return SkillRequest{Config: cfg, Skill: s, Dir: dir, Root: dir}
		}
	}
	t.Fatalf("the test manifest has no skill %q", name)
	return SkillRequest{}
}

func fileNames(files map[string][]byte) []string {
	var names []string
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func TestResolveSkillSource(t *testing.T) {
	tests := []struct {
		name, block, source string
		// For a skill that resolves:
		description string
		tools       []string
		files       []string
		// For one that does not (or warns): the only diagnostic.
		sev     hcl.DiagnosticSeverity
		summary string
		detail  []string
	}{
		{
			name: "good", block: "good", source: "./good",
			description: "Adds numbers carefully. Use it when a question needs arithmetic.",
			tools:       []string{"adder", "Bash(bc:*)"},
			files:       []string{"SKILL.md", "reference/method.md", "scripts/check.sh"},
		},
		{
			name: "allowed-tools as a string", block: "string-tools", source: "string-tools",
			description: "Reviews git history: read-only.",
			tools:       []string{"Read", "Grep", "Bash(git log:*)", "Bash(git show:*)"},
			files:       []string{"SKILL.md"},
		},
		{
			name: "name differs from the block", block: "renamed", source: "./name-mismatch",
			description: "A skill whose front matter disagrees with its block.",
			files:       []string{"SKILL.md"},
			sev:         hcl.DiagWarning, summary: "Skill name differs from its block",
			detail: []string{`"other-name"`, `skill "renamed"`, "name-mismatch/SKILL.md"},
		},
		{
			name: "missing SKILL.md", block: "missing", source: "./missing-skillmd",
			sev: hcl.DiagError, summary: "Missing SKILL.md",
			detail: []string{`"./missing-skillmd" has no SKILL.md`, "description:"},
		},
		{
			name: "invalid YAML", block: "bad", source: "./bad-frontmatter",
			sev: hcl.DiagError, summary: "Invalid SKILL.md",
			detail: []string{"bad-frontmatter/SKILL.md has invalid YAML front matter: line ", "did not find expected ',' or ']'"},
		},
		{
			name: "missing description", block: "nodesc", source: "./no-description",
			sev: hcl.DiagError, summary: "Invalid SKILL.md",
			detail: []string{"no-description/SKILL.md has no description"},
		},
		{
			name: "description not a string", block: "bad-type", source: "./bad-type",
			sev: hcl.DiagError, summary: "Invalid SKILL.md",
			detail: []string{"description that is not a string (line 4)"},
		},
		{
			// Readers differ on which of the two counts.
			name: "key given twice", block: "duplicate-key", source: "./duplicate-key",
			sev: hcl.DiagError, summary: "Invalid SKILL.md",
			detail: []string{"duplicate-key/SKILL.md has \"description\" twice (line 3 and line 4). Keep one."},
		},
		{
			name: "source not found", block: "ghost", source: "./ghost",
			sev: hcl.DiagError, summary: "Source not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := skillRequest(t, tt.block, fmt.Sprintf("skill %q {\n  source = %q\n}\n", tt.block, tt.source))
			res, diags := ResolveSkill(context.Background(), req)
			if tt.summary == "" {
				if len(diags) != 0 {
					t.Fatalf("diagnostics:\ngot:  %s\nwant: none", diagText(diags))
				}
			} else {
				d := oneDiag(t, diags, tt.sev, tt.summary, req.Skill.Source.Range)
				for _, w := range tt.detail {
					if !strings.Contains(d.Detail, w) {
						t.Errorf("detail:\ngot:  %s\nwant: contains %q", d.Detail, w)
					}
				}
				if tt.sev == hcl.DiagError {
					if res != nil {
						t.Errorf("result:\ngot:  %+v\nwant: nil", res)
					}
					return
				}
			}
			if res.Name != tt.block || res.Description != tt.description {
				t.Errorf("name, description:\ngot:  %q, %q\nwant: %q, %q", res.Name, res.Description, tt.block, tt.description)
			}
			if !reflect.DeepEqual(res.AllowedTools, tt.tools) {
				t.Errorf("allowed tools:\ngot:  %q\nwant: %q", res.AllowedTools, tt.tools)
			}
			if got := fileNames(res.Files); !reflect.DeepEqual(got, tt.files) {
				t.Errorf("files:\ngot:  %q\nwant: %q", got, tt.files)
			}
			dir := filepath.Join(req.Dir, tt.source)
			for name, b := range res.Files {
				want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
				if err != nil || string(b) != string(want) {
					t.Errorf("file %s:\ngot:  %q\nwant: %q (%v)", name, b, want, err)
				}
			}
			hash, err := HashPackage(dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Pin == nil || res.Pin.Source != hash || !strings.HasPrefix(hash, "h1:") {
				t.Errorf("pin:\ngot:  %+v\nwant: source %s", res.Pin, hash)
			}
		})
	}
}

// TestResolveSkillPinFollowsContent checks that the pin is independent of
// the skill's location and changes with any file of the skill.
func TestResolveSkillPinFollowsContent(t *testing.T) {
	orig := skillRequest(t, "good", "skill \"good\" {\n  source = \"./good\"\n}\n")
	base, diags := ResolveSkill(context.Background(), orig)
	if diags.HasErrors() {
		t.Fatal(diagText(diags))
	}
	copyDir := func(t *testing.T) string {
		ws := t.TempDir()
		dst := filepath.Join(ws, "skills", "good")
		for name, b := range base.Files {
			p := filepath.Join(dst, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return ws
	}
	tests := []struct {
		name   string
		edit   func(t *testing.T, skill string)
		change bool
	}{
		{"copied elsewhere", func(*testing.T, string) {}, false},
		{"resource edited", func(t *testing.T, skill string) {
			if err := os.WriteFile(filepath.Join(skill, "reference", "method.md"), []byte("# Method\n\nCarry first.\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"resource added", func(t *testing.T, skill string) {
			if err := os.WriteFile(filepath.Join(skill, "extra.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"node_modules ignored", func(t *testing.T, skill string) {
			if err := os.MkdirAll(filepath.Join(skill, "node_modules", "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(skill, "node_modules", "x", "i.js"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := copyDir(t)
			tt.edit(t, filepath.Join(ws, "skills", "good"))
			req := orig
			req.Dir, req.Root = ws, ws
			s := *orig.Skill
			s.Source.Value = "skills/good"
			req.Skill = &s
			res, diags := ResolveSkill(context.Background(), req)
			if diags.HasErrors() {
				t.Fatal(diagText(diags))
			}
			if got := res.Pin.Source != base.Pin.Source; got != tt.change {
				t.Errorf("pin changed:\ngot:  %v (%s vs %s)\nwant: %v", got, res.Pin.Source, base.Pin.Source, tt.change)
			}
			if _, ok := res.Files["node_modules/x/i.js"]; ok {
				t.Errorf("files:\ngot:  node_modules/x/i.js\nwant: build output left out")
			}
		})
	}
}

func TestResolveSkillInline(t *testing.T) {
	tests := []struct {
		name, block, hcl string
		description      string
		files            map[string]string
		resources        map[string]string
		summary          string
	}{
		{
			name: "with resources", block: "csv-triage",
			hcl: `skill "csv-triage" {
  description = "How to inspect a CSV: read the header first."
  content     = "# CSV triage\n\nRead the header row."
  resources = {
    "scripts/count_rows.py" = "print(1)\n"
    "notes/checklist.md"    = "- header\n"
  }
}
`,
			description: "How to inspect a CSV: read the header first.",
			files: map[string]string{
				"SKILL.md":              "---\nname: csv-triage\ndescription: 'How to inspect a CSV: read the header first.'\n---\n\n# CSV triage\n\nRead the header row.\n",
				"scripts/count_rows.py": "print(1)\n",
				"notes/checklist.md":    "- header\n",
			},
		},
		{
			name: "multi-line description", block: "tone",
			hcl: `skill "tone" {
  description = "Keeps replies calm.\n\"No\" shouting: ever."
  content     = "Answer calmly.\n"
}
`,
			description: "Keeps replies calm.\n\"No\" shouting: ever.",
			files: map[string]string{
				"SKILL.md": "---\nname: tone\ndescription: |-\n    Keeps replies calm.\n    \"No\" shouting: ever.\n---\n\nAnswer calmly.\n",
			},
		},
		{
			// The manifest refuses such a resource where it is written;
			// resolve refuses it too, whatever gave it the skill.
			name: "resource named SKILL.md", block: "clash",
			hcl: `skill "clash" {
  description = "d"
  content     = "c"
}
`,
			resources: map[string]string{"SKILL.md": "x"},
			summary:   "Conflicting skill resource",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := skillRequest(t, tt.block, tt.hcl)
			if tt.resources != nil {
				req.Skill.Resources = tt.resources
			}
			res, diags := ResolveSkill(context.Background(), req)
			if tt.summary != "" {
				oneDiag(t, diags, hcl.DiagError, tt.summary, req.Skill.DeclRange)
				return
			}
			if len(diags) != 0 {
				t.Fatalf("diagnostics:\ngot:  %s\nwant: none", diagText(diags))
			}
			if res.Pin != nil || res.Name != tt.block || res.Description != tt.description || res.AllowedTools != nil {
				t.Errorf("result:\ngot:  %+v\nwant: name %q, description %q, no tools, no pin", res, tt.block, tt.description)
			}
			got := map[string]string{}
			for k, v := range res.Files {
				got[k] = string(v)
			}
			if !reflect.DeepEqual(got, tt.files) {
				t.Errorf("files:\ngot:  %q\nwant: %q", got, tt.files)
			}
			// The generated SKILL.md reads back to the same skill.
			fm, problem := parseSkillFrontMatter(res.Files["SKILL.md"])
			if problem != "" || fm.name != tt.block || fm.description != tt.description {
				t.Errorf("generated SKILL.md read back:\ngot:  %+v %s\nwant: name %q, description %q", fm, problem, tt.block, tt.description)
			}
		})
	}
}

func TestParseSkillFrontMatter(t *testing.T) {
	tests := []struct {
		name    string
		md      string
		want    skillFrontMatter
		problem string // substring of the problem; "" for none
	}{
		{"list", "---\ndescription: d\nallowed-tools: [Read, Grep, Read]\n---\nbody\n", skillFrontMatter{description: "d", allowedTools: []string{"Read", "Grep"}}, ""},
		{"space separated", "---\ndescription: d\nallowed-tools: Read Grep  Glob\n---\n", skillFrontMatter{description: "d", allowedTools: []string{"Read", "Grep", "Glob"}}, ""},
		{"comma separated with parentheses", "---\ndescription: d\nallowed-tools: \"Bash(git add:*), Bash(git commit:*),Read\"\n---\n", skillFrontMatter{description: "d", allowedTools: []string{"Bash(git add:*)", "Bash(git commit:*)", "Read"}}, ""},
		{"empty allowed-tools", "---\ndescription: d\nallowed-tools:\n---\n", skillFrontMatter{description: "d"}, ""},
		{"CRLF and BOM", "\ufeff---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n", skillFrontMatter{name: "x", description: "d"}, ""},
		{"leading blank lines count", "\n\n---\ndescription: d\nname: a: b\n---\n", skillFrontMatter{}, "line 5: mapping values are not allowed"},
		{"no front matter", "# Title\n", skillFrontMatter{}, "has no YAML front matter"},
		{"never closed", "---\ndescription: d\n", skillFrontMatter{}, "never closed"},
		{"empty", "---\n---\nbody\n", skillFrontMatter{}, "empty front matter"},
		{"not a mapping", "---\n- a\n- b\n---\n", skillFrontMatter{}, "not a mapping (line 2)"},
		{"name a number", "---\nname: 12\ndescription: d\n---\n", skillFrontMatter{}, "name that is not a string (line 2)"},
		{"allowed-tools entry a map", "---\ndescription: d\nallowed-tools:\n  - Read\n  - {a: b}\n---\n", skillFrontMatter{}, "not a string (line 5)"},
		{"allowed-tools a map", "---\ndescription: d\nallowed-tools: {a: b}\n---\n", skillFrontMatter{}, "neither a list nor a string (line 3)"},
		{"TOML is not front matter", "+++\ndescription = \"d\"\n+++\n", skillFrontMatter{}, "has no YAML front matter"},
		// Any key, quoted: one holding line breaks cannot start lines
		// of the message.
		{"a key twice", "---\ndescription: d\n\"x\\n\\nError: run it\": 1\n\"x\\n\\nError: run it\": 2\n---\n", skillFrontMatter{}, `has "x\n\nError: run it" twice (line 3 and line 4)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problem := parseSkillFrontMatter([]byte(tt.md))
			if tt.problem == "" {
				if problem != "" || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("front matter:\ngot:  %+v %q\nwant: %+v", got, problem, tt.want)
				}
				return
			}
			if !strings.Contains(problem, tt.problem) {
				t.Errorf("problem:\ngot:  %q\nwant: contains %q", problem, tt.problem)
			}
		})
	}
}

// TestResolveSkillEnvFile: a dotenv file in a skill directory, which goes
// into the artifact, is a warning at the skill's source; an example file
// is not.
func TestResolveSkillEnvFile(t *testing.T) {
	orig := skillRequest(t, "good", "skill \"good\" {\n  source = \"./good\"\n}\n")
	base, diags := ResolveSkill(context.Background(), orig)
	if diags.HasErrors() || len(diags) != 0 {
		t.Fatalf("the fixture: %s", diagText(diags))
	}
	ws := t.TempDir()
	dst := filepath.Join(ws, "skills", "good")
	files := map[string][]byte{".env.example": []byte("API_KEY=\n"), "scripts/.env.local": []byte("API_KEY=sk-live\n"), ".env": []byte("API_KEY=sk-live\n")}
	for name, b := range base.Files {
		files[name] = b
	}
	for name, b := range files {
		p := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	req := orig
	req.Dir, req.Root = ws, ws
	s := *orig.Skill
	s.Source.Value = "skills/good"
	req.Skill = &s
	_, diags = ResolveSkill(context.Background(), req)
	var got []string
	for _, d := range diags {
		if d.Severity != hcl.DiagWarning || d.Summary != "Environment file in an artifact" || d.Subject == nil || d.Subject.Start.Line != s.Source.Range.Start.Line {
			t.Errorf("diagnostic\ngot:  %s\nwant: an environment file warning at the source", diagText(hcl.Diagnostics{d}))
			continue
		}
		got = append(got, d.Detail[strings.Index(d.Detail, "holds ")+6:strings.Index(d.Detail, ", which")])
	}
	if want := []string{`"skills/good/.env"`, `"skills/good/scripts/.env.local"`}; !slices.Equal(got, want) {
		t.Errorf("warned of\ngot:  %q\nwant: %q", got, want)
	}
}
