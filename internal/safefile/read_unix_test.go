//go:build unix

package safefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRead: a regular file is read whole; a named pipe, a device, a
// directory and a link to a device are refused without a byte read and
// without blocking; a file over the limit is refused.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "a.acl")
	want := bytes.Repeat([]byte("agent \"a\" {}\n"), 1000)
	if err := os.WriteFile(regular, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Read(regular, int64(len(want))); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got: %d bytes, %v\nwant: the file's %d bytes", len(got), err, len(want))
	}
	empty := filepath.Join(dir, "empty.acl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Read(empty, 10); err != nil || len(got) != 0 {
		t.Fatalf("empty file: got %q, %v", got, err)
	}
	if _, err := Read(regular, int64(len(want))-1); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), regular+" is 13000 bytes, more than the 12999 allowed") {
		t.Errorf("got: %v\nwant: ErrTooLarge naming the file", err)
	}

	fifo := filepath.Join(dir, "fifo.acl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero.acl")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "a named pipe", link: "a character device", "/dev/zero": "a character device", dir: "a directory"} {
		done := make(chan error, 1)
		go func() {
			_, err := Read(path, 1<<30)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || err.Error() != path+" is "+kind+", not a regular file" {
				t.Errorf("%s: got %v\nwant: %s is %s, not a regular file", path, err, path, kind)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Read blocked", path)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing.acl"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got: %v\nwant: not exist", err)
	}
}

// TestReadSparse: a sparse file far larger than memory is refused by its
// size without reserving memory for it, and a file under the limit whose
// size is past what Read reserves ahead is read whole.
func TestReadSparse(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		f.Close()
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()
	if _, err := Read(big, 1<<30); !errors.Is(err, ErrTooLarge) {
		t.Errorf("got: %v\nwant: ErrTooLarge", err)
	}
	mid := filepath.Join(dir, "mid")
	want := bytes.Repeat([]byte{'x'}, readPrealloc+12345)
	if err := os.WriteFile(mid, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Read(mid, 1<<30); err != nil || !bytes.Equal(got, want) {
		t.Errorf("got: %d bytes, %v\nwant: %d", len(got), err, len(want))
	}
}
