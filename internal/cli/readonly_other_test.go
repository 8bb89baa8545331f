//go:build !linux

package cli

import (
	"os"
	"testing"
)

// makeReadOnly makes dir refuse new files by its permissions until undo
// is called or the test ends (run the tests as an ordinary user on this
// system).
func makeReadOnly(t *testing.T, dir string) (undo func()) {
	t.Helper()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	undo = func() { os.Chmod(dir, 0o755) }
	t.Cleanup(undo)
	return undo
}
