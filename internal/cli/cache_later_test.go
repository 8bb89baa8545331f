package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/agentform/agentform/internal/resolve"
)

// TestCacheWrittenWhilePlanning: plan and apply write the resolution
// cache while they plan, and still warn when it cannot be written; a
// later plan writes it.
func TestCacheWrittenWhilePlanning(t *testing.T) {
	dir := copyTree(t, quickstart)
	path := filepath.Join(dir, resolve.CacheFile)
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	// Another process's writer holds the database: every write waits
	// for it, then gives up.
	holder, err := bbolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-chdir=" + dir, "plan", "-no-color"},
		{"-chdir=" + dir, "apply", "-no-color", "-auto-approve"},
	} {
		code, stdout, stderr := run(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		if !strings.Contains(stderr, "Warning: Resolution cache not written") {
			t.Errorf("%v: no warning that the cache was not written:\n%s", args, stderr)
		}
	}
	must(t, holder.Close())
	entries := func() int {
		got, err := resolve.CacheEntries(dir, "javascript")
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	if n := entries(); n != 0 {
		t.Fatalf("%d javascript entries in a cache no plan could write", n)
	}
	code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color")
	if code != 0 || strings.Contains(stderr, "Resolution cache not written") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := entries(); n != 1 {
		t.Errorf("%d javascript entries after a plan that could write the cache, want 1 (word_count)", n)
	}
}
