package resolve

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestInPackage writes a file into directories inside and beside a
// package: InPackage must say whether that changes the package's hash.
func TestInPackage(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"pkg", "pkg/out", "pkg/a/b", "pkg/dist", "pkg/dist/x", "pkg/a/node_modules/b", "pkg/distant", "pkg-out", "other"} {
		t.Run(rel, func(t *testing.T) {
			dir := filepath.Join(root, filepath.FromSlash(rel))
			before, err := HashPackage(pkg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "agent.tgz")
			if err := os.WriteFile(file, []byte(rel), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(file)
			after, err := HashPackage(pkg)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := InPackage(pkg, dir), before != after; got != want {
				t.Errorf("InPackage(%s)\ngot:\n%v\nwant:\n%v (whether writing there changes the hash)", rel, got, want)
			}
		})
	}
}

// TestPackageFilesLeaveOutLockfile: a package at the workspace's root
// leaves out the lockfile and the temporary files a killed apply or lock
// wrote it through (the next apply removes them: hashing them would make
// the plan ship them and the plan after it change again), but not other
// files of similar names, nor such names below the top.
func TestPackageFilesLeaveOutLockfile(t *testing.T) {
	dir := t.TempDir()
	for _, rel := range []string{"pyproject.toml", "agentform.lock.hcl", ".agentform.lock.hcl.tmp123456", ".agentform.lock.hcl.bak", "sub/.agentform.lock.hcl.tmp1", "sub/agentform.lock.hcl"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := PackageFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".agentform.lock.hcl.bak", "pyproject.toml", "sub/.agentform.lock.hcl.tmp1", "sub/agentform.lock.hcl"}
	if !slices.Equal(got, want) {
		t.Errorf("PackageFiles\ngot:  %q\nwant: %q", got, want)
	}
}

// TestPackageFilesLeaveOutTerraform: a package Terraform runs in (the
// provider's dir = ".", a skill with source = ".") does not hash or pack
// Terraform's state, which holds other resources' values and changes with
// every apply, nor the rest of Terraform's own files.
func TestPackageFilesLeaveOutTerraform(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("SKILL.md", "---\nname: x\ndescription: y\n---\n")
	write("main.tf", "resource \"terraform_data\" \"x\" {}\n")
	before, err := HashPackage(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"terraform.tfstate", "terraform.tfstate.backup", ".terraform.tfstate.lock.info", ".terraform.lock.hcl",
		".terraform/providers/x", "terraform.tfstate.d/dev/terraform.tfstate", "sub/custom.tfstate", "sub/custom.tfstate.backup", "terraform.tfstate.1733100000.backup", "prod.tfplan"} {
		write(rel, `{"password": "tfstate-secret"}`)
	}
	got, err := PackageFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"SKILL.md", "main.tf"}; !slices.Equal(got, want) {
		t.Errorf("PackageFiles\ngot:  %q\nwant: %q", got, want)
	}
	if after, err := HashPackage(dir); err != nil || after != before {
		t.Errorf("HashPackage\ngot:  %s, %v\nwant: %s, as without Terraform's files", after, err, before)
	}
}
