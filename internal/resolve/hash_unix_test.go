//go:build unix

package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
