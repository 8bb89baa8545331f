package artifact

import (
	"github.com/agentform/agentform/internal/safefile"
)

// WriteFile writes data to path atomically: into a temporary file in the
// same directory, synced, given mode 0644 whatever the umask, renamed over
// path, and the directory synced. A crash or an error leaves either the old
// file or the new one at path, never a partial file, and no temporary file
// behind (a crash may leave one, named ".<base>.tmp*", which a later
// WriteFile does not reuse).
func WriteFile(path string, data []byte) error {
	return safefile.Write(path, data, 0o644)
}
