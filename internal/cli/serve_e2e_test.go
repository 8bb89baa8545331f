package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The serve tests run the real agentform binary on a real workspace:
// apply builds the artifacts, then serve runs them for a go-sdk MCP client
// over stdio and over HTTP, and for the published MCP Inspector CLI.

// serveManifest has a locked agent and an extensible one over four
// javascript tools.
const serveManifest = `
agent "assistant" {
  capabilities      = ["text::count", "notes"]
  capability_policy = "locked"
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

agent "builder" {
  capabilities      = ["text::count"]
  capability_policy = "extensible"
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "word_count" {
  kind         = "javascript"
  source       = "./tools/word_count"
  capabilities = ["text::count"]
}

tool "shout" {
  kind         = "javascript"
  source       = "./tools/shout"
  capabilities = ["text::write"]
}

tool "remember" {
  kind         = "javascript"
  source       = "./tools/remember"
  capabilities = ["notes::write"]
}

tool "rewrite_history" {
  kind         = "javascript"
  source       = "./tools/rewrite_history"
  capabilities = ["notes::write"]
}
`

// serveTool returns a javascript tool package: package.json and index.js
// exporting name with execute's body.
func serveTool(name, params, body string) map[string]string {
	return map[string]string{
		"tools/" + name + "/package.json": fmt.Sprintf(`{"name": %q, "version": "1.0.0", "private": true, "type": "module"}`, name),
		"tools/" + name + "/index.js": fmt.Sprintf(`export const %s = {
  name: %q,
  description: "The %s tool.",
  parameters: %s,
  async execute({ args, state, config }) {
%s
  },
};
`, name, name, name, params, body),
	}
}

// serveWorkspace writes the workspace and applies it with the binary.
func serveWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"agent.acl": serveManifest}
	for _, tool := range []map[string]string{
		serveTool("word_count", `{type: "object", properties: {text: {type: "string"}}, required: ["text"]}`,
			`    const n = args.text.trim() === "" ? 0 : args.text.trim().split(/\s+/).length;
    return { output: n + " words" };`),
		serveTool("shout", `{type: "object", properties: {text: {type: "string"}}, required: ["text"]}`,
			`    return { output: args.text.toUpperCase() };`),
		serveTool("remember", `{type: "object", properties: {note: {type: "string"}}, required: ["note"]}`,
			`    const notes = (state.context && state.context.notes) || [];
    return {
      output: "remembered " + (notes.length + 1) + " notes",
      state_update: [{ op: "add", path: "/context/notes", value: notes.concat([args.note]) }],
    };`),
		serveTool("rewrite_history", `{type: "object", properties: {}}`,
			`    return { output: "rewrote", state_update: [{ op: "add", path: "/messages/0", value: "injected" }] };`),
	} {
		for k, v := range tool {
			files[k] = v
		}
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		e2eWriteFile(t, p, []byte(content), 0o644)
	}
	e2eMust(t, dir, e2eOpts{}, 0, "apply", "-auto-approve")
	return dir
}

// allowedInPlan returns the tools the plan's matrix allows agent.
func allowedInPlan(t *testing.T, dir, agent string) []string {
	t.Helper()
	r := e2eMust(t, dir, e2eOpts{}, 0, "plan", "-json")
	var doc struct {
		CapabilityMatrix []struct {
			Agent string `json:"agent"`
			Cells []struct {
				Tool     string `json:"tool"`
				Decision string `json:"decision"`
			} `json:"cells"`
		} `json:"capability_matrix"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("plan -json: %v\n%s", err, r.stdout)
	}
	var out []string
	for _, row := range doc.CapabilityMatrix {
		for _, c := range row.Cells {
			if row.Agent == agent && c.Decision == "allow" {
				out = append(out, c.Tool)
			}
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		t.Fatalf("the plan allows %s nothing:\n%s", agent, r.stdout)
	}
	return out
}

// stdioClient connects a go-sdk client to agentform serve over stdio.
func stdioClient(t *testing.T, dir string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stderr = &e2eBuffer{}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentform-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to agentform serve %s: %v\nstderr: %s", strings.Join(args, " "), err, cmd.Stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func listNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

type callRecord struct {
	Agent        string `json:"agent"`
	Tool         string `json:"tool"`
	Session      string `json:"session"`
	Via          string `json:"via"`
	Status       string `json:"status"`
	Error        string `json:"error"`
	PatchApplied bool   `json:"patch_applied"`
	ArgsDigest   string `json:"args_digest"`
}

func calls(t *testing.T, dir string) []callRecord {
	t.Helper()
	r := e2eMust(t, dir, e2eOpts{}, 0, "calls", "-json")
	var out []callRecord
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("calls -json: %v\n%s", err, r.stdout)
	}
	return out
}

func TestServeStdio(t *testing.T) {
	dir := serveWorkspace(t)
	cs := stdioClient(t, dir, "dist/assistant.agent.tgz")

	// tools/list is exactly the agent's allowed cells in the plan.
	if got, want := listNames(t, cs), allowedInPlan(t, dir, "assistant"); !slices.Equal(got, want) {
		t.Errorf("tools/list:\ngot:  %v\nwant: %v (the plan's allowed cells)", got, want)
	}
	if text, isErr := callText(t, cs, "word_count", map[string]any{"text": "one two three"}); isErr || text != "3 words" {
		t.Errorf("word_count: got %q (error %v), want \"3 words\"", text, isErr)
	}
	// A tool the agent may not call is refused with the missing tag.
	text, isErr := callText(t, cs, "shout", map[string]any{"text": "hi"})
	if !isErr || !strings.Contains(text, "blocked") || !strings.Contains(text, "text::write") {
		t.Errorf("shout (denied): got %q (error %v), want a blocked error naming text::write", text, isErr)
	}
	// Arguments that do not match the schema are not run.
	if text, isErr := callText(t, cs, "word_count", map[string]any{"words": 1}); !isErr || !strings.Contains(text, "skipped") {
		t.Errorf("word_count with bad arguments: got %q (error %v), want skipped", text, isErr)
	}
	// State: two calls in the session accumulate under /context/.
	callText(t, cs, "remember", map[string]any{"note": "first"})
	if text, _ := callText(t, cs, "remember", map[string]any{"note": "second"}); text != "remembered 2 notes" {
		t.Errorf("second remember: got %q, want \"remembered 2 notes\" (state persisted across calls)", text)
	}
	// A patch outside /context/ is rejected and recorded.
	if text, isErr := callText(t, cs, "rewrite_history", map[string]any{}); !isErr || !strings.Contains(text, "/messages/0") {
		t.Errorf("rewrite_history: got %q (error %v), want the rejected patch path", text, isErr)
	}
	cs.Close()

	recs := calls(t, dir)
	var statuses []string
	for _, r := range recs {
		statuses = append(statuses, r.Tool+"="+r.Status)
		if r.Agent != "assistant" || r.Via != "stdio" || !strings.HasPrefix(r.ArgsDigest, "sha256:") {
			t.Errorf("record %+v: want agent assistant, via stdio, an argument digest", r)
		}
	}
	want := []string{"word_count=success", "shout=blocked", "word_count=skipped", "remember=success", "remember=success", "rewrite_history=error"}
	if !slices.Equal(statuses, want) {
		t.Errorf("call records:\ngot:  %v\nwant: %v", statuses, want)
	}
	if len(recs) == 6 && (!recs[3].PatchApplied || recs[5].PatchApplied || !strings.Contains(recs[5].Error, "outside /context/")) {
		t.Errorf("patch_applied: remember %v, rewrite_history %v (%s); want true, false with the reason", recs[3].PatchApplied, recs[5].PatchApplied, recs[5].Error)
	}
	// Raw arguments are never stored.
	db, _ := os.ReadFile(filepath.Join(dir, ".agentform", "runtime.db"))
	if strings.Contains(string(db), "one two three") {
		t.Error("runtime.db holds raw call arguments")
	}
}

func TestServeOverride(t *testing.T) {
	dir := serveWorkspace(t)
	// The extensible agent gains shout with the override...
	cs := stdioClient(t, dir, "-capability-override=extend:text::write", "dist/builder.agent.tgz")
	if names := listNames(t, cs); !slices.Contains(names, "shout") {
		t.Errorf("extensible agent with extend:text::write: tools %v, want shout among them", names)
	}
	if text, isErr := callText(t, cs, "shout", map[string]any{"text": "hi"}); isErr || text != "HI" {
		t.Errorf("shout with the override: got %q (error %v)", text, isErr)
	}
	// ...the locked one does not.
	locked := stdioClient(t, dir, "-capability-override=extend:text::write", "dist/assistant.agent.tgz")
	if names := listNames(t, locked); slices.Contains(names, "shout") {
		t.Errorf("locked agent with an override: tools %v, want no shout", names)
	}
}

// headerTransport adds a header to every request.
type headerTransport struct {
	name, value string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

func TestServeHTTP(t *testing.T) {
	dir := serveWorkspace(t)
	// A bare port (0: any free one) listens on loopback: the address
	// printed must be 127.0.0.1.
	cmd := e2eCommand(t, dir, e2eOpts{}, "serve", "-listen=0", "dist/builder.agent.tgz")
	stderr := &e2eBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		e2eWait(cmd, 30*time.Second)
	})
	addr := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/mcp`)
	var url string
	if !e2eEventually(time.Minute, func() bool {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			url = "http://" + m[1] + "/mcp"
			return true
		}
		return false
	}) {
		t.Fatalf("serve -listen printed no address:\n%s", stderr)
	}
	connect := func(override string) *mcp.ClientSession {
		t.Helper()
		httpClient := &http.Client{}
		if override != "" {
			httpClient.Transport = headerTransport{"X-Agentform-Capability-Override", override}
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "agentform-test", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient}, nil)
		if err != nil {
			t.Fatalf("connecting over HTTP: %v\n%s", err, stderr)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	plain := connect("")
	if got, want := listNames(t, plain), allowedInPlan(t, dir, "builder"); !slices.Equal(got, want) {
		t.Errorf("tools/list over HTTP:\ngot:  %v\nwant: %v", got, want)
	}
	if text, isErr := callText(t, plain, "shout", map[string]any{"text": "x"}); !isErr || !strings.Contains(text, "text::write") {
		t.Errorf("shout without the header: got %q (error %v), want blocked", text, isErr)
	}
	extended := connect("extend:text::write")
	if text, isErr := callText(t, extended, "shout", map[string]any{"text": "x"}); isErr || text != "X" {
		t.Errorf("shout with the override header: got %q (error %v), want X", text, isErr)
	}
	// Each HTTP session has its own state.
	notesA := connect("extend:notes::write")
	notesB := connect("extend:notes::write")
	for i, cs := range []*mcp.ClientSession{notesA, notesA, notesB} {
		want := []string{"remembered 1 notes", "remembered 2 notes", "remembered 1 notes"}[i]
		if text, isErr := callText(t, cs, "remember", map[string]any{"note": "n"}); isErr || text != want {
			t.Errorf("remember call %d: got %q (error %v), want %q", i+1, text, isErr, want)
		}
	}
	sessions := map[string]bool{}
	for _, r := range calls(t, dir) {
		if r.Via != "http" {
			t.Errorf("record via %q, want http", r.Via)
		}
		if r.Tool == "remember" {
			sessions[r.Session] = true
		}
	}
	if len(sessions) != 2 {
		t.Errorf("remember ran in sessions %v, want two MCP sessions", sessions)
	}
}

func TestInvokeAndCalls(t *testing.T) {
	dir := serveWorkspace(t)
	// Options may follow the operands, as the usage shows them.
	r := e2eMust(t, dir, e2eOpts{}, 0, "invoke", "dist/assistant.agent.tgz", "remember", `-args={"note": "a"}`, "-session", "s1")
	if !strings.Contains(r.stdout, "remembered 1 notes") || !strings.Contains(r.stdout, `"notes"`) {
		t.Errorf("invoke output:\n%s", r.stdout)
	}
	e2eMust(t, dir, e2eOpts{}, 0, "invoke", "-args", `{"note": "b"}`, "-session", "s1", "dist/assistant.agent.tgz", "remember")
	// Another session starts empty.
	r = e2eMust(t, dir, e2eOpts{}, 0, "invoke", "-json", "-args", `{"note": "c"}`, "-session", "s2", "dist/assistant.agent.tgz", "remember")
	var out struct {
		Output string `json:"output"`
		State  struct {
			Context struct {
				Notes []string `json:"notes"`
			} `json:"context"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err, r.stdout)
	}
	if out.Output != "remembered 1 notes" || !slices.Equal(out.State.Context.Notes, []string{"c"}) {
		t.Errorf("session s2: %+v, want a fresh state with one note", out)
	}
	r = e2eMust(t, dir, e2eOpts{}, 0, "invoke", "-json", "-args", `{"note": "d"}`, "-session", "s1", "dist/assistant.agent.tgz", "remember")
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.State.Context.Notes, []string{"a", "b", "d"}) {
		t.Errorf("session s1 after three calls: notes %v, want [a b d]", out.State.Context.Notes)
	}
	// Denied: exit 1, recorded as blocked.
	r = e2eMust(t, dir, e2eOpts{}, 1, "invoke", "-args", `{"text": "x"}`, "dist/assistant.agent.tgz", "shout")
	if !strings.Contains(r.stderr, "missing capabilities text::write") {
		t.Errorf("invoke of a denied tool:\n%s", r)
	}
	// Nothing ran: no output or state, only the call.
	if !strings.HasPrefix(r.stdout, "Call ") || !strings.Contains(r.stdout, ": blocked in ") || strings.Contains(r.stdout, "Output:") || strings.Contains(r.stdout, "State") {
		t.Errorf("invoke of a denied tool printed:\n%s\nwant only the call line", r.stdout)
	}
	recs := calls(t, dir)
	if last := recs[len(recs)-1]; last.Status != "blocked" || last.Tool != "shout" || last.Via != "invoke" {
		t.Errorf("last record: %+v, want shout blocked via invoke", last)
	}
	// Arguments the schema refuses: skipped, printed as a blocked call is.
	r = e2eMust(t, dir, e2eOpts{}, 1, "invoke", "-args", `{"note": 1}`, "-session", "s1", "dist/assistant.agent.tgz", "remember")
	if !strings.HasPrefix(r.stdout, "Call ") || !strings.Contains(r.stdout, ": skipped in ") || strings.Contains(r.stdout, "Output:") || !strings.Contains(r.stderr, "at /note") {
		t.Errorf("invoke with arguments the schema refuses:\n%s", r)
	}
	table := e2eMust(t, dir, e2eOpts{}, 0, "calls")
	if !strings.Contains(table.stdout, "blocked") || !strings.Contains(table.stdout, "STATUS") {
		t.Errorf("calls table:\n%s", table.stdout)
	}
	// A tampered artifact does not start.
	art := filepath.Join(dir, "dist", "assistant.agent.tgz")
	b, _ := os.ReadFile(art)
	b[len(b)/2] ^= 0xff
	os.WriteFile(art, b, 0o644)
	r = e2eMust(t, dir, e2eOpts{}, 1, "invoke", "dist/assistant.agent.tgz", "word_count")
	if !strings.Contains(r.stderr, "cannot start") {
		t.Errorf("invoke of a tampered artifact:\n%s", r)
	}
}

// TestServeInspector drives agentform serve with the published MCP
// Inspector in CLI mode (installed by make test from a committed lock).
func TestServeInspector(t *testing.T) {
	inspector, err := filepath.Abs("../serve/testdata/inspector/node_modules/.bin/mcp-inspector")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(inspector); err != nil {
		t.Fatalf("the MCP Inspector is not installed: run make test (or npm ci in internal/serve/testdata/inspector): %v", err)
	}
	dir := serveWorkspace(t)
	bin := e2eBinary(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(inspector, append([]string{"--cli", bin, "serve", "dist/assistant.agent.tgz"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "NO_COLOR=1", "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mcp-inspector --cli %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	list := run("--method", "tools/list")
	for _, name := range allowedInPlan(t, dir, "assistant") {
		if !strings.Contains(list, `"`+name+`"`) {
			t.Errorf("inspector tools/list lacks %s:\n%s", name, list)
		}
	}
	if strings.Contains(list, `"shout"`) {
		t.Errorf("inspector tools/list shows the denied tool shout:\n%s", list)
	}
	call := run("--method", "tools/call", "--tool-name", "word_count", "--tool-arg", "text=alpha beta")
	if !strings.Contains(call, "2 words") {
		t.Errorf("inspector tools/call word_count:\n%s", call)
	}
}

// TestInvokeAndCallsPrintable: what invoke and calls print for people
// (a tool name, a tool's state, an error) reaches the terminal as text:
// an ESC or a bidirectional override is written as an escape, and -json
// keeps the values as they are. A session id with such characters is
// refused up front.
func TestInvokeAndCallsPrintable(t *testing.T) {
	dir := serveWorkspace(t)
	if r := e2eMust(t, dir, e2eOpts{}, 1, "invoke", "dist/assistant.agent.tgz", "remember", "-args", `{"note": "a"}`, "-session", "s\x1b]0;pwned\x07"); strings.Contains(r.stderr, "\x1b") {
		t.Errorf("invoke with an ESC in its session printed it raw:\n%s", r)
	}
	r := e2eMust(t, dir, e2eOpts{}, 0, "invoke", "dist/assistant.agent.tgz", "remember", "-args", `{"note": "a\u202eb"}`, "-session", "s1")
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(r.stdout, bad) || strings.Contains(r.stderr, bad) {
			t.Errorf("invoke printed %q raw:\n%s", bad, r)
		}
	}
	if !strings.Contains(r.stdout, `a\u202eb`) {
		t.Errorf("invoke output does not show the note escaped:\n%s", r.stdout)
	}
	// Text output with CRLF line ends prints as lines; a carriage return
	// on its own, which would overwrite the line, is still escaped.
	crlf := e2eMust(t, dir, e2eOpts{}, 0, "invoke", "-capability-override=extend:text::write", "-args", `{"text": "one\r\ntwo\rthree\r\n"}`, "dist/builder.agent.tgz", "shout")
	if strings.Contains(crlf.stdout, "\r") || !strings.Contains(crlf.stdout, "Output:\nONE\nTWO\\rTHREE\n\n") {
		t.Errorf("invoke of a tool whose output has CRLF line ends:\n%s", crlf)
	}
	tool := "t\x1b]0;pwned\x07"
	e2eMust(t, dir, e2eOpts{}, 1, "invoke", "-capability-override=extend:text::write", "dist/assistant.agent.tgz", tool)
	j := e2eMust(t, dir, e2eOpts{}, 0, "calls", "-json")
	var recs []struct {
		Tool     string `json:"tool"`
		Override string `json:"capability_override"`
	}
	if err := json.Unmarshal([]byte(j.stdout), &recs); err != nil || len(recs) != 3 || recs[2].Tool != tool {
		t.Fatalf("calls -json: %+v, want the last tool %q as it is (%v)", recs, tool, err)
	}
	// The override of the shout call is recorded; the locked assistant
	// ignored its own.
	if recs[1].Override != "extend:text::write" || recs[0].Override != "" || recs[2].Override != "" {
		t.Errorf("capability_override of the calls: %q, %q, %q; want \"\", \"extend:text::write\", \"\"", recs[0].Override, recs[1].Override, recs[2].Override)
	}
	table := e2eMust(t, dir, e2eOpts{}, 0, "calls")
	if strings.Contains(table.stdout, "\x1b") || !strings.Contains(table.stdout, `t\x1b]0;pwned\a`) {
		t.Errorf("calls table does not show the tool name escaped:\n%s", table.stdout)
	}
}

func TestShortCell(t *testing.T) {
	long := strings.Repeat("é", 130)
	got := shortCell(long, errorWidth)
	if !utf8.ValidString(got) || utf8.RuneCountInString(got) != 120 || !strings.HasSuffix(got, "...") {
		t.Errorf("oneLine of 130 × é: %q (%d runes), want 117 of them and ...", got, utf8.RuneCountInString(got))
	}
	// A CRLF line end is a line end; a carriage return on its own is
	// shown escaped.
	if got, want := shortCell("first line\r\nsecond\rthird", errorWidth), `first line second\rthird`; got != want {
		t.Errorf("oneLine:\ngot:  %q\nwant: %q", got, want)
	}
	if got, want := shortCell("line one\nline\ttwo \x1b[2K\u202e", errorWidth), `line one line two \x1b[2K\u202e`; got != want {
		t.Errorf("oneLine:\ngot:  %q\nwant: %q", got, want)
	}
	// A letter and the accent that combines with it (e + U+0301) are one
	// character to a reader: the cut falls between such pairs, wherever
	// it lands.
	for pad := 110; pad < 114; pad++ {
		s := strings.Repeat("a", pad) + strings.Repeat("e\u0301", 10)
		got := shortCell(s, errorWidth)
		want := strings.Repeat("a", pad) + strings.Repeat("e\u0301", (117-pad)/2) + "..."
		if got != want {
			t.Errorf("oneLine of %d × a, 10 × e and U+0301:\ngot:  %+q\nwant: %+q", pad, got, want)
		}
	}
	// Shortened where an escape would have been cut: it is left out whole.
	for pad := 110; pad < 118; pad++ {
		s := strings.Repeat("a", pad) + "\x1b\u202e" + strings.Repeat("b", 20)
		got := shortCell(s, errorWidth)
		want := strings.Repeat("a", pad)
		if pad+4 <= 117 {
			want += `\x1b`
		}
		if pad+10 <= 117 {
			want += `\u202e` + strings.Repeat("b", 117-pad-10)
		}
		if want += "..."; got != want {
			t.Errorf("oneLine of %d × a, ESC, U+202E, 20 × b:\ngot:  %s\nwant: %s", pad, got, want)
		}
	}
}

// TestServeStartErrorPrintable: an upstream MCP server that fails when
// serve starts it is quoted (its standard error) as text: an ESC sequence
// it writes does not reach the terminal.
func TestServeStartErrorPrintable(t *testing.T) {
	bin := testMCPServer(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "broken")
	script := filepath.Join(dir, "server.sh")
	src := fmt.Sprintf("#!/bin/sh\nif [ -e %q ]; then printf '\\033[31mRED\\033]0;pwned\\007 \\342\\200\\256 done\\n' >&2; exit 3; fi\nexec %q -tools=1\n", marker, bin)
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	acl := fmt.Sprintf(`agent "a" {
  capabilities = ["m"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "m" {
  kind         = "mcp"
  transport    = "stdio"
  command      = %q
  capabilities = ["m"]
}
`, script)
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(acl), 0o644); err != nil {
		t.Fatal(err)
	}
	e2eMust(t, dir, e2eOpts{}, 0, "apply", "-auto-approve")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2eMust(t, dir, e2eOpts{}, 1, "invoke", "dist/a.agent.tgz", "m__tool1", `-args={"x": 1}`)
	if strings.ContainsAny(r.stderr, "\x1b\x07\u202e") || !strings.Contains(r.stderr, `\x1b[31mRED`) {
		t.Errorf("invoke with a server failing to start:\n%q\nwant: its standard error quoted with escapes", r.stderr)
	}
}
