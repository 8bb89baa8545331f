package state_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentform/agentform/internal/state"
)

// sampleCommit has every kind of record with every field set; its resources
// are deliberately out of address order.
func sampleCommit() state.Commit {
	return state.Commit{
		Resources: []state.Resource{
			{
				Address: "tool.adder", Type: "tool", Name: "adder", Kind: "javascript",
				Fingerprint: "sha256:0a1b",
				Attributes:  map[string]string{"source": "h1:abc=", "capabilities": "math"},
				Lock:        json.RawMessage(`{"kind":"javascript","source":"h1:abc=","files":["index.js"]}`),
			},
			{
				Address: "agent.assistant", Type: "agent", Name: "assistant",
				Fingerprint: "sha256:ffee",
				Attributes:  map[string]string{"capabilities": "math, net", "model": "gpt"},
				Artifact:    &state.Artifact{Path: "dist/assistant.agent.tgz", SHA256: strings.Repeat("ab", 32), Size: 12345},
			},
			{
				Address: "skill.summarise", Type: "skill", Name: "summarise",
				Fingerprint: "sha256:5555",
				Lock:        json.RawMessage(`{"hash":"h1:xyz="}`),
			},
		},
		Matrix: map[string][]string{"assistant": {"adder", "fetch"}, "idle": {}},
		Entry: state.HistoryEntry{
			Time:      time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC),
			UserHost:  "ci@build-1",
			Version:   "0.1.0",
			Operation: "apply",
			Actions: []state.Action{
				{Address: "agent.assistant", Action: state.ActionCreate},
				{Address: "tool.adder", Action: state.ActionUpdate, Reason: "artifact on disk differs from state"},
			},
			CapabilityChanges: []state.CapabilityChange{{Agent: "assistant", Tool: "fetch", Change: state.ChangeGranted}},
			Checks:            []state.CheckResult{{Name: "no-shell", Status: "pass", Message: "no agent may call a shell"}},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	ws := t.TempDir()
	c := sampleCommit()
	w := openWriter(t, ws)
	m, err := w.Commit(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	want := sampleCommit()
	wantResources := []state.Resource{want.Resources[1], want.Resources[2], want.Resources[0]}
	wantEntry := want.Entry
	wantEntry.Serial = 1

	r := openReader(t, ws)
	gotMeta, err := r.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if gotMeta != m || m.Serial != 1 || m.FormatVersion != "1" {
		t.Errorf("meta\ngot:  %+v\nwant: %+v with serial 1", gotMeta, m)
	}
	if _, err := uuid.Parse(m.Lineage); err != nil {
		t.Errorf("lineage\ngot:  %q\nwant: a uuid", m.Lineage)
	}

	tests := []struct {
		name string
		read func() (any, error)
		want any
	}{
		{"resources", func() (any, error) { return r.Resources() }, wantResources},
		{"matrix", func() (any, error) { return r.Matrix() }, want.Matrix},
		{"history", func() (any, error) { return r.History() }, []state.HistoryEntry{wantEntry}},
	}
	for _, res := range wantResources {
		tests = append(tests, struct {
			name string
			read func() (any, error)
			want any
		}{"resource " + res.Address, func() (any, error) {
			got, ok, err := r.Resource(res.Address)
			if !ok && err == nil {
				err = errors.New("not found")
			}
			return got, err
		}, res})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.read()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("read back\ngot:  %s\nwant: %s", dump(got), dump(tt.want))
			}
		})
	}
	t.Run("absent resource", func(t *testing.T) {
		got, ok, err := r.Resource("tool.missing")
		if ok || err != nil || !reflect.DeepEqual(got, state.Resource{}) {
			t.Errorf("absent resource\ngot:  %+v, %v, %v\nwant: {}, false, <nil>", got, ok, err)
		}
	})
}

// dump renders a value for got:/want: lines.
func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func TestLineageAndSerial(t *testing.T) {
	ws := t.TempDir()
	var lineage string
	var serial uint64
	steps := []struct {
		name  string
		write func(db *state.DB) (state.Meta, error)
	}{
		{"first commit", func(db *state.DB) (state.Meta, error) { return db.Commit(sampleCommit()) }},
		{"second commit", func(db *state.DB) (state.Meta, error) { return db.Commit(sampleCommit()) }},
		{"remove", func(db *state.DB) (state.Meta, error) { return db.Remove("tool.adder") }},
		{"empty commit", func(db *state.DB) (state.Meta, error) { return db.Commit(state.Commit{}) }},
		{"commit after reopen", func(db *state.DB) (state.Meta, error) { return db.Commit(sampleCommit()) }},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			db, err := state.Open(ws, state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			m, err := step.write(db)
			if err != nil {
				t.Fatal(err)
			}
			if lineage == "" {
				lineage = m.Lineage
			}
			if m.Lineage != lineage || m.Serial != serial+1 {
				t.Errorf("meta\ngot:  lineage %s, serial %d\nwant: lineage %s, serial %d", m.Lineage, m.Serial, lineage, serial+1)
			}
			serial = m.Serial
			stored, err := db.Meta()
			if err != nil || stored != m {
				t.Errorf("stored meta\ngot:  %+v (%v)\nwant: %+v", stored, err, m)
			}
		})
	}

	r := openReader(t, ws)
	h, err := r.History()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h {
		got = append(got, fmt.Sprintf("%d %s", e.Serial, e.Operation))
	}
	want := []string{"1 apply", "2 apply", "3 state rm", "4 apply", "5 apply"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("history\ngot:  %q\nwant: %q", got, want)
	}
}

func TestHistoryOrderPastOneByte(t *testing.T) {
	// 300 entries: serials past 255 sort after the small ones only because
	// the keys are big-endian.
	ws := t.TempDir()
	db := openWriter(t, ws)
	for range 300 {
		if _, err := db.Commit(state.Commit{}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := db.History()
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 300 {
		t.Fatalf("history length\ngot:  %d\nwant: 300", len(h))
	}
	for i, e := range h {
		if e.Serial != uint64(i+1) {
			t.Fatalf("history[%d].Serial\ngot:  %d\nwant: %d", i, e.Serial, i+1)
		}
	}
}

func TestHistoryAfter(t *testing.T) {
	ws := t.TempDir()
	db := openWriter(t, ws)
	for range 300 {
		if _, err := db.Commit(state.Commit{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		after       uint64
		first, size uint64
	}{
		{after: 0, first: 1, size: 300},
		{after: 255, first: 256, size: 45},
		{after: 299, first: 300, size: 1},
		{after: 300, size: 0},
		{after: math.MaxUint64, size: 0},
	} {
		t.Run(fmt.Sprint(tc.after), func(t *testing.T) {
			h, err := db.HistoryAfter(tc.after)
			if err != nil {
				t.Fatal(err)
			}
			if uint64(len(h)) != tc.size {
				t.Fatalf("length\ngot:  %d\nwant: %d", len(h), tc.size)
			}
			for i, e := range h {
				if e.Serial != tc.first+uint64(i) {
					t.Fatalf("[%d].Serial\ngot:  %d\nwant: %d", i, e.Serial, tc.first+uint64(i))
				}
			}
		})
	}
}

func TestCommitReplaces(t *testing.T) {
	ws := t.TempDir()
	db := openWriter(t, ws)
	if _, err := db.Commit(sampleCommit()); err != nil {
		t.Fatal(err)
	}
	next := state.Commit{
		Resources: []state.Resource{{Address: "tool.adder", Type: "tool", Name: "adder", Fingerprint: "sha256:new"}},
		Matrix:    map[string][]string{"other": {"adder"}},
	}
	if _, err := db.Commit(next); err != nil {
		t.Fatal(err)
	}
	res, err := db.Resources()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, next.Resources) {
		t.Errorf("resources\ngot:  %s\nwant: %s", dump(res), dump(next.Resources))
	}
	mx, err := db.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mx, next.Matrix) {
		t.Errorf("matrix\ngot:  %v\nwant: %v", mx, next.Matrix)
	}
}

func TestCommitNormalisesMatrix(t *testing.T) {
	ws := t.TempDir()
	db := openWriter(t, ws)
	in := map[string][]string{"b": {"z", "a", "z", "m"}, "a": nil}
	if _, err := db.Commit(state.Commit{Matrix: in}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"z", "a", "z", "m"}; !reflect.DeepEqual(in["b"], want) {
		t.Errorf("commit changed the caller's matrix\ngot:  %q\nwant: %q", in["b"], want)
	}
	got, err := db.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": {}, "b": {"a", "m", "z"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("matrix\ngot:  %#v\nwant: %#v", got, want)
	}
}

func TestCommitFillsEntry(t *testing.T) {
	ws := t.TempDir()
	db, err := state.Open(ws, state.Options{Operation: "apply", Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := time.Now().UTC().Add(-time.Second)
	if _, err := db.Commit(state.Commit{Entry: state.HistoryEntry{Serial: 99}}); err != nil {
		t.Fatal(err)
	}
	h, err := db.History()
	if err != nil || len(h) != 1 {
		t.Fatalf("history\ngot:  %v (%v)\nwant: one entry", h, err)
	}
	e := h[0]
	if e.Serial != 1 || e.Version != "1.2.3" || e.Operation != "apply" || !strings.Contains(e.UserHost, "@") ||
		e.Time.Before(before) || e.Time.Location() != time.UTC {
		t.Errorf("filled entry\ngot:  %+v\nwant: serial 1, version 1.2.3, operation apply, user@host, a UTC time after %s", e, before)
	}

	// A non-UTC time is stored as the same instant in UTC.
	local := time.Date(2026, 1, 1, 12, 0, 0, 0, time.FixedZone("X", 3600))
	if _, err := db.Commit(state.Commit{Entry: state.HistoryEntry{Time: local}}); err != nil {
		t.Fatal(err)
	}
	h, _ = db.History()
	if got := h[1].Time; !got.Equal(local) || got.Location() != time.UTC {
		t.Errorf("stored time\ngot:  %s\nwant: %s", got, local.UTC())
	}
}

func TestCommitInvalid(t *testing.T) {
	tool := func(addr, typ, name string) state.Resource {
		return state.Resource{Address: addr, Type: typ, Name: name}
	}
	tests := []struct {
		name string
		c    state.Commit
	}{
		{"empty address", state.Commit{Resources: []state.Resource{tool("", "", "")}}},
		{"address without type", state.Commit{Resources: []state.Resource{tool("adder", "", "adder")}}},
		{"address disagrees with name", state.Commit{Resources: []state.Resource{tool("tool.adder", "tool", "other")}}},
		{"dotted type", state.Commit{Resources: []state.Resource{tool("a.b.c", "a.b", "c")}}},
		{"duplicate address", state.Commit{Resources: []state.Resource{tool("tool.a", "tool", "a"), tool("tool.a", "tool", "a")}}},
		{"lock not json", state.Commit{Resources: []state.Resource{{Address: "tool.a", Type: "tool", Name: "a", Lock: json.RawMessage("{")}}}},
		{"empty agent in matrix", state.Commit{Matrix: map[string][]string{"": {"a"}}}},
		{"empty tool in matrix", state.Commit{Matrix: map[string][]string{"a": {"x", ""}}}},
	}
	ws := t.TempDir()
	db := openWriter(t, ws)
	first, err := db.Commit(sampleCommit())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := db.Commit(tt.c); !errors.Is(err, state.ErrInvalid) {
				t.Errorf("commit\ngot:  %v\nwant: %v", err, state.ErrInvalid)
			}
			m, err := db.Meta()
			if err != nil || m != first {
				t.Errorf("meta after refused commit\ngot:  %+v (%v)\nwant: %+v", m, err, first)
			}
			res, _ := db.Resources()
			if len(res) != len(sampleCommit().Resources) {
				t.Errorf("resources after refused commit\ngot:  %d\nwant: %d", len(res), len(sampleCommit().Resources))
			}
		})
	}
}

func TestRemove(t *testing.T) {
	tests := []struct {
		name          string
		address       string
		wantErr       error
		wantResources []string
		wantMatrix    []string
	}{
		{"tool", "tool.adder", nil, []string{"agent.assistant", "skill.summarise"}, []string{"assistant", "idle"}},
		{"agent drops its matrix row", "agent.assistant", nil, []string{"skill.summarise", "tool.adder"}, []string{"idle"}},
		{"absent", "tool.missing", state.ErrNoResource, []string{"agent.assistant", "skill.summarise", "tool.adder"}, []string{"assistant", "idle"}},
		{"empty address", "", state.ErrNoResource, []string{"agent.assistant", "skill.summarise", "tool.adder"}, []string{"assistant", "idle"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			db, err := state.Open(ws, state.Options{Operation: "state rm", Version: "0.2.0"})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			first, err := db.Commit(sampleCommit())
			if err != nil {
				t.Fatal(err)
			}
			m, err := db.Remove(tt.address)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("remove\ngot:  %v\nwant: %v", err, tt.wantErr)
			}
			wantSerial := first.Serial + 1
			if tt.wantErr != nil {
				wantSerial = first.Serial
				m, _ = db.Meta()
			}
			if m.Serial != wantSerial || m.Lineage != first.Lineage {
				t.Errorf("meta\ngot:  %+v\nwant: lineage %s, serial %d", m, first.Lineage, wantSerial)
			}
			res, err := db.Resources()
			if err != nil {
				t.Fatal(err)
			}
			var addrs []string
			for _, r := range res {
				addrs = append(addrs, r.Address)
			}
			if !reflect.DeepEqual(addrs, tt.wantResources) {
				t.Errorf("resources\ngot:  %q\nwant: %q", addrs, tt.wantResources)
			}
			mx, err := db.Matrix()
			if err != nil {
				t.Fatal(err)
			}
			var agents []string
			for a := range mx {
				agents = append(agents, a)
			}
			slices.Sort(agents)
			if !reflect.DeepEqual(agents, tt.wantMatrix) {
				t.Errorf("matrix agents\ngot:  %q\nwant: %q", agents, tt.wantMatrix)
			}
			h, err := db.History()
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantErr == nil {
				last := h[len(h)-1]
				want := []state.Action{{Address: tt.address, Action: state.ActionRemove}}
				if last.Serial != m.Serial || last.Operation != "state rm" || last.Version != "0.2.0" || !reflect.DeepEqual(last.Actions, want) {
					t.Errorf("history entry\ngot:  %s\nwant: serial %d, operation state rm, version 0.2.0, actions %s", dump(last), m.Serial, dump(want))
				}
			} else if len(h) != 1 {
				t.Errorf("history length after refused remove\ngot:  %d\nwant: 1", len(h))
			}
		})
	}
}

func TestClosedDB(t *testing.T) {
	ws := t.TempDir()
	db, err := state.Open(ws, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Commit(sampleCommit()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Meta(); err == nil {
		t.Errorf("meta on a closed database\ngot:  <nil>\nwant: an error")
	}
	if _, err := db.Commit(state.Commit{}); err == nil {
		t.Errorf("commit on a closed database\ngot:  <nil>\nwant: an error")
	}
	if _, err := os.Stat(db.Path()); err != nil {
		t.Fatal(err)
	}
}

// TestCommitTools: the registered tools are stored sorted and without
// duplicates, and are unknown before the first commit and in a database
// written before they were recorded; an empty name is refused.
func TestCommitTools(t *testing.T) {
	ws := t.TempDir()
	db := openWriter(t, ws)
	if tools, known, err := db.Tools(); err != nil || known || tools != nil {
		t.Errorf("before the first commit: %q, %v, %v; want unknown", tools, known, err)
	}
	in := []string{"z", "a", "z"}
	if _, err := db.Commit(state.Commit{Tools: in}); err != nil {
		t.Fatal(err)
	}
	if tools, known, err := db.Tools(); err != nil || !known || !slices.Equal(tools, []string{"a", "z"}) {
		t.Errorf("after a commit: %q, %v, %v; want [a z], known", tools, known, err)
	}
	if !slices.Equal(in, []string{"z", "a", "z"}) {
		t.Errorf("commit changed the caller's list: %q", in)
	}
	// No tools: known, and empty.
	if _, err := db.Commit(state.Commit{}); err != nil {
		t.Fatal(err)
	}
	if tools, known, err := db.Tools(); err != nil || !known || tools == nil || len(tools) != 0 {
		t.Errorf("after a commit of no tools: %q, %v, %v; want [], known", tools, known, err)
	}
	if _, err := db.Commit(state.Commit{Tools: []string{"a", ""}}); !errors.Is(err, state.ErrInvalid) {
		t.Errorf("an empty tool name: %v, want %v", err, state.ErrInvalid)
	}
}
