//go:build unix

package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTerminateStopsResolution checks that SIGTERM, which CI cancellation,
// docker stop and timeout send, stops a plan the way Ctrl-C does: the
// resolution is interrupted, the MCP server it started is stopped, and
// the command says so, plans nothing and fails.
func TestTerminateStopsResolution(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "server.pid")
	// A server that never answers: the plan waits on it until stopped.
	manifest := `agent "a" {
  capabilities = ["search"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "hang" {
  kind         = "mcp"
  transport    = "stdio"
  command      = "sh"
  args         = ["-c", "echo $$ > ` + pidFile + `; exec sleep 600"]
  capabilities = ["search"]
}

tool "hang_too" {
  kind         = "mcp"
  transport    = "stdio"
  command      = "sleep"
  args         = ["600"]
  capabilities = ["search"]
}
`
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"plan", "apply"} {
		t.Run(sub, func(t *testing.T) {
			os.Remove(pidFile)
			cmd := exec.Command(bin, "-chdir="+dir, sub, "-no-color")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pid int
			for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("the MCP server never started\nstderr:\n%s", stderr.String())
				}
				b, _ := os.ReadFile(pidFile)
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("%s did not stop within 30 s of SIGTERM", sub)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitError {
				t.Errorf("exit\ngot:  %v\nwant: status %d (stopped by the signal handler, not killed by it)\nstderr:\n%s", err, ExitError, stderr.String())
			}
			// Said once, not once more for each server stopped.
			if strings.Count(stderr.String(), "Error: ") != 1 || !strings.Contains(stderr.String(), "Error: Resolution interrupted") {
				t.Errorf("stderr\ngot:\n%s\nwant: one error, Resolution interrupted", stderr.String())
			}
			// Nothing is planned from a resolution cut short: no matrix
			// of the tools resolved so far is shown as the plan.
			if stdout.String() != "" {
				t.Errorf("stdout\ngot:\n%s\nwant: nothing", stdout.String())
			}
			// The server is stopped with the resolution, not left running.
			for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("the MCP server (pid %d) still runs after %s stopped", pid, sub)
				}
			}
		})
	}
}
