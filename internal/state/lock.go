package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/agentform/agentform/internal/safefile"
)

// Why there is no force-unlock command: the lock is bbolt's flock on
// state.db, which the kernel releases when the holding process exits, however
// it exits (SIGKILL, OOM kill, power loss). A lock can therefore never outlive
// its holder, unlike Terraform's remote-backend locks, which are records that
// a crashed process leaves behind. What a killed writer does leave behind is
// its lock info file; it describes no lock, so Open ignores it and the next
// writer replaces it. If a LockError names a holder, that process is alive
// (a killed writer's info from this host is told apart and named as left
// over; one from another host sharing the workspace is not): wait for it or
// stop it.

// LockInfo describes the writer holding the state lock. It is stored as JSON
// in <workspace>/.agentform/state.db.lock.info, with Terraform's field names.
type LockInfo struct {
	// ID is a uuid unique to this hold of the lock.
	ID string `json:"ID"`
	// Operation is the command holding the lock ("apply", "state rm", ...).
	Operation string `json:"Operation"`
	// Who is "user@host" of the holder.
	Who string `json:"Who"`
	// PID is the holder's process id on the host in Who.
	PID int `json:"PID"`
	// Version is the holder's agentform version.
	Version string `json:"Version"`
	// Created is when the holder took the lock, in UTC.
	Created time.Time `json:"Created"`
}

// LockError is returned by Open when another process holds the state lock for
// longer than Options.LockTimeout. It wraps ErrLocked; callers print it as
// Terraform's "Error acquiring the state lock", with Info when present.
type LockError struct {
	// Path is the state database.
	Path string
	// Info describes the writer holding the lock. It is nil when the holder
	// recorded none: a reader (plan) holding the shared lock, or a writer
	// between taking the lock and recording its info.
	Info *LockInfo
	// Stale is lock info that names no holder: a writer on this host that
	// no longer runs left it (killed), and the lock is held by a process
	// that recorded none. Info is nil then.
	Stale *LockInfo
	// Waited is how long Open waited for the lock (Options.LockTimeout):
	// 0 when it failed at once.
	Waited time.Duration
	// Err is bbolt's timeout error.
	Err error
}

// Error describes the lock and its holder on one line, and how long Open
// waited for it.
func (e *LockError) Error() string {
	msg := "state is locked by another process (it recorded no lock info: a reader such as plan, or a writer that is starting)"
	if i := e.Stale; i != nil && e.Info == nil {
		msg = fmt.Sprintf("state is locked by another process (it recorded no lock info: a reader such as plan, or a writer that is starting; the lock info of %s, pid %d, is left over: that process no longer runs)",
			orUnknown(i.Operation), i.PID)
	}
	if i := e.Info; i != nil {
		msg = fmt.Sprintf("state is locked by %s (ID %s) by %s, pid %d, agentform %s, since %s",
			orUnknown(i.Operation), orUnknown(i.ID), orUnknown(i.Who), i.PID, orUnknown(i.Version),
			i.Created.UTC().Format(time.RFC3339))
	}
	if e.Waited > 0 {
		msg += fmt.Sprintf("; waited %s for it", e.Waited)
	}
	return msg
}

// Unwrap returns ErrLocked and bbolt's timeout error.
func (e *LockError) Unwrap() []error { return []error{ErrLocked, e.Err} }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// newLockInfo describes this process as a writer.
func newLockInfo(operation, version string) (*LockInfo, error) {
	id, err := uuid.NewRandom()
	if err != nil {
		return nil, fmt.Errorf("generating lock id: %w", err)
	}
	return &LockInfo{
		ID:        id.String(),
		Operation: operation,
		Who:       userHost(),
		PID:       os.Getpid(),
		Version:   version,
		Created:   time.Now().UTC().Round(0),
	}, nil
}

// userHost returns "user@host" for this process, with "unknown" for a part
// the system does not tell.
func userHost() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = os.Getenv("USER")
	}
	host, err := os.Hostname()
	if err != nil {
		host = ""
	}
	return orUnknown(name) + "@" + orUnknown(host)
}

// writeLockInfo replaces the lock info file atomically: readers of the file
// see the previous content or the new one, never a part.
func writeLockInfo(dir string, info *LockInfo) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, LockInfoName), lockInfoTemp, append(data, '\n'))
}

// readLockInfo returns the recorded lock info, or nil when there is none or
// it does not decode (it is advisory: a bad file must not hide the LockError).
func readLockInfo(dir string) *LockInfo {
	data, err := safefile.Read(filepath.Join(dir, LockInfoName), 1<<20)
	if err != nil {
		return nil
	}
	var info LockInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil
	}
	return &info
}

// holderInfo is the lock info to name the holder of a lock Open could not
// take by: the file's, unless a writer of this host that no longer runs
// left it, which is returned as stale.
func holderInfo(dir string) (info, stale *LockInfo) {
	info = readLockInfo(dir)
	if info != nil && info.PID > 0 && info.Who == userHost() && processGone(info.PID) {
		return nil, info
	}
	return info, nil
}

// removeLockInfo removes the lock info file; a missing file is fine.
func removeLockInfo(dir string) error {
	err := os.Remove(filepath.Join(dir, LockInfoName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// lockInfoTemp is the pattern of writeLockInfo's temp files.
const lockInfoTemp = LockInfoName + ".tmp-*"

// removeLockInfoTemps removes temp files a killed writer left behind. Only a
// writer holding the flock may call it; failures leave harmless litter.
func removeLockInfoTemps(dir string) {
	safefile.RemoveMatching(dir, lockInfoTemp)
}

// writeFileAtomic writes data to a temp file named after pattern (see
// os.CreateTemp) in path's directory, fsyncs it and renames it over path.
func writeFileAtomic(path, pattern string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	// Make the rename durable where the platform allows syncing a directory;
	// the file is advisory, so a platform that cannot is not an error.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
