package state_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/agentform/agentform/internal/state"
)

// openWriter opens the workspace's state as a writer and closes it at the
// end of the test.
func openWriter(t *testing.T, workspace string) *state.DB {
	t.Helper()
	db, err := state.Open(workspace, state.Options{Operation: "apply", Version: "0.1.0"})
	if err != nil {
		t.Fatalf("opening state: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openReader opens the workspace's state read-only and closes it at the end
// of the test.
func openReader(t *testing.T, workspace string) *state.DB {
	t.Helper()
	db, err := state.Open(workspace, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("opening state read-only: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// listTree returns every path under dir, relative and sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestOpenReadOnlyWithoutState(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, ws string)
	}{
		{"no state directory", func(t *testing.T, ws string) {}},
		{"empty state directory", func(t *testing.T, ws string) {
			if err := os.Mkdir(filepath.Join(ws, state.DirName), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"uninitialised state file", func(t *testing.T, ws string) {
			// A writer created the file and died before bbolt wrote to it.
			if err := os.Mkdir(filepath.Join(ws, state.DirName), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, state.DirName, state.FileName), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			tt.setup(t, ws)
			before := listTree(t, ws)
			db, err := state.Open(ws, state.Options{ReadOnly: true})
			if db != nil {
				_ = db.Close()
			}
			if !errors.Is(err, state.ErrNoState) {
				t.Errorf("read-only open\ngot:  %v\nwant: %v", err, state.ErrNoState)
			}
			if after := listTree(t, ws); !reflect.DeepEqual(after, before) {
				t.Errorf("workspace changed\ngot:  %q\nwant: %q", after, before)
			}
		})
	}
}

func TestOpenWriterCreatesState(t *testing.T) {
	ws := t.TempDir()
	db, err := state.Open(ws, state.Options{Operation: "apply", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := db.Path(), filepath.Join(ws, state.DirName, state.FileName); got != want {
		t.Errorf("path\ngot:  %s\nwant: %s", got, want)
	}
	if got, want := listTree(t, ws), []string{".", ".agentform", ".agentform/state.db", ".agentform/state.db.lock.info"}; !reflect.DeepEqual(got, want) {
		t.Errorf("workspace while open\ngot:  %q\nwant: %q", got, want)
	}
	info := readInfo(t, ws)
	if info == nil || info.Operation != "apply" || info.Version != "0.1.0" || info.PID != os.Getpid() || info.ID == "" || !strings.Contains(info.Who, "@") || info.Created.IsZero() {
		t.Errorf("lock info\ngot:  %+v\nwant: apply by this process, version 0.1.0", info)
	}
	m, err := db.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if want := (state.Meta{FormatVersion: "1"}); m != want {
		t.Errorf("meta before the first commit\ngot:  %+v\nwant: %+v", m, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second close\ngot:  %v\nwant: <nil>", err)
	}
	// Nothing was recorded: the workspace is as it was before the Open.
	if got, want := listTree(t, ws), []string{"."}; !reflect.DeepEqual(got, want) {
		t.Errorf("workspace after close\ngot:  %q\nwant: %q", got, want)
	}
	if r, err := state.Open(ws, state.Options{ReadOnly: true}); !errors.Is(err, state.ErrNoState) {
		if err == nil {
			_ = r.Close()
		}
		t.Errorf("read-only open after close\ngot:  %v\nwant: %v", err, state.ErrNoState)
	}
}

// A writer removes the database (and the directory) its Open created when
// nothing was recorded in it, and only then: an apply that fails before it
// writes anything changes nothing on disk.
func TestCloseRemovesWhatOpenCreated(t *testing.T) {
	tests := []struct {
		name   string
		before func(t *testing.T, ws string)
		during func(t *testing.T, ws string, db *state.DB)
		after  []string
	}{
		{"nothing recorded", nil, nil, []string{"."}},
		{"the directory was there", func(t *testing.T, ws string) {
			if err := os.Mkdir(filepath.Join(ws, state.DirName), 0o755); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{".", ".agentform"}},
		{"the directory gained other files", nil, func(t *testing.T, ws string, _ *state.DB) {
			if err := os.WriteFile(filepath.Join(ws, state.DirName, "resolve.db"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{".", ".agentform", ".agentform/resolve.db"}},
		// A file a writer killed before its first commit left (empty, or
		// blank): nothing in it, it goes; the directory was there.
		{"an empty file was there", func(t *testing.T, ws string) {
			if err := os.Mkdir(filepath.Join(ws, state.DirName), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, state.DirName, state.FileName), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{".", ".agentform"}},
		{"a blank database was there", func(t *testing.T, ws string) {
			// As a writer killed before its first commit leaves it:
			// initialised, blank (kept through a second name while the
			// writer that made it closes).
			if err := os.Mkdir(filepath.Join(ws, state.DirName), 0o755); err != nil {
				t.Fatal(err)
			}
			db := openWriter(t, ws)
			path := filepath.Join(ws, state.DirName, state.FileName)
			keep := filepath.Join(ws, state.DirName, "keep")
			if err := os.Link(path, keep); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if err := os.Rename(keep, path); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{".", ".agentform"}},
		{"pending artifacts", nil, func(t *testing.T, _ string, db *state.DB) {
			if err := db.SetPending(map[string][]string{"dist/a.tgz": {"sha256:00"}}); err != nil {
				t.Fatal(err)
			}
		}, []string{".", ".agentform", ".agentform/state.db"}},
		{"pending artifacts recorded and cleared", nil, func(t *testing.T, _ string, db *state.DB) {
			if err := db.SetPending(map[string][]string{"dist/a.tgz": {"sha256:00"}}); err != nil {
				t.Fatal(err)
			}
			if err := db.SetPending(nil); err != nil {
				t.Fatal(err)
			}
		}, []string{"."}},
		{"a commit", nil, func(t *testing.T, _ string, db *state.DB) {
			if _, err := db.Commit(sampleCommit()); err != nil {
				t.Fatal(err)
			}
		}, []string{".", ".agentform", ".agentform/state.db"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			if tt.before != nil {
				tt.before(t, ws)
			}
			db := openWriter(t, ws)
			if tt.during != nil {
				tt.during(t, ws, db)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if got := listTree(t, ws); !reflect.DeepEqual(got, tt.after) {
				t.Errorf("workspace after close\ngot:  %q\nwant: %q", got, tt.after)
			}
			if !slices.Contains(tt.after, ".agentform/state.db") {
				return
			}
			// What is left reads.
			r := openReader(t, ws)
			if _, err := r.Meta(); err != nil {
				t.Error(err)
			}
		})
	}
}

// A reader that waited for the lock on a database the holder then removed
// (it created it and recorded nothing) finds no state, not a damaged file.
func TestReaderWaitingOnRemovedState(t *testing.T) {
	ws := t.TempDir()
	first := openWriter(t, ws)
	done := make(chan error, 1)
	go func() {
		db, err := state.Open(ws, state.Options{ReadOnly: true, LockTimeout: 30 * time.Second})
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	// Give the reader time to open the file and wait for its lock; if it
	// is slower, it finds no file, and the test still holds.
	time.Sleep(300 * time.Millisecond)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, state.ErrNoState) {
		t.Errorf("reader\ngot:  %v\nwant: %v", err, state.ErrNoState)
	}
}

// A writer that waited for the lock on a database the holder then removed
// (it created it and recorded nothing) opens the path again, so its
// commit lands in the file others read, not in the removed one.
func TestOpenAgainAfterRemoval(t *testing.T) {
	ws := t.TempDir()
	first := openWriter(t, ws)
	type opened struct {
		db  *state.DB
		err error
	}
	done := make(chan opened, 1)
	go func() {
		db, err := state.Open(ws, state.Options{LockTimeout: 30 * time.Second})
		done <- opened{db, err}
	}()
	// Give the second writer time to open the file and wait for its lock;
	// if it is slower, it opens after the removal, and the test still holds.
	time.Sleep(300 * time.Millisecond)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := <-done
	if second.err != nil {
		t.Fatal(second.err)
	}
	if _, err := second.db.Commit(sampleCommit()); err != nil {
		t.Fatal(err)
	}
	if err := second.db.Close(); err != nil {
		t.Fatal(err)
	}
	r := openReader(t, ws)
	m, err := r.Meta()
	if err != nil || m.Serial != 1 {
		t.Errorf("serial read back\ngot:  %d (%v)\nwant: 1 (the second writer's commit)", m.Serial, err)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	ws := t.TempDir()
	w := openWriter(t, ws)
	if _, err := w.Commit(sampleCommit()); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	r := openReader(t, ws)
	tests := []struct {
		name  string
		write func() error
	}{
		{"commit", func() error { _, err := r.Commit(sampleCommit()); return err }},
		{"remove", func() error { _, err := r.Remove("tool.adder"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.write(); !errors.Is(err, state.ErrReadOnly) {
				t.Errorf("write on a read-only state\ngot:  %v\nwant: %v", err, state.ErrReadOnly)
			}
			m, err := r.Meta()
			if err != nil || m.Serial != 1 {
				t.Errorf("serial after refused write\ngot:  %d (%v)\nwant: 1", m.Serial, err)
			}
		})
	}
}

// poke writes raw key/values into a closed state database with bbolt
// directly, the way a damaged or foreign file would look.
func poke(t *testing.T, ws string, bucket, key, value []byte) {
	t.Helper()
	bdb, err := bbolt.Open(filepath.Join(ws, state.DirName, state.FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		return b.Put(key, value)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenCorrupt(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, ws string)
		wantMsg string
	}{
		{"not a bbolt file", func(t *testing.T, ws string) {
			if err := os.Mkdir(filepath.Join(ws, state.DirName), 0o755); err != nil {
				t.Fatal(err)
			}
			junk := []byte(strings.Repeat("not a database\n", 2000))
			if err := os.WriteFile(filepath.Join(ws, state.DirName, state.FileName), junk, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "invalid database"},
		{"random bytes", func(t *testing.T, ws string) {
			if err := os.Mkdir(filepath.Join(ws, state.DirName), 0o755); err != nil {
				t.Fatal(err)
			}
			junk := make([]byte, 5000)
			for i := range junk {
				junk[i] = byte(i*7919 + i/13)
			}
			if err := os.WriteFile(filepath.Join(ws, state.DirName, state.FileName), junk, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "state database is corrupt"},
		{"truncated", func(t *testing.T, ws string) {
			// Cut inside the pages the meta page counts, where bbolt
			// would read through its memory map past the end of the
			// file: a fault that kills the process unless guarded.
			db := openWriter(t, ws)
			for range 3 {
				if _, err := db.Commit(sampleCommit()); err != nil {
					t.Fatal(err)
				}
			}
			_ = db.Close()
			truncateTo(t, filepath.Join(ws, state.DirName, state.FileName), 12288)
		}, "the file is shorter than the pages it records"},
		{"newer format version", func(t *testing.T, ws string) {
			db := openWriter(t, ws)
			if _, err := db.Commit(sampleCommit()); err != nil {
				t.Fatal(err)
			}
			_ = db.Close()
			poke(t, ws, []byte("meta"), []byte("format_version"), []byte("2"))
		}, `unsupported format_version "2"`},
	}
	for _, tt := range tests {
		for _, readOnly := range []bool{true, false} {
			name := tt.name + map[bool]string{true: " (reader)", false: " (writer)"}[readOnly]
			t.Run(name, func(t *testing.T) {
				ws := t.TempDir()
				tt.setup(t, ws)
				path := filepath.Join(ws, state.DirName, state.FileName)
				before, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				db, err := state.Open(ws, state.Options{ReadOnly: readOnly})
				if db != nil {
					_ = db.Close()
				}
				if !errors.Is(err, state.ErrCorrupt) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Errorf("open\ngot:  %v\nwant: %v mentioning %q", err, state.ErrCorrupt, tt.wantMsg)
				}
				if after, _ := os.ReadFile(path); !slices.Equal(after, before) {
					t.Errorf("open rewrote a database it refused")
				}
				if _, err := os.Stat(filepath.Join(ws, state.DirName, state.LockInfoName)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a refused open left lock info\ngot:  %v\nwant: %v", err, os.ErrNotExist)
				}
			})
		}
	}
}

// TestOpenWrongPlace: a file where the state directory belongs, or a
// directory where the database belongs, is named with what to do, and
// nothing is created.
func TestOpenWrongPlace(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		setup      func(ws string) error
	}{
		{"directory is a file", "is not a directory: agentform keeps its state database in it", func(ws string) error {
			return os.WriteFile(filepath.Join(ws, state.DirName), nil, 0o644)
		}},
		{"database is a directory", "is not a file: it should be agentform's state database", func(ws string) error {
			return os.MkdirAll(filepath.Join(ws, state.DirName, state.FileName), 0o755)
		}},
	} {
		for _, readOnly := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/readonly=%v", tc.name, readOnly), func(t *testing.T) {
				ws := t.TempDir()
				if err := tc.setup(ws); err != nil {
					t.Fatal(err)
				}
				db, err := state.Open(ws, state.Options{ReadOnly: readOnly})
				if db != nil {
					_ = db.Close()
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, state.ErrNoState) {
					t.Errorf("open\ngot:  %v\nwant: an error saying %q", err, tc.want)
				}
				if _, err := os.Stat(filepath.Join(ws, state.DirName, state.LockInfoName)); err == nil {
					t.Errorf("a refused open left lock info")
				}
			})
		}
	}
}

func TestCorruptRecords(t *testing.T) {
	tests := []struct {
		name          string
		bucket, key   string
		value         string
		read          func(db *state.DB) error
		wantInMessage string
	}{
		{"resource not json", "resources", "tool.bad", "{", func(db *state.DB) error { _, err := db.Resources(); return err }, `resource "tool.bad"`},
		{"resource under another address", "resources", "tool.bad", `{"address":"tool.other"}`, func(db *state.DB) error { _, err := db.Resources(); return err }, `resource "tool.bad"`},
		{"single resource", "resources", "tool.bad", "[]", func(db *state.DB) error { _, _, err := db.Resource("tool.bad"); return err }, `resource "tool.bad"`},
		{"matrix row not a list", "matrix", "bad", `{"a":1}`, func(db *state.DB) error { _, err := db.Matrix(); return err }, `matrix "bad"`},
		{"matrix row null", "matrix", "bad", `null`, func(db *state.DB) error { _, err := db.Matrix(); return err }, `matrix "bad"`},
		{"history key not a serial", "history", "x", `{}`, func(db *state.DB) error { _, err := db.History(); return err }, `history "x"`},
		{"history entry not json", "history", "\x00\x00\x00\x00\x00\x00\x00\x07", `{`, func(db *state.DB) error { _, err := db.History(); return err }, "history 7"},
		{"history under another serial", "history", "\x00\x00\x00\x00\x00\x00\x00\x07", `{"serial":8}`, func(db *state.DB) error { _, err := db.History(); return err }, "history 7"},
		{"serial not 8 bytes", "meta", "serial", "12", func(db *state.DB) error { _, err := db.Meta(); return err }, `meta "serial"`},
		{"lineage not a uuid", "meta", "lineage", "abc", func(db *state.DB) error { _, err := db.Meta(); return err }, `meta "lineage"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			db := openWriter(t, ws)
			if _, err := db.Commit(sampleCommit()); err != nil {
				t.Fatal(err)
			}
			_ = db.Close()
			poke(t, ws, []byte(tt.bucket), []byte(tt.key), []byte(tt.value))
			r := openReader(t, ws)
			err := tt.read(r)
			if !errors.Is(err, state.ErrCorrupt) || !strings.Contains(err.Error(), tt.wantInMessage) {
				t.Errorf("read\ngot:  %v\nwant: %v naming %s", err, state.ErrCorrupt, tt.wantInMessage)
			}
		})
	}
}

// readInfo reads the lock info file, or returns nil when there is none.
func readInfo(t *testing.T, ws string) *state.LockInfo {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, state.DirName, state.LockInfoName))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var info state.LockInfo
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatalf("lock info does not decode: %v\n%s", err, data)
	}
	return &info
}

// truncateTo cuts the file at path to size bytes; the file must be longer.
func truncateTo(t *testing.T, path string, size int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= size {
		t.Fatalf("%s is %d bytes: too short to cut to %d", path, fi.Size(), size)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}
