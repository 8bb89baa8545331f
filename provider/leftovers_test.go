package provider

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
)

// TestLeftoversRemovedByProviderApply: a file an interrupted apply left
// (recorded as pending with its digest, owned by no resource) is a
// warning at plan time and is removed by the provider's apply, whether it
// applies changes or has nothing else to do.
func TestLeftoversRemovedByProviderApply(t *testing.T) {
	for _, withChange := range []bool{false, true} {
		name := "alone"
		if withChange {
			name = "with a change"
		}
		t.Run(name, func(t *testing.T) {
			dir := fixture(t, "TestBuildResource")
			applyLikeCLI(t, dir)
			arts, _ := filepath.Glob(filepath.Join(dir, "dist", "*.agent.tgz"))
			if len(arts) == 0 {
				t.Fatal("no artifacts")
			}
			data, err := os.ReadFile(arts[0])
			if err != nil {
				t.Fatal(err)
			}
			ghost := filepath.Join(dir, "dist", "ghost.agent.tgz")
			if err := os.WriteFile(ghost, data, 0o644); err != nil {
				t.Fatal(err)
			}
			db, err := state.Open(dir, state.Options{Operation: "apply"})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SetPending(map[string][]string{"dist/ghost.agent.tgz": {resolve.SHA256(data)}}); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if withChange {
				if err := os.WriteFile(arts[0], []byte("edited"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ws := planWorkspace(t.Context(), dir, engineOptions{refresh: true})
			if ws.failure != nil || ws.diags.HasErrors() {
				t.Fatal(ws.failure, ws.diags)
			}
			if !slices.Equal(ws.plan.Leftovers, []string{"dist/ghost.agent.tgz"}) || len(leftoverWarnings(ws.plan)) != 1 {
				t.Fatalf("plan\ngot:  leftovers %v, warnings %v\nwant: the ghost, one warning", ws.plan.Leftovers, leftoverWarnings(ws.plan))
			}
			if wouldApply(ws.plan, engineOptions{}) != withChange {
				t.Errorf("wouldApply\ngot:  %v\nwant: %v (leftovers alone plan no change)", !withChange, withChange)
			}
			res := applyWorkspace(t.Context(), dir, "dist", engineOptions{refresh: true}, nil)
			if res.failure != nil || res.diags.HasErrors() || res.applied != withChange {
				t.Fatalf("apply\ngot:  %v %v (applied %v)\nwant: applied %v", res.failure, res.diags, res.applied, withChange)
			}
			if _, err := os.Stat(ghost); !os.IsNotExist(err) {
				t.Errorf("the leftover\ngot:  still there (%v)\nwant: removed", err)
			}
			if _, err := os.Stat(arts[0]); err != nil {
				t.Errorf("an owned artifact\ngot:  %v\nwant: kept", err)
			}
		})
	}
}
