package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentform/agentform/lockfile"
)

// TestReadLockAhead: the lockfile read ahead is used only while the file
// holds the same bytes; a file changed or removed since is read again,
// and a bad file gives the same diagnostics either way.
func TestReadLockAhead(t *testing.T) {
	h1 := "h1:" + "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	sha := "sha256:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	lockWith := func(name string) []byte {
		f := lockfile.New()
		f.Tools[name] = &lockfile.Tool{Kind: "javascript", Source: h1, Bundle: sha, Bundler: "esbuild 0.0.0"}
		return f.Bytes()
	}
	write := func(t *testing.T, dir string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, lockfile.FileName), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tools := func(f *lockfile.File) []string {
		var names []string
		for name := range f.Tools {
			names = append(names, name)
		}
		return names
	}

	t.Run("unchanged", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, lockWith("first"))
		m := &Meta{Dir: dir}
		ahead := m.readLockAhead()
		<-ahead.done
		f, diags := ahead.load(dir)
		if diags.HasErrors() || f != ahead.file {
			t.Errorf("got: %v, %v\nwant: the file read ahead", tools(f), diags)
		}
	})
	t.Run("changed", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, lockWith("first"))
		m := &Meta{Dir: dir}
		ahead := m.readLockAhead()
		<-ahead.done
		write(t, dir, lockWith("second"))
		f, diags := ahead.load(dir)
		if diags.HasErrors() || f.Tools["second"] == nil || f.Tools["first"] != nil {
			t.Errorf("got: %v, %v\nwant: the file as it is now, with tool second", tools(f), diags)
		}
	})
	t.Run("removed", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, lockWith("first"))
		m := &Meta{Dir: dir}
		ahead := m.readLockAhead()
		<-ahead.done
		if err := os.Remove(filepath.Join(dir, lockfile.FileName)); err != nil {
			t.Fatal(err)
		}
		f, diags := ahead.load(dir)
		if len(diags) > 0 || len(f.Tools) != 0 {
			t.Errorf("got: %v, %v\nwant: an empty lockfile", tools(f), diags)
		}
	})
	t.Run("created", func(t *testing.T) {
		dir := t.TempDir()
		m := &Meta{Dir: dir}
		ahead := m.readLockAhead()
		<-ahead.done
		write(t, dir, lockWith("later"))
		f, diags := ahead.load(dir)
		if diags.HasErrors() || f.Tools["later"] == nil {
			t.Errorf("got: %v, %v\nwant: the file written after the read ahead", tools(f), diags)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, []byte("tool \"x\" {\n  kind = 1\n"))
		m := &Meta{Dir: dir}
		_, want := lockfile.Load(dir)
		_, got := m.readLockAhead().load(dir)
		if !want.HasErrors() || got.Error() != want.Error() {
			t.Errorf("diagnostics\ngot:  %v\nwant: %v", got, want)
		}
	})
	t.Run("none ahead", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, lockWith("first"))
		var ahead *lockRead
		f, diags := ahead.load(dir)
		if diags.HasErrors() || f.Tools["first"] == nil {
			t.Errorf("got: %v, %v\nwant: the file read now", tools(f), diags)
		}
	})
}
