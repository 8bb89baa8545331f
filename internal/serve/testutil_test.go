package serve

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

// writeFiles writes files (path relative to dir → content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
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
}

// buildArtifact runs the real engine on the workspace in dir (load,
// resolve, plan) and returns the artifact of agent, built in memory and
// read back: the bytes apply would write to dist/<agent>.agent.tgz. env
// supplies runtime() values for resolution (nil: none).
func buildArtifact(t testing.TB, dir, agent string, env map[string]string) (*artifact.Agent, *artifact.Archive, []byte) {
	t.Helper()
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatalf("loading %s: %s", dir, diags.Error())
	}
	ctx := context.Background()
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	ws, diags := resolve.Run(ctx, cfg, resolve.Options{Env: lookup, Refresh: true, Lock: lockfile.New()})
	if diags.HasErrors() {
		t.Fatalf("resolving %s: %s", dir, diags.Error())
	}
	plan := planner.New(ctx, cfg, planner.Options{Resolution: ws, Lock: lockfile.New()})
	for _, d := range plan.Diagnostics {
		if d.Severity == 1 { // hcl.DiagError
			t.Fatalf("planning %s: %s", dir, plan.Diagnostics.Error())
		}
	}
	files, err := plan.ArtifactFiles(agent)
	if err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Build(files)
	if err != nil {
		t.Fatal(err)
	}
	arch, err := artifact.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	a, err := artifact.ParseAgent(arch.Files[artifact.AgentName])
	if err != nil {
		t.Fatal(err)
	}
	return a, arch, b
}

// testHost returns a Host over an artifact with env as the environment;
// withdrawn tools are recorded in the returned map.
func testHost(t testing.TB, a *artifact.Agent, arch *artifact.Archive, env map[string]string) (*Host, map[string]string) {
	withdrawn := map[string]string{}
	return &Host{
		Agent: a,
		Files: arch.Files,
		Env:   NewEnv(func(name string) (string, bool) { v, ok := env[name]; return v, ok }),
		Logf:  func(format string, args ...any) { t.Logf("serve: "+format, args...) },
		Withdraw: func(tool, reason string) {
			withdrawn[tool] = reason
		},
	}, withdrawn
}

// testCall returns a Call of tool with args and an empty session state.
func testCall(a *artifact.Agent, tool, args string) *Call {
	var tl *artifact.Tool
	for i := range a.Tools {
		if a.Tools[i].Name == tool {
			tl = &a.Tools[i]
		}
	}
	return &Call{
		Tool:     tl,
		Args:     []byte(args),
		State:    []byte(`{"context":{},"messages":[]}`),
		Config:   []byte("null"),
		Session:  "test",
		Event:    func(string, any) {},
		Progress: func(float64, float64, string) {},
	}
}
