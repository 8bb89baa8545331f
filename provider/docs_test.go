package provider

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
)

// docsArgs are the tfplugindocs arguments of "make docs", run from the
// module root, minus --rendered-website-dir (../../docs/provider there).
// Paths are relative to --provider-dir, where tfplugindocs builds the
// provider; the CLI configuration TestMain sets keeps Terraform offline.
var docsArgs = []string{
	"run", "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs", "generate",
	"--provider-dir", "cmd/terraform-provider-agentform",
	"--provider-name", "agentform",
	"--examples-dir", "../../examples",
}

// TestDocsUpToDate regenerates the provider documentation into a temporary
// directory and fails when docs/provider differs: run "make docs" and
// commit the result.
func TestDocsUpToDate(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	out := t.TempDir()
	rel, err := filepath.Rel(filepath.Join(root, "cmd", "terraform-provider-agentform"), out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goCommand(t), append(slices.Clone(docsArgs), "--rendered-website-dir", rel)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+terraformPATH(t))
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tfplugindocs generate: %v\n%s", err, output)
	}

	committed := filepath.Join(root, "docs", "provider")
	got, want := readTree(t, committed), readTree(t, out)
	for _, name := range sortedKeys(union(got, want)) {
		if diff := udiff.Unified("docs/provider/"+name, "generated/"+name, got[name], want[name]); diff != "" {
			t.Errorf("docs/provider/%s is out of date; run \"make docs\" and commit the result:\n%s", name, diff)
		}
	}
}

// readTree reads every file under dir by slash-separated relative path; a
// missing dir is empty.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && os.IsNotExist(err) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func union(a, b map[string]string) map[string]bool {
	u := map[string]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

// moduleRoot is the repository root: the provider package's parent.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	return root
}

func goCommand(t *testing.T) string {
	t.Helper()
	g, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the provider: %v", err)
	}
	return g
}

// terraformBinary is the terraform the tests run, as terraform-plugin-
// testing finds it: TF_ACC_TERRAFORM_PATH, else terraform on PATH. The
// tests never download Terraform.
func terraformBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatalf("terraform is not on PATH and TF_ACC_TERRAFORM_PATH is not set: install Terraform (>= 1.8) or point TF_ACC_TERRAFORM_PATH at it: %v", err)
	}
	return p
}

// terraformPATH is PATH with terraformBinary's directory first, for tools
// (tfplugindocs) that only look on PATH.
func terraformPATH(t *testing.T) string {
	return filepath.Dir(terraformBinary(t)) + string(os.PathListSeparator) + os.Getenv("PATH")
}

var (
	providerBuild    sync.Once
	providerBuildDir string
	providerBuildErr []byte
)

// providerBinaryDir builds cmd/terraform-provider-agentform once per test
// run, into TestMain's scratch directory, and returns the directory holding
// the binary, for dev_overrides.
func providerBinaryDir(t *testing.T) string {
	t.Helper()
	root := moduleRoot(t)
	providerBuild.Do(func() {
		dir := filepath.Join(scratchDir, "bin")
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-agentform"), "./cmd/terraform-provider-agentform")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			providerBuildErr = append(out, err.Error()...)
			return
		}
		providerBuildDir = dir
	})
	if providerBuildDir == "" {
		t.Fatalf("building the provider:\n%s", bytes.TrimSpace(providerBuildErr))
	}
	return providerBuildDir
}

// hclPath writes a path for an HCL string in a CLI configuration.
func hclPath(p string) string { return hclString(strings.ReplaceAll(p, `\`, `/`)) }
