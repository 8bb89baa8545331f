package provider

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestStaticErrorsReportedOnce: tool names two blocks register and an
// unknown agent in a check are errors of the manifest itself; the provider
// reports each once, as loading gives it, and plans nothing.
func TestStaticErrorsReportedOnce(t *testing.T) {
	dir := t.TempDir()
	src := `agent "a" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude"
  }
}
tool "list_skills" {
  kind     = "bash"
  commands = ["ls"]
}
skill "s" {
  description = "d"
  content     = "c"
}
check "c" {
  assert {
    condition     = !can_call("aa", "list_skills")
    error_message = "x"
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := planWorkspace(t.Context(), dir, engineOptions{})
	if ws.failure != nil || ws.plan != nil {
		t.Fatalf("got: failure %v, plan %v\nwant: the manifest's errors, no plan", ws.failure, ws.plan)
	}
	count := map[string]int{}
	for _, d := range ws.diags {
		if d.Severity == hcl.DiagError {
			count[d.Summary]++
		}
	}
	if count["Duplicate registered tool"] != 1 || count["Invalid function argument"] != 1 || len(ws.diags.Errs()) != 2 {
		t.Errorf("got: %v\nwant: one Duplicate registered tool, one Invalid function argument", ws.diags)
	}
}
