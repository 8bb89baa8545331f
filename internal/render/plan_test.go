package render

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/planner"
)

const planSrc = `
agent "a" {
  capabilities      = ["shell"]
  capability_policy = "extensible"
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
agent "b" {
  capabilities = ["shell"]
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
tool "web" {
  kind         = "bash"
  commands     = ["curl"]
  capabilities = ["web"]
}
`

// testPlan plans planSrc against applied, simulating override unless it
// is "".
func testPlan(t *testing.T, override string, applied *planner.Applied) *planner.Plan {
	t.Helper()
	return planOf(t, planSrc, override, applied)
}

// planOf plans the manifest src against applied, simulating override
// unless it is "".
func planOf(t *testing.T, src, override string, applied *planner.Applied) *planner.Plan {
	t.Helper()
	cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{})
	opts := planner.Options{Resolution: ws, Applied: applied}
	if override != "" {
		o, err := capability.ParseOverride(override)
		if err != nil {
			t.Fatal(err)
		}
		opts.Override = &o
	}
	return planner.New(context.Background(), cfg, opts)
}

// appliedState is the state an apply of p records; matrix, when not nil,
// stands for the applied matrix instead of p's.
func appliedState(p *planner.Plan, matrix map[string][]string) *planner.Applied {
	a := &planner.Applied{Lineage: "l", Serial: 1, Resources: map[string]planner.AppliedResource{}, Matrix: matrix}
	for _, ad := range p.Addresses {
		a.Resources[ad.Address] = planner.AppliedResource{Type: ad.Type, Name: ad.Name, Kind: ad.Kind, Fingerprint: ad.Fingerprint, Attributes: ad.Attributes}
	}
	if matrix == nil {
		a.Matrix = map[string][]string{}
		for ai, ag := range p.Agents {
			a.Matrix[ag.Name] = p.Matrix().Reachable(ai)
		}
	}
	return a
}

func planText(p *planner.Plan) string {
	var b bytes.Buffer
	Plan(&b, p, PlanOptions{Matrix: MatrixFull})
	return b.String()
}

// TestPlanActionsHeader: "agentform will perform the following actions:"
// stands over resource actions only, never over nothing: not in a plan
// whose changes are capabilities alone, nor in a simulated override.
func TestPlanActionsHeader(t *testing.T) {
	const header = "perform the following actions:"
	first := testPlan(t, "", nil)
	if out := planText(first); !strings.HasPrefix(out, "agentform will "+header+"\n\n  + agent.a will be created\n") {
		t.Errorf("a first plan got:\n%s\nwant: the header over the creates", out)
	}
	applied := appliedState(first, nil)

	// The resources are as applied, but the applied matrix had b call
	// nothing (as an earlier agentform may have recorded it).
	capOnly := testPlan(t, "", appliedState(first, map[string][]string{"a": {"sh"}, "b": {}}))
	out := planText(capOnly)
	if strings.Contains(out, header) || !strings.Contains(out, "Capability changes:\n\n  + b -> sh  granted\n") ||
		!strings.HasSuffix(out, "Plan: 0 to add, 0 to change, 0 to destroy. Capabilities: 1 granted, 0 revoked, 2 denials.\n") {
		t.Errorf("a plan with capability changes only got:\n%s\nwant: no actions header, the change and the summary", out)
	}

	if out := planText(testPlan(t, "", applied)); strings.Contains(out, header) || !strings.HasSuffix(out, "\nNo changes. Artifacts match the configuration.\n") {
		t.Errorf("an unchanged plan got:\n%s\nwant: no header, no changes", out)
	}
}

// TestPlanSimulatedOverride: a simulated session override says so first
// and last, names the agents it counts for and those that ignore it, and
// lists what the session would gain or lose as that, not as changes.
func TestPlanSimulatedOverride(t *testing.T) {
	first := testPlan(t, "", nil)
	p := testPlan(t, "replace:web", appliedState(first, nil))
	out := planText(p)
	for _, want := range []string{
		"Simulated session: capability override replace:web\n\n",
		"  Honoured for: a (capability_policy = \"extensible\")\n",
		"  Ignored for:  b (capability_policy = \"locked\": configured capabilities kept)\n",
		"Capability matrix of the simulated session (",
		"Simulated session capabilities (gained or lost compared with the configuration; apply makes none of these changes):\n\n" +
			"  - a -> sh  would lose\n  + a -> web  would gain\n\n",
		"Denials in the simulated session:\n",
		"\nSimulated session (capability override replace:web, honoured for 1 of 2 agents): would gain 1 and lose 1 tools, 2 denials. Not applyable.\n" +
			"Without the override: no changes. Artifacts match the configuration.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("got:\n%s\nwant it to contain:\n%s", out, want)
		}
	}
	for _, not := range []string{"perform the following actions", "Capability changes", "granted", "revoked", "\nPlan: ", "No changes. Artifacts"} {
		if strings.Contains(out, not) {
			t.Errorf("got:\n%s\nwant no %q: nothing is to apply", out, not)
		}
	}
	if !strings.HasPrefix(out, "Simulated session:") {
		t.Errorf("got:\n%s\nwant: the simulation said first", out)
	}

	// With the resources changed since the apply, the actions are what
	// apply, without the override, would do.
	applied := appliedState(first, map[string][]string{"a": {"sh"}, "b": {}})
	delete(applied.Resources, "tool.web")
	out = planText(testPlan(t, "replace:web", applied))
	if !strings.Contains(out, "Without the override, apply would perform the following actions:\n\n  + tool.web (bash) will be created\n") ||
		!strings.Contains(out, "Capability changes (without the override, apply would make them):\n\n  + b -> sh  granted\n") ||
		!strings.HasSuffix(out, "Without the override, apply would: 1 to add, 0 to change, 0 to destroy. Capabilities: 1 granted, 0 revoked.\n") {
		t.Errorf("got:\n%s\nwant: apply's actions and changes named as such", out)
	}
}

// TestPlanJSONSession: the JSON document of a simulation is not applyable,
// names the override, and keeps the session's gains and losses apart from
// capability_changes.
func TestPlanJSONSession(t *testing.T) {
	first := testPlan(t, "", nil)
	doc := PlanJSON(testPlan(t, "replace:web", appliedState(first, nil)), nil, nil)
	if doc.Applyable || doc.CapabilityOverride != "replace:web" || len(doc.CapabilityChanges) != 0 || len(doc.SessionCapabilityChanges) != 2 ||
		doc.SessionCapabilityChanges[0] != (JSONCapChange{Agent: "a", Tool: "sh", Change: "revoked"}) {
		t.Errorf("got: applyable %v, override %q, changes %+v, session %+v\nwant: not applyable, replace:web, none, a's loss and gain",
			doc.Applyable, doc.CapabilityOverride, doc.CapabilityChanges, doc.SessionCapabilityChanges)
	}
	if doc := PlanJSON(first, nil, nil); !doc.Applyable || doc.CapabilityOverride != "" || doc.SessionCapabilityChanges == nil || len(doc.SessionCapabilityChanges) != 0 {
		t.Errorf("a plain plan got: applyable %v, override %q, session %v\nwant: applyable, no override, []", doc.Applyable, doc.CapabilityOverride, doc.SessionCapabilityChanges)
	}
}

// TestPlanFailedSimulation: errors in a simulated session (a check the
// session fails) do not claim that nothing can be applied: the checks were
// the session's.
func TestPlanFailedSimulation(t *testing.T) {
	first := testPlan(t, "", nil)
	p := testPlan(t, "replace:web", appliedState(first, nil))
	var b bytes.Buffer
	Plan(&b, p, PlanOptions{Matrix: MatrixFull, Errors: 1})
	out := b.String()
	if !strings.HasSuffix(out, "Plan failed: 1 error (below), with the simulated session's capabilities. Plan without -capability-override to see whether the configuration itself applies.\n") ||
		strings.Contains(out, "Nothing can be applied") {
		t.Errorf("got:\n%s\nwant: the failure put on the session", out)
	}
	b.Reset()
	Plan(&b, first, PlanOptions{Matrix: MatrixFull, Errors: 2})
	if !strings.HasSuffix(b.String(), "Plan failed: 2 errors (below). Nothing can be applied until they are fixed.\n") {
		t.Errorf("a plain plan with errors got:\n%s\nwant: nothing can be applied", b.String())
	}
}

// TestPlanRuntimeEnabledTools: a tool with enabled = runtime(...) is a
// column like any other, and the text plan says its column assumes it is
// on, in the grid and in the summary (which names at most five).
func TestPlanRuntimeEnabledTools(t *testing.T) {
	src := planSrc + `
tool "maybe" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
  enabled      = runtime("MAYBE_ENABLED", true)
}
`
	p := planOf(t, src, "", nil)
	grid := planText(p)
	if want := "  maybe: whether it is enabled is known at runtime; its cells assume it is.\n"; !strings.Contains(grid, want) {
		t.Errorf("grid plan lacks %q:\n%s", want, grid)
	}
	if strings.Contains(grid, "sh: whether") || strings.Contains(grid, "web: whether") {
		t.Errorf("grid plan flags a tool that is always enabled:\n%s", grid)
	}
	var b bytes.Buffer
	Plan(&b, p, PlanOptions{Matrix: MatrixSummary})
	if want := "  1 tool is enabled or not at runtime (maybe); the counts assume it is.\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary plan lacks %q:\n%s", want, b.String())
	}

	var many strings.Builder
	many.WriteString(planSrc)
	for _, n := range []string{"r1", "r2", "r3", "r4", "r5", "r6", "r7"} {
		many.WriteString("tool \"" + n + "\" {\n  kind = \"bash\"\n  commands = [\"ls\"]\n  enabled = runtime(\"E\", false)\n}\n")
	}
	b.Reset()
	Plan(&b, planOf(t, many.String(), "", nil), PlanOptions{Matrix: MatrixSummary})
	if want := "  7 tools are enabled or not at runtime (r1, r2, r3, r4, r5 and 2 more); the counts assume they are.\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary plan lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	Plan(&b, testPlan(t, "", nil), PlanOptions{Matrix: MatrixSummary})
	if strings.Contains(b.String(), "at runtime") {
		t.Errorf("a plan without runtime-enabled tools mentions them:\n%s", b.String())
	}
}

// TestPlanStateNamesEscaped: names that come from state (a resource
// destroyed, an agent whose access is revoked) are printed escaped: state
// can be edited by hand, and its names must not reach a terminal as
// escape sequences.
func TestPlanStateNamesEscaped(t *testing.T) {
	first := testPlan(t, "", nil)
	applied := appliedState(first, map[string][]string{"a": {"sh"}, "b": {"sh"}, "ev\x1b]0;pwned\x07il": {"sh"}})
	applied.Resources["tool.ev\x1b]0;pwned\x07il"] = planner.AppliedResource{Type: "tool", Name: "ev\x1b]0;pwned\x07il", Kind: "ba\x1b[2Jsh"}
	out := planText(testPlan(t, "", applied))
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("plan text holds terminal escapes:\n%q", out)
	}
	for _, want := range []string{
		`- tool.ev\x1b]0;pwned\ail (ba\x1b[2Jsh) will be destroyed`,
		`- ev\x1b]0;pwned\ail -> sh  revoked`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan text\ngot:\n%s\nwant a line with %s", out, want)
		}
	}
}

// TestPlanDestroyNamesArtifact: a destroyed agent's line names the file
// its apply removes, as state records it (state can be edited by hand).
func TestPlanDestroyNamesArtifact(t *testing.T) {
	applied := appliedState(testPlan(t, "", nil), nil)
	applied.Resources["agent.gone"] = planner.AppliedResource{Type: "agent", Name: "gone",
		Artifact: &planner.AppliedArtifact{Path: "../victim\x1b.txt", SHA256: "sha256:" + strings.Repeat("0", 64)}}
	out := planText(testPlan(t, "", applied))
	if !strings.Contains(out, "  - agent.gone will be destroyed\n      # (removed from configuration)\n      # (removes ../victim\\x1b.txt)\n") {
		t.Errorf("plan text\ngot:\n%s\nwant: the destroyed agent's artifact named, escaped", out)
	}
}
