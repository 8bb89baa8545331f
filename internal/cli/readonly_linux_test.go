package cli

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"unsafe"
)

// Linux inode flags (linux/fs.h).
const (
	fsIocGetFlags = 0x80086601
	fsIocSetFlags = 0x40086602
	fsImmutableFl = 0x10
)

// makeReadOnly makes dir refuse new files until undo is called (or the
// test ends). Permissions do that for an ordinary user; root ignores them,
// so for root the directory is also made immutable (the flag chattr +i
// sets), which binds root too.
func makeReadOnly(t *testing.T, dir string) (undo func()) {
	t.Helper()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	immutable := false
	var once sync.Once
	undo = func() {
		once.Do(func() {
			if immutable {
				if err := setImmutable(dir, false); err != nil {
					t.Errorf("clearing the immutable flag of %s: %v", dir, err)
				}
			}
			os.Chmod(dir, 0o755)
		})
	}
	t.Cleanup(undo)
	if canCreate(dir) {
		if err := setImmutable(dir, true); err != nil {
			t.Fatalf("running as root, and %s cannot be made immutable (%v): this test needs a filesystem that supports chattr +i, or a non-root user", dir, err)
		}
		immutable = true
	}
	if canCreate(dir) {
		t.Fatalf("%s still accepts new files", dir)
	}
	return undo
}

// canCreate reports whether a file can be created in dir (and removes it).
func canCreate(dir string) bool {
	probe := filepath.Join(dir, ".probe")
	f, err := os.OpenFile(probe, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(probe)
	return true
}

func setImmutable(dir string, on bool) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	var flags int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, d.Fd(), fsIocGetFlags, uintptr(unsafe.Pointer(&flags))); e != 0 {
		return e
	}
	if on {
		flags |= fsImmutableFl
	} else {
		flags &^= fsImmutableFl
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, d.Fd(), fsIocSetFlags, uintptr(unsafe.Pointer(&flags))); e != 0 {
		return e
	}
	return nil
}
