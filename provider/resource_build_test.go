package provider

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"go.etcd.io/bbolt"

	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/lockfile"
)

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

const buildAddr = "agentform_build.test"

// buildConfig is a configuration with one agentform_build of dir and the
// given extra attributes.
func buildConfig(dir, extra string) string {
	return providerConfig + fmt.Sprintf(`
resource "agentform_build" "test" {
  dir = %s
  %s
}
`, hclString(dir), extra)
}

func artifactAttr(agent, attr string) tfjsonpath.Path {
	return tfjsonpath.New("artifacts").AtMapKey(agent).AtMapKey(attr)
}

// capture stores a string attribute's value in *into and accepts it.
func capture(into *string) knownvalue.Check {
	return knownvalue.StringFunc(func(v string) error {
		*into = v
		return nil
	})
}

// differsFrom accepts a SHA-256 that is not *old.
func differsFrom(old *string) knownvalue.Check {
	return knownvalue.StringFunc(func(v string) error {
		if !hexSHA256.MatchString(v) || v == *old {
			return fmt.Errorf("got:\n%s\nwant:\na SHA-256 other than %s", v, *old)
		}
		return nil
	})
}

// equals accepts exactly *want, read when the check runs.
func equals(want *string) knownvalue.Check {
	return knownvalue.StringFunc(func(v string) error {
		if v != *want {
			return fmt.Errorf("got:\n%s\nwant:\n%s", v, *want)
		}
		return nil
	})
}

// checkFilesMatchState checks that every artifact and the lockfile on disk
// have the digests the resource's state records.
func checkFilesMatchState(dir string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs := s.RootModule().Resources[buildAddr]
		if rs == nil {
			return errors.New("agentform_build.test is not in state")
		}
		attrs := rs.Primary.Attributes
		for _, agent := range []string{"assistant", "researcher"} {
			path := attrs["artifacts."+agent+".path"]
			if want := filepath.Join(dir, "dist", agent+".agent.tgz"); path != want {
				return fmt.Errorf("artifact path of %s\ngot:\n%s\nwant:\n%s", agent, path, want)
			}
			if got := sha256File(path); got != attrs["artifacts."+agent+".sha256"] {
				return fmt.Errorf("sha256 of %s\ngot:\n%s\nwant:\n%s", path, got, attrs["artifacts."+agent+".sha256"])
			}
		}
		lock := filepath.Join(dir, lockfile.FileName)
		if got := sha256File(lock); got != attrs["lock_sha256"] {
			return fmt.Errorf("sha256 of %s\ngot:\n%s\nwant:\n%s", lock, got, attrs["lock_sha256"])
		}
		return nil
	}
}

func sha256File(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// checkDestroyed checks that destroying removed the artifacts and their
// directory, and left the workspace's state database and lockfile.
func checkDestroyed(dir, outDir string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, err := os.Stat(filepath.Join(dir, outDir)); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s after destroy\ngot:\nerror %v\nwant:\nno such directory", outDir, err)
		}
		for _, keep := range []string{filepath.Join(state.DirName, state.FileName), lockfile.FileName} {
			if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
				return fmt.Errorf("%s after destroy\ngot:\n%v\nwant:\nthe file kept", keep, err)
			}
		}
		return nil
	}
}

// TestBuildResource walks one workspace through Terraform's lifecycle:
// create, an empty plan, a tool source change, an artifact deleted outside
// Terraform, import and destroy.
func TestBuildResource(t *testing.T) {
	dir := workspace(t)
	config := buildConfig(dir, "")
	var assistant, researcher string

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkDestroyed(dir, "dist"),
		Steps: []resource.TestStep{
			{
				// Create: the plan already knows every digest.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "sha256"), knownvalue.StringRegexp(hexSHA256)),
					plancheck.ExpectKnownValue(buildAddr, tfjsonpath.New("lock_sha256"), knownvalue.StringRegexp(hexSHA256)),
					plancheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_matrix"), knownvalue.ListSizeExact(12)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "sha256"), capture(&assistant)),
					statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("id"), knownvalue.StringExact(dir)),
					statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("out_dir"), knownvalue.StringExact("dist")),
					statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_changes"), knownvalue.ListSizeExact(7)),
					// Agents, then tools, sorted: assistant's fifth cell is grep.
					statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_matrix").AtSliceIndex(4), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"agent": knownvalue.StringExact("assistant"), "tool": knownvalue.StringExact("grep"), "decision": knownvalue.StringExact("deny"),
					})),
					statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_matrix").AtSliceIndex(10), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"agent": knownvalue.StringExact("researcher"), "tool": knownvalue.StringExact("grep"), "decision": knownvalue.StringExact("allow"),
					})),
				},
				Check: checkFilesMatchState(dir),
			},
			{
				// Nothing changed: the plan is empty.
				Config:   config,
				PlanOnly: true,
			},
			{
				// A tool's source changes: the plan shows the new digests.
				PreConfig: func() {
					src := filepath.Join(dir, "tools", "word_count", "index.ts")
					data, err := os.ReadFile(src)
					if err == nil {
						err = os.WriteFile(src, append(data, "\nexport const version = 2;\n"...), 0o644)
					}
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "sha256"), differsFrom(&assistant)),
					plancheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_changes"), knownvalue.ListSizeExact(0)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(buildAddr, artifactAttr("researcher", "sha256"), capture(&researcher)),
				},
				Check: checkFilesMatchState(dir),
			},
			{
				// An artifact deleted outside Terraform is rebuilt, byte for
				// byte.
				PreConfig: func() {
					if err := os.Remove(filepath.Join(dir, "dist", "researcher.agent.tgz")); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(buildAddr, artifactAttr("researcher", "sha256"), equals(&researcher)),
				}},
				Check: checkFilesMatchState(dir),
			},
			{
				// Import by directory gives the same state.
				Config:            config,
				ResourceName:      buildAddr,
				ImportState:       true,
				ImportStateId:     dir,
				ImportStateVerify: true,
			},
			{
				// Destroying removes the artifacts; state and lockfile stay.
				Config:  config,
				Destroy: true,
			},
			{
				// Without artifacts the import would give an empty resource.
				Config:        config,
				ResourceName:  buildAddr,
				ImportState:   true,
				ImportStateId: dir,
				ExpectError:   regexp.MustCompile(`(?s)Cannot Import Workspace.*none of the artifacts`),
			},
		},
	})
}

// TestBuildResource_outDir changes out_dir and the lockfile settings of an
// applied workspace: the resource is replaced, the old artifacts go and
// the new directory gets all of them.
func TestBuildResource_outDir(t *testing.T) {
	dir := workspace(t)
	var assistant string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkDestroyed(dir, "build"),
		Steps: []resource.TestStep{
			{
				Config: buildConfig(dir, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "sha256"), capture(&assistant)),
				},
			},
			{
				Config: buildConfig(dir, `
  out_dir       = "build"
  lockfile_mode = "readonly"
  refresh       = false`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "path"), knownvalue.StringExact(filepath.Join(dir, "build", "assistant.agent.tgz"))),
					// Same inputs, same bytes.
					plancheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "sha256"), equals(&assistant)),
				}},
				Check: func(*terraform.State) error {
					if _, err := os.Stat(filepath.Join(dir, "dist")); !errors.Is(err, os.ErrNotExist) {
						return fmt.Errorf("dist after replacement\ngot:\nerror %v\nwant:\nno such directory", err)
					}
					for _, agent := range []string{"assistant", "researcher"} {
						if _, err := os.Stat(filepath.Join(dir, "build", agent+".agent.tgz")); err != nil {
							return fmt.Errorf("artifact of %s\ngot:\n%v\nwant:\nthe file in build/", agent, err)
						}
					}
					return nil
				},
			},
		},
	})
}

// TestBuildResource_errors checks that workspaces that cannot be applied
// fail the plan with the engine's diagnostics.
func TestBuildResource_errors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// It may be what another resource writes during apply.
				Config:      buildConfig(missing, ""),
				ExpectError: regexp.MustCompile(`(?s)Cannot read workspace directory.*name it in\s+triggers`),
			},
			{
				Config:      buildConfig(workspace(t, "invalid"), ""),
				ExpectError: regexp.MustCompile(`(?s)Missing graph block.*agent\.acl line 2`),
			},
			{
				Config:      buildConfig(workspace(t, "failing_check"), ""),
				ExpectError: regexp.MustCompile(`(?s)Check failed.*assistant must never reach the shell`),
			},
			{
				// On the attribute that makes the difference an error, in
				// its words rather than the CLI's flag.
				Config:      buildConfig(workspace(t, "unlocked"), `lockfile_mode = "readonly"`),
				ExpectError: regexp.MustCompile(`(?s)Lockfile out of date.*\d+:\s+lockfile_mode = "readonly"\s+With lockfile_mode = "readonly", tool\.word_count is not in`),
			},
			{
				Config: buildConfig(workspace(t, "mcp_unlocked"), `
  lockfile_mode = "readonly"
  refresh       = false`),
				ExpectError: regexp.MustCompile(`(?s)Lockfile out of date.*\d+:\s+lockfile_mode = "readonly"\s+With lockfile_mode = "readonly",\s+agentform.lock.hcl has no entry for\s+"search"`),
			},
			{
				Config:      buildConfig(workspace(t, "unlocked"), `lockfile_mode = "sometimes"`),
				ExpectError: regexp.MustCompile(`must be "update" or "readonly"`),
			},
			{
				// Inside a package the plan hashes: on out_dir, in its
				// name rather than the CLI's flag.
				Config:      buildConfig(fixture(t, "TestBuildResource"), `out_dir = "tools/word_count/out"`),
				ExpectError: regexp.MustCompile(`(?s)Artifact directory inside a source.*\d+:\s+out_dir = "tools/word_count/out"\s+The artifact directory\s+"tools/word_count/out" \(out_dir\) is inside the source\s+of tool.word_count`),
			},
		},
	})
}

// TestBuildResource_pathSpelling spells dir and out_dir of an applied
// workspace in other ways that name the same directories: nothing is
// replaced, nothing changes. (TestBuildResource_outDir moves to another
// directory.)
func TestBuildResource_pathSpelling(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	// The provider runs in the test process: a relative dir is relative
	// to its working directory.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkDestroyed(dir, "dist"),
		Steps: []resource.TestStep{
			{
				Config: buildConfig(dir, `out_dir = "dist"`),
			},
			{
				Config:   buildConfig(dir+"/", `out_dir = "./dist"`),
				PlanOnly: true,
			},
			{
				Config:   buildConfig(rel, `out_dir = "dist/"`),
				PlanOnly: true,
			},
			{
				Config:   buildConfig(filepath.Join(dir, "tools", ".."), fmt.Sprintf("out_dir = %s", hclString(filepath.Join(dir, "dist")))),
				PlanOnly: true,
			},
		},
	})
}

// TestBuildResource_importSpelling imports a workspace the CLI applied by
// another spelling of its directory than the configuration's: the plan
// after the import is empty.
func TestBuildResource_importSpelling(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	if res := applyWorkspace(t.Context(), dir, "dist", engineOptions{refresh: true}, nil); res.failure != nil || res.diags.HasErrors() || !res.applied {
		t.Fatalf("applying %s: %v %v", dir, res.failure, res.diags)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             buildConfig(dir, ""),
				ResourceName:       buildAddr,
				ImportState:        true,
				ImportStateId:      dir + "/./",
				ImportStatePersist: true,
			},
			{
				Config:   buildConfig(dir, ""),
				PlanOnly: true,
			},
		},
	})
}

// TestBuildResource_importBlankID imports with an empty or blank ID from
// inside an applied workspace: the ID names no directory, so the import
// is refused, rather than taking Terraform's working directory for it.
func TestBuildResource_importBlankID(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	applyLikeCLI(t, dir)
	t.Chdir(dir)
	s := buildSchema(t)
	for _, id := range []string{"", " ", "\t\n"} {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			ctx := t.Context()
			resp := &fwresource.ImportStateResponse{State: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
			newPrivate(&resp.Private)
			newBuildResource().(*buildResource).ImportState(ctx, fwresource.ImportStateRequest{ID: id}, resp)
			var got []string
			for _, d := range resp.Diagnostics.Errors() {
				got = append(got, d.Summary()+": "+d.Detail())
			}
			want := fmt.Sprintf("Cannot Import Workspace: The import ID is the workspace directory to import, and %q names none.", id)
			if len(got) != 1 || !strings.HasPrefix(got[0], want) {
				t.Fatalf("got:\n%q\nwant:\none error starting %q", got, want)
			}
			if !resp.State.Raw.IsNull() {
				t.Errorf("state after the refused import\ngot:\n%v\nwant:\nnull", resp.State.Raw)
			}
		})
	}
}

// applyLikeCLI applies dir as "agentform apply -auto-approve" does, with
// the engine the CLI and the provider share.
func applyLikeCLI(t *testing.T, dir string) {
	t.Helper()
	res := applyWorkspace(t.Context(), dir, "dist", engineOptions{refresh: true, operation: "apply"}, nil)
	if res.failure != nil || res.diags.HasErrors() || !res.applied {
		t.Fatalf("applying %s\ngot:\n%v %v (applied %v)\nwant:\nan apply", dir, res.failure, res.diags, res.applied)
	}
}

// editFile replaces old, which must occur in the file, by new.
func editFile(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s\ngot:\n%s\nwant:\na file containing %q", file, data, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBuildResource_destroyBroken breaks the manifest of an applied
// workspace. Planning the resource fails with the engine's error (a
// failing check is the gate a plan holds), which says how to destroy the
// build anyway (-refresh=false, which the test framework cannot pass:
// checked by hand); the failed apply wrote nothing, and once the manifest
// is mended the destroy removes the artifacts.
func TestBuildResource_destroyBroken(t *testing.T) {
	for _, tc := range []struct {
		name, appended string
		err            *regexp.Regexp
	}{
		{name: "syntax error", appended: "\ngarbage {\n", err: regexp.MustCompile(`Unclosed configuration block`)},
		{name: "failing check", appended: `
check "researcher_never_shells" {
  assert {
    condition     = !can_call("researcher", "grep")
    error_message = "researcher must never reach the shell"
  }
}
`, err: regexp.MustCompile(`(?s)Check failed.*researcher must never reach the shell`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixture(t, "TestBuildResource")
			manifest, err := os.ReadFile(filepath.Join(dir, "agent.acl"))
			if err != nil {
				t.Fatal(err)
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: buildConfig(dir, "")},
					{
						PreConfig: func() {
							f, err := os.OpenFile(filepath.Join(dir, "agent.acl"), os.O_APPEND|os.O_WRONLY, 0)
							if err == nil {
								_, err = f.WriteString(tc.appended)
								err = errors.Join(err, f.Close())
							}
							if err != nil {
								t.Fatal(err)
							}
						},
						Config:      buildConfig(dir, ""),
						ExpectError: tc.err,
					},
					{
						// The plan fails, and says how to destroy anyway.
						Config:      buildConfig(dir, ""),
						PlanOnly:    true,
						ExpectError: regexp.MustCompile(`terraform destroy\s+-refresh=false`),
					},
					{
						PreConfig: func() {
							// The failed apply wrote nothing.
							if prior, err := readApplied(dir, nil); err != nil || prior.Serial != 1 {
								t.Fatalf("workspace state after the failed apply\ngot:\n%v (error %v)\nwant:\nserial 1, the create's", prior, err)
							}
							if err := os.WriteFile(filepath.Join(dir, "agent.acl"), manifest, 0o644); err != nil {
								t.Fatal(err)
							}
						},
						Config:  buildConfig(dir, ""),
						Destroy: true,
						Check:   checkArtifactsRemoved(dir),
					},
				},
			})
		})
	}
}

// TestBuildResource_brokenFails plans an agentform_build of a workspace
// that cannot be planned: the engine's error is an error, which for an
// existing build says how to destroy it anyway.
func TestBuildResource_brokenFails(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	editFile(t, filepath.Join(dir, "agent.acl"), `check "assistant_never_shells" {`, `garbage {
check "assistant_never_shells" {`)
	errs := planDiags(t, dir, nil, true).Errors()
	if len(errs) != 1 || errs[0].Summary() != "Unclosed configuration block" || !strings.HasSuffix(errs[0].Detail(), destroyBrokenNote) {
		t.Fatalf("update\ngot:\n%v\nwant:\none Unclosed configuration block error ending %q", errs, destroyBrokenNote)
	}
	if !strings.Contains(errs[0].Detail(), "agent.acl line ") {
		t.Errorf("got:\n%s\nwant:\nthe manifest line of the error", errs[0].Detail())
	}
	if errs := planDiags(t, dir, nil, false).Errors(); len(errs) != 1 || errs[0].Summary() != "Unclosed configuration block" || strings.Contains(errs[0].Detail(), destroyBrokenNote) {
		t.Errorf("create\ngot:\n%v\nwant:\none Unclosed configuration block error, without the destroy note", errs)
	}

	// A state database that cannot be read is no broken workspace:
	// Read and Delete need it too, so it stays an error.
	corrupt := fixture(t, "TestBuildResource")
	if err := os.MkdirAll(filepath.Join(corrupt, state.DirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corrupt, state.DirName, state.FileName), []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := planDiags(t, corrupt, nil, true).Errors(); len(errs) != 1 || errs[0].Summary() != "Corrupt Workspace State" {
		t.Errorf("update with a corrupt state\ngot:\n%v\nwant:\none Corrupt Workspace State error", errs)
	}
}

// removeFiles removes each file, which must exist.
func removeFiles(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBuildResource_stateRemoved removes the workspace's state database
// behind Terraform's back. While an artifact the resource recorded is on
// disk, the resource stays: the plan rebuilds and records the build again,
// and a destroy removes the artifacts. With none left, the resource is
// gone and the plan creates it.
func TestBuildResource_stateRemoved(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	db := filepath.Join(dir, state.DirName, state.FileName)
	assistant := filepath.Join(dir, "dist", "assistant.agent.tgz")
	researcher := filepath.Join(dir, "dist", "researcher.agent.tgz")
	var digest string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: buildConfig(dir, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "sha256"), capture(&digest)),
				},
			},
			{
				// Same inputs, same bytes: only the record is missing.
				PreConfig: func() { removeFiles(t, db) },
				Config:    buildConfig(dir, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(buildAddr, artifactAttr("assistant", "sha256"), equals(&digest)),
				}},
				Check: resource.ComposeTestCheckFunc(checkFilesMatchState(dir), func(*terraform.State) error {
					if prior, err := readApplied(dir, nil); err != nil || len(appliedArtifacts(prior)) != 2 {
						return fmt.Errorf("workspace state after apply\ngot:\n%v (error %v)\nwant:\nboth artifacts recorded", prior, err)
					}
					return nil
				}),
			},
			{
				// Nothing the resource recorded is left: it is gone.
				PreConfig: func() { removeFiles(t, db, assistant, researcher) },
				Config:    buildConfig(dir, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionCreate),
				}},
				Check: checkFilesMatchState(dir),
			},
			{
				// Destroyed without state (the TestCase's CheckDestroy only
				// runs when a resource is left after the steps).
				PreConfig: func() { removeFiles(t, db) },
				Config:    buildConfig(dir, ""),
				Destroy:   true,
				Check:     checkArtifactsRemoved(dir),
			},
		},
	})
}

// checkArtifactsRemoved checks that dir's dist, with the artifacts in it,
// is gone, for a destroy step's Check. (Such a Check makes the step
// refresh before it plans the destroy.)
func checkArtifactsRemoved(dir string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, err := os.Stat(filepath.Join(dir, "dist")); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("dist after destroy\ngot:\nerror %v\nwant:\nno such directory", err)
		}
		return nil
	}
}

// TestBuildResource_cliApply revokes a grant with an apply outside
// Terraform: refreshing reads the new matrix, the next plan is empty, and
// destroying removes the artifacts the CLI wrote.
func TestBuildResource_cliApply(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	researcherGrep := func(decision string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_matrix").AtSliceIndex(10), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"agent": knownvalue.StringExact("researcher"), "tool": knownvalue.StringExact("grep"), "decision": knownvalue.StringExact(decision),
		}))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		// Destroying, after refreshing, removes the artifacts the CLI
		// built: the resource has read them.
		CheckDestroy: checkDestroyed(dir, "dist"),
		Steps: []resource.TestStep{
			{
				Config:            buildConfig(dir, ""),
				ConfigStateChecks: []statecheck.StateCheck{researcherGrep("allow")},
			},
			{
				// The refresh-only apply reads the revocation, and the
				// plan that follows it is empty.
				PreConfig: func() {
					editFile(t, filepath.Join(dir, "agent.acl"), `["text", "shell::read", "a2a::research"]`, `["text", "a2a::research"]`)
					applyLikeCLI(t, dir)
				},
				RefreshState: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(buildAddr, "capability_matrix.10.agent", "researcher"),
					resource.TestCheckResourceAttr(buildAddr, "capability_matrix.10.tool", "grep"),
					resource.TestCheckResourceAttr(buildAddr, "capability_matrix.10.decision", "deny"),
				),
			},
			{
				Config:            buildConfig(dir, ""),
				PlanOnly:          true,
				ConfigStateChecks: []statecheck.StateCheck{researcherGrep("deny")},
			},
		},
	})
}

// TestBuildResource_createBeforeDestroy replaces the resource with
// create_before_destroy: the new object builds the workspace (here: has
// nothing to rebuild), then the old one is destroyed, and the artifacts
// both recorded at the same paths stay.
func TestBuildResource_createBeforeDestroy(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	config := buildConfig(dir, `
  lifecycle {
    create_before_destroy = true
  }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkDestroyed(dir, "dist"),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  checkFilesMatchState(dir),
			},
			{
				Config: config,
				Taint:  []string{buildAddr},
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionCreateBeforeDestroy),
				}},
				Check: checkFilesMatchState(dir),
			},
			{
				// And the workspace is as applied.
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

// TestBuildResource_triggers rewrites the workspace's manifest during the
// apply, from a terraform_data whose id is in triggers: the plan leaves
// the computed attributes unknown, and apply records the new build.
func TestBuildResource_triggers(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	next := revokedManifest(t, dir)
	config := func(generation, command string) string {
		return providerConfig + fmt.Sprintf(`
resource "terraform_data" "generate" {
  triggers_replace = %s

  provisioner "local-exec" {
    command = %s
  }
}

resource "agentform_build" "test" {
  dir      = %s
  triggers = { manifest = terraform_data.generate.id }
}
`, hclString(generation), hclString(command), hclString(dir))
	}
	researcherGrep := func(decision string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_matrix").AtSliceIndex(10), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"agent": knownvalue.StringExact("researcher"), "tool": knownvalue.StringExact("grep"), "decision": knownvalue.StringExact(decision),
		}))
	}
	rewrite := fmt.Sprintf("cp %s %s", next, filepath.Join(dir, "agent.acl"))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("1", "true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(buildAddr, tfjsonpath.New("fingerprint")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{researcherGrep("allow")},
				Check:             checkFilesMatchState(dir),
			},
			{
				Config: config("2", rewrite),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(buildAddr, tfjsonpath.New("artifacts")),
					plancheck.ExpectUnknownValue(buildAddr, tfjsonpath.New("capability_matrix")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{researcherGrep("deny")},
				Check:             checkFilesMatchState(dir),
			},
			{
				Config:   config("2", rewrite),
				PlanOnly: true,
			},
		},
	})
}

// buildSchema is agentform_build's schema.
func buildSchema(t *testing.T) schema.Schema {
	t.Helper()
	var resp fwresource.SchemaResponse
	newBuildResource().Schema(t.Context(), fwresource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("schema: %v", resp.Diagnostics)
	}
	return resp.Schema
}

// planCreate runs ModifyPlan for a new agentform_build of dir, as
// Terraform's plan does, and returns the planned object and the
// diagnostics, which have no error.
func planCreate(t *testing.T, dir string) (tfsdk.Plan, diag.Diagnostics) {
	t.Helper()
	ctx := t.Context()
	s := buildSchema(t)
	m := buildModel{
		ID: types.StringUnknown(), Dir: types.StringValue(dir), OutDir: types.StringValue("dist"),
		LockfileMode: types.StringValue(lockfileUpdate), Refresh: types.BoolValue(true), Triggers: types.MapNull(types.StringType),
	}
	m.setUnknown()
	m.ID = types.StringUnknown()
	plan := tfsdk.Plan{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}
	if diags := plan.Set(ctx, &m); diags.HasError() {
		t.Fatalf("plan: %v", diags)
	}
	req := fwresource.ModifyPlanRequest{
		Config: tfsdk.Config{Schema: s, Raw: plan.Raw},
		Plan:   plan,
		State:  tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)},
	}
	resp := &fwresource.ModifyPlanResponse{Plan: plan}
	newBuildResource().(*buildResource).ModifyPlan(ctx, req, resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("ModifyPlan: %v", resp.Diagnostics)
	}
	return resp.Plan, resp.Diagnostics
}

// TestBuildResource_changedSincePlan edits the manifest between the plan
// and the create: apply writes nothing and says what changed, instead of
// recording a result that differs from the plan.
func TestBuildResource_changedSincePlan(t *testing.T) {
	ctx := t.Context()
	dir := fixture(t, "TestBuildResource")
	plan, _ := planCreate(t, dir)
	editFile(t, filepath.Join(dir, "agent.acl"), `"Counts words for users."`, `"Counts words."`)

	s := buildSchema(t)
	resp := &fwresource.CreateResponse{State: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
	newBuildResource().Create(ctx, fwresource.CreateRequest{Config: tfsdk.Config{Schema: s, Raw: plan.Raw}, Plan: plan}, resp)
	var got []string
	for _, d := range resp.Diagnostics.Errors() {
		got = append(got, d.Summary()+": "+d.Detail())
	}
	if len(got) != 1 || !strings.Contains(got[0], "Workspace Changed Since Plan: The workspace in "+dir+" is no longer what Terraform planned for this resource: applying it now would record different values for fingerprint. Nothing was written.") {
		t.Fatalf("got:\n%q\nwant:\none Workspace Changed Since Plan error naming fingerprint", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "dist")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dist after the refused apply\ngot:\n%v\nwant:\nno such directory", err)
	}
	if prior, err := readApplied(dir, nil); err != nil || prior.Serial != 0 {
		t.Errorf("state after the refused apply\ngot:\n%v (error %v)\nwant:\nno apply recorded", prior, err)
	}
}

// TestBuildResource_createAfterDestroy plans a new agentform_build of a
// workspace whose artifacts a destroy removed: no warning, since they are
// not missing behind Terraform's back. An artifact changed by hand still
// warns.
func TestBuildResource_createAfterDestroy(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	applyRemoveOneEditOne(t, dir)
	_, diags := planCreate(t, dir)
	var got []string
	for _, d := range diags.Warnings() {
		if strings.HasPrefix(d.Summary(), "Artifact") {
			got = append(got, d.Summary()+": "+d.Detail())
		}
	}
	want := []string{"Artifact Changed Outside agentform: The artifact of agent.assistant differs from what the workspace's last apply wrote; creating the resource rebuilds it."}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

// TestBuildResource_refreshKeepsColumns refreshes a workspace whose
// artifacts were removed outside Terraform: the matrix keeps the column of
// a tool that no agent may call (state records only allowed tools), so a
// can_call on it still answers, and the plan shows the drift.
func TestBuildResource_refreshKeepsColumns(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	f, err := os.OpenFile(filepath.Join(dir, "agent.acl"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(`
tool "nobody" {
  kind         = "bash"
  description  = "Needs a capability no agent holds."
  commands     = ["cat"]
  capabilities = ["admin"]

  env {
    kind = "empty"
  }
}
`)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
	config := buildConfig(dir, "") + `
output "nobody" {
  value = provider::agentform::can_call(agentform_build.test.capability_matrix, "assistant", "nobody")
}
`
	nobody := statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_matrix").AtSliceIndex(5), knownvalue.ObjectExact(map[string]knownvalue.Check{
		"agent": knownvalue.StringExact("assistant"), "tool": knownvalue.StringExact("nobody"), "decision": knownvalue.StringExact("deny"),
	}))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:            config,
				ConfigStateChecks: []statecheck.StateCheck{nobody, statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_matrix"), knownvalue.ListSizeExact(14))},
			},
			{
				PreConfig: func() {
					for _, agent := range []string{"assistant", "researcher"} {
						if err := os.Remove(filepath.Join(dir, "dist", agent+".agent.tgz")); err != nil {
							t.Fatal(err)
						}
					}
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true, // the artifacts are rebuilt
				Check:              resource.TestCheckResourceAttr(buildAddr, "capability_matrix.#", "14"),
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{nobody},
			},
		},
	})
}

// newPrivate sets *field, a resource request's or response's private
// state, to an empty one, as the framework does before calling the
// resource.
func newPrivate(field any) {
	v := reflect.ValueOf(field).Elem()
	v.Set(reflect.New(v.Type().Elem()))
}

// createBuild plans and creates an agentform_build of dir as Terraform
// does and returns its state and private state.
func createBuild(t *testing.T, dir string) fwresource.CreateResponse {
	t.Helper()
	ctx := t.Context()
	plan, _ := planCreate(t, dir)
	s := buildSchema(t)
	resp := fwresource.CreateResponse{State: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
	newPrivate(&resp.Private)
	newBuildResource().Create(ctx, fwresource.CreateRequest{Config: tfsdk.Config{Schema: s, Raw: plan.Raw}, Plan: plan}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("Create: %v", resp.Diagnostics)
	}
	return resp
}

// deleteBuild destroys the object created, with the private state
// Terraform passes (nil for none), and returns the diagnostics.
func deleteBuild(t *testing.T, created fwresource.CreateResponse, withPrivate bool) diag.Diagnostics {
	t.Helper()
	req := fwresource.DeleteRequest{State: created.State}
	if withPrivate {
		req.Private = created.Private
	}
	resp := fwresource.DeleteResponse{State: created.State, Private: req.Private}
	newBuildResource().Delete(t.Context(), req, &resp)
	return resp.Diagnostics
}

// TestBuildResource_deleteClaims destroys objects with and without a claim
// on the workspace state: an object without one (written by a provider
// from before claims) removes its artifacts; one whose claim a replacing
// object superseded keeps them silently; one that an "agentform apply"
// superseded keeps them and says so.
func TestBuildResource_deleteClaims(t *testing.T) {
	artifactsLeft := func(dir string) int {
		files, _ := filepath.Glob(filepath.Join(dir, "dist", "*.agent.tgz"))
		return len(files)
	}
	t.Run("no claim", func(t *testing.T) {
		dir := fixture(t, "TestBuildResource")
		created := createBuild(t, dir)
		if diags := deleteBuild(t, created, false); len(diags) > 0 {
			t.Errorf("got:\n%v\nwant:\nno diagnostics", diags)
		}
		if _, err := os.Stat(filepath.Join(dir, "dist")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("dist after destroy\ngot:\nerror %v\nwant:\nno such directory", err)
		}
	})
	// Without a claim, the replacing object's Create either only claimed
	// the build or rebuilt some of it: either way the build is not the
	// old object's, and its artifacts stay.
	t.Run("no claim, replaced", func(t *testing.T) {
		dir := fixture(t, "TestBuildResource")
		old := createBuild(t, dir)
		createBuild(t, dir)
		if diags := deleteBuild(t, old, false); len(diags) > 0 {
			t.Errorf("got:\n%v\nwant:\nno diagnostics", diags)
		}
		if n := artifactsLeft(dir); n != 2 {
			t.Errorf("artifacts after destroying the replaced object\ngot:\n%d\nwant:\n2", n)
		}
	})
	t.Run("no claim, replaced after an edit", func(t *testing.T) {
		dir := fixture(t, "TestBuildResource")
		old := createBuild(t, dir)
		editFile(t, filepath.Join(dir, "agent.acl"), `"Counts words for users."`, `"Counts words."`)
		createBuild(t, dir)
		if diags := deleteBuild(t, old, false); len(diags) > 0 {
			t.Errorf("got:\n%v\nwant:\nno diagnostics", diags)
		}
		if n := artifactsLeft(dir); n != 2 {
			t.Errorf("artifacts after destroying the replaced object\ngot:\n%d\nwant:\n2", n)
		}
	})
	t.Run("no claim, agentform apply", func(t *testing.T) {
		dir := fixture(t, "TestBuildResource")
		old := createBuild(t, dir)
		editFile(t, filepath.Join(dir, "agent.acl"), `"Counts words for users."`, `"Counts words."`)
		applyLikeCLI(t, dir)
		var got []string
		for _, d := range deleteBuild(t, old, false) {
			got = append(got, d.Summary())
		}
		if !slices.Equal(got, []string{"Artifacts Kept"}) {
			t.Errorf("got:\n%q\nwant:\none Artifacts Kept warning", got)
		}
		if n := artifactsLeft(dir); n != 2 {
			t.Errorf("artifacts after destroy\ngot:\n%d\nwant:\n2", n)
		}
	})
	t.Run("replaced", func(t *testing.T) {
		dir := fixture(t, "TestBuildResource")
		old := createBuild(t, dir)
		createBuild(t, dir) // create_before_destroy: the new object first
		if diags := deleteBuild(t, old, true); len(diags) > 0 {
			t.Errorf("got:\n%v\nwant:\nno diagnostics", diags)
		}
		if n := artifactsLeft(dir); n != 2 {
			t.Errorf("artifacts after destroying the replaced object\ngot:\n%d\nwant:\n2", n)
		}
	})
	t.Run("agentform apply", func(t *testing.T) {
		dir := fixture(t, "TestBuildResource")
		created := createBuild(t, dir)
		editFile(t, filepath.Join(dir, "agent.acl"), `"Counts words for users."`, `"Counts words."`)
		applyLikeCLI(t, dir)
		diags := deleteBuild(t, created, true)
		var got []string
		for _, d := range diags {
			got = append(got, d.Summary()+": "+d.Detail())
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], `Artifacts Kept: The workspace's state was written by "agentform apply" after this resource last applied or read it (its serial went from 1 to 2). It records these artifacts`) {
			t.Errorf("got:\n%q\nwant:\none Artifacts Kept warning naming agentform apply", got)
		}
		if n := artifactsLeft(dir); n != 2 {
			t.Errorf("artifacts after destroy\ngot:\n%d\nwant:\n2", n)
		}
	})
}

// TestBuildResource_symlinkOutDir names the artifact directory through a
// symbolic link to it: the same directory, so nothing is replaced (with
// create_before_destroy, a replacement would have the old object remove
// the files the new one recorded under the link's name).
func TestBuildResource_symlinkOutDir(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	config := func(out string) string {
		return buildConfig(dir, fmt.Sprintf(`out_dir = %s
  lifecycle {
    create_before_destroy = true
  }`, hclString(out)))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkDestroyed(dir, "dist"),
		Steps: []resource.TestStep{
			{
				Config: config("dist"),
			},
			{
				PreConfig: func() {
					if err := os.Symlink("dist", filepath.Join(dir, "distlink")); err != nil {
						t.Fatal(err)
					}
				},
				Config: config("distlink"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: checkFilesMatchState(dir),
			},
		},
	})
}

// TestBuildResource_symlinkOutDirReplaced replaces, with
// create_before_destroy, a resource whose out_dir is a symbolic link: the
// old object's destroy leaves the link, through which the new object
// recorded its artifacts.
func TestBuildResource_symlinkOutDirReplaced(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	if err := os.Mkdir(filepath.Join(dir, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dist", filepath.Join(dir, "distlink")); err != nil {
		t.Fatal(err)
	}
	config := buildConfig(dir, `out_dir = "distlink"
  lifecycle {
    create_before_destroy = true
  }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
			},
			{
				Config: config,
				Taint:  []string{buildAddr},
				Check: func(*terraform.State) error {
					for _, agent := range []string{"assistant", "researcher"} {
						if _, err := os.Stat(filepath.Join(dir, "distlink", agent+".agent.tgz")); err != nil {
							return fmt.Errorf("artifact of %s after the replacement\ngot:\n%v\nwant:\nthe file in distlink/", agent, err)
						}
					}
					return nil
				},
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

// TestBuildResource_importTriggers imports a workspace into a resource
// configured with triggers: state has none, and values known at plan
// are no rewrite, so the plan after the import reads the workspace and
// knows every attribute.
func TestBuildResource_importTriggers(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	applyLikeCLI(t, dir)
	config := buildConfig(dir, `triggers = { manifest = "1" }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             config,
				ResourceName:       buildAddr,
				ImportState:        true,
				ImportStateId:      dir,
				ImportStatePersist: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(buildAddr, tfjsonpath.New("fingerprint"), knownvalue.StringRegexp(hexSHA256)),
					plancheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_matrix"), knownvalue.ListSizeExact(12)),
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

// TestBuildResource_triggersAdded adds triggers, known at plan time, to a
// resource created without any, in the apply that rewrites its manifest:
// the plan leaves the computed attributes unknown, as for changed
// triggers, and apply records the new build (planning the workspace as it
// was would make Terraform stop on an inconsistent final plan).
func TestBuildResource_triggersAdded(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	next := revokedManifest(t, dir)
	config := func(generation, command, triggers string) string {
		return providerConfig + fmt.Sprintf(`
resource "terraform_data" "generate" {
  triggers_replace = %s

  provisioner "local-exec" {
    command = %s
  }
}

resource "agentform_build" "test" {
  dir        = %s
  triggers   = %s
  depends_on = [terraform_data.generate]
}
`, hclString(generation), hclString(command), hclString(dir), triggers)
	}
	rewrite := fmt.Sprintf("cp %s %s", next, filepath.Join(dir, "agent.acl"))
	withTriggers := config("2", rewrite, fmt.Sprintf("{ manifest = filesha256(%s) }", hclString(next)))
	researcherGrep := func(decision string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(buildAddr, tfjsonpath.New("capability_matrix").AtSliceIndex(10), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"agent": knownvalue.StringExact("researcher"), "tool": knownvalue.StringExact("grep"), "decision": knownvalue.StringExact(decision),
		}))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:            config("1", "true", "null"),
				ConfigStateChecks: []statecheck.StateCheck{researcherGrep("allow")},
			},
			{
				Config: withTriggers,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(buildAddr, tfjsonpath.New("capability_matrix")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{researcherGrep("deny")},
				Check:             checkFilesMatchState(dir),
			},
			{
				Config:   withTriggers,
				PlanOnly: true,
			},
		},
	})
}

// TestBuildResource_cliApplyRemovesTools removes every tool with an apply
// outside Terraform: refreshing reads the artifacts the CLI wrote, which
// carry no column, so the matrix is empty, the next plan is empty, and
// can_call on a removed tool is an error rather than a deny.
func TestBuildResource_cliApplyRemovesTools(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	config := buildConfig(dir, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  resource.TestCheckResourceAttr(buildAddr, "capability_matrix.#", "12"),
			},
			{
				PreConfig: func() {
					manifest := filepath.Join(dir, "agent.acl")
					data, err := os.ReadFile(manifest)
					if err != nil {
						t.Fatal(err)
					}
					agents, _, ok := strings.Cut(string(data), `tool "word_count" {`)
					if !ok {
						t.Fatalf("%s\ngot:\n%s\nwant:\na manifest with tool \"word_count\"", manifest, data)
					}
					if err := os.WriteFile(manifest, []byte(agents), 0o644); err != nil {
						t.Fatal(err)
					}
					applyLikeCLI(t, dir)
				},
				RefreshState: true,
				Check:        resource.TestCheckResourceAttr(buildAddr, "capability_matrix.#", "0"),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
			{
				Config: config + `
output "grep" {
  value = provider::agentform::can_call(agentform_build.test.capability_matrix, "researcher", "grep")
}
`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`There is no agent named "researcher" in\s+the matrix`),
			},
		},
	})
}

// editHistory runs edit on the history bucket of dir's state database.
func editHistory(t *testing.T, dir string, edit func(*bbolt.Bucket) error) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, state.DirName, state.FileName), 0o600, nil)
	if err == nil {
		err = db.Update(func(tx *bbolt.Tx) error { return edit(tx.Bucket([]byte("history"))) })
		err = errors.Join(err, db.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// serialKey is a history key, as the state package writes it.
func serialKey(serial uint64) []byte { return binary.BigEndian.AppendUint64(nil, serial) }

// TestBuildResource_deleteHistory destroys an object whose claim the state
// has moved past, with a history that does not say by what: a destroy
// reads only the entries after the claim, never fails on the history, and
// warns when the history cannot say what wrote the state.
func TestBuildResource_deleteHistory(t *testing.T) {
	warnings := func(t *testing.T, diags diag.Diagnostics) []string {
		if diags.HasError() {
			t.Fatalf("got:\n%v\nwant:\nno error", diags)
		}
		var got []string
		for _, d := range diags {
			got = append(got, d.Summary()+": "+d.Detail())
		}
		return got
	}
	artifactsLeft := func(dir string) int {
		files, _ := filepath.Glob(filepath.Join(dir, "dist", "*.agent.tgz"))
		return len(files)
	}
	for _, tc := range []struct {
		name string
		// setup returns the object to destroy.
		setup func(t *testing.T, dir string) fwresource.CreateResponse
		want  string
	}{
		{
			name: "damaged entry before the claim",
			setup: func(t *testing.T, dir string) fwresource.CreateResponse {
				applyLikeCLI(t, dir)
				created := createBuild(t, dir)
				editFile(t, filepath.Join(dir, "agent.acl"), `"Counts words for users."`, `"Counts words."`)
				applyLikeCLI(t, dir)
				editHistory(t, dir, func(b *bbolt.Bucket) error { return b.Put(serialKey(1), []byte("{")) })
				return created
			},
			want: `Artifacts Kept: The workspace's state was written by "agentform apply" after this resource last applied or read it (its serial went from 2 to 3).`,
		},
		{
			name: "damaged entry after the claim",
			setup: func(t *testing.T, dir string) fwresource.CreateResponse {
				created := createBuild(t, dir)
				editFile(t, filepath.Join(dir, "agent.acl"), `"Counts words for users."`, `"Counts words."`)
				applyLikeCLI(t, dir)
				editHistory(t, dir, func(b *bbolt.Bucket) error { return b.Put(serialKey(2), []byte("{")) })
				return created
			},
			want: `Artifacts Kept: The workspace's state was written after this resource last applied or read it (its serial went from 1 to 2), but its history could not be read, so what wrote it is unknown`,
		},
		{
			name: "pruned history",
			setup: func(t *testing.T, dir string) fwresource.CreateResponse {
				created := createBuild(t, dir)
				editFile(t, filepath.Join(dir, "agent.acl"), `"Counts words for users."`, `"Counts words."`)
				applyLikeCLI(t, dir)
				editHistory(t, dir, func(b *bbolt.Bucket) error { return b.Delete(serialKey(2)) })
				return created
			},
			want: `Artifacts Kept: The workspace's state was written after this resource last applied or read it (its serial went from 1 to 2), but its history records no write after serial 1 (it was pruned or removed), so what wrote it is unknown.`,
		},
		{
			name: "restored older state",
			setup: func(t *testing.T, dir string) fwresource.CreateResponse {
				applyLikeCLI(t, dir)
				db := filepath.Join(dir, state.DirName, state.FileName)
				saved, err := os.ReadFile(db)
				if err != nil {
					t.Fatal(err)
				}
				created := createBuild(t, dir)
				if err := os.WriteFile(db, saved, 0o600); err != nil {
					t.Fatal(err)
				}
				return created
			},
			want: `Artifacts Kept: The workspace's state is older than when this resource last applied or read it (its serial went back from 2 to 1): it was restored or replaced.`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixture(t, "TestBuildResource")
			got := warnings(t, deleteBuild(t, tc.setup(t, dir), true))
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("got:\n%q\nwant:\none warning starting %q", got, tc.want)
			}
			if n := artifactsLeft(dir); n != 2 {
				t.Errorf("artifacts after destroy\ngot:\n%d\nwant:\n2", n)
			}
		})
	}
}

// TestBuildResource_symlinkDirOutDir names the workspace through a
// symbolic link and the artifact directory relative to it with "..": the
// build joins them as written (link/../shared is beside the link), so
// naming the directory beside the link's target is another directory and
// replaces the resource.
func TestBuildResource_symlinkDirOutDir(t *testing.T) {
	ws := fixture(t, "TestBuildResource")
	a := t.TempDir()
	link := filepath.Join(a, "wslink")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(filepath.Dir(ws), "shared")
	artifactsIn := func(out string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for _, agent := range []string{"assistant", "researcher"} {
				if _, err := os.Stat(filepath.Join(out, agent+".agent.tgz")); err != nil {
					return fmt.Errorf("artifact of %s\ngot:\n%v\nwant:\nthe file in %s", agent, err, out)
				}
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: buildConfig(link, `out_dir = "../shared"`),
				Check:  artifactsIn(filepath.Join(a, "shared")),
			},
			{
				Config: buildConfig(link, fmt.Sprintf("out_dir = %s", hclString(beside))),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(buildAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: artifactsIn(beside),
			},
		},
	})
}

// planDiags runs ModifyPlan for an agentform_build of dir with triggers,
// as a create, or as an update of an object with the same configuration
// when update is set, and returns the diagnostics.
func planDiags(t *testing.T, dir string, triggers map[string]string, update bool) diag.Diagnostics {
	t.Helper()
	ctx := t.Context()
	s := buildSchema(t)
	tv := types.MapNull(types.StringType)
	if triggers != nil {
		var diags diag.Diagnostics
		if tv, diags = types.MapValueFrom(ctx, types.StringType, triggers); diags.HasError() {
			t.Fatal(diags)
		}
	}
	m := buildModel{
		ID: types.StringValue(dir), Dir: types.StringValue(dir), OutDir: types.StringValue("dist"),
		LockfileMode: types.StringValue(lockfileUpdate), Refresh: types.BoolValue(true), Triggers: tv,
	}
	m.setUnknown()
	null := tftypes.NewValue(s.Type().TerraformType(ctx), nil)
	plan := tfsdk.Plan{Schema: s, Raw: null}
	if diags := plan.Set(ctx, &m); diags.HasError() {
		t.Fatalf("plan: %v", diags)
	}
	prior := tfsdk.State{Schema: s, Raw: null}
	if update {
		m.Artifacts = types.MapNull(artifactType)
		m.LockSHA256, m.Fingerprint = types.StringNull(), types.StringNull()
		m.CapabilityMatrix, m.CapabilityChanges = types.ListNull(cellType), types.ListNull(changeType)
		if diags := prior.Set(ctx, &m); diags.HasError() {
			t.Fatalf("state: %v", diags)
		}
	}
	req := fwresource.ModifyPlanRequest{Config: tfsdk.Config{Schema: s, Raw: plan.Raw}, Plan: plan, State: prior}
	newPrivate(&req.Private)
	resp := &fwresource.ModifyPlanResponse{Plan: plan, Private: req.Private}
	newBuildResource().(*buildResource).ModifyPlan(ctx, req, resp)
	return resp.Diagnostics
}

// TestBuildResource_triggersHint checks that a plan's error for a missing
// workspace names triggers only when they could help: the resource has
// none and the directory is missing or holds no manifest. It never gives
// the CLI's advice (-chdir).
func TestBuildResource_triggersHint(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(t.TempDir(), "agent.acl")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		dir      string
		triggers map[string]string
		update   bool
		summary  string
		hint     bool
	}{
		{name: "missing", dir: filepath.Join(empty, "missing"), summary: "Cannot read workspace directory", hint: true},
		{name: "no manifest", dir: empty, summary: "No manifest files", hint: true},
		{name: "no manifest, triggers set", dir: empty, triggers: map[string]string{"manifest": "1"}, update: true, summary: "No manifest files"},
		{name: "a file", dir: file, summary: "Cannot read workspace directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := planDiags(t, tc.dir, tc.triggers, tc.update)
			errs := diags.Errors()
			if len(errs) != 1 || errs[0].Summary() != tc.summary {
				t.Fatalf("got:\n%v\nwant:\none %s error", diags, tc.summary)
			}
			// An existing object's error says how to destroy it anyway
			// (planFailed).
			detail := errs[0].Detail()
			if got := strings.HasSuffix(detail, destroyBrokenNote); got != tc.update {
				t.Errorf("destroy note in\n%s\ngot:\n%v\nwant:\n%v", detail, got, tc.update)
			}
			if got := strings.Contains(detail, triggersHint); got != tc.hint {
				t.Errorf("triggers hint in\n%s\ngot:\n%v\nwant:\n%v", detail, got, tc.hint)
			}
			if strings.Contains(detail, "-chdir") {
				t.Errorf("got:\n%s\nwant:\nno advice for the CLI", detail)
			}
		})
	}
}

// revokedManifest writes, outside the workspace dir, its agent.acl with the
// assistant's "shell::read" revoked, for a step that copies it in during
// an apply, and returns its path.
func revokedManifest(t *testing.T, dir string) string {
	t.Helper()
	next := filepath.Join(t.TempDir(), "agent.acl")
	data, err := os.ReadFile(filepath.Join(dir, "agent.acl"))
	if err != nil {
		t.Fatal(err)
	}
	revoked := strings.Replace(string(data), `["text", "shell::read", "a2a::research"]`, `["text", "a2a::research"]`, 1)
	if err := os.WriteFile(next, []byte(revoked), 0o644); err != nil {
		t.Fatal(err)
	}
	return next
}

// applyRemoveOneEditOne applies dir as the CLI does, then removes the
// researcher's artifact (as a destroy does) and overwrites the
// assistant's (as a hand edit does).
func applyRemoveOneEditOne(t *testing.T, dir string) {
	t.Helper()
	applyLikeCLI(t, dir)
	if err := os.Remove(filepath.Join(dir, "dist", "researcher.agent.tgz")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dist", "assistant.agent.tgz"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBuildResource_destroyKeepsChangedArtifact: destroy removes the
// artifacts the resource built, never a file written at one's path since
// (a user's own file there is kept, with a warning).
func TestBuildResource_destroyKeepsChangedArtifact(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	config := buildConfig(dir, "")
	mine := filepath.Join(dir, "dist", "researcher.agent.tgz")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					if err := os.WriteFile(mine, []byte("my own file\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				},
				Config:  config,
				Destroy: true,
			},
		},
	})
	if b, err := os.ReadFile(mine); err != nil || string(b) != "my own file\n" {
		t.Errorf("%s after destroy\ngot:  %q, %v\nwant: the user's file kept", mine, b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dist", "assistant.agent.tgz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("assistant.agent.tgz after destroy\ngot:  %v\nwant: removed", err)
	}
}
