//go:build unix

package resolve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/safefile"
)

// TestPackageSpecialFiles: resolution never waits on a named pipe in a
// package: a pipe where package.json or a package manager's lock file
// should be is refused, and so is a link to one; a pipe that is only in
// the directory is left out of the hash, as before.
func TestPackageSpecialFiles(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "index.ts"), []byte("export const x = 1;\n"), 0o644); err != nil {
			t.Error(err)
			return
		}
		for _, name := range []string{"package.json", "package-lock.json", "stray"} {
			if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
				t.Error(err)
				return
			}
		}
		if _, err := readInput(filepath.Join(dir, "package.json")); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("readInput: got %v\nwant: not a regular file", err)
		}
		if _, err := SHA256File(filepath.Join(dir, "package-lock.json")); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("SHA256File: got %v\nwant: not a regular file", err)
		}
		files, err := PackageFiles(dir)
		if err != nil || strings.Join(files, ",") != "index.ts" {
			t.Errorf("PackageFiles: got %v, %v\nwant: [index.ts]: the pipes left out", files, err)
		}
		if err := os.Symlink("stray", filepath.Join(dir, "linked.ts")); err != nil {
			t.Error(err)
			return
		}
		if _, err := HashPackage(dir); err == nil || !strings.Contains(err.Error(), "linked.ts is a symbolic link to a special file") {
			t.Errorf("HashPackage: got %v\nwant: linked.ts refused as a link to a special file", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("blocked on a named pipe")
	}
}

// TestJavaScriptImportOfAPipe: an import of a named pipe in the package is
// an error; esbuild once waited on it for good, past SIGTERM.
func TestJavaScriptImportOfAPipe(t *testing.T) {
	dir := t.TempDir()
	w := newJSWorkspace(t, dir, "", "tool", "")
	pkg := filepath.Join(dir, "tools", "tool")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"package.json": `{"name": "tool", "private": true}`,
		"index.ts":     "import { help } from \"./helper\";\nexport const tool = { name: \"tool\", description: help, parameters: { type: \"object\" }, execute() { return { output: \"\" }; } };\n",
	} {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(pkg, "helper.ts"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan hcl.Diagnostics, 1)
	go func() {
		_, diags := ResolveJavaScript(context.Background(), w.req)
		done <- diags
	}()
	select {
	case diags := <-done:
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "tools/tool/helper.ts is not a regular file") {
			t.Errorf("got: %v\nwant: helper.ts refused as not a regular file", diags)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("resolution blocked on a named pipe")
	}
}
