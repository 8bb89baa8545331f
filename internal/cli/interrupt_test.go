//go:build unix

package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/proctree"
)

// lockedBuffer is a bytes.Buffer safe for the signal goroutine's writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSecondInterruptExitsAtOnce: the first SIGINT cancels the command's
// context and says so; the second kills the process groups agentform
// started (and, with /proc, a process that left its group) and exits at
// once with status 1, without waiting for the graceful stop.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	ctx, exited, stderr := interruptTest(t, "Stopping the call")

	// A process group agentform started, whose shell started a process
	// in a session of its own.
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "escaped.pid")
	script := "sleep 300 & echo $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; wait"
	_, setsidErr := exec.LookPath("setsid")
	_, procErr := os.Stat("/proc/self/stat")
	escapes := setsidErr == nil && procErr == nil
	if escapes {
		script = "setsid sleep 300 & echo $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; wait"
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	untrack := proctree.Track(cmd.Process)
	defer untrack()
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shell did not start its child")
		}
		b, _ := exec.Command("cat", pidFile).Output()
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	defer syscall.Kill(child, syscall.SIGKILL)

	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first SIGINT did not cancel the context")
	}
	if got, want := stderr.String(), "Interrupt received. Stopping the call; interrupt again to exit at once.\n\n"; got != want {
		t.Errorf("after one SIGINT\ngot:  %q\nwant: %q", got, want)
	}
	select {
	case code := <-exited:
		t.Fatalf("exited (%d) at the first SIGINT", code)
	case <-waited:
		t.Fatal("the first SIGINT stopped the process group; only the second one may")
	case <-time.After(200 * time.Millisecond):
	}

	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		if code != ExitError {
			t.Errorf("exit status %d, want %d", code, ExitError)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second SIGINT did not exit")
	}
	if !strings.Contains(stderr.String(), "Second interrupt received") {
		t.Errorf("stderr after two SIGINTs:\n%s\nwant: the second one said", stderr)
	}
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the process group agentform started still runs after the second SIGINT")
	}
	waitGone(t, child)
}

// TestHangupStops: SIGHUP (a closed terminal, a lost ssh session) stops
// a command as SIGINT does, so that it closes the servers it started
// rather than die and leave them running.
func TestHangupStops(t *testing.T) {
	if signal.Ignored(syscall.SIGHUP) {
		t.Skip("the test runs with SIGHUP ignored (nohup), which agentform then leaves ignored")
	}
	ctx, exited, stderr := interruptTest(t, "Stopping the plan")
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGHUP did not cancel the context")
	}
	if got := stderr.String(); !strings.HasPrefix(got, "Interrupt received. Stopping the plan") {
		t.Errorf("after SIGHUP: %q", got)
	}
	select {
	case code := <-exited:
		t.Errorf("exited (%d) at the first SIGHUP; it stops gracefully", code)
	case <-time.After(200 * time.Millisecond):
	}
}

// interruptTest starts interruptContext with stopping for a test: exits
// are sent on exited instead of ending the test binary, and what it says
// goes to stderr. Both are undone when the test ends.
func interruptTest(t *testing.T, stopping string) (ctx context.Context, exited chan int, stderr *lockedBuffer) {
	t.Helper()
	exited = make(chan int, 1)
	saved := exitNow
	exitNow = func(code int) { exited <- code }
	stderr = &lockedBuffer{}
	m := &Meta{Streams: Streams{Stderr: stderr}}
	ctx, stop := m.interruptContext(stopping)
	t.Cleanup(func() {
		stop()
		exitNow = saved
	})
	return ctx, exited, stderr
}

// waitGone waits up to 10 s for pid to be gone (a zombie is gone).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if b, err := exec.Command("cat", "/proc/"+strconv.Itoa(pid)+"/stat").Output(); err == nil {
			s := string(b)
			if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after the second SIGINT", pid)
		}
	}
}

// TestInterruptAtApplyPrompt: Ctrl-C while apply waits for "yes" cancels
// the apply at once, as Terraform does, rather than leave it waiting for
// a line (and holding the state's lock) after saying it is stopping.
func TestInterruptAtApplyPrompt(t *testing.T) {
	dir := copyTree(t, quickstart)
	stdin, typing := io.Pipe()
	defer typing.Close()
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Run([]string{"-chdir=" + dir, "apply", "-no-color"}, Streams{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	}()
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(stdout.String(), "Enter a value:"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("apply never asked for confirmation\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != ExitError || !strings.Contains(stderr.String(), "Apply cancelled.") {
			t.Errorf("got: exit %d\n%s\nwant: exit 1, Apply cancelled.", code, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("got: apply still waiting for an answer 10s after the interrupt\nstderr:\n%s\nwant: it stops at once", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "dist")); err == nil {
		t.Errorf("got: dist written\nwant: nothing applied")
	}
}
