package state_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/state"
)

// The lock and crash tests run their lock holders as real processes: this
// test binary re-executed with -test.run=^TestHelperProcess$ and the mode in
// envHelper.
const (
	envHelper    = "AGENTFORM_STATE_TEST_HELPER"
	envWorkspace = "AGENTFORM_STATE_TEST_WORKSPACE"

	helperOperation = "apply"
	helperVersion   = "9.9.9-test"
)

// TestHelperProcess is not a test: it is the body of the child processes
// started by startChild, and does nothing in a normal run.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(envHelper)
	if mode == "" {
		return
	}
	os.Exit(runHelper(mode, os.Getenv(envWorkspace)))
}

// runHelper is a child process. "writer" and "reader" open the state, print
// "ready" and hold it until stdin closes; "commit-loop" opens it as a writer
// and commits crashCommit(serial) until it is killed, printing
// "committed <serial>" after each commit.
func runHelper(mode, workspace string) int {
	opts := state.Options{ReadOnly: mode == "reader", Operation: helperOperation, Version: helperVersion}
	db, err := state.Open(workspace, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	fmt.Println("ready")
	switch mode {
	case "writer", "reader":
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "commit-loop":
		// Bounded so that an orphan cannot run forever; a dead parent also
		// kills it through SIGPIPE on stdout.
		for range 100000 {
			m, err := db.Meta()
			if err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
				return 2
			}
			if _, err := db.Commit(crashCommit(m.Serial + 1)); err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
				return 2
			}
			fmt.Printf("committed %d\n", m.Serial+1)
		}
	default:
		fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
		return 2
	}
	if err := db.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	return 0
}

// child is a running helper process.
type child struct {
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	stderr     bytes.Buffer
	lines      chan string   // stdout lines; closed at EOF
	quit       chan struct{} // closed when nobody reads lines any more
	readerDone chan struct{}
	waited     bool
	waitErr    error
}

// startChild starts a helper in mode on workspace; the test's cleanup kills it
// if it is still running.
func startChild(t *testing.T, mode, workspace string) *child {
	t.Helper()
	c := &child{
		cmd:        exec.Command(os.Args[0], "-test.run=^TestHelperProcess$"),
		lines:      make(chan string, 16),
		quit:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	c.cmd.Env = append(os.Environ(), envHelper+"="+mode, envWorkspace+"="+workspace)
	c.cmd.Stderr = &c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.readerDone)
		defer close(c.lines)
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			select {
			case c.lines <- s.Text():
			case <-c.quit:
			}
		}
	}()
	t.Cleanup(c.kill)
	return c
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// next returns the next stdout line that starts with prefix. The deadline only
// keeps a broken child from hanging the test; it asserts nothing about speed.
func (c *child) next(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.wait()
				t.Fatalf("helper exited before printing %q: %v\nstderr:\n%s", prefix, c.waitErr, c.stderr.String())
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-deadline:
			t.Fatalf("helper printed no %q line", prefix)
		}
	}
}

// release closes the child's stdin, which makes a holder close the state
// and exit, and waits for it to exit cleanly.
func (c *child) release(t *testing.T) {
	t.Helper()
	_ = c.stdin.Close()
	c.wait()
	if c.waitErr != nil {
		t.Fatalf("helper failed: %v\nstderr:\n%s", c.waitErr, c.stderr.String())
	}
}

// kill sends SIGKILL (Process.Kill) and reaps the child: once it returns, the
// kernel has released every lock the child held.
func (c *child) kill() {
	if c.waited {
		return
	}
	_ = c.cmd.Process.Kill()
	c.wait()
}

// wait reaps the child after its stdout is drained, as exec.Cmd requires.
func (c *child) wait() {
	if c.waited {
		return
	}
	close(c.quit)
	<-c.readerDone
	c.waitErr = c.cmd.Wait()
	c.waited = true
}
