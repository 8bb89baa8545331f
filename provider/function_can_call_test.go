package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

func TestCanCallFunction_Run(t *testing.T) {
	cell := func(agent, tool, decision string) attr.Value {
		return types.ObjectValueMust(cellType.AttrTypes, map[string]attr.Value{
			"agent": types.StringValue(agent), "tool": types.StringValue(tool), "decision": types.StringValue(decision),
		})
	}
	matrix := types.ListValueMust(cellType, []attr.Value{
		cell("assistant", "grep", "deny"),
		cell("assistant", "word_count", "allow"),
		cell("researcher", "grep", "allow"),
	})
	// Names that would act on a terminal reach the error as escapes.
	hostile := types.ListValueMust(cellType, []attr.Value{cell("a\u202e", "evil\x1b[2K\rok", "deny")})
	tests := []struct {
		matrix      types.List
		name        string
		agent, tool string
		want        bool
		err         string
	}{
		{name: "allowed", agent: "assistant", tool: "word_count", want: true},
		{name: "denied", agent: "assistant", tool: "grep", want: false},
		{name: "other agent", agent: "researcher", tool: "grep", want: true},
		{name: "unknown agent", agent: "nobody", tool: "grep", err: `There is no agent named "nobody" in the matrix (agents: assistant, researcher)`},
		{name: "unknown tool", agent: "assistant", tool: "rm", err: `There is no tool named "rm" in the matrix (tools: grep, word_count); a disabled tool is no column of the matrix`},
		// Both names have cells, but not together: the matrix leaves the
		// cell out, which says nothing about either name.
		{name: "missing cell", agent: "researcher", tool: "word_count", err: `There is no cell for agent "researcher" and tool "word_count" in the matrix (agent "researcher" has cells for: grep); a matrix from agentform has a cell for every agent and enabled tool`},
		{name: "control characters", matrix: hostile, agent: "a\u202e", tool: "t\x1b", err: `There is no tool named "t\x1b" in the matrix (tools: evil\x1b[2K\rok)`},
		{name: "bidi override", matrix: hostile, agent: "b", tool: "t", err: `There is no agent named "b" in the matrix (agents: a\u202e)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := matrix
			if len(tt.matrix.Elements()) > 0 {
				m = tt.matrix
			}
			args := function.NewArgumentsData([]attr.Value{m, types.StringValue(tt.agent), types.StringValue(tt.tool)})
			resp := &function.RunResponse{Result: function.NewResultData(types.BoolUnknown())}
			newCanCallFunction().Run(context.Background(), function.RunRequest{Arguments: args}, resp)
			checkBoolResult(t, resp, tt.want, tt.err)
		})
	}
}

// TestCanCallFunction_RunMalformed: cells Terraform accepts in a list of
// objects but that no agentform matrix has are errors on the matrix
// argument, never a silent denial or a value conversion error.
func TestCanCallFunction_RunMalformed(t *testing.T) {
	cell := func(agent, tool, decision attr.Value) attr.Value {
		return types.ObjectValueMust(cellType.AttrTypes, map[string]attr.Value{"agent": agent, "tool": tool, "decision": decision})
	}
	s := types.StringValue
	null := types.StringNull()
	tests := []struct {
		name  string
		cells []attr.Value
		err   string
	}{
		{name: "null cell", cells: []attr.Value{cell(s("a"), s("u"), s("deny")), types.ObjectNull(cellType.AttrTypes)}, err: "matrix[1] is null; every cell is an object with agent, tool and decision"},
		{name: "null agent", cells: []attr.Value{cell(null, s("t"), s("allow"))}, err: "matrix[0].agent is null; every cell names its agent, tool and decision"},
		{name: "null tool", cells: []attr.Value{cell(s("a"), null, s("allow"))}, err: "matrix[0].tool is null"},
		{name: "null decision", cells: []attr.Value{cell(s("a"), s("t"), null)}, err: "matrix[0].decision is null"},
		{name: "upper case decision", cells: []attr.Value{cell(s("a"), s("t"), s("ALLOW"))}, err: `matrix[0].decision is "ALLOW"; a decision is "allow" or "deny"`},
		// A decision is checked in every cell, not only the one asked about.
		{name: "other cell's decision", cells: []attr.Value{cell(s("a"), s("t"), s("allow")), cell(s("a"), s("u"), s("maybe"))}, err: `matrix[1].decision is "maybe"`},
		{name: "two cells", cells: []attr.Value{cell(s("a"), s("t"), s("allow")), cell(s("a"), s("t"), s("deny"))}, err: `matrix[0] and matrix[1] are both the cell of agent "a" and tool "t"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := function.NewArgumentsData([]attr.Value{types.ListValueMust(cellType, tt.cells), s("a"), s("t")})
			resp := &function.RunResponse{Result: function.NewResultData(types.BoolUnknown())}
			newCanCallFunction().Run(context.Background(), function.RunRequest{Arguments: args}, resp)
			checkBoolResult(t, resp, false, tt.err)
			if resp.Error.FunctionArgument == nil || *resp.Error.FunctionArgument != 0 {
				t.Errorf("got:\nargument %v\nwant:\nargument 0 (matrix)", resp.Error.FunctionArgument)
			}
		})
	}
}

// TestCanCallFunction passes the data source's matrix (whose cells carry
// an extra missing attribute) and a literal list of objects.
func TestCanCallFunction(t *testing.T) {
	dir := workspace(t)
	config := providerConfig + fmt.Sprintf(`
data "agentform_workspace" "test" {
  dir = %s
}

output "assistant_counts" {
  value = provider::agentform::can_call(data.agentform_workspace.test.matrix, "assistant", "word_count")
}

output "assistant_shells" {
  value = provider::agentform::can_call(data.agentform_workspace.test.matrix, "assistant", "grep")
}

output "literal" {
  value = provider::agentform::can_call([{ agent = "a", tool = "t", decision = "allow", extra = 1 }], "a", "t")
}
`, hclString(dir))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("assistant_counts", knownvalue.Bool(true)),
					statecheck.ExpectKnownOutputValue("assistant_shells", knownvalue.Bool(false)),
					statecheck.ExpectKnownOutputValue("literal", knownvalue.Bool(true)),
				},
			},
			{
				Config: config + `
output "typo" {
  value = provider::agentform::can_call(data.agentform_workspace.test.matrix, "asistant", "grep")
}
`,
				ExpectError: regexp.MustCompile(`There is no agent named "asistant"`),
			},
			{
				// A decision that is not "allow" is no denial either.
				Config: config + `
output "shouting" {
  value = provider::agentform::can_call([{ agent = "a", tool = "t", decision = "ALLOW" }], "a", "t")
}
`,
				ExpectError: regexp.MustCompile(`matrix\[0\]\.decision is "ALLOW";\s+a\s+decision\s+is\s+"allow"\s+or\s+"deny"\.(?:\n|$)`),
			},
			{
				Config: config + `
output "nameless" {
  value = provider::agentform::can_call([{ agent = null, tool = "t", decision = "allow" }], "a", "t")
}
`,
				ExpectError: regexp.MustCompile(`matrix\[0\]\.agent is null`),
			},
			{
				// A configuration that evaluates, for the final destroy.
				Config: config,
			},
		},
	})
}
