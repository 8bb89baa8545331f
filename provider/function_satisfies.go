package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentform/agentform/internal/capability"
)

var _ function.Function = (*satisfiesFunction)(nil)

// satisfiesFunction is provider::agentform::satisfies(held, required):
// whether any held capability tag satisfies a required one, by agentform's
// rule (capability.Satisfies).
type satisfiesFunction struct{}

func newSatisfiesFunction() function.Function { return &satisfiesFunction{} }

// Metadata implements function.Function.
func (f *satisfiesFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "satisfies"
}

// Definition implements function.Function.
func (f *satisfiesFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Whether held capability tags satisfy a required tag",
		MarkdownDescription: "Returns true when at least one of the `held` capability tags satisfies `required`: a held tag " +
			"satisfies a required tag equal to it or below it in the `::` namespace, so `math` satisfies `math::add` " +
			"but not `mathematics`, and `math::add` does not satisfy `math`. This is the rule agentform applies to " +
			"every cell of the capability matrix. Every tag must be well formed (no empty `::` segment, no " +
			"surrounding whitespace); a malformed or null tag is an error.",
		Parameters: []function.Parameter{
			function.ListParameter{
				Name:                "held",
				ElementType:         types.StringType,
				MarkdownDescription: "The capability tags an agent holds, such as an element's `holds` in `data.agentform_workspace.agents`.",
			},
			function.StringParameter{
				Name:                "required",
				MarkdownDescription: "The capability tag a tool requires.",
			},
		},
		Return: function.BoolReturn{},
	}
}

// Run implements function.Function. Terraform ends a function's error
// message with a period itself, so the messages here have none.
func (f *satisfiesFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var heldValues []types.String
	var required string
	resp.Error = req.Arguments.Get(ctx, &heldValues, &required)
	if resp.Error != nil {
		return
	}
	held := make([]string, len(heldValues))
	for i, v := range heldValues {
		// Terraform passes a list holding null; the list itself and
		// required cannot be null (the parameters do not allow it).
		if v.IsNull() {
			resp.Error = function.NewArgumentFuncError(0, fmt.Sprintf("held[%d] is null; every held capability tag must be a string", i))
			return
		}
		held[i] = v.ValueString()
		if _, err := capability.ValidateTag(held[i]); err != nil {
			resp.Error = function.NewArgumentFuncError(0, fmt.Sprintf("Invalid held tag: %s", err))
			return
		}
	}
	if _, err := capability.ValidateTag(required); err != nil {
		resp.Error = function.NewArgumentFuncError(1, fmt.Sprintf("Invalid required tag: %s", err))
		return
	}
	ok := false
	for _, t := range held {
		if capability.Satisfies(t, required) {
			ok = true
			break
		}
	}
	resp.Error = resp.Result.Set(ctx, ok)
}
