//go:build !linux

package lockfile

import (
	"os"
	"testing"
)

// makeReadOnly makes dir refuse new files by its permissions (run the
// tests as an ordinary user on this system).
func makeReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
}
