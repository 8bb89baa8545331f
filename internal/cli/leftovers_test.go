package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
)

// TestPlanLeftovers: the leftovers of an interrupted apply (files it
// recorded as pending that still hold the recorded bytes and that no
// resource owns) are listed by plan, in its summary line with or without
// resource changes, in plan -json (leftover_artifacts) and make
// -detailed-exitcode 2; apply removes them, and a recorded file that
// does not hold the recorded bytes is never listed nor removed.
func TestPlanLeftovers(t *testing.T) {
	for _, withChange := range []bool{false, true} {
		name := "alone"
		if withChange {
			name = "with a change"
		}
		t.Run(name, func(t *testing.T) {
			dir := copyTree(t, quickstart)
			if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
				t.Fatalf("apply: exit %d\n%s", code, stderr)
			}
			artifact := filepath.Join(dir, "dist", "assistant.agent.tgz")
			data, err := os.ReadFile(artifact)
			must(t, err)
			must(t, os.WriteFile(filepath.Join(dir, "dist", "ghost.agent.tgz"), data, 0o644))
			mine := filepath.Join(dir, "dist", "mine.agent.tgz")
			must(t, os.WriteFile(mine, []byte("mine"), 0o644))
			db, err := state.Open(dir, state.Options{Operation: "apply"})
			must(t, err)
			must(t, db.SetPending(map[string][]string{
				"dist/ghost.agent.tgz": {resolve.SHA256(data)},
				"dist/mine.agent.tgz":  {resolve.SHA256(data)},
			}))
			db.Close()
			summary := "Artifacts match the configuration. Leftovers: 1 file of an interrupted apply to remove."
			if withChange {
				must(t, os.WriteFile(artifact, []byte("edited"), 0o644))
				summary = "Plan: 0 to add, 1 to change, 0 to destroy. Capabilities: 0 granted, 0 revoked, 5 denials. Leftovers: 1 file of an interrupted apply to remove."
			}
			code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-detailed-exitcode", "-no-color")
			if code != ExitChanges || !strings.Contains(stdout, "Leftovers of an interrupted apply") || !strings.Contains(stdout, "- dist/ghost.agent.tgz") || strings.Contains(stdout, "mine.agent.tgz") {
				t.Errorf("plan got: exit %d\n%s%s\nwant: exit 2, dist/ghost.agent.tgz listed, not mine", code, stdout, stderr)
			}
			if !strings.Contains(stdout, summary) {
				t.Errorf("plan summary got:\n%s\nwant: %q", stdout, summary)
			}
			code, stdout, stderr = run(t, "", "-chdir="+dir, "plan", "-json")
			var doc struct {
				LeftoverArtifacts []string `json:"leftover_artifacts"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != ExitOK || !slices.Equal(doc.LeftoverArtifacts, []string{"dist/ghost.agent.tgz"}) {
				t.Errorf("plan -json got: exit %d, leftover_artifacts %v (%v)\n%s\nwant: [dist/ghost.agent.tgz]", code, doc.LeftoverArtifacts, err, stderr)
			}
			code, stdout, stderr = run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color")
			if code != ExitOK || !strings.Contains(stdout, "Removed dist/ghost.agent.tgz (left by an interrupted apply)") {
				t.Errorf("apply got: exit %d\n%s%s\nwant: the leftover removed", code, stdout, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "dist", "ghost.agent.tgz")); !os.IsNotExist(err) {
				t.Errorf("the leftover\ngot:  still there (%v)\nwant: removed", err)
			}
			if b, err := os.ReadFile(mine); err != nil || string(b) != "mine" {
				t.Errorf("the user's file at a recorded path\ngot:  %q (%v)\nwant: kept", b, err)
			}
			code, stdout, _ = run(t, "", "-chdir="+dir, "plan", "-detailed-exitcode", "-no-color")
			if code != ExitOK || !strings.Contains(stdout, "No changes.") {
				t.Errorf("plan after apply got: exit %d\n%s\nwant: no changes", code, stdout)
			}
			code, stdout, _ = run(t, "", "-chdir="+dir, "plan", "-json")
			if code != ExitOK || strings.Contains(stdout, "leftover_artifacts") {
				t.Errorf("plan -json after apply got: exit %d\n%s\nwant: no leftover_artifacts", code, stdout)
			}
		})
	}
}
