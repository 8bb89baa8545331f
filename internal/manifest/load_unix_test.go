//go:build unix

package manifest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLoadSpecialFiles: a manifest file that is a named pipe, or a link
// to a device, is refused at once with a located error; the loader once
// blocked on the pipe and read /dev/zero until memory ran out.
func TestLoadSpecialFiles(t *testing.T) {
	for name, create := range map[string]func(string) error{
		"pipe.acl": func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"zero.acl": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(minimalAgent), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := create(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, diags := Load(dir)
				want := map[string]string{"pipe.acl": "pipe.acl is a named pipe, not a regular file.", "zero.acl": "zero.acl is a character device, not a regular file."}[name]
				if len(diags) != 1 || diags[0].Summary != "Cannot read manifest file" || diags[0].Detail != want || diags[0].Subject == nil || diags[0].Subject.Filename != name {
					t.Errorf("got: %v\nwant: Cannot read manifest file: %s, located at %s", diags, want, name)
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Load blocked")
			}
		})
	}
}
