package provider

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/agentform/agentform/internal/state"
)

// TestMain makes "go test ./provider/" run the acceptance tests without
// any setup, and keeps them away from the user's Terraform configuration:
//
//   - TF_ACC=1 unless set, so resource.Test does not skip;
//   - TF_ACC_PROVIDER_NAMESPACE=agentform unless set, so configurations
//     can name the provider by its real address, agentform/agentform;
//   - TF_CLI_CONFIG_FILE points at an empty file, so no ~/.terraformrc
//     (or a missing file the environment names) changes what Terraform
//     does;
//   - CHECKPOINT_DISABLE=1: Terraform contacts no update server.
//
// Terraform itself is the terraform on PATH, or TF_ACC_TERRAFORM_PATH.
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

// scratchDir is a directory for the whole test run (the CLI configuration,
// the provider binary), removed when the tests end.
var scratchDir string

func runTests(m *testing.M) int {
	if os.Getenv("TF_ACC") == "" {
		os.Setenv("TF_ACC", "1")
	}
	if os.Getenv("TF_ACC_PROVIDER_NAMESPACE") == "" {
		os.Setenv("TF_ACC_PROVIDER_NAMESPACE", "agentform")
	}
	dir, err := os.MkdirTemp("", "agentform-provider-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	scratchDir = dir
	rc := filepath.Join(dir, "terraformrc")
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("TF_CLI_CONFIG_FILE", rc)
	os.Setenv("CHECKPOINT_DISABLE", "1")
	return m.Run()
}

// protoV6ProviderFactories serves the provider in-process to the
// terraform binary the acceptance tests run.
var protoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"agentform": providerserver.NewProtocol6WithError(New("test")()),
}

// providerConfig names the provider by its registry address; TestMain's
// TF_ACC_PROVIDER_NAMESPACE makes the in-process provider answer to it.
const providerConfig = `
terraform {
  required_providers {
    agentform = {
      source = "agentform/agentform"
    }
  }
}
`

// workspace copies testdata/<top-level test name>/<sub...> into a new
// temporary directory and returns it, so tests never write into the
// repository.
func workspace(t *testing.T, sub ...string) string {
	t.Helper()
	name, _, _ := strings.Cut(t.Name(), "/")
	return fixture(t, name, sub...)
}

// fixture copies testdata/<name>/<sub...> into a new temporary directory
// and returns it, for a test that shares another test's workspace.
func fixture(t *testing.T, name string, sub ...string) string {
	t.Helper()
	src := filepath.Join(append([]string{"testdata", name}, sub...)...)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
	return dst
}

// hclString quotes s as an HCL string literal.
func hclString(s string) string {
	q := strconv.Quote(s)
	return strings.ReplaceAll(strings.ReplaceAll(q, "${", "$${"), "%{", "%%{")
}

func TestProviderSchema(t *testing.T) {
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("schema diagnostic: %s: %s", d.Summary, d.Detail)
	}
	var got []string
	for name := range resp.ResourceSchemas {
		got = append(got, "resource "+name)
	}
	for name := range resp.DataSourceSchemas {
		got = append(got, "data "+name)
	}
	for name := range resp.Functions {
		got = append(got, "function "+name)
	}
	slices.Sort(got)
	want := []string{"data agentform_workspace", "function can_call", "function satisfies", "resource agentform_build"}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

// providerBlock is a provider "agentform" block with the given settings.
func providerBlock(settings string) string {
	return "\nprovider \"agentform\" {\n  " + settings + "\n}\n"
}

// TestProviderSettings checks resolve_timeout and lock_timeout: values the
// CLI's -resolve-timeout and -lock-timeout refuse are invalid here too,
// and the values given are how long planning waits, which the errors say,
// naming the attribute to raise.
func TestProviderSettings(t *testing.T) {
	dir := fixture(t, "TestBuildResource")
	silent := workspace(t, "silent_mcp")
	// A writer holds the workspace's state lock throughout.
	db, err := state.Open(dir, state.Options{Operation: "apply", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      buildConfig(dir, "") + providerBlock(`resolve_timeout = "0s"`),
				ExpectError: regexp.MustCompile(`(?s)resolve_timeout.*The value must be positive, not "0s"`),
			},
			{
				Config:      buildConfig(dir, "") + providerBlock(`resolve_timeout = "soon"`),
				ExpectError: regexp.MustCompile(`(?s)resolve_timeout.*The value must be a duration such as "30s" or "2m"`),
			},
			{
				Config:      buildConfig(dir, "") + providerBlock(`lock_timeout = "-1s"`),
				ExpectError: regexp.MustCompile(`(?s)lock_timeout.*The value must not be negative, not "-1s"`),
			},
			{
				Config:      buildConfig(dir, "") + providerBlock(`lock_timeout = "1s"`),
				ExpectError: regexp.MustCompile(`(?s)Workspace State Locked.*raise the\s+provider's\s+lock_timeout.*waited\s+1s\s+for\s+it`),
			},
			{
				Config:      buildConfig(silent, "") + providerBlock(`resolve_timeout = "1s"`),
				ExpectError: regexp.MustCompile(`(?s)MCP server did not answer.*within 1s.*raise the\s+provider's\s+resolve_timeout`),
			},
		},
	})
}
