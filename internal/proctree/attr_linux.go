package proctree

import "syscall"

// GroupAttr returns the attributes agentform starts a server or a
// runner with: the leader of a process group of its own (so that
// stopping it stops what it started) that the kernel sends SIGTERM when
// agentform dies, killed by SIGKILL or by a crash, so that an MCP server
// or a python runner does not outlive it. The signal goes when the
// thread that started the process ends; Go ends threads only when a
// goroutine locked to one returns, and agentform locks none.
func GroupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
