package boltfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"go.etcd.io/bbolt"
)

// TestOpenWriterFileSize: a writer's file is no larger than bbolt's own
// sizing makes it plus AllocSize, not the size of the mapping, and what
// was written reads back.
func TestOpenWriterFileSize(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("OpenWriter is bbolt.Open on Windows")
	}
	plain := fill(t, func(path string) (*bbolt.DB, error) { return bbolt.Open(path, 0o600, nil) })
	got := fill(t, func(path string) (*bbolt.DB, error) { return OpenWriter(path, 0o600, bbolt.Options{}) })
	if got > plain+AllocSize {
		t.Errorf("file size\ngot:  %d bytes\nwant: at most %d (bbolt.Open's %d and AllocSize; the mapping is %d)", got, plain+AllocSize, plain, MmapSize)
	}
}

// fill writes about 2 MB in four transactions to a new database opened by
// open, checks it reads back, and returns the file's size.
func fill(t *testing.T, open func(string) (*bbolt.DB, error)) int64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := open(path)
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 1000)
	const n = 2000 // about 2 MB of values
	for batch := range 4 {
		if err := db.Update(func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			for i := range n / 4 {
				if err := b.Put(fmt.Appendf(nil, "%06d", batch*n/4+i), value); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err = bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bbolt.Tx) error {
		if got := tx.Bucket([]byte("b")).Stats().KeyN; got != n {
			t.Errorf("keys\ngot:  %d\nwant: %d", got, n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
