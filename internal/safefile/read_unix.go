//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// openNonBlocking keeps Read's open of a named pipe from waiting for a
// writer; reads of a regular file do not block either way.
const openNonBlocking = syscall.O_NONBLOCK

// writable reports whether this process may write the file (or, for a
// directory, create entries in it) at path, as the kernel decides it for
// this process's user.
func writable(path string, dir bool) bool {
	mode := uint32(0x2) // W_OK
	if dir {
		mode |= 0x1 // X_OK
	}
	return syscall.Access(path, mode) == nil
}

// owner returns the owner and link count of the file info describes.
func owner(info os.FileInfo) (uid, gid int, links uint64, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return int(st.Uid), int(st.Gid), uint64(st.Nlink), true
}
