package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// stringValidator is a validator.String from a description and a check
// that returns the problem with a known value, or "".
type stringValidator struct {
	description string
	check       func(string) string
}

var _ validator.String = stringValidator{}

// Description implements validator.Describer.
func (v stringValidator) Description(context.Context) string { return v.description }

// MarkdownDescription implements validator.Describer.
func (v stringValidator) MarkdownDescription(context.Context) string { return v.description }

// ValidateString implements validator.String; null and unknown values are
// left to Required and to the next validation.
func (v stringValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if problem := v.check(req.ConfigValue.ValueString()); problem != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Attribute Value", problem)
	}
}

// nonEmpty refuses the empty string, with advice: what to name instead
// (a sentence fragment, as "name a directory, such as ...").
func nonEmpty(advice string) validator.String {
	return stringValidator{
		description: "value must not be empty",
		check: func(s string) string {
			if strings.TrimSpace(s) == "" {
				return "The value must not be empty: " + advice + "."
			}
			return ""
		},
	}
}

// Advice for an empty directory attribute: dir is relative to Terraform's
// working directory, out_dir to dir.
const (
	nonEmptyDir    = `name a directory, such as "." for Terraform's working directory`
	nonEmptyOutDir = `name a directory, relative to dir unless absolute, such as "dist" (the default, when out_dir is left out)`
)

// oneOf accepts exactly the given values.
func oneOf(values ...string) validator.String {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	list := strings.Join(quoted, " or ")
	return stringValidator{
		description: "value must be " + list,
		check: func(s string) string {
			if slices.Contains(values, s) {
				return ""
			}
			return fmt.Sprintf("The value must be %s, not %q.", list, s)
		},
	}
}

// duration accepts a duration as the CLI's duration flags read it
// (time.ParseDuration: "30s", "2m", "1h30m") that check accepts, which is
// the CLI's own check of the same setting (resolve.CheckTimeout,
// state.CheckLockTimeout).
func duration(check func(time.Duration) error) validator.String {
	return stringValidator{
		description: "value must be a duration such as \"30s\" or \"2m\"",
		check: func(s string) string {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Sprintf("The value must be a duration such as \"30s\" or \"2m\" (numbers with the units ns, us, ms, s, m or h), not %q.", s)
			}
			if err := check(d); err != nil {
				return fmt.Sprintf("The value %s, not %q.", err, s)
			}
			return ""
		},
	}
}
