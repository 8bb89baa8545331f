//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pipedWorkspace applies a workspace whose agent "piped" may call
// word_count, and nap, which waits args.ms milliseconds.
func pipedWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"agent.acl": `
agent "piped" {
  capabilities = ["text"]
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

tool "nap" {
  kind         = "javascript"
  source       = "./tools/nap"
  capabilities = ["text::wait"]
}
`}
	for _, tool := range []map[string]string{
		serveTool("word_count", `{type: "object", properties: {text: {type: "string"}}, required: ["text"]}`,
			`    return { output: args.text.trim().split(/\s+/).length + " words" };`),
		serveTool("nap", `{type: "object", properties: {ms: {type: "number"}}, required: ["ms"]}`,
			`    await new Promise((resolve) => setTimeout(resolve, args.ms));
    return { output: "slept " + args.ms };`),
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

// pipedRequests is what a client pipes: initialize, the initialized
// notification, tools/list (id 2), then the tool calls given (ids 3, 4,
// ...).
func pipedRequests(calls ...string) string {
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

// pipedReplies returns serve's replies by id: "initialized" for
// initialize's, the tool names for tools/list's, a tool result's text.
func pipedReplies(t *testing.T, stdout string) map[int]string {
	t.Helper()
	replies := map[int]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var msg struct {
			ID     *int `json:"id"`
			Result *struct {
				ProtocolVersion string `json:"protocolVersion"`
				Tools           []struct {
					Name string `json:"name"`
				} `json:"tools"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("serve wrote a line that is not JSON-RPC: %v\n%s", err, line)
		}
		if msg.ID == nil {
			continue
		}
		r := msg.Result
		switch {
		case msg.Error != nil:
			replies[*msg.ID] = "error " + string(msg.Error)
		case r == nil:
			replies[*msg.ID] = "no result"
		case r.ProtocolVersion != "":
			replies[*msg.ID] = "initialized"
		case r.Tools != nil:
			var names []string
			for _, tl := range r.Tools {
				names = append(names, tl.Name)
			}
			replies[*msg.ID] = strings.Join(names, ",")
		case len(r.Content) > 0:
			replies[*msg.ID] = r.Content[0].Text
		}
	}
	return replies
}

// TestServeStdioEndOfInput: a client that pipes its requests and closes
// stdin right after (printf ... | agentform serve) gets every reply — a
// call still running at the end of input included — and serve exits 0.
func TestServeStdioEndOfInput(t *testing.T) {
	dir := pipedWorkspace(t)
	cmd := e2eCommand(t, dir, e2eOpts{}, "serve", "dist/piped.agent.tgz")
	cmd.Stdin = strings.NewReader(pipedRequests(
		`{"name":"word_count","arguments":{"text":"one two three"}}`,
		`{"name":"nap","arguments":{"ms":1500}}`,
	))
	var stdout, stderr e2eBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, err := e2eWait(cmd, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Errorf("exit %d, want 0\nstderr:\n%s", code, stderr.String())
	}
	got := pipedReplies(t, stdout.String())
	want := map[int]string{1: "initialized", 2: "nap,word_count", 3: "3 words", 4: "slept 1500"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("reply to request %d: got %q, want %q", id, got[id], w)
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	var statuses []string
	for _, r := range calls(t, dir) {
		statuses = append(statuses, r.Tool+"="+r.Status)
	}
	if strings.Join(statuses, " ") != "word_count=success nap=success" {
		t.Errorf("call records: %v, want word_count=success nap=success", statuses)
	}
}

// TestServeStdioTerminate: SIGTERM stops serve at once, with stdin open
// or already closed (while it answers what it read): the call in flight
// is cancelled, not waited for, and serve exits 0.
func TestServeStdioTerminate(t *testing.T) {
	dir := pipedWorkspace(t)
	for _, open := range []bool{true, false} {
		t.Run(fmt.Sprintf("stdin open %v", open), func(t *testing.T) {
			cmd := e2eCommand(t, dir, e2eOpts{}, "serve", "dist/piped.agent.tgz")
			requests := pipedRequests(`{"name":"nap","arguments":{"ms":25000}}`)
			if open {
				// The child's stdin is a pipe the test holds open (an
				// *os.File, so that Wait does not wait for a copy).
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				defer w.Close()
				if _, err := io.WriteString(w, requests); err != nil {
					t.Fatal(err)
				}
				cmd.Stdin = r
			} else {
				cmd.Stdin = strings.NewReader(requests)
			}
			var stdout, stderr e2eBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Requests are handled in order: once tools/list is answered
			// the call is under way.
			if !e2eEventually(30*time.Second, func() bool { return pipedReplies(t, stdout.String())[2] != "" }) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("no reply to tools/list\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			}
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			code, err := e2eWait(cmd, 10*time.Second)
			if err != nil {
				t.Fatalf("after SIGTERM, serve %v (it waited for the 25 s call)", err)
			}
			if code != 0 {
				t.Errorf("exit %d after SIGTERM, want 0\nstderr:\n%s", code, stderr.String())
			}
			t.Logf("serve stopped %s after SIGTERM", time.Since(start).Round(time.Millisecond))
		})
	}
}
