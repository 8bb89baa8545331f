package manifest

import (
	"strings"
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
// mcp block registers the tools its server serves, and a check may ask
// about them, so neither is an error before resolving.
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
		"check naming a tool nothing registers yet": `
check "c" {
  assert {
    condition     = !can_call("a", "m__anything") && !contains(reachable("a"), "nope")
    error_message = "x"
  }
}
`,
		"check naming an agent the matrix computes": `
check "c" {
  assert {
    condition     = length(reachable("a")) == 0 || !can_call(reachable("a")[0], "t")
    error_message = "x"
  }
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

// TestUnknownCheckAgentWording pins the error for an agent name written
// out in a check: the one evaluating the call at plan time gives
// (NoAgentError), located at the argument.
func TestUnknownCheckAgentWording(t *testing.T) {
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(registeredAgent + `
agent "b" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude"
  }
}
check "c" {
  assert {
    condition     = holds("zz", "x")
    error_message = "x"
  }
}
`)})
	errs := diags.Errs()
	if len(errs) != 1 {
		t.Fatalf("got:\n%s\nwant: one error", diagLines(diags))
	}
	d := errs[0].(*hcl.Diagnostic)
	want := `Invalid value for "agent" parameter: there is no agent named "zz" (agents: "a", "b").`
	if d.Summary != "Invalid function argument" || d.Detail != want || d.Subject == nil || d.Subject.Start.Line != 23 || d.Subject.Start.Column != 28 {
		t.Errorf("got: %s: %s at %v\nwant: Invalid function argument: %s at agent.acl:23,28", d.Summary, d.Detail, d.Subject, want)
	}
	if !strings.Contains(d.Context.String(), "agent.acl:23") {
		t.Errorf("got: context %v\nwant: the call", d.Context)
	}
}

// TestUnknownCheckAgentJSON: a JSON file's condition is checked too, by
// evaluating it.
func TestUnknownCheckAgentJSON(t *testing.T) {
	_, diags := LoadSources("", map[string][]byte{"agent.acl.json": []byte(`{
  "agent": {"a": {"graph": {"type": "react"}, "model": {"provider": "anthropic", "name": "c"}}},
  "check": {"c": {"assert": {"condition": "${can_call(\"a\", \"t\") || !holds(\"aa\", \"x\")}", "error_message": "x"}}}
}`)})
	errs := diags.Errs()
	if len(errs) != 1 {
		t.Fatalf("got:\n%s\nwant: one error", diagLines(diags))
	}
	d := errs[0].(*hcl.Diagnostic)
	want := `Invalid value for "agent" parameter: there is no agent named "aa" (agents: "a").`
	if d.Summary != "Invalid function argument" || d.Detail != want || d.Subject == nil || d.Subject.Start.Line != 3 {
		t.Errorf("got: %s: %s at %v\nwant: Invalid function argument: %s at agent.acl.json:3", d.Summary, d.Detail, d.Subject, want)
	}
}
