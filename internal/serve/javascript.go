package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dlclark/regexp2/v2"
	"net/http"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja_nodejs/eventloop"
	"github.com/dop251/goja_nodejs/require"
	"github.com/evanw/esbuild/pkg/api"

	"github.com/agentform/agentform/internal/artifact"
)

func init() {
	register(artifact.KindJavaScript, newJavaScriptExecutor)
	// goja's backtracking regular expressions (regexp2) cannot be
	// interrupted; without a match timeout a catastrophic pattern outlives
	// every deadline. A match running longer than this fails with an
	// exception.
	regexp2.DefaultMatchTimeout = jsRegexpTimeout
}

// jsRegexpTimeout bounds one regular expression match in a tool.
const jsRegexpTimeout = 2 * time.Second

// jsCallTimeout bounds a call whose context has no deadline (a variable
// for tests).
var jsCallTimeout = 30 * time.Second

// jsMaxCallStack bounds the JavaScript call stack, so that runaway
// recursion is an exception rather than a Go stack overflow.
const jsMaxCallStack = 4096

// jsPreludeName names the prelude in stack traces; frames in it are never
// reported as the tool's position.
const jsPreludeName = "agentform:serve-prelude"

// jsExecutor runs the javascript tools of one block: each call evaluates
// the tool's bundle in a fresh goja runtime with an event loop, and calls
// the exported tool object's execute.
type jsExecutor struct {
	h     *Host
	block string
	tools map[string]*jsProgram // by registered name
	nw    *network
}

// jsProgram is a tool's bundle, converted to CommonJS and compiled once;
// a compiled program runs in any number of runtimes.
type jsProgram struct {
	// file is the bundle's path in the artifact.
	file string
	// export is the name the bundle exports the tool object under.
	export string
	prog   *goja.Program
	// sources maps lines of the bundle to the package file they come
	// from, for error positions.
	sources []jsSourceMark
}

// jsSourceMark records that the bundle's code from line on comes from
// file (esbuild writes a "// file" comment before each module).
type jsSourceMark struct {
	line int
	file string
}

// newJavaScriptExecutor compiles the bundles of a block's tools and takes
// a share of the artifact's network.
func newJavaScriptExecutor(_ context.Context, h *Host, block string, tools []*artifact.Tool) (Executor, error) {
	e := &jsExecutor{h: h, block: block, tools: map[string]*jsProgram{}}
	compiled := map[string]*jsProgram{}
	for _, t := range tools {
		if t.File == "" {
			return nil, fmt.Errorf("the javascript tool %q has no bundle in the artifact; run agentform apply again", t.Name)
		}
		export := t.Export
		if export == "" {
			// Artifacts written before agent.json had export: the block's
			// name is the default export.
			export = strings.TrimPrefix(t.Block, "tool.")
		}
		key := t.File + "\x00" + export
		if p := compiled[key]; p != nil {
			e.tools[t.Name] = p
			continue
		}
		bundle, ok := h.Files[t.File]
		if !ok {
			return nil, fmt.Errorf("the artifact has no %s, the bundle of the javascript tool %q", t.File, t.Name)
		}
		p, err := jsCompile(t.File, export, bundle)
		if err != nil {
			return nil, fmt.Errorf("the javascript tool %q: %w", t.Name, err)
		}
		compiled[key] = p
		e.tools[t.Name] = p
	}
	nw, err := acquireNetwork(h)
	if err != nil {
		return nil, fmt.Errorf("the workspace's network block: %w", err)
	}
	e.nw = nw
	return e, nil
}

// jsCompile converts an ESM bundle to CommonJS (goja runs scripts, not
// modules) with an inline source map back to the bundle, and compiles it.
func jsCompile(file, export string, bundle []byte) (*jsProgram, error) {
	// The map's source is resolved relative to the file itself, so it is
	// named by its base name.
	res := api.Transform(string(bundle), api.TransformOptions{
		Loader:         api.LoaderJS,
		Format:         api.FormatCommonJS,
		Platform:       api.PlatformBrowser,
		Sourcefile:     path.Base(file),
		Sourcemap:      api.SourceMapInline,
		SourcesContent: api.SourcesContentExclude,
		Charset:        api.CharsetASCII,
		LogLevel:       api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		where := ""
		if m.Location != nil {
			where = fmt.Sprintf(" at line %d", m.Location.Line)
		}
		return nil, fmt.Errorf("converting %s to CommonJS failed%s: %s", file, where, m.Text)
	}
	ast, err := goja.Parse(file, string(res.Code), parser.WithSourceMapLoader(func(string) ([]byte, error) {
		return nil, errors.New("source maps are read only inline")
	}))
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", file, err)
	}
	prog, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", file, err)
	}
	return &jsProgram{file: file, export: export, prog: prog, sources: jsSourceMarks(bundle)}, nil
}

// jsSourceMarkRE matches esbuild's comment naming the module whose code
// follows.
var jsSourceMarkRE = regexp.MustCompile(`^// (\S+\.(?:[cm]?[jt]sx?))$`)

// jsSourceMarks lists the module comments of a bundle by line.
func jsSourceMarks(bundle []byte) []jsSourceMark {
	var marks []jsSourceMark
	for i, line := range bytes.Split(bundle, []byte("\n")) {
		if m := jsSourceMarkRE.FindSubmatch(bytes.TrimRight(line, "\r")); m != nil {
			marks = append(marks, jsSourceMark{line: i + 1, file: string(m[1])})
		}
	}
	return marks
}

// sourceAt returns the package file the bundle's line comes from, or "".
func (p *jsProgram) sourceAt(line int) string {
	i := sort.Search(len(p.sources), func(i int) bool { return p.sources[i].line > line })
	if i == 0 {
		return ""
	}
	return p.sources[i-1].file
}

// Close releases the executor's share of the network.
func (e *jsExecutor) Close() error {
	if e.nw != nil {
		e.nw = nil
		releaseNetwork(e.h)
	}
	return nil
}

// Call runs one call of a tool in a fresh runtime, bounded by ctx (or by
// jsCallTimeout when ctx has no deadline).
func (e *jsExecutor) Call(ctx context.Context, call *Call) (*Result, error) {
	if call == nil || call.Tool == nil {
		return nil, errors.New("no tool to call")
	}
	p := e.tools[call.Tool.Name]
	if p == nil {
		return nil, fmt.Errorf("the block %q has no javascript tool %q", e.block, call.Tool.Name)
	}
	limit := time.Duration(0)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, jsCallTimeout)
		defer cancel()
		limit = jsCallTimeout
	}
	r := &jsRun{prog: p, call: call, nw: e.nw, limit: limit}
	return r.run(ctx)
}

// jsRun is one call: a runtime, its event loop and the call's outcome.
// Everything but vm and finished is used on the loop's goroutine only,
// which is the goroutine of run.
type jsRun struct {
	prog  *jsProgram
	call  *Call
	nw    *network
	limit time.Duration // the default limit applied, for the message; 0 when ctx had a deadline

	ctx  context.Context // cancelled when the call ends: pending requests stop
	loop *eventloop.EventLoop
	// vm is set by the first job, for interrupting it from ctx.
	vm atomic.Pointer[goja.Runtime]
	// finished is set when the call has ended: late callbacks (timers,
	// responses) do nothing.
	finished atomic.Bool

	helpers jsHelpers

	done    bool
	result  *Result
	err     error
	refusal error // the first request the network block refused

	// cleared holds, per timer or interval the tool set, whether it was
	// cleared: the event loop's ClearTimeout and ClearInterval take
	// effect only after the current job, and a tick already queued would
	// still run the callback, where JavaScript's clearInterval stops it
	// at once. Used on the loop's goroutine only.
	cleared map[any]*bool
}

// jsHelpers are what the prelude returns, for the executor's use.
type jsHelpers struct {
	// http is the agentc:http module: fetch, Headers, Response.
	http goja.Value
	// stub(name) returns the module of an agentc:* module agentform
	// serve does not provide.
	stub goja.Callable
	// format(args) renders console arguments as one line.
	format goja.Callable
	// describe(thrown) returns {message, stack}, never throwing.
	describe goja.Callable
	// toResult(value) checks execute's value and returns the JSON text
	// of {output, state_update, status}.
	toResult goja.Callable
	// makeResponse(init) and makeError(message) build a Response and an
	// Error.
	makeResponse, makeError goja.Callable
	// await(value, ok, fail) calls ok or fail when the value settles.
	await goja.Callable
}

// jsInterrupt is the value a runtime is interrupted with.
type jsInterrupt struct{ reason string }

// run evaluates the bundle, calls execute and runs the event loop until
// the returned value settles or ctx ends.
func (r *jsRun) run(ctx context.Context) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.ctx = ctx
	// require() never reads files: a bundle is self-contained, and only
	// agentc:* modules are provided.
	registry := require.NewRegistry(require.WithLoader(func(string) ([]byte, error) { return nil, require.ModuleFileDoesNotExistError }))
	r.loop = eventloop.NewEventLoop(eventloop.EnableConsole(false), eventloop.WithRegistry(registry))
	r.loop.RunOnLoop(r.start)
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(interrupted)
		if vm := r.vm.Load(); vm != nil {
			vm.Interrupt(&jsInterrupt{reason: "deadline"})
		}
		r.loop.StopNoWait()
	})
	r.loop.StartInForeground()
	if !stop() {
		// Terminate must not run while StopNoWait does.
		<-interrupted
	}
	r.finished.Store(true)
	if vm := r.vm.Load(); vm != nil {
		// Anything the loop still runs while it terminates stops at once.
		vm.Interrupt(&jsInterrupt{reason: "finished"})
	}
	cancel()
	r.loop.Terminate()

	if r.refusal != nil {
		// A refused request fails the call even when the tool caught
		// the error: the operator must see what the policy stopped.
		return nil, r.refusal
	}
	if !r.done {
		return nil, r.stopped(ctx)
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.result, nil
}

// stopped is the error of a call that ctx ended before it finished.
func (r *jsRun) stopped(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if r.limit > 0 {
			return fmt.Errorf("the tool %q did not finish within %s and was stopped", r.call.Tool.Name, r.limit)
		}
		return fmt.Errorf("the tool %q did not finish before the call's deadline and was stopped", r.call.Tool.Name)
	}
	return fmt.Errorf("the call of the tool %q was cancelled", r.call.Tool.Name)
}

// settle records the call's outcome (the first one counts) and stops the
// loop.
func (r *jsRun) settle(res *Result, err error) {
	if r.done {
		return
	}
	r.done, r.result, r.err = true, res, err
	r.loop.StopNoWait()
}

// fail settles the call with the error of a JavaScript failure: an
// exception or rejection with the tool's position, or an interrupt.
func (r *jsRun) fail(what string, err error) {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		// Stopped by ctx: run reports it.
		if !r.done {
			r.loop.StopNoWait()
		}
		return
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		r.settle(nil, r.thrown(what, ex.Value()))
		return
	}
	var se *goja.StackOverflowError
	if errors.As(err, &se) {
		r.settle(nil, fmt.Errorf("the tool %q %s: the call stack overflowed (more than %d nested calls)", r.call.Tool.Name, what, jsMaxCallStack))
		return
	}
	r.settle(nil, fmt.Errorf("the tool %q %s: %v", r.call.Tool.Name, what, err))
}

// guard recovers a panic of code running on the loop and fails the call
// with it, so that no input can crash the server.
func (r *jsRun) guard() {
	if p := recover(); p != nil {
		switch x := p.(type) {
		case *goja.Exception:
			r.fail("failed", x)
		case *goja.InterruptedError:
			r.fail("stopped", x)
		default:
			r.settle(nil, fmt.Errorf("the tool %q stopped the JavaScript engine: %v", r.call.Tool.Name, p))
		}
	}
}

// start is the loop's first job: it sets up the runtime, evaluates the
// bundle and calls execute.
func (r *jsRun) start(vm *goja.Runtime) {
	defer r.guard()
	r.vm.Store(vm)
	if r.ctx.Err() != nil {
		r.loop.StopNoWait()
		return
	}
	vm.SetMaxCallStackSize(jsMaxCallStack)
	if err := r.install(vm); err != nil {
		r.settle(nil, fmt.Errorf("setting up the JavaScript runtime: %w", err))
		return
	}
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	_ = vm.Set("module", module)
	_ = vm.Set("exports", exports)
	if _, err := vm.RunProgram(r.prog.prog); err != nil {
		r.fail("failed while loading", err)
		return
	}
	name := r.call.Tool.Name
	exported := module.Get("exports")
	if exported == nil || goja.IsUndefined(exported) || goja.IsNull(exported) {
		r.settle(nil, fmt.Errorf("the bundle of the tool %q exports nothing", name))
		return
	}
	tool := exported.ToObject(vm).Get(r.prog.export)
	if tool == nil || goja.IsUndefined(tool) || goja.IsNull(tool) {
		r.settle(nil, fmt.Errorf("the bundle of the tool %q has no export %q", name, r.prog.export))
		return
	}
	toolObj, ok := tool.(*goja.Object)
	if !ok {
		r.settle(nil, fmt.Errorf("the export %q of the tool %q is not an object", r.prog.export, name))
		return
	}
	execute, ok := goja.AssertFunction(toolObj.Get("execute"))
	if !ok {
		r.settle(nil, fmt.Errorf("the export %q of the tool %q has no execute function", r.prog.export, name))
		return
	}
	input := vm.NewObject()
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"args", r.call.Args}, {"state", r.call.State}, {"config", r.call.Config}} {
		v, err := jsParse(vm, f.raw)
		if err != nil {
			r.settle(nil, fmt.Errorf("the call's %s is not valid JSON: %w", f.name, err))
			return
		}
		_ = input.Set(f.name, v)
	}
	_ = input.Set("emit", r.emit)
	ret, err := execute(toolObj, input)
	if err != nil {
		r.fail("threw", err)
		return
	}
	// Promise.resolve(ret).then(ok, fail): a plain value settles at once
	// (when this job's promise jobs run), a promise when it settles.
	onOK := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		r.finish(call.Argument(0))
		return goja.Undefined()
	})
	onErr := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		if !r.done {
			r.settle(nil, r.thrown("threw", call.Argument(0)))
		}
		return goja.Undefined()
	})
	if _, err := r.helpers.await(goja.Undefined(), ret, onOK, onErr); err != nil {
		r.fail("failed", err)
	}
}

// finish converts execute's value into the call's result.
func (r *jsRun) finish(v goja.Value) {
	if r.done {
		return
	}
	out, err := r.helpers.toResult(goja.Undefined(), v)
	if err != nil {
		var ex *goja.Exception
		if errors.As(err, &ex) {
			r.settle(nil, fmt.Errorf("the tool %q returned a value agentform cannot use: %s", r.call.Tool.Name, strings.TrimPrefix(r.describe(ex.Value()).message, "TypeError: ")))
			return
		}
		r.fail("failed", err)
		return
	}
	var w struct {
		Output      string  `json:"output"`
		StateUpdate *string `json:"state_update"`
		Status      string  `json:"status"`
	}
	if err := json.Unmarshal([]byte(out.String()), &w); err != nil {
		r.settle(nil, fmt.Errorf("the tool %q returned a value agentform cannot read: %v", r.call.Tool.Name, err))
		return
	}
	res := &Result{Output: json.RawMessage(w.Output), Status: w.Status}
	if w.StateUpdate != nil {
		res.StateUpdate = json.RawMessage(*w.StateUpdate)
	}
	r.settle(res, nil)
}

// jsThrown describes a thrown value.
type jsThrown struct {
	message string
	stack   string
}

// describe reads a thrown value's message and stack in the prelude, which
// guards against getters that throw.
func (r *jsRun) describe(v goja.Value) jsThrown {
	out, err := r.helpers.describe(goja.Undefined(), v)
	if err != nil {
		return jsThrown{message: "an exception"}
	}
	var t jsThrown
	obj, ok := out.(*goja.Object)
	if !ok {
		return jsThrown{message: out.String()}
	}
	t.message = obj.Get("message").String()
	t.stack = obj.Get("stack").String()
	return t
}

// jsFrameRE matches a position in a goja stack trace: "file:line:col".
var jsFrameRE = regexp.MustCompile(`([^\s()]+):(\d+):(\d+)`)

// thrown is the error of a thrown or rejected value, with the tool's
// position when the stack has one outside the prelude.
func (r *jsRun) thrown(what string, v goja.Value) error {
	t := r.describe(v)
	at, where := "", ""
	for _, line := range strings.Split(t.stack, "\n") {
		m := jsFrameRE.FindStringSubmatch(line)
		if m == nil || m[1] == jsPreludeName || !strings.HasSuffix(m[1], ".js") && !strings.Contains(m[1], "/") {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		at = fmt.Sprintf(" (at %s:%s:%s", m[1], m[2], m[3])
		where = at
		if src := r.prog.sourceAt(n); src != "" && m[1] == r.prog.file {
			where += ", in " + src
		}
		at, where = at+")", where+")"
		break
	}
	// The message is the tool's own (it often quotes its arguments):
	// the record keeps where it was thrown.
	return &toolError{
		reason: fmt.Sprintf("the tool %q %s: an exception%s", r.call.Tool.Name, what, at),
		text:   fmt.Sprintf("the tool %q %s: %s%s", r.call.Tool.Name, what, t.message, where),
	}
}

// jsParse parses JSON into a JavaScript value; empty input is null.
func jsParse(vm *goja.Runtime, raw json.RawMessage) (goja.Value, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return goja.Null(), nil
	}
	if !json.Valid(raw) {
		return nil, errors.New("invalid JSON")
	}
	parse, ok := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	if !ok {
		return nil, errors.New("JSON.parse is missing")
	}
	return parse(goja.Undefined(), vm.ToValue(string(raw)))
}

// install sets up the globals a tool sees: console, timers, fetch,
// require (agentc:* modules only) and queueMicrotask.
func (r *jsRun) install(vm *goja.Runtime) error {
	prelude, err := jsPreludeProgram()
	if err != nil {
		return err
	}
	fv, err := vm.RunProgram(prelude)
	if err != nil {
		return err
	}
	factory, ok := goja.AssertFunction(fv)
	if !ok {
		return errors.New("the prelude is not a function")
	}
	native := vm.NewObject()
	_ = native.Set("fetch", r.fetch)
	hv, err := factory(goja.Undefined(), native)
	if err != nil {
		return err
	}
	h := hv.ToObject(vm)
	fn := func(name string) goja.Callable {
		f, ok := goja.AssertFunction(h.Get(name))
		if !ok {
			err = fmt.Errorf("the prelude has no %s", name)
		}
		return f
	}
	r.helpers = jsHelpers{format: fn("format"), describe: fn("describe"), toResult: fn("toResult"),
		makeResponse: fn("makeResponse"), makeError: fn("makeError"), await: fn("await"), stub: fn("stub"), http: h.Get("http")}
	if err != nil {
		return err
	}
	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug", "trace"} {
		_ = console.Set(level, r.console(level))
	}
	globals := map[string]any{
		"console":        console,
		"setTimeout":     r.setTimer(false),
		"setInterval":    r.setTimer(true),
		"setImmediate":   r.setImmediate,
		"clearTimeout":   r.clearTimer,
		"clearInterval":  r.clearTimer,
		"clearImmediate": r.clearTimer,
		"fetch":          h.Get("http").ToObject(vm).Get("fetch"),
		"Headers":        h.Get("http").ToObject(vm).Get("Headers"),
		"Response":       h.Get("http").ToObject(vm).Get("Response"),
		"require":        r.require,
	}
	for name, v := range globals {
		if err := vm.Set(name, v); err != nil {
			return err
		}
	}
	return nil
}

// require returns the agentc:* modules: agentc:http, and for any other a
// module whose functions throw, saying it is not available.
func (r *jsRun) require(call goja.FunctionCall) goja.Value {
	vm := r.vm.Load()
	name := call.Argument(0).String()
	switch {
	case name == "agentc:http":
		return r.helpers.http
	case strings.HasPrefix(name, "agentc:"):
		v, err := r.helpers.stub(goja.Undefined(), vm.ToValue(name))
		if err != nil {
			panic(err)
		}
		return v
	}
	panic(vm.NewGoError(fmt.Errorf("require(%q) is not available in agentform serve: a tool's bundle includes its dependencies, and only agentc:* modules are provided", name)))
}

// console returns the console function of a level: it sends the message
// to the client as a "console" event, and nowhere else.
func (r *jsRun) console(level string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		if r.finished.Load() {
			return goja.Undefined()
		}
		vm := r.vm.Load()
		msg, err := r.helpers.format(goja.Undefined(), vm.NewArray(toAny(call.Arguments)...))
		if err != nil {
			panic(err)
		}
		r.call.Event("console", map[string]any{"level": level, "message": msg.String()})
		return goja.Undefined()
	}
}

// toAny converts values for vm.NewArray.
func toAny(vs []goja.Value) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// emit is execute's emit(kind, data): an activity event for the client.
func (r *jsRun) emit(call goja.FunctionCall) goja.Value {
	vm := r.vm.Load()
	kind, ok := call.Argument(0).Export().(string)
	if !ok || kind == "" {
		panic(vm.NewTypeError("emit(kind, data): kind must be a non-empty string"))
	}
	if r.finished.Load() || r.done {
		return goja.Undefined()
	}
	var data json.RawMessage = json.RawMessage("null")
	if d := call.Argument(1); !goja.IsUndefined(d) {
		str, jerr := jsStringify(vm, d)
		if jerr != nil {
			panic(jerr)
		}
		data = json.RawMessage(str)
	}
	r.call.Event(kind, data)
	return goja.Undefined()
}

// jsStringify returns JSON.stringify(v), "null" for undefined.
func jsStringify(vm *goja.Runtime, v goja.Value) (string, error) {
	stringify, ok := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	if !ok {
		return "", errors.New("JSON.stringify is missing")
	}
	out, err := stringify(goja.Undefined(), v)
	if err != nil {
		return "", err
	}
	if goja.IsUndefined(out) {
		return "null", nil
	}
	return out.String(), nil
}

// jsDelay reads a timer's delay in milliseconds as browsers do: not a
// number or negative is 0, and at most 2^31-1.
func jsDelay(v goja.Value) time.Duration {
	f := v.ToFloat()
	if !(f > 0) {
		return 0
	}
	return time.Duration(min(f, 1<<31-1)) * time.Millisecond
}

// setTimer returns setTimeout or setInterval. A callback that throws
// fails the call, as an uncaught exception would end a program.
func (r *jsRun) setTimer(repeat bool) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		vm := r.vm.Load()
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(vm.NewTypeError("the timer callback must be a function"))
		}
		delay := jsDelay(call.Argument(1))
		var args []goja.Value
		if len(call.Arguments) > 2 {
			args = slices.Clone(call.Arguments[2:])
		}
		cleared := new(bool)
		var timer any
		job := func(*goja.Runtime) {
			defer r.guard()
			if !repeat {
				delete(r.cleared, timer)
			}
			if r.finished.Load() || r.done || *cleared {
				return
			}
			if _, err := fn(goja.Undefined(), args...); err != nil {
				r.fail("threw in a timer", err)
			}
		}
		if repeat {
			if iv := r.loop.SetInterval(job, max(delay, time.Millisecond)); iv != nil {
				timer = iv
			}
		} else if t := r.loop.SetTimeout(job, delay); t != nil {
			timer = t
		}
		if timer == nil {
			return goja.Undefined()
		}
		if r.cleared == nil {
			r.cleared = map[any]*bool{}
		}
		r.cleared[timer] = cleared
		return vm.ToValue(timer)
	}
}

// setImmediate runs a callback after the current job, like setTimeout 0.
func (r *jsRun) setImmediate(call goja.FunctionCall) goja.Value {
	args := append([]goja.Value{call.Argument(0), r.vm.Load().ToValue(0)}, call.Arguments[min(1, len(call.Arguments)):]...)
	return r.setTimer(false)(goja.FunctionCall{This: call.This, Arguments: args})
}

// clearTimer cancels a timer or an interval at once, as JavaScript does
// (a tick already queued does not run it); anything else is ignored.
func (r *jsRun) clearTimer(call goja.FunctionCall) goja.Value {
	timer := call.Argument(0).Export()
	if cleared, ok := r.cleared[timer]; ok {
		*cleared = true
		delete(r.cleared, timer)
	}
	switch t := timer.(type) {
	case *eventloop.Timer:
		r.loop.ClearTimeout(t)
	case *eventloop.Interval:
		r.loop.ClearInterval(t)
	}
	return goja.Undefined()
}

// fetch is the native side of agentc:http's fetch(url, method, headers,
// body), called by the prelude with the arguments normalized. It returns
// a promise that the request, made on another goroutine under the
// network block, settles on the loop.
func (r *jsRun) fetch(call goja.FunctionCall) goja.Value {
	vm := r.vm.Load()
	p, resolve, reject := vm.NewPromise()
	req := fetchRequest{URL: call.Argument(0).String(), Method: call.Argument(1).String(), Header: http.Header{}}
	if pairs, ok := call.Argument(2).Export().([]any); ok {
		for _, pair := range pairs {
			kv, ok := pair.([]any)
			if !ok || len(kv) != 2 {
				continue
			}
			name, _ := kv[0].(string)
			value, _ := kv[1].(string)
			req.Header.Add(name, value)
		}
	}
	switch b := call.Argument(3).Export().(type) {
	case string:
		req.Body = []byte(b)
	case goja.ArrayBuffer:
		req.Body = slices.Clone(b.Bytes())
	}
	// rejectWith rejects the promise with an Error; a refusal the call
	// is still running for is kept, to fail the call even if the tool
	// catches it.
	rejectWith := func(vm *goja.Runtime, err error) {
		var re *refusalError
		if errors.As(err, &re) && r.refusal == nil && !r.done {
			r.refusal = re
		}
		e, merr := r.helpers.makeError(goja.Undefined(), vm.ToValue("agentc:http: "+err.Error()))
		if merr != nil {
			r.fail("failed", merr)
			return
		}
		if err := reject(e); err != nil {
			r.fail("failed", err)
		}
	}
	// What the policy decides without a connection is decided now.
	prepared, err := r.nw.prepare(req)
	if err != nil {
		rejectWith(vm, err)
		return vm.ToValue(p)
	}
	ctx := r.ctx
	go func() {
		resp, err := r.nw.do(ctx, prepared)
		r.loop.RunOnLoop(func(vm *goja.Runtime) {
			defer r.guard()
			if r.finished.Load() || r.done {
				return
			}
			if err != nil {
				rejectWith(vm, err)
				return
			}
			v, err := r.response(vm, resp)
			if err == nil {
				err = resolve(v)
			}
			if err != nil {
				r.fail("failed", err)
			}
		})
	}()
	return vm.ToValue(p)
}

// response builds the Response object of a fetch.
func (r *jsRun) response(vm *goja.Runtime, resp *fetchResponse) (goja.Value, error) {
	init := vm.NewObject()
	_ = init.Set("status", resp.Status)
	_ = init.Set("statusText", resp.StatusText)
	_ = init.Set("url", resp.URL)
	names := make([]string, 0, len(resp.Header))
	for name := range resp.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	var pairs []any
	for _, name := range names {
		for _, v := range resp.Header[name] {
			pairs = append(pairs, vm.NewArray(strings.ToLower(name), v))
		}
	}
	_ = init.Set("headers", vm.NewArray(pairs...))
	_ = init.Set("text", string(resp.Body))
	_ = init.Set("bytes", vm.NewArrayBuffer(resp.Body))
	return r.helpers.makeResponse(goja.Undefined(), init)
}

// jsPreludeProgram is the prelude compiled once.
var jsPreludeProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile(jsPreludeName, jsPrelude, true)
})

// jsPrelude returns a function that, given the native functions, builds
// agentc:http (fetch, Headers, Response), the stub of other agentc:*
// modules, and the helpers the executor calls.
const jsPrelude = `(function (native) {
  "use strict";
  var hidden = function (o, k, v) { Object.defineProperty(o, k, { value: v, writable: true }); };

  function Headers(init) {
    hidden(this, "_pairs", []);
    if (init === undefined || init === null) { return; }
    var self = this;
    if (init instanceof Headers) {
      init._pairs.forEach(function (p) { self._pairs.push([p[0], p[1]]); });
    } else if (Array.isArray(init)) {
      init.forEach(function (p) { self.append(p[0], p[1]); });
    } else if (typeof init === "object") {
      Object.keys(init).forEach(function (k) { self.append(k, init[k]); });
    } else {
      throw new TypeError("agentc:http: headers must be an object of names and values");
    }
  }
  Headers.prototype.append = function (name, value) { this._pairs.push([String(name).toLowerCase(), String(value)]); };
  Headers.prototype.set = function (name, value) { this.delete(name); this.append(name, value); };
  Headers.prototype.delete = function (name) {
    var n = String(name).toLowerCase();
    this._pairs = this._pairs.filter(function (p) { return p[0] !== n; });
  };
  Headers.prototype.get = function (name) {
    var n = String(name).toLowerCase();
    var values = this._pairs.filter(function (p) { return p[0] === n; }).map(function (p) { return p[1]; });
    return values.length ? values.join(", ") : null;
  };
  Headers.prototype.has = function (name) { return this.get(name) !== null; };
  Headers.prototype.keys = function () {
    var seen = {};
    return this._pairs.map(function (p) { return p[0]; }).filter(function (k) { return seen[k] ? false : (seen[k] = true); }).sort();
  };
  Headers.prototype.entries = function () { var self = this; return this.keys().map(function (k) { return [k, self.get(k)]; }); };
  Headers.prototype.values = function () { return this.entries().map(function (e) { return e[1]; }); };
  Headers.prototype.forEach = function (fn, thisArg) { var self = this; this.entries().forEach(function (e) { fn.call(thisArg, e[1], e[0], self); }); };
  Headers.prototype[Symbol.iterator] = function () { return this.entries()[Symbol.iterator](); };

  function Response(init) {
    hidden(this, "_text", init.text);
    hidden(this, "_bytes", init.bytes);
    hidden(this, "_used", false);
    this.status = init.status;
    this.ok = init.status >= 200 && init.status <= 299;
    this.statusText = init.statusText;
    this.url = init.url;
    this.headers = new Headers(init.headers);
  }
  Object.defineProperty(Response.prototype, "bodyUsed", { get: function () { return this._used; } });
  Response.prototype._take = function () {
    if (this._used) { throw new TypeError("agentc:http: the response body was already read"); }
    this._used = true;
  };
  Response.prototype.text = function () {
    try { this._take(); return Promise.resolve(this._text); } catch (e) { return Promise.reject(e); }
  };
  Response.prototype.json = function () { return this.text().then(function (t) { return JSON.parse(t); }); };
  Response.prototype.bytes = function () {
    try { this._take(); return Promise.resolve(new Uint8Array(this._bytes.slice(0))); } catch (e) { return Promise.reject(e); }
  };
  Response.prototype.arrayBuffer = Response.prototype.bytes;

  function fetch(url, init) {
    try {
      if (url !== null && typeof url === "object" && typeof url.href === "string") { url = url.href; }
      if (typeof url !== "string") { throw new TypeError("agentc:http: fetch takes a URL string"); }
      init = init || {};
      var method = init.method === undefined ? "GET" : String(init.method).toUpperCase();
      var headers = new Headers(init.headers)._pairs;
      var body = init.body;
      if (body === undefined || body === null) {
        body = undefined;
      } else if (typeof body === "string") {
      } else if (body instanceof ArrayBuffer) {
      } else if (ArrayBuffer.isView(body)) {
        body = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength);
      } else {
        throw new TypeError("agentc:http: the body must be a string or a Uint8Array (JSON.stringify an object)");
      }
      if (body !== undefined && (method === "GET" || method === "HEAD")) {
        throw new TypeError("agentc:http: a " + method + " request cannot have a body");
      }
      return native.fetch(url, method, headers, body);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  function stub(name) {
    var fail = function () { throw new Error(name + " is not available in agentform serve: tools served by agentform have only agentc:http (fetch)"); };
    var member = new Proxy(function () {}, {
      get: function (t, key) { return key === "then" || typeof key === "symbol" ? undefined : member; },
      apply: fail,
      construct: fail
    });
    var inherited = new Proxy(Object.create(null), {
      get: function (t, key) { return key === "then" || typeof key === "symbol" ? undefined : member; }
    });
    return new Proxy(Object.create(null), {
      get: function (t, key) {
        if (key === "then" || key === "__esModule" || typeof key === "symbol") { return undefined; }
        return member;
      },
      getPrototypeOf: function () { return inherited; }
    });
  }

  function show(v) {
    if (typeof v === "string") { return v; }
    if (v instanceof Error) { return v.stack || String(v); }
    if (typeof v === "function") { return "[Function " + (v.name || "anonymous") + "]"; }
    if (typeof v === "object" && v !== null) {
      try { var s = JSON.stringify(v); if (s !== undefined) { return s; } } catch (e) {}
    }
    try { return String(v); } catch (e) { return "[value]"; }
  }

  function describe(e) {
    var out = { message: "", stack: "" };
    try {
      if (e instanceof Error || (e !== null && typeof e === "object" && typeof e.message === "string")) {
        var name = "";
        try { name = String(e.name || "Error"); } catch (x) { name = "Error"; }
        out.message = name + ": " + String(e.message);
        try { out.stack = typeof e.stack === "string" ? e.stack : ""; } catch (x) {}
      } else {
        out.message = typeof e === "string" ? JSON.stringify(e) : show(e);
      }
    } catch (x) {
      out.message = "an exception";
    }
    return out;
  }

  var statuses = { success: true, partial_success: true, error: true };
  function toResult(v) {
    var output = v, update, status;
    if (v !== null && typeof v === "object" && !Array.isArray(v) &&
        ("output" in v || "state_update" in v || "status" in v)) {
      output = v.output;
      update = v.state_update;
      status = v.status;
    }
    var out = {};
    try {
      out.output = JSON.stringify(output === undefined ? null : output);
    } catch (e) {
      throw new TypeError("its output is not JSON: " + e.message);
    }
    if (out.output === undefined) { out.output = "null"; }
    if (update !== undefined && update !== null) {
      if (!Array.isArray(update)) {
        throw new TypeError("state_update must be an array of JSON Patch operations, like [{op: \"add\", path: \"/context/x\", value: 1}]");
      }
      update.forEach(function (op, i) {
        if (op === null || typeof op !== "object" || Array.isArray(op)) {
          throw new TypeError("state_update[" + i + "] is not a JSON Patch operation object");
        }
      });
      try { out.state_update = JSON.stringify(update); } catch (e) {
        throw new TypeError("its state_update is not JSON: " + e.message);
      }
    }
    if (status !== undefined && status !== null) {
      if (typeof status !== "string" || !statuses[status]) {
        throw new TypeError("status must be \"success\", \"partial_success\" or \"error\"");
      }
      out.status = status;
    }
    return JSON.stringify(out);
  }

  globalThis.queueMicrotask = function (fn) {
    if (typeof fn !== "function") { throw new TypeError("queueMicrotask takes a function"); }
    Promise.resolve().then(function () { fn(); });
  };

  return {
    http: Object.freeze({ fetch: fetch, Headers: Headers, Response: Response }),
    stub: stub,
    format: function (args) { return args.map(show).join(" "); },
    describe: describe,
    toResult: toResult,
    makeResponse: function (init) { return new Response(init); },
    makeError: function (message) { return new Error(message); },
    await: function (v, ok, fail) { Promise.resolve(v).then(ok, fail); }
  };
})`
