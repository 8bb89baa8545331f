package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/artifact"
)

// a2aTestServerDir holds the A2A agent the tests call (server.mjs), an
// @a2a-js/sdk server whose node_modules `make test` installs.
const a2aTestServerDir = "testdata/a2a-server"

// a2aTestServer starts the test A2A agent with the given flags and returns
// its base URL. It fails (never skips) when node or the npm dependencies
// are missing.
func a2aTestServer(t *testing.T, flags ...string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(a2aTestServerDir, "node_modules", "@a2a-js", "sdk")); err != nil {
		t.Fatalf("the test A2A server's dependencies are missing: run make test, or npm ci in internal/serve/%s", a2aTestServerDir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to run the test A2A server (internal/serve/%s): %v", a2aTestServerDir, err)
	}
	cmd := exec.Command(node, append([]string{"server.mjs"}, flags...)...)
	cmd.Dir = a2aTestServerDir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the test A2A server's URL: %v", err)
	}
	return strings.TrimSpace(line)
}

// a2aTestRun is one call of an a2a tool: its output decoded into a map (a
// string output under "text"), status, progress messages and events.
type a2aTestRun struct {
	out      map[string]any
	status   string
	reason   string
	progress []string
	events   []any
}

// a2aTestCall calls an a2a tool; with cancelAfterFirst, the call's
// context is canceled as soon as the first progress arrives.
func a2aTestCall(t *testing.T, ex Executor, a *artifact.Agent, tool, args string, cancelAfterFirst bool) (*a2aTestRun, error) {
	t.Helper()
	call := testCall(a, tool, args)
	if call.Tool == nil {
		t.Fatalf("the artifact has no tool %s", tool)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := &a2aTestRun{}
	var mu sync.Mutex
	call.Progress = func(_, _ float64, msg string) {
		mu.Lock()
		run.progress = append(run.progress, msg)
		mu.Unlock()
		if cancelAfterFirst {
			cancel()
		}
	}
	call.Event = func(kind string, data any) {
		if kind != "a2a" {
			t.Errorf("event kind\ngot:  %s\nwant: a2a", kind)
		}
		mu.Lock()
		run.events = append(run.events, data)
		mu.Unlock()
	}
	res, err := ex.Call(ctx, call)
	if err != nil {
		return nil, err
	}
	run.status, run.reason = res.Status, res.Reason
	if err := json.Unmarshal(res.Output, &run.out); err != nil {
		var s string
		if json.Unmarshal(res.Output, &s) != nil {
			t.Fatalf("output of %s\ngot:  %s\nwant: a JSON object or string", tool, res.Output)
		}
		run.out = map[string]any{"text": s}
	}
	return run, nil
}

// a2aTestArtifactText returns the text of a task output's first artifact.
func a2aTestArtifactText(out map[string]any) string {
	arts, _ := out["artifacts"].([]any)
	if len(arts) == 0 {
		return ""
	}
	a, _ := arts[0].(map[string]any)
	s, _ := a["text"].(string)
	return s
}

func TestA2AExecutor(t *testing.T) {
	base := a2aTestServer(t, "--token", "tok-a2a-93b1c7", "--header", "X-Team=blue")
	dir := t.TempDir()
	// v1 speaks A2A 1.0 (its url is a runtime value, masked in the locked
	// card); legacy speaks 0.3 only. Both answer on /rpc under their url,
	// which only the card names.
	writeFiles(t, dir, map[string]string{"agent.acl": fmt.Sprintf(`
agent "assistant" {
  capabilities = ["delegate"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "v1" {
  kind         = "a2a"
  url          = runtime("ECHO_URL")
  auth_token   = secret(runtime("ECHO_TOKEN"))
  headers      = { X-Team = "blue" }
  tenant       = { policy = "fixed", id = "acme" }
  capabilities = ["delegate"]
}

tool "legacy" {
  kind         = "a2a"
  url          = %q
  auth_token   = secret(runtime("ECHO_TOKEN"))
  headers      = { X-Team = "blue" }
  capabilities = ["delegate"]
}

tool "slow" {
  kind         = "a2a"
  url          = runtime("ECHO_URL")
  auth_token   = secret(runtime("ECHO_TOKEN"))
  headers      = { X-Team = "blue" }
  timeout_secs = 1
  capabilities = ["delegate"]
}
`, base+"/v03")})
	env := map[string]string{"ECHO_URL": base + "/v1", "ECHO_TOKEN": "tok-a2a-93b1c7"}
	a, arch, _ := buildArtifact(t, dir, "assistant", env)

	card := string(arch.Files["tools/v1/agent-card.json"])
	if !strings.Contains(card, `"url":"${ECHO_URL}/rpc"`) || strings.Contains(card, base) {
		t.Fatalf("locked card of v1\ngot:  %s\nwant: the runtime url masked as ${ECHO_URL}", card)
	}

	start := func(t *testing.T, block string, env map[string]string) Executor {
		t.Helper()
		h, _ := mcpTestHost(t, a, arch, env)
		ex, err := factories[artifact.KindA2A](context.Background(), h, block, mcpTestTools(a, block))
		if err != nil {
			t.Fatalf("starting the a2a executor of %s\ngot:  %v\nwant: started", block, err)
		}
		t.Cleanup(func() { _ = ex.Close() })
		return ex
	}

	for _, tc := range []struct {
		block, version, suffix string
	}{
		{"v1", "1.0", " (tenant acme)"},
		{"legacy", "0.3", ""},
	} {
		t.Run("A2A "+tc.version, func(t *testing.T) {
			ex := start(t, tc.block, env)
			if got := ex.(*a2aExecutor).version; got != tc.version {
				t.Fatalf("protocol version chosen from the card\ngot:  %s\nwant: %s", got, tc.version)
			}
			tool := func(op string) string { return "a2a_" + tc.block + "_" + op }

			// send: a task that completes with an artifact.
			run, err := a2aTestCall(t, ex, a, tool("send"), `{"message": "hello"}`, false)
			if err != nil {
				t.Fatalf("send\ngot:  %v\nwant: a task", err)
			}
			taskID, _ := run.out["task_id"].(string)
			if run.status != StatusSuccess || run.out["kind"] != "task" || run.out["state"] != "completed" || taskID == "" ||
				a2aTestArtifactText(run.out) != "echo: hello"+tc.suffix || run.out["message"] != "done" {
				t.Errorf("send\ngot:  %s %v\nwant: a completed task with the artifact %q", run.status, run.out, "echo: hello"+tc.suffix)
			}

			// send: a plain message in answer.
			run, err = a2aTestCall(t, ex, a, tool("send"), `{"message": "direct: hi"}`, false)
			if err != nil || run.out["kind"] != "message" || run.out["text"] != "echo: hi"+tc.suffix {
				t.Errorf("send answered by a message\ngot:  %v %v\nwant: message %q", run, err, "echo: hi"+tc.suffix)
			}

			// stream: progress for every event, the final task as output.
			run, err = a2aTestCall(t, ex, a, tool("stream"), `{"message": "stream me"}`, false)
			if err != nil {
				t.Fatalf("stream\ngot:  %v\nwant: a task", err)
			}
			if run.status != StatusSuccess || run.out["state"] != "completed" || a2aTestArtifactText(run.out) != "echo: stream me"+tc.suffix {
				t.Errorf("stream output\ngot:  %s %v\nwant: a completed task with the artifact", run.status, run.out)
			}
			wantProgress := []string{"task submitted", "working: reading the message", "working: writing the echo", "artifact echo", "completed: done"}
			if got := strings.Join(run.progress, " | "); got != strings.Join(wantProgress, " | ") {
				t.Errorf("stream progress\ngot:  %s\nwant: %s", got, strings.Join(wantProgress, " | "))
			}
			if len(run.events) != len(wantProgress) {
				t.Errorf("stream events\ngot:  %d %v\nwant: %d", len(run.events), run.events, len(wantProgress))
			}

			// get_task of the sent task.
			run, err = a2aTestCall(t, ex, a, tool("get_task"), fmt.Sprintf(`{"task_id": %q}`, taskID), false)
			if err != nil || run.out["task_id"] != taskID || run.out["state"] != "completed" || a2aTestArtifactText(run.out) != "echo: hello"+tc.suffix {
				t.Errorf("get_task\ngot:  %v %v\nwant: the completed task %s", run, err, taskID)
			}
			// get_task of a task that does not exist: an error result.
			run, err = a2aTestCall(t, ex, a, tool("get_task"), `{"task_id": "no-such-task"}`, false)
			if err != nil || run.status != StatusError || !strings.Contains(fmt.Sprint(run.out["text"]), "error -32001") {
				t.Errorf("get_task of an unknown task\ngot:  %v %v\nwant: an error result with the agent's TaskNotFound (-32001)", run, err)
			}
			// The record says why in agentform's words: the code, not the
			// agent's message (which may quote the task id).
			if run != nil && (!strings.HasSuffix(run.reason, "with JSON-RPC error -32001 (task not found)") || strings.Contains(run.reason, "no-such-task")) {
				t.Errorf("reason of get_task of an unknown task\ngot:  %q\nwant: the method and the code's name", run.reason)
			}

			// A long task: the stream is canceled after its first event,
			// which leaves the task (and its id) as a partial result; then
			// cancel_task cancels it.
			run, err = a2aTestCall(t, ex, a, tool("stream"), `{"message": "slow work"}`, true)
			if err != nil {
				t.Fatalf("stream of a long task canceled after its first event\ngot:  %v\nwant: partial_success", err)
			}
			slowID, _ := run.out["task_id"].(string)
			if run.status != StatusPartialSuccess || slowID == "" || !strings.Contains(fmt.Sprint(run.out["note"]), "get_task") {
				t.Fatalf("stream of a long task canceled after its first event\ngot:  %s %v\nwant: partial_success with the task id and a note", run.status, run.out)
			}
			run, err = a2aTestCall(t, ex, a, tool("cancel_task"), fmt.Sprintf(`{"task_id": %q}`, slowID), false)
			if err != nil || run.status != StatusSuccess || run.out["task_id"] != slowID || run.out["state"] != "canceled" {
				t.Errorf("cancel_task\ngot:  %v %v\nwant: the task %s canceled", run, err, slowID)
			}
			run, err = a2aTestCall(t, ex, a, tool("get_task"), fmt.Sprintf(`{"task_id": %q}`, slowID), false)
			if err != nil || run.out["state"] != "canceled" {
				t.Errorf("get_task after cancel_task\ngot:  %v %v\nwant: canceled", run, err)
			}
		})
	}

	t.Run("timeout_secs bounds a call", func(t *testing.T) {
		ex := start(t, "slow", env)
		_, err := a2aTestCall(t, ex, a, "a2a_slow_send", `{"message": "slow and blocking"}`, false)
		if err == nil || !strings.Contains(err.Error(), "did not answer within 1s (timeout_secs)") {
			t.Errorf("send of a long task with timeout_secs = 1\ngot:  %v\nwant: did not answer within 1s", err)
		}
	})

	t.Run("a wrong token is refused and never shown", func(t *testing.T) {
		ex := start(t, "v1", map[string]string{"ECHO_URL": base + "/v1", "ECHO_TOKEN": "wrong-token-5521"})
		_, err := a2aTestCall(t, ex, a, "a2a_v1_send", `{"message": "hello"}`, false)
		if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "wrong-token-5521") {
			t.Errorf("send with a wrong token\ngot:  %v\nwant: refused (HTTP 401), without the token", err)
		}
	})

	t.Run("an unreachable agent is an error without its runtime url", func(t *testing.T) {
		closed := "http://127.0.0.1:1"
		ex := start(t, "v1", map[string]string{"ECHO_URL": closed + "/v1", "ECHO_TOKEN": "tok-a2a-93b1c7"})
		_, err := a2aTestCall(t, ex, a, "a2a_v1_get_task", `{"task_id": "x"}`, false)
		if err == nil || !strings.Contains(err.Error(), "could not be reached") || strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("call of an unreachable agent\ngot:  %v\nwant: could not be reached, without the url", err)
		}
	})
}

func TestA2ACardInterface(t *testing.T) {
	cases := []struct {
		card string
		want a2aInterface
		err  string
	}{
		{`{"name":"a","supportedInterfaces":[{"url":"http://h/grpc","protocolBinding":"GRPC","protocolVersion":"1.0"},{"url":"http://h/old","protocolBinding":"JSONRPC","protocolVersion":"0.3"},{"url":"http://h/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"t1"}]}`,
			a2aInterface{URL: "http://h/rpc", Version: "1.0", Tenant: "t1"}, ""},
		{`{"name":"a","supportedInterfaces":[{"url":"http://h/old","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`,
			a2aInterface{URL: "http://h/old", Version: "0.3"}, ""},
		{`{"name":"a","supportedInterfaces":[{"url":"http://h/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`,
			a2aInterface{}, "lists no JSON-RPC interface"},
		{`{"name":"a","url":"http://h/a2a","protocolVersion":"0.3.0"}`, a2aInterface{URL: "http://h/a2a", Version: "0.3"}, ""},
		{`{"name":"a","url":"http://h/grpc","preferredTransport":"GRPC","additionalInterfaces":[{"url":"http://h/rpc","transport":"JSONRPC"}]}`,
			a2aInterface{URL: "http://h/rpc", Version: "0.3"}, ""},
		{`{"name":"a","url":"http://h/grpc","preferredTransport":"GRPC"}`, a2aInterface{}, "offers no JSON-RPC interface"},
	}
	for _, tc := range cases {
		got, err := a2aCardInterface([]byte(tc.card))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("interface of %s\ngot:  %+v %v\nwant: error %q", tc.card, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("interface of %s\ngot:  %+v %v\nwant: %+v", tc.card, got, err, tc.want)
		}
	}
}

func TestA2ARestoreURL(t *testing.T) {
	ref := artifact.String{Runtime: &artifact.RuntimeRef{Env: "PLANNER_URL"}}
	cases := []struct {
		card, base, want, err string
	}{
		{"${PLANNER_URL}/rpc", "http://new:9/", "http://new:9/rpc", ""},
		{"https://${PLANNER_URL}/a2a", "http://new:9/base", "https://new:9/a2a", ""},
		{"", "http://new:9/base", "http://new:9/base", ""},
		{"${OTHER}/rpc", "http://new:9", "", "cannot restore"},
		{"not a url", "http://new:9", "", "not an absolute"},
	}
	for _, tc := range cases {
		got, err := a2aRestoreURL(tc.card, tc.base, ref)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("restore %q\ngot:  %q %v\nwant: error %q", tc.card, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("restore %q with %q\ngot:  %q %v\nwant: %q", tc.card, tc.base, got, err, tc.want)
		}
	}
}

// TestA2AStreamBounds: a stream the agent misbehaves on is bounded and
// read as far as it holds: an event that never ends (no blank line), or
// artifacts appended without end, fail the call at a2aMaxBody instead of
// growing serve's memory; a stream cut in the middle of an event returns
// the task so far as partial_success, with its id. The artifact is built
// against the test agent; the calls go to a server of the test's own,
// through the block's runtime url.
func TestA2AStreamBounds(t *testing.T) {
	base := a2aTestServer(t, "--token", "tok-a2a-93b1c7")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": `
agent "assistant" {
  capabilities = ["delegate"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "v1" {
  kind         = "a2a"
  url          = runtime("ECHO_URL")
  auth_token   = secret(runtime("ECHO_TOKEN"))
  timeout_secs = 20
  capabilities = ["delegate"]
}
`})
	a, arch, _ := buildArtifact(t, dir, "assistant", map[string]string{"ECHO_URL": base + "/v1", "ECHO_TOKEN": "tok-a2a-93b1c7"})

	const task = `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t42","contextId":"c1","status":{"state":"working"}}}`
	chunk := strings.Repeat("A", 1<<20)
	behave := map[string]func(w io.Writer, flush func()){
		"endless event": func(w io.Writer, flush func()) {
			for range 40 {
				fmt.Fprintf(w, "data: %s\n", chunk)
				flush()
			}
		},
		"endless artifact": func(w io.Writer, flush func()) {
			fmt.Fprintf(w, "data: %s\n\n", task)
			for range 40 {
				fmt.Fprintf(w, `data: {"jsonrpc":"2.0","id":1,"result":{"kind":"artifact-update","taskId":"t42","contextId":"c1","append":true,"artifact":{"artifactId":"a1","parts":[{"kind":"text","text":"%s"}]}}}`+"\n\n", chunk)
				flush()
			}
		},
		"cut mid-event": func(w io.Writer, flush func()) {
			fmt.Fprintf(w, "data: %s\n\n", task)
			fmt.Fprint(w, `data: {"jsonrpc":"2.0","id":1,"result":{"kind":"status-upd`)
			flush()
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Params struct {
				Message struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"message"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		name := ""
		if p := req.Params.Message.Parts; len(p) > 0 {
			name = p[0].Text
		}
		if name == "hang" {
			<-r.Context().Done()
			return
		}
		if name == "rpc error" {
			// As @a2a-js/sdk answers a server fault.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal boom"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if b := behave[name]; b != nil {
			b(w, func() { w.(http.Flusher).Flush() })
		}
	}))
	t.Cleanup(srv.Close)
	h, _ := mcpTestHost(t, a, arch, map[string]string{"ECHO_URL": srv.URL, "ECHO_TOKEN": "tok-a2a-93b1c7"})
	ex, err := factories[artifact.KindA2A](context.Background(), h, "v1", mcpTestTools(a, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	for name, want := range map[string]string{
		"endless event":    "sent a stream event larger than 16 MiB",
		"endless artifact": "streamed more than 16 MiB of artifacts for one task",
	} {
		_, err := a2aTestCall(t, ex, a, "a2a_v1_stream", fmt.Sprintf(`{"message": %q}`, name), false)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\ngot:  %v\nwant: an error saying %q", name, err, want)
		}
	}
	run, err := a2aTestCall(t, ex, a, "a2a_v1_stream", `{"message": "cut mid-event"}`, false)
	if err != nil || run.status != StatusPartialSuccess || run.out["task_id"] != "t42" {
		t.Errorf("cut mid-event\ngot:  %+v, %v\nwant: partial_success with task t42", run, err)
	}
	// A deadline the call comes with (invoke -timeout, serve's limit)
	// shorter than timeout_secs (20 s here) is the one messages name.
	call := testCall(a, "a2a_v1_send", `{"message": "hang"}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := ex.Call(ctx, call); err == nil || !strings.Contains(err.Error(), "did not answer within 1s (the call's time limit, before timeout_secs)") {
		t.Errorf("a call with a 1 s deadline\ngot:  %v\nwant: the 1 s limit named", err)
	}
	// A JSON-RPC error sent with HTTP 500 is the call's error result,
	// with its code and message.
	for _, op := range []string{"send", "stream"} {
		run, err := a2aTestCall(t, ex, a, "a2a_v1_"+op, `{"message": "rpc error"}`, false)
		if err != nil || run.status != StatusError || !strings.Contains(run.out["text"].(string), "error -32603: internal boom") {
			t.Errorf("%s answered with HTTP 500 and a JSON-RPC error\ngot:  %+v, %v\nwant: the error's code and message", op, run, err)
		}
	}
}
