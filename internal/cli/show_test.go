package cli

import (
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
}
