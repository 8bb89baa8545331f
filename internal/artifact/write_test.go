package artifact

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "assistant.agent.tgz")
	for _, content := range []string{"first", "second, longer", "3"} {
		if err := WriteFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("content\ngot:  %q\nwant: %q", got, content)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode\ngot:  %o\nwant: 644", info.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory\ngot:  %d entries\nwant: only the artifact, no temporary file", len(entries))
	}
}

func TestWriteFileErrors(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing directory", func(t *testing.T) {
		err := WriteFile(filepath.Join(dir, "missing", "x.agent.tgz"), []byte("x"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("WriteFile\ngot:  %v\nwant: %v", err, fs.ErrNotExist)
		}
	})
	t.Run("target is a directory", func(t *testing.T) {
		target := filepath.Join(dir, "taken")
		if err := os.Mkdir(target, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(target, []byte("x")); err == nil {
			t.Errorf("WriteFile\ngot:  no error\nwant: an error")
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("directory\ngot:  %d entries\nwant: no temporary file left behind", len(entries))
		}
	})
}
