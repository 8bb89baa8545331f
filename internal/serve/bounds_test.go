package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentform/agentform/internal/resolve"
)

func TestCheckSessionID(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want string // "" = accepted
	}{
		{"default", ""},
		{"stdio-0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", ""},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""},
		{"alice@example.com/run:1+b64=", ""},
		{strings.Repeat("a", MaxSessionID), ""},
		{"", "cannot be empty"},
		{strings.Repeat("a", MaxSessionID+1), "at most 128"},
		{strings.Repeat("a", 40000), "at most 128"},
		{"s\x1b]0;pwned\x07", "ASCII letters, digits"},
		{"a b", "ASCII letters, digits"},
		{"caf\u00e9", "ASCII letters, digits"},
		{"a\u202eb", "ASCII letters, digits"},
		{"a\xffb", "ASCII letters, digits"},
	} {
		err := CheckSessionID(tt.id)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckSessionID(%.40q)\ngot:  %v\nwant: %q", tt.id, err, tt.want)
		}
	}
}

func TestCutText(t *testing.T) {
	for _, tt := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcdefghij…[1 more bytes]"},
		// Never inside a character: é is two bytes.
		{"abcdefghi\u00e9", 10, "abcdefghi…[2 more bytes]"},
	} {
		if got := cutText(tt.s, tt.max); got != tt.want {
			t.Errorf("cutText(%q, %d)\ngot:  %q\nwant: %q", tt.s, tt.max, got, tt.want)
		}
	}
}

// TestCallRecordBounded: what a client chooses cannot fill the record: a
// tool name that is no registered tool is recorded (and quoted in the
// error) cut, an error naming the arguments' properties is cut, and a
// session id that is not one is refused before anything runs.
func TestCallRecordBounded(t *testing.T) {
	dir := serverWorkspace(t)
	s := openTestServer(t, dir, "open", "")
	ctx := context.Background()
	huge := strings.Repeat("x", 1<<20)
	r, err := s.Call(ctx, Request{Tool: huge, Args: []byte(`{}`), Held: s.Held(), Via: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusBlocked || len(r.Record.Tool) > maxRecordedTool+32 || !strings.HasSuffix(r.Record.Tool, "…[1048448 more bytes]") ||
		len(r.Error) > 300 || !strings.Contains(r.Error, "…[1048448 more bytes]") {
		t.Errorf("call of a 1 MiB tool name\ngot:  status %s, tool %d bytes (%q), error %q\nwant: blocked, both cut with a marker", r.Status, len(r.Record.Tool), r.Record.Tool[100:], r.Error)
	}
	// "untyped" has properties n only, and no additionalProperties: a
	// schema error naming a huge property name takes another tool.
	r, err = s.Call(ctx, Request{Tool: "coded", Args: []byte(fmt.Sprintf(`{"code": 1, "%s": 2}`, huge)), Held: s.Held(), Via: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Record.Error) > maxRecordedError+32 {
		t.Errorf("call with a 1 MiB property name: error of %d bytes recorded, want at most %d and a marker", len(r.Record.Error), maxRecordedError)
	}
	// A client chooses its session's override (an HTTP header of up to
	// a megabyte): recorded cut.
	r, err = s.Call(ctx, Request{Tool: "untyped", Args: []byte(`{"n": 1}`), Held: s.Held(), Override: "extend:" + strings.Repeat("t,", 1<<19) + "t", Via: "http"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Record.CapabilityOverride) > maxRecordedOverride+32 || !strings.Contains(r.Record.CapabilityOverride, "more bytes]") {
		t.Errorf("call with a 1 MiB override: %d bytes recorded, want at most %d and a marker", len(r.Record.CapabilityOverride), maxRecordedOverride)
	}
	recs, err := s.db.Calls(0)
	if err != nil || len(recs) != 3 || len(recs[0].Tool) > maxRecordedTool+32 || !utf8.ValidString(recs[0].Tool) || len(recs[2].CapabilityOverride) > maxRecordedOverride+32 {
		t.Errorf("stored records: %v, %d of them, want 3 with the tool name and the override cut", err, len(recs))
	}
	for _, id := range []string{strings.Repeat("s", 40000), "s\x1b[2J"} {
		if _, err := s.Call(ctx, Request{Tool: "untyped", Args: []byte(`{"n": 1}`), Session: id, Held: s.Held(), Via: "invoke"}); err == nil || !strings.Contains(err.Error(), "session id") {
			t.Errorf("call with session %.20q…: %v, want refused", id, err)
		}
	}
	if recs, _ := s.db.Calls(0); len(recs) != 3 {
		t.Errorf("calls with invalid session ids were recorded: %d records, want 3", len(recs))
	}
}

// TestRuntimeDBPrune: records of calls older than the limit go, and so
// does the state of each session none of the remaining records belongs
// to; younger records and their sessions' states stay.
func TestRuntimeDBPrune(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenRuntimeDB(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := db.Prune(time.Now()); n != (Pruned{}) || err != nil {
		t.Errorf("Prune without a database: %+v, %v; want nothing, nil", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".agentform")); !os.IsNotExist(err) {
		t.Errorf("Prune without a database created .agentform: %v", err)
	}
	now := time.Now().UTC()
	patch, _ := contextPatch([]byte(`[{"op": "add", "path": "/context/n", "value": 1}]`))
	calls := []struct {
		session string
		age     time.Duration
	}{
		// "kept": its state written by an old call, a young call since.
		{"kept", 72 * time.Hour}, {"kept", 48 * time.Hour}, {"kept", time.Hour}, {"kept", 0},
		// "idle": every call older than the limit.
		{"idle", 72 * time.Hour}, {"idle", 30 * time.Hour},
	}
	for _, c := range calls {
		rec := &Record{Time: now.Add(-c.age), Agent: "a", Tool: "t", Session: c.session, Status: StatusSuccess}
		var update func(json.RawMessage) (json.RawMessage, error)
		if c.age == 72*time.Hour {
			update = func(st json.RawMessage) (json.RawMessage, error) { return patch.Apply(st) }
		}
		if _, err := db.Commit(rec, nil, update); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.Prune(now.Add(-24 * time.Hour))
	if want := (Pruned{Calls: 4, Sessions: 1}); n != want || err != nil {
		t.Errorf("Prune of records older than 24h: %+v, %v; want %+v", n, err, want)
	}
	recs, _ := db.Calls(0)
	if len(recs) != 2 || recs[0].Time.Before(now.Add(-24*time.Hour)) {
		t.Errorf("records after the prune: %+v, want the two younger ones", recs)
	}
	if st, _ := db.State("kept"); !strings.Contains(string(st), `"n":1`) {
		t.Errorf("state of a session with a young call after the prune: %s, want it kept", st)
	}
	if st, _ := db.State("idle"); string(st) != string(emptyState) {
		t.Errorf("state of an idle session after the prune: %s, want it removed (%s)", st, emptyState)
	}
	// Nothing left to remove: the next prune removes nothing.
	if n, err := db.Prune(now.Add(-24 * time.Hour)); n != (Pruned{}) || err != nil {
		t.Errorf("second Prune: %+v, %v; want nothing", n, err)
	}
}

// TestPruneDuringCall: a prune that takes a session for idle while one of
// its calls runs (its last finished call older than the limit) does not
// make the call's update apply to an empty state: the call writes back
// the state it started from, with its update.
func TestPruneDuringCall(t *testing.T) {
	db, err := OpenRuntimeDB(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	first, _ := contextPatch([]byte(`[{"op": "add", "path": "/context/n", "value": 1}]`))
	if _, err := db.Commit(&Record{Time: now.Add(-48 * time.Hour), Agent: "a", Tool: "t", Session: "s", Status: StatusSuccess}, nil,
		func(st json.RawMessage) (json.RawMessage, error) { return first.Apply(st) }); err != nil {
		t.Fatal(err)
	}
	// The call starts, reading the state; the prune runs; the call ends.
	base, err := db.State("s")
	if err != nil || !strings.Contains(string(base), `"n":1`) {
		t.Fatalf("state before the call: %s, %v", base, err)
	}
	if n, err := db.Prune(now.Add(-24 * time.Hour)); n != (Pruned{Calls: 1, Sessions: 1}) || err != nil {
		t.Fatalf("Prune: %+v, %v", n, err)
	}
	second, _ := contextPatch([]byte(`[{"op": "add", "path": "/context/m", "value": 2}]`))
	rec := &Record{Time: now, Agent: "a", Tool: "t", Session: "s", Status: StatusSuccess}
	state, err := db.Commit(rec, base, func(st json.RawMessage) (json.RawMessage, error) { return second.Apply(st) })
	if err != nil || !rec.PatchApplied {
		t.Fatalf("Commit after the prune: %v %+v", err, rec)
	}
	stored, err := db.State("s")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []json.RawMessage{state, stored} {
		if !strings.Contains(string(st), `"n":1`) || !strings.Contains(string(st), `"m":2`) {
			t.Errorf("state after the call: %s, want the state it started from with its update", st)
		}
	}
	// A session state that is stored wins over the base (another call
	// of the session finished first).
	third, _ := contextPatch([]byte(`[{"op": "add", "path": "/context/k", "value": 3}]`))
	state, err = db.Commit(&Record{Time: now, Agent: "a", Tool: "t", Session: "s", Status: StatusSuccess}, base,
		func(st json.RawMessage) (json.RawMessage, error) { return third.Apply(st) })
	if err != nil || !strings.Contains(string(state), `"m":2`) || !strings.Contains(string(state), `"k":3`) {
		t.Errorf("state after a second call: %s, %v; want the stored state with its update", state, err)
	}
	// A call without an update (refused, failed) while the session was
	// pruned writes nothing, and says the session's state is empty.
	if _, err := db.Prune(now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	state, err = db.Commit(&Record{Time: now.Add(2 * time.Hour), Agent: "a", Tool: "t", Session: "s", Status: StatusBlocked}, base, nil)
	if err != nil || string(state) != string(emptyState) {
		t.Errorf("state after a call without an update: %s, %v; want the empty state, as stored", state, err)
	}
	if stored, _ := db.State("s"); string(stored) != string(emptyState) {
		t.Errorf("stored state after a call without an update: %s, want none", stored)
	}
}

// TestCommitKeepsRecordWhenStateFails: one record per call, even when the
// session's new state cannot be written (bbolt refuses a key over 32 KiB,
// which a session id of an earlier agentform could be): the record says
// so and the state is unchanged.
func TestCommitKeepsRecordWhenStateFails(t *testing.T) {
	db, err := OpenRuntimeDB(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	patch, _ := contextPatch([]byte(`[{"op": "add", "path": "/context/n", "value": 1}]`))
	session := strings.Repeat("s", 40000)
	rec := &Record{Agent: "a", Tool: "t", Session: session, Status: StatusSuccess}
	state, err := db.Commit(rec, nil, func(st json.RawMessage) (json.RawMessage, error) { return patch.Apply(st) })
	if err != nil {
		t.Fatalf("Commit of a state that cannot be written: %v, want the record written", err)
	}
	if rec.Status != StatusError || rec.PatchApplied || !strings.Contains(rec.Error, "the session state could not be saved") || string(state) != string(emptyState) {
		t.Errorf("record: %+v, state %s\nwant: error, no patch applied, the state unchanged", rec, state)
	}
	recs, err := db.Calls(0)
	if err != nil || len(recs) != 1 || recs[0].ID != rec.ID || recs[0].Status != StatusError {
		t.Errorf("stored records: %v %+v, want the one call as an error", err, recs)
	}
}

// TestGrantRecorded: the override a session's tags came from is recorded
// with each call, its tags sorted; an override a locked agent ignores is
// not. Over HTTP, "inherit" keeps the server's grant: with an operator's
// -capability-override=replace:… it gave the agent's own tags back.
func TestGrantRecorded(t *testing.T) {
	dir := serverWorkspace(t)
	ctx := context.Background()
	open := openTestServer(t, dir, "open", "extend:write,read::q,write")
	g := open.Grant()
	if g.Override != "extend:read::q,write" {
		t.Errorf("grant of -capability-override=extend:write,read::q,write: %+v, want the override as extend:read::q,write", g)
	}
	r, err := open.Call(ctx, Request{Tool: "writer", Args: []byte(`{}`), Held: g.Held, Override: g.Override, Via: "invoke"})
	if err != nil || r.Status != StatusSuccess || r.Record.CapabilityOverride != "extend:read::q,write" {
		t.Errorf("call with the override: %v %+v, want success recording extend:read::q,write", err, r)
	}
	closed := openTestServer(t, dir, "closed", "extend:write")
	if g := closed.Grant(); g.Override != "" {
		t.Errorf("grant of a locked agent with an override: %+v, want none recorded (it is ignored)", g)
	}

	narrowed := openTestServer(t, dir, "open", "replace:read::x")
	for _, header := range []string{"", "inherit"} {
		g, err := narrowed.GrantFor(header)
		if err != nil || !slices.Equal(g.Held, []string{"read::x"}) || g.Override != "replace:read::x" {
			t.Errorf("GrantFor(%q) under replace:read::x: %+v %v, want the server's grant", header, g, err)
		}
	}
	if _, err := narrowed.GrantFor("extend:write"); err == nil {
		t.Error("GrantFor(extend:write) under an operator's override: accepted, want refused")
	}
	plain := openTestServer(t, dir, "open", "")
	if g, err := plain.GrantFor("replace:write,read"); err != nil || g.Override != "replace:read,write" || !slices.Equal(g.Held, []string{"read", "write"}) {
		t.Errorf("GrantFor(replace:write,read): %+v %v", g, err)
	}
}

// TestArgsDigest: the digest is of the arguments' canonical JSON, so the
// same arguments with other spacing, key order or string escapes give
// the same digest, and it is sha256 of that text (anyone can recompute it
// for arguments they guess).
func TestArgsDigest(t *testing.T) {
	want := resolve.SHA256([]byte(`{"a":1,"b":"x<y"}`))
	for _, args := range []string{`{"a":1,"b":"x<y"}`, "{ \"b\" : \"x\\u003cy\",\n\t\"a\": 1 }"} {
		if got := argsDigest(json.RawMessage(args)); got != want {
			t.Errorf("argsDigest(%q)\ngot:  %s\nwant: %s", args, got, want)
		}
	}
	if got, want := argsDigest(nil), resolve.SHA256([]byte("{}")); got != want {
		t.Errorf("argsDigest of no arguments\ngot:  %s\nwant: %s (of {})", got, want)
	}
	// Numbers are kept as sent: 1 and 1.0 are different arguments to a
	// tool that reads the text.
	if argsDigest(json.RawMessage(`{"a":1}`)) == argsDigest(json.RawMessage(`{"a":1.0}`)) {
		t.Error("argsDigest of 1 and 1.0: equal, want the numbers as sent")
	}
	if got, want := argsDigest(json.RawMessage(`{not json`)), resolve.SHA256([]byte(`{not json`)); got != want {
		t.Errorf("argsDigest of text that is not JSON\ngot:  %s\nwant: %s", got, want)
	}
}

// TestRecordedErrorIsAgentforms: a tool's own error text (a thrown
// exception's message, which here quotes a secret and could quote the
// arguments) is shown to the caller, scrubbed, but the record keeps only
// agentform's account: where the tool threw.
func TestRecordedErrorIsAgentforms(t *testing.T) {
	dir := serverWorkspace(t)
	s := openTestServer(t, dir, "open", "")
	r, err := s.Call(context.Background(), Request{Tool: "leaky", Args: []byte(`{}`), Held: s.Held(), Via: "invoke"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Error, "cannot reach https://api.example/(value of LEAKY_TOKEN)/hook") {
		t.Errorf("error shown\ngot:  %q\nwant: the exception's message, scrubbed", r.Error)
	}
	if rec := r.Record.Error; !strings.HasPrefix(rec, `the tool "leaky" threw: an exception (at `) || strings.Contains(rec, "cannot reach") {
		t.Errorf("error recorded\ngot:  %q\nwant: where the tool threw, without its message", rec)
	}
	// "failing" returns status error with an output of its own: nothing
	// of agentform's to say but that.
	r, err = s.Call(context.Background(), Request{Tool: "failing", Args: []byte(`{}`), Held: s.Held(), Via: "invoke"})
	if err != nil || r.Record.Error != "the tool reported an error" {
		t.Errorf("failing: %v, recorded %q; want \"the tool reported an error\"", err, r.Record.Error)
	}
}
