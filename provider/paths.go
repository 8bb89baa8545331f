package provider

import (
	"context"
	"path/filepath"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Directory attributes (dir, out_dir) are paths, and "agents", "./agents"
// and "agents/" name one directory. Their plan modifiers keep the spelling
// in state when the configuration spells the same directory another way,
// so that spelling alone neither replaces the resource nor shows a diff.

// dirPath is where a workspace directory spelling points: absolute and
// cleaned, relative paths taken from the provider's working directory,
// which is Terraform's, with the symbolic links of the part that exists
// resolved, so that a link and its target compare equal.
func dirPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	rest := ""
	for p := abs; ; {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// outDirPath is where an out_dir spelling points for the workspace dir.
// A relative out_dir is joined to dir as the build joins it, lexically:
// "a/link" and "../shared" give "a/shared" wherever the link points, so
// the link is resolved after ".." is applied, not before.
func outDirPath(dir, out string) string {
	if filepath.IsAbs(out) {
		return dirPath(out)
	}
	return dirPath(filepath.Join(dir, out))
}

// sameDirModifiers keep dir's state value when the configuration names the
// same directory, and otherwise require replacement.
func sameDirModifiers() []planmodifier.String {
	same := func(_ context.Context, req planmodifier.StringRequest) (bool, bool) {
		if !known(req.PlanValue) || !known(req.StateValue) {
			return false, false
		}
		return dirPath(req.PlanValue.ValueString()) == dirPath(req.StateValue.ValueString()), true
	}
	return pathModifiers(same,
		"Requires replacement when the value names another directory; another spelling of the same directory keeps the value in state.")
}

// sameOutDirModifiers keep out_dir's state value when the configuration
// names the same directory for the planned dir, and otherwise require
// replacement.
func sameOutDirModifiers() []planmodifier.String {
	same := func(ctx context.Context, req planmodifier.StringRequest) (bool, bool) {
		var planDir, stateDir types.String
		if req.Plan.GetAttribute(ctx, path.Root("dir"), &planDir).HasError() || req.State.GetAttribute(ctx, path.Root("dir"), &stateDir).HasError() {
			return false, false
		}
		if !known(req.PlanValue) || !known(req.StateValue) || !known(planDir) || !known(stateDir) {
			return false, false
		}
		return outDirPath(planDir.ValueString(), req.PlanValue.ValueString()) == outDirPath(stateDir.ValueString(), req.StateValue.ValueString()), true
	}
	return pathModifiers(same,
		"Requires replacement when the value names another directory; another spelling of the same directory keeps the value in state.")
}

// pathModifiers are a plan modifier that keeps the state value when same
// says the planned value names the same directory, then RequiresReplaceIf
// the values still differ and same does not say they are the same. same
// returns ok false when it cannot tell (a value is null or unknown).
func pathModifiers(same func(context.Context, planmodifier.StringRequest) (same, ok bool), desc string) []planmodifier.String {
	return []planmodifier.String{
		keepSameDir{same: same},
		stringplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
			s, ok := same(ctx, req)
			resp.RequiresReplace = !ok || !s
		}, desc, desc),
	}
}

// keepSameDir is the plan modifier of pathModifiers that keeps the state
// value. Terraform accepts a planned value equal to the prior state in
// place of the configured one: the provider says they are equivalent.
type keepSameDir struct {
	same func(context.Context, planmodifier.StringRequest) (same, ok bool)
}

var _ planmodifier.String = keepSameDir{}

// Description implements planmodifier.Describer.
func (m keepSameDir) Description(context.Context) string {
	return "Keeps the value in state when the configuration spells the same directory another way."
}

// MarkdownDescription implements planmodifier.Describer.
func (m keepSameDir) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

// PlanModifyString implements planmodifier.String.
func (m keepSameDir) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.PlanValue.Equal(req.StateValue) {
		return
	}
	if same, ok := m.same(ctx, req); ok && same {
		resp.PlanValue = req.StateValue
	}
}

// known reports whether v is neither null nor unknown.
func known(v types.String) bool { return !v.IsNull() && !v.IsUnknown() }
