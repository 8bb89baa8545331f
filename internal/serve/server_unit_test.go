package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/resolve"
)

func TestContextPatch(t *testing.T) {
	for _, tc := range []struct {
		patch, want string // want: "" = accepted
	}{
		{`[{"op": "add", "path": "/context/notes", "value": [1]}]`, ""},
		{`[{"op": "replace", "path": "/context/a/b", "value": 1}, {"op": "remove", "path": "/context/c"}]`, ""},
		{`[{"op": "copy", "from": "/context/a", "path": "/context/b"}]`, ""},
		{`[{"op": "add", "path": "/messages/0", "value": "x"}]`, "outside /context/"},
		{`[{"op": "add", "path": "/context", "value": {}}]`, "outside /context/"},
		{`[{"op": "move", "from": "/messages/0", "path": "/context/m"}]`, "from \"/messages/0\""},
		{`[{"op": "add", "path": "/contextual", "value": 1}]`, "outside /context/"},
		{`{"op": "add"}`, "not an RFC 6902"},
		{`[{"op": "add", "value": 1}]`, "missing path"},
	} {
		_, err := contextPatch(json.RawMessage(tc.patch))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", tc.patch, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error containing %q", tc.patch, err, tc.want)
		}
	}
}

func TestRuntimeDB(t *testing.T) {
	db, err := OpenRuntimeDB(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Calls(0); err != ErrNoRuntimeDB {
		t.Errorf("Calls before any call: %v, want ErrNoRuntimeDB", err)
	}
	st, err := db.State("s")
	if err != nil || string(st) != string(emptyState) {
		t.Fatalf("a new session's state: %s %v", st, err)
	}
	patch, _ := contextPatch(json.RawMessage(`[{"op": "add", "path": "/context/n", "value": 1}]`))
	apply := func(state json.RawMessage) (json.RawMessage, error) { return patch.Apply(state) }
	rec := &Record{Agent: "a", Tool: "t", Session: "s", Status: StatusSuccess}
	if _, err := db.Commit(rec, nil, apply); err != nil || !rec.PatchApplied || rec.ID == "" {
		t.Fatalf("Commit: %v %+v", err, rec)
	}
	// A second patch of the same path fails on the stored state: recorded, not fatal.
	bad, _ := contextPatch(json.RawMessage(`[{"op": "remove", "path": "/context/missing"}]`))
	rec2 := &Record{Agent: "a", Tool: "t", Session: "s", Status: StatusSuccess}
	state, err := db.Commit(rec2, nil, func(s json.RawMessage) (json.RawMessage, error) { return bad.Apply(s) })
	if err != nil || rec2.Status != StatusError || rec2.PatchApplied || !strings.Contains(string(state), `"n":1`) {
		t.Errorf("failing patch: %v %+v state %s", err, rec2, state)
	}
	other, _ := db.State("other")
	if string(other) != string(emptyState) {
		t.Errorf("another session sees %s", other)
	}
	recs, err := db.Calls(0)
	if err != nil || len(recs) != 2 || recs[0].ID != rec.ID {
		t.Errorf("Calls: %v %+v", err, recs)
	}
	if last, _ := db.Calls(1); len(last) != 1 || last[0].ID != rec2.ID {
		t.Errorf("Calls(1): %+v", last)
	}
}

// TestRuntimeDBTruncated: a runtime database cut short (inside the pages
// its meta page counts) is reported as damaged by reads and writes alike;
// bbolt would otherwise read past the end of its memory map, a fault that
// kills the process.
func TestRuntimeDBTruncated(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenRuntimeDB(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		rec := &Record{Agent: "a", Tool: "t", Session: fmt.Sprintf("s%d", i), Status: StatusSuccess, Error: strings.Repeat("x", 200)}
		if _, err := db.Commit(rec, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, filepath.FromSlash(RuntimeDBName))
	if fi, err := os.Stat(path); err != nil || fi.Size() <= 16384 {
		t.Fatalf("runtime database: %v, %v; want more than 16 KiB", fi, err)
	}
	if err := os.Truncate(path, 12288); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Calls(0); !errors.Is(err, ErrRuntimeDBDamaged) {
		t.Errorf("Calls: %v, want %v", err, ErrRuntimeDBDamaged)
	}
	if _, err := db.State("s1"); !errors.Is(err, ErrRuntimeDBDamaged) {
		t.Errorf("State: %v, want %v", err, ErrRuntimeDBDamaged)
	}
	if _, err := db.Commit(&Record{Agent: "a", Tool: "t", Session: "s", Status: StatusSuccess}, nil, nil); !errors.Is(err, ErrRuntimeDBDamaged) {
		t.Errorf("Commit: %v, want %v", err, ErrRuntimeDBDamaged)
	}
}

// TestValidateArgsNumbers: a number in the arguments beyond what the JSON
// Schema library handles is refused with its place, never a crash of
// serve (1e-100000000 against a minimum crashed it) and never a long wait;
// nor one a tool would read as infinity (1e400 passed an "integer" schema
// and reached a python tool as inf).
func TestValidateArgsNumbers(t *testing.T) {
	sch, err := compileSchema([]byte(`{"type":"object","properties":{"n":{"type":"number","minimum":0,"multipleOf":0.5},"l":{"type":"array","items":{"type":"integer"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"n": 1.5, "l": [1, 2]}`, ""},
		{`{"n": 1e-100000000}`, `at "/n" a number has an exponent beyond ±1000`},
		{`{"l": [1, 1E+999999]}`, `at "/l/1" a number has an exponent beyond ±1000`},
		{`{"n": 1` + strings.Repeat("0", 1000) + `}`, `at "/n" a number has more than 1000 digits`},
		{`{"n": -0.25}`, `at /n: does not satisfy "minimum"`},
		// Beyond a 64-bit float, a tool would read infinity.
		{`{"n": 1.7e308, "l": [1` + strings.Repeat("0", 300) + `]}`, ""},
		{`{"n": 1e400}`, `at "/n" a number is beyond the range of a 64-bit float`},
		{`{"l": [1, -2E308]}`, `at "/l/1" a number is beyond the range of a 64-bit float`},
		{`{"l": [1` + strings.Repeat("0", 400) + `]}`, `at "/l/0" a number is beyond the range of a 64-bit float`},
	} {
		err := validateArgs(sch, json.RawMessage(tc.args))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%.40s: %v, want valid", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%.40s\ngot:  %v\nwant: an error containing %q", tc.args, err, tc.want)
		}
	}
}

// TestValidateArgsPatterns: a tool's patterns are ECMAScript regular
// expressions (a lookahead validates), and a pattern that backtracks
// without end skips the call after resolve.PatternBudget instead of
// holding serve: matching is bounded for the whole call, however many
// strings the pattern is matched against.
func TestValidateArgsPatterns(t *testing.T) {
	sch, err := compileSchema([]byte(`{"type":"object","properties":{"slug":{"type":"string","pattern":"^(?!-)[a-z0-9-]+$"},"tags":{"type":"array","items":{"pattern":"^(\\w+\\s?)*$"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := validateArgs(sch, json.RawMessage(`{"slug":"my-tool","tags":["a b","c"]}`)); err != nil {
		t.Errorf("valid arguments: %v", err)
	}
	if err := validateArgs(sch, json.RawMessage(`{"slug":"-x"}`)); err == nil || !strings.Contains(err.Error(), `at /slug: does not satisfy "pattern"`) {
		t.Errorf("a slug the lookahead refuses\ngot:  %v\nwant: the pattern named", err)
	}
	hostile := `"` + strings.Repeat("a", 40) + `!"`
	args := `{"tags":[` + strings.Repeat(hostile+",", 49) + hostile + `]}`
	start := time.Now()
	err = validateArgs(sch, json.RawMessage(args))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("50 strings against a catastrophic pattern took %v; want about %v", took, resolve.PatternBudget)
	}
	if err == nil || !strings.Contains(err.Error(), "could not be matched against the arguments within 1s") || strings.Contains(err.Error(), "aaaa") {
		t.Errorf("got:  %v\nwant: the time out, quoting no argument", err)
	}
}

// TestRuntimeDBEmptyOrForeign: an empty runtime database (a process
// killed between creating it and writing its first pages) reads as
// nothing recorded and is initialised by the next write; a file that is
// no database at all gets the damaged database's advice.
func TestRuntimeDBEmptyOrForeign(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.FromSlash(RuntimeDBName))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := OpenRuntimeDB(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Calls(0); !errors.Is(err, ErrNoRuntimeDB) {
		t.Errorf("Calls of an empty file: %v, want %v", err, ErrNoRuntimeDB)
	}
	if st, err := db.State("s1"); err != nil || string(st) != string(emptyState) {
		t.Errorf("State of an empty file: %s, %v; want the empty state", st, err)
	}
	if _, err := db.Commit(&Record{Agent: "a", Tool: "t", Session: "s", Status: StatusSuccess}, nil, nil); err != nil {
		t.Errorf("Commit to an empty file: %v", err)
	}
	if calls, err := db.Calls(0); err != nil || len(calls) != 1 {
		t.Errorf("Calls after the commit: %d, %v; want 1", len(calls), err)
	}

	if err := os.WriteFile(path, bytes.Repeat([]byte("not a database "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Calls(0); !errors.Is(err, ErrRuntimeDBDamaged) {
		t.Errorf("Calls of a foreign file: %v, want %v", err, ErrRuntimeDBDamaged)
	}
	if _, err := db.Commit(&Record{Agent: "a", Tool: "t", Session: "s", Status: StatusSuccess}, nil, nil); !errors.Is(err, ErrRuntimeDBDamaged) {
		t.Errorf("Commit to a foreign file: %v, want %v", err, ErrRuntimeDBDamaged)
	}
}
