package cli

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// appliedQuickstart returns a copy of the quickstart workspace, applied.
func appliedQuickstart(t *testing.T) string {
	t.Helper()
	dir := copyTree(t, quickstart)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	return dir
}

// TestSessionIDsChecked: -session of invoke and serve is checked before
// anything runs: empty, too long, or with characters beyond the allowed
// ones is an error (invoke -session= used to mean "default").
func TestSessionIDsChecked(t *testing.T) {
	dir := appliedQuickstart(t)
	invoke := []string{"-chdir=" + dir, "invoke", "dist/assistant.agent.tgz", "word_count", `-args={"text": "a b"}`}
	for _, tt := range []struct {
		cmd  []string
		want string
	}{
		{append(invoke, "-session="), "a session id cannot be empty"},
		{append(invoke, "-session="+strings.Repeat("s", 40000)), "at most 128 bytes, not 40000"},
		{append(invoke, "-session=s\x1b]0;pwned\x07"), "ASCII letters, digits"},
		{[]string{"-chdir=" + dir, "serve", "-session=", "dist/assistant.agent.tgz"}, "a session id cannot be empty"},
		{[]string{"-chdir=" + dir, "serve", "-session=a b", "dist/assistant.agent.tgz"}, "ASCII letters, digits"},
	} {
		code, stdout, stderr := run(t, "", tt.cmd...)
		if code != ExitError || !strings.HasPrefix(stderr, "Error: -session: a session id") || !strings.Contains(stderr, tt.want) || stdout != "" || strings.Contains(stderr, "\x1b") {
			t.Errorf("%s %.60q…\ngot:  exit %d\n%s%.300s\nwant: exit 1, %q", tt.cmd[1], tt.cmd[len(tt.cmd)-1], code, stdout, stderr, tt.want)
		}
	}
	if code, _, stdout := run(t, "", "-chdir="+dir, "calls"); code != ExitOK || strings.TrimSpace(stdout) != "" && !strings.Contains(stdout, "No calls") {
		t.Errorf("calls after refused sessions: exit %d\n%s\nwant: none recorded", code, stdout)
	}
	if code, stdout, stderr := run(t, "", append(invoke, "-session=alice@example.com/run:1")...); code != ExitOK {
		t.Errorf("invoke with a valid session got: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestCallsTableBounded: a tool name a caller made up is recorded cut,
// and every cell of the calls table is cut (text/tabwriter pads each row
// to its column's widest cell), while -json shows the record as stored.
func TestCallsTableBounded(t *testing.T) {
	dir := appliedQuickstart(t)
	long := strings.Repeat("t", 100000)
	code, _, stderr := run(t, "", "-chdir="+dir, "invoke", "dist/assistant.agent.tgz", long)
	if code != ExitError || len(stderr) > 1000 || !strings.Contains(stderr, "…[99872 more bytes]") {
		t.Errorf("invoke of a 100,000-character tool name got: exit %d, %d bytes of stderr\n%.400s\nwant: blocked, the name quoted cut", code, len(stderr), stderr)
	}
	escaped := "t\x1b]0;pwned\x07"
	run(t, "", "-chdir="+dir, "invoke", "dist/assistant.agent.tgz", escaped)
	code, stdout, _ := run(t, "", "-chdir="+dir, "calls")
	if code != ExitOK || len(stdout) > 2000 {
		t.Fatalf("calls got: exit %d, %d bytes\n%.600s\nwant: a short table", code, len(stdout), stdout)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if n := utf8.RuneCountInString(line); n > 400 {
			t.Errorf("calls table line of %d characters:\n%s", n, line)
		}
	}
	if strings.Contains(stdout, "\x1b") || !strings.Contains(stdout, `t\x1b]0;pwned\a`) {
		t.Errorf("calls table does not show the tool name escaped:\n%s", stdout)
	}
	_, stdout, _ = run(t, "", "-chdir="+dir, "calls", "-json")
	var recs []struct{ Tool, Error string }
	if err := json.Unmarshal([]byte(stdout), &recs); err != nil || len(recs) != 2 {
		t.Fatalf("calls -json: %v\n%.400s", err, stdout)
	}
	if r := recs[0]; len(r.Tool) > 200 || !strings.HasSuffix(r.Tool, "…[99872 more bytes]") || len(r.Error) > 400 {
		t.Errorf("record of the long name: tool %d bytes, error %d bytes\n%.300s\nwant: both cut", len(r.Tool), len(r.Error), r.Error)
	}
	if recs[1].Tool != escaped {
		t.Errorf("calls -json: tool %q, want %q as recorded", recs[1].Tool, escaped)
	}
}

// TestCallsPrune: calls -prune removes old records and says how many; it
// refuses a non-positive age and the listing options.
func TestCallsPrune(t *testing.T) {
	dir := appliedQuickstart(t)
	run(t, "", "-chdir="+dir, "invoke", "dist/assistant.agent.tgz", "word_count", `-args={"text": "a"}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-prune=0s"}, "Error: -prune takes a positive age, such as -prune=720h (30 days).\n"},
		{[]string{"-prune=-1h"}, "Error: -prune takes a positive age, such as -prune=720h (30 days).\n"},
		{[]string{"-prune=1h", "-json"}, "Error: -prune lists nothing: it cannot be given with -json or -last.\n"},
		{[]string{"-prune=1h", "-last=1"}, "Error: -prune lists nothing: it cannot be given with -json or -last.\n"},
	} {
		// Each error names only what is wrong with what was given.
		if code, _, stderr := run(t, "", append([]string{"-chdir=" + dir, "calls"}, tc.args...)...); code != ExitError || stderr != tc.want {
			t.Errorf("calls %v got: exit %d\n%s\nwant: refused with %q", tc.args, code, stderr, tc.want)
		}
	}
	if code, stdout, _ := run(t, "", "-chdir="+dir, "calls", "-prune=1h"); code != ExitOK || !strings.HasPrefix(stdout, "Removed 0 call records from before ") || !strings.HasSuffix(stdout, ", and the state of 0 sessions with no call since.\n") {
		t.Errorf("calls -prune=1h got: exit %d\n%s\nwant: nothing removed", code, stdout)
	}
	if code, stdout, _ := run(t, "", "-chdir="+dir, "calls", "-prune=1ns"); code != ExitOK || !strings.HasPrefix(stdout, "Removed 1 call record from before ") || !strings.HasSuffix(stdout, ", and the state of 0 sessions with no call since.\n") {
		t.Errorf("calls -prune=1ns got: exit %d\n%s\nwant: the call removed", code, stdout)
	}
	if _, stdout, _ := run(t, "", "-chdir="+dir, "calls"); !strings.Contains(stdout, "No calls recorded.") {
		t.Errorf("calls after the prune:\n%s\nwant: none", stdout)
	}
}

// TestInvokeArgsFromFileOrStdin: arguments beyond the system's limit on a
// command line come from a file (-args=@FILE, relative to -chdir) or
// standard input (-args=-), at most 16 MiB.
func TestInvokeArgsFromFileOrStdin(t *testing.T) {
	dir := appliedQuickstart(t)
	text := strings.TrimSpace(strings.Repeat("w ", 150000))
	args := `{"text": "` + text + `"}`
	must(t, os.WriteFile(filepath.Join(dir, "args.json"), []byte(args), 0o644))
	invoke := []string{"-chdir=" + dir, "invoke", "dist/assistant.agent.tgz", "word_count"}
	if code, stdout, stderr := run(t, "", append(invoke, "-args=@args.json")...); code != ExitOK || !strings.Contains(stdout, "Output:\n150000\n") {
		t.Errorf("invoke -args=@args.json got: exit %d\n%.300s%s\nwant: 150000 words counted", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, args, append(invoke, "-args=-")...); code != ExitOK || !strings.Contains(stdout, "Output:\n150000\n") {
		t.Errorf("invoke -args=- got: exit %d\n%.300s%s\nwant: 150000 words counted", code, stdout, stderr)
	}
	huge, err := os.Create(filepath.Join(dir, "huge.json"))
	must(t, err)
	must(t, huge.Truncate(16<<20+1))
	must(t, huge.Close())
	for _, tt := range []struct{ arg, stdin, want string }{
		{"-args=@", "", "@ needs a file name"},
		{"-args=@missing.json", "", "missing.json"},
		{"-args=@huge.json", "", "more than the 16777216 allowed"},
		{"-args=@dist", "", "dist"},
		{"-args=-", "{not json", "-args is not valid JSON"},
		{"-args=-", strings.Repeat(" ", 16<<20+1), "more than the 16777216 bytes allowed"},
	} {
		code, stdout, stderr := run(t, tt.stdin, append(invoke, tt.arg)...)
		if code != ExitError || !strings.HasPrefix(stderr, "Error: -args") || !strings.Contains(stderr, tt.want) || stdout != "" {
			t.Errorf("invoke %s got: exit %d\n%s%s\nwant: exit 1, %q", tt.arg, code, stdout, stderr, tt.want)
		}
	}
}

// TestCallsTableShowsOverride: a call made in a session whose capability
// override set the agent's tags shows the override in the calls table, as
// it does in -json, so that a success the matrix denies is not read as one
// the configuration allows.
func TestCallsTableShowsOverride(t *testing.T) {
	dir := appliedQuickstart(t)
	t.Setenv("RESEARCH_AGENT_URL", "http://127.0.0.1:1")
	t.Setenv("RESEARCH_AGENT_TOKEN", "unused-token")
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "invoke", "-capability-override=extend:extra::tag", "dist/researcher.agent.tgz", "word_count", `-args={"text": "a b"}`); code != ExitOK {
		t.Fatalf("invoke with an override: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "invoke", "dist/researcher.agent.tgz", "word_count", `-args={"text": "a"}`); code != ExitOK {
		t.Fatalf("invoke: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ := run(t, "", "-chdir="+dir, "calls")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != ExitOK || len(lines) != 3 || !strings.Contains(lines[0], "OVERRIDE") {
		t.Fatalf("calls got: exit %d\n%s\nwant: a header with OVERRIDE and two calls", code, stdout)
	}
	if !strings.Contains(lines[1], " extend:extra::tag ") {
		t.Errorf("calls table row of the call with an override:\n%s\nwant: extend:extra::tag shown", lines[1])
	}
	if strings.Contains(lines[2], "extend:") {
		t.Errorf("calls table row of the call without an override:\n%s\nwant: no override shown", lines[2])
	}
}

// TestServeListenErrors: a -listen that is no address, and a port that is
// taken, are said in words rather than with the system's error text
// ("lookup tcp/x: unknown port", "bind: address already in use").
func TestServeListenErrors(t *testing.T) {
	dir := appliedQuickstart(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tt := range []struct{ listen, want string }{
		{"notanaddr", "Error: -listen=notanaddr is not a port or HOST:PORT address, like -listen=8765"},
		{"127.0.0.1:99999", "Error: -listen=127.0.0.1:99999 is not a port or HOST:PORT address"},
		{taken.Addr().String(), "Error: cannot listen on " + taken.Addr().String() + ": another program is listening on that port"},
	} {
		code, _, stderr := run(t, "", "-chdir="+dir, "serve", "-listen="+tt.listen, "dist/assistant.agent.tgz")
		if code != ExitError || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "tcp") {
			t.Errorf("serve -listen=%s\ngot:  exit %d\n%s\nwant: exit 1 and %q", tt.listen, code, stderr, tt.want)
		}
	}
}

// TestNotAnArtifact: verify, serve and invoke of a file that is no
// artifact at all (the manifest, say) say so, and where artifacts come
// from, rather than "corrupt artifact: not a gzip stream: gzip: invalid
// header".
func TestNotAnArtifact(t *testing.T) {
	dir := appliedQuickstart(t)
	want := "agent.acl is not an agentform artifact: it is not a gzip archive (agentform apply writes artifacts to dist/<agent>.agent.tgz)."
	for _, cmd := range [][]string{
		{"verify", "agent.acl"},
		{"serve", "agent.acl"},
		{"invoke", "agent.acl", "word_count", `-args={"text": "a"}`},
	} {
		code, _, stderr := run(t, "", append([]string{"-chdir=" + dir}, cmd...)...)
		if code != ExitError || !strings.Contains(stderr, want) || strings.Contains(stderr, "gzip:") {
			t.Errorf("%s\ngot:  exit %d\n%s\nwant: exit 1 and %q", cmd, code, stderr, want)
		}
	}
}

// TestInvokeNeedsOnlyItsBlocksEnv: invoke starts only the called tool's
// block, so it needs only that block's runtime variables (and the
// agent's own): the quickstart researcher's bash tool runs without the
// A2A agent's URL and token, and its A2A tool still says they are unset.
func TestInvokeNeedsOnlyItsBlocksEnv(t *testing.T) {
	for _, v := range []string{"RESEARCH_AGENT_URL", "RESEARCH_AGENT_TOKEN"} {
		t.Setenv(v, "")
		must(t, os.Unsetenv(v))
	}
	dir := copyTree(t, quickstart)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "", "-chdir="+dir, "invoke", "-json", "dist/researcher.agent.tgz", "grep", `-args={"script": "echo hi | wc -c"}`)
	if code != ExitOK || !strings.Contains(stdout, `\"stdout\": \"3\\n\"`) && !strings.Contains(stdout, `"stdout": "3\n"`) {
		t.Errorf("invoke grep without the A2A variables: exit %d\n%s%s\nwant: the call made", code, stdout, stderr)
	}
	code, _, stderr = run(t, "", "-chdir="+dir, "invoke", "dist/researcher.agent.tgz", "a2a_research_get_task", `-args={"id": "t1"}`)
	if code != ExitError || !strings.Contains(stderr, "RESEARCH_AGENT_URL") {
		t.Errorf("invoke of the A2A tool without its variables: exit %d\n%s\nwant: they are named as unset", code, stderr)
	}
}
