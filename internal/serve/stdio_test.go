package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// stdioServer opens an artifact with two javascript tools: echo, and nap,
// which waits args.ms milliseconds.
func stdioServer(t *testing.T) *Server {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"agent.acl": `
agent "piped" {
  capabilities = ["echo"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "echo" {
  kind         = "javascript"
  source       = "./tools/echo"
  capabilities = ["echo::say"]
}

tool "nap" {
  kind         = "javascript"
  source       = "./tools/nap"
  capabilities = ["echo::nap"]
}
`,
		"tools/echo/package.json": `{"name": "echo", "version": "1.0.0", "private": true, "type": "module"}`,
		"tools/echo/index.js": `export const echo = {
  name: "echo",
  description: "Echoes its text.",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute({ args }) { return { output: args.text }; },
};
`,
		"tools/nap/package.json": `{"name": "nap", "version": "1.0.0", "private": true, "type": "module"}`,
		"tools/nap/index.js": `export const nap = {
  name: "nap",
  description: "Waits args.ms milliseconds.",
  parameters: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] },
  async execute({ args }) {
    await new Promise((resolve) => setTimeout(resolve, args.ms));
    return { output: "slept " + args.ms };
  },
};
`,
	})
	_, _, data := buildArtifact(t, dir, "piped", nil)
	path := filepath.Join(dir, "piped.agent.tgz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), path, Options{Dir: dir, Logf: func(f string, a ...any) { t.Logf(f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// stdioRequests is a session as a client pipes it: initialize, tools/list,
// then the calls given (ids 3, 4, ...).
func stdioRequests(calls ...string) string {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}
	for i, c := range calls {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+3, c))
	}
	return strings.Join(lines, "\n") + "\n"
}

// syncBuffer is a bytes.Buffer safe for the server's writes and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// stdioReplies returns the replies in out by id, with the text of a tool
// result.
func stdioReplies(t *testing.T, out string) map[float64]string {
	t.Helper()
	replies := map[float64]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var msg struct {
			ID     *float64 `json:"id"`
			Result *struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("a line of output is not JSON: %v\n%s", err, line)
		}
		if msg.ID == nil {
			continue
		}
		text := "result"
		if msg.Error != nil {
			text = "error " + string(msg.Error)
		} else if msg.Result != nil && len(msg.Result.Content) > 0 {
			text = msg.Result.Content[0].Text
		}
		replies[*msg.ID] = text
	}
	return replies
}

// TestServeStdioAnswersAfterEOF: a client that pipes its requests and
// closes stdin at once gets every reply, a call still running at the end
// of input included, and serve returns without error.
func TestServeStdioAnswersAfterEOF(t *testing.T) {
	s := stdioServer(t)
	in := strings.NewReader(stdioRequests(
		`{"name":"echo","arguments":{"text":"hi"}}`,
		`{"name":"nap","arguments":{"ms":500}}`,
	))
	var out syncBuffer
	if err := s.ServeStdio(context.Background(), in, &out, "piped"); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	replies := stdioReplies(t, out.String())
	want := map[float64]string{1: "result", 2: "result", 3: "hi", 4: "slept 500"}
	for id, text := range want {
		if replies[id] != text {
			t.Errorf("reply %v: got %q, want %q\noutput:\n%s", id, replies[id], text, out.String())
		}
	}
}

// TestServeStdioDrainBounded: a call that outlasts the drain is given up;
// serve says how many requests went unanswered.
func TestServeStdioDrainBounded(t *testing.T) {
	s := stdioServer(t)
	defer func(d time.Duration) { stdioDrainTimeout = d }(stdioDrainTimeout)
	stdioDrainTimeout = 300 * time.Millisecond
	in := strings.NewReader(stdioRequests(`{"name":"nap","arguments":{"ms":20000}}`))
	var out syncBuffer
	start := time.Now()
	err := s.ServeStdio(context.Background(), in, &out, "piped")
	if err == nil || !strings.Contains(err.Error(), "1 request was still unanswered") {
		t.Errorf("ServeStdio: %v, want the unanswered request counted", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("ServeStdio returned after %s, want soon after the 300ms drain", d)
	}
	replies := stdioReplies(t, out.String())
	if replies[1] != "result" || replies[2] != "result" {
		t.Errorf("replies %v: want initialize and tools/list answered\noutput:\n%s", replies, out.String())
	}
}

// TestServeStdioStopsOnCancel: when ctx ends (SIGINT, SIGTERM) serve
// stops at once, with stdin open or closed: a call in flight is
// cancelled, not waited for.
func TestServeStdioStopsOnCancel(t *testing.T) {
	s := stdioServer(t)
	for _, open := range []bool{true, false} {
		t.Run(fmt.Sprintf("stdin open %v", open), func(t *testing.T) {
			var in io.Reader = strings.NewReader(stdioRequests(`{"name":"nap","arguments":{"ms":20000}}`))
			if open {
				r, w := io.Pipe()
				defer w.Close()
				go io.Copy(w, in)
				in = r
			}
			var out syncBuffer
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() { errc <- s.ServeStdio(ctx, in, &out, "piped") }()
			// The call is running once tools/list is answered (the
			// requests are handled in order).
			deadline := time.Now().Add(15 * time.Second)
			for stdioReplies(t, out.String())[2] == "" {
				if time.Now().After(deadline) {
					t.Fatalf("no reply to tools/list:\n%s", out.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			cancel()
			select {
			case err := <-errc:
				if err != nil {
					t.Errorf("ServeStdio after cancel: %v, want nil", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ServeStdio still runs 10s after ctx ended, waiting for the call")
			}
		})
	}
}

// fakeConn is an mcp.Connection that reads msgs, then returns io.EOF.
type fakeConn struct {
	msgs   []jsonrpc.Message
	closed chan struct{}
}

func (c *fakeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.msgs) == 0 {
		return nil, io.EOF
	}
	m := c.msgs[0]
	c.msgs = c.msgs[1:]
	return m, nil
}
func (c *fakeConn) Write(context.Context, jsonrpc.Message) error { return nil }
func (c *fakeConn) Close() error                                 { return nil }
func (c *fakeConn) SessionID() string                            { return "" }

// TestDrainConnWaitsFor: the end of input waits for the replies to calls,
// not for notifications, a subscriptions/listen stream (which only the
// client can end) or a call the client cancelled.
func TestDrainConnWaitsFor(t *testing.T) {
	id := func(v any) jsonrpc.ID {
		i, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	call := &jsonrpc.Request{ID: id(float64(1)), Method: "tools/call"}
	inner := &fakeConn{msgs: []jsonrpc.Message{
		call,
		&jsonrpc.Request{ID: id("listen"), Method: "subscriptions/listen"},
		&jsonrpc.Request{Method: "notifications/initialized"},
		&jsonrpc.Request{ID: id(float64(2)), Method: "tools/call"},
		&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":2}`)},
	}}
	c := newDrainConn(context.Background(), inner, time.Minute)
	defer c.Close()
	ctx := context.Background()
	for range 5 {
		if _, err := c.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eof := make(chan error, 1)
	go func() {
		_, err := c.Read(ctx)
		eof <- err
	}()
	select {
	case err := <-eof:
		t.Fatalf("Read returned %v before call 1 was answered", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := c.Write(ctx, &jsonrpc.Response{ID: call.ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-eof:
		if err != io.EOF {
			t.Errorf("Read after the last reply: %v, want io.EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read still waits after call 1 was answered")
	}
	if n := c.Unanswered(); n != 0 {
		t.Errorf("Unanswered: %d, want 0", n)
	}
}

// TestServeStdioBadInput: a line that is not JSON ends the session (the
// SDK's reader cannot go on past it) after the requests before it are
// answered, with an error that says what was wrong with the input.
func TestServeStdioBadInput(t *testing.T) {
	s := stdioServer(t)
	in := strings.NewReader(stdioRequests(`{"name":"echo","arguments":{"text":"hi"}}`) + "{\"jsonrpc\": oops\n" + `{"jsonrpc":"2.0","id":9,"method":"tools/list"}` + "\n")
	var out syncBuffer
	err := s.ServeStdio(context.Background(), in, &out, "bad")
	want := "standard input could not be read as JSON-RPC: invalid character 'o' looking for beginning of value; serve answers one JSON-RPC message per line"
	if err == nil || err.Error() != want {
		t.Fatalf("got: %v\nwant: %s", err, want)
	}
	replies := stdioReplies(t, out.String())
	for id, text := range map[float64]string{1: "result", 2: "result", 3: "hi"} {
		if replies[id] != text {
			t.Errorf("reply %v: got %q, want %q\noutput:\n%s", id, replies[id], text, out.String())
		}
	}
}

// TestServeStdioBadMessages: other input the SDK cannot read on (a line
// that is not a JSON-RPC message, a message cut short by the end of
// input) is named as such too.
func TestServeStdioBadMessages(t *testing.T) {
	for _, bad := range []string{"[1,2]\n", `{"jsonrpc":"2.0","id":9,"method":"tools/list"` + "\n"} {
		s := stdioServer(t)
		var out syncBuffer
		err := s.ServeStdio(context.Background(), strings.NewReader(stdioRequests()+bad), &out, "bad")
		if err == nil || !strings.HasPrefix(err.Error(), "standard input could not be read as JSON-RPC: ") {
			t.Errorf("%q: got %v\nwant: standard input could not be read as JSON-RPC", bad, err)
		}
		if replies := stdioReplies(t, out.String()); replies[2] != "result" {
			t.Errorf("%q: the request before it was not answered:\n%s", bad, out.String())
		}
	}
}

// TestServeStdioReadError: a failure to read standard input (it is a
// directory) is reported as what it is, not as input that is not
// JSON-RPC.
func TestServeStdioReadError(t *testing.T) {
	s := stdioServer(t)
	dir, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	var out syncBuffer
	err = s.ServeStdio(context.Background(), dir, &out, "dir")
	if err == nil || strings.Contains(err.Error(), "JSON-RPC") || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("got: %v\nwant: the read error as it is", err)
	}
}
