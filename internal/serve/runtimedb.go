package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/agentform/agentform/internal/boltfile"
)

// RuntimeDBName is the runtime database's path under the workspace.
const RuntimeDBName = ".agentform/runtime.db"

// Buckets of the runtime database.
var (
	bucketSessions = []byte("sessions")
	bucketCalls    = []byte("calls")
)

// Record is one call as recorded in the runtime database. Arguments are
// kept only as a digest and outputs not at all: a record never holds what
// a client or a tool passed, which may be secret.
type Record struct {
	// ID is a time-ordered UUID (version 7).
	ID string `json:"id"`
	// Time is when the call started (UTC).
	Time time.Time `json:"time"`
	// Agent and Tool name the agent and the registered tool called.
	Agent string `json:"agent"`
	Tool  string `json:"tool"`
	// Session is the session id the call ran in.
	Session string `json:"session"`
	// Via is "stdio", "http" or "invoke".
	Via string `json:"via"`
	// CapabilityOverride is the override the session's tags came from,
	// "extend:a,b" or "replace:a,b" (Grant.Override); "" when the agent's
	// own tags applied.
	CapabilityOverride string `json:"capability_override,omitempty"`
	// Status is success, partial_success, error, blocked or skipped.
	Status string `json:"status"`
	// DurationMS is how long the call took, in milliseconds.
	DurationMS float64 `json:"duration_ms"`
	// Error says why a call failed or was refused; "" on success.
	Error string `json:"error,omitempty"`
	// PatchApplied reports whether the tool's state update was applied.
	PatchApplied bool `json:"patch_applied"`
	// ArgsDigest is "sha256:<hex>" of the canonical JSON of the arguments
	// (argsDigest). It is unkeyed: a guess of the arguments can be
	// confirmed against it.
	ArgsDigest string `json:"args_digest"`
}

// RuntimeDB is the runtime database of a workspace: session state and call
// records. It is opened for each transaction and closed after, so that
// `agentform calls` can read while a server runs and several servers can
// share a workspace; bbolt's file lock serialises writers.
type RuntimeDB struct {
	path string
}

// OpenRuntimeDB returns the runtime database under the workspace dir. The
// first write creates .agentform/ and the file; reads create nothing.
func OpenRuntimeDB(dir string) (*RuntimeDB, error) {
	return &RuntimeDB{path: filepath.Join(dir, filepath.FromSlash(RuntimeDBName))}, nil
}

// ErrNoRuntimeDB is returned by reads when nothing was ever recorded.
var ErrNoRuntimeDB = errors.New("no calls recorded yet: the runtime database is created by the first agentform serve or invoke")

// dbLocks serialises this process's opens of a runtime database: bbolt's
// file lock would make concurrent calls poll for it (every 50 ms).
var dbLocks sync.Map // path → *sync.Mutex

func (r *RuntimeDB) lock() func() {
	m, _ := dbLocks.LoadOrStore(r.path, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// ErrRuntimeDBDamaged reports a runtime database whose pages cannot all be
// read: truncated, or damaged.
var ErrRuntimeDBDamaged = errors.New("the runtime database is damaged: the file is shorter than the pages it records, or a page is damaged; move it aside (it only holds sessions and call records) and the next call starts a new one")

// open opens the database, refusing a file whose pages are not all in it
// (bbolt would read past the end of its memory map, which kills the
// process) or that makes bbolt panic.
func (r *RuntimeDB) open(readOnly bool) (*bolt.DB, error) {
	var db *bolt.DB
	var err error
	if !boltfile.Guard(func() {
		db, err = bolt.Open(r.path, 0o600, &bolt.Options{Timeout: 10 * time.Second, ReadOnly: readOnly})
	}) {
		return nil, fmt.Errorf("opening %s: %w", r.path, ErrRuntimeDBDamaged)
	}
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
		// Not a database bbolt can read: the same advice as a damaged one.
		return nil, fmt.Errorf("opening %s: %w", r.path, ErrRuntimeDBDamaged)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", r.path, err)
	}
	if !boltfile.Fits(db) {
		_ = db.Close()
		return nil, fmt.Errorf("opening %s: %w", r.path, ErrRuntimeDBDamaged)
	}
	return db, nil
}

// guarded runs a transaction, reporting a damaged page (a bbolt panic, or
// a fault in the memory map) as ErrRuntimeDBDamaged.
func (r *RuntimeDB) guarded(tx func() error) error {
	var err error
	if !boltfile.Guard(func() { err = tx() }) {
		return fmt.Errorf("reading %s: %w", r.path, ErrRuntimeDBDamaged)
	}
	return err
}

func (r *RuntimeDB) update(fn func(tx *bolt.Tx) error) error {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(r.path), err)
	}
	defer r.lock()()
	db, err := r.open(false)
	if err != nil {
		return err
	}
	defer db.Close()
	return r.guarded(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bucketSessions, bucketCalls} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return fn(tx)
		})
	})
}

func (r *RuntimeDB) view(fn func(tx *bolt.Tx) error) error {
	// An empty file is what a process killed between creating the
	// database and writing its first pages leaves: nothing recorded
	// (bbolt cannot open it read-only; the next write initialises it).
	if fi, err := os.Stat(r.path); errors.Is(err, os.ErrNotExist) || err == nil && fi.Size() == 0 {
		return ErrNoRuntimeDB
	}
	defer r.lock()()
	db, err := r.open(true)
	if err != nil {
		return err
	}
	defer db.Close()
	return r.guarded(func() error { return db.View(fn) })
}

// emptyState is the state of a new session.
var emptyState = json.RawMessage(`{"context":{},"messages":[]}`)

// State returns the session's state; a session never seen has the empty
// state.
func (r *RuntimeDB) State(session string) (json.RawMessage, error) {
	var out json.RawMessage
	err := r.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketSessions); b != nil {
			if v := b.Get([]byte(session)); v != nil {
				out = bytes.Clone(v)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNoRuntimeDB) {
		return nil, err
	}
	if out == nil {
		out = bytes.Clone(emptyState)
	}
	return out, nil
}

// Commit records a call and, when update is not nil, replaces the
// session's state with what update returns for the stored state — in one
// transaction, so that concurrent calls of a session do not lose each
// other's patches. update's error is recorded in the record instead of
// failing the commit; applied reports whether the state changed.
//
// base is the state the call read when it started (nil for none): where
// no state is stored, Prune removed it while the call ran, taking the
// session for idle, and base stands in for it, so that the call's update
// applies to the state it was made for rather than to an empty one. The
// state returned is the one stored after the call: without an update
// applied, a pruned session's is the empty state.
//
// There is one record per call: when the new state cannot be written (the
// transaction that holds it fails), the record alone is written, as an
// error saying so, and the state stays as it was. Commit fails only when
// the record itself cannot be written.
func (r *RuntimeDB) Commit(rec *Record, base json.RawMessage, update func(state json.RawMessage) (json.RawMessage, error)) (state json.RawMessage, err error) {
	if rec.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		rec.ID = id.String()
	}
	// Bounded whoever filled them (a tool name or an override a client
	// chose, a schema error naming its arguments' properties).
	rec.Tool = cutText(rec.Tool, maxRecordedTool)
	rec.Error = cutText(rec.Error, maxRecordedError)
	rec.CapabilityOverride = cutText(rec.CapabilityOverride, maxRecordedOverride)
	orig := *rec
	// withState is set when the transaction writes a new state.
	withState := false
	err = r.update(func(tx *bolt.Tx) error {
		sessions := tx.Bucket(bucketSessions)
		state = storedState(sessions, rec.Session, nil)
		if update != nil {
			next, uerr := update(storedState(sessions, rec.Session, base))
			switch {
			case uerr != nil:
				rec.Status = StatusError
				rec.Error = cutText(uerr.Error(), maxRecordedError)
				rec.PatchApplied = false
			default:
				withState = true
				if err := sessions.Put([]byte(rec.Session), next); err != nil {
					return err
				}
				state = next
				rec.PatchApplied = true
			}
		}
		return putRecord(tx, rec)
	})
	if err == nil || !withState {
		return state, err
	}
	// The transaction with the new state failed: record the call without
	// it.
	*rec = orig
	rec.Status, rec.PatchApplied = StatusError, false
	rec.Error = cutText("the session state could not be saved, so the tool's state update was not applied: "+err.Error(), maxRecordedError)
	err = r.update(func(tx *bolt.Tx) error {
		state = storedState(tx.Bucket(bucketSessions), rec.Session, nil)
		return putRecord(tx, rec)
	})
	return state, err
}

// storedState returns the session's stored state; base (Commit) when none
// is stored, and the empty state when there is no base either.
func storedState(sessions *bolt.Bucket, session string, base json.RawMessage) json.RawMessage {
	if v := sessions.Get([]byte(session)); v != nil {
		return bytes.Clone(v)
	}
	if base != nil {
		return bytes.Clone(base)
	}
	return bytes.Clone(emptyState)
}

// putRecord stores a call record under its id.
func putRecord(tx *bolt.Tx, rec *Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketCalls).Put([]byte(rec.ID), b)
}

// Calls returns the recorded calls, oldest first; limit > 0 keeps only the
// last limit.
func (r *RuntimeDB) Calls(limit int) ([]Record, error) {
	var out []Record
	err := r.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCalls)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		var raw [][]byte
		for k, v := c.Last(); k != nil && (limit <= 0 || len(raw) < limit); k, v = c.Prev() {
			raw = append(raw, bytes.Clone(v))
		}
		for i := len(raw) - 1; i >= 0; i-- {
			rec, err := decodeRecord(raw[i])
			if err != nil {
				return err
			}
			out = append(out, rec)
		}
		return nil
	})
	return out, err
}

// Pruned says what Prune removed.
type Pruned struct {
	// Calls is the number of call records removed.
	Calls int
	// Sessions is the number of sessions whose state was removed.
	Sessions int
}

// Prune removes the records of calls that started before before, and the
// state of every session no remaining record belongs to: a session's age is
// that of its last call, since only a call writes its state. A session
// whose records an earlier prune removed goes too. A call running in such
// a session keeps its state: it writes back the state it started from
// with its update (Commit). The file does not
// shrink: bbolt reuses the pages freed for later records.
func (r *RuntimeDB) Prune(before time.Time) (Pruned, error) {
	if _, err := os.Stat(r.path); errors.Is(err, os.ErrNotExist) {
		return Pruned{}, nil
	}
	var out Pruned
	err := r.update(func(tx *bolt.Tx) error {
		calls := tx.Bucket(bucketCalls)
		// Deleting under a cursor makes it skip the next key: collect
		// first. A record's own time decides, not its key's order.
		var old [][]byte
		live := map[string]bool{} // sessions with a record that stays
		err := calls.ForEach(func(k, v []byte) error {
			rec, err := decodeRecord(v)
			if err != nil {
				return err
			}
			if rec.Time.Before(before) {
				old = append(old, bytes.Clone(k))
			} else {
				live[rec.Session] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range old {
			if err := calls.Delete(k); err != nil {
				return err
			}
		}
		sessions := tx.Bucket(bucketSessions)
		var idle [][]byte
		err = sessions.ForEach(func(k, _ []byte) error {
			if !live[string(k)] {
				idle = append(idle, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range idle {
			if err := sessions.Delete(k); err != nil {
				return err
			}
		}
		out = Pruned{Calls: len(old), Sessions: len(idle)}
		return nil
	})
	if err != nil {
		return Pruned{}, err
	}
	return out, nil
}

// decodeRecord decodes a stored call record.
func decodeRecord(v []byte) (Record, error) {
	var rec Record
	if err := json.Unmarshal(v, &rec); err != nil {
		return Record{}, fmt.Errorf("reading a call record: %w", err)
	}
	return rec, nil
}
