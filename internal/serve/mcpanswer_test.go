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
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/mcpwire"
	"github.com/agentform/agentform/internal/mcpwire/mcpwiretest"
)

// mcpRawUpstream is an MCP server over streamable HTTP written by hand
// (mcpwiretest), so that it can answer as no SDK would: it serves the one
// tool "fetch" and answers each call of it with answer, given the call's
// id and its argument "mode". It counts what it writes of answers in
// written, and never writes more than mcpRawCap of one, so that a serve
// that reads without bound fails the test instead of the machine.
func mcpRawUpstream(t *testing.T, written *atomic.Int64, answer func(w *mcpCappedWriter, id json.RawMessage, mode string)) *httptest.Server {
	t.Helper()
	return mcpwiretest.NewServer(t, map[string]mcpwiretest.Answer{
		"tools/list": func(w http.ResponseWriter, req *mcpwiretest.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"fetch","description":"Fetches.","inputSchema":{"type":"object","properties":{"mode":{"type":"string"}}}}]}}`, req.ID)
		},
		"tools/call": func(w http.ResponseWriter, req *mcpwiretest.Request) {
			var params struct {
				Arguments struct {
					Mode string `json:"mode"`
				} `json:"arguments"`
			}
			_ = json.Unmarshal(req.Params, &params)
			answer(&mcpCappedWriter{ResponseWriter: w, written: written, left: mcpRawCap}, req.ID, params.Arguments.Mode)
		},
	})
}

// mcpRawCap is the most mcpRawUpstream writes of one answer: far past the
// bound, and what a serve that reads without one would hold.
const mcpRawCap = 256 << 20

// mcpCappedWriter counts what it writes and fails past its cap.
type mcpCappedWriter struct {
	http.ResponseWriter
	written *atomic.Int64
	left    int
}

func (c *mcpCappedWriter) Write(p []byte) (int, error) {
	if len(p) > c.left {
		return 0, io.ErrShortWrite
	}
	n, err := c.ResponseWriter.Write(p)
	c.left -= n
	c.written.Add(int64(n))
	return n, err
}

// flush sends what was written so far.
func (c *mcpCappedWriter) flush() { _ = http.NewResponseController(c.ResponseWriter).Flush() }

// mcpRawEvents is how much of log messages the upstream sends before it
// answers in mode "events".
const mcpRawEvents = 96 << 20

// mcpRawAnswer answers a call of the raw upstream: "ok" with text "ok";
// "json" with a JSON answer whose text never ends; "line" with an event
// stream whose one data: line never ends; "events" with mcpRawEvents of
// small log messages (of structured data, which the SDK is slow to
// decode), then the answer "done", then log messages without end.
func mcpRawAnswer(w *mcpCappedWriter, id json.RawMessage, mode string) {
	chunk := strings.Repeat("x", 64<<10)
	var err error
	switch mode {
	case "ok":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, id)
	case "json":
		w.Header().Set("Content-Type", "application/json")
		_, err = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
		for err == nil {
			_, err = io.WriteString(w, chunk)
		}
	case "line":
		w.Header().Set("Content-Type", "text/event-stream")
		_, err = fmt.Fprintf(w, `data: {"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
		for err == nil {
			_, err = io.WriteString(w, chunk)
		}
	case "events":
		w.Header().Set("Content-Type", "text/event-stream")
		rows := strings.Repeat(`{"a":[1,2,{"b":"c"}],"d":{"e":null}},`, 100)
		event := `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"rows":[` + rows + "0]}}}\n\n"
		for sent := 0; err == nil && sent < mcpRawEvents; sent += len(event) {
			_, err = io.WriteString(w, event)
		}
		if err == nil {
			_, err = fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", id)
			w.flush()
		}
		for err == nil {
			_, err = io.WriteString(w, event)
		}
	}
}

// TestServeMCPAnswerTooLarge: an upstream that answers a call without
// end, as one JSON body or as one event-stream line, fails that call with
// status error and the reason, having been read little past the 16 MiB
// bound; the upstream session goes on, and the next call gets its answer.
// Many small events are no answer too large, however many: the call gets
// the answer they come before, serve holds none of the log messages, and
// it stops reading the stream with the call.
func TestServeMCPAnswerTooLarge(t *testing.T) {
	var written atomic.Int64
	up := mcpRawUpstream(t, &written, mcpRawAnswer)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(`
  transport = "http"
  url       = runtime("SRV_URL")
`)})
	env := map[string]string{"SRV_URL": up.URL + "/mcp"}
	_, _, data := buildArtifact(t, dir, "assistant", env)
	path := filepath.Join(dir, "assistant.agent.tgz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Each case has a serve of its own, so that a failure of one cannot
	// pass for another's.
	open := func(t *testing.T) *Server {
		s, err := Open(context.Background(), path, Options{Dir: t.TempDir(), Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			Logf: func(f string, a ...any) { t.Logf(f, a...) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	call := func(t *testing.T, s *Server, mode string) *Response {
		t.Helper()
		// A deadline that outlives the call, as an MCP client's may: serve
		// must not rely on it to stop reading what comes after the answer.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		t.Cleanup(cancel)
		resp, err := s.Call(ctx, Request{Tool: "srv__fetch", Args: json.RawMessage(fmt.Sprintf(`{"mode":%q}`, mode)), Session: "t", Via: "invoke", Held: s.Held()})
		if err != nil {
			t.Fatalf("call in mode %s: %v", mode, err)
		}
		return resp
	}

	for _, tc := range []struct {
		mode string
		// wantErr is the call's error; "" for the output "done".
		wantErr string
		// most is the most the upstream may write: what serve reads, and
		// what the connection buffers.
		most int64
		// heap, when set, is the most the live heap may grow by during
		// the call.
		heap uint64
	}{
		{mode: "json", wantErr: `calling "fetch" on the MCP server of block "srv" failed: the MCP server's answer was larger than 16 MiB`, most: 32 << 20},
		{mode: "line", wantErr: `calling "fetch" on the MCP server of block "srv" failed: the MCP server's answer was larger than 16 MiB`, most: 32 << 20},
		{mode: "events", most: mcpRawEvents + 16<<20, heap: 12 << 20},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			s := open(t)
			written.Store(0)
			var grew uint64
			if tc.heap > 0 {
				stop := mcpHeapGrowth(&grew)
				defer func() {
					stop()
					t.Logf("the live heap grew by %.1f MiB", float64(grew)/(1<<20))
					if grew > tc.heap {
						t.Errorf("the live heap grew by %d MiB during the call\nwant: at most %d MiB", grew>>20, tc.heap>>20)
					}
				}()
			}
			start := time.Now()
			resp := call(t, s, tc.mode)
			if tc.wantErr != "" {
				if resp.Status != StatusError || resp.Error != tc.wantErr || resp.Record.Status != StatusError {
					t.Errorf("call\ngot:  %s %q (recorded %s)\nwant: error %q", resp.Status, resp.Error, resp.Record.Status, tc.wantErr)
				}
			} else if resp.Status != StatusSuccess || string(resp.Output) != `"done"` {
				t.Errorf("call\ngot:  %s %s %q\nwant: success \"done\"", resp.Status, resp.Output, resp.Error)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the call took %s\nwant: it to end at the bound, or at the answer", took)
			}
			// Whatever serve left unread of the stream, it stops reading:
			// the upstream's writes stall, then fail.
			time.Sleep(200 * time.Millisecond)
			before := written.Load()
			time.Sleep(300 * time.Millisecond)
			w := written.Load()
			t.Logf("the upstream wrote %.1f MiB", float64(w)/(1<<20))
			if w > tc.most || w != before {
				t.Errorf("the upstream wrote %d MiB, %d MiB of it after the call\nwant: at most %d MiB, none after", w>>20, (w-before)>>20, tc.most>>20)
			}
			// The upstream session is still there for the next call.
			if resp := call(t, s, "ok"); resp.Status != StatusSuccess || string(resp.Output) != `"ok"` {
				t.Errorf("the next call\ngot:  %s %s %q\nwant: success \"ok\"", resp.Status, resp.Output, resp.Error)
			}
		})
	}
}

// TestServeMCPListTooLarge: an upstream whose tools/list answer never
// ends fails serve's startup with the reason, not with memory run out.
func TestServeMCPListTooLarge(t *testing.T) {
	var endless atomic.Bool
	var written atomic.Int64
	up := mcpwiretest.NewServer(t, map[string]mcpwiretest.Answer{
		"tools/list": func(w http.ResponseWriter, req *mcpwiretest.Request) {
			w.Header().Set("Content-Type", "application/json")
			if !endless.Load() {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"fetch","inputSchema":{"type":"object"}}]}}`, req.ID)
				return
			}
			cw := &mcpCappedWriter{ResponseWriter: w, written: &written, left: mcpRawCap}
			_, err := fmt.Fprintf(cw, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"fetch","description":"`, req.ID)
			for chunk := strings.Repeat("x", 64<<10); err == nil; {
				_, err = io.WriteString(cw, chunk)
			}
		},
	})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(fmt.Sprintf("  transport = \"http\"\n  url       = %q\n", up.URL+"/mcp"))})
	a, arch, _ := buildArtifact(t, dir, "assistant", nil)
	endless.Store(true)
	h, _ := mcpTestHost(t, a, arch, nil)
	ex, err := factories[artifact.KindMCP](context.Background(), h, "srv", mcpTestTools(a, "srv"))
	if err == nil {
		_ = ex.Close()
	}
	want := `listing the tools of the MCP server of block "srv": the MCP server's answer was larger than 16 MiB`
	if err == nil || err.Error() != want {
		t.Errorf("startup\ngot:  %v\nwant: %s", err, want)
	}
	if w := written.Load(); w > 32<<20 {
		t.Errorf("the upstream wrote %d MiB\nwant: little more than 16 MiB read", w>>20)
	}
}

// mcpHeapGrowth measures, until stop is called, how far the live heap
// grows above what it is now, into grew.
func mcpHeapGrowth(grew *uint64) (stop func()) {
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := live()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			if l := live(); l > base && l-base > *grew {
				*grew = l - base
			}
			select {
			case <-done:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}

// TestServeMCPAnswerTooLargeStdio: over stdio the MCP library bounds a
// message of the server (one line) to the same 16 MiB, and fails the call
// that meets a longer one with the reason; it cannot skip the line, so
// the connection to the server ends there.
func TestServeMCPAnswerTooLargeStdio(t *testing.T) {
	bin := mcpTestBuildServer(t, t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(fmt.Sprintf(`
  transport = "stdio"
  command   = %q
  args      = ["-echo", "-big-answer=%d"]
`, bin, 17<<20))})
	a, arch, _ := buildArtifact(t, dir, "assistant", nil)
	h, _ := mcpTestHost(t, a, arch, nil)
	ex := mcpTestStart(t, h, a)
	if out, _, err := mcpTestCall(t, ex, a, "srv__tool1", `{"x": 1}`); err != nil || out != "tool1: x=1" {
		t.Fatalf("a call with a small answer\ngot:  %q %v\nwant: \"tool1: x=1\"", out, err)
	}
	want := `calling "tool1" on the MCP server of block "srv" failed: the MCP server wrote a message larger than 16 MiB on its standard output, which ends the connection to it; restart agentform serve once the server is fixed`
	for _, c := range []struct{ what, args string }{
		{"a call with an answer over 16 MiB", `{"x": 99}`},
		{"the next call", `{"x": 2}`},
	} {
		if _, _, err := mcpTestCall(t, ex, a, "srv__tool1", c.args); err == nil || err.Error() != want {
			t.Errorf("%s\ngot:  %v\nwant: %s", c.what, err, want)
		}
	}
}

// TestMCPEvents: an event stream is handed on event by event as the SDK
// splits it, whatever the chunks it arrives in; an event over the bound
// is never handed on, the answer in its place ends the stream (or, for no
// call, an error); a message serve has no use for loses its data.
func TestMCPEvents(t *testing.T) {
	const max = 128
	over := func() []byte { return []byte(`{"over":true}`) }
	log := `data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}`
	long := "data: " + strings.Repeat("x", max) + "\n\n"
	for _, tc := range []struct {
		name, stream string
		noOver       bool
		// broken ends the stream with an error in place of its end.
		broken  bool
		want    string
		wantErr error
	}{
		{name: "events", stream: "data: {\"a\":1}\n\nid: 2\ndata: {\"b\":2}\n\n", want: "data: {\"a\":1}\n\nid: 2\ndata: {\"b\":2}\n\n"},
		{name: "CRLF", stream: "data: {}\r\n\r\n: c\r\n\r\n", want: "data: {}\r\n\r\n: c\r\n\r\n"},
		{name: "an event the end completes", stream: "data: {}\n\ndata: {\"a\":1}\n", want: "data: {}\n\ndata: {\"a\":1}\n"},
		{name: "an event of the bound", stream: "data: " + strings.Repeat("x", max-8) + "\n\n", want: "data: " + strings.Repeat("x", max-8) + "\n\n"},
		{name: "an event a byte over", stream: "data: {}\n\ndata: " + strings.Repeat("x", max-7) + "\n\ndata: {}\n\n", want: "data: {}\n\ndata: {\"over\":true}\n\n"},
		{name: "an endless line", stream: "data: {}\n\n" + long[:len(long)-2], want: "data: {}\n\ndata: {\"over\":true}\n\n"},
		{name: "an event over the bound, for no call", stream: "data: {}\n\n" + long, noOver: true, want: "data: {}\n\n", wantErr: mcpwire.ErrTooLarge},
		{name: "a log message", stream: "id: 7\n" + log + "\n\n", want: "id: 7\n\n"},
		{name: "a log message over data lines", stream: "data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/progress\"}\r\n\r\n", want: "\r\n"},
		{name: "tools/list_changed", stream: "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n", want: "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"},
		{name: "a request of the server", stream: "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n", want: "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n"},
		{name: "an event of another name", stream: "event: other\n" + log + "\n\n", want: "event: other\n" + log + "\n\n"},
		{name: "broken off", stream: "data: {}\n\ndata: {\"a\"", broken: true, want: "data: {}\n\n", wantErr: io.ErrUnexpectedEOF},
	} {
		for _, chunk := range []int{1, 2, 7, 4096} {
			var r io.Reader = &mcpwiretest.Chunked{R: strings.NewReader(tc.stream), N: chunk}
			if tc.broken {
				r = io.MultiReader(r, iotest.ErrReader(io.ErrUnexpectedEOF))
			}
			e := &mcpEvents{ReadCloser: io.NopCloser(r), max: max, over: over}
			if tc.noOver {
				e.over = nil
			}
			got, err := io.ReadAll(e)
			if string(got) != tc.want || !errors.Is(err, tc.wantErr) {
				t.Errorf("%s, chunks of %d\ngot:  %q %v\nwant: %q %v", tc.name, chunk, got, err, tc.want, tc.wantErr)
			}
		}
	}
}

// TestMCPWhole: a body is handed on once it is read whole; one over the
// bound is not handed on at all: the answer in its place, or, for no
// call, an error.
func TestMCPWhole(t *testing.T) {
	over := func() []byte { return []byte(`{"over":true}`) }
	for _, tc := range []struct {
		name, body string
		noOver     bool
		broken     bool
		want       string
		wantErr    error
	}{
		{name: "the bound", body: strings.Repeat("x", 16), want: strings.Repeat("x", 16)},
		{name: "a byte over", body: strings.Repeat("x", 17), want: `{"over":true}`},
		{name: "a byte over, for no call", body: strings.Repeat("x", 17), noOver: true, wantErr: mcpwire.ErrTooLarge},
		{name: "broken off", body: "{\"a\"", broken: true, want: "{\"a\"", wantErr: io.ErrUnexpectedEOF},
	} {
		var r io.Reader = &mcpwiretest.Chunked{R: strings.NewReader(tc.body), N: 3}
		if tc.broken {
			r = io.MultiReader(r, iotest.ErrReader(io.ErrUnexpectedEOF))
		}
		w := &mcpWhole{ReadCloser: io.NopCloser(r), max: 16, over: over}
		if tc.noOver {
			w.over = nil
		}
		got, err := io.ReadAll(w)
		if string(got) != tc.want || !errors.Is(err, tc.wantErr) {
			t.Errorf("%s\ngot:  %q %v\nwant: %q %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}
