package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const quickstart = "../../examples/quickstart"

func TestPlanGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		tty  bool
	}{
		{"quickstart.nocolor", []string{"plan"}, false},
		{"quickstart.color", []string{"plan"}, true},
		{"quickstart.json", []string{"plan", "-json"}, false},
		{"quickstart.summary", []string{"plan", "-matrix=summary", "-no-color"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, quickstart)
			var stdout, stderr bytes.Buffer
			code := Run(append([]string{"-chdir=" + quickstart}, tc.args...), Streams{Stdout: &stdout, Stderr: &stderr, StdoutTTY: tc.tty, StderrTTY: tc.tty})
			if code != ExitOK || stderr.Len() != 0 {
				t.Fatalf("got: exit %d\n%s\nwant: exit 0, nothing on stderr", code, stderr.String())
			}
			checkGolden(t, filepath.Join("testdata", "plan", tc.name+".golden"), stdout.String())
			if snapshot(t, quickstart) != before {
				t.Errorf("plan changed the workspace")
			}
		})
	}
}

func TestPlanDetailedExitCode(t *testing.T) {
	code, _, _ := run(t, "", "-chdir="+quickstart, "plan", "-detailed-exitcode")
	if code != ExitChanges {
		t.Errorf("got: exit %d\nwant: 2 (everything is new)", code)
	}
}

func TestPlanJSONOnInvalidInput(t *testing.T) {
	dir := "../manifest/testdata/invalid/locals_runtime"
	before := snapshot(t, dir)
	code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-json")
	if code != ExitError {
		t.Errorf("got: exit %d\nwant: 1", code)
	}
	if stderr != "" {
		t.Errorf("got stderr %q\nwant: nothing but JSON on stdout", stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v", err)
	}
	diags, _ := doc["diagnostics"].([]any)
	if doc["applyable"] != false || len(diags) == 0 {
		t.Errorf("got: applyable=%v, %d diagnostics\nwant: false with diagnostics", doc["applyable"], len(diags))
	}
	for _, key := range []string{"resource_changes", "tools", "capability_matrix", "capability_changes", "denials", "checks"} {
		if list, ok := doc[key].([]any); !ok || list == nil {
			t.Errorf("got: %s = %v\nwant: an empty list", key, doc[key])
		}
	}
	if snapshot(t, dir) != before {
		t.Errorf("plan changed an invalid workspace")
	}
}

func TestPlanFailedCheck(t *testing.T) {
	code, stdout, stderr := run(t, "", "-chdir=../../planner/testdata/failing_check", "plan", "-no-color")
	if code != ExitError {
		t.Errorf("got: exit %d\nwant: 1", code)
	}
	if !strings.Contains(stderr, "Error: Check failed") || !strings.Contains(stderr, "on agent.acl line 21") {
		t.Errorf("got:\n%s\nwant: a located Check failed error", stderr)
	}
	if !strings.Contains(stdout, "FAIL assistant_never_shells: assistant must never reach the shell") {
		t.Errorf("got:\n%s\nwant: the failed check in the plan", stdout)
	}
}

func TestPlanBadOverrideFlag(t *testing.T) {
	code, _, stderr := run(t, "", "-chdir="+quickstart, "plan", "-capability-override=grant:x")
	if code != ExitError || !strings.Contains(stderr, "invalid -capability-override") {
		t.Errorf("got: exit %d\n%s\nwant: a usage error", code, stderr)
	}
}

// TestPlanLargeWorkspaceSummarises checks that more than 40 tools switch
// the matrix to the per-agent summary, and -matrix=full forces the grid.
func TestPlanLargeWorkspaceSummarises(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("agent \"a\" {\n  capabilities = [\"ns1\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n")
	for i := 0; i < 45; i++ {
		fmt.Fprintf(&b, "tool \"t%02d\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"ns%d::x\"]\n}\n", i, i%3)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := run(t, "", "-chdir="+dir, "plan")
	if !strings.Contains(stdout, "a  -> may call 15 of 45 tools, 30 denied (locked)") {
		t.Errorf("got:\n%s\nwant: the per-agent summary", stdout)
	}
	if !strings.Contains(stdout, "... and 20 more for a") {
		t.Errorf("got:\n%s\nwant: denials capped per agent", stdout)
	}
	_, stdout, _ = run(t, "", "-chdir="+dir, "plan", "-matrix=full")
	if !strings.Contains(stdout, "TOOL") || !strings.Contains(stdout, "t44") {
		t.Errorf("got:\n%s\nwant: the full grid", stdout)
	}
}
