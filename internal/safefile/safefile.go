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
	"io"
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
// hard links, an owner or group the new file cannot be given, or sits in
// a directory this process cannot create in), the file is rewritten in
// place instead, and put back as it was if that fails (a full disk). perm
// is only that of a new file. A link that leads to no file is an error.
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
	if links > 1 || !writable(filepath.Dir(target), true) {
		return rewriteInPlace(target, name, data)
	}
	err = writeAs(target, name, data, info.Mode().Perm(), true, func(tmp *os.File) error {
		if !known {
			return nil
		}
		// The new file takes the directory's group (setgid) or this
		// process's, and this process's owner: give it the old file's
		// where they differ, if this process may.
		tinfo, err := tmp.Stat()
		if err != nil {
			return err
		}
		tuid, tgid, _, _ := owner(tinfo)
		if tuid == uid && tgid == gid {
			return nil
		}
		if err := tmp.Chown(uid, gid); err != nil {
			return errKeepIdentity
		}
		return nil
	})
	if errors.Is(err, errKeepIdentity) {
		return rewriteInPlace(target, name, data)
	}
	return err
}

// writeAt is (*os.File).WriteAt of the new content in rewriteInPlace; a
// variable so that tests can fail it midway.
var writeAt = (*os.File).WriteAt

// errKeepIdentity stops a rename that would give a file another owner or
// group: WriteThrough rewrites it in place instead.
var errKeepIdentity = errors.New("the new file cannot take the old one's owner and group")

// rewriteInPlace writes data over the file at path, synced, so that the
// file keeps its identity (links, owner, mode): at the cost of a rename's
// all-or-nothing, which it makes up for as far as it can. The old content
// is read first; the new one is written over it from the start, and the
// file cut to its length only once it is all written. When a write fails
// (a full disk, a file size limit) the old content is written back, into
// the space it had, and the error says whether that worked.
func rewriteInPlace(path, name string, data []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, Bare(err))
	}
	defer f.Close()
	old, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("writing %s: reading it first: %w", name, Bare(err))
	}
	_, err = writeAt(f, data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		return nil
	}
	// Put the old content back: it fits where it was.
	_, rerr := f.WriteAt(old, 0)
	if rerr == nil {
		rerr = f.Truncate(int64(len(old)))
	}
	if rerr == nil {
		rerr = f.Sync()
	}
	if rerr != nil {
		return fmt.Errorf("writing %s: %w; putting its old content back failed too (%v): the file is damaged, restore it from version control", name, Bare(err), Bare(rerr))
	}
	return fmt.Errorf("writing %s: %w; the file is as it was", name, Bare(err))
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

// RemoveMatching removes the files in dir whose names match pattern
// (filepath.Match syntax, applied to the name alone): the temporary files
// a killed writer left. dir is a path, never a pattern: a directory whose
// name holds "[", "*" or "?" is that directory, not the others its name
// would match as a pattern. Failures leave harmless litter and are
// ignored.
func RemoveMatching(dir, pattern string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if ok, _ := filepath.Match(pattern, e.Name()); ok && !e.IsDir() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
