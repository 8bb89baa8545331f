package state

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// bucketPending holds the artifacts an apply is about to write or to
// remove (key: the path as recorded in Artifact.Path; value: the
// "sha256:<hex>" digests, separated by a space, of the bytes applies
// write there, or of the artifact one removes: two interrupted applies
// can each leave different bytes to the same path, and a file holding
// either is theirs). A value with one digest is the record as first
// written; agentform versions that read a single digest see a value
// with several as a digest no file matches, and remove nothing. It is absent from databases written before it
// existed and whenever nothing is pending; readers treat a missing bucket
// as an empty record.
var bucketPending = []byte("pending")

// Pending returns the pending record (SetPending, Commit.Pending): path →
// the digests a file there may hold to be removed. The paths are artifacts an apply wrote, or meant to
// remove, that state may not own: after a crash, the next apply removes
// the files that still hold exactly those bytes and that no resource owns
// (DESIGN §9). A path recorded without a digest never matches a file.
func (db *DB) Pending() (map[string][]string, error) {
	out := map[string][]string{}
	err := db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketPending)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) == 0 {
				return fmt.Errorf("decoding pending: %w: empty path", ErrCorrupt)
			}
			out[string(k)] = strings.Fields(string(v))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetPending replaces the pending record with pending (path → expected
// digests; none clears it) in one transaction. It is not a commit: the
// serial and the history do not change.
func (db *DB) SetPending(pending map[string][]string) error {
	if db.opts.ReadOnly {
		return fmt.Errorf("recording pending artifacts: %w", ErrReadOnly)
	}
	if err := checkPending(pending); err != nil {
		return fmt.Errorf("recording pending artifacts: %w", err)
	}
	if err := db.update(func(tx *bbolt.Tx) error { return putPending(tx, pending) }); err != nil {
		return fmt.Errorf("recording pending artifacts: %w", err)
	}
	return nil
}

func checkPending(pending map[string][]string) error {
	for p, ds := range pending {
		if p == "" {
			return fmt.Errorf("%w: empty pending artifact path", ErrInvalid)
		}
		if len(ds) == 0 {
			return fmt.Errorf("%w: pending artifact %q: no digest", ErrInvalid, p)
		}
		for _, d := range ds {
			if !strings.HasPrefix(d, "sha256:") || strings.ContainsFunc(d, unicode.IsSpace) {
				return fmt.Errorf("%w: pending artifact %q: digest %q is not sha256:<hex>", ErrInvalid, p, d)
			}
		}
	}
	return nil
}

// putPending replaces the pending bucket with pending; with none it
// removes the bucket, so that a state with nothing pending looks like one
// written before the record existed.
func putPending(tx *bbolt.Tx, pending map[string][]string) error {
	if err := tx.DeleteBucket(bucketPending); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return fmt.Errorf("clearing bucket %s: %w", bucketPending, err)
	}
	if len(pending) == 0 {
		return nil
	}
	b, err := tx.CreateBucket(bucketPending)
	if err != nil {
		return fmt.Errorf("creating bucket %s: %w", bucketPending, err)
	}
	for p, ds := range pending {
		if err := b.Put([]byte(p), []byte(strings.Join(ds, " "))); err != nil {
			return fmt.Errorf("storing pending artifact %q: %w", p, err)
		}
	}
	return nil
}
