package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentform/agentform/internal/render"
)

var _ function.Function = (*canCallFunction)(nil)

// canCallFunction is provider::agentform::can_call(matrix, agent, tool):
// whether the matrix allows agent to call tool.
type canCallFunction struct{}

func newCanCallFunction() function.Function { return &canCallFunction{} }

// Metadata implements function.Function.
func (f *canCallFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "can_call"
}

// Definition implements function.Function.
//
// The matrix parameter is a list of objects with agent, tool and decision
// attributes. Terraform converts each argument element to that type and
// drops any other attribute, so both data.agentform_workspace.matrix
// (which also has missing) and agentform_build.capability_matrix fit.
func (f *canCallFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Whether a capability matrix lets an agent call a tool",
		MarkdownDescription: "Returns true when `matrix` has a cell for `agent` and `tool` whose decision is `allow`, " +
			"like the `can_call` function of agentform's `check` blocks. `matrix` is " +
			"`data.agentform_workspace.matrix` or `agentform_build.capability_matrix`: a list of objects with at " +
			"least the string attributes `agent`, `tool` and `decision`; other attributes are ignored. An agent " +
			"or a tool that has no cell in the matrix is an error, so a typo does not read as a denial, and so are an " +
			"agent and a tool that have cells but no cell together (a matrix built by hand that leaves cells out), a " +
			"cell with a null attribute, a decision other than `allow` or `deny` and two cells for the same agent and " +
			"tool; a tool whose block has `enabled = false` is no column of the matrix.",
		Parameters: []function.Parameter{
			function.ListParameter{
				Name:                "matrix",
				ElementType:         cellType,
				MarkdownDescription: "The capability matrix: a list of objects with `agent`, `tool` and `decision` (`allow` or `deny`).",
			},
			function.StringParameter{Name: "agent", MarkdownDescription: "The agent's name."},
			function.StringParameter{Name: "tool", MarkdownDescription: "The registered tool's name."},
		},
		Return: function.BoolReturn{},
	}
}

// Run implements function.Function.
//
// Terraform ends a function's error message with a period itself, so the
// messages here have none.
func (f *canCallFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var matrix types.List
	var agent, tool string
	resp.Error = req.Arguments.Get(ctx, &matrix, &agent, &tool)
	if resp.Error != nil {
		return
	}
	cells, err := matrixCells(matrix)
	if err != nil {
		resp.Error = err
		return
	}
	var agents, tools, agentTools []string
	found := -1
	for i, c := range cells {
		if c.Agent == agent && c.Tool == tool {
			if found >= 0 {
				resp.Error = function.NewArgumentFuncError(0, fmt.Sprintf("matrix[%d] and matrix[%d] are both the cell of agent %q and tool %q; a matrix has one cell per agent and tool", found, i, agent, tool))
				return
			}
			found = i
		}
		agents = append(agents, c.Agent)
		tools = append(tools, c.Tool)
		if c.Agent == agent {
			agentTools = append(agentTools, c.Tool)
		}
	}
	switch {
	case found >= 0:
		resp.Error = resp.Result.Set(ctx, cells[found].Decision == decisionAllow)
	case !slices.Contains(agents, agent):
		resp.Error = function.NewArgumentFuncError(1, fmt.Sprintf("There is no agent named %q in the matrix (agents: %s)", agent, nameList(agents)))
	case !slices.Contains(tools, tool):
		resp.Error = function.NewArgumentFuncError(2, fmt.Sprintf("There is no tool named %q in the matrix (tools: %s); a disabled tool is no column of the matrix", tool, nameList(tools)))
	default:
		// Both names are in the matrix, but not together: a matrix built
		// by hand (or filtered) that leaves cells out. agentform's have a
		// cell for every agent and enabled tool.
		resp.Error = function.NewArgumentFuncError(0, fmt.Sprintf("There is no cell for agent %q and tool %q in the matrix (agent %q has cells for: %s); a matrix from agentform has a cell for every agent and enabled tool", agent, tool, agent, nameList(agentTools)))
	}
}

// Decisions of a matrix cell.
const (
	decisionAllow = "allow"
	decisionDeny  = "deny"
)

// matrixCells reads the matrix argument. A null cell, a null attribute or
// a decision other than "allow" and "deny" is an error on the argument,
// naming the cell: Terraform accepts them in a list of objects, and
// reading "ALLOW" or null as a denial would hide the mistake.
func matrixCells(matrix types.List) ([]cellModel, *function.FuncError) {
	var cells []cellModel
	for i, e := range matrix.Elements() {
		obj, ok := e.(types.Object)
		if !ok || obj.IsNull() {
			return nil, function.NewArgumentFuncError(0, fmt.Sprintf("matrix[%d] is null; every cell is an object with agent, tool and decision", i))
		}
		attrs := obj.Attributes()
		var vals [3]string
		for j, name := range []string{"agent", "tool", "decision"} {
			v, ok := attrs[name].(types.String)
			if !ok || v.IsNull() {
				return nil, function.NewArgumentFuncError(0, fmt.Sprintf("matrix[%d].%s is null; every cell names its agent, tool and decision", i, name))
			}
			vals[j] = v.ValueString()
		}
		c := cellModel{Agent: vals[0], Tool: vals[1], Decision: vals[2]}
		if c.Decision != decisionAllow && c.Decision != decisionDeny {
			return nil, function.NewArgumentFuncError(0, fmt.Sprintf("matrix[%d].decision is %q; a decision is %q or %q", i, c.Decision, decisionAllow, decisionDeny))
		}
		cells = append(cells, c)
	}
	return cells, nil
}

// nameList lists the distinct names, sorted, or says there are none. The
// names come from the matrix argument, which any expression can build:
// render.Printable writes the characters that would act on a terminal (an
// ESC, a CR) as escapes.
func nameList(names []string) string {
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return "none"
	}
	for i, n := range names {
		names[i] = render.Printable(n)
	}
	return strings.Join(names, ", ")
}
