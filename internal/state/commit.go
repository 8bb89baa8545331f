package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Commit is the outcome of one apply, written by DB.Commit.
type Commit struct {
	// Resources replace every resource in state. Each Address must be
	// "<Type>.<Name>" and appear once.
	Resources []Resource
	// Matrix replaces the whole matrix: agent name → tools it may call. Rows
	// are stored sorted and without duplicates.
	Matrix map[string][]string
	// Tools replaces the registered tools as applied, the matrix's
	// columns (stored sorted and without duplicates under meta "tools"):
	// with them a tool added since is told from one no agent could call.
	Tools []string
	// Entry is the history entry; Commit sets its Serial and fills in Time,
	// UserHost, Version and Operation when they are zero.
	Entry HistoryEntry
	// Pending replaces the pending artifact record (see Pending) in the
	// same transaction: the artifacts the apply removes once the commit
	// is durable (deleted agents', or left behind by a move), path → the
	// digests state recorded for them. Empty clears the record.
	Pending map[string][]string
}

// Commit is one apply: it replaces all resources and the whole matrix, appends
// a history entry and bumps the serial, in ONE bbolt transaction, so a crash
// at any point leaves the previous state or this one. It sets the lineage at
// the first commit. Time and UserHost are filled in when zero. It returns the
// new Meta.
func (db *DB) Commit(c Commit) (Meta, error) {
	if db.opts.ReadOnly {
		return Meta{}, fmt.Errorf("committing state: %w", ErrReadOnly)
	}
	// Encode everything before the transaction: it holds bbolt's writer lock,
	// and a record that cannot be stored must leave state untouched.
	type record struct{ key, value []byte }
	resources := make([]record, 0, len(c.Resources))
	seen := make(map[string]bool, len(c.Resources))
	for _, r := range c.Resources {
		if seen[r.Address] {
			return Meta{}, fmt.Errorf("committing state: %w: duplicate resource address %q", ErrInvalid, r.Address)
		}
		seen[r.Address] = true
		v, err := encodeResource(r)
		if err != nil {
			return Meta{}, fmt.Errorf("committing state: %w", err)
		}
		resources = append(resources, record{[]byte(r.Address), v})
	}
	matrix, err := normaliseMatrix(c.Matrix)
	if err != nil {
		return Meta{}, fmt.Errorf("committing state: %w", err)
	}
	if err := checkPending(c.Pending); err != nil {
		return Meta{}, fmt.Errorf("committing state: %w", err)
	}
	tools, err := encodeTools(c.Tools)
	if err != nil {
		return Meta{}, fmt.Errorf("committing state: %w", err)
	}
	rows := make([]record, 0, len(matrix))
	for agent, tools := range matrix {
		v, err := json.Marshal(tools)
		if err != nil {
			return Meta{}, fmt.Errorf("committing state: encoding matrix %q: %w", agent, err)
		}
		rows = append(rows, record{[]byte(agent), v})
	}

	var m Meta
	err = db.update(func(tx *bbolt.Tx) error {
		var err error
		if m, err = bumpMeta(tx); err != nil {
			return err
		}
		res, err := recreateBucket(tx, bucketResources)
		if err != nil {
			return err
		}
		for _, r := range resources {
			if err := res.Put(r.key, r.value); err != nil {
				return fmt.Errorf("storing resource %q: %w", r.key, err)
			}
		}
		mx, err := recreateBucket(tx, bucketMatrix)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := mx.Put(r.key, r.value); err != nil {
				return fmt.Errorf("storing matrix %q: %w", r.key, err)
			}
		}
		if err := tx.Bucket(bucketMeta).Put(keyTools, tools); err != nil {
			return fmt.Errorf("storing tools: %w", err)
		}
		if err := putPending(tx, c.Pending); err != nil {
			return err
		}
		return putHistory(tx, db.fillEntry(c.Entry, m.Serial, "apply"))
	})
	if err != nil {
		return Meta{}, fmt.Errorf("committing state: %w", err)
	}
	return m, nil
}

// Remove deletes one resource from state (agentform state rm), recording a
// history entry with ActionRemove and bumping the serial. Removing an agent
// also drops its matrix row, so that the next plan reports the agent's
// capabilities as granted again, as it reports the agent as created. Nothing
// on disk outside the database changes. It returns ErrNoResource when the
// address is not in state.
func (db *DB) Remove(address string) (Meta, error) {
	if db.opts.ReadOnly {
		return Meta{}, fmt.Errorf("removing %q from state: %w", address, ErrReadOnly)
	}
	var m Meta
	err := db.update(func(tx *bbolt.Tx) error {
		res := tx.Bucket(bucketResources)
		if address == "" || res == nil || res.Get([]byte(address)) == nil {
			return ErrNoResource
		}
		if err := res.Delete([]byte(address)); err != nil {
			return err
		}
		if agent, ok := strings.CutPrefix(address, "agent."); ok {
			if mx := tx.Bucket(bucketMatrix); mx != nil {
				if err := mx.Delete([]byte(agent)); err != nil {
					return err
				}
			}
		}
		var err error
		if m, err = bumpMeta(tx); err != nil {
			return err
		}
		entry := HistoryEntry{Actions: []Action{{Address: address, Action: ActionRemove}}}
		return putHistory(tx, db.fillEntry(entry, m.Serial, "state rm"))
	})
	if err != nil {
		return Meta{}, fmt.Errorf("removing %q from state: %w", address, err)
	}
	return m, nil
}

// recreateBucket empties a bucket by deleting and creating it, which frees
// its pages at once instead of deleting keys one by one.
func recreateBucket(tx *bbolt.Tx, name []byte) (*bbolt.Bucket, error) {
	if err := tx.DeleteBucket(name); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return nil, fmt.Errorf("clearing bucket %s: %w", name, err)
	}
	b, err := tx.CreateBucket(name)
	if err != nil {
		return nil, fmt.Errorf("creating bucket %s: %w", name, err)
	}
	return b, nil
}
