//go:build unix

package proctree

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDescendantsAndKill: Descendants finds the children of a shell and
// the one it started in a session of its own, not the shell; Kill leaves
// a process whose start time is not the one recorded (a pid reused) and
// kills the others.
func TestDescendantsAndKill(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid command")
	}
	sh := exec.Command("sh", "-c", "sleep 300 & setsid sleep 300 & wait")
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sh.Process.Kill(); _ = sh.Wait() }()
	var found []Proc
	for deadline := time.Now().Add(5 * time.Second); len(found) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		found = Descendants(sh.Process.Pid)
	}
	if len(found) != 2 {
		t.Fatalf("descendants of the shell: %v, want its two sleeps", found)
	}
	if slices.ContainsFunc(found, func(p Proc) bool { return p.Pid == sh.Process.Pid }) {
		t.Errorf("the root is among its descendants: %v", found)
	}

	stale := []Proc{{Pid: found[0].Pid, Start: found[0].Start + 1}}
	Kill(stale)
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(found[0].Pid, 0); err != nil {
		t.Fatalf("Kill of a start time that is not the process's killed it: %v", err)
	}

	Kill(found)
	for _, p := range found {
		deadline := time.Now().Add(3 * time.Second)
		for {
			ppid, _, ok := Stat(p.Pid)
			gone := !ok || errors.Is(syscall.Kill(p.Pid, 0), syscall.ESRCH)
			if !gone {
				// A zombie its parent has yet to reap is gone too.
				if b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid) + "/stat"); err == nil && zombie(b) {
					gone = true
				}
			}
			if gone {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process %d (parent %d) still runs after Kill", p.Pid, ppid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// zombie reports whether a /proc/PID/stat line is a zombie's (state Z).
func zombie(stat []byte) bool {
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && stat[i+2] == 'Z'
		}
	}
	return false
}

// TestForeignProc: in a pid namespace that shows another namespace's
// /proc, pids in /proc are other processes than the ones agentform knows
// by them: Stat, Of and Descendants find nothing there, so that nothing
// is signalled on their word. The test runs itself again in such a
// namespace (unshare --pid --fork, without --mount-proc), where it is pid
// 1 and /proc/1 is the outer namespace's init.
func TestForeignProc(t *testing.T) {
	if os.Getenv("AGENTFORM_PROCTREE_FOREIGN") == "1" {
		foreignProcCheck(t)
		return
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare command")
	}
	var out []byte
	for _, args := range [][]string{{"--pid", "--fork"}, {"--user", "--map-root-user", "--pid", "--fork"}} {
		args = append(args, os.Args[0], "-test.run=^TestForeignProc$", "-test.v")
		cmd := exec.Command(unshare, args...)
		cmd.Env = append(os.Environ(), "AGENTFORM_PROCTREE_FOREIGN=1")
		out, err = cmd.CombinedOutput()
		if err == nil || strings.Contains(string(out), "--- FAIL") {
			break
		}
	}
	switch {
	case err == nil:
	case strings.Contains(string(out), "--- FAIL"):
		t.Fatalf("in a pid namespace with the outer /proc:\n%s", out)
	default:
		t.Skipf("cannot make a pid namespace here: %v\n%s", err, out)
	}
}

func foreignProcCheck(t *testing.T) {
	if os.Getpid() != 1 {
		t.Fatalf("pid %d in the new namespace, want 1", os.Getpid())
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	if _, _, ok := Stat(child.Process.Pid); ok {
		t.Errorf("Stat(%d) read /proc/%d, another namespace's process", child.Process.Pid, child.Process.Pid)
	}
	if p, ok := Of(os.Getpid()); ok {
		t.Errorf("Of(1) = %v: the outer namespace's init", p)
	}
	if d := Descendants(os.Getpid()); len(d) != 0 {
		t.Errorf("Descendants(1) = %d processes of the outer namespace", len(d))
	}
}
