package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{"Write": Write, "WriteUnsynced": WriteUnsynced} {
		t.Run(name, func(t *testing.T) { testWrite(t, write) })
	}
}

func testWrite(t *testing.T, Write func(string, []byte, os.FileMode) error) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, content := range []string{"first", "second"} {
		if err := Write(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != content {
			t.Errorf("got: %q\nwant: %q", got, content)
		}
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o644 {
		t.Errorf("got mode %v\nwant: 0644 whatever the umask", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("got %d entries\nwant: only the file, no temporary left", len(entries))
	}
	// An error (the directory is gone) leaves nothing behind.
	// The message names the file and the directory, not the temporary
	// file, and the system's reason is still there for errors.Is.
	missing := filepath.Join(dir, "missing", "f")
	err := Write(missing, []byte("x"), 0o644)
	want := "writing " + missing + ": cannot create a file in " + filepath.Dir(missing) + ": no such file or directory"
	if err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("writing into a missing directory\ngot:  %v\nwant: %s", err, want)
	}
}

// TestWriteOverDirectory: a path that is a directory is refused with that
// reason (the rename's own error reads "file exists"), and no temporary
// file is left behind.
func TestWriteOverDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dist")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(path, []byte("x"), 0o644)
	if want := "writing " + path + ": it is a directory; name a file, or move the directory away"; err == nil || err.Error() != want {
		t.Errorf("got:  %v\nwant: %s", err, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("got %v\nwant: only the directory, no temporary left", entries)
	}
}

// TestWriteThrough: a symbolic link (here a chain of two, the first
// relative, into another directory) is written through: its target gets
// the data and keeps its mode, the links stay links, and neither directory
// keeps a temporary file. A file that is no link keeps its mode too, a new
// file gets perm, and a link that leads nowhere is an error that names it.
func TestWriteThrough(t *testing.T) {
	dir, ext := t.TempDir(), t.TempDir()
	target := filepath.Join(ext, "shared.acl")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	middle := filepath.Join(ext, "middle.acl")
	link := filepath.Join(dir, "agent.acl")
	if err := os.Symlink("shared.acl", middle); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Symlink(middle, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteThrough(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, middle} {
		if info, err := os.Lstat(l); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: got %v, %v\nwant: still a symbolic link", l, info.Mode(), err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("target got: %q\nwant: %q", got, "new")
	}
	if info, _ := os.Stat(target); info.Mode().Perm() != 0o600 {
		t.Errorf("target got mode %v\nwant: 0600 kept", info.Mode().Perm())
	}
	for d, n := range map[string]int{dir: 1, ext: 2} {
		if entries, _ := os.ReadDir(d); len(entries) != n {
			t.Errorf("%s got %v\nwant: %d entries, no temporary left", d, entries, n)
		}
	}

	plain := filepath.Join(dir, "plain.acl")
	if err := os.WriteFile(plain, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteThrough(plain, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(plain); info.Mode().Perm() != 0o640 {
		t.Errorf("plain file got mode %v\nwant: 0640 kept", info.Mode().Perm())
	}
	fresh := filepath.Join(dir, "fresh.acl")
	if err := WriteThrough(fresh, []byte("new"), 0o604); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(fresh); info.Mode().Perm() != 0o604 {
		t.Errorf("new file got mode %v\nwant: 0604", info.Mode().Perm())
	}

	dangling := filepath.Join(dir, "dangling.acl")
	if err := os.Symlink(filepath.Join(ext, "gone.acl"), dangling); err != nil {
		t.Fatal(err)
	}
	err := WriteThrough(dangling, []byte("new"), 0o644)
	if want := "writing " + dangling + ": cannot follow the symbolic link: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("dangling link got: %v\nwant: %s", err, want)
	}
	if _, err := os.Lstat(filepath.Join(ext, "gone.acl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dangling link's target got created: %v", err)
	}
}

// TestWriteThroughKeepsIdentity: a file with another hard link is
// rewritten in place (the link sees the new text), and a file owned by
// another user keeps its owner (run as root, which may give it).
func TestWriteThroughKeepsIdentity(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.acl")
	if err := os.WriteFile(path, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "also.txt")
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteThrough(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, link} {
		if b, _ := os.ReadFile(p); string(b) != "new" {
			t.Errorf("%s after the rewrite\ngot:  %q\nwant: \"new\" (one file, two names)", p, b)
		}
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("mode\ngot:  %v\nwant: 0640 kept", info.Mode().Perm())
	}
	if names, _ := os.ReadDir(dir); len(names) != 2 {
		t.Errorf("directory after the rewrite: %v, want the two names only", names)
	}

	if os.Getuid() != 0 {
		t.Skip("giving a file another owner needs root")
	}
	owned := filepath.Join(dir, "owned.acl")
	if err := os.WriteFile(owned, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(owned, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := WriteThrough(owned, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(owned)
	if err != nil {
		t.Fatal(err)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("owner after the rewrite\ngot:  %d:%d\nwant: 65534:65534 kept", st.Uid, st.Gid)
	}
	if b, _ := os.ReadFile(owned); string(b) != "new" {
		t.Errorf("content\ngot:  %q\nwant: \"new\"", b)
	}
}

// TestWriteThroughInPlaceFailure: an in-place rewrite (a hard-linked
// file) whose write fails midway, as on a full disk, puts the old content
// back and says so.
func TestWriteThroughInPlaceFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.acl")
	old := []byte("locals {\n  a = 1\n}\n")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, filepath.Join(dir, "b.acl")); err != nil {
		t.Fatal(err)
	}
	calls := 0
	writeAt = func(f *os.File, b []byte, off int64) (int, error) {
		calls++
		// Half of it written, then the disk is full.
		n, _ := f.WriteAt(b[:len(b)/2], off)
		return n, syscall.ENOSPC
	}
	t.Cleanup(func() { writeAt = (*os.File).WriteAt })
	err := WriteThrough(path, []byte("locals {\n  a = 1\n  b = 2\n  c = 3\n}\n"), 0o644)
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "the file is as it was") {
		t.Errorf("got: %v\nwant: no space left, the file as it was", err)
	}
	for _, name := range []string{"a.acl", "b.acl"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != string(old) {
			t.Errorf("%s after the failed rewrite\ngot:  %q\nwant: %q", name, b, old)
		}
	}
	if calls != 1 {
		t.Errorf("writes of the new content: %d, want 1", calls)
	}
}
