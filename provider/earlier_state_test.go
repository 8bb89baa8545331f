package provider

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"go.etcd.io/bbolt"

	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
)

// recordAsEarlier rewrites the workspace state's record of every agent as
// an agentform that did not track attr recorded it: without attr, and
// with the fingerprint of the attributes left.
func recordAsEarlier(t *testing.T, dir, attr string) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, state.DirName, state.FileName), 0o600, nil)
	if err == nil {
		err = db.Update(func(tx *bbolt.Tx) error {
			b := tx.Bucket([]byte("resources"))
			edits := map[string][]byte{}
			err := b.ForEach(func(k, v []byte) error {
				var r state.Resource
				if err := json.Unmarshal(v, &r); err != nil || r.Type != "agent" {
					return err
				}
				if _, ok := r.Attributes[attr]; !ok {
					t.Fatalf("%s records no %s", r.Address, attr)
				}
				delete(r.Attributes, attr)
				fp, _ := json.Marshal(r.Attributes)
				r.Fingerprint = resolve.SHA256(fp)
				out, err := json.Marshal(r)
				edits[string(k)] = out
				return err
			})
			for k, v := range edits {
				if err == nil {
					err = b.Put([]byte(k), v)
				}
			}
			return err
		})
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestBuildResource_earlierState plans a workspace whose state an earlier
// agentform wrote, without the agents' workspace_references: the plan
// updates the build with every artifact's digest kept, the apply records
// it, and the next plan is empty.
func TestBuildResource_earlierState(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	config := buildConfig(dir, "")
	var assistant, researcher string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkDestroyed(dir, "dist"),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "sha256"), capture(&assistant)),
					statecheck.ExpectKnownValue(buildAddr, artifactAttr("researcher", "sha256"), capture(&researcher)),
				},
			},
			{
				PreConfig: func() { recordAsEarlier(t, dir, "workspace_references") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "sha256"), equals(&assistant)),
					plancheck.ExpectKnownValue(buildAddr, artifactAttr("researcher", "sha256"), equals(&researcher)),
				}},
				Check: checkFilesMatchState(dir),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

// TestBuildResource_earlierStateWarning: the update an earlier
// agentform's state plans changes no artifact, the lockfile or the
// matrix, so the plan says why it updates at all, naming the attributes
// the state did not record. An update that changes an artifact explains
// itself and gets no such warning.
func TestBuildResource_earlierStateWarning(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	created := createBuild(t, dir)
	recordAsEarlier(t, dir, "workspace_references")

	got := recordedAgainWarnings(t, created)
	want := "  ~ agent.assistant: workspace_references (not recorded before)\n  ~ agent.researcher: workspace_references (not recorded before)\n\n"
	if len(got) != 1 || !strings.Contains(got[0], want) || !strings.Contains(got[0], "usually because an earlier agentform") {
		t.Fatalf("got:\n%q\nwant:\none Build Recorded Again warning listing\n%q", got, want)
	}

	editFile(t, filepath.Join(dir, "agent.acl"), `"Counts words for users."`, `"Counts words."`)
	if got := recordedAgainWarnings(t, created); len(got) != 0 {
		t.Errorf("with a description changed\ngot:\n%q\nwant:\nno Build Recorded Again warning", got)
	}
}

// recordedAgainWarnings refreshes the object created and plans it as
// Terraform does with its configuration unchanged, and returns the
// details of the Build Recorded Again warnings.
func recordedAgainWarnings(t *testing.T, created fwresource.CreateResponse) []string {
	t.Helper()
	ctx := t.Context()
	read := fwresource.ReadResponse{State: created.State, Private: created.Private}
	newBuildResource().Read(ctx, fwresource.ReadRequest{State: created.State, Private: created.Private}, &read)
	if read.Diagnostics.HasError() {
		t.Fatalf("Read: %v", read.Diagnostics)
	}
	plan := tfsdk.Plan{Schema: read.State.Schema, Raw: read.State.Raw}
	req := fwresource.ModifyPlanRequest{Config: tfsdk.Config{Schema: plan.Schema, Raw: plan.Raw}, Plan: plan, State: read.State, Private: read.Private}
	resp := &fwresource.ModifyPlanResponse{Plan: plan, Private: read.Private}
	newBuildResource().(*buildResource).ModifyPlan(ctx, req, resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("ModifyPlan: %v", resp.Diagnostics)
	}
	var got []string
	for _, d := range resp.Diagnostics.Warnings() {
		if d.Summary() == "Build Recorded Again" {
			got = append(got, d.Detail())
		}
	}
	return got
}
