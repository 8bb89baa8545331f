package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverWorkspace has an extensible and a locked agent over javascript
// tools: one with a schema without "type", one that fails quoting its
// secret config, one with a pattern in its schema.
func serverWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tool := func(name, params, body string) map[string]string {
		return map[string]string{
			"tools/" + name + "/package.json": `{"name": "` + name + `", "version": "1.0.0", "private": true, "type": "module"}`,
			"tools/" + name + "/index.js": "export const " + name + " = { name: \"" + name + "\", description: \"The " + name +
				" tool.\", parameters: " + params + ", execute({ args, config }) { " + body + " } };\n",
		}
	}
	files := map[string]string{"agent.acl": `
agent "open" {
  capabilities      = ["read"]
  capability_policy = "extensible"
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

agent "closed" {
  capabilities = ["read"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

agent "narrow" {
  capabilities = ["read::x"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = runtime("NARROW_MODEL")
  }
}

tool "untyped" {
  kind         = "javascript"
  source       = "./tools/untyped"
  capabilities = ["read::x"]
}

tool "leaky" {
  kind         = "javascript"
  source       = "./tools/leaky"
  capabilities = ["read::y"]
  config = {
    token = secret(runtime("LEAKY_TOKEN"))
  }
}

tool "failing" {
  kind         = "javascript"
  source       = "./tools/failing"
  capabilities = ["read::y"]
  config = {
    token = secret(runtime("LEAKY_TOKEN"))
  }
}

tool "chatty" {
  kind         = "javascript"
  source       = "./tools/chatty"
  capabilities = ["read::q"]
}

tool "coded" {
  kind         = "javascript"
  source       = "./tools/coded"
  capabilities = ["read::z"]
}

tool "writer" {
  kind         = "javascript"
  source       = "./tools/writer"
  capabilities = ["write"]
}
`}
	for _, m := range []map[string]string{
		tool("untyped", `{properties: {n: {type: "number"}}}`, `return { output: "n=" + args.n };`),
		tool("leaky", `{type: "object", properties: {}}`, `console.log("using", config); throw new Error("cannot reach https://api.example/" + config.token + "/hook");`),
		tool("failing", `{type: "object", properties: {}}`, `return { status: "error", output: { message: "rejected key " + config.token } };`),
		tool("chatty", `{type: "object", properties: {}}`, `console.log("hello from chatty"); return { output: "ok" };`),
		tool("coded", `{type: "object", properties: {code: {type: "string", pattern: "^[0-9]+$"}}, required: ["code"]}`, `return { output: args.code };`),
		tool("writer", `{type: "object", properties: {}}`, `return { output: "wrote" };`),
	} {
		for k, v := range m {
			files[k] = v
		}
	}
	writeFiles(t, dir, files)
	return dir
}

const leakySecret = "tok-7f3a9c-SECRET"

func openTestServer(t *testing.T, dir, agent, override string) *Server {
	t.Helper()
	_, _, data := buildArtifact(t, dir, agent, nil)
	path := filepath.Join(dir, agent+".agent.tgz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LEAKY_TOKEN": leakySecret}
	s, err := Open(context.Background(), path, Options{Dir: dir, Override: override,
		Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Logf:   func(f string, a ...any) { t.Logf(f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestServerCalls(t *testing.T) {
	dir := serverWorkspace(t)
	s := openTestServer(t, dir, "open", "")
	// Without LEAKY_TOKEN in the environment the artifact does not start,
	// and the error names the variable.
	_, err := Open(context.Background(), filepath.Join(dir, "open.agent.tgz"), Options{Dir: dir})
	var missing *MissingError
	if !errors.As(err, &missing) || !slices.Equal(missing.Vars, []string{"LEAKY_TOKEN"}) {
		t.Errorf("Open without LEAKY_TOKEN: %v, want a MissingError naming it", err)
	}
	// A tampered artifact does not start.
	data, _ := os.ReadFile(filepath.Join(dir, "open.agent.tgz"))
	data[len(data)/2] ^= 0xff
	bad := filepath.Join(dir, "bad.agent.tgz")
	os.WriteFile(bad, data, 0o644)
	if _, err := Open(context.Background(), bad, Options{Dir: dir}); err == nil {
		t.Error("a tampered artifact opened")
	}
	ctx := context.Background()
	call := func(tool, args string) *Response {
		t.Helper()
		resp, err := s.Call(ctx, Request{Tool: tool, Args: []byte(args), Held: s.Held(), Via: "invoke"})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// A schema without "type" is served (wrapped for MCP) and validated.
	if r := call("untyped", `{"n": 2}`); r.Status != StatusSuccess || string(r.Output) != `"n=2"` {
		t.Errorf("untyped: %+v", r)
	}
	// An error quoting a secret is recorded without it, and so is the
	// console line quoting it that invoke prints and serve forwards.
	var events []string
	r, err := s.Call(ctx, Request{Tool: "leaky", Args: []byte(`{}`), Held: s.Held(), Via: "invoke", Event: func(kind string, data any) {
		b, _ := json.Marshal(data)
		events = append(events, kind+" "+string(b))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusError || strings.Contains(r.Error, leakySecret) || !strings.Contains(r.Error, "(value of LEAKY_TOKEN)") {
		t.Errorf("leaky: status %s, error %q; want an error with the secret replaced", r.Status, r.Error)
	}
	if got, want := strings.Join(events, "\n"), `console {"level":"log","message":"using {\"token\":\"(value of LEAKY_TOKEN)\"}"}`; got != want {
		t.Errorf("leaky: events\ngot:  %s\nwant: %s", got, want)
	}
	// A failed tool's output quoting a secret is scrubbed too.
	r = call("failing", `{}`)
	if r.Status != StatusError || strings.Contains(string(r.Output), leakySecret) || !strings.Contains(string(r.Output), "(value of LEAKY_TOKEN)") {
		t.Errorf("failing: status %s, output %s; want the secret replaced", r.Status, r.Output)
	}
	// Schema errors never quote the argument.
	r = call("coded", `{"code": "hunter2-secret"}`)
	if r.Status != StatusSkipped || strings.Contains(r.Error, "hunter2") || !strings.Contains(r.Error, "/code") {
		t.Errorf("coded: status %s, error %q; want skipped, naming /code, not the value", r.Status, r.Error)
	}
	if r := call("writer", `{}`); r.Status != StatusBlocked || !strings.Contains(r.Error, "missing capabilities write") {
		t.Errorf("writer: %+v", r)
	}
	db, _ := os.ReadFile(filepath.Join(dir, ".agentform", "runtime.db"))
	for _, leak := range []string{leakySecret, "hunter2"} {
		if strings.Contains(string(db), leak) {
			t.Errorf("runtime.db contains %q", leak)
		}
	}
}

// TestServerNeedsOnlyWhatItServes: a locked agent starts without the
// variables of its model and of tools it may never call.
func TestServerNeedsOnlyWhatItServes(t *testing.T) {
	dir := serverWorkspace(t)
	_, _, data := buildArtifact(t, dir, "narrow", nil)
	path := filepath.Join(dir, "narrow.agent.tgz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), path, Options{Dir: dir})
	if err != nil {
		t.Fatalf("Open without NARROW_MODEL and LEAKY_TOKEN (model, and a tool narrow may not call): %v", err)
	}
	defer s.Close()
	if r, err := s.Call(context.Background(), Request{Tool: "untyped", Args: []byte(`{"n": 1}`), Held: s.Held()}); err != nil || r.Status != StatusSuccess {
		t.Errorf("untyped: %v %+v", err, r)
	}
	if r, _ := s.Call(context.Background(), Request{Tool: "leaky", Args: []byte(`{}`), Held: s.Held()}); r.Status != StatusBlocked || !strings.Contains(r.Error, "read::y") {
		t.Errorf("leaky: %+v, want blocked for read::y", r)
	}
}

// TestServerForwardsEvents: a tool's activity events reach an MCP client
// that set a logging level, as notifications/message, and are not stored.
func TestServerForwardsEvents(t *testing.T) {
	dir := serverWorkspace(t)
	s := openTestServer(t, dir, "open", "")
	got := make(chan *mcp.LoggingMessageParams, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { got <- r.Params },
	})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	go s.MCPServer(s.Grant(), "stdio", "events").Run(ctx, st)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The client asks for log messages: with protocol 2026-07-28 by a log
	// level in the request's _meta (older protocols: logging/setLevel).
	params := &mcp.CallToolParams{Name: "chatty", Arguments: map[string]any{}}
	params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("chatty: %v %+v", err, res)
	}
	select {
	case p := <-got:
		b, _ := json.Marshal(p.Data)
		if p.Logger != "agentform/console" || !strings.Contains(string(b), "hello from chatty") {
			t.Errorf("notification: logger %q data %s, want agentform/console with the message", p.Logger, b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/message for the tool's console output")
	}
	db, _ := os.ReadFile(filepath.Join(dir, ".agentform", "runtime.db"))
	if strings.Contains(string(db), "hello from chatty") {
		t.Error("an activity event was stored in runtime.db")
	}
}

type overrideTransport string

func (o overrideTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(OverrideHeader, string(o))
	return http.DefaultTransport.RoundTrip(r)
}

func httpTools(t *testing.T, url, override string) ([]string, error) {
	t.Helper()
	hc := &http.Client{}
	if override != "" {
		hc.Transport = overrideTransport(override)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names, nil
}

func TestServerOverrideHeader(t *testing.T) {
	dir := serverWorkspace(t)
	open := httptest.NewServer(openTestServer(t, dir, "open", "").Handler())
	defer open.Close()
	if names, err := httpTools(t, open.URL, "extend:write"); err != nil || !slices.Contains(names, "writer") {
		t.Errorf("extensible agent with extend:write: %v %v, want writer listed", names, err)
	}
	if names, err := httpTools(t, open.URL, ""); err != nil || slices.Contains(names, "writer") {
		t.Errorf("extensible agent without the header: %v %v, want no writer", names, err)
	}
	if _, err := httpTools(t, open.URL, "extend:"); err == nil {
		t.Error("a malformed header was accepted")
	}
	closed := httptest.NewServer(openTestServer(t, dir, "closed", "").Handler())
	defer closed.Close()
	if names, err := httpTools(t, closed.URL, "extend:write"); err != nil || slices.Contains(names, "writer") {
		t.Errorf("locked agent with extend:write: %v %v, want the header ignored", names, err)
	}
	// The operator's override may not be undone by a client.
	fixed := httptest.NewServer(openTestServer(t, dir, "open", "replace:read::x").Handler())
	defer fixed.Close()
	if names, err := httpTools(t, fixed.URL, ""); err != nil || !slices.Equal(names, []string{"untyped"}) {
		t.Errorf("operator replace:read::x: %v %v, want only untyped", names, err)
	}
	if _, err := httpTools(t, fixed.URL, "replace:read,write"); err == nil {
		t.Error("a client widened the operator's -capability-override")
	}
}

// TestServerOverrideBound: the distinct overrides HTTP sessions may ask for
// are bounded, but sessions of the server's own grant (no header, inherit)
// are never refused for it: clients asking for many overrides cannot lock
// them out.
func TestServerOverrideBound(t *testing.T) {
	dir := serverWorkspace(t)
	srv := httptest.NewServer(openTestServer(t, dir, "open", "").Handler())
	defer srv.Close()
	for i := range maxOverrideServers {
		if _, err := httpTools(t, srv.URL, fmt.Sprintf("extend:t%d", i)); err != nil {
			t.Fatalf("override %d of %d: %v", i+1, maxOverrideServers, err)
		}
	}
	if _, err := httpTools(t, srv.URL, "extend:one-too-many"); err == nil {
		t.Errorf("override %d got: served\nwant: refused", maxOverrideServers+1)
	}
	for _, header := range []string{"", "inherit"} {
		if names, err := httpTools(t, srv.URL, header); err != nil || slices.Contains(names, "writer") {
			t.Errorf("header %q after %d overrides\ngot:  %v %v\nwant: the agent's own tools", header, maxOverrideServers, names, err)
		}
	}
}

// TestServerHTTPSessionBounds: only a request that could open a session
// makes the server of a new override (a GET of any path does not take
// one of the bounded slots); two override headers are refused rather than
// the first taken; an initialize that would keep megabytes for the
// session's life is refused; and open sessions are bounded.
func TestServerHTTPSessionBounds(t *testing.T) {
	dir := serverWorkspace(t)
	srv := httptest.NewServer(openTestServer(t, dir, "open", "").Handler())
	defer srv.Close()
	do := func(method, path, body string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for _, h := range header {
			req.Header.Add(OverrideHeader, h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for i := range maxOverrideServers + 5 {
		if resp := do(http.MethodGet, "/nonexistent", "", fmt.Sprintf("extend:junk%d", i)); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("GET with override %d: status %d, want 400", i, resp.StatusCode)
		}
		if resp := do(http.MethodPost, "/mcp", "not json", fmt.Sprintf("extend:junk%d", i)); resp.StatusCode == http.StatusServiceUnavailable {
			t.Fatalf("POST of no request with override %d: status %d, want no slot taken", i, resp.StatusCode)
		}
	}
	if names, err := httpTools(t, srv.URL, "extend:write"); err != nil || !slices.Contains(names, "writer") {
		t.Errorf("extend:write after %d junk requests\ngot:  %v %v\nwant: writer listed", 2*(maxOverrideServers+5), names, err)
	}

	if resp := do(http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "extend:write", "inherit"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("two override headers: status %d, want 400", resp.StatusCode)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + strings.Repeat("x", maxInitializeBytes) + `","version":"1"}}}`
	if resp := do(http.MethodPost, "/mcp", big); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("initialize of %d bytes: status %d, want 413", len(big), resp.StatusCode)
	}

	// Open sessions up to the bound (each httpTools call closes its own).
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for i := range maxHTTPSessions {
		if resp := do(http.MethodPost, "/mcp", init); resp.StatusCode != http.StatusOK {
			t.Fatalf("session %d: status %d, want 200", i+1, resp.StatusCode)
		}
	}
	if resp := do(http.MethodPost, "/mcp", init); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("session %d: status %d, want 503", maxHTTPSessions+1, resp.StatusCode)
	}
	// A batch opens no session around the bounds.
	if resp := do(http.MethodPost, "/mcp", "["+init+"]"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("initialize in a batch: status %d, want 400", resp.StatusCode)
	}
}

// TestServerHTTPSessionEviction: at the bound, a new session closes the
// one idle longest once it has been idle long enough (never a session
// merely because it is idle: some clients do not open another on 404).
func TestServerHTTPSessionEviction(t *testing.T) {
	dir := serverWorkspace(t)
	srv := httptest.NewServer(openTestServer(t, dir, "open", "").Handler())
	defer srv.Close()
	post := func(session, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	var ids []string
	for i := range maxHTTPSessions {
		resp, _ := post("", init)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("session %d: status %d, id %q", i+1, resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
		}
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
	}
	// Every session but the first is used again: the first is idlest.
	for _, id := range ids[1:] {
		if resp, body := post(id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusOK {
			t.Fatalf("ping of %s: status %d %s", id, resp.StatusCode, body)
		}
	}
	if resp, _ := post("", init); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a session over the bound, none idle long: status %d, want 503", resp.StatusCode)
	}
	old := httpSessionIdle
	httpSessionIdle = 0
	t.Cleanup(func() { httpSessionIdle = old })
	if resp, _ := post("", init); resp.StatusCode != http.StatusOK {
		t.Fatalf("a session over the bound, one idle: status %d, want 200", resp.StatusCode)
	}
	if resp, _ := post(ids[0], `{"jsonrpc":"2.0","id":3,"method":"ping"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the idlest session after it was closed: status %d, want 404", resp.StatusCode)
	}
	if resp, body := post(ids[1], `{"jsonrpc":"2.0","id":3,"method":"ping"}`); resp.StatusCode != http.StatusOK {
		t.Errorf("another session: status %d %s, want 200", resp.StatusCode, body)
	}
}

// TestUnresolvedMCPBlockWithdrawn: an mcp block the plan could not list
// (its server unreachable, no lock entry: one unresolved tool) is
// withdrawn when serve opens, without reaching the server, saying what to
// do; serve starts and the agent's other tools are served.
func TestUnresolvedMCPBlockWithdrawn(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": `
agent "a" {
  capabilities = ["net", "shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "gone" {
  kind         = "mcp"
  transport    = "http"
  url          = "http://127.0.0.1:1/mcp"
  capabilities = ["net::gone"]
}

tool "echo" {
  kind         = "bash"
  commands     = ["echo"]
  capabilities = ["shell::echo"]
}
`})
	s := openTestServer(t, dir, "a", "")
	reason, gone := s.Withdrawn()["gone"]
	if !gone || !strings.Contains(reason, `the tools of the MCP server of block "gone" were never listed`) || !strings.Contains(reason, "run agentform lock where the server can be reached") {
		t.Fatalf("withdrawn: %v %q, want the unresolved block withdrawn, saying why", gone, reason)
	}
	resp, err := s.Call(context.Background(), Request{Tool: "gone", Args: json.RawMessage(`{}`), Via: "invoke", Held: s.Held()})
	if err != nil || resp.Status != StatusBlocked || !strings.Contains(resp.Error, "were never listed") {
		t.Errorf("call of the unresolved tool: %v %+v, want blocked saying why", err, resp)
	}
	resp, err = s.Call(context.Background(), Request{Tool: "echo", Args: json.RawMessage(`{"script": "echo hi"}`), Via: "invoke", Held: s.Held()})
	if err != nil || resp.Status != StatusSuccess {
		t.Errorf("call of the bash tool: %v %+v, want success", err, resp)
	}
}

// TestRuntimeCapabilitiesNormalForm: tags read from the environment are
// composed as the manifest's are: "café" given with a combining accent
// holds the manifest's "café".
func TestRuntimeCapabilitiesNormalForm(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": `
agent "a" {
  capabilities = runtime("CAPS", ["none"])
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "echo" {
  kind         = "bash"
  commands     = ["echo"]
  capabilities = ["caf` + "\u00e9" + `::echo"]
}
`})
	_, _, data := buildArtifact(t, dir, "a", nil)
	path := filepath.Join(dir, "a.agent.tgz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), path, Options{Dir: dir,
		Lookup: func(k string) (string, bool) { return "cafe\u0301", k == "CAPS" },
		Logf:   func(f string, a ...any) { t.Logf(f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := s.Call(context.Background(), Request{Tool: "echo", Args: json.RawMessage(`{"script": "echo hi"}`), Via: "invoke", Held: s.Held()})
	if err != nil || resp.Status != StatusSuccess {
		t.Errorf("call with the tag given decomposed: %v %+v, want success", err, resp)
	}
}

// stuckExecutor is an executor whose calls ignore cancellation: they end
// only when release is closed.
type stuckExecutor struct {
	started chan struct{}
	release chan struct{}
	ended   chan struct{}
}

func (e *stuckExecutor) Call(ctx context.Context, call *Call) (*Result, error) {
	close(e.started)
	<-e.release
	call.Event("console", "late")
	close(e.ended)
	return &Result{Output: json.RawMessage(`"late"`)}, nil
}

func (e *stuckExecutor) Close() error { return nil }

// TestCallBoundedWhenExecutorIgnoresCancellation: a call whose executor
// does not return when the call's deadline passes, or when the call is
// cancelled, fails callStopGrace later with an error saying so, instead
// of holding serve's shutdown or invoke; what the executor does later is
// dropped.
func TestCallBoundedWhenExecutorIgnoresCancellation(t *testing.T) {
	defer func(d time.Duration) { callStopGrace = d }(callStopGrace)
	callStopGrace = 200 * time.Millisecond
	dir := serverWorkspace(t)
	s := openTestServer(t, dir, "open", "")
	for _, tc := range []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		cancel bool
		want   string
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, false, `the tool "untyped" did not stop within 200ms of the call's deadline: the call was given up`},
		{"cancelled", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, true, `the call of the tool "untyped" was cancelled, and the tool did not stop within 200ms: the call was given up`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &stuckExecutor{started: make(chan struct{}), release: make(chan struct{}), ended: make(chan struct{})}
			s.mu.Lock()
			s.executors["tool.untyped"] = ex
			s.mu.Unlock()
			ctx, cancel := tc.ctx()
			defer cancel()
			if tc.cancel {
				go func() {
					<-ex.started
					cancel()
				}()
			}
			var events []string
			type answer struct {
				resp *Response
				err  error
			}
			answered := make(chan answer, 1)
			go func() {
				resp, err := s.Call(ctx, Request{Tool: "untyped", Args: []byte(`{"n": 1}`), Held: s.Held(), Via: "invoke",
					Event: func(kind string, data any) { events = append(events, kind) }})
				answered <- answer{resp, err}
			}()
			var a answer
			select {
			case a = <-answered:
			case <-time.After(10 * time.Second):
				close(ex.release)
				<-answered
				t.Fatal("Call still waits for an executor that ignores cancellation 10 s after the call ended")
			}
			close(ex.release)
			<-ex.ended
			time.Sleep(50 * time.Millisecond)
			if a.err != nil {
				t.Fatal(a.err)
			}
			if a.resp.Status != StatusError || !strings.Contains(a.resp.Error, tc.want) {
				t.Errorf("call\ngot:  %s: %s\nwant: error: %s…", a.resp.Status, a.resp.Error, tc.want)
			}
			if string(a.resp.Output) != "null" || len(events) != 0 {
				t.Errorf("the executor's late result reached the caller: output %s, events %v", a.resp.Output, events)
			}
		})
	}
}

// TestUnknownToolSuggestion: a call of a tool the agent does not have
// suggests the closest tool the caller may call, and never one it may
// not (which the caller is not to know of).
func TestUnknownToolSuggestion(t *testing.T) {
	dir := serverWorkspace(t)
	s := openTestServer(t, dir, "closed", "")
	for _, tc := range []struct{ tool, want, not string }{
		{"untyped2", ` (did you mean "untyped"?)`, ""},
		// writer is denied to "closed": not suggested.
		{"writr", "", "writer"},
	} {
		resp, err := s.Call(context.Background(), Request{Tool: tc.tool, Args: json.RawMessage(`{}`), Held: s.Held()})
		if err != nil || resp.Status != StatusBlocked {
			t.Fatalf("call of %q: %v %+v", tc.tool, err, resp)
		}
		if want := fmt.Sprintf("agent %q has no enabled tool %q%s", "closed", tc.tool, tc.want); resp.Error != want {
			t.Errorf("error: %q, want %q", resp.Error, want)
		}
		if tc.not != "" && strings.Contains(resp.Error, tc.not) {
			t.Errorf("error %q names %q, which the caller may not call", resp.Error, tc.not)
		}
	}
}
