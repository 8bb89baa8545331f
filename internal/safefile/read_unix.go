//go:build unix

package safefile

import "syscall"

// openNonBlocking keeps Read's open of a named pipe from waiting for a
// writer; reads of a regular file do not block either way.
const openNonBlocking = syscall.O_NONBLOCK
