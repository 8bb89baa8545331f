package planner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
)

// FuzzPlanConverges plans arbitrary manifests (seeded with every valid
// manifest of the language's tests) without reaching any server, and
// checks that planning never panics, that a plan with no errors builds
// every agent's artifact, and that planning again against the state its
// apply would record plans no change: an attribute computed from the
// manifest must read back as itself.
func FuzzPlanConverges(f *testing.F) {
	paths, _ := filepath.Glob("../internal/manifest/testdata/valid/*/*.acl")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(stateBase))
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": src})
		if diags.HasErrors() {
			return
		}
		// No remote contact, nothing on disk: sources are not found and
		// servers not listed, which the plan reports as it would.
		cfg.Dir = t.TempDir()
		ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{})
		p := New(context.Background(), cfg, Options{Resolution: ws})
		if !p.Applyable {
			return
		}
		for _, ag := range cfg.Agents {
			if _, err := p.ArtifactFiles(ag.Name); err != nil {
				t.Fatalf("artifact of %s: %v", ag.Name, err)
			}
		}
		again := New(context.Background(), cfg, Options{Resolution: ws, Applied: appliedFrom(p)})
		for _, rc := range again.ResourceChanges {
			if !slices.Equal(rc.Actions, []string{ActionNoOp}) {
				t.Fatalf("%s plans %v against its own apply (changed %s)\n%s", rc.Address, rc.Actions, strings.Join(rc.ChangedAttributes, ", "), src)
			}
		}
	})
}
