package manifest

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const registeredAgent = `
agent "a" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude"
  }
}
`

// TestDuplicateRegisteredToolWording pins the error Load gives for two
// blocks registering one tool name: the planner gives the same one for
// names an mcp block adds (DuplicateToolDiagnostic).
func TestDuplicateRegisteredToolWording(t *testing.T) {
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(registeredAgent + `
tool "a2a_r_cancel_task" {
  kind     = "python"
  source   = "./py"
}
tool "r" {
  kind = "a2a"
  url  = "http://127.0.0.1:1"
}
`)})
	errs := diags.Errs()
	if len(errs) != 1 {
		t.Fatalf("got:\n%s\nwant: one error", diagLines(diags))
	}
	d := errs[0].(*hcl.Diagnostic)
	want := `This block registers a tool named "a2a_r_cancel_task", which is already registered by the block at agent.acl:12,1-25. Rename one of the blocks.`
	if d.Summary != "Duplicate registered tool" || d.Detail != want || d.Subject == nil || d.Subject.Start.Line != 16 {
		t.Errorf("got: %s: %s at %v\nwant: Duplicate registered tool: %s at agent.acl:16", d.Summary, d.Detail, d.Subject, want)
	}
}

// TestRegisteredNamesLeftToPlan holds Load to the names it can know: an
// mcp block registers the tools its server serves, which may collide
// with another block's only once resolved.
func TestRegisteredNamesLeftToPlan(t *testing.T) {
	for name, src := range map[string]string{
		// Unresolved, the block is one column named after it; resolved,
		// its tools are list_skills__<served>.
		"mcp block named like a skill tool": `
tool "list_skills" {
  kind      = "mcp"
  transport = "http"
  url       = "http://127.0.0.1:1/mcp"
}
skill "s" {
  description = "d"
  content     = "c"
}
`,
		"mcp served name like a bash block": `
tool "m" {
  kind      = "mcp"
  transport = "http"
  url       = "http://127.0.0.1:1/mcp"
}
tool "m__t" {
  kind     = "bash"
  commands = ["ls"]
}
`,
	} {
		t.Run(name, func(t *testing.T) {
			_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(registeredAgent + src)})
			if diags.HasErrors() {
				t.Errorf("got:\n%s\nwant: no error", diagLines(diags))
			}
		})
	}
}
