// Package safefile writes files so that a crash or an error never leaves
// one half-written: every file agentform writes (artifacts, the lockfile,
// saved plans, cache entries, formatted manifests) goes through Write. It
// also reads them so that no input can block or exhaust memory: every file
// agentform reads whole goes through Read, which refuses named pipes,
// devices and files over a limit.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data atomically: into a temporary file
// ".<name>.tmp*" in the same directory, synced, given perm (whatever the
// umask), then renamed over path, and the directory synced. An error leaves
// the old file intact and no temporary file behind; a crash leaves the old
// file or the new one, and at most a dot-prefixed temporary file.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// WriteUnsynced is Write without the syncs, for files whose loss in a
// crash costs nothing but recomputing them (the resolution cache): a reader
// still sees the old file or the complete new one, never part of one, but
// after a power failure the file may be missing or empty. A sync costs
// more than writing a small file, and a cold plan writes one per tool.
func WriteUnsynced(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, false)
}

// WriteThrough is Write for rewriting a file in place, the way gofmt and
// terraform fmt do: an existing file keeps its mode (perm is only that of
// a new file), and when path is a symbolic link the file it leads to is
// replaced, with the temporary file created and renamed in that file's
// directory, so the link stays a link and the rename is as atomic as
// Write's. (Write would rename over the link and leave its target as it
// was.) A link that leads to no file is an error.
func WriteThrough(path string, data []byte, perm os.FileMode) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Write(path, data, perm)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, Bare(err))
	}
	if info.Mode()&fs.ModeSymlink == 0 {
		return Write(path, data, info.Mode().Perm())
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("writing %s: cannot follow the symbolic link: %w", path, Bare(err))
	}
	tinfo, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("writing %s (through the symbolic link %s): %w", target, path, Bare(err))
	}
	return writeAs(target, target+" (through the symbolic link "+path+")", data, tinfo.Mode().Perm(), true)
}

func write(path string, data []byte, perm os.FileMode, sync bool) error {
	return writeAs(path, path, data, perm, sync)
}

// writeAs writes path, naming it name in its errors.
func writeAs(path, name string, data []byte, perm os.FileMode, sync bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: cannot create a file in %s: %w", name, dir, Bare(err))
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", name, Bare(err))
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", name, Bare(err))
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			return fmt.Errorf("writing %s: %w", name, Bare(err))
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, Bare(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			// The rename's own error says "file exists".
			return fmt.Errorf("writing %s: it is a directory; name a file, or move the directory away", name)
		}
		return fmt.Errorf("writing %s: %w", name, Bare(err))
	}
	done = true
	if !sync {
		return nil
	}
	// Make the rename durable. Some systems cannot sync a directory; the
	// file itself is already complete, so that is not an error.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Bare is err without the path it names (of a temporary file, say, which
// means nothing to whoever reads the message): the system's reason alone.
func Bare(err error) error {
	var le *os.LinkError
	var pe *fs.PathError
	switch {
	case errors.As(err, &le):
		return le.Err
	case errors.As(err, &pe):
		return pe.Err
	}
	return err
}
