package provider

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentform/agentform/internal/audit"
	"github.com/agentform/agentform/planner"
)

var (
	_ datasource.DataSource              = (*workspaceDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*workspaceDataSource)(nil)
)

// workspaceDataSource is data "agentform_workspace": a workspace planned
// without applying it, as "agentform plan" shows it; like the CLI's plan,
// it writes the workspace's resolution cache and nothing else.
type workspaceDataSource struct {
	// settings are the provider's (Configure); nil for the defaults.
	settings *settings
}

func newWorkspaceDataSource() datasource.DataSource { return &workspaceDataSource{} }

// Configure implements datasource.DataSourceWithConfigure: it takes the
// provider's settings.
func (d *workspaceDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.settings = configuredSettings(req.ProviderData, &resp.Diagnostics)
}

// workspaceModel is the data source's configuration and result.
type workspaceModel struct {
	Dir      types.String   `tfsdk:"dir"`
	Agents   []agentModel   `tfsdk:"agents"`
	Tools    []toolModel    `tfsdk:"tools"`
	Matrix   []matrixModel  `tfsdk:"matrix"`
	Denials  []denialModel  `tfsdk:"denials"`
	Findings []findingModel `tfsdk:"findings"`
}

type agentModel struct {
	Name   string   `tfsdk:"name"`
	Policy string   `tfsdk:"policy"`
	Holds  []string `tfsdk:"holds"`
}

type toolModel struct {
	Name     string   `tfsdk:"name"`
	Kind     string   `tfsdk:"kind"`
	Requires []string `tfsdk:"requires"`
	Enabled  bool     `tfsdk:"enabled"`
}

type matrixModel struct {
	Agent    string   `tfsdk:"agent"`
	Tool     string   `tfsdk:"tool"`
	Decision string   `tfsdk:"decision"`
	Missing  []string `tfsdk:"missing"`
}

type denialModel struct {
	Agent   string   `tfsdk:"agent"`
	Tool    string   `tfsdk:"tool"`
	Missing []string `tfsdk:"missing"`
}

type findingModel struct {
	RuleID   string `tfsdk:"rule_id"`
	Severity string `tfsdk:"severity"`
	Target   string `tfsdk:"target"`
	Message  string `tfsdk:"message"`
}

// Metadata implements datasource.DataSource.
func (d *workspaceDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_workspace"
}

// Schema implements datasource.DataSource.
func (d *workspaceDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	tags := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Plans an agentform workspace, as `agentform plan` does, without applying it, and " +
			"exposes its agents, registered tools, capability matrix, denials and audit findings. Like `agentform plan`, " +
			"it writes nothing in the workspace but agentform's resolution cache (`.agentform/cache/resolve.db`, created " +
			"on first use), which saves resolving unchanged tools again and holds no secret; it never writes artifacts, " +
			"the lockfile or the state database.\n\n" +
			"Every tool is resolved for real (MCP servers are listed, A2A agent cards fetched), with the " +
			"workspace's lockfile. A failed `check` block is an error; each agent's denials, an artifact " +
			"changed outside agentform and a remote tool definition that changed since the lockfile are warnings. A " +
			"missing artifact is not, whether destroying `agentform_build` or a hand removed it: the next apply rebuilds it.",
		Attributes: map[string]schema.Attribute{
			"dir": schema.StringAttribute{
				Required:            true,
				Validators:          []validator.String{nonEmpty(nonEmptyDir)},
				MarkdownDescription: "The workspace directory: the one holding the `*.acl` manifest files. A relative path is relative to Terraform's working directory.",
			},
			"agents": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Every agent, sorted by name, with its effective capabilities.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":   str("The agent's name."),
					"policy": str("The agent's capability policy: `locked` or `extensible`."),
					"holds":  tags("The capability tags the agent holds, sorted."),
				}},
			},
			"tools": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Every registered tool (a name a model sees), sorted by name, disabled ones included.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":     str("The registered tool's name."),
					"kind":     str("The kind of the block that registers it: `javascript`, `python`, `bash`, `mcp`, `a2a` or `skill`."),
					"requires": tags("The capability tags a caller must satisfy, sorted; empty for an untagged tool."),
					"enabled": schema.BoolAttribute{Computed: true, MarkdownDescription: "False for a tool whose block has " +
						"`enabled = false`; such a tool is no column of the matrix."},
				}},
			},
			"matrix": schema.ListNestedAttribute{
				Computed: true,
				MarkdownDescription: "The capability matrix: one cell per agent and enabled tool, sorted by agent then tool. " +
					"Pass it to `provider::agentform::can_call`.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"agent":    str("The agent's name."),
					"tool":     str("The registered tool's name."),
					"decision": str("`allow` when the agent may call the tool, else `deny`."),
					"missing":  tags("The required tags no held tag satisfies, sorted; empty when allowed."),
				}},
			},
			"denials": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Every denied cell of the matrix, sorted by agent then tool.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"agent":   str("The agent's name."),
					"tool":    str("The registered tool's name."),
					"missing": tags("The required tags the agent lacks, sorted."),
				}},
			},
			"findings": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The findings of `agentform audit` that no waiver accepts, most severe first.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"rule_id":  str("The rule's identifier, such as `AF101`."),
					"severity": str("The finding's severity."),
					"target":   str("The address the finding is about, such as `agent.assistant`."),
					"message":  str("What is wrong."),
				}},
			},
		},
	}
}

// Read implements datasource.DataSource.
func (d *workspaceDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var dir types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("dir"), &dir)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ws := planWorkspace(ctx, dir.ValueString(), engineOptions{refresh: true, settings: d.settings})
	// Reading changes nothing, so a remote definition that moved since the
	// lockfile is worth a warning here; agentform_build makes it an error.
	resp.Diagnostics.Append(engineDiagnostics(ws, path.Root("dir"), isDrift(ws.plan))...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan := ws.plan
	resp.Diagnostics.Append(denialWarnings(plan, path.Root("denials"))...)
	// A missing artifact is no news: destroying an agentform_build
	// removes its artifacts, and one removed by hand is rebuilt all the
	// same (agentform_build warns about it in its own plan).
	for _, rc := range plan.ResourceChanges {
		if hasArtifactDrift(rc) && artifactOnDisk(dir.ValueString(), plan, rc) {
			resp.Diagnostics.AddAttributeWarning(path.Root("dir"), "Artifact Changed Outside agentform",
				"The artifact of "+rc.Address+" differs from what the last apply wrote. "+
					"The next apply (agentform_build or \"agentform apply\") rebuilds it.")
		}
	}
	model := workspaceModel{
		Dir:      dir,
		Agents:   agentModels(plan),
		Tools:    toolModels(plan),
		Matrix:   matrixModels(plan),
		Denials:  denialModels(plan),
		Findings: findingModels(plan),
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}

func agentModels(plan *planner.Plan) []agentModel {
	out := []agentModel{}
	for _, a := range plan.Agents {
		out = append(out, agentModel{Name: a.Name, Policy: a.Policy, Holds: nonNil(slices.Sorted(slices.Values(a.Holds)))})
	}
	return out
}

func toolModels(plan *planner.Plan) []toolModel {
	out := []toolModel{}
	for _, t := range plan.Tools {
		out = append(out, toolModel{Name: t.Name, Kind: t.Kind, Requires: nonNil(t.Requires), Enabled: t.Enabled})
	}
	return out
}

// matrixModels lists the matrix cells sorted by agent then tool: the
// matrix's own order, since it indexes agents and tools by name.
func matrixModels(plan *planner.Plan) []matrixModel {
	out := []matrixModel{}
	m := plan.Matrix()
	if m == nil {
		return out
	}
	tools := m.Tools()
	for ai := range m.Agents() {
		for ti := range tools {
			c := m.Cell(ai, ti)
			out = append(out, matrixModel{Agent: c.Agent, Tool: c.Tool, Decision: decision(c.Allowed), Missing: nonNil(c.Missing)})
		}
	}
	return out
}

func denialModels(plan *planner.Plan) []denialModel {
	out := []denialModel{}
	for _, d := range plan.Denials() {
		out = append(out, denialModel{Agent: d.Agent, Tool: d.Tool, Missing: nonNil(d.Missing)})
	}
	return out
}

// decision is a matrix cell's decision as agent.json and the JSON plan
// document write it.
func decision(allowed bool) string {
	if allowed {
		return decisionAllow
	}
	return decisionDeny
}

// nonNil returns s, or an empty list for nil, so Terraform sees [] rather
// than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// findingModels lists the audit's unwaived findings ("agentform audit"),
// most severe first.
func findingModels(plan *planner.Plan) []findingModel {
	out := []findingModel{}
	for _, f := range audit.Run(plan, audit.Options{}).Findings {
		out = append(out, findingModel{RuleID: f.RuleID, Severity: string(f.Severity), Target: f.Target, Message: f.Message})
	}
	return out
}
