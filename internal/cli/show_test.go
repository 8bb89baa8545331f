package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShowAppliedMatrix: show lists what each agent of the last apply may
// call, and says so of an agent that may call nothing rather than leave
// the line empty.
func TestShowAppliedMatrix(t *testing.T) {
	dir := t.TempDir()
	src := `
agent "open" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
agent "closed" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
tool "sh" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
}
`
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-no-color", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := run(t, "", "-chdir="+dir, "show", "-no-color")
	if code != ExitOK {
		t.Fatalf("show: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"  closed may call no tool\n", "  open may call: sh\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, stdout)
		}
	}

	// show -json holds each resource as state show -json prints it.
	code, stdout, stderr = run(t, "", "-chdir="+dir, "show", "-json")
	if code != ExitOK {
		t.Fatalf("show -json: exit %d\n%s", code, stderr)
	}
	var doc struct {
		Resources map[string]json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	code, one, stderr := run(t, "", "-chdir="+dir, "state", "show", "-json", "tool.sh")
	if code != ExitOK {
		t.Fatalf("state show -json: exit %d\n%s", code, stderr)
	}
	var got, want bytes.Buffer
	must(t, json.Compact(&got, doc.Resources["tool.sh"]))
	must(t, json.Compact(&want, []byte(one)))
	if got.String() != want.String() {
		t.Errorf("show -json's tool.sh\ngot:  %s\nwant: %s (as state show -json)", got.String(), want.String())
	}
}

// TestPlanMatrixCounts: the matrix says which of agents and tools there
// are none of, and counts one of each in the singular.
func TestPlanMatrixCounts(t *testing.T) {
	dir := t.TempDir()
	agent := "agent \"a\" {\n  capabilities = [\"x\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude\"\n  }\n}\n"
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(agent), 0o644))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color"); code != ExitOK || !strings.Contains(stdout, "  (no enabled tools)\n") {
		t.Errorf("plan of an agent without tools: exit %d\n%s%s\nwant: (no enabled tools)", code, stdout, stderr)
	}
	tool := "tool \"t\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"x\"]\n}\n"
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(agent+tool), 0o644))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-matrix=summary"); code != ExitOK || !strings.Contains(stdout, "(1 agent × 1 tool;") {
		t.Errorf("plan -matrix=summary of one agent and one tool: exit %d\n%s%s\nwant: (1 agent × 1 tool;", code, stdout, stderr)
	}
}
