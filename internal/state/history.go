package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"go.etcd.io/bbolt"
)

// Resource actions, as planned and recorded in Action.Action.
const (
	// ActionCreate adds a resource that state does not have.
	ActionCreate = "create"
	// ActionUpdate changes a resource state has.
	ActionUpdate = "update"
	// ActionDelete destroys a resource state has and the configuration lost.
	ActionDelete = "delete"
	// ActionNoOp leaves a resource as it is.
	ActionNoOp = "no-op"
	// ActionRemove is recorded by Remove (agentform state rm): the resource
	// was forgotten by state; nothing on disk changed.
	ActionRemove = "remove"
)

// Capability changes, as recorded in CapabilityChange.Change.
const (
	// ChangeGranted means the agent may now call the tool.
	ChangeGranted = "granted"
	// ChangeRevoked means the agent may no longer call the tool.
	ChangeRevoked = "revoked"
)

// Action is what one write did to one address.
type Action struct {
	// Address is the resource's address.
	Address string `json:"address"`
	// Action is one of ActionCreate, ActionUpdate, ActionDelete, ActionNoOp or
	// ActionRemove.
	Action string `json:"action"`
	// Reason explains the action when the configuration alone does not (e.g.
	// "artifact on disk differs from state").
	Reason string `json:"reason,omitempty"`
}

// CapabilityChange is one cell of the matrix that a write changed.
type CapabilityChange struct {
	// Agent is the agent's name.
	Agent string `json:"agent"`
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Change is ChangeGranted or ChangeRevoked.
	Change string `json:"change"`
}

// CheckResult is the outcome of one check run by an apply.
type CheckResult struct {
	// Name identifies the check.
	Name string `json:"name"`
	// Status is the check's outcome ("pass", "warn", "fail", ...).
	Status string `json:"status"`
	// Message says what the check found.
	Message string `json:"message,omitempty"`
}

// HistoryEntry records one write of the state: who, when, with which
// agentform, and what changed. Lists are stored in the order given.
type HistoryEntry struct {
	// Serial is the state serial this write produced; Commit sets it.
	Serial uint64 `json:"serial"`
	// Time is when the write happened, in UTC; Commit fills it in when zero.
	Time time.Time `json:"time"`
	// UserHost is "user@host" of the writer; Commit fills it in when empty.
	UserHost string `json:"user_host"`
	// Version is the agentform version; Commit fills it in from
	// Options.Version when empty.
	Version string `json:"version"`
	// Operation is the command that wrote ("apply", "state rm"); Commit fills
	// it in from Options.Operation (or "apply") when empty.
	Operation string `json:"operation,omitempty"`
	// Actions lists the resource actions.
	Actions []Action `json:"actions,omitempty"`
	// CapabilityChanges lists the matrix cells granted or revoked.
	CapabilityChanges []CapabilityChange `json:"capability_changes,omitempty"`
	// Checks lists the check results.
	Checks []CheckResult `json:"checks,omitempty"`
}

// History returns every history entry in ascending serial order.
func (db *DB) History() ([]HistoryEntry, error) {
	return db.historyFrom(nil)
}

// HistoryAfter returns the history entries with a serial above serial, in
// ascending serial order. It seeks past the older entries: they are neither
// read nor decoded, so one that is damaged does not fail it, and its cost
// does not grow with the history's length.
func (db *DB) HistoryAfter(serial uint64) ([]HistoryEntry, error) {
	if serial == math.MaxUint64 {
		return []HistoryEntry{}, nil
	}
	return db.historyFrom(serialKey(serial + 1))
}

// historyFrom returns the history entries from the key start on (from the
// first when start is nil), in ascending serial order: the keys are
// big-endian serials, and bbolt's byte order is their numeric order.
func (db *DB) historyFrom(start []byte) ([]HistoryEntry, error) {
	out := []HistoryEntry{}
	err := db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketHistory)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.First()
		if start != nil {
			k, v = c.Seek(start)
		}
		for ; k != nil; k, v = c.Next() {
			e, err := decodeHistory(k, v)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fillEntry completes e for storage under serial.
func (db *DB) fillEntry(e HistoryEntry, serial uint64, operation string) HistoryEntry {
	e.Serial = serial
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	// UTC without a monotonic reading: what is stored is what is read back.
	e.Time = e.Time.UTC().Round(0)
	if e.UserHost == "" {
		e.UserHost = userHost()
	}
	if e.Version == "" {
		e.Version = db.opts.Version
	}
	if e.Operation == "" {
		e.Operation = db.opts.Operation
	}
	if e.Operation == "" {
		e.Operation = operation
	}
	return e
}

// putHistory stores e under its serial.
func putHistory(tx *bbolt.Tx, e HistoryEntry) error {
	v, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding history %d: %w", e.Serial, err)
	}
	b, err := tx.CreateBucketIfNotExists(bucketHistory)
	if err != nil {
		return err
	}
	return b.Put(serialKey(e.Serial), v)
}

// decodeHistory decodes the entry stored under key, which must be its serial.
func decodeHistory(key, v []byte) (HistoryEntry, error) {
	if len(key) != 8 {
		return HistoryEntry{}, fmt.Errorf("decoding history %q: %w: key of %d bytes, want 8", key, ErrCorrupt, len(key))
	}
	serial := binary.BigEndian.Uint64(key)
	var e HistoryEntry
	if err := json.Unmarshal(v, &e); err != nil {
		return HistoryEntry{}, fmt.Errorf("decoding history %d: %w: %w", serial, ErrCorrupt, err)
	}
	if e.Serial != serial {
		return HistoryEntry{}, fmt.Errorf("decoding history %d: %w: record has serial %d", serial, ErrCorrupt, e.Serial)
	}
	return e, nil
}
