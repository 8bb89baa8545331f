package state_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/state"
)

// committedWorkspace returns a workspace with one commit in its state.
func committedWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	db := openWriter(t, ws)
	if _, err := db.Commit(sampleCommit()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestLockContention(t *testing.T) {
	tests := []struct {
		name     string
		holder   string // helper mode of the child holding the state
		readOnly bool   // how this process opens
		wantInfo bool   // whether the LockError names the holder
		timeout  time.Duration
	}{
		{"writer blocks writer", "writer", false, true, 0},
		{"writer blocks reader", "writer", true, true, 0},
		{"reader blocks writer", "reader", false, false, 0},
		{"writer blocks writer that waits", "writer", false, true, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := committedWorkspace(t)
			c := startChild(t, tt.holder, ws)
			c.next(t, "ready")

			db, err := state.Open(ws, state.Options{ReadOnly: tt.readOnly, LockTimeout: tt.timeout, Operation: "apply"})
			if db != nil {
				_ = db.Close()
			}
			if !errors.Is(err, state.ErrLocked) {
				t.Fatalf("open while held\ngot:  %v\nwant: %v", err, state.ErrLocked)
			}
			var le *state.LockError
			if !errors.As(err, &le) {
				t.Fatalf("error type\ngot:  %T\nwant: *state.LockError", err)
			}
			if le.Waited != tt.timeout {
				t.Errorf("waited\ngot:  %s\nwant: %s", le.Waited, tt.timeout)
			}
			if !tt.wantInfo {
				if le.Info != nil {
					t.Errorf("lock info of a reader\ngot:  %+v\nwant: <nil>", le.Info)
				}
			} else {
				if le.Info == nil {
					t.Fatalf("lock info\ngot:  <nil>\nwant: the holder's")
				}
				if le.Info.Operation != helperOperation || le.Info.PID != c.pid() || le.Info.Version != helperVersion {
					t.Errorf("lock info\ngot:  %+v\nwant: operation %s, pid %d, version %s", le.Info, helperOperation, c.pid(), helperVersion)
				}
				wantMsg := fmt.Sprintf("state is locked by apply (ID %s) by %s, pid %d, agentform %s, since %s",
					le.Info.ID, le.Info.Who, c.pid(), helperVersion, le.Info.Created.UTC().Format(time.RFC3339))
				if tt.timeout > 0 {
					wantMsg += fmt.Sprintf("; waited %s for it", tt.timeout)
				}
				if err.Error() != wantMsg {
					t.Errorf("message\ngot:  %s\nwant: %s", err, wantMsg)
				}
			}
			// The holder still owns its lock info: a refused open must not
			// touch it.
			if info := readInfo(t, ws); tt.holder == "writer" && (info == nil || info.PID != c.pid()) {
				t.Errorf("holder's lock info after a refused open\ngot:  %+v\nwant: pid %d", info, c.pid())
			}
			c.release(t)
		})
	}
}

func TestReadersShare(t *testing.T) {
	ws := committedWorkspace(t)
	c := startChild(t, "reader", ws)
	c.next(t, "ready")
	r := openReader(t, ws)
	m, err := r.Meta()
	if err != nil || m.Serial != 1 {
		t.Errorf("meta read beside another reader\ngot:  %+v (%v)\nwant: serial 1", m, err)
	}
	c.release(t)
}

func TestLockTimeoutWaitsForHolder(t *testing.T) {
	ws := committedWorkspace(t)
	c := startChild(t, "writer", ws)
	c.next(t, "ready")
	if _, err := state.Open(ws, state.Options{}); !errors.Is(err, state.ErrLocked) {
		t.Fatalf("open with no timeout\ngot:  %v\nwant: %v", err, state.ErrLocked)
	}

	type result struct {
		db  *state.DB
		err error
	}
	done := make(chan result, 1)
	go func() {
		db, err := state.Open(ws, state.Options{LockTimeout: 5 * time.Second, Operation: "state rm"})
		done <- result{db, err}
	}()
	c.release(t)
	res := <-done
	if res.err != nil {
		t.Fatalf("open with a 5s timeout after the holder exits\ngot:  %v\nwant: <nil>", res.err)
	}
	defer res.db.Close()
	if info := readInfo(t, ws); info == nil || info.Operation != "state rm" || info.PID == c.pid() {
		t.Errorf("lock info\ngot:  %+v\nwant: this process's state rm", info)
	}
	if _, err := res.db.Remove("tool.adder"); err != nil {
		t.Errorf("write after waiting\ngot:  %v\nwant: <nil>", err)
	}
}

func TestKilledWriterLeavesNoLock(t *testing.T) {
	ws := committedWorkspace(t)
	c := startChild(t, "writer", ws)
	c.next(t, "ready")
	held := readInfo(t, ws)
	if held == nil || held.PID != c.pid() {
		t.Fatalf("holder's lock info\ngot:  %+v\nwant: pid %d", held, c.pid())
	}
	c.kill()

	stale := readInfo(t, ws)
	if stale == nil || stale.ID != held.ID {
		t.Fatalf("lock info after SIGKILL\ngot:  %+v\nwant: the killed writer's (%s)", stale, held.ID)
	}

	// Readers ignore the stale info: only the flock counts.
	r, err := state.Open(ws, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open after the writer died\ngot:  %v\nwant: <nil>", err)
	}
	_ = r.Close()

	db, err := state.Open(ws, state.Options{Operation: "apply", Version: "0.1.0"})
	if err != nil {
		t.Fatalf("writer open after the writer died\ngot:  %v\nwant: <nil>", err)
	}
	info := readInfo(t, ws)
	if info == nil || info.ID == held.ID || info.PID == c.pid() || info.Version != "0.1.0" {
		t.Errorf("lock info\ngot:  %+v\nwant: this writer's, replacing %s", info, held.ID)
	}
	m, err := db.Commit(sampleCommit())
	if err != nil || m.Serial != 2 {
		t.Errorf("commit after the writer died\ngot:  %+v (%v)\nwant: serial 2", m, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if info := readInfo(t, ws); info != nil {
		t.Errorf("lock info after close\ngot:  %+v\nwant: none", info)
	}
}

func TestLockErrorWithoutInfo(t *testing.T) {
	err := error(&state.LockError{Path: "x", Err: errors.New("timeout")})
	if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), "no lock info") {
		t.Errorf("error\ngot:  %v\nwant: %v saying there is no lock info", err, state.ErrLocked)
	}
}

func TestWriterClearsLockInfoTemps(t *testing.T) {
	ws := committedWorkspace(t)
	// What a writer killed inside writeLockInfo leaves behind.
	litter := filepath.Join(ws, state.DirName, state.LockInfoName+".tmp-123")
	if err := os.WriteFile(litter, []byte(`{"ID":`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openReader(t, ws)
	_ = r.Close()
	if _, err := os.Stat(litter); err != nil {
		t.Errorf("a reader touched the writer's files\ngot:  %v\nwant: <nil>", err)
	}
	w := openWriter(t, ws)
	if _, err := os.Stat(litter); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp lock info after a writer opened\ngot:  %v\nwant: %v", err, os.ErrNotExist)
	}
	_ = w.Close()
	if got, want := listTree(t, ws), []string{".", ".agentform", ".agentform/state.db"}; !slices.Equal(got, want) {
		t.Errorf("workspace after close\ngot:  %q\nwant: %q", got, want)
	}
}

// TestWriterClearsOnlyItsOwnLockInfoTemps: a workspace whose path reads
// as a glob pattern ("ws[1]") clears its own temp lock info, and not that
// of the directories the pattern would match ("ws1"), whose writer may be
// writing it.
func TestWriterClearsOnlyItsOwnLockInfoTemps(t *testing.T) {
	root := t.TempDir()
	ws, other := filepath.Join(root, "ws[1]"), filepath.Join(root, "ws1")
	var litter []string
	for _, d := range []string{ws, other} {
		if err := os.MkdirAll(filepath.Join(d, state.DirName), 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d, state.DirName, state.LockInfoName+".tmp-123")
		if err := os.WriteFile(p, []byte(`{"ID":`), 0o644); err != nil {
			t.Fatal(err)
		}
		litter = append(litter, p)
	}
	w := openWriter(t, ws)
	_ = w.Close()
	if _, err := os.Stat(litter[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp lock info after a writer opened\ngot:  %v\nwant: %v", err, os.ErrNotExist)
	}
	if _, err := os.Stat(litter[1]); err != nil {
		t.Errorf("another workspace's temp lock info after a writer opened\ngot:  %v\nwant: <nil>", err)
	}
}

// TestLockErrorSaysHowLongItWaited: an open that waited for the lock says
// for how long, in the duration's own form; one that gave up at once
// says nothing of waiting.
func TestLockErrorSaysHowLongItWaited(t *testing.T) {
	ws := committedWorkspace(t)
	c := startChild(t, "writer", ws)
	c.next(t, "ready")
	defer c.release(t)
	for _, tt := range []struct {
		timeout time.Duration
		want    string
	}{
		{0, ""},
		{300 * time.Millisecond, "; waited 300ms for it"},
	} {
		_, err := state.Open(ws, state.Options{ReadOnly: true, LockTimeout: tt.timeout})
		var le *state.LockError
		if !errors.As(err, &le) {
			t.Fatalf("open with -lock-timeout=%s\ngot:  %v\nwant: a *state.LockError", tt.timeout, err)
		}
		if got := err.Error(); strings.Contains(got, "waited") != (tt.want != "") || !strings.HasSuffix(got, tt.want) {
			t.Errorf("open with -lock-timeout=%s\ngot:  %s\nwant: ending %q", tt.timeout, got, tt.want)
		}
	}
}

// TestLockErrorStaleInfo: the lock info a killed writer left does not name
// the holder of a lock taken since by a reader (which records none): the
// error says the lock info is left over, and names no holder.
func TestLockErrorStaleInfo(t *testing.T) {
	ws := committedWorkspace(t)
	w := startChild(t, "writer", ws)
	w.next(t, "ready")
	killed := w.pid()
	w.kill()
	if info := readInfo(t, ws); info == nil || info.PID != killed {
		t.Fatalf("lock info after SIGKILL\ngot:  %+v\nwant: the killed writer's", info)
	}
	r := startChild(t, "reader", ws)
	r.next(t, "ready")

	_, err := state.Open(ws, state.Options{Operation: "apply"})
	var le *state.LockError
	if !errors.As(err, &le) {
		t.Fatalf("open while a reader holds the lock\ngot:  %v\nwant: a *state.LockError", err)
	}
	want := fmt.Sprintf("the lock info of apply, pid %d, is left over: that process no longer runs", killed)
	if le.Info != nil || le.Stale == nil || le.Stale.PID != killed || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "recorded no lock info") {
		t.Errorf("lock error\ngot:  %v (info %+v)\nwant: no holder named, and %q", err, le.Info, want)
	}
}
