package state

import (
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// bucketPending holds the artifact paths an apply is about to write or to
// remove (key: the path as recorded in Artifact.Path; value: empty). It is
// absent from databases written before it existed and whenever nothing is
// pending; readers treat a missing bucket as an empty record.
var bucketPending = []byte("pending")

// Pending returns the artifact paths recorded as pending (SetPending,
// Commit.Pending), sorted. They are paths an apply wrote, or meant to
// remove, that state may not own: after a crash, the next apply removes
// those no resource owns (DESIGN §9).
func (db *DB) Pending() ([]string, error) {
	var out []string
	err := db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketPending)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, _ []byte) error {
			if len(k) == 0 {
				return fmt.Errorf("decoding pending: %w: empty path", ErrCorrupt)
			}
			out = append(out, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetPending replaces the pending record with paths (none clears it) in one
// transaction. It is not a commit: the serial and the history do not
// change.
func (db *DB) SetPending(paths []string) error {
	if db.opts.ReadOnly {
		return fmt.Errorf("recording pending artifacts: %w", ErrReadOnly)
	}
	if err := checkPending(paths); err != nil {
		return fmt.Errorf("recording pending artifacts: %w", err)
	}
	if err := db.update(func(tx *bbolt.Tx) error { return putPending(tx, paths) }); err != nil {
		return fmt.Errorf("recording pending artifacts: %w", err)
	}
	return nil
}

func checkPending(paths []string) error {
	if slices.Contains(paths, "") {
		return fmt.Errorf("%w: empty pending artifact path", ErrInvalid)
	}
	return nil
}

// putPending replaces the pending bucket with paths; with none it removes
// the bucket, so that a state with nothing pending looks like one written
// before the record existed.
func putPending(tx *bbolt.Tx, paths []string) error {
	if err := tx.DeleteBucket(bucketPending); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return fmt.Errorf("clearing bucket %s: %w", bucketPending, err)
	}
	if len(paths) == 0 {
		return nil
	}
	b, err := tx.CreateBucket(bucketPending)
	if err != nil {
		return fmt.Errorf("creating bucket %s: %w", bucketPending, err)
	}
	for _, p := range paths {
		if err := b.Put([]byte(p), []byte{}); err != nil {
			return fmt.Errorf("storing pending artifact %q: %w", p, err)
		}
	}
	return nil
}
