package state_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/agentform/agentform/internal/state"
)

// crashCommit is the commit the crash helper writes as serial s: its records
// all carry s, and their number depends on s, so a reader can tell whether
// it sees exactly one whole commit.
func crashCommit(s uint64) state.Commit {
	n := 40 + int(s%5)*15
	c := state.Commit{Matrix: map[string][]string{}}
	var tools []string
	for i := range n {
		name := fmt.Sprintf("t%03d", i)
		tools = append(tools, name)
		c.Resources = append(c.Resources, state.Resource{
			Address: "tool." + name, Type: "tool", Name: name, Kind: "javascript",
			Fingerprint: fmt.Sprintf("serial-%d", s),
			Attributes:  map[string]string{"source": strings.Repeat("x", 200), "serial": strconv.FormatUint(s, 10)},
		})
		c.Entry.Actions = append(c.Entry.Actions, state.Action{Address: "tool." + name, Action: state.ActionUpdate})
	}
	c.Matrix["a"] = tools[:n/2]
	return c
}

func TestCrashDuringCommit(t *testing.T) {
	ws := t.TempDir()
	var lineage string
	var serial uint64
	for i := range 10 {
		t.Run(fmt.Sprintf("kill %d", i), func(t *testing.T) {
			c := startChild(t, "commit-loop", ws)
			c.next(t, "ready")
			// Let it commit a varying number of times, then kill it while it
			// is inside the next Commit (it does little else).
			var last uint64
			for range i%4 + 1 {
				line := c.next(t, "committed ")
				last, _ = strconv.ParseUint(strings.TrimPrefix(line, "committed "), 10, 64)
			}
			c.kill()

			checkIntegrity(t, ws)
			r := openReader(t, ws)
			m, err := r.Meta()
			if err != nil {
				t.Fatalf("meta after SIGKILL: %v", err)
			}
			if m.Serial < last || m.Serial <= serial {
				t.Errorf("serial after SIGKILL\ngot:  %d\nwant: at least %d and more than %d", m.Serial, last, serial)
			}
			if lineage == "" {
				lineage = m.Lineage
			}
			if m.Lineage != lineage {
				t.Errorf("lineage\ngot:  %s\nwant: %s", m.Lineage, lineage)
			}
			serial = m.Serial

			want := crashCommit(m.Serial)
			res, err := r.Resources()
			if err != nil {
				t.Fatalf("resources after SIGKILL: %v", err)
			}
			if !reflect.DeepEqual(res, want.Resources) {
				t.Errorf("resources after SIGKILL are not commit %d\ngot:  %d records\nwant: %d records of serial %d", m.Serial, len(res), len(want.Resources), m.Serial)
			}
			mx, err := r.Matrix()
			if err != nil || !reflect.DeepEqual(mx, want.Matrix) {
				t.Errorf("matrix after SIGKILL is not commit %d (%v)", m.Serial, err)
			}
			h, err := r.History()
			if err != nil {
				t.Fatalf("history after SIGKILL: %v", err)
			}
			if uint64(len(h)) != m.Serial || len(h[len(h)-1].Actions) != len(want.Resources) {
				t.Errorf("history after SIGKILL\ngot:  %d entries\nwant: %d, the last with %d actions", len(h), m.Serial, len(want.Resources))
			}
			for j, e := range h {
				if e.Serial != uint64(j+1) {
					t.Fatalf("history[%d].Serial\ngot:  %d\nwant: %d", j, e.Serial, j+1)
				}
			}
		})
	}
}

// checkIntegrity runs bbolt's own consistency check (page references,
// freelist) over the database.
func checkIntegrity(t *testing.T, ws string) {
	t.Helper()
	bdb, err := bbolt.Open(filepath.Join(ws, state.DirName, state.FileName), 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("bbolt open after SIGKILL: %v", err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bbolt.Tx) error {
		var first error
		for err := range tx.Check() { // drain: the checker stops when the channel is read to the end
			if first == nil {
				first = err
			}
		}
		return first
	})
	if err != nil {
		t.Errorf("bbolt check after SIGKILL\ngot:  %v\nwant: <nil>", err)
	}
}
