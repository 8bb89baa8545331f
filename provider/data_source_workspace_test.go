package provider

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

const workspaceAddr = "data.agentform_workspace.test"

func workspaceConfig(dir string) string {
	return providerConfig + fmt.Sprintf(`
data "agentform_workspace" "test" {
  dir = %s
}
`, hclString(dir))
}

// TestWorkspaceDataSource reads a three-agent workspace. The matrix lists
// agents then tools by name: assistant, ops, researcher ×
// a2a_research_{cancel_task,get_task,send,stream}, grep, word_count.
func TestWorkspaceDataSource(t *testing.T) {
	dir := workspace(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: workspaceConfig(dir),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(workspaceAddr, "agents.#", "3"),
				resource.TestCheckResourceAttr(workspaceAddr, "agents.2.name", "researcher"),
				resource.TestCheckResourceAttr(workspaceAddr, "agents.2.policy", "extensible"),
				resource.TestCheckResourceAttr(workspaceAddr, "agents.2.holds.#", "3"),
				resource.TestCheckResourceAttr(workspaceAddr, "agents.0.policy", "locked"),

				resource.TestCheckResourceAttr(workspaceAddr, "tools.#", "7"),
				resource.TestCheckTypeSetElemNestedAttrs(workspaceAddr, "tools.*", map[string]string{
					"name": "rm", "kind": "bash", "enabled": "false", "requires.0": "shell::write",
				}),
				resource.TestCheckTypeSetElemNestedAttrs(workspaceAddr, "tools.*", map[string]string{
					"name": "word_count", "kind": "javascript", "enabled": "true", "requires.0": "text::count",
				}),

				// 3 agents × 6 enabled tools; the disabled rm is no column.
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.#", "18"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.4.agent", "assistant"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.4.tool", "grep"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.4.decision", "deny"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.4.missing.0", "shell::read"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.5.tool", "word_count"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.5.decision", "allow"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.5.missing.#", "0"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.10.agent", "ops"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.10.tool", "grep"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.10.decision", "allow"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.11.decision", "deny"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.12.agent", "researcher"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.12.tool", "a2a_research_cancel_task"),
				resource.TestCheckResourceAttr(workspaceAddr, "matrix.12.decision", "allow"),

				resource.TestCheckResourceAttr(workspaceAddr, "denials.#", "10"),
				resource.TestCheckTypeSetElemNestedAttrs(workspaceAddr, "denials.*", map[string]string{
					"agent": "ops", "tool": "word_count", "missing.0": "text::count",
				}),
				// The audit's findings: the A2A card nobody pinned, each denial.
				resource.TestCheckTypeSetElemNestedAttrs(workspaceAddr, "findings.*", map[string]string{
					"rule_id": "AF201", "severity": "warning", "target": "tool.research",
				}),
				resource.TestCheckTypeSetElemNestedAttrs(workspaceAddr, "findings.*", map[string]string{
					"rule_id": "AF101", "severity": "note", "target": "agent.ops",
				}),
			),
		}},
	})
}

// TestWorkspaceDataSource_errors checks that a missing directory, a
// manifest that does not validate and a failed check are errors.
func TestWorkspaceDataSource_errors(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      workspaceConfig(filepath.Join(t.TempDir(), "missing")),
				ExpectError: regexp.MustCompile(`Cannot read workspace directory`),
			},
			{
				Config:      workspaceConfig(workspace(t, "invalid")),
				ExpectError: regexp.MustCompile(`(?s)Missing graph block.*Missing model block`),
			},
			{
				Config:      workspaceConfig(workspace(t, "failing_check")),
				ExpectError: regexp.MustCompile(`(?s)Check failed.*assistant must never reach the shell`),
			},
			{
				Config:      workspaceConfig(""),
				ExpectError: regexp.MustCompile(`must not be empty`),
			},
		},
	})
}

// TestWorkspaceDataSource_artifactWarnings reads an applied workspace with
// one artifact removed, as destroying agentform_build removes them, and
// one edited: only the edited one warns.
func TestWorkspaceDataSource_artifactWarnings(t *testing.T) {
	ctx := t.Context()
	dir := fixture(t, "TestBuildResource")
	applyRemoveOneEditOne(t, dir)
	src := newWorkspaceDataSource()
	var sch datasource.SchemaResponse
	src.Schema(ctx, datasource.SchemaRequest{}, &sch)
	config := tfsdk.State{Schema: sch.Schema, Raw: tftypes.NewValue(sch.Schema.Type().TerraformType(ctx), nil)}
	if diags := config.SetAttribute(ctx, path.Root("dir"), dir); diags.HasError() {
		t.Fatal(diags)
	}
	resp := datasource.ReadResponse{State: config}
	src.Read(ctx, datasource.ReadRequest{Config: tfsdk.Config{Schema: sch.Schema, Raw: config.Raw}}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("Read: %v", resp.Diagnostics)
	}
	var got []string
	for _, d := range resp.Diagnostics.Warnings() {
		if d.Summary() == "Artifact Changed Outside agentform" {
			got = append(got, d.Detail())
		}
	}
	want := []string{"The artifact of agent.assistant differs from what the last apply wrote. The next apply (agentform_build or \"agentform apply\") rebuilds it."}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}
