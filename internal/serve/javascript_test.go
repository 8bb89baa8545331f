package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/artifact"
)

// jsAgentACL is the agent block of the javascript test workspaces.
const jsAgentACL = `
agent "a" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`

// jsWorkspace writes a workspace with one javascript tool block per entry
// of tools (block name → the body of index.js) and extra manifest text
// (a network block), and returns its directory.
func jsWorkspace(t testing.TB, tools map[string]string, extra string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	acl := jsAgentACL + extra
	names := make([]string, 0, len(tools))
	for name := range tools {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		acl += fmt.Sprintf("\ntool %q {\n  kind   = \"javascript\"\n  source = \"./tools/%s\"\n}\n", name, name)
		files[path.Join("tools", name, "package.json")] = fmt.Sprintf(`{"name": %q, "version": "0.1.0", "private": true}`, name)
		files[path.Join("tools", name, "index.js")] = tools[name]
	}
	files["agent.acl"] = acl
	writeFiles(t, dir, files)
	return dir
}

// jsTool returns index.js exporting a tool named name whose execute has
// the given body (a function body taking {args, state, config, emit}).
func jsTool(name, prelude, body string) string {
	return fmt.Sprintf(`%s
export const %s = {
  name: %q,
  description: "A test tool.",
  parameters: { type: "object" },
  async execute({ args, state, config, emit }) {
%s
  },
};
`, prelude, name, name, body)
}

// jsFixture is a built artifact and the executors of its blocks.
type jsFixture struct {
	agent *artifact.Agent
	host  *Host
	execs map[string]Executor
}

// newJSFixture builds the workspace's artifact with the real engine and
// starts the javascript executor of every block, with env as the
// environment.
func newJSFixture(t testing.TB, dir string, env map[string]string) *jsFixture {
	t.Helper()
	a, arch, _ := buildArtifact(t, dir, "a", env)
	return startJS(t, a, arch, env)
}

// startJS starts the javascript executors of an artifact with env as the
// environment.
func startJS(t testing.TB, a *artifact.Agent, arch *artifact.Archive, env map[string]string) *jsFixture {
	t.Helper()
	h, _ := testHost(t, a, arch, env)
	f := &jsFixture{agent: a, host: h, execs: map[string]Executor{}}
	for i := range a.Tools {
		tool := &a.Tools[i]
		if tool.Kind != artifact.KindJavaScript {
			continue
		}
		ex, err := factories[artifact.KindJavaScript](context.Background(), h, strings.TrimPrefix(tool.Block, "tool."), []*artifact.Tool{tool})
		if err != nil {
			t.Fatalf("starting the executor of %s: %v", tool.Block, err)
		}
		t.Cleanup(func() { ex.Close() })
		f.execs[tool.Name] = ex
	}
	return f
}

// jsEvent is one event a call sent.
type jsEvent struct {
	kind string
	data string // JSON
}

// call runs tool with args and returns its result, error and events.
func (f *jsFixture) call(t testing.TB, ctx context.Context, tool, args string) (*Result, error, []jsEvent) {
	t.Helper()
	ex := f.execs[tool]
	if ex == nil {
		t.Fatalf("no executor for %q", tool)
	}
	c := testCall(f.agent, tool, args)
	var mu sync.Mutex
	var events []jsEvent
	c.Event = func(kind string, data any) {
		b, err := json.Marshal(data)
		if err != nil {
			t.Errorf("event %s: data does not marshal: %v", kind, err)
		}
		mu.Lock()
		events = append(events, jsEvent{kind, string(b)})
		mu.Unlock()
	}
	res, err := ex.Call(ctx, c)
	mu.Lock()
	defer mu.Unlock()
	return res, err, slices.Clone(events)
}

// TestJavaScriptTools runs real tools, bundled by the real engine, in
// the executor: results, state updates, async code, timers, events and
// failures.
func TestJavaScriptTools(t *testing.T) {
	dir := jsWorkspace(t, map[string]string{
		// Reads args, state and config; returns output and a patch with
		// a path outside /context/, which the executor must pass on
		// untouched (the server decides).
		"adder": jsTool("adder", "", `
    const sum = args.a + args.b + (state.context.offset ?? 0);
    return {
      output: { sum, config: config },
      state_update: [
        { op: "add", path: "/context/last_sum", value: sum },
        { op: "add", path: "/messages/-", value: "not mine" },
      ],
    };`),
		// A bare value is the output.
		"bare": jsTool("bare", "", `return "plain " + args.word;`),
		// Async work with timers; an interval cleared after 3 ticks.
		"sleepy": jsTool("sleepy", "", `
    const start = [];
    await new Promise((resolve) => setTimeout(() => { start.push("timeout"); resolve(); }, 5));
    let ticks = 0;
    await new Promise((resolve) => {
      const id = setInterval(() => { ticks++; if (ticks === 3) { clearInterval(id); resolve(); } }, 1);
    });
    const cancelled = setTimeout(() => { throw new Error("a cleared timer ran"); }, 1);
    clearTimeout(cancelled);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => queueMicrotask(resolve));
    return { output: { start, ticks }, status: "partial_success" };`),
		// An interval cleared while ticks are already queued (its first
		// callback outlasts several periods) runs no more: a cleared
		// timer is cleared at once, as in JavaScript.
		"cleared": jsTool("cleared", "", `
    let ticks = 0;
    await new Promise((resolve) => {
      const id = setInterval(() => {
        ticks++;
        const until = Date.now() + 30;
        while (Date.now() < until) {}
        clearInterval(id);
        setTimeout(resolve, 30);
      }, 1);
    });
    let late = 0;
    const t = setTimeout(() => { late++; }, 1);
    const until = Date.now() + 30;
    while (Date.now() < until) {}
    clearTimeout(t);
    await new Promise((resolve) => setTimeout(resolve, 30));
    return { ticks, late };`),
		// Console lines and emitted events go to Call.Event.
		"chatty": jsTool("chatty", "", `
    console.log("hello", { a: 1 }, 2);
    console.warn("careful");
    console.error(new Error("shown, not thrown"));
    emit("progress", { step: 1 });
    return { output: "done" };`),
		"thrower": jsTool("thrower", "", `
    const helper = () => { throw new Error("boom: " + args.why); };
    helper();`),
		"timerthrow": jsTool("timerthrow", "", `
    await new Promise(() => { setTimeout(() => { throw new TypeError("late failure"); }, 1); });`),
		"rejecter": jsTool("rejecter", "", `
    await null;
    throw "a string, not an Error";`),
		"badpatch":  jsTool("badpatch", "", `return { output: 1, state_update: { op: "add" } };`),
		"badstatus": jsTool("badstatus", "", `return { output: 1, status: "fine" };`),
		"stubbed": jsTool("stubbed", `import { readFile } from "agentc:fs";
import kv from "agentc:kv";`, `
    if (args.which === "kv") { return new kv.Store("x"); }
    return readFile("/etc/hostname");`),
		"forever":   jsTool("forever", "", `while (true) {}`),
		"recursive": jsTool("recursive", "", `const down = (n) => down(n + 1) + 1; return down(0);`),
		"pending":   jsTool("pending", "", `await new Promise(() => {});`),
	}, "")
	f := newJSFixture(t, dir, nil)
	ctx := context.Background()

	if tool := f.agent.Tools[slices.IndexFunc(f.agent.Tools, func(x artifact.Tool) bool { return x.Name == "adder" })]; tool.Export != "adder" || tool.File != "tools/adder/bundle.js" {
		t.Fatalf("agent.json tool\ngot:  export %q, file %q\nwant: export \"adder\", file \"tools/adder/bundle.js\"", tool.Export, tool.File)
	}

	t.Run("output and state update", func(t *testing.T) {
		c := testCall(f.agent, "adder", `{"a": 2, "b": 3}`)
		c.State = []byte(`{"context": {"offset": 10}, "messages": []}`)
		c.Config = []byte(`{"unit": "m"}`)
		res, err := f.execs["adder"].Call(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(res.Output), `{"sum":15,"config":{"unit":"m"}}`; got != want {
			t.Errorf("output\ngot:  %s\nwant: %s", got, want)
		}
		if got, want := string(res.StateUpdate), `[{"op":"add","path":"/context/last_sum","value":15},{"op":"add","path":"/messages/-","value":"not mine"}]`; got != want {
			t.Errorf("state update\ngot:  %s\nwant: %s", got, want)
		}
		if res.Status != "" {
			t.Errorf("status\ngot:  %q\nwant: \"\" (success)", res.Status)
		}
	})

	t.Run("bare value", func(t *testing.T) {
		res, err, _ := f.call(t, ctx, "bare", `{"word": "text"}`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(res.Output), `"plain text"`; got != want || res.StateUpdate != nil {
			t.Errorf("got:  %s (update %s)\nwant: %s (no update)", got, res.StateUpdate, want)
		}
	})

	t.Run("async with timers", func(t *testing.T) {
		res, err, _ := f.call(t, ctx, "sleepy", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(res.Output), `{"start":["timeout"],"ticks":3}`; got != want || res.Status != StatusPartialSuccess {
			t.Errorf("got:  %s, status %q\nwant: %s, status %q", got, res.Status, want, StatusPartialSuccess)
		}
	})

	t.Run("cleared timers", func(t *testing.T) {
		res, err, _ := f.call(t, ctx, "cleared", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(res.Output), `{"ticks":1,"late":0}`; got != want {
			t.Errorf("got:  %s\nwant: %s (a cleared interval or timeout ran)", got, want)
		}
	})

	t.Run("console and emit", func(t *testing.T) {
		res, err, events := f.call(t, ctx, "chatty", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Output) != `"done"` {
			t.Errorf("output\ngot:  %s\nwant: \"done\"", res.Output)
		}
		want := []jsEvent{
			{"console", `{"level":"log","message":"hello {\"a\":1} 2"}`},
			{"console", `{"level":"warn","message":"careful"}`},
		}
		if len(events) != 4 || !slices.Equal(events[:2], want) {
			t.Fatalf("events\ngot:  %v\nwant: %v, then an error line and a progress event", events, want)
		}
		if events[2].kind != "console" || !strings.Contains(events[2].data, `"level":"error"`) || !strings.Contains(events[2].data, "shown, not thrown") {
			t.Errorf("event 3\ngot:  %v\nwant: a console error with the error's text", events[2])
		}
		if got, want := events[3], (jsEvent{"progress", `{"step":1}`}); got != want {
			t.Errorf("event 4\ngot:  %v\nwant: %v", got, want)
		}
	})

	for _, tc := range []struct {
		tool, args string
		want       []string
	}{
		{"thrower", `{"why": "because"}`, []string{`the tool "thrower" threw: Error: boom: because`, "tools/thrower/bundle.js:", "in tools/thrower/index.js"}},
		{"timerthrow", `{}`, []string{`the tool "timerthrow" threw in a timer: TypeError: late failure`, "tools/timerthrow/bundle.js:"}},
		{"rejecter", `{}`, []string{`the tool "rejecter" threw: "a string, not an Error"`}},
		{"badpatch", `{}`, []string{`returned a value agentform cannot use`, "state_update must be an array of JSON Patch operations"}},
		{"badstatus", `{}`, []string{`status must be "success", "partial_success" or "error"`}},
		{"stubbed", `{"which": "fs"}`, []string{"agentc:fs is not available in agentform serve"}},
		{"stubbed", `{"which": "kv"}`, []string{"agentc:kv is not available in agentform serve"}},
		{"recursive", `{}`, []string{`the tool "recursive" threw: the call stack overflowed (more than 4096 nested calls)`}},
	} {
		t.Run("error "+tc.tool, func(t *testing.T) {
			res, err, _ := f.call(t, ctx, tc.tool, tc.args)
			if err == nil {
				t.Fatalf("got:  output %s\nwant: an error", res.Output)
			}
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\ngot:  %v\nwant: it to contain %q", err, w)
				}
			}
		})
	}

	for _, tool := range []string{"forever", "pending"} {
		t.Run("stopped by the deadline "+tool, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			res, err, _ := f.call(t, ctx, tool, `{}`)
			if err == nil || !strings.Contains(err.Error(), "did not finish before the call's deadline and was stopped") {
				t.Fatalf("got:  %v, %v\nwant: stopped at the deadline", res, err)
			}
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err, _ := f.call(t, ctx, "forever", `{}`)
		if err == nil || !strings.Contains(err.Error(), "was cancelled") {
			t.Fatalf("got:  %v\nwant: the call was cancelled", err)
		}
	})

	// The runtime is fresh for every call: a stopped call leaves nothing
	// behind, and calls run side by side.
	t.Run("concurrent calls", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err, _ := f.call(t, ctx, "bare", fmt.Sprintf(`{"word": "w%d"}`, i))
				if err != nil {
					errs <- err
					return
				}
				if want := fmt.Sprintf(`"plain w%d"`, i); string(res.Output) != want {
					errs <- fmt.Errorf("got:  %s\nwant: %s", res.Output, want)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// TestJavaScriptDefaultLimitThroughServer: a call through the server
// (serve's MCP calls, invoke without -timeout) gets the javascript limit,
// not the server's longer default for other kinds.
func TestJavaScriptDefaultLimitThroughServer(t *testing.T) {
	dir := jsWorkspace(t, map[string]string{"spin": jsTool("spin", "", `for (;;) {}`)}, "")
	_, _, data := buildArtifact(t, dir, "a", nil)
	s, err := OpenData(context.Background(), filepath.Join(dir, "a.agent.tgz"), data, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func(d time.Duration) { jsCallTimeout = d }(jsCallTimeout)
	jsCallTimeout = 100 * time.Millisecond
	type result struct {
		resp *Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := s.Call(context.Background(), Request{Tool: "spin", Args: json.RawMessage(`{}`), Session: "s", Via: "invoke", Held: s.Held()})
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.resp.Record.Status != StatusError || !strings.Contains(r.resp.Record.Error, `did not finish within 100ms and was stopped`) {
			t.Fatalf("got:  %+v %v\nwant: stopped after the javascript limit", r.resp, r.err)
		}
	case <-time.After(20 * time.Second):
		// The spinning call is left to the process's end.
		t.Fatal("the call was not stopped at the javascript limit")
	}
}

// TestJavaScriptDefaultLimit checks that a call whose context has no
// deadline is bounded by jsCallTimeout (shortened here).
func TestJavaScriptDefaultLimit(t *testing.T) {
	dir := jsWorkspace(t, map[string]string{"spin": jsTool("spin", "", `for (;;) {}`)}, "")
	f := newJSFixture(t, dir, nil)
	defer func(d time.Duration) { jsCallTimeout = d }(jsCallTimeout)
	jsCallTimeout = 100 * time.Millisecond
	_, err, _ := f.call(t, context.Background(), "spin", `{}`)
	if err == nil || !strings.Contains(err.Error(), `the tool "spin" did not finish within 100ms and was stopped`) {
		t.Fatalf("got:  %v\nwant: stopped after the default limit", err)
	}
}
