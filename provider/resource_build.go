package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentform/agentform/internal/apply"
	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/internal/version"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

var (
	_ resource.Resource                = (*buildResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*buildResource)(nil)
	_ resource.ResourceWithImportState = (*buildResource)(nil)
	_ resource.ResourceWithConfigure   = (*buildResource)(nil)
)

// buildResource is resource "agentform_build": "agentform apply" for one
// workspace. Its plan runs the agentform planner, so "terraform plan" shows
// the exact digests of the artifacts apply will write.
//
// Destroying it removes the artifact files it recorded (and the artifact
// directory when that leaves it empty). The workspace's state database and
// lockfile stay: they are the workspace's, shared with the CLI, and the
// next apply (Terraform or CLI) sees the removed artifacts as drift and
// rebuilds them. Artifacts that a later apply recorded stay (see Delete).
type buildResource struct {
	// settings are the provider's (Configure); nil for the defaults.
	settings *settings
}

func newBuildResource() resource.Resource { return &buildResource{} }

// Configure implements resource.ResourceWithConfigure: it takes the
// provider's settings.
func (r *buildResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.settings = configuredSettings(req.ProviderData, &resp.Diagnostics)
}

// buildModel is the resource's configuration and state.
type buildModel struct {
	ID                types.String `tfsdk:"id"`
	Dir               types.String `tfsdk:"dir"`
	OutDir            types.String `tfsdk:"out_dir"`
	LockfileMode      types.String `tfsdk:"lockfile_mode"`
	Refresh           types.Bool   `tfsdk:"refresh"`
	Triggers          types.Map    `tfsdk:"triggers"`
	Artifacts         types.Map    `tfsdk:"artifacts"`
	LockSHA256        types.String `tfsdk:"lock_sha256"`
	Fingerprint       types.String `tfsdk:"fingerprint"`
	CapabilityMatrix  types.List   `tfsdk:"capability_matrix"`
	CapabilityChanges types.List   `tfsdk:"capability_changes"`
}

// artifactModel is one element of artifacts.
type artifactModel struct {
	Path   string `tfsdk:"path"`
	SHA256 string `tfsdk:"sha256"`
}

// cellModel is one element of capability_matrix.
type cellModel struct {
	Agent    string `tfsdk:"agent"`
	Tool     string `tfsdk:"tool"`
	Decision string `tfsdk:"decision"`
}

// changeModel is one element of capability_changes.
type changeModel struct {
	Agent  string `tfsdk:"agent"`
	Tool   string `tfsdk:"tool"`
	Change string `tfsdk:"change"`
}

var (
	artifactType = types.ObjectType{AttrTypes: map[string]attr.Type{"path": types.StringType, "sha256": types.StringType}}
	cellType     = types.ObjectType{AttrTypes: map[string]attr.Type{"agent": types.StringType, "tool": types.StringType, "decision": types.StringType}}
	changeType   = types.ObjectType{AttrTypes: map[string]attr.Type{"agent": types.StringType, "tool": types.StringType, "change": types.StringType}}
)

// Lockfile modes.
const (
	lockfileUpdate   = "update"
	lockfileReadonly = "readonly"
)

// Metadata implements resource.Resource.
func (r *buildResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_build"
}

// Schema implements resource.Resource.
func (r *buildResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Builds an agentform workspace, as `agentform apply` does: one reproducible artifact per agent " +
			"(`<out_dir>/<agent>.agent.tgz`), the lockfile, and the workspace's state database.\n\n" +
			"Planning runs the agentform planner, so `terraform plan` shows the exact SHA-256 of every artifact apply " +
			"will write, the capability matrix and the capability changes. Each agent's denials and an artifact changed " +
			"or removed outside Terraform are warnings; a failed `check` block, a remote tool definition that changed " +
			"since the lockfile and, with `lockfile_mode = \"readonly\"`, any lockfile difference are errors. Files an " +
			"interrupted apply left that no resource in the workspace's state owns (the leftovers `agentform plan` lists) " +
			"are a warning and alone plan no change: any apply of this resource removes them, as `agentform apply` does. " +
			"An update in which only `fingerprint` changes (every artifact keeps its digest, as after upgrading from an " +
			"earlier agentform that recorded less of each agent) is a warning that names what agentform records again.\n\n" +
			"Those errors, and every other error that keeps the workspace from being planned (a manifest that does not " +
			"load, say), fail `terraform plan`, as they fail `agentform plan`: a failing check is the gate a plan holds. " +
			"They also fail `terraform destroy`, which plans every resource as if it stayed before destroying anything " +
			"(in a way the provider cannot tell from `terraform plan`); destroying needs no workspace that plans, so " +
			"destroy a build whose workspace is broken with `terraform destroy -refresh=false`, which removes its " +
			"artifacts. The error says so.\n\n" +
			"Terraform and the `agentform` CLI share the workspace's state database (`.agentform/state.db`): either can " +
			"apply, and the other sees the result. Destroying the resource removes the artifacts it recorded (and " +
			"`out_dir` when that leaves it empty), but not a file at an artifact's path that no longer holds the bytes the " +
			"workspace's state recorded for it (a file of your own written there), which it keeps with a warning; the state database and the lockfile stay, and the next apply sees the " +
			"missing artifacts and rebuilds them. A state database removed by hand leaves the resource in place while an " +
			"artifact it recorded is on disk: the plan shows an update that rebuilds the artifacts and records them in a new " +
			"state database, and destroying the resource removes them; only with none of them left is the resource gone " +
			"from Terraform's state. Artifacts that a later apply recorded as its build stay: creating the " +
			"resource always commits the workspace's state (a history entry, even with nothing to build), so that with " +
			"`create_before_destroy` the replaced object leaves the new object's artifacts alone; so does a destroy that " +
			"did not refresh after an `agentform apply`, with a warning.\n\n" +
			"The plan reads the workspace as it is when Terraform plans, so the computed attributes are known then. A " +
			"workspace that another resource of the configuration rewrites during the same apply (a `local-exec` " +
			"provisioner, a `local_file`) must be named in `triggers`: `depends_on` orders the apply but does not tell the " +
			"provider, so the plan would describe the workspace before the rewrite, and Terraform stops the apply with " +
			"\"Provider produced inconsistent final plan\" (or, when the plan had nothing to do, the build stays as it was " +
			"until the next apply). A saved plan (`terraform plan -out`) made before the workspace changed (an `agentform " +
			"apply`, an edited manifest or tool) ends the same way: plan again. When the workspace changes after " +
			"Terraform's last look at it, apply writes nothing and reports \"Workspace Changed Since Plan\".\n\n" +
			"Declare one `agentform_build` per workspace directory. A workspace has one state database, so two " +
			"resources on the same `dir` would each record their build over the other's, move the other's artifacts " +
			"to their own `out_dir` and never settle; vary the settings of the one resource instead (see the example). " +
			"Give each workspace its own `out_dir` too: an artifact is named by its agent alone, so two workspaces " +
			"writing one directory overwrite each other's artifact of an agent they both name, each sees the other's " +
			"as changed outside Terraform and rebuilds it, and destroying one removes that file for both.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The workspace directory, as `dir` gives it.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"dir": schema.StringAttribute{
				Required:            true,
				Validators:          []validator.String{nonEmpty(nonEmptyDir)},
				PlanModifiers:       sameDirModifiers(),
				MarkdownDescription: "The workspace directory: the one holding the `*.acl` manifest files. A relative path is relative to Terraform's working directory. Changing it to another directory replaces the resource; another spelling of the same directory (`agents`, `./agents`, `agents/`, its absolute path, a symbolic link to it) changes nothing.",
			},
			"out_dir": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(apply.DefaultOutDir),
				Validators:          []validator.String{nonEmpty(nonEmptyOutDir)},
				PlanModifiers:       sameOutDirModifiers(),
				MarkdownDescription: "The artifact directory, relative to `dir` unless absolute. Defaults to `dist`. Changing it to another directory replaces the resource: the old artifacts are removed and every artifact is built in the new directory. Another spelling of the same directory (`dist`, `./dist`, `dist/`, a symbolic link to it) changes nothing. A directory that is, or is inside, the source of a javascript or python tool or of a skill is an error, however it is spelled: agentform hashes those sources, so the artifacts would change them with every apply (a directory the hash leaves out, such as a `dist` or `node_modules` inside the source, is allowed).",
			},
			"lockfile_mode": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(lockfileUpdate),
				Validators:          []validator.String{oneOf(lockfileUpdate, lockfileReadonly)},
				MarkdownDescription: "`update` (the default) writes `agentform.lock.hcl` when what was resolved differs from it. `readonly` makes any difference an error and never writes the lockfile, as `agentform apply -lockfile=readonly` does in CI; an mcp or a2a block the lockfile has no entry for counts as a difference even when its server is not reached, unless the block's address is a `runtime()` value left unset.",
			},
			"refresh": schema.BoolAttribute{
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(true),
				MarkdownDescription: "Whether to contact MCP servers and A2A agents while planning (the default). With `false`, remote tools come from the lockfile, as with `agentform plan -refresh=false`.",
			},
			"triggers": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Values that change when something else in the configuration rewrites the workspace during apply, " +
					"such as `{ manifest = terraform_data.generate.id }` for a `terraform_data` whose `local-exec` provisioner writes " +
					"an `.acl` file. When they differ from the values in state, or are not known until apply, the plan cannot " +
					"know what the workspace will hold: `artifacts`, `lock_sha256`, `fingerprint`, `capability_matrix` and " +
					"`capability_changes` are known after apply, and the resource is updated. Adding triggers to a resource that " +
					"had none is a change too; only the values configured with a `terraform import` (which cannot record " +
					"them) are taken as they are until the first apply, so the plan after an import reads the workspace. " +
					"agentform only compares them.",
			},
			"artifacts": schema.MapNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Each agent's artifact, by agent name. Known at plan time: the build is reproducible, so the plan shows the digest apply will write.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"path":   str("The artifact file: `out_dir` joined to `dir`."),
					"sha256": str("The lowercase hex SHA-256 of the file, as `filesha256(path)` returns."),
				}},
			},
			"lock_sha256": str("The lowercase hex SHA-256 of `agentform.lock.hcl` after apply; null when the workspace has no lockfile."),
			"fingerprint": str("A digest of the input fingerprint of every agent, tool and skill as applied. It changes whenever agentform would change something, including a resource that has no artifact."),
			"capability_matrix": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The capability matrix as applied: one cell per agent and enabled registered tool, sorted by agent then tool. Pass it to `provider::agentform::can_call`.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"agent":    str("The agent's name."),
					"tool":     str("The registered tool's name."),
					"decision": str("`allow` when the agent may call the tool, else `deny`."),
				}},
			},
			"capability_changes": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The cells of the matrix that the latest apply through this resource granted or revoked, sorted by agent then tool; empty when it changed none.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"agent":  str("The agent's name."),
					"tool":   str("The registered tool's name."),
					"change": str("`granted` or `revoked`."),
				}},
			},
		},
	}
}

// options returns the engine options m configures, with the provider's
// settings s; m must be known.
func (m *buildModel) options(s *settings) engineOptions {
	return engineOptions{refresh: m.Refresh.ValueBool(), lockReadonly: m.LockfileMode.ValueString() == lockfileReadonly, outDir: m.OutDir.ValueString(), settings: s}
}

// ModifyPlan implements resource.ResourceWithModifyPlan: it plans the
// workspace and fills every computed attribute with what apply will
// record, so "terraform plan" shows artifact digests and capability
// changes, and no change at all when agentform has nothing to do. When
// triggers changed, the workspace is about to be rewritten and they are
// left unknown.
func (r *buildResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var planned buildModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &planned)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if planned.Dir.IsUnknown() || planned.OutDir.IsUnknown() || planned.LockfileMode.IsUnknown() || planned.Refresh.IsUnknown() {
		return // known after apply
	}
	var prior *buildModel
	if !req.State.Raw.IsNull() {
		prior = &buildModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, prior)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	imported := false
	if prior != nil && req.Private != nil {
		var diags diag.Diagnostics
		imported, diags = isImported(ctx, req.Private)
		resp.Diagnostics.Append(diags...)
	}
	if triggersChanged(&planned, prior, imported) {
		// The workspace is rewritten during this apply: what it holds now
		// says nothing about what apply will build, and planning it could
		// fail on a manifest about to be replaced.
		planned.setUnknown()
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &planned)...)
		return
	}
	dir, opts := planned.Dir.ValueString(), planned.options(r.settings)
	// A replacement destroys first, which removes every artifact, so the
	// create that follows rebuilds them all.
	replacing := prior != nil && (!prior.Dir.Equal(planned.Dir) || !prior.OutDir.Equal(planned.OutDir))
	// An object kept as it is (no create, no replacement) whose workspace
	// cannot be planned says how to destroy it: see planFailed.
	failed := func(diags diag.Diagnostics) {
		planFailed(prior != nil && !replacing, diags, resp)
	}
	ws := planWorkspace(ctx, dir, opts)
	if len(planned.Triggers.Elements()) == 0 {
		for _, d := range ws.diags {
			if workspaceMissing(d, dir) {
				d.Detail = strings.TrimSpace(d.Detail) + "\n\n" + triggersHint
			}
		}
	}
	diags := engineDiagnostics(ws, path.Root("dir"), nil)
	if diags.HasError() && ws.failure != nil {
		// The state database could not be read (locked, corrupt): Read
		// and Delete need it too, so it stays an error.
		resp.Diagnostics.Append(diags...)
		return
	}
	if diags.HasError() {
		failed(diags)
		return
	}
	resp.Diagnostics.Append(diags...)
	plan := ws.plan
	resp.Diagnostics.Append(denialWarnings(plan, path.Root("capability_matrix"))...)
	resp.Diagnostics.Append(driftWarnings(dir, plan, prior == nil)...)
	resp.Diagnostics.Append(leftoverWarnings(plan)...)

	arts, err := predictArtifacts(plan, replacing, true)
	if err != nil {
		diags = nil
		diags.AddAttributeError(path.Root("dir"), "Cannot Build Artifacts",
			fmt.Sprintf("agentform could not build the artifacts of %s to plan their digests. Run \"agentform plan\" in the workspace for details, fix the cause and plan again.\n\n%s", dir, err))
		failed(diags)
		return
	}
	lockDigest, err := predictLockDigest(dir, plan, opts)
	if err != nil {
		diags = nil
		diags.AddAttributeError(path.Root("lock_sha256"), "Cannot Read Lockfile",
			fmt.Sprintf("agentform could not read %s. Check its permissions and plan again.\n\n%s", filepath.Join(dir, lockfile.FileName), err))
		failed(diags)
		return
	}
	// Capability changes are those of the last apply: they stand until
	// something is applied again.
	keep := types.ListNull(changeType)
	if prior != nil && !replacing && !wouldApply(plan, opts) && !prior.CapabilityChanges.IsNull() && !prior.CapabilityChanges.IsUnknown() {
		keep = prior.CapabilityChanges
	}
	resp.Diagnostics.Append(planned.setResult(ctx, plan, arts, lockDigest, keep)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if prior != nil && !replacing {
		resp.Diagnostics.Append(sameBuildWarning(dir, plan, prior, &planned)...)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &planned)...)
}

// sameBuildWarning explains an update whose only change Terraform can
// show is the fingerprint: every artifact keeps its digest, and the
// lockfile and the capability matrix stay as they are. Nothing else in the
// plan says what agentform would record differently; most often the
// workspace's state was written by an earlier agentform, which did not
// record an attribute this one tracks (an agent's network or
// workspace_references), and apply records it, writing the same bytes. It
// names each address that changes and its changed attributes, as
// "agentform plan" lists them.
func sameBuildWarning(dir string, plan *planner.Plan, prior, planned *buildModel) diag.Diagnostics {
	var out diag.Diagnostics
	if planned.Fingerprint.Equal(prior.Fingerprint) || !planned.Artifacts.Equal(prior.Artifacts) ||
		!planned.LockSHA256.Equal(prior.LockSHA256) || !planned.CapabilityMatrix.Equal(prior.CapabilityMatrix) {
		return out
	}
	var lines []string
	unrecorded := false
	for _, rc := range plan.ResourceChanges {
		addr := render.Printable(rc.Address)
		switch rc.Actions[0] {
		case planner.ActionNoOp:
		case planner.ActionCreate:
			lines = append(lines, "  + "+addr+" (new)")
		case planner.ActionDelete:
			lines = append(lines, "  - "+addr+" (removed)")
		default:
			var names []string
			for _, c := range rc.AttributeChanges {
				name := render.Printable(c.Name)
				if c.Before == nil && c.After != nil {
					name += " (not recorded before)"
					unrecorded = true
				}
				names = append(names, name)
			}
			if len(names) == 0 {
				names = append(names, strings.Join(rc.Reasons, ", "))
			}
			lines = append(lines, "  ~ "+addr+": "+strings.Join(names, ", "))
		}
	}
	detail := fmt.Sprintf("agentform will record the build of %s again, but every artifact keeps its digest and the lockfile and the capability matrix stay as they are: "+
		"only fingerprint changes, and apply writes the same artifacts. What changes, as \"agentform plan\" in the workspace lists it:\n\n%s",
		render.Printable(dir), strings.Join(lines, "\n"))
	if unrecorded {
		detail += "\n\nAn attribute not recorded before is one the workspace's state does not hold yet, usually because an earlier agentform, " +
			"which did not track it, wrote the state. Apply records it; nothing else needs doing."
	}
	out.AddAttributeWarning(path.Root("fingerprint"), "Build Recorded Again", detail)
	return out
}

// planFailed reports diags, which hold errors, for a workspace that
// cannot be planned: as errors, as "agentform plan" reports them, for a
// failing check is the gate a plan exists to hold. For an object that
// exists and is kept, each error also says how to destroy it anyway:
// before it plans a destroy, Terraform refreshes with a normal plan, which
// asks this provider to plan the object as if it stayed, and nothing in
// that request tells it apart from "terraform plan"; Delete itself needs
// no manifest that plans.
func planFailed(existing bool, diags diag.Diagnostics, resp *resource.ModifyPlanResponse) {
	if !existing {
		resp.Diagnostics.Append(diags...)
		return
	}
	for _, d := range diags {
		if d.Severity() != diag.SeverityError {
			resp.Diagnostics.Append(d)
			continue
		}
		detail := strings.TrimSpace(d.Detail()) + "\n\n" + destroyBrokenNote
		if at, ok := d.(diag.DiagnosticWithPath); ok {
			resp.Diagnostics.AddAttributeError(at.Path(), d.Summary(), detail)
		} else {
			resp.Diagnostics.AddError(d.Summary(), detail)
		}
	}
}

// destroyBrokenNote ends each error planFailed reports for an existing
// object.
const destroyBrokenNote = "To destroy this agentform_build while its workspace does not plan, run \"terraform destroy -refresh=false\": " +
	"before destroying, Terraform plans every resource as if it stayed, and this one cannot be planned."

// leftoverWarnings warns about the leftovers of an interrupted apply:
// artifact files it wrote, or meant to remove, that no resource in the
// workspace's state owns. They change no attribute, so they alone plan no
// change; the next apply of this resource that changes anything removes
// them, and so does "agentform apply" in the workspace.
func leftoverWarnings(plan *planner.Plan) diag.Diagnostics {
	var out diag.Diagnostics
	if len(plan.Leftovers) == 0 {
		return out
	}
	out.AddAttributeWarning(path.Root("artifacts"), "Leftovers Of An Interrupted Apply",
		fmt.Sprintf("An apply that did not finish left %s, which no resource in the workspace's state owns. They alone plan no change: the next apply of this resource that changes anything removes them, and so does \"agentform apply\" in the workspace.",
			strings.Join(plan.Leftovers, ", ")))
	return out
}

// driftWarnings warns about each artifact that the workspace's state
// records but that is missing or differs on disk: apply rebuilds it. For
// a create, a missing artifact is no news (destroying the resource
// removed it), and one that differs was changed outside agentform, not
// outside a Terraform resource that does not exist yet.
func driftWarnings(dir string, plan *planner.Plan, create bool) diag.Diagnostics {
	var out diag.Diagnostics
	for _, rc := range plan.ResourceChanges {
		if rc.Type != "agent" || !hasArtifactDrift(rc) {
			continue
		}
		at := path.Root("artifacts").AtMapKey(rc.Name)
		if !create {
			out.AddAttributeWarning(at, "Artifact Changed Outside Terraform",
				fmt.Sprintf("The artifact of %s is missing or differs from what the last apply wrote; apply rebuilds it.", rc.Address))
			continue
		}
		if artifactOnDisk(dir, plan, rc) {
			out.AddAttributeWarning(at, "Artifact Changed Outside agentform",
				fmt.Sprintf("The artifact of %s differs from what the workspace's last apply wrote; creating the resource rebuilds it.", rc.Address))
		}
	}
	return out
}

// artifactOnDisk reports whether the artifact that the workspace's state
// records for rc is on disk. When rc has artifact drift and none is,
// whatever removed it is no news: destroying an agentform_build does.
func artifactOnDisk(dir string, plan *planner.Plan, rc planner.ResourceChange) bool {
	old := plan.Applied.Resources[rc.Address].Artifact
	if old == nil {
		return false
	}
	_, err := os.Stat(artifactFile(dir, old.Path))
	return err == nil
}

// triggersHint is appended to the plan's error for a workspace directory
// that is missing or holds no manifest, when the resource has no
// triggers: it may be what another resource writes during apply, which
// the plan cannot wait for. With triggers, the configuration already
// says so, and a directory that exists but cannot be read (permissions,
// a file) is no such case.
const triggersHint = "If another resource of this configuration writes the workspace during apply (a local-exec " +
	"provisioner, a local_file), name it in triggers, such as triggers = { manifest = local_file.agent.id }: " +
	"depends_on orders the apply but does not tell the provider, and the plan reads the workspace as it is now. " +
	"With triggers not known until apply, the plan leaves the build's attributes unknown instead."

// workspaceMissing reports whether d is the engine's error for a workspace
// directory dir that does not exist or holds no manifest file.
func workspaceMissing(d *hcl.Diagnostic, dir string) bool {
	switch d.Summary {
	case summaryNoManifest:
		return true
	case "Cannot read workspace directory":
		_, err := os.Stat(dir)
		return errors.Is(err, os.ErrNotExist)
	}
	return false
}

// triggersChanged reports whether planned's triggers are not all known or
// differ from prior's (a create has none before); null and empty are the
// same. Known values given to an object that imported has just written
// (its null triggers were never configured) are no change.
func triggersChanged(planned, prior *buildModel, imported bool) bool {
	if planned.Triggers.IsUnknown() {
		return true
	}
	now := planned.Triggers.Elements()
	for _, v := range now {
		if v.IsUnknown() {
			return true
		}
	}
	// An import cannot record triggers, so the values configured with it
	// are taken as they are. Any other object had null triggers because
	// its configuration had none, and values added now may well name a
	// rewrite in this apply: a value known at plan time, such as a
	// digest of the file a provisioner copies into the workspace, does.
	if prior != nil && prior.Triggers.IsNull() && imported {
		return false
	}
	var before map[string]attr.Value
	if prior != nil && !prior.Triggers.IsUnknown() {
		before = prior.Triggers.Elements()
	}
	if len(now) != len(before) {
		return true
	}
	for k, v := range now {
		if b, ok := before[k]; !ok || !b.Equal(v) {
			return true
		}
	}
	return false
}

// setUnknown leaves every computed attribute of m but id unknown.
func (m *buildModel) setUnknown() {
	m.ID = m.Dir
	m.Artifacts = types.MapUnknown(artifactType)
	m.LockSHA256 = types.StringUnknown()
	m.Fingerprint = types.StringUnknown()
	m.CapabilityMatrix = types.ListUnknown(cellType)
	m.CapabilityChanges = types.ListUnknown(changeType)
}

// setResult fills m's computed attributes from plan, the artifacts state
// records and the lockfile digest. keepChanges, when not nil, is kept as
// capability_changes (nothing was applied, so the last apply's changes
// stand); otherwise they are plan's.
func (m *buildModel) setResult(ctx context.Context, plan *planner.Plan, arts map[string]state.Artifact, lockDigest string, keepChanges types.List) diag.Diagnostics {
	var diags diag.Diagnostics
	m.ID = m.Dir
	m.Artifacts = artifactsValue(ctx, m.Dir.ValueString(), arts, &diags)
	m.LockSHA256 = types.StringNull()
	if lockDigest != "" {
		m.LockSHA256 = types.StringValue(lockDigest)
	}
	m.Fingerprint = types.StringValue(planFingerprint(plan))
	m.CapabilityMatrix = cellsValue(ctx, planCells(plan), &diags)
	if keepChanges.IsNull() {
		var changes []changeModel
		for _, c := range plan.CapabilityChanges {
			changes = append(changes, changeModel{Agent: c.Agent, Tool: c.Tool, Change: c.Change})
		}
		sort.Slice(changes, func(i, j int) bool {
			return changes[i].Agent < changes[j].Agent || changes[i].Agent == changes[j].Agent && changes[i].Tool < changes[j].Tool
		})
		keepChanges = listValue(ctx, changeType, changes, &diags)
	}
	m.CapabilityChanges = keepChanges
	return diags
}

// Create implements resource.Resource. It commits the workspace's state
// even when there is nothing to build, so that the state's serial moves
// past the one any older object of the resource recorded: with
// create_before_destroy, that object's Delete then leaves the artifacts
// alone.
func (r *buildResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var planned buildModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &planned)...)
	if resp.Diagnostics.HasError() {
		return
	}
	meta, diags := r.apply(ctx, &planned, types.ListNull(changeType), true)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(setClaim(ctx, resp.Private, meta)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &planned)...)
}

// Update implements resource.Resource.
func (r *buildResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var planned, prior buildModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &planned)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	meta, diags := r.apply(ctx, &planned, prior.CapabilityChanges, false)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(setClaim(ctx, resp.Private, meta)...)
	// The configured triggers are in state from now on.
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &planned)...)
}

// apply applies the workspace m configures and records the result in m.
// priorChanges are the capability changes in state, kept when nothing
// needed applying (null for a create). claim commits state even when
// nothing needed applying. It returns the workspace state's lineage and
// serial after the run.
func (r *buildResource) apply(ctx context.Context, m *buildModel, priorChanges types.List, claim bool) (state.Meta, diag.Diagnostics) {
	dir := m.Dir.ValueString()
	opts := m.options(r.settings)
	opts.claim = claim
	verify := func(plan *planner.Plan) (string, error) { return m.mismatch(ctx, plan, opts, priorChanges) }
	res := applyWorkspace(ctx, dir, m.OutDir.ValueString(), opts, verify)
	diags := engineDiagnostics(res.workspacePlan, path.Root("dir"), nil)
	if diags.HasError() {
		return state.Meta{}, diags
	}
	if res.mismatch != "" {
		diags.AddAttributeError(path.Root("dir"), "Workspace Changed Since Plan",
			fmt.Sprintf("The workspace in %s is no longer what Terraform planned for this resource: applying it now would record different values for %s. Nothing was written.\n\n"+
				"Something changed the workspace after Terraform planned it: an \"agentform apply\", an edited manifest, tool or lockfile, a remote tool definition, "+
				"or another resource of this configuration that writes the workspace during apply. Run terraform apply again to plan the workspace as it is now. "+
				"A resource that writes the workspace belongs in this resource's triggers, which leave the computed attributes unknown until apply.",
				dir, res.mismatch))
		return state.Meta{}, diags
	}
	lockDigest, err := fileDigest(filepath.Join(dir, lockfile.FileName))
	if err != nil {
		diags.AddAttributeError(path.Root("lock_sha256"), "Cannot Read Lockfile",
			fmt.Sprintf("The apply succeeded, but %s could not be read. Check its permissions and run Terraform again.\n\n%s", filepath.Join(dir, lockfile.FileName), err))
		return state.Meta{}, diags
	}
	keep := types.ListNull(changeType)
	if !res.applied && !priorChanges.IsNull() && !priorChanges.IsUnknown() {
		keep = priorChanges
	}
	diags.Append(m.setResult(ctx, res.plan, res.artifacts, lockDigest, keep)...)
	return res.meta, diags
}

// mismatch compares plan, made under the state lock right before apply,
// with the computed attributes m planned, and names those that apply
// would record otherwise ("" when none would). Unknown attributes are
// not compared. Artifact digests are compared for the artifacts apply
// keeps; the bytes of a rebuilt one follow from its inputs, which the
// fingerprint covers, so it is not built twice.
func (m *buildModel) mismatch(ctx context.Context, plan *planner.Plan, opts engineOptions, priorChanges types.List) (string, error) {
	dir := m.Dir.ValueString()
	arts, err := predictArtifacts(plan, false, false)
	if err != nil {
		return "", err
	}
	lockDigest, err := predictLockDigest(dir, plan, opts)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", filepath.Join(dir, lockfile.FileName), err)
	}
	keep := types.ListNull(changeType)
	if !opts.claim && !wouldApply(plan, opts) && !priorChanges.IsNull() && !priorChanges.IsUnknown() {
		keep = priorChanges
	}
	want := buildModel{Dir: m.Dir}
	if diags := want.setResult(ctx, plan, arts, lockDigest, keep); diags.HasError() {
		return "", fmt.Errorf("converting the plan to attributes: %s", diags.Errors()[0].Detail())
	}
	var differ []string
	for _, a := range []struct {
		name      string
		got, want attr.Value
	}{
		{"fingerprint", m.Fingerprint, want.Fingerprint},
		{"lock_sha256", m.LockSHA256, want.LockSHA256},
		{"capability_matrix", m.CapabilityMatrix, want.CapabilityMatrix},
		{"capability_changes", m.CapabilityChanges, want.CapabilityChanges},
	} {
		if !a.got.IsUnknown() && !a.got.Equal(a.want) {
			differ = append(differ, a.name)
		}
	}
	if !m.Artifacts.IsUnknown() && !sameArtifacts(ctx, m.Artifacts, want.Artifacts) {
		differ = append(differ, "artifacts")
	}
	return strings.Join(differ, ", "), nil
}

// sameArtifacts reports whether the planned artifacts and the predicted
// ones name the same agents and paths, and the same digests where the
// prediction has one.
func sameArtifacts(ctx context.Context, planned, predicted types.Map) bool {
	var p, w map[string]artifactModel
	if planned.ElementsAs(ctx, &p, false).HasError() || predicted.ElementsAs(ctx, &w, false).HasError() || len(p) != len(w) {
		return false
	}
	for agent, a := range w {
		b, ok := p[agent]
		if !ok || b.Path != a.Path || a.SHA256 != "" && b.SHA256 != a.SHA256 {
			return false
		}
	}
	return true
}

// Read implements resource.Resource: it reads what the workspace's state
// database records and the artifacts on disk, so an artifact changed or
// removed outside Terraform, or an apply by the CLI, shows in the next
// plan. A workspace that is gone removes the resource. So does one
// without state (its .agentform/state.db removed) once none of the
// artifacts the object recorded is on disk; while one is, the object
// stays with those artifacts and a fingerprint of no build, so that the
// plan rebuilds and records them again and a destroy removes them.
func (r *buildResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m buildModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	dir := m.Dir.ValueString()
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		resp.State.RemoveResource(ctx)
		return
	}
	prior, err := readApplied(dir, r.settings)
	if err != nil {
		resp.Diagnostics.Append(stateDiagnostic(dir, path.Root("dir"), err))
		return
	}
	// What this object owns is what the workspace's state records; with
	// no state (.agentform/state.db removed), what the object recorded.
	recorded := appliedArtifacts(prior)
	stateless := prior.Serial == 0
	if stateless {
		recorded = modelArtifacts(ctx, dir, m.Artifacts, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}

	// Attributes an import leaves null take their defaults; out_dir is
	// where the recorded artifacts are.
	m.ID = m.Dir
	if m.OutDir.IsNull() {
		m.OutDir = types.StringValue(recordedOutDir(prior))
	}
	if m.LockfileMode.IsNull() {
		m.LockfileMode = types.StringValue(lockfileUpdate)
	}
	if m.Refresh.IsNull() {
		m.Refresh = types.BoolValue(true)
	}

	onDisk := map[string]state.Artifact{}
	for agent, a := range recorded {
		digest, err := fileDigest(artifactFile(dir, a.Path))
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("artifacts").AtMapKey(agent), "Cannot Read Artifact",
				fmt.Sprintf("agentform could not read %s. Check its permissions and run Terraform again.\n\n%s", artifactFile(dir, a.Path), err))
			return
		}
		if digest == "" {
			continue // removed outside Terraform: the next plan recreates it
		}
		onDisk[agent] = state.Artifact{Path: a.Path, SHA256: digest}
	}
	if stateless {
		if len(onDisk) == 0 {
			// Nothing the object built is left to destroy.
			resp.State.RemoveResource(ctx)
			return
		}
		resp.Diagnostics.AddAttributeWarning(path.Root("dir"), "Workspace State Missing",
			fmt.Sprintf("The state database of %s (%s) is gone, but artifacts this resource built are still on disk. "+
				"The next apply rebuilds every artifact and records the build again; destroying the resource removes them.",
				dir, filepath.Join(dir, state.DirName, state.FileName)))
	}
	m.Artifacts = artifactsValue(ctx, dir, onDisk, &resp.Diagnostics)

	lockDigest, err := fileDigest(filepath.Join(dir, lockfile.FileName))
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("lock_sha256"), "Cannot Read Lockfile",
			fmt.Sprintf("agentform could not read %s. Check its permissions and run Terraform again.\n\n%s", filepath.Join(dir, lockfile.FileName), err))
		return
	}
	m.LockSHA256 = types.StringNull()
	if lockDigest != "" {
		m.LockSHA256 = types.StringValue(lockDigest)
	}
	m.Fingerprint = types.StringValue(appliedFingerprint(prior))
	// An apply by the CLI may have granted or revoked since: the matrix is
	// read again, like every other attribute. Without state, the rows are
	// those the artifacts left on disk carry.
	cells := artifactCells(dir, onDisk)
	if !stateless {
		cells = appliedCells(dir, prior, onDisk, matrixTools(ctx, m.CapabilityMatrix))
	}
	m.CapabilityMatrix = cellsValue(ctx, cells, &resp.Diagnostics)
	if m.CapabilityChanges.IsNull() || m.CapabilityChanges.IsUnknown() {
		m.CapabilityChanges = listValue(ctx, changeType, []changeModel{}, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(setClaim(ctx, resp.Private, state.Meta{Lineage: prior.Lineage, Serial: prior.Serial})...)
	if !m.Triggers.IsNull() {
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Delete implements resource.Resource: it removes the artifact files the
// resource recorded, holding the workspace's state lock so that no
// agentform apply writes them meanwhile, and the artifact directory when
// that leaves it empty. State and lockfile stay (see buildResource).
//
// An artifact that the workspace's state records is left alone when the
// state has moved since this object last applied or read it (its claim):
// a later apply built or adopted that file and it is live. This is how a
// replacement with create_before_destroy, whose new object (Create) has
// just committed state, keeps the artifacts the old object recorded at
// the same paths, silently. After an "agentform apply" that Terraform has
// not read (destroy -refresh=false), the artifacts stay too, with a
// warning naming it. An object without a claim is handled by
// unclaimedBuildKept.
func (r *buildResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m buildModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	dir := m.Dir.ValueString()
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return
	}
	arts := map[string]artifactModel{}
	if !m.Artifacts.IsNull() && !m.Artifacts.IsUnknown() {
		resp.Diagnostics.Append(m.Artifacts.ElementsAs(ctx, &arts, false)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	live := map[string]bool{}   // the paths state records, resolved
	var liveFiles []os.FileInfo // and the files at them
	// built is the digest (hex) of the artifact the workspace's state
	// records at each path: what agentform wrote there. A refresh records
	// whatever is on disk in Terraform's state, so that is no witness.
	built := map[string]string{}
	since := "" // what wrote the state since the claim, unless Terraform
	if _, err := os.Stat(filepath.Join(dir, state.DirName, state.FileName)); err == nil {
		db, err := state.Open(dir, state.Options{LockTimeout: r.settings.lockWait(), Operation: "terraform destroy", Version: version.Version})
		if err != nil {
			resp.Diagnostics.Append(stateDiagnostic(dir, path.Root("dir"), err))
			return
		}
		defer db.Close()
		prior, err := planner.AppliedFromState(db)
		if err != nil {
			resp.Diagnostics.Append(stateDiagnostic(dir, path.Root("dir"), err))
			return
		}
		for _, a := range appliedArtifacts(prior) {
			built[dirPath(artifactFile(dir, a.Path))] = hexDigest(a.SHA256)
		}
		claim, diags := getClaim(ctx, req.Private)
		resp.Diagnostics.Append(diags...)
		keep := false
		switch {
		case claim == nil:
			keep, since = unclaimedBuildKept(db, dir, prior, arts)
		case claim.Lineage != prior.Lineage || claim.Serial != prior.Serial:
			keep = true
			since = writersSince(db, *claim, state.Meta{Lineage: prior.Lineage, Serial: prior.Serial})
		}
		if keep {
			for _, a := range appliedArtifacts(prior) {
				file := artifactFile(dir, a.Path)
				live[dirPath(file)] = true
				if fi, err := os.Stat(file); err == nil {
					liveFiles = append(liveFiles, fi)
				}
			}
		}
	}
	var kept, changed []string
	for _, agent := range sortedKeys(arts) {
		if live[dirPath(arts[agent].Path)] || isAnyOf(arts[agent].Path, liveFiles) {
			kept = append(kept, arts[agent].Path)
			continue
		}
		// Only the artifact this resource built is removed: not a file
		// written at its path since (a user's, another build's).
		want, ok := built[dirPath(arts[agent].Path)]
		if !ok {
			want = arts[agent].SHA256
		}
		if digest, err := resolve.SHA256File(arts[agent].Path); err == nil && want != "" && hexDigest(digest) != want {
			changed = append(changed, arts[agent].Path)
			continue
		}
		if err := os.Remove(arts[agent].Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			resp.Diagnostics.AddAttributeError(path.Root("artifacts").AtMapKey(agent), "Cannot Remove Artifact",
				fmt.Sprintf("agentform could not remove %s. Remove it by hand, or fix its directory's permissions and destroy again.\n\n%s", arts[agent].Path, err))
		}
	}
	if len(changed) > 0 {
		resp.Diagnostics.AddAttributeWarning(path.Root("artifacts"), "Changed Artifacts Kept",
			fmt.Sprintf("These files no longer hold the artifacts this resource built (their SHA-256 differs from the one the workspace's state recorded): "+
				"something wrote them since, so destroying left them in place:\n  %s\n\nRemove them by hand if they are not wanted.",
				strings.Join(changed, "\n  ")))
	}
	// A replacing object (create_before_destroy) has just committed state
	// through Terraform: keeping its artifacts is what was asked for.
	if len(kept) > 0 && since != "" {
		resp.Diagnostics.AddAttributeWarning(path.Root("artifacts"), "Artifacts Kept",
			fmt.Sprintf("%s It records these artifacts as the workspace's build, so destroying this resource left them in place:\n  %s\n\n"+
				"They are the build that the workspace's next apply (\"agentform apply\", or an agentform_build of this directory) starts from; "+
				"removing them by hand makes it rebuild them.",
				since, strings.Join(kept, "\n  ")))
	}
	if out := m.OutDir.ValueString(); out != "" {
		if !filepath.IsAbs(out) {
			out = filepath.Join(dir, out)
		}
		// Cleaned: with a trailing slash, Lstat follows a symbolic link.
		out = filepath.Clean(out)
		// Only a directory, and only when empty, which is the point;
		// os.Remove would remove a symbolic link whatever it points to.
		if fi, err := os.Lstat(out); err == nil && fi.IsDir() {
			_ = os.Remove(out)
		}
	}
}

// unclaimedBuildKept decides, for an object without a claim (written by a
// provider from before claims and not read since: destroy -refresh=false),
// whether the build the workspace's state records is another's, whose
// artifacts Delete must keep, and what wrote it, as a sentence for the
// warning ("" for Terraform).
//
// The build is the object's own when state records exactly the artifacts
// the object recorded (paths and digests) and its last write is not a
// claim: a Terraform apply that changed nothing, which only Create writes
// (older providers did not commit an apply with nothing to do). So a
// plain destroy removes the object's artifacts, and the object that
// replaced it with create_before_destroy keeps its own: its Create either
// rebuilt something (the digests differ) or only claimed the build.
//
// What this cannot tell: an older provider's apply that only rewrote the
// lockfile also committed without actions, so destroying that object
// keeps its artifacts, on the safe side; and a state rolled back to the
// object's build looks like it.
func unclaimedBuildKept(db *state.DB, dir string, prior *planner.Applied, arts map[string]artifactModel) (bool, string) {
	recorded := appliedArtifacts(prior)
	own := len(recorded) == len(arts)
	for agent, a := range recorded {
		if mine, ok := arts[agent]; !ok || dirPath(mine.Path) != dirPath(artifactFile(dir, a.Path)) || mine.SHA256 != hexDigest(a.SHA256) {
			own = false
		}
	}
	var last *state.HistoryEntry
	if prior.Serial > 0 {
		// A history that cannot be read leaves the digests to decide.
		if h, err := db.HistoryAfter(prior.Serial - 1); err == nil && len(h) == 1 {
			last = &h[0]
		}
	}
	claimed := last != nil && last.Operation == terraformApply && len(last.Actions) == 0
	if own && !claimed {
		return false, ""
	}
	if last == nil || last.Operation == terraformApply {
		return true, ""
	}
	return true, fmt.Sprintf("The workspace's state was last written by %s, not by this resource.", operationName(last.Operation))
}

// isAnyOf reports whether file is one of files (os.SameFile): another
// name of a file, such as a hard link, is the same file.
func isAnyOf(file string, files []os.FileInfo) bool {
	fi, err := os.Stat(file)
	if err != nil {
		return false
	}
	for _, f := range files {
		if os.SameFile(fi, f) {
			return true
		}
	}
	return false
}

// terraformApply is the operation the provider records in the
// workspace state's history (see applyWorkspace).
const terraformApply = "terraform apply"

// writersSince says, as a sentence for Delete's warning, what wrote the
// workspace's state (now) after the claim c: "" when every write recorded
// is a Terraform apply (a replacing agentform_build). It reads only the
// history entries after the claim, and a history that is missing, pruned
// or unreadable is said, never an error: the history only words the
// warning.
func writersSince(db *state.DB, c claim, now state.Meta) string {
	const after = "after this resource last applied or read it"
	switch {
	case c.Lineage != now.Lineage:
		return "The workspace's state was created anew " + after + " (its lineage changed)."
	case now.Serial < c.Serial:
		return fmt.Sprintf("The workspace's state is older than when this resource last applied or read it (its serial went back from %d to %d): it was restored or replaced.", c.Serial, now.Serial)
	}
	moved := fmt.Sprintf("(its serial went from %d to %d)", c.Serial, now.Serial)
	history, err := db.HistoryAfter(c.Serial)
	if err != nil {
		return fmt.Sprintf("The workspace's state was written %s %s, but its history could not be read, so what wrote it is unknown (%v).", after, moved, err)
	}
	if len(history) == 0 {
		return fmt.Sprintf("The workspace's state was written %s %s, but its history records no write after serial %d (it was pruned or removed), so what wrote it is unknown.", after, moved, c.Serial)
	}
	var ops []string
	for _, e := range history {
		if e.Operation == terraformApply {
			continue
		}
		if op := operationName(e.Operation); !slices.Contains(ops, op) {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		return ""
	}
	return fmt.Sprintf("The workspace's state was written by %s %s %s.", strings.Join(ops, ", "), after, moved)
}

// operationName quotes the command that a history entry's operation
// names: "agentform apply" for the CLI's "apply".
func operationName(op string) string {
	if !strings.HasPrefix(op, "terraform ") {
		op = "agentform " + op
	}
	return strconv.Quote(op)
}

// ImportState implements resource.ResourceWithImportState: the import ID
// is the workspace directory, which must have been applied. An empty or
// blank ID is refused before anything is read: as a path it would name
// Terraform's working directory (or a directory of spaces).
func (r *buildResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if strings.TrimSpace(req.ID) == "" {
		resp.Diagnostics.AddError("Cannot Import Workspace",
			fmt.Sprintf("The import ID is the workspace directory to import, and %q names none. Give the directory that holds the *.acl files, absolute or relative to Terraform's working directory (\".\" for that directory itself): terraform import agentform_build.NAME DIR.", req.ID))
		return
	}
	prior, err := readApplied(req.ID, r.settings)
	if err == nil && prior.Serial == 0 {
		err = fmt.Errorf("%s has no agentform state (%s)", req.ID, filepath.Join(req.ID, state.DirName, state.FileName))
	}
	if err == nil {
		// The resource's matrix and artifacts are read from the artifact
		// files: with none left (a destroy removes them), the import would
		// give an empty resource.
		present := false
		for _, a := range appliedArtifacts(prior) {
			if _, statErr := os.Stat(artifactFile(req.ID, a.Path)); statErr == nil {
				present = true
				break
			}
		}
		if !present {
			err = fmt.Errorf("none of the artifacts the state of %s records is on disk (destroying the resource removes them)", req.ID)
		}
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot Import Workspace",
			fmt.Sprintf("Only a workspace that \"agentform apply\" or Terraform has applied can be imported; the import ID is its directory. Apply it first, or let Terraform create the resource.\n\n%s", err))
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("dir"), req, resp)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, []byte("true"))...)
}

// importedKey is the private state key that marks an object ImportState
// wrote and no Update has applied since: its triggers are null because an
// import cannot know them, not because the configuration had none (see
// triggersChanged). The first Update, or a Read of triggers in state,
// removes it.
const importedKey = "imported"

// isImported reports whether p carries importedKey.
func isImported(ctx context.Context, p privateData) (bool, diag.Diagnostics) {
	data, diags := p.GetKey(ctx, importedKey)
	return len(data) > 0, diags
}

// claimKey is the private state key under which an agentform_build
// records the workspace state's lineage and serial as it last applied or
// read them: its claim on the build that state records (see Delete).
const claimKey = "workspace_state"

// claim is the value stored under claimKey.
type claim struct {
	Lineage string `json:"lineage"`
	Serial  uint64 `json:"serial"`
}

// privateData is the private state of a resource object, as the
// framework's requests and responses carry it.
type privateData interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// setClaim records meta as the object's claim.
func setClaim(ctx context.Context, p privateData, meta state.Meta) diag.Diagnostics {
	data, err := json.Marshal(claim{Lineage: meta.Lineage, Serial: meta.Serial})
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Cannot Record Workspace State", err.Error())
		return diags
	}
	return p.SetKey(ctx, claimKey, data)
}

// getClaim returns the object's claim, or nil when it has none (an object
// that an earlier version of the provider wrote and never read since).
func getClaim(ctx context.Context, p privateData) (*claim, diag.Diagnostics) {
	data, diags := p.GetKey(ctx, claimKey)
	if diags.HasError() || len(data) == 0 {
		return nil, diags
	}
	var c claim
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, diags
	}
	return &c, diags
}

// artifactFile is the file of an artifact recorded at rel (relative to
// dir unless absolute).
func artifactFile(dir, rel string) string {
	if filepath.IsAbs(rel) {
		return filepath.FromSlash(rel)
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// modelArtifacts converts an artifacts attribute back into artifacts
// recorded relative to dir, as artifactsValue takes them: a path inside
// dir is made relative again, any other stays as it is.
func modelArtifacts(ctx context.Context, dir string, v types.Map, diags *diag.Diagnostics) map[string]state.Artifact {
	out := map[string]state.Artifact{}
	if v.IsNull() || v.IsUnknown() {
		return out
	}
	var models map[string]artifactModel
	if diags.Append(v.ElementsAs(ctx, &models, false)...); diags.HasError() {
		return out
	}
	for agent, a := range models {
		p := a.Path
		if rel, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(rel) {
			p = filepath.ToSlash(rel)
		}
		out[agent] = state.Artifact{Path: p, SHA256: a.SHA256}
	}
	return out
}

// recordedOutDir is the artifact directory of the artifacts state records,
// or the default when they do not share one.
func recordedOutDir(prior *planner.Applied) string {
	out := ""
	for _, a := range appliedArtifacts(prior) {
		d := filepath.Dir(filepath.FromSlash(a.Path))
		if out != "" && d != out {
			return apply.DefaultOutDir
		}
		out = d
	}
	if out == "" {
		return apply.DefaultOutDir
	}
	return out
}

// artifactsValue converts artifacts recorded relative to dir into the
// artifacts attribute.
func artifactsValue(ctx context.Context, dir string, arts map[string]state.Artifact, diags *diag.Diagnostics) types.Map {
	models := map[string]artifactModel{}
	for agent, a := range arts {
		models[agent] = artifactModel{Path: artifactFile(dir, a.Path), SHA256: hexDigest(a.SHA256)}
	}
	v, d := types.MapValueFrom(ctx, artifactType, models)
	diags.Append(d...)
	return v
}

// planCells lists plan's matrix sorted by agent then tool.
func planCells(plan *planner.Plan) []cellModel {
	var cells []cellModel
	for _, c := range matrixModels(plan) {
		cells = append(cells, cellModel{Agent: c.Agent, Tool: c.Tool, Decision: c.Decision})
	}
	sortCells(cells)
	return cells
}

// appliedCells lists the capability matrix as applied, sorted by agent
// then tool: one row per agent state records, one column per tool of the
// matrix. A cell is allow when state's matrix lists the tool for the
// agent. State records only the tools each agent may call, so the columns
// come from the artifacts on disk (onDisk: agent → the artifact with the
// digest of the file) that are still the bytes the last apply recorded:
// each carries the agent's whole row, and one with no cells says the
// matrix has no column (an apply removed every tool). An artifact removed
// or changed since says nothing; only when none is left are the columns
// those of the matrix Terraform last recorded (priorTools), so that a tool
// denied to every agent keeps its column. The tools state allows are
// columns either way.
func appliedCells(dir string, prior *planner.Applied, onDisk map[string]state.Artifact, priorTools []string) []cellModel {
	recorded := appliedArtifacts(prior)
	current := map[string]state.Artifact{}
	for agent, a := range onDisk {
		if r, ok := recorded[agent]; ok && hexDigest(r.SHA256) == hexDigest(a.SHA256) {
			current[agent] = a
		}
	}
	tools := map[string]bool{}
	for _, c := range artifactCells(dir, current) {
		tools[c.Tool] = true
	}
	if len(current) == 0 {
		for _, t := range priorTools {
			tools[t] = true
		}
	}
	for _, row := range prior.Matrix {
		for _, t := range row {
			tools[t] = true
		}
	}
	var cells []cellModel
	for _, r := range prior.Resources {
		if r.Type != "agent" {
			continue
		}
		for _, t := range sortedKeys(tools) {
			cells = append(cells, cellModel{Agent: r.Name, Tool: t, Decision: decision(slices.Contains(prior.Matrix[r.Name], t))})
		}
	}
	sortCells(cells)
	return cells
}

// matrixTools lists the tools of a capability_matrix value: none when it
// is null or unknown (an import).
func matrixTools(ctx context.Context, matrix types.List) []string {
	var cells []cellModel
	if matrix.IsNull() || matrix.IsUnknown() || matrix.ElementsAs(ctx, &cells, false).HasError() {
		return nil
	}
	var tools []string
	for _, c := range cells {
		tools = append(tools, c.Tool)
	}
	return tools
}

// artifactCells lists the matrix rows that the agents' artifacts (agent.json)
// carry, sorted by agent then tool; an artifact that cannot be read
// contributes no row.
func artifactCells(dir string, arts map[string]state.Artifact) []cellModel {
	var cells []cellModel
	for _, agent := range sortedKeys(arts) {
		data, err := artifact.ReadFile(artifactFile(dir, arts[agent].Path))
		if err != nil {
			continue
		}
		archive, err := artifact.Read(bytes.NewReader(data))
		if err != nil {
			continue
		}
		a, err := artifact.ParseAgent(archive.Files[artifact.AgentName])
		if err != nil {
			continue
		}
		for _, c := range a.Matrix {
			cells = append(cells, cellModel{Agent: agent, Tool: c.Tool, Decision: c.Decision})
		}
	}
	sortCells(cells)
	return cells
}

func sortCells(cells []cellModel) {
	sort.Slice(cells, func(i, j int) bool {
		return cells[i].Agent < cells[j].Agent || cells[i].Agent == cells[j].Agent && cells[i].Tool < cells[j].Tool
	})
}

func cellsValue(ctx context.Context, cells []cellModel, diags *diag.Diagnostics) types.List {
	if cells == nil {
		cells = []cellModel{}
	}
	return listValue(ctx, cellType, cells, diags)
}

// listValue converts a slice of models into a list of objects of type t.
func listValue[T any](ctx context.Context, t types.ObjectType, elems []T, diags *diag.Diagnostics) types.List {
	if elems == nil {
		elems = []T{}
	}
	v, d := types.ListValueFrom(ctx, t, elems)
	diags.Append(d...)
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
