// Package boltfile opens the bbolt databases agentform writes (the state
// and the resolution cache) so that a transaction growing the file does
// not make bbolt remap it, and guards every reader of them against a
// damaged or truncated file (Guard, Fits).
package boltfile

import (
	"os"
	"runtime"
	"runtime/debug"

	"go.etcd.io/bbolt"
)

// MmapSize is the address space a writer maps its database in from the
// start. bbolt maps a database in a space that doubles as the file grows,
// and each remap copies every node the open transaction holds: a first
// apply's commit of 1,000 resources spent a quarter of its time and two
// thirds of its allocations on that (BenchmarkCommitFresh in
// internal/state). Only address space: pages are read as used.
const MmapSize = 32 << 20

// AllocSize is how far beyond what a transaction needs a writer grows the
// file. bbolt grows the file to the whole mapping while the mapping is at
// most its AllocSize (16 MiB by default), and by AllocSize beyond what is
// needed once the mapping is larger: with MmapSize and bbolt's default,
// every database file would be at least 16 MiB. With this, a new
// database's file is about 280 KiB (32 KiB with bbolt's own sizing), and a
// growing one is extended, and synced, in steps of 256 KiB.
const AllocSize = 256 << 10

// OpenWriter is bbolt.Open for writing with MmapSize and AllocSize. On
// Windows, where bbolt sizes the file to the mapping, it is bbolt.Open.
func OpenWriter(path string, mode os.FileMode, opts bbolt.Options) (*bbolt.DB, error) {
	if runtime.GOOS == "windows" {
		return bbolt.Open(path, mode, &opts)
	}
	opts.InitialMmapSize = MmapSize
	db, err := bbolt.Open(path, mode, &opts)
	if err != nil {
		return nil, err
	}
	db.AllocSize = AllocSize
	return db, nil
}

// Guard runs f with a fault in the memory map made a panic (a read of a
// page past the end of a truncated file raises SIGBUS, which would kill
// the process), and reports whether f returned without panicking: bbolt
// also panics on some damaged pages. SetPanicOnFault applies to the
// calling goroutine, which is where bbolt reads its pages.
func Guard(f func()) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f()
	return true
}

// Fits reports whether every page the database's meta page counts is in
// its file: a truncated file would make bbolt read past the end of its
// memory map.
func Fits(db *bbolt.DB) bool {
	fits := false
	Guard(func() {
		_ = db.View(func(tx *bbolt.Tx) error {
			fi, err := os.Stat(db.Path())
			fits = err == nil && tx.Size() <= fi.Size()
			return nil
		})
	})
	return fits
}
