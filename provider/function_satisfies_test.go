package provider

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

func TestSatisfiesFunction_Run(t *testing.T) {
	tests := []struct {
		name     string
		held     []string
		required string
		want     bool
		err      string
	}{
		{name: "exact", held: []string{"math::add"}, required: "math::add", want: true},
		{name: "parent namespace", held: []string{"text", "math"}, required: "math::add::fast", want: true},
		{name: "sibling prefix", held: []string{"mathematics"}, required: "math::add", want: false},
		{name: "child does not cover parent", held: []string{"math::add"}, required: "math", want: false},
		{name: "nothing held", held: []string{}, required: "math", want: false},
		{name: "malformed required", held: []string{"math"}, required: "math::", err: "Invalid required tag"},
		{name: "malformed held", held: []string{" math"}, required: "math", err: "Invalid held tag"},
		// Tag text reaches the error escaped, never as terminal controls.
		{name: "control characters", held: []string{"math"}, required: "\x1b[2K\r::\u202e", err: `Invalid required tag: invalid capability tag "\x1b[2K\r::\u202e"`},
		{name: "null held", held: []string{"math", "<null>"}, required: "math", err: "held[1] is null; every held capability tag must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held := make([]attr.Value, len(tt.held))
			for i, h := range tt.held {
				held[i] = types.StringValue(h)
				if h == "<null>" {
					held[i] = types.StringNull()
				}
			}
			args := function.NewArgumentsData([]attr.Value{types.ListValueMust(types.StringType, held), types.StringValue(tt.required)})
			resp := &function.RunResponse{Result: function.NewResultData(types.BoolUnknown())}
			newSatisfiesFunction().Run(context.Background(), function.RunRequest{Arguments: args}, resp)
			checkBoolResult(t, resp, tt.want, tt.err)
		})
	}
}

// checkBoolResult checks a function's result: want, or an error containing
// errText when that is not empty. Terraform ends the message with a period
// of its own, so an error must not end with one.
func checkBoolResult(t *testing.T, resp *function.RunResponse, want bool, errText string) {
	t.Helper()
	if errText != "" {
		if resp.Error == nil || !strings.Contains(resp.Error.Error(), errText) {
			t.Fatalf("got:\n%v\nwant:\nan error containing %q", resp.Error, errText)
		}
		if strings.HasSuffix(resp.Error.Text, ".") {
			t.Errorf("got:\n%q\nwant:\nno final period (Terraform adds one)", resp.Error.Text)
		}
		return
	}
	if resp.Error != nil {
		t.Fatalf("got:\n%v\nwant:\nno error", resp.Error)
	}
	if got := resp.Result.Value(); !got.Equal(types.BoolValue(want)) {
		t.Errorf("got:\n%v\nwant:\n%v", got, want)
	}
}

func TestSatisfiesFunction(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		Steps: []resource.TestStep{
			{
				Config: providerConfig + `
output "parent" {
  value = provider::agentform::satisfies(["text", "math"], "math::add")
}
output "sibling" {
  value = provider::agentform::satisfies(["mathematics"], "math::add")
}
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("parent", knownvalue.Bool(true)),
					statecheck.ExpectKnownOutputValue("sibling", knownvalue.Bool(false)),
				},
			},
			{
				Config: providerConfig + `
output "bad" {
  value = provider::agentform::satisfies(["math"], "math::")
}
`,
				ExpectError: regexp.MustCompile(`Invalid required tag`),
			},
			{
				// Terraform passes a list holding null to the function.
				Config: providerConfig + `
output "null" {
  value = provider::agentform::satisfies(["math", null], "math")
}
`,
				ExpectError: regexp.MustCompile(`held\[1\] is null;\s+every\s+held\s+capability\s+tag\s+must\s+be\s+a\s+string\.(?:\n|$)`),
			},
		},
	})
}
