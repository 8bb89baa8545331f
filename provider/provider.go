// Package provider is agentform's Terraform provider (DESIGN §13): the
// agentform_workspace data source, the agentform_build resource and the
// satisfies and can_call functions, built on terraform-plugin-framework
// (protocol 6). It calls the same planner and apply as the agentform CLI
// and never shells out to it, so a workspace applied by Terraform and by
// the CLI shares one state database (.agentform/state.db) and one
// lockfile.
//
// The provider has no configuration: every object names its workspace
// directory itself.
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Address is the provider's registry address, which Terraform
// configurations use in required_providers and dev_overrides.
const Address = "registry.terraform.io/agentform/agentform"

var (
	_ provider.Provider              = (*agentformProvider)(nil)
	_ provider.ProviderWithFunctions = (*agentformProvider)(nil)
)

// agentformProvider is the provider; it holds nothing but its version.
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

// Schema implements provider.Provider.
func (p *agentformProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Plans and builds [agentform](https://github.com/agentform/agentform) workspaces: " +
			"AI agents, the tools they may call and the capability matrix between them.\n\n" +
			"The provider calls the same planner and apply as the `agentform` CLI and shares the workspace's " +
			"state database (`.agentform/state.db`) and lockfile (`agentform.lock.hcl`) with it, so " +
			"`agentform plan` and `terraform plan` agree. It has no configuration.",
	}
}

// Configure implements provider.Provider; there is nothing to configure.
func (p *agentformProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
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
