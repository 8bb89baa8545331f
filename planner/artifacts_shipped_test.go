package planner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
)

// TestArtifactShipsOnlyCallableCode plans a workspace of two javascript
// tools and checks which bundles each agent's artifact carries: a locked
// agent only the tools its matrix row allows (the other tool listed with
// no file), an extensible agent or one whose capabilities are runtime
// values every tool, since serve may grant it any.
func TestArtifactShipsOnlyCallableCode(t *testing.T) {
	cfg, opts := shippedWorkspace(t)
	p := New(context.Background(), cfg, opts)
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

// shippedWorkspace loads and resolves a workspace of two javascript tools
// (add, tagged math::add, and write, files::write) and five agents:
// locked with math, locked with neither, extensible, and locked with a
// runtime capability list or policy.
func shippedWorkspace(t *testing.T) (*manifest.Config, Options) {
	t.Helper()
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
	return cfg, Options{Resolution: ws}
}

// TestArtifactFilesShareEntries: agent.json's tool and block entries are
// encoded once per plan and shared between agents. Whatever the order or
// concurrency of the agents, each document is the one a plan that builds
// only that agent writes (and what MarshalAgent writes for it), and a
// plan given another lockfile encodes its entries again.
func TestArtifactFilesShareEntries(t *testing.T) {
	cfg, opts := shippedWorkspace(t)
	agents := []string{"locked", "locked_none", "extensible", "runtime_caps", "runtime_policy"}
	agentJSON := func(p *Plan, agent string) []byte {
		t.Helper()
		files, err := p.ArtifactFiles(agent)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Path == artifact.AgentName {
				return f.Data
			}
		}
		t.Fatalf("%s: no agent.json", agent)
		return nil
	}
	want := map[string][]byte{}
	for _, agent := range agents {
		want[agent] = agentJSON(New(context.Background(), cfg, opts), agent)
		doc, err := artifact.ParseAgent(want[agent])
		if err != nil {
			t.Fatal(err)
		}
		whole, err := artifact.MarshalAgent(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(whole, want[agent]) {
			t.Errorf("%s: agent.json is not what MarshalAgent writes\ngot:\n%s\nwant:\n%s", agent, want[agent], whole)
		}
	}

	shared := New(context.Background(), cfg, opts)
	for _, agent := range agents {
		if got := agentJSON(shared, agent); !bytes.Equal(got, want[agent]) {
			t.Errorf("%s: built after the agents before it\ngot:\n%s\nwant:\n%s", agent, got, want[agent])
		}
	}
	again := New(context.Background(), cfg, opts)
	got := make([][]byte, len(agents))
	var wg sync.WaitGroup
	for i := range agents {
		wg.Go(func() { got[i] = agentJSON(again, agents[len(agents)-1-i]) })
	}
	wg.Wait()
	for i, data := range got {
		agent := agents[len(agents)-1-i]
		if !bytes.Equal(data, want[agent]) {
			t.Errorf("%s: built concurrently, in reverse order\ngot:\n%s\nwant:\n%s", agent, data, want[agent])
		}
	}

	// Encoded ahead (EncodeArtifactEntries), for all agents or one: the
	// same documents, and the builds find every entry they need encoded.
	memoSize := func(p *Plan) int {
		m := p.artifactEntries()
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.m)
	}
	for _, set := range [][]string{agents, {"locked"}, {"runtime_caps"}} {
		ahead := New(context.Background(), cfg, opts)
		ahead.EncodeArtifactEntries(set)
		encoded := memoSize(ahead)
		for _, agent := range set {
			if got := agentJSON(ahead, agent); !bytes.Equal(got, want[agent]) {
				t.Errorf("%s: built after EncodeArtifactEntries(%v)\ngot:\n%s\nwant:\n%s", agent, set, got, want[agent])
			}
		}
		if after := memoSize(ahead); after != encoded || encoded == 0 {
			t.Errorf("entries after EncodeArtifactEntries(%v)\ngot:  %d, then %d once the artifacts were built\nwant: every entry the artifacts need encoded ahead", set, encoded, after)
		}
	}

	// Entries carry lock digests: a new Lock must not be served from
	// the entries encoded for the old one.
	relocked := New(context.Background(), cfg, opts)
	agentJSON(relocked, "extensible")
	lock, diags := lockfile.Parse(relocked.Lock.Bytes(), lockfile.FileName)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	digest := "sha256:" + strings.Repeat("0", 64)
	lock.Tools["add"].Bundle = digest
	relocked.Lock = lock
	if data := agentJSON(relocked, "extensible"); !bytes.Contains(data, []byte(digest)) {
		t.Errorf("agent.json does not carry the new lock's digest %s:\n%s", digest, data)
	}
}
