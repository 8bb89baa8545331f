package state

import (
	"encoding/binary"
	"fmt"

	"github.com/google/uuid"
	"go.etcd.io/bbolt"
)

// FormatVersion is the format_version this package reads and writes. A
// database with any other format_version is refused with ErrCorrupt, never
// rewritten.
const FormatVersion = "1"

var (
	bucketMeta      = []byte("meta")
	bucketResources = []byte("resources")
	bucketMatrix    = []byte("matrix")
	bucketHistory   = []byte("history")

	keyFormatVersion = []byte("format_version")
	keyLineage       = []byte("lineage")
	keySerial        = []byte("serial")
	keyTools         = []byte("tools")
)

// Meta identifies a state: which database (Lineage) and which write of it
// (Serial). A saved plan carries both, and apply refuses it when they moved.
type Meta struct {
	// FormatVersion is the database format, always FormatVersion.
	FormatVersion string `json:"format_version"`
	// Lineage is the uuid set at the first commit; empty before it.
	Lineage string `json:"lineage"`
	// Serial counts the writes (Commit and Remove); 0 before the first commit.
	Serial uint64 `json:"serial"`
}

// Meta returns the format version, lineage and serial; Lineage and Serial are
// zero before the first commit.
func (db *DB) Meta() (Meta, error) {
	var m Meta
	err := db.view(func(tx *bbolt.Tx) error {
		var err error
		m, err = readMeta(tx)
		return err
	})
	return m, err
}

// prepare checks the format version; a writer also creates the buckets and
// format_version of a new database, so that every later transaction can
// assume them. A reader accepts a database without buckets (a writer opened
// it and never committed) as empty.
func (db *DB) prepare() error {
	ready := false
	err := db.view(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil
		}
		if err := checkFormat(meta.Get(keyFormatVersion)); err != nil {
			return err
		}
		ready = tx.Bucket(bucketResources) != nil && tx.Bucket(bucketMatrix) != nil &&
			tx.Bucket(bucketHistory) != nil
		return nil
	})
	if err != nil {
		return fmt.Errorf("opening %s: %w", db.path, err)
	}
	if ready || db.opts.ReadOnly {
		return nil
	}
	err = db.update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if meta.Get(keyFormatVersion) == nil {
			if err := meta.Put(keyFormatVersion, []byte(FormatVersion)); err != nil {
				return err
			}
		}
		for _, name := range [][]byte{bucketResources, bucketMatrix, bucketHistory} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("initialising %s: %w", db.path, err)
	}
	return nil
}

// checkFormat reports ErrCorrupt unless v is FormatVersion. A meta bucket
// without format_version cannot happen (prepare writes both in one
// transaction), so it is corrupt too.
func checkFormat(v []byte) error {
	if string(v) != FormatVersion {
		return fmt.Errorf("%w: unsupported format_version %q (this agentform reads %q)", ErrCorrupt, v, FormatVersion)
	}
	return nil
}

// readMeta decodes the meta bucket; a missing bucket or key is zero.
func readMeta(tx *bbolt.Tx) (Meta, error) {
	m := Meta{FormatVersion: FormatVersion}
	b := tx.Bucket(bucketMeta)
	if b == nil {
		return m, nil
	}
	if err := checkFormat(b.Get(keyFormatVersion)); err != nil {
		return Meta{}, err
	}
	var err error
	if m.Lineage, err = decodeLineage(b.Get(keyLineage)); err != nil {
		return Meta{}, err
	}
	if m.Serial, err = decodeSerial(b.Get(keySerial)); err != nil {
		return Meta{}, err
	}
	return m, nil
}

// decodeLineage returns the lineage; nil is the empty lineage.
func decodeLineage(v []byte) (string, error) {
	if v == nil {
		return "", nil
	}
	if _, err := uuid.ParseBytes(v); err != nil {
		return "", fmt.Errorf("decoding meta %q: %w: %w", keyLineage, ErrCorrupt, err)
	}
	return string(v), nil
}

// decodeSerial returns the serial; nil is serial 0.
func decodeSerial(v []byte) (uint64, error) {
	if v == nil {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("decoding meta %q: %w: %d bytes, want 8", keySerial, ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// serialKey encodes a serial as the 8-byte big-endian key used in meta and
// history; big-endian makes bbolt's byte order the numeric order.
func serialKey(s uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), s)
}

// bumpMeta starts the next write: it sets the lineage at the first commit,
// increments the serial and stores both. It returns the new Meta.
func bumpMeta(tx *bbolt.Tx) (Meta, error) {
	m, err := readMeta(tx)
	if err != nil {
		return Meta{}, err
	}
	b, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return Meta{}, err
	}
	if err := b.Put(keyFormatVersion, []byte(FormatVersion)); err != nil {
		return Meta{}, err
	}
	if m.Lineage == "" {
		id, err := uuid.NewRandom()
		if err != nil {
			return Meta{}, fmt.Errorf("generating lineage: %w", err)
		}
		m.Lineage = id.String()
		if err := b.Put(keyLineage, []byte(m.Lineage)); err != nil {
			return Meta{}, err
		}
	}
	m.Serial++
	if err := b.Put(keySerial, serialKey(m.Serial)); err != nil {
		return Meta{}, err
	}
	return m, nil
}
