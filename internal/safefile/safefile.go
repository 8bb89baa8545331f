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

// WriteThrough is Write for rewriting a file the way gofmt and terraform
// fmt do: an existing file keeps its mode, owner and links, and when path
// is a symbolic link the file it leads to is rewritten (the link stays a
// link). A file this process may not write is refused, as it is for them,
// even where its directory would let a rename replace it. The new content
// goes to a temporary file renamed over the old one, synced, so a crash
// leaves either; where a rename would lose something (the file has other
// hard links, another owner this process cannot give the new file, or
// sits in a directory this process cannot create in), the file is
// rewritten in place instead. perm is only that of a new file. A link
// that leads to no file is an error.
func WriteThrough(path string, data []byte, perm os.FileMode) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Write(path, data, perm)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, Bare(err))
	}
	target, name := path, path
	if info.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return fmt.Errorf("writing %s: cannot follow the symbolic link: %w", path, Bare(err))
		}
		name = target + " (through the symbolic link " + path + ")"
		if info, err = os.Stat(target); err != nil {
			return fmt.Errorf("writing %s: %w", name, Bare(err))
		}
	}
	if !writable(target, false) {
		return fmt.Errorf("writing %s: %w", name, fs.ErrPermission)
	}
	uid, gid, links, known := owner(info)
	inPlace := links > 1 || !writable(filepath.Dir(target), true)
	if !inPlace && known && (uid != os.Getuid() || gid != os.Getgid()) {
		// A rename gives the file this process's owner unless it may
		// give the new file the old one's (root may).
		inPlace = os.Getuid() != 0
	}
	if inPlace {
		return rewriteInPlace(target, name, data)
	}
	return writeAs(target, name, data, info.Mode().Perm(), true, func(tmp *os.File) error {
		if known && (uid != os.Getuid() || gid != os.Getgid()) {
			return tmp.Chown(uid, gid)
		}
		return nil
	})
}

// rewriteInPlace truncates the file at path and writes data into it,
// synced: the file keeps its identity (links, owner, mode), at the cost of
// a rename's all-or-nothing.
func rewriteInPlace(path, name string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, Bare(err))
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, Bare(err))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, Bare(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, Bare(err))
	}
	return nil
}

func write(path string, data []byte, perm os.FileMode, sync bool) error {
	return writeAs(path, path, data, perm, sync, nil)
}

// writeAs writes path, naming it name in its errors; prepare, when not
// nil, runs on the temporary file before it is renamed.
func writeAs(path, name string, data []byte, perm os.FileMode, sync bool, prepare func(*os.File) error) error {
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
	if prepare != nil {
		if err := prepare(tmp); err != nil {
			return fmt.Errorf("writing %s: %w", name, Bare(err))
		}
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
