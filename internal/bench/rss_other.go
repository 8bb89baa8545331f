//go:build !linux && !darwin

package bench

import "os"

// maxRSSKiB reports no peak RSS where rusage is unavailable.
func maxRSSKiB(*os.ProcessState) int64 { return -1 }
