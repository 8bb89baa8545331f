//go:build !unix

package safefile

// openNonBlocking is 0 where there are no named pipes to open.
const openNonBlocking = 0
