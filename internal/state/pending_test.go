package state_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/agentform/agentform/internal/state"
)

// TestPending: the pending record is replaced by SetPending and by Commit,
// cleared by an empty list, never bumps the serial, and is absent (empty)
// in a state that never had one.
func TestPending(t *testing.T) {
	ws := t.TempDir()
	db, err := state.Open(ws, state.Options{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, err := db.Pending(); err != nil || len(got) != 0 {
		t.Fatalf("pending of a new state\ngot:  %v (%v)\nwant: none", got, err)
	}
	both := map[string][]string{"dist/b.agent.tgz": {"sha256:bb", "sha256:b2"}, "dist/a.agent.tgz": {"sha256:aa"}}
	if err := db.SetPending(both); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Pending(); !maps.EqualFunc(got, both, slices.Equal) {
		t.Errorf("pending\ngot:  %v\nwant: %v", got, both)
	}
	if m, _ := db.Meta(); m.Serial != 0 {
		t.Errorf("serial after SetPending\ngot:  %d\nwant: 0", m.Serial)
	}
	c := sampleCommit()
	c.Pending = map[string][]string{"dist/old.agent.tgz": {"sha256:00"}}
	if _, err := db.Commit(c); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Pending(); !maps.EqualFunc(got, c.Pending, slices.Equal) {
		t.Errorf("pending after a commit\ngot:  %v\nwant: %v", got, c.Pending)
	}
	if _, err := db.Commit(sampleCommit()); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Pending(); len(got) != 0 {
		t.Errorf("pending after a commit without any\ngot:  %v\nwant: cleared", got)
	}
	if err := db.SetPending(map[string][]string{"": {"sha256:00"}}); !errors.Is(err, state.ErrInvalid) {
		t.Errorf("an empty path\ngot:  %v\nwant: ErrInvalid", err)
	}
	if err := db.SetPending(map[string][]string{"dist/x.agent.tgz": {}}); !errors.Is(err, state.ErrInvalid) {
		t.Errorf("a path without a digest\ngot:  %v\nwant: ErrInvalid", err)
	}
	if err := db.SetPending(map[string][]string{"dist/x.agent.tgz": {""}}); !errors.Is(err, state.ErrInvalid) {
		t.Errorf("an empty digest\ngot:  %v\nwant: ErrInvalid", err)
	}
	if err := db.SetPending(map[string][]string{"dist/x.agent.tgz": {"sha256:0 sha256:1"}}); !errors.Is(err, state.ErrInvalid) {
		t.Errorf("a digest with a space\ngot:  %v\nwant: ErrInvalid", err)
	}
	if err := db.SetPending(map[string][]string{"dist/x.agent.tgz": {"sha256:00"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetPending(nil); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.Meta(); m.Serial != 2 {
		t.Errorf("serial\ngot:  %d\nwant: 2 (the commits only)", m.Serial)
	}
	db.Close()
	// Cleared means no bucket at all: the state looks like one written
	// before the record existed, which older agentforms read.
	b, err := bbolt.Open(db.Path(), 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_ = b.View(func(tx *bbolt.Tx) error {
		if tx.Bucket([]byte("pending")) != nil {
			t.Error("got: a pending bucket after clearing\nwant: none")
		}
		return nil
	})
	r, err := state.Open(ws, state.Options{ReadOnly: true})
	if err == nil {
		if err := r.SetPending(map[string][]string{"x": {"sha256:00"}}); !errors.Is(err, state.ErrReadOnly) {
			t.Errorf("SetPending read-only\ngot:  %v\nwant: ErrReadOnly", err)
		}
		r.Close()
	}
}

// TestPendingFormat: a path's digests are one value, separated by a
// space, so that a record as first written (one digest a path) reads the
// same, and a reader that takes the value for one digest matches no file
// with a record of several.
func TestPendingFormat(t *testing.T) {
	ws := t.TempDir()
	db, err := state.Open(ws, state.Options{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetPending(map[string][]string{"dist/a.agent.tgz": {"sha256:01", "sha256:02"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := bbolt.Open(db.Path(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bbolt.Tx) error {
		bk := tx.Bucket([]byte("pending"))
		if got := string(bk.Get([]byte("dist/a.agent.tgz"))); got != "sha256:01 sha256:02" {
			t.Errorf("stored value\ngot:  %q\nwant: %q", got, "sha256:01 sha256:02")
		}
		return bk.Put([]byte("dist/b.agent.tgz"), []byte("sha256:03"))
	})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err = state.Open(ws, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string][]string{"dist/a.agent.tgz": {"sha256:01", "sha256:02"}, "dist/b.agent.tgz": {"sha256:03"}}
	if got, err := db.Pending(); err != nil || !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("pending\ngot:  %v (%v)\nwant: %v", got, err, want)
	}
}
