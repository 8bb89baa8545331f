package bench

import (
	"os"
	"syscall"
)

// maxRSSKiB returns the peak RSS of a reaped process; Linux reports
// ru_maxrss in KiB.
func maxRSSKiB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return -1
	}
	return ru.Maxrss
}
