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
	for _, n := range []int{1, 2000} {
		plain := fill(t, n, func(path string) (*bbolt.DB, error) { return bbolt.Open(path, 0o600, nil) })
		got := fill(t, n, func(path string) (*bbolt.DB, error) { return OpenWriter(path, 0o600, bbolt.Options{}) })
		if got > plain+AllocSize {
			t.Errorf("file size with %d keys\ngot:  %d bytes\nwant: at most %d (bbolt.Open's %d and AllocSize; the mapping is %d)", n, got, plain+AllocSize, plain, MmapSize)
		}
	}
}

// fill writes n values of 1,000 bytes in four transactions (one for
// n < 4) to a new database opened by open, checks they read back, and
// returns the file's size.
func fill(t *testing.T, n int, open func(string) (*bbolt.DB, error)) int64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := open(path)
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 1000)
	batches := min(n, 4)
	for batch := range batches {
		if err := db.Update(func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			for i := range n / batches {
				if err := b.Put(fmt.Appendf(nil, "%06d", batch*n/batches+i), value); err != nil {
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
