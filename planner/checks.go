package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/manifest"
)

// checkFunctions binds can_call, holds and reachable to the plan's matrix;
// seen is told the name of every agent a call asks about, and starred
// every tag with a "*" segment holds is asked about.
func (p *Plan) checkFunctions(seen, starred, unknownTaken func(string)) map[string]function.Function {
	m := p.matrix
	agentIdx := func(name string) (int, error) {
		if i, ok := m.AgentIndex(name); ok {
			seen(name)
			return i, nil
		}
		// Names written out are manifest.Load's to report; this is one
		// computed from the matrix.
		var names []string
		for _, a := range p.Agents {
			names = append(names, a.Name)
		}
		return 0, manifest.NoAgentError(name, names)
	}
	str := cty.String
	funcs := map[string]function.Function{}
	for name, f := range manifest.CheckStdFunctions {
		funcs[name] = f
	}
	registered := p.registered
	stdContains := funcs["contains"]
	for name, f := range map[string]function.Function{
		"can_call": function.New(&function.Spec{
			Params: []function.Parameter{{Name: "agent", Type: str}, {Name: "tool", Type: str}},
			Type:   function.StaticReturnType(cty.Bool),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				ai, err := agentIdx(args[0].AsString())
				if err != nil {
					return cty.NilVal, err
				}
				tool := args[1].AsString()
				ti, ok := m.ToolIndex(tool)
				if !ok {
					if registered(tool) {
						// A disabled tool is registered but callable by no one.
						return cty.False, nil
					}
					return cty.NilVal, function.NewArgErrorf(1, "%s", p.unknownTool(tool))
				}
				return cty.BoolVal(m.Allowed(ai, ti)), nil
			},
		}),
		"holds": function.New(&function.Spec{
			Params: []function.Parameter{{Name: "agent", Type: str}, {Name: "tag", Type: str}},
			Type:   function.StaticReturnType(cty.Bool),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				ai, err := agentIdx(args[0].AsString())
				if err != nil {
					return cty.NilVal, err
				}
				// A malformed tag (a typo like "shell ") is held by no one:
				// a check over it would pass whatever the agent holds.
				tag := args[1].AsString()
				if w, err := capability.ValidateTag(tag); err != nil {
					return cty.NilVal, function.NewArgErrorf(1, "%s. %s", err, strings.TrimSuffix(manifest.TagHelp, "."))
				} else if w != "" {
					starred(tag)
				}
				return cty.BoolVal(m.Holds(ai, tag)), nil
			},
		}),
		"reachable": function.New(&function.Spec{
			Params: []function.Parameter{{Name: "agent", Type: str}},
			Type:   function.StaticReturnType(cty.List(cty.String)),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				ai, err := agentIdx(args[0].AsString())
				if err != nil {
					return cty.NilVal, err
				}
				// The list is marked with the names it holds, so that
				// contains can tell it (unchanged) from a list built from
				// it, and a name that is no tool (a typo) from one that
				// is not reachable.
				names := m.Reachable(ai)
				if len(names) == 0 {
					return cty.ListValEmpty(cty.String), nil
				}
				vals := make([]cty.Value, len(names))
				for i, n := range names {
					vals[i] = cty.StringVal(n)
				}
				return cty.ListVal(vals).Mark(reachableMark(strings.Join(names, "\x00"))), nil
			},
		}),
		// contains is the standard function, except that a name no tool
		// is registered by, looked for in a list taken from reachable's
		// (its elements all among reachable's names: the list itself,
		// filtered, through a conditional or a local), is told of as
		// unknownTaken: a warning, since such a list may be a sentinel
		// check's. The call written as contains(reachable(...), NAME) is
		// an error instead (reachableNames). A list built with other
		// elements ([for t in reachable("a") : "x"]) may hold anything,
		// and an empty list is not asked about: a contains of it is false
		// whatever the name.
		"contains": function.New(&function.Spec{
			Params: []function.Parameter{
				{Name: "list", Type: cty.DynamicPseudoType, AllowMarked: true},
				{Name: "value", Type: cty.DynamicPseudoType, AllowMarked: true},
			},
			Type: function.StaticReturnType(cty.Bool),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				list, marks := args[0].UnmarkDeep()
				value, _ := args[1].UnmarkDeep()
				if value.Type() == cty.String && value.IsKnown() && !value.IsNull() {
					if tool := value.AsString(); !registered(tool) && takenFromReachable(list, marks) {
						unknownTaken(tool)
					}
				}
				return stdContains.Call([]cty.Value{list, value})
			},
		}),
	} {
		funcs[name] = f
	}
	return funcs
}

// reachableMark marks a list reachable returned with its names, joined
// by NUL.
type reachableMark string

// takenFromReachable reports whether list, a known non-empty list or
// tuple, holds only strings among the names of one of marks'
// reachableMark (null elements, placeholders, aside).
func takenFromReachable(list cty.Value, marks cty.ValueMarks) bool {
	if !list.IsWhollyKnown() || list.IsNull() || !list.CanIterateElements() || list.LengthInt() == 0 {
		return false
	}
	var elems []string
	for it := list.ElementIterator(); it.Next(); {
		_, v := it.Element()
		switch {
		case v.IsNull():
		case v.Type() != cty.String:
			return false
		default:
			elems = append(elems, v.AsString())
		}
	}
	if len(elems) == 0 {
		return false
	}
	for m := range marks {
		if rm, ok := m.(reachableMark); ok {
			names := strings.Split(string(rm), "\x00")
			if !slices.ContainsFunc(elems, func(e string) bool { return !slices.Contains(names, e) }) {
				return true
			}
		}
	}
	return false
}

// reachableNames reports, as can_call reports it, every NAME no tool is
// registered by in contains(reachable(AGENT), NAME) written so in expr
// (in parentheses too), NAME known without the matrix: such a check,
// !contains(reachable("b"), "shel"), would pass whatever b can reach. It
// returns the names it reported.
func (p *Plan) reachableNames(expr hcl.Expression, ctx *hcl.EvalContext) (hcl.Diagnostics, []string) {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return nil, nil
	}
	var diags hcl.Diagnostics
	var names []string
	_ = hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || call.Name != "contains" || len(call.Args) != 2 || call.ExpandFinal {
			return nil
		}
		list := call.Args[0]
		for {
			paren, ok := list.(*hclsyntax.ParenthesesExpr)
			if !ok {
				break
			}
			list = paren.Expression
		}
		if r, ok := list.(*hclsyntax.FunctionCallExpr); !ok || r.Name != "reachable" {
			return nil
		}
		v, d := call.Args[1].Value(ctx)
		if d.HasErrors() {
			return nil
		}
		v, _ = v.UnmarkDeep()
		if !v.IsWhollyKnown() || v.IsNull() || v.Type() != cty.String {
			return nil
		}
		tool := v.AsString()
		if p.registered(tool) {
			return nil
		}
		names = append(names, tool)
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid function argument",
			Detail:   fmt.Sprintf("Invalid value for %q parameter: %s.", "value", p.unknownTool(tool)),
			Subject:  call.Args[1].Range().Ptr(),
			Context:  call.Range().Ptr(),
		})
		return nil
	})
	return diags, names
}

// registered reports whether a tool of the plan, enabled or not, is named
// tool.
func (p *Plan) registered(tool string) bool {
	return slices.ContainsFunc(p.Tools, func(t RegisteredTool) bool { return t.Name == tool })
}

// unknownTool says that no registered tool is named tool: that an mcp
// block whose tools are not known (its server was not listed) may serve
// it, when the name is one of that block's (<block>__<served name>),
// else which tools there are.
func (p *Plan) unknownTool(tool string) string {
	for _, t := range p.Tools {
		if !t.Resolved && strings.HasPrefix(tool, t.Name+"__") {
			return fmt.Sprintf("%s did not resolve, so the tools it serves are not known and %q may be one of them; the check can be evaluated once it resolves", t.Block, tool)
		}
	}
	return fmt.Sprintf("there is no registered tool named %q (tools: %s)", tool, p.toolNames())
}

// toolNames lists the plan's tool names for an error about one it lacks.
func (p *Plan) toolNames() string {
	var names []string
	for _, t := range p.Tools {
		names = append(names, t.Name)
	}
	return manifest.ListOrNone(names)
}

// sentinel reports whether expr holds a contains call that looks for
// name in a list whose own expression writes name (as a literal or a
// local): [for t in reachable("b") : can_call("b", t) ? t : "DENIED"]
// asked for "DENIED" is a sentinel check, not a typo. Native syntax only.
func sentinel(expr hcl.Expression, ctx *hcl.EvalContext, name string) bool {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return false
	}
	is := func(e hclsyntax.Expression) bool {
		v, d := e.Value(ctx)
		if d.HasErrors() {
			return false
		}
		v, _ = v.UnmarkDeep()
		return v.IsWhollyKnown() && !v.IsNull() && v.Type() == cty.String && v.AsString() == name
	}
	found := false
	_ = hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if found || !ok || call.Name != "contains" || len(call.Args) != 2 || !is(call.Args[1]) {
			return nil
		}
		_ = hclsyntax.VisitAll(call.Args[0], func(m hclsyntax.Node) hcl.Diagnostics {
			switch e := m.(type) {
			case *hclsyntax.TemplateExpr, *hclsyntax.ScopeTraversalExpr:
				found = found || is(e.(hclsyntax.Expression))
			}
			return nil
		})
		return nil
	})
	return found
}

// evaluateChecks evaluates every assert of every check block over the
// matrix. A false condition is an error diagnostic carrying the
// assertion's error_message.
func (p *Plan) evaluateChecks(cfg *manifest.Config) []CheckResult {
	if len(cfg.Checks) == 0 {
		return []CheckResult{}
	}
	runtimeDependent := map[string]bool{}
	for _, a := range p.Agents {
		runtimeDependent[a.Name] = a.RuntimeDependent
	}
	var asked, stars, taken []string
	ctx := cfg.EvalContext(p.checkFunctions(func(agent string) {
		if runtimeDependent[agent] && !slices.Contains(asked, agent) {
			asked = append(asked, agent)
		}
	}, func(tag string) {
		if !slices.Contains(stars, tag) {
			stars = append(stars, tag)
		}
	}, func(name string) {
		if !slices.Contains(taken, name) {
			taken = append(taken, name)
		}
	}))
	var out []CheckResult
	for _, c := range cfg.Checks {
		res := CheckResult{Name: c.Name, Status: CheckPass}
		// Every assert is evaluated, as Terraform does: each failure and
		// error is reported, and the check's result is the first (its
		// status, message and range), with the diagnostics of all.
		record := func(r CheckResult) {
			if res.Status == CheckPass {
				res = r
				return
			}
			res.Diagnostics = append(res.Diagnostics, r.Diagnostics...)
		}
		for _, a := range c.Asserts {
			asked, stars, taken = asked[:0], stars[:0], taken[:0]
			v, diags := a.Condition.Value(ctx)
			// reachable marks what it returns (reachableMark); the
			// condition's value is read without marks.
			v, _ = v.UnmarkDeep()
			named, reported := p.reachableNames(a.Condition, ctx)
			diags = append(diags, named...)
			for _, name := range taken {
				// Reported as an error already, or a sentinel the check
				// writes into its list itself ("DENIED" twice).
				if slices.Contains(reported, name) || sentinel(a.Condition, ctx, name) {
					continue
				}
				p.warn(a.Condition.Range().Ptr(), "Check looks for a name no tool has",
					fmt.Sprintf("Check %q looks for %q in a list taken from reachable(), and no registered tool is named %q: if it is a typo, the check holds whatever the agent can reach.", c.Name, name, name))
			}
			for _, tag := range stars {
				// A tag written out is warned about when the manifest
				// loads; this is one computed (from locals).
				if !literalHoldsTag(a.Condition, tag) {
					p.warn(a.Condition.Range().Ptr(), `"*" is not a wildcard`, fmt.Sprintf("In check %q, %s", c.Name, manifest.HoldsStarText(tag)))
				}
			}
			for _, agent := range asked {
				// The result holds for what this plan assumes the agent
				// holds; a security assertion must not read as proven.
				p.warn(a.Condition.Range().Ptr(), "Check depends on runtime capabilities",
					fmt.Sprintf("Check %q asks about agent %q, whose capabilities or capability policy are only known when it starts (runtime()): the check was evaluated with what this plan assumes for it, and may not hold for the agent that runs.", c.Name, agent))
			}
			if diags.HasErrors() {
				p.Diagnostics = append(p.Diagnostics, diags...)
				record(CheckResult{Name: c.Name, Status: CheckError, Message: diags.Errs()[0].Error(),
					Range: a.Condition.Range().Ptr(), Diagnostics: diags})
				continue
			}
			bv, err := convert.Convert(v, cty.Bool)
			if err != nil || bv.IsNull() {
				d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid check condition",
					Detail: "The condition must be true or false.", Subject: a.Condition.Range().Ptr()}
				p.Diagnostics = append(p.Diagnostics, d)
				record(CheckResult{Name: c.Name, Status: CheckError, Message: "condition is not a bool",
					Range: d.Subject, Diagnostics: hcl.Diagnostics{d}})
				continue
			}
			if bv.True() {
				continue
			}
			msgVal, msgDiags := a.ErrorMessage.Value(ctx)
			msgVal, _ = msgVal.UnmarkDeep()
			msg := literalString(msgVal)
			if msgDiags.HasErrors() {
				// What did evaluate ("reaches " of "reaches ${reachable("a")}")
				// is no message: say why there is none.
				for _, d := range msgDiags {
					if d.Severity == hcl.DiagError {
						p.Diagnostics = append(p.Diagnostics, d)
					}
				}
				msg = ""
			} else if msgVal.IsKnown() && msgVal.IsNull() {
				// Null only with this matrix (a conditional): the
				// manifest refuses a message that is always null.
				p.Diagnostics = append(p.Diagnostics, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid error message",
					Detail:  fmt.Sprintf("The error_message of check %q is null for the capability matrix this plan computes; it must be a string: write what the failed check means.", c.Name),
					Subject: a.ErrorMessage.Range().Ptr()})
			}
			if msg == "" {
				msg = fmt.Sprintf("check %q failed", c.Name)
			}
			d := &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Check failed",
				Detail:   fmt.Sprintf("%s\n\nThe condition of check %q is false for the capability matrix this plan computes.", msg, c.Name),
				Subject:  a.Condition.Range().Ptr(),
			}
			p.Diagnostics = append(p.Diagnostics, d)
			record(CheckResult{Name: c.Name, Status: CheckFail, Message: msg, Range: d.Subject, Diagnostics: hcl.Diagnostics{d}})
		}
		out = append(out, res)
	}
	return out
}

// literalHoldsTag reports whether expr calls holds with tag written out as
// its second argument (the manifest warns about those already).
func literalHoldsTag(expr hcl.Expression, tag string) bool {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return false
	}
	found := false
	_ = hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		if call, ok := n.(*hclsyntax.FunctionCallExpr); ok && call.Name == "holds" && len(call.Args) == 2 {
			if v, diags := call.Args[1].Value(nil); !diags.HasErrors() && v.Type() == cty.String && v.IsWhollyKnown() && !v.IsNull() && v.AsString() == tag {
				found = true
			}
		}
		return nil
	})
	return found
}
