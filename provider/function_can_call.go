package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/function"
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
			"or a tool that has no cell in the matrix is an error, so a typo does not read as a denial; a tool " +
			"whose block has `enabled = false` is no column of the matrix.",
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
func (f *canCallFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var cells []cellModel
	var agent, tool string
	resp.Error = req.Arguments.Get(ctx, &cells, &agent, &tool)
	if resp.Error != nil {
		return
	}
	var agents, tools []string
	for _, c := range cells {
		if c.Agent == agent && c.Tool == tool {
			resp.Error = resp.Result.Set(ctx, c.Decision == "allow")
			return
		}
		agents = append(agents, c.Agent)
		tools = append(tools, c.Tool)
	}
	if !slices.Contains(agents, agent) {
		resp.Error = function.NewArgumentFuncError(1, fmt.Sprintf("There is no agent named %q in the matrix (agents: %s).", agent, nameList(agents)))
		return
	}
	resp.Error = function.NewArgumentFuncError(2, fmt.Sprintf("There is no tool named %q in the matrix (tools: %s); a disabled tool is no column of the matrix.", tool, nameList(tools)))
}

// nameList lists the distinct names, sorted, or says there are none.
func nameList(names []string) string {
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
