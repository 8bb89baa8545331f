package proctree

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGroupAttrOutlivesNothing: a process started with GroupAttr ends
// when the process that started it is killed by SIGKILL (and so cannot
// stop it): an MCP server or a python runner does not outlive agentform.
func TestGroupAttrOutlivesNothing(t *testing.T) {
	if os.Getenv("PROCTREE_PARENT") == "1" {
		// The parent: start a child, say its pid, wait to be killed.
		cmd := exec.Command("sleep", "300")
		cmd.SysProcAttr = GroupAttr()
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestGroupAttrOutlivesNothing$")
	parent.Env = append(os.Environ(), "PROCTREE_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	child, convErr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || convErr != nil {
		t.Fatalf("the parent said %q (%v)", line, err)
	}
	defer syscall.Kill(child, syscall.SIGKILL)
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if err != nil || zombie(b) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d, started with GroupAttr, still runs 10 s after its parent was killed", child)
		}
	}
}
