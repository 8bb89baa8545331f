// Package provider is agentform's Terraform provider (DESIGN §13): the
// agentform_workspace data source, the agentform_build resource and the
// satisfies and can_call functions, built on terraform-plugin-framework
// (protocol 6). It calls the same planner and apply as the agentform CLI
// and never shells out to it, so a workspace applied by Terraform and by
// the CLI shares one state database (.agentform/state.db) and one
// lockfile.
//
// Every object names its workspace directory itself; the provider's
// configuration only says how long the engine waits (resolve_timeout,
// lock_timeout).
package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
)

// Address is the provider's registry address, which Terraform
// configurations use in required_providers and dev_overrides.
const Address = "registry.terraform.io/agentform/agentform"

var (
	_ provider.Provider              = (*agentformProvider)(nil)
	_ provider.ProviderWithFunctions = (*agentformProvider)(nil)
)

// agentformProvider is the provider; it holds nothing but its version
// (its settings go to each data source and resource).
type agentformProvider struct {
	version string
}

// New returns a constructor of the provider for providerserver, reporting
// version to Terraform.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &agentformProvider{version: version} }
}

// Metadata implements provider.Provider.
func (p *agentformProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "agentform"
	resp.Version = p.version
}

// providerModel is the provider's configuration.
type providerModel struct {
	ResolveTimeout types.String `tfsdk:"resolve_timeout"`
	LockTimeout    types.String `tfsdk:"lock_timeout"`
}

// Schema implements provider.Provider.
func (p *agentformProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Plans and builds [agentform](https://github.com/agentform/agentform) workspaces: " +
			"AI agents, the tools they may call and the capability matrix between them.\n\n" +
			"The provider calls the same planner and apply as the `agentform` CLI and shares the workspace's " +
			"state database (`.agentform/state.db`) and lockfile (`agentform.lock.hcl`) with it, so " +
			"`agentform plan` and `terraform plan` agree. Its configuration is optional and only says how long " +
			"agentform waits; each data source and resource names its workspace directory.",
		Attributes: map[string]schema.Attribute{
			"resolve_timeout": schema.StringAttribute{
				Optional:   true,
				Validators: []validator.String{duration(resolve.CheckTimeout)},
				MarkdownDescription: fmt.Sprintf("How long each remote operation of planning may take: listing an MCP server's tools, "+
					"fetching an A2A agent card, reading a python or javascript tool's definition. A duration such as `30s` or `2m`, "+
					"which must be positive; defaults to `%s`. The `agentform` CLI's `-resolve-timeout`.", resolve.DefaultTimeout),
			},
			"lock_timeout": schema.StringAttribute{
				Optional:   true,
				Validators: []validator.String{duration(state.CheckLockTimeout)},
				MarkdownDescription: fmt.Sprintf("How long to wait for the state lock of a workspace (`.agentform/state.db`) that "+
					"another `agentform` command or Terraform run holds, before failing. A duration such as `30s` or `2m`; `0s` "+
					"fails at once. Defaults to `%s`. The `agentform` CLI's `-lock-timeout`, whose default is `0s`.", stateLockTimeout),
			},
		},
	}
}

// Configure implements provider.Provider: it reads the settings every
// data source and resource gets (configuredSettings).
func (p *agentformProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	s := defaultSettings()
	for _, a := range []struct {
		name  string
		value types.String
		into  *time.Duration
	}{
		{"resolve_timeout", m.ResolveTimeout, &s.resolveTimeout},
		{"lock_timeout", m.LockTimeout, &s.lockTimeout},
	} {
		switch {
		case a.value.IsUnknown():
			resp.Diagnostics.AddAttributeError(path.Root(a.name), "Unknown Provider Setting",
				fmt.Sprintf("%s must be known when Terraform plans, since planning waits as it says: set it from a literal or a variable, not from another resource's attribute.", a.name))
		case !a.value.IsNull():
			// The validator has accepted it.
			d, err := time.ParseDuration(a.value.ValueString())
			if err != nil {
				resp.Diagnostics.AddAttributeError(path.Root(a.name), "Invalid Attribute Value", err.Error())
				continue
			}
			*a.into = d
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.DataSourceData = &s
	resp.ResourceData = &s
}

// configuredSettings returns the settings Configure gave a data source or
// resource (ProviderData), or nil for the defaults before the provider is
// configured (Terraform validates configurations first).
func configuredSettings(data any, diags *diag.Diagnostics) *settings {
	if data == nil {
		return nil
	}
	s, ok := data.(*settings)
	if !ok {
		diags.AddError("Unexpected Provider Data", fmt.Sprintf("The provider gave %T, not its settings. This is a bug in the agentform provider.", data))
	}
	return s
}

// DataSources implements provider.Provider.
func (p *agentformProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newWorkspaceDataSource}
}

// Resources implements provider.Provider.
func (p *agentformProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newBuildResource}
}

// Functions implements provider.ProviderWithFunctions.
func (p *agentformProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{newSatisfiesFunction, newCanCallFunction}
}
