package provider

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// TestExamples runs "terraform validate" on each example of examples/ (the
// tfplugindocs layout the documentation embeds), against the provider
// built from this tree through a dev_overrides CLI configuration. Each
// example must stand alone, so the ones that call provider functions
// declare required_providers. It also checks that every resource, data
// source and function has an example.
func TestExamples(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	examples := filepath.Join(root, "examples")

	dirs := []string{"provider"}
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedKeys(schema.ResourceSchemas) {
		dirs = append(dirs, filepath.Join("resources", name))
	}
	for _, name := range sortedKeys(schema.DataSourceSchemas) {
		dirs = append(dirs, filepath.Join("data-sources", name))
	}
	for _, name := range sortedKeys(schema.Functions) {
		dirs = append(dirs, filepath.Join("functions", name))
	}

	rc := filepath.Join(t.TempDir(), "terraformrc")
	config := "provider_installation {\n  dev_overrides {\n    " + hclString(Address) + " = " + hclPath(providerBinaryDir(t)) + "\n  }\n  direct {}\n}\n"
	if err := os.WriteFile(rc, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	terraform := terraformBinary(t)

	for _, dir := range dirs {
		t.Run(filepath.ToSlash(dir), func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(examples, dir, "*.tf"))
			if len(files) == 0 {
				t.Fatalf("got:\nno *.tf in examples/%s\nwant:\nan example for the documentation", filepath.ToSlash(dir))
			}
			// Validated in a copy: Terraform may leave files behind.
			work := t.TempDir()
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(work, filepath.Base(f)), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(terraform, "-chdir="+work, "validate", "-no-color")
			cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("terraform validate examples/%s: %v\n%s", filepath.ToSlash(dir), err, out)
			}
		})
	}
}
