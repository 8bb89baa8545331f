//go:build unix && !linux

package proctree

import "syscall"

// GroupAttr returns the attributes agentform starts a server or a
// runner with: the leader of a process group of its own. Only Linux can
// also have it signalled when agentform dies.
func GroupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
