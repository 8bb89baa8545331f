package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TestNonEmptyAdvice: an empty dir is named relative to Terraform's
// working directory, an empty out_dir relative to dir: each is told so
// ("." for out_dir would put the artifacts in the workspace itself).
func TestNonEmptyAdvice(t *testing.T) {
	for _, tc := range []struct {
		advice, want, wantNot string
	}{
		{nonEmptyDir, `such as "." for Terraform's working directory`, ""},
		{nonEmptyOutDir, `relative to dir unless absolute, such as "dist"`, "Terraform's working directory"},
	} {
		for _, value := range []string{"", " \t"} {
			resp := &validator.StringResponse{}
			nonEmpty(tc.advice).ValidateString(t.Context(), validator.StringRequest{Path: path.Root("x"), ConfigValue: types.StringValue(value)}, resp)
			errs := resp.Diagnostics.Errors()
			if len(errs) != 1 || !strings.Contains(errs[0].Detail(), tc.want) || tc.wantNot != "" && strings.Contains(errs[0].Detail(), tc.wantNot) {
				t.Errorf("%q: got %v\nwant: one error saying %q", value, resp.Diagnostics, tc.want)
			}
		}
		resp := &validator.StringResponse{}
		nonEmpty(tc.advice).ValidateString(t.Context(), validator.StringRequest{Path: path.Root("x"), ConfigValue: types.StringValue("build")}, resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("a directory refused: %v", resp.Diagnostics)
		}
	}
}
