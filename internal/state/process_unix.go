//go:build unix

package state

import (
	"errors"
	"syscall"
)

// processGone reports whether no process with the id pid runs on this
// host. A process of another user that runs is not gone (EPERM).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
