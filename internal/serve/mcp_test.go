package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentform/agentform/internal/artifact"
)

// mcpTestBuildServer builds the resolve package's test MCP server into dir.
func mcpTestBuildServer(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "mcpserver")
	out, err := exec.Command("go", "build", "-o", bin, "../resolve/testdata/mcpserver").CombinedOutput()
	if err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	return bin
}

// mcpTestWithdrawals records Host.Withdraw calls, which may come from the
// executor's watcher goroutine.
type mcpTestWithdrawals struct {
	mu      sync.Mutex
	reasons map[string]string
	changed chan struct{}
}

func (w *mcpTestWithdrawals) get(tool string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.reasons[tool]
	return r, ok
}

func (w *mcpTestWithdrawals) all() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]string{}
	for k, v := range w.reasons {
		out[k] = v
	}
	return out
}

// wait waits (up to 30 s, a bound for a broken executor, not a measure)
// until tool is withdrawn.
func (w *mcpTestWithdrawals) wait(t *testing.T, tool string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if r, ok := w.get(tool); ok {
			return r
		}
		select {
		case <-w.changed:
		case <-deadline:
			t.Fatalf("withdrawal of %s\ngot:  none (withdrawn: %v)\nwant: withdrawn after tools/list_changed", tool, w.all())
		}
	}
}

// mcpTestHost returns a Host over an artifact whose Withdraw calls are
// recorded.
func mcpTestHost(t *testing.T, a *artifact.Agent, arch *artifact.Archive, env map[string]string) (*Host, *mcpTestWithdrawals) {
	w := &mcpTestWithdrawals{reasons: map[string]string{}, changed: make(chan struct{}, 100)}
	h := &Host{
		Agent: a,
		Files: arch.Files,
		Env:   NewEnv(func(name string) (string, bool) { v, ok := env[name]; return v, ok }),
		Logf:  func(format string, args ...any) { t.Logf("serve: "+format, args...) },
		Withdraw: func(tool, reason string) {
			w.mu.Lock()
			w.reasons[tool] = reason
			w.mu.Unlock()
			select {
			case w.changed <- struct{}{}:
			default:
			}
		},
	}
	return h, w
}

// mcpTestTools returns the artifact's tools of block.
func mcpTestTools(a *artifact.Agent, block string) []*artifact.Tool {
	var out []*artifact.Tool
	for i := range a.Tools {
		if a.Tools[i].Block == "tool."+block {
			out = append(out, &a.Tools[i])
		}
	}
	return out
}

// mcpTestManifest is a workspace with one agent and the mcp tool block
// "srv" whose body is given.
func mcpTestManifest(body string) string {
	return `
agent "assistant" {
  capabilities = ["search"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "srv" {
  kind         = "mcp"
  capabilities = ["search"]
` + body + `
}
`
}

// mcpTestStart starts the mcp executor of block srv.
func mcpTestStart(t *testing.T, h *Host, a *artifact.Agent) *mcpExecutor {
	t.Helper()
	ex, err := factories[artifact.KindMCP](context.Background(), h, "srv", mcpTestTools(a, "srv"))
	if err != nil {
		t.Fatalf("starting the mcp executor\ngot:  %v\nwant: started", err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	return ex.(*mcpExecutor)
}

// mcpTestCall calls a tool and returns its output (a string when the
// output is a JSON string) and status.
func mcpTestCall(t *testing.T, ex Executor, a *artifact.Agent, tool, args string) (string, string, error) {
	t.Helper()
	res, err := ex.Call(context.Background(), testCall(a, tool, args))
	if err != nil {
		return "", "", err
	}
	var s string
	if json.Unmarshal(res.Output, &s) != nil {
		s = string(res.Output)
	}
	status := res.Status
	if status == "" {
		status = StatusSuccess
	}
	return s, status, nil
}

// mcpTestPid reads the pid the test server wrote.
func mcpTestPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the server's pidfile: %v", err)
	}
	pid, err := strconv.Atoi(strings.Fields(string(b))[0])
	if err != nil {
		t.Fatalf("pidfile holds %q", b)
	}
	return pid
}

// mcpTestGone reports whether pid no longer runs (a zombie counts as
// gone).
func mcpTestGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i >= 0 && len(s) > i+2 && s[i+2] == 'Z'
}

func TestMCPExecutor(t *testing.T) {
	bin := mcpTestBuildServer(t, t.TempDir())

	t.Run("stdio: close kills what the server started in a session of its own", func(t *testing.T) {
		if _, err := os.Stat("/proc/self/stat"); err != nil {
			t.Skip("no /proc: only the process group is killed here")
		}
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(fmt.Sprintf(`
  transport = "stdio"
  command   = %q
  args      = ["-detach", runtime("SRV_PIDFILE")]
`, bin))})
		a, arch, _ := buildArtifact(t, dir, "assistant", map[string]string{"SRV_PIDFILE": "-pidfile=" + filepath.Join(dir, "plan.pid")})
		pidfile := filepath.Join(dir, "serve.pid")
		h, _ := mcpTestHost(t, a, arch, map[string]string{"SRV_PIDFILE": "-pidfile=" + pidfile})
		ex := mcpTestStart(t, h, a)
		b, err := os.ReadFile(pidfile)
		if err != nil {
			t.Fatal(err)
		}
		pids := strings.Fields(string(b))
		if len(pids) != 2 {
			t.Fatalf("pidfile holds %q, want the server's pid and its detached child's", b)
		}
		if err := ex.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, f := range pids {
			pid, _ := strconv.Atoi(f)
			for deadline := time.Now().Add(10 * time.Second); !mcpTestGone(pid); {
				if time.Now().After(deadline) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("process %d still runs after Close", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	})

	t.Run("stdio: lock, serve, call, list_changed withdraws, close kills", func(t *testing.T) {
		dir := t.TempDir()
		// Two pages of tools; a runtime argument (the pidfile, different
		// at plan and serve time) and a secret config value that must
		// reach the server's environment (it then serves has_SRV_SECRET).
		writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(fmt.Sprintf(`
  transport = "stdio"
  command   = %q
  args      = ["-echo", "-page=2", "-report-env=SRV_SECRET", "-poison-on-signal=tool3", runtime("SRV_PIDFILE")]
  config    = { SRV_SECRET = secret(runtime("SRV_SECRET")) }
`, bin))})
		planEnv := map[string]string{"SRV_PIDFILE": "-pidfile=" + filepath.Join(dir, "plan.pid"), "SRV_SECRET": "s3cret-value-42"}
		a, arch, _ := buildArtifact(t, dir, "assistant", planEnv)
		var names []string
		for _, tl := range mcpTestTools(a, "srv") {
			names = append(names, tl.Name)
			if tl.MCP == nil || !strings.HasPrefix(tl.MCP.Digest, "sha256:") {
				t.Fatalf("tool %s in agent.json\ngot:  %+v\nwant: mcp settings with a locked digest", tl.Name, tl.MCP)
			}
		}
		if got, want := strings.Join(names, " "), "srv__has_SRV_SECRET srv__tool1 srv__tool2 srv__tool3"; got != want {
			t.Fatalf("registered tools\ngot:  %s\nwant: %s", got, want)
		}

		pidfile := filepath.Join(dir, "serve.pid")
		h, w := mcpTestHost(t, a, arch, map[string]string{"SRV_PIDFILE": "-pidfile=" + pidfile, "SRV_SECRET": "s3cret-value-42"})
		ex := mcpTestStart(t, h, a)
		if got := w.all(); len(got) != 0 {
			t.Fatalf("withdrawn at startup against the server the artifact was locked with\ngot:  %v\nwant: none", got)
		}
		pid := mcpTestPid(t, pidfile)

		out, status, err := mcpTestCall(t, ex, a, "srv__tool2", `{"x": 5}`)
		if err != nil || status != StatusSuccess || out != "tool2: x=5" {
			t.Errorf("call of srv__tool2\ngot:  %q %s %v\nwant: \"tool2: x=5\" success", out, status, err)
		}
		out, status, err = mcpTestCall(t, ex, a, "srv__tool1", `{"x": -1}`)
		if err != nil || status != StatusError || out != "tool1: x=-1" {
			t.Errorf("call of srv__tool1 with an error result\ngot:  %q %s %v\nwant: \"tool1: x=-1\" error", out, status, err)
		}

		// The server changes tool3 and sends tools/list_changed.
		if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		reason := w.wait(t, "srv__tool3")
		if !strings.Contains(reason, `upstream tool "tool3" changed since it was locked (digest sha256:`) || !strings.Contains(reason, "agentform lock -upgrade") {
			t.Errorf("withdrawal reason\ngot:  %s\nwant: tool3 changed, digests, agentform lock -upgrade", reason)
		}
		if _, err := ex.Call(context.Background(), testCall(a, "srv__tool3", `{"x": 1}`)); err == nil || !strings.Contains(err.Error(), "withdrawn") {
			t.Errorf("call of the withdrawn srv__tool3\ngot:  %v\nwant: refused as withdrawn", err)
		}
		if out, _, err := mcpTestCall(t, ex, a, "srv__tool2", `{"x": 6}`); err != nil || out != "tool2: x=6" {
			t.Errorf("call of srv__tool2 after the change\ngot:  %q %v\nwant: \"tool2: x=6\"", out, err)
		}
		if got := w.all(); len(got) != 1 {
			t.Errorf("withdrawn\ngot:  %v\nwant: srv__tool3 only", got)
		}

		if err := ex.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for deadline := time.Now().Add(10 * time.Second); !mcpTestGone(pid); {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("server process %d after Close\ngot:  running\nwant: gone", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := ex.Call(context.Background(), testCall(a, "srv__tool2", `{"x": 1}`)); err == nil {
			t.Errorf("call after Close\ngot:  success\nwant: an error")
		}
	})

	t.Run("stdio: tools changed or dropped since the lock are withdrawn at startup", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(fmt.Sprintf(`
  transport = "stdio"
  command   = %q
  args      = ["-echo", runtime("SRV_POISON", "-name=agentform-test-server"), runtime("SRV_DROP", "-version=1.0.0")]
`, bin))})
		// Locked while the server is clean.
		a, arch, _ := buildArtifact(t, dir, "assistant", nil)
		// Served by a server that changed tool2 and dropped tool3.
		h, w := mcpTestHost(t, a, arch, map[string]string{"SRV_POISON": "-poison=tool2", "SRV_DROP": "-drop=tool3"})
		ex := mcpTestStart(t, h, a)
		got := w.all()
		if len(got) != 2 {
			t.Fatalf("withdrawn at startup\ngot:  %v\nwant: srv__tool2 and srv__tool3", got)
		}
		if r := got["srv__tool2"]; !strings.Contains(r, `upstream tool "tool2" changed since it was locked (digest sha256:`) || !strings.Contains(r, "→ sha256:") {
			t.Errorf("reason for srv__tool2\ngot:  %s\nwant: changed since it was locked, old → new digest", r)
		}
		if r := got["srv__tool3"]; !strings.Contains(r, `upstream tool "tool3" is no longer served`) {
			t.Errorf("reason for srv__tool3\ngot:  %s\nwant: no longer served", r)
		}
		if _, err := ex.Call(context.Background(), testCall(a, "srv__tool2", `{"x": 1}`)); err == nil || !strings.Contains(err.Error(), "is withdrawn: upstream tool") {
			t.Errorf("call of the changed srv__tool2\ngot:  %v\nwant: refused as withdrawn", err)
		}
		if out, _, err := mcpTestCall(t, ex, a, "srv__tool1", `{"x": 2}`); err != nil || out != "tool1: x=2" {
			t.Errorf("call of the unchanged srv__tool1\ngot:  %q %v\nwant: \"tool1: x=2\"", out, err)
		}
	})

	t.Run("stdio: startup fails when the server cannot start or cannot list its tools", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(fmt.Sprintf(`
  transport = "stdio"
  command   = runtime("SRV_CMD", %q)
  args      = ["-echo", runtime("SRV_FAIL", "-name=agentform-test-server")]
`, bin))})
		a, arch, _ := buildArtifact(t, dir, "assistant", nil)
		// A server writing its command's path where JSON-RPC belongs: the
		// SDK's error quotes the first 32 bytes of it, cut inside the
		// runtime value, which the scrubber would then not find whole.
		garbage := filepath.Join(t.TempDir(), "secret-dir-77")
		writeFiles(t, filepath.Dir(garbage), map[string]string{"secret-dir-77": "#!/bin/sh\necho \"\\\"xxxxxxxxxxxxxxxxxx$0\\\"\"\nexec sleep 60\n"})
		if err := os.Chmod(garbage, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			env  map[string]string
			want string
		}{
			{map[string]string{"SRV_CMD": "/nonexistent/secret-dir-77/server"}, "the MCP server command of block \"srv\" does not exist"},
			{map[string]string{"SRV_CMD": " "}, "the MCP server command of block \"srv\" is empty or only white space; set SRV_CMD to the program that runs the server"},
			{map[string]string{"SRV_FAIL": "-fail-list"}, "tool listing is broken today"},
			{map[string]string{"SRV_CMD": garbage}, "what the server sent could not be decoded (agentform does not quote it)"},
		} {
			h, _ := mcpTestHost(t, a, arch, tc.env)
			ex, err := factories[artifact.KindMCP](context.Background(), h, "srv", mcpTestTools(a, "srv"))
			if err == nil {
				_ = ex.Close()
				t.Errorf("startup with %v\ngot:  started\nwant: an error", tc.env)
				continue
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret-dir-77") || strings.Contains(err.Error(), "xxxxxxxx") {
				t.Errorf("startup error with %v\ngot:  %v\nwant: %q, without the runtime command", tc.env, err, tc.want)
			}
		}
	})

	for _, mode := range []string{"event-stream", "json"} {
		t.Run("http ("+mode+" answers): token and headers, call, list_changed withdraws", func(t *testing.T) {
			testMCPHTTP(t, bin, mode == "json")
		})
	}
}

// testMCPHTTP locks, serves and calls tools of the test server over
// streamable HTTP, answering with event streams or (jsonResponse) JSON.
func testMCPHTTP(t *testing.T, bin string, jsonResponse bool) {
	srv := exec.Command(bin, "-http=127.0.0.1:0", "-token=tok-5e6f7a8b", "-echo", "-tools=4", "-page=3", "-poison-on-signal=tool4", fmt.Sprintf("-json-response=%t", jsonResponse))
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	endpoint, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the server's URL: %v", err)
	}
	endpoint = strings.TrimSpace(endpoint)

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport  = "http"
  url        = runtime("SRV_URL")
  auth_token = secret(runtime("SRV_TOKEN"))
  headers    = { X-Team = "blue" }
`)})
	env := map[string]string{"SRV_URL": endpoint, "SRV_TOKEN": "tok-5e6f7a8b"}
	a, arch, _ := buildArtifact(t, dir, "assistant", env)
	if n := len(mcpTestTools(a, "srv")); n != 4 {
		t.Fatalf("registered tools\ngot:  %d\nwant: 4", n)
	}

	// A wrong token fails startup without showing the token.
	h, _ := mcpTestHost(t, a, arch, map[string]string{"SRV_URL": endpoint, "SRV_TOKEN": "wrong-token-0000"})
	if ex, err := factories[artifact.KindMCP](context.Background(), h, "srv", mcpTestTools(a, "srv")); err == nil {
		_ = ex.Close()
		t.Errorf("startup with a wrong token\ngot:  started\nwant: an error")
	} else if strings.Contains(err.Error(), "wrong-token-0000") {
		t.Errorf("startup error\ngot:  %v\nwant: no token in it", err)
	} else if want := `connecting to the MCP server of block "srv": it refused the credentials (HTTP 401 Unauthorized); check the block's auth_token and headers`; !strings.HasPrefix(err.Error(), want) {
		// Said as plan says it, with what to check.
		t.Errorf("startup error\ngot:  %v\nwant: %s…", err, want)
	}

	h, w := mcpTestHost(t, a, arch, env)
	ex := mcpTestStart(t, h, a)
	if got := w.all(); len(got) != 0 {
		t.Fatalf("withdrawn at startup\ngot:  %v\nwant: none", got)
	}
	out, status, err := mcpTestCall(t, ex, a, "srv__tool3", `{"x": 7}`)
	if err != nil || status != StatusSuccess || out != "tool3: x=7" {
		t.Errorf("call of srv__tool3\ngot:  %q %s %v\nwant: \"tool3: x=7\" success", out, status, err)
	}

	if err := srv.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	reason := w.wait(t, "srv__tool4")
	if !strings.Contains(reason, `upstream tool "tool4" changed since it was locked`) {
		t.Errorf("withdrawal reason\ngot:  %s\nwant: tool4 changed since it was locked", reason)
	}
	if _, err := ex.Call(context.Background(), testCall(a, "srv__tool4", `{"x": 1}`)); err == nil || !strings.Contains(err.Error(), "withdrawn") {
		t.Errorf("call of the withdrawn srv__tool4\ngot:  %v\nwant: refused as withdrawn", err)
	}
	if out, _, err := mcpTestCall(t, ex, a, "srv__tool1", `{"x": 8}`); err != nil || out != "tool1: x=8" {
		t.Errorf("call of srv__tool1 after the change\ngot:  %q %v\nwant: \"tool1: x=8\"", out, err)
	}
}

func TestMCPOutput(t *testing.T) {
	// A text result is its text; anything else keeps content and
	// structuredContent.
	cases := []struct {
		in   string
		want string
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, `"hi"`},
		{`{"content":[]}`, `{"content":[]}`},
		{`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`},
		{`{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`, `{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`},
	}
	for _, tc := range cases {
		var res mcp.CallToolResult
		if err := json.Unmarshal([]byte(tc.in), &res); err != nil {
			t.Fatal(err)
		}
		got, err := mcpOutput(&res)
		if err != nil || string(got) != tc.want {
			t.Errorf("output of %s\ngot:  %s %v\nwant: %s", tc.in, got, err, tc.want)
		}
	}
}

// mcpTestHTTPServer starts the test MCP server over HTTP with two tools
// and returns its endpoint.
func mcpTestHTTPServer(t *testing.T) string {
	t.Helper()
	return mcpTestStartHTTP(t, mcpTestBuildServer(t, t.TempDir()), "-tools=2")
}

// mcpTestStartHTTP starts the test MCP server bin over HTTP with args and
// returns its endpoint.
func mcpTestStartHTTP(t *testing.T, bin string, args ...string) string {
	t.Helper()
	srv := exec.Command(bin, append([]string{"-http=127.0.0.1:0"}, args...)...)
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	endpoint, _ := bufio.NewReader(stdout).ReadString('\n')
	return strings.TrimSpace(endpoint)
}

// mcpTestErrorServer answers every JSON-RPC request with error -32000 and
// the message message gives for the request, and returns its URL.
func mcpTestErrorServer(t *testing.T, message func(*http.Request) string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		msg, _ := json.Marshal(message(r))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`, req.ID, msg)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestServeRuntimePartsHidden: an upstream server's error, quoted when
// serve cannot start the block, loses what it quotes of a secret URL (its
// path, a credential-named and any other query value) and of a secret
// header (the token of "Token X"), and the header quoted escaped in a JSON
// string or percent-encoded, not only whole values and the URL's host.
func TestServeRuntimePartsHidden(t *testing.T) {
	endpoint := mcpTestHTTPServer(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport = "http"
  url       = secret(runtime("MCP_URL"))
  headers   = { X-Api-Key = secret(runtime("MCP_HDR")) }
`)})
	a, arch, _ := buildArtifact(t, dir, "assistant", map[string]string{"MCP_URL": endpoint, "MCP_HDR": "Token plan-token-0000"})
	lastWord := func(s string) string {
		f := strings.Fields(s)
		if len(f) == 0 {
			return ""
		}
		return f[len(f)-1]
	}
	for _, tc := range []struct {
		name    string
		message func(*http.Request) string
		want    string
	}{
		{"the request path", func(r *http.Request) string { return "denied: path=" + r.URL.RequestURI() },
			"denied: path=(part of MCP_URL)?api_key=(part of MCP_URL)&team=(part of MCP_URL)"},
		{"the header's token", func(r *http.Request) string { return "denied: key " + lastWord(r.Header.Get("X-Api-Key")) },
			"denied: key (part of MCP_HDR)"},
		{"the header in JSON", func(r *http.Request) string {
			b, _ := json.Marshal(r.Header.Get("X-Api-Key"))
			return "denied: key " + string(b)
		},
			`denied: key "(value of MCP_HDR)"`},
		{"the header percent-encoded", func(r *http.Request) string { return "denied: key " + url.QueryEscape(r.Header.Get("X-Api-Key")) },
			"denied: key (value of MCP_HDR)"},
	} {
		srv := mcpTestErrorServer(t, tc.message)
		h, _ := mcpTestHost(t, a, arch, map[string]string{
			"MCP_URL": srv + "/mcp/SENTINEL_path?api_key=SENTINEL_q&team=SENTINEL_team",
			"MCP_HDR": `Token SENTINEL"tok/7f3a9`,
		})
		ex, err := factories[artifact.KindMCP](context.Background(), h, "srv", mcpTestTools(a, "srv"))
		if err == nil {
			_ = ex.Close()
			t.Errorf("%s: started\nwant: an error", tc.name)
			continue
		}
		if strings.Contains(err.Error(), "SENTINEL") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: startup error\ngot:  %v\nwant: %s", tc.name, err, tc.want)
		}
	}
}

// TestServeStdioStderrPartsHidden: the standard error of a stdio server
// that fails at startup, quoted in serve's error, loses the password of a
// secret DSN in the block's config, not only the whole DSN.
func TestServeStdioStderrPartsHidden(t *testing.T) {
	// A server that prints the password of its DSN and exits.
	err := stdioStartupError(t, `  config    = { DSN = secret(runtime("MCP_DSN")) }`+"\n",
		map[string]string{"MCP_DSN": "postgres://app:plan-pw-000@db/x"},
		"#!/bin/sh\npw=${DSN#*://*:}\necho \"dsn password: ${pw%%@*}\" >&2\nexit 1\n",
		map[string]string{"MCP_DSN": "postgres://app:SENTINEL_pw@db/x"})
	if strings.Contains(err.Error(), "SENTINEL") || !strings.Contains(err.Error(), "dsn password: (part of MCP_DSN)") {
		t.Errorf("startup error\ngot:  %v\nwant: the server's standard error, the password named by MCP_DSN", err)
	}
}

// TestServeStdioStderrKeepsError: a node server that throws at startup
// prints its error above ten stack frames; the startup error shows the
// error, not only the frames.
func TestServeStdioStderrKeepsError(t *testing.T) {
	err := stdioStartupError(t, "", nil,
		"#!/bin/sh\nexec node -e 'function a(){throw new Error(\"no database configured\")} function b(){a()} b()'\n", nil)
	for _, want := range []string{"Error: no database configured", "    at a ([eval]", "more frames"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("startup error\ngot:  %v\nwant: it to contain %q", err, want)
		}
	}
}

// stdioStartupError builds an artifact whose mcp block "srv" runs
// runtime("SRV_CMD") over stdio (block holds its other lines, planEnv the
// plan's environment), starts the block's executor with SRV_CMD a script
// of the given text (and env the rest of serve's environment), and
// returns the startup error it must give.
func stdioStartupError(t *testing.T, block string, planEnv map[string]string, script string, env map[string]string) error {
	t.Helper()
	bin := mcpTestBuildServer(t, t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(fmt.Sprintf(`
  transport = "stdio"
  command   = runtime("SRV_CMD", %q)
`, bin) + block)})
	a, arch, _ := buildArtifact(t, dir, "assistant", planEnv)
	path := filepath.Join(t.TempDir(), "server")
	writeFiles(t, filepath.Dir(path), map[string]string{"server": script})
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	serveEnv := map[string]string{"SRV_CMD": path}
	for k, v := range env {
		serveEnv[k] = v
	}
	h, _ := mcpTestHost(t, a, arch, serveEnv)
	ex, err := factories[artifact.KindMCP](context.Background(), h, "srv", mcpTestTools(a, "srv"))
	if err == nil {
		_ = ex.Close()
		t.Fatal("started\nwant: an error")
	}
	return err
}

// TestServeUpstreamNameScrubbed: the log line naming the upstream server
// does not quote, through the name the server gives itself, what the
// server was reached with (its path and query in a secret URL).
func TestServeUpstreamNameScrubbed(t *testing.T) {
	endpoint := mcpTestStartHTTP(t, mcpTestBuildServer(t, t.TempDir()), "-tools=1", "-name-echo-path")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport = "http"
  url       = secret(runtime("MCP_URL"))
`)})
	a, arch, _ := buildArtifact(t, dir, "assistant", map[string]string{"MCP_URL": endpoint})
	h, _ := mcpTestHost(t, a, arch, map[string]string{"MCP_URL": endpoint + "/SENTINEL_path?api_key=SENTINEL_q"})
	var mu sync.Mutex
	var lines []string
	h.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	mcpTestStart(t, h, a)
	mu.Lock()
	defer mu.Unlock()
	log := strings.Join(lines, "\n")
	if strings.Contains(log, "SENTINEL") || !strings.Contains(log, `upstream server "(part of MCP_URL)?api_key=(part of MCP_URL)" 1.0.0 lists 1 tool`) {
		t.Errorf("log\ngot:  %s\nwant: the upstream server named without the URL's path and key", log)
	}
}

// TestServeRuntimeURLHostHidden: when serve cannot reach an mcp server
// given by a runtime() URL (nothing listening, a certificate it does not
// trust, a host that does not resolve), the error names no part of it: not
// the host, nor a user name or password (a dial error names the variable
// in their place).
func TestServeRuntimeURLHostHidden(t *testing.T) {
	endpoint := mcpTestHTTPServer(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport  = "http"
  url        = runtime("SRV_URL")
`)})
	a, arch, _ := buildArtifact(t, dir, "assistant", map[string]string{"SRV_URL": endpoint})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	for _, u := range []string{"http://" + closed + "/mcp", tlsSrv.URL + "/mcp", "http://svcaccount:pw-0123456789@mcp-host.invalid:8080/mcp"} {
		h, _ := mcpTestHost(t, a, arch, map[string]string{"SRV_URL": u})
		_, err := factories[artifact.KindMCP](context.Background(), h, "srv", mcpTestTools(a, "srv"))
		host := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://"), "/mcp")
		// The dial error names where it dialled: the variable stands there.
		dial := strings.HasPrefix(u, "http://")
		if err == nil || strings.Contains(err.Error(), host) || strings.Contains(err.Error(), "127.0.0.1") || dial && !strings.Contains(err.Error(), "SRV_URL") ||
			strings.Contains(err.Error(), "mcp-host") || strings.Contains(err.Error(), "svcaccount") || strings.Contains(err.Error(), "pw-0123456789") {
			t.Errorf("starting with %s as SRV_URL got: %v\nwant: an error naming SRV_URL, not the host", u, err)
		}
	}
}

// TestServeRedirectKeepsCredentials: an mcp server that redirects to
// another origin does not get serve to send the block's token there.
func TestServeRedirectKeepsCredentials(t *testing.T) {
	endpoint := mcpTestHTTPServer(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport  = "http"
  url        = runtime("SRV_URL")
  auth_token = secret(runtime("TOK"))
`)})
	a, arch, _ := buildArtifact(t, dir, "assistant", map[string]string{"SRV_URL": endpoint, "TOK": "tok-abcdef123"})

	var mu sync.Mutex
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer other.Close()
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	h, _ := mcpTestHost(t, a, arch, map[string]string{"SRV_URL": first.URL + "/mcp", "TOK": "tok-abcdef123"})
	_, err := factories[artifact.KindMCP](context.Background(), h, "srv", mcpTestTools(a, "srv"))
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("starting against a redirect got: %v\nwant: the redirect refused", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 0 {
		t.Errorf("the other origin got %d requests (Authorization %q), want none", len(got), got)
	}
}

// TestMCPUpstreamLost: once the upstream server is gone for good — a stdio
// server that exited, an HTTP server restarted, which no longer knows the
// session — a call says so and that serve must be restarted (logged once),
// not only the MCP library's "connection closed" or "session not found".
func TestMCPUpstreamLost(t *testing.T) {
	bin := mcpTestBuildServer(t, t.TempDir())
	want := func(t *testing.T, ex Executor, a *artifact.Agent, logged *[]string, what string) {
		t.Helper()
		for range 2 {
			_, err := ex.Call(context.Background(), testCall(a, "srv__tool1", `{"x": 1}`))
			if err == nil || !strings.Contains(err.Error(), `the MCP server of block "srv" is no longer connected: `+what) ||
				!strings.Contains(err.Error(), "until agentform serve is restarted") {
				t.Errorf("call after the server went away\ngot:  %v\nwant: no longer connected: %s, restart serve", err, what)
			}
		}
		n := 0
		for _, l := range *logged {
			if strings.Contains(l, "no longer connected") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("log\ngot:  %q\nwant: one line saying the server is no longer connected", *logged)
		}
	}

	t.Run("stdio server exited", func(t *testing.T) {
		dir := t.TempDir()
		pidfile := filepath.Join(dir, "pid")
		writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport = "stdio"
  command   = "` + bin + `"
  args      = ["-echo", "-tools=2", "-pidfile=` + pidfile + `"]
`)})
		a, arch, _ := buildArtifact(t, dir, "assistant", nil)
		h, _ := mcpTestHost(t, a, arch, nil)
		var logged []string
		h.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
		ex := mcpTestStart(t, h, a)
		if err := syscall.Kill(mcpTestPid(t, pidfile), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		want(t, ex, a, &logged, "its process exited")
	})

	t.Run("http server restarted", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		start := func() *exec.Cmd {
			srv := exec.Command(bin, "-http="+addr, "-echo", "-tools=2")
			stdout, _ := srv.StdoutPipe()
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
				t.Fatalf("the server did not start: %v", err)
			}
			return srv
		}
		srv := start()
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport = "http"
  url       = "http://` + addr + `/mcp"
`)})
		a, arch, _ := buildArtifact(t, dir, "assistant", nil)
		h, _ := mcpTestHost(t, a, arch, nil)
		var logged []string
		h.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
		ex := mcpTestStart(t, h, a)
		if out, _, err := mcpTestCall(t, ex, a, "srv__tool1", `{"x": 2}`); err != nil || out != "tool1: x=2" {
			t.Fatalf("call before the restart\ngot:  %q %v\nwant: \"tool1: x=2\"", out, err)
		}
		_ = srv.Process.Kill()
		_ = srv.Wait()
		srv = start()
		t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
		want(t, ex, a, &logged, "it ended the session")
	})
}

// TestOpenOnCall: with OnCall (invoke) a block's executor starts at the
// first call of one of its tools, so a call of another tool neither needs
// nor reaches an mcp block's upstream server; the upstream's tools are
// still checked against the lock when it starts, and a changed one is
// refused as withdrawn (blocked), as serve refuses it.
func TestOpenOnCall(t *testing.T) {
	bin := mcpTestBuildServer(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := func(args ...string) *exec.Cmd {
		srv := exec.Command(bin, append([]string{"-http=" + addr, "-echo", "-tools=2"}, args...)...)
		stdout, _ := srv.StdoutPipe()
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
			t.Fatalf("the server did not start: %v", err)
		}
		t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
		return srv
	}
	srv := start()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport = "http"
  url       = "http://`+addr+`/mcp"
`) + `
tool "count" {
  kind         = "bash"
  capabilities = ["search"]
}
`})
	_, _, data := buildArtifact(t, dir, "assistant", nil)
	path := filepath.Join(dir, "assistant.agent.tgz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(onCall bool) (*Server, error) {
		s, err := Open(context.Background(), path, Options{Dir: dir, OnCall: onCall, Logf: func(f string, a ...any) { t.Logf(f, a...) }})
		if err == nil {
			t.Cleanup(func() { s.Close() })
		}
		return s, err
	}
	call := func(s *Server, tool, args string) *Response {
		t.Helper()
		r, err := s.Call(context.Background(), Request{Tool: tool, Args: []byte(args), Held: s.Held(), Via: "invoke"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	// The upstream is down: serve does not start; with OnCall the bash
	// tool runs, and only a call of the block's tools fails.
	_ = srv.Process.Kill()
	_ = srv.Wait()
	if _, err := open(false); err == nil || !strings.Contains(err.Error(), `connecting to the MCP server of block "srv"`) {
		t.Errorf("Open with the upstream down\ngot:  %v\nwant: cannot connect", err)
	}
	s, err := open(true)
	if err != nil {
		t.Fatalf("Open with OnCall and the upstream down\ngot:  %v\nwant: opened", err)
	}
	if r := call(s, "count", `{"script": "echo hi"}`); r.Status != StatusSuccess {
		t.Errorf("bash tool with the upstream down\ngot:  %s %s\nwant: success", r.Status, r.Error)
	}
	if r := call(s, "srv__tool1", `{"x": 1}`); r.Status != StatusError || !strings.Contains(r.Error, `connecting to the MCP server of block "srv"`) {
		t.Errorf("mcp tool with the upstream down\ngot:  %s %s\nwant: error, cannot connect", r.Status, r.Error)
	}

	// A changed upstream tool is checked when the block starts: blocked.
	start("-poison=tool1")
	s, err = open(true)
	if err != nil {
		t.Fatal(err)
	}
	if r := call(s, "srv__tool1", `{"x": 1}`); r.Status != StatusBlocked || !strings.Contains(r.Error, "changed since it was locked") {
		t.Errorf("changed mcp tool with OnCall\ngot:  %s %s\nwant: blocked, withdrawn as changed", r.Status, r.Error)
	}
	if r := call(s, "srv__tool2", `{"x": 2}`); r.Status != StatusSuccess || string(r.Output) != `"tool2: x=2"` {
		t.Errorf("unchanged mcp tool with OnCall\ngot:  %s %s %s\nwant: success", r.Status, r.Error, r.Output)
	}
}

// A stdio server's relative command is the workspace's, as plan found
// it: serve given the workspace with -chdir, and running elsewhere (an MCP
// client's directory), starts it from there.
func TestMCPRelativeCommandFromWorkspace(t *testing.T) {
	dir := t.TempDir()
	mcpTestBuildServer(t, filepath.Join(dir, "bin"))
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport = "stdio"
  command   = "./bin/mcpserver"
`)})
	a, arch, _ := buildArtifact(t, dir, "assistant", nil)
	t.Chdir(t.TempDir())
	h, _ := mcpTestHost(t, a, arch, nil)
	h.Dir = dir
	mcpTestStart(t, h, a)
}

// TestServeInvalidHeaders: a header or token no HTTP request can carry (a
// runtime value with a line break, or a header name an older agentform
// let into agent.json) fails the block's startup with an error naming the
// block and the header, never the value, for mcp and a2a blocks alike.
func TestServeInvalidHeaders(t *testing.T) {
	endpoint := mcpTestHTTPServer(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport  = "http"
  url        = runtime("MCP_URL")
  auth_token = secret(runtime("MCP_TOK"))
  headers    = { X-Api-Key = secret(runtime("MCP_HDR")) }
`) + `
tool "peer" {
  kind         = "a2a"
  url          = "http://127.0.0.1:9"
  auth_token   = secret(runtime("MCP_TOK"))
  headers      = { X-Api-Key = secret(runtime("MCP_HDR")) }
  capabilities = ["search"]
}
`})
	good := map[string]string{"MCP_URL": endpoint, "MCP_TOK": "tok-1", "MCP_HDR": "hdr-1"}
	a, arch, _ := buildArtifact(t, dir, "assistant", good)
	with := func(k, v string) map[string]string {
		env := maps.Clone(good)
		env[k] = v
		return env
	}
	for _, kind := range []string{artifact.KindMCP, artifact.KindA2A} {
		block := map[string]string{artifact.KindMCP: "srv", artifact.KindA2A: "peer"}[kind]
		for _, tc := range []struct {
			name    string
			env     map[string]string
			headers string
			want    string
		}{
			{"a header value with a line break", with("MCP_HDR", "SENTINEL\r\nX-Other: 1"), "",
				`the headers of block "` + block + `": the value of "X-Api-Key" is not a valid header value (it has line breaks or control characters)`},
			{"a token with a NUL", with("MCP_TOK", "SENTINEL\x00"), "",
				`the auth_token of block "` + block + `" is not a valid header value (it has line breaks or control characters)`},
			{"a header name of an older artifact", good, `{"Bad Header": "x"}`,
				`the headers of block "` + block + `": "Bad Header" is not a valid header name`},
		} {
			tools := mcpTestTools(a, block)
			if tc.headers != "" {
				for i, tl := range tools {
					c := *tl
					if c.MCP != nil {
						m := *c.MCP
						m.Headers = artifact.JSON(tc.headers)
						c.MCP = &m
					} else {
						m := *c.A2A
						m.Headers = artifact.JSON(tc.headers)
						c.A2A = &m
					}
					tools[i] = &c
				}
			}
			h, _ := mcpTestHost(t, a, arch, tc.env)
			ex, err := factories[kind](context.Background(), h, block, tools)
			if err == nil {
				_ = ex.Close()
				t.Errorf("%s, %s: started\nwant: %s", kind, tc.name, tc.want)
				continue
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SENTINEL") {
				t.Errorf("%s, %s: startup error\ngot:  %v\nwant: %s, without the value", kind, tc.name, err, tc.want)
			}
		}
	}
}

// An MCP call or startup that its context ended says why in words: a
// deadline, or a cancellation (an interrupt, a client's
// notifications/cancelled), never the library's "context canceled".
func TestMCPErrTextStopped(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, stop := context.WithTimeout(context.Background(), -time.Second)
	defer stop()
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{cancelled, fmt.Errorf("calling %q: %w", "tools/call", context.Canceled), "cancelled before the MCP server answered"},
		{expired, fmt.Errorf("calling %q: %w", "tools/call", context.DeadlineExceeded), "the MCP server did not answer in time"},
	} {
		if got := mcpErrText(tc.ctx, tc.err); got != tc.want {
			t.Errorf("mcpErrText(%v)\ngot:  %s\nwant: %s", tc.err, got, tc.want)
		}
	}
}
