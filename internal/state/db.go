package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/agentform/agentform/internal/boltfile"
)

// Paths of the state database inside a workspace.
const (
	// DirName is the workspace directory that holds the state database.
	DirName = ".agentform"
	// FileName is the state database's file name inside DirName.
	FileName = "state.db"
	// LockInfoName is the file inside DirName where a writer records who holds
	// the lock.
	LockInfoName = "state.db.lock.info"
)

// failFast is the bbolt lock timeout used for Options.LockTimeout 0: bbolt
// treats 0 as "wait forever", while any positive timeout smaller than its
// 50 ms retry interval gives up after the first failed attempt.
const failFast = time.Nanosecond

// Options configures Open.
type Options struct {
	// ReadOnly opens for reading (shared lock); writers take the exclusive lock.
	// A read-only DB refuses Commit and Remove with ErrReadOnly.
	ReadOnly bool
	// LockTimeout is how long to wait for the lock; 0 fails at once if another
	// process holds it. A setting that gives it is checked with
	// CheckLockTimeout.
	LockTimeout time.Duration
	// Operation ("apply", "state rm", ...) and Version (agentform version) are
	// recorded in the lock info of a writer, and are the defaults of the
	// history entries it writes.
	Operation, Version string
}

// CheckLockTimeout returns an error, to follow the setting's name ("must
// not be negative"), when d cannot be Options.LockTimeout as a user means
// it: 0 fails at once, and a negative wait is a mistake that would do the
// same. The CLI's -lock-timeout and the provider's lock_timeout share it.
func CheckLockTimeout(d time.Duration) error {
	if d < 0 {
		return errors.New("must not be negative")
	}
	return nil
}

// DB is an open state database. Its methods are safe for concurrent use by
// goroutines, except Close, which must come last. A DB holds the bbolt file
// lock until Close: keep it open only for the duration of one command.
type DB struct {
	bolt     *bbolt.DB
	dir      string // <workspace>/.agentform
	path     string // <workspace>/.agentform/state.db
	opts     Options
	closeMu  sync.Mutex
	closed   bool
	lockInfo *LockInfo    // the writer's own lock info; nil for readers
	created  createdPaths // what this writer's Open created
}

// Open opens (a writer creates the directory and file) the state database of
// a workspace directory.
//
// A read-only Open of a workspace with no state returns ErrNoState (callers
// treat it as empty) and creates nothing. When another process holds the lock
// for longer than opts.LockTimeout, Open returns a *LockError wrapping
// ErrLocked. A database written by another format version returns ErrCorrupt.
func Open(workspace string, opts Options) (*DB, error) {
	dir := filepath.Join(workspace, DirName)
	path := filepath.Join(dir, FileName)
	// The lock timeout bounds the whole Open, every attempt together.
	deadline, wait := time.Now().Add(opts.LockTimeout), opts.LockTimeout
	for attempt := 1; ; attempt++ {
		db, again, err := openOnce(dir, path, opts)
		if le := (*LockError)(nil); errors.As(err, &le) {
			// What was waited is the whole wait, not the last attempt's.
			le.Waited = max(wait, 0)
		}
		if !again || attempt == maxOpenAttempts {
			return db, err
		}
		if opts.LockTimeout > 0 {
			if opts.LockTimeout = time.Until(deadline); opts.LockTimeout <= 0 {
				opts.LockTimeout = failFast
			}
		}
	}
}

// maxOpenAttempts bounds how often Open starts again after the file it
// locked was removed (see openOnce): each time another writer created the
// database, locked it and removed it again before a commit.
const maxOpenAttempts = 20

// openOnce is one attempt of Open. again reports that the file this
// attempt opened was removed or replaced while it waited for the lock (a
// writer that created it closed it without a commit, see Close), or, for a
// writer, that the directory was removed before the file could be created
// in it: Open tries again, and err says what happened if it gives up. A
// reader whose file was removed and not created again has no state.
func openOnce(dir, path string, opts Options) (_ *DB, again bool, _ error) {
	if err := checkPlace(dir, path); err != nil {
		return nil, false, err
	}
	var created createdPaths
	if opts.ReadOnly {
		// Check first: bbolt would fail on a missing file anyway, but a file a
		// writer created and has not initialised yet (size 0) would make bbolt
		// try to initialise it through a read-only descriptor.
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, false, fmt.Errorf("opening %s: %w", path, ErrNoState)
		case err != nil:
			return nil, false, fmt.Errorf("opening state: %w", err)
		case fi.Size() == 0:
			return nil, false, fmt.Errorf("opening %s: %w", path, ErrNoState)
		}
	} else {
		_, err := os.Lstat(dir)
		created.dir = errors.Is(err, fs.ErrNotExist)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, false, fmt.Errorf("creating state directory: %w", err)
		}
	}

	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = failFast
	}
	var file *os.File // the descriptor bbolt locks
	bopts := bbolt.Options{Timeout: timeout, ReadOnly: opts.ReadOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			file = f
			return f, err
		}}
	var bdb *bbolt.DB
	var err error
	if !boltfile.Guard(func() {
		if opts.ReadOnly {
			bdb, err = bbolt.Open(path, 0o600, &bopts)
		} else {
			bdb, err = boltfile.OpenWriter(path, 0o600, bopts)
		}
	}) {
		// bbolt panicked, or faulted reading a page, while it opened a
		// damaged file.
		return nil, false, fmt.Errorf("opening %s: %w: %s", path, ErrCorrupt, damagedPages)
	}
	if err != nil {
		// A writer's directory or file removed between MkdirAll and the
		// open: by another writer's Close, which removes what it created.
		again := !opts.ReadOnly && errors.Is(err, fs.ErrNotExist)
		return nil, again, openError(dir, path, opts, err)
	}
	if !sameFile(file, path) {
		// The file was removed (or replaced) while this waited for its
		// lock: a lock on it guards nothing, and a reader would read what
		// no one keeps (Fits, which looks at the path, would even call it
		// damaged).
		_ = bdb.Close()
		if _, err := os.Lstat(path); opts.ReadOnly && errors.Is(err, fs.ErrNotExist) {
			return nil, false, fmt.Errorf("opening %s: %w", path, ErrNoState)
		}
		return nil, true, fmt.Errorf("opening %s: the file was removed while agentform waited for its lock", path)
	}
	if !boltfile.Fits(bdb) {
		_ = bdb.Close()
		return nil, false, fmt.Errorf("opening %s: %w: %s", path, ErrCorrupt, damagedPages)
	}
	db := &DB{bolt: bdb, dir: dir, path: path, opts: opts, created: created}
	if !opts.ReadOnly {
		// We hold the exclusive flock from here on, so no other writer can be
		// writing the lock info; any file already there is stale (its writer
		// died without Close) and is replaced, and temp files are leftovers of
		// a writer killed while recording its info. Record it first, before
		// any other work, so that others see who holds the lock.
		removeLockInfoTemps(dir)
		info, err := newLockInfo(opts.Operation, opts.Version)
		if err == nil {
			err = writeLockInfo(dir, info)
		}
		if err != nil {
			_ = db.Close()
			return nil, false, fmt.Errorf("recording state lock info: %w", err)
		}
		db.lockInfo = info
	}
	if err := db.prepare(); err != nil {
		_ = db.Close()
		return nil, false, err
	}
	return db, false, nil
}

// createdPaths records what a writer's Open created: Close removes the
// directory again when it removes a blank database and the directory is
// empty.
type createdPaths struct {
	dir bool
}

// sameFile reports whether path still names the file f is open on.
func sameFile(f *os.File, path string) bool {
	if f == nil {
		return false
	}
	open, err := f.Stat()
	if err != nil {
		return false
	}
	named, err := os.Stat(path)
	return err == nil && os.SameFile(open, named)
}

// checkPlace refuses a state directory or database file that is something
// else (a file where the directory should be, a directory where the file
// should be), with what to do, rather than the system's error.
func checkPlace(dir, path string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s is not a directory: agentform keeps its state database in it; move the file away", dir)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a file: it should be agentform's state database; move it away", path)
	}
	return nil
}

// damagedPages says why a state file whose pages cannot all be read is
// corrupt.
const damagedPages = "the file is shorter than the pages it records, or a page is damaged (was it truncated or copied while written?)"

// openError classifies an error from bbolt.Open.
func openError(dir, path string, opts Options, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		info, stale := holderInfo(dir)
		return &LockError{Path: path, Info: info, Stale: stale, Err: err, Waited: max(opts.LockTimeout, 0)}
	case opts.ReadOnly && errors.Is(err, fs.ErrNotExist):
		// Removed between the Stat and the open.
		return fmt.Errorf("opening %s: %w", path, ErrNoState)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch),
		errors.Is(err, berrors.ErrChecksum),
		// bbolt has no error value for a file shorter than its pages.
		strings.HasPrefix(err.Error(), "file size too small"):
		return fmt.Errorf("opening %s: %w: %w", path, ErrCorrupt, err)
	}
	return fmt.Errorf("opening %s: %w", path, err)
}

// Path returns the path of the database file.
func (db *DB) Path() string { return db.path }

// Close releases the database and its lock. A writer removes its lock info
// file first, while it still holds the flock, so it can never remove the lock
// info of the next writer. A writer removes the database file when
// nothing was ever recorded in it (no commit, no pending artifacts), and
// the state directory if its Open created that and it is empty: an apply
// that fails before it writes anything leaves the workspace as it found
// it, and a blank file an earlier writer left (killed before its first
// commit) goes with the next one. Another writer or reader waiting for the
// lock on the removed file sees that and opens the path again, or finds no
// state (openOnce). Close is idempotent.
func (db *DB) Close() error {
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	var errs []error
	if db.lockInfo != nil {
		if err := removeLockInfo(db.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing state lock info: %w", err))
		}
	}
	removeFile := !db.opts.ReadOnly && db.blank()
	if removeFile {
		if err := os.Remove(db.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s, which nothing was recorded in: %w", db.path, err))
			removeFile = false
		}
	}
	if err := db.bolt.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing %s: %w", db.path, err))
	}
	if removeFile && db.created.dir {
		// Only if empty: the resolution cache, artifacts or another
		// writer's new database may be in it by now. A writer that made
		// the directory and has yet to create its file there opens again.
		_ = os.Remove(db.dir)
	}
	return errors.Join(errs...)
}

// blank reports whether the database holds nothing but what prepare
// writes: no resource, matrix row, history entry, pending artifact,
// lineage or serial. A database that cannot be read is not blank.
func (db *DB) blank() bool {
	blank := true
	err := db.view(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			if string(name) == string(bucketMeta) {
				return b.ForEach(func(k, _ []byte) error {
					if string(k) != string(keyFormatVersion) {
						blank = false
					}
					return nil
				})
			}
			if k, _ := b.Cursor().First(); k != nil {
				blank = false
			}
			return nil
		})
	})
	return err == nil && blank
}

// view runs fn in a read transaction. bbolt may panic on a damaged page; that
// is reported as ErrCorrupt rather than crashing the command.
func (db *DB) view(fn func(*bbolt.Tx) error) (err error) {
	// A fault in the memory map (a page past the end of the file) is a
	// panic too, not the end of the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading %s: %w: %v", db.path, ErrCorrupt, r)
		}
	}()
	return db.bolt.View(fn)
}

// update runs fn in one write transaction: everything fn writes is committed
// together or not at all.
func (db *DB) update(fn func(*bbolt.Tx) error) (err error) {
	if db.opts.ReadOnly {
		return ErrReadOnly
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("writing %s: %w: %v", db.path, ErrCorrupt, r)
		}
	}()
	return db.bolt.Update(fn)
}
