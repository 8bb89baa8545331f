package planner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
)

// TestArtifactShipsOnlyCallableCode plans a workspace of two javascript
// tools and checks which bundles each agent's artifact carries: a locked
// agent only the tools its matrix row allows (the other tool listed with
// no file), an extensible agent or one whose capabilities are runtime
// values every tool, since serve may grant it any.
func TestArtifactShipsOnlyCallableCode(t *testing.T) {
	dir := t.TempDir()
	acl := ""
	for _, a := range []struct{ name, caps, policy string }{
		{"locked", `["math"]`, `"locked"`},
		{"locked_none", `["other"]`, `"locked"`},
		{"extensible", `["math"]`, `"extensible"`},
		{"runtime_caps", `runtime("CAPS", ["math"])`, `"locked"`},
		{"runtime_policy", `["math"]`, `runtime("POLICY", "locked")`},
	} {
		acl += fmt.Sprintf("agent %q {\n  capabilities      = %s\n  capability_policy = %s\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n\n", a.name, a.caps, a.policy)
	}
	for _, tool := range []struct{ name, tag string }{{"add", "math::add"}, {"write", "files::write"}} {
		acl += fmt.Sprintf("tool %q {\n  kind         = \"javascript\"\n  source       = \"./tools/%s\"\n  capabilities = [%q]\n}\n\n", tool.name, tool.name, tool.tag)
		pkg := filepath.Join(dir, "tools", tool.name)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		src := fmt.Sprintf("export const %s = { name: %q, description: \"d\", parameters: { type: \"object\" }, async execute() { return { output: \"\" }; } };\n", tool.name, tool.name)
		for name, content := range map[string]string{"package.json": `{"name": "x", "version": "0.1.0", "type": "module", "main": "index.js"}`, "index.js": src} {
			if err := os.WriteFile(filepath.Join(pkg, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(acl), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	ws, diags := resolve.Run(context.Background(), cfg, resolve.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	p := New(context.Background(), cfg, Options{Resolution: ws})
	if p.Diagnostics.HasErrors() {
		t.Fatal(p.Diagnostics.Error())
	}
	for agent, want := range map[string][]string{
		"locked":         {"add"},
		"locked_none":    {},
		"extensible":     {"add", "write"},
		"runtime_caps":   {"add", "write"},
		"runtime_policy": {"add", "write"},
	} {
		files, err := p.ArtifactFiles(agent)
		if err != nil {
			t.Fatal(err)
		}
		var bundles []string
		var doc *artifact.Agent
		for _, f := range files {
			if f.Path == artifact.AgentName {
				if doc, err = artifact.ParseAgent(f.Data); err != nil {
					t.Fatal(err)
				}
			} else {
				bundles = append(bundles, f.Path)
			}
		}
		var wantFiles []string
		for _, tool := range want {
			wantFiles = append(wantFiles, "tools/"+tool+"/bundle.js")
		}
		if !slices.Equal(bundles, wantFiles) {
			t.Errorf("%s: files\ngot:  %q\nwant: %q", agent, bundles, wantFiles)
		}
		if len(doc.Tools) != 2 {
			t.Fatalf("%s: agent.json lists %d tools, want both", agent, len(doc.Tools))
		}
		for _, tool := range doc.Tools {
			wantFile := ""
			if slices.Contains(want, tool.Name) {
				wantFile = "tools/" + tool.Name + "/bundle.js"
			}
			if tool.File != wantFile {
				t.Errorf("%s: tool %s file\ngot:  %q\nwant: %q", agent, tool.Name, tool.File, wantFile)
			}
		}
		// The archive is still complete by verify's rules.
		b, err := artifact.Build(files)
		if err != nil {
			t.Fatal(err)
		}
		arch, err := artifact.Read(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if problems := artifact.Verify(arch, nil); len(problems) > 0 {
			t.Errorf("%s: verify: %v", agent, problems)
		}
	}
}
