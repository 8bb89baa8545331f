package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// A2AOperations are the four tools an a2a block registers, in order
// (A2AToolName).
var A2AOperations = []string{"send", "stream", "get_task", "cancel_task"}

// A2AToolName is the name of the tool an a2a block registers for one of
// its operations: "a2a_<block>_<op>".
func A2AToolName(block, op string) string { return fmt.Sprintf("a2a_%s_%s", block, op) }

// SkillTool is a tool the workspace registers when it has a skill.
type SkillTool struct {
	Name string
	// Requires is the capability tag an agent needs to call it.
	Requires string
}

// SkillTools are the tools registered when the workspace has at least one
// skill, sorted by name.
var SkillTools = []SkillTool{
	{"describe_skill", "skills"},
	{"get_skill", "skills"},
	{"list_skills", "skills"},
	{"read_skill_file", "skills"},
	{"run_skill_script", "skills::execute"},
}

// StaticToolNames returns the names of the tools a tool block registers
// when they follow from the manifest alone: the block's own name for
// javascript, python and bash, the four A2AToolName for a2a. An mcp
// block's tools are the ones its server serves, known only once it is
// resolved: nil.
func StaticToolNames(t *Tool) []string {
	switch t.Kind {
	case KindMCP:
		return nil
	case KindA2A:
		out := make([]string, len(A2AOperations))
		for i, op := range A2AOperations {
			out[i] = A2AToolName(t.Name, op)
		}
		return out
	}
	return []string{t.Name}
}

// DuplicateToolDiagnostic is the error for the block at at registering a
// tool named name, which the block at prev registers already. Load reports
// the names StaticToolNames and SkillTools give; the planner the ones an
// mcp block's resolution adds.
func DuplicateToolDiagnostic(name string, prev, at hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Duplicate registered tool",
		Detail:   fmt.Sprintf("This block registers a tool named %q, which is already registered by the block at %s. Rename one of the blocks.", name, prev),
		Subject:  at.Ptr(),
	}
}

// validateToolNames reports every tool name two blocks register, among the
// names that need no resolution, in the order the planner registers tools:
// tool blocks by name (disabled ones too: their names stay taken), then
// the skill tools, reported at the first skill.
func (d *decoder) validateToolNames(cfg *Config) {
	owner := map[string]hcl.Range{}
	claim := func(name string, at hcl.Range) {
		if prev, dup := owner[name]; dup {
			d.diags = append(d.diags, DuplicateToolDiagnostic(name, prev, at))
			return
		}
		owner[name] = at
	}
	for _, t := range cfg.Tools {
		for _, name := range StaticToolNames(t) {
			claim(name, t.DeclRange)
		}
	}
	if len(cfg.Skills) > 0 {
		// The skill tools' names are not the skills' to change: the tool
		// block is the one to rename, and is where the error is.
		for _, st := range SkillTools {
			if prev, dup := owner[st.Name]; dup {
				d.diags = append(d.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Duplicate registered tool",
					Detail: fmt.Sprintf("This block registers a tool named %q, which a workspace with skills registers for them (%s; the first skill is at %s). Rename this tool block.",
						st.Name, skillToolNames(), cfg.Skills[0].DeclRange),
					Subject: prev.Ptr(),
				})
				continue
			}
			owner[st.Name] = cfg.Skills[0].DeclRange
		}
	}
}

// skillToolNames lists the SkillTools' names for a message.
func skillToolNames() string {
	names := make([]string, len(SkillTools))
	for i, st := range SkillTools {
		names[i] = st.Name
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// AgentFunctions are the check functions whose first argument names an
// agent.
var AgentFunctions = []string{"can_call", "holds", "reachable"}

// NoAgentError is the error a check function (AgentFunctions) gives for an
// agent the workspace does not have. Load reports the names written out
// (or built from locals); the planner any other.
func NoAgentError(name string, agents []string) error {
	return function.NewArgErrorf(0, "there is no agent named %q (agents: %s)", name, ListOrNone(agents))
}

// ListOrNone quotes names, sorted and joined by commas, or says "none":
// the list an error about an unknown name offers.
func ListOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return quotedList(slices.Sorted(slices.Values(names)))
}

// validateCheckAgents reports every agent name a check condition asks
// about that the workspace does not have, when the name is known without
// the matrix: agent names are static, so such a check can never be
// evaluated. The error is the one evaluating the call gives.
func (d *decoder) validateCheckAgents(cfg *Config) {
	var agents []string
	known := map[string]bool{}
	for _, a := range cfg.Agents {
		agents = append(agents, a.Name)
		known[a.Name] = true
	}
	// Locals only: no function is needed to name an agent, and calls
	// (to the matrix functions) are not known before planning.
	ctx := &hcl.EvalContext{Variables: d.ctx.Variables}
	noAgent := func(name string) string {
		return fmt.Sprintf("Invalid value for %q parameter: %s.", "agent", NoAgentError(name, agents))
	}
	for _, c := range cfg.Checks {
		for _, as := range c.Asserts {
			node, ok := as.Condition.(hclsyntax.Node)
			if !ok {
				// A JSON file's condition is no syntax tree to walk: it is
				// evaluated with functions that refuse an unknown agent,
				// which finds the calls evaluation reaches.
				d.diags = append(d.diags, checkAgentsByValue(as.Condition, d.ctx.Variables, known, noAgent)...)
				continue
			}
			_ = hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
				call, ok := n.(*hclsyntax.FunctionCallExpr)
				if !ok || !slices.Contains(AgentFunctions, call.Name) || len(call.Args) == 0 || call.ExpandFinal {
					return nil
				}
				arg := call.Args[0]
				v, diags := arg.Value(ctx)
				if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
					return nil
				}
				if v, err := convert.Convert(v, cty.String); err == nil && !known[v.AsString()] {
					d.diags = append(d.diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Invalid function argument",
						Detail:   noAgent(v.AsString()),
						Subject:  arg.StartRange().Ptr(),
						Context:  call.Range().Ptr(),
					})
				}
				return nil
			})
		}
	}
}

// checkAgentsByValue evaluates a check condition with the matrix functions
// standing in for the matrix, except for an agent not in known, and
// returns the errors those calls give (the condition's other errors are
// reported when it is decoded). && and || keep only the diagnostics of
// the side that decides, so it is evaluated with every answer false, then
// every answer true.
func checkAgentsByValue(expr hcl.Expression, vars map[string]cty.Value, known map[string]bool, noAgent func(string) string) hcl.Diagnostics {
	var out hcl.Diagnostics
	seen := map[string]bool{}
	for _, answer := range []bool{false, true} {
		var details []string
		funcs := map[string]function.Function{}
		for name, f := range CheckStdFunctions {
			funcs[name] = f
		}
		for name, f := range checkTypeFuncs {
			spec := &function.Spec{Params: f.Params(), Type: func(args []cty.Value) (cty.Type, error) { return f.ReturnTypeForValues(args) }}
			spec.Impl = func(args []cty.Value, ret cty.Type) (cty.Value, error) {
				if agent := args[0].AsString(); !known[agent] {
					details = append(details, noAgent(agent))
					return cty.NilVal, NoAgentError(agent, slices.Collect(maps.Keys(known)))
				}
				if ret.Equals(cty.Bool) {
					return cty.BoolVal(answer), nil
				}
				return cty.ListValEmpty(cty.String), nil
			}
			funcs[name] = function.New(spec)
		}
		_, diags := expr.Value(&hcl.EvalContext{Variables: vars, Functions: funcs})
		for _, d := range diags {
			if d.Severity != hcl.DiagError || !slices.Contains(details, d.Detail) {
				continue
			}
			if key := fmt.Sprint(d.Subject, d.Detail); !seen[key] {
				seen[key] = true
				out = append(out, d)
			}
		}
	}
	return out
}
