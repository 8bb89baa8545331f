//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFileArguments: a named pipe or a link to a device given where
// a file is read (an artifact, a saved plan, the lockfile) is refused at
// once with the path named; it once blocked on the pipe, or read /dev/zero
// until memory ran out.
func TestSpecialFileArguments(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../examples/quickstart/agent.acl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "agentform.lock.hcl")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "pipe"}, "Error: pipe is a named pipe, not a regular file."},
		{[]string{"verify", "zero"}, "Error: zero is a character device, not a regular file."},
		{[]string{"serve", "pipe"}, "Error: cannot start: pipe is a named pipe, not a regular file."},
		{[]string{"show", "zero"}, "zero is a character device, not a regular file"},
		{[]string{"apply", "pipe"}, "pipe is a named pipe, not a regular file"},
		{[]string{"plan", "-refresh=false"}, "agentform.lock.hcl is a character device, not a regular file."},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			type result struct {
				code   int
				stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, _, stderr := run(t, "", append([]string{"-chdir=" + dir}, tc.args...)...)
				done <- result{code, stderr}
			}()
			select {
			case r := <-done:
				if r.code != ExitError || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("got: exit %d\n%s\nwant: exit %d with %q", r.code, r.stderr, ExitError, tc.want)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("blocked")
			}
		})
	}
}
