package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
