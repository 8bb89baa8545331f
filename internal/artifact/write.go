package artifact

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically: into a temporary file in the
// same directory, synced, given mode 0644 whatever the umask, renamed over
// path, and the directory synced. A crash or an error leaves either the old
// file or the new one at path, never a partial file, and no temporary file
// behind (a crash may leave one, named ".<base>.tmp*", which a later
// WriteFile does not reuse).
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// Chmod on the open file is exact: the umask applies only at creation.
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done = true
	// Make the rename durable. Some systems cannot sync a directory; the
	// file itself is complete by now, so that is not an error.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
