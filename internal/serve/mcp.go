package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/mcpwire"
	"github.com/agentform/agentform/internal/proctree"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/sameorigin"
	"github.com/agentform/agentform/internal/secretparts"
)

func init() { register(artifact.KindMCP, newMCPExecutor) }

const (
	// mcpStartTimeout bounds connecting to the upstream server and listing
	// its tools, at startup and after tools/list_changed.
	mcpStartTimeout = time.Minute
	// mcpCloseTimeout bounds the clean shutdown of the upstream session
	// before its process group is killed.
	mcpCloseTimeout = 5 * time.Second
	// mcpMaxPages bounds tools/list pagination.
	mcpMaxPages = 1000
	// mcpClientVersion is the version agentform reports upstream.
	mcpClientVersion = "0.1.0"
)

// mcpExecutor proxies the registered tools of one mcp block to its
// upstream MCP server. At startup, and again whenever the server sends
// tools/list_changed, it lists the server's tools and compares the digest
// of each served tool's definition with the digest locked in the artifact;
// a tool that changed or is no longer served is withdrawn (Host.Withdraw)
// and never served again by this executor.
type mcpExecutor struct {
	h     *Host
	block string
	// tools are the block's registered tools by registered name.
	tools   map[string]*artifact.Tool
	scrub   *secretparts.Scrubber
	session *mcp.ClientSession
	capture *mcpwire.Capture
	// httpRT is the HTTP server's round tripper (nil over stdio).
	httpRT *mcpRoundTripper
	// cmd is the stdio server's process (nil over HTTP), stderr the end
	// of its standard error.
	cmd    *exec.Cmd
	server proctree.Proc // cmd's process once connected
	stderr *mcpwire.Tail
	// untrack forgets cmd's process once killed (proctree.Track).
	untrack func()

	// listMu serializes listings: the capture holds one answer at a time.
	listMu sync.Mutex

	mu        sync.Mutex
	withdrawn map[string]string // registered name → reason

	recheck chan struct{}
	// announced counts the tools/list_changed notifications received and
	// verified those a finished re-check covers; calls wait while
	// verified < announced, so a changed tool is never called between
	// the announcement and its check. verifiedCh is closed (and
	// replaced) whenever verified advances.
	verifyMu   sync.Mutex
	announced  int64
	verified   int64
	verifiedCh chan struct{}

	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	// lostOnce logs once that the upstream connection is gone.
	lostOnce sync.Once
}

// newMCPExecutor connects to the block's upstream server and checks its
// served tools against the locked digests.
func newMCPExecutor(ctx context.Context, h *Host, block string, tools []*artifact.Tool) (Executor, error) {
	e := &mcpExecutor{
		h:          h,
		block:      block,
		tools:      map[string]*artifact.Tool{},
		scrub:      &secretparts.Scrubber{},
		capture:    mcpwire.NewCapture(),
		withdrawn:  map[string]string{},
		recheck:    make(chan struct{}, 1),
		verifiedCh: make(chan struct{}),
		done:       make(chan struct{}),
	}
	var conf *artifact.MCP
	var config artifact.JSON
	for _, t := range tools {
		if t.MCP == nil {
			return nil, fmt.Errorf("tool %q of block %q has no mcp settings in agent.json; rebuild the artifact with agentform apply", t.Name, block)
		}
		e.tools[t.Name] = t
		if conf == nil {
			conf, config = t.MCP, t.Config
		}
	}
	if conf == nil {
		return nil, fmt.Errorf("block %q has no tools to serve", block)
	}
	transport, err := e.transport(conf, config)
	if err != nil {
		return nil, err
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "agentform", Version: mcpClientVersion}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// Never block the connection's reader: the re-check lists
			// tools over the same connection. Signals coalesce; calls
			// wait for the re-check (see announced).
			e.verifyMu.Lock()
			e.announced++
			e.verifyMu.Unlock()
			select {
			case e.recheck <- struct{}{}:
			default:
			}
		},
	})
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpStartTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	e.session, err = client.Connect(sctx, transport, nil)
	if err != nil {
		e.kill()
		if code := e.refusedStatus(); code != 0 {
			// As plan says it: what was refused, and what to check.
			return nil, fmt.Errorf("connecting to the MCP server of block %q: it refused the credentials (HTTP %d %s); check the block's auth_token and headers, and the environment variables they are read from (the token is sent as \"Authorization: Bearer <token>\")", block, code, http.StatusText(code))
		}
		return nil, fmt.Errorf("connecting to the MCP server of block %q: %s%s", block, e.scrub.Text(mcpErrText(sctx, err)), e.stderrNote())
	}
	if e.cmd != nil && e.cmd.Process != nil {
		// Connected, so running a moment ago. The MCP library waits for
		// it when the session closes, or when its output ends: a server
		// that ended and was waited for since is not looked at again
		// (its start time no longer matches), unless its pid went to
		// another process in that instant, which pid_max makes
		// unlikely.
		e.server, _ = proctree.Of(e.cmd.Process.Pid)
		e.untrack = proctree.Track(e.cmd.Process)
	}
	served, err := e.list(sctx)
	if err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("listing the tools of the MCP server of block %q: %s%s", block, e.scrub.Text(mcpErrText(sctx, err)), e.stderrNote())
	}
	if ir := e.session.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		// The server names itself: it may echo what it was reached with
		// (its request path). Scrubbed before it is quoted, as quoting
		// escapes what the scrubber looks for.
		h.Logf("mcp block %q: upstream server %q %s lists %s", block, e.scrub.Text(ir.ServerInfo.Name), e.scrub.Text(ir.ServerInfo.Version), toolCount(len(served)))
	}
	e.check(served)
	e.wg.Add(1)
	go e.watch()
	return e, nil
}

// transport returns the SDK transport that reaches the upstream server,
// with runtime references resolved. Every runtime value it reads is added
// to the scrubber.
func (e *mcpExecutor) transport(conf *artifact.MCP, config artifact.JSON) (mcp.Transport, error) {
	kind := conf.Transport
	if kind == "" {
		kind = "http"
		if conf.Command != nil {
			kind = "stdio"
		}
	}
	switch kind {
	case "stdio":
		if conf.Command == nil {
			return nil, fmt.Errorf("block %q has no MCP server command in agent.json; rebuild the artifact with agentform apply", e.block)
		}
		command, err := e.h.Env.String(*conf.Command)
		if err != nil {
			return nil, err
		}
		if r := conf.Command.Runtime; r != nil {
			e.scrub.Add(command, r.Env, r.Secret)
		}
		var args []string
		if conf.Args != nil {
			if args, err = e.h.Env.Strings(*conf.Args); err != nil {
				return nil, err
			}
			for i, a := range args {
				if r := conf.Args.Runtime; r != nil {
					e.scrub.Add(a, r.Env, r.Secret)
				} else if i < len(conf.Args.Values) && conf.Args.Values[i].Runtime != nil {
					r := conf.Args.Values[i].Runtime
					e.scrub.Add(a, r.Env, r.Secret)
				}
			}
		}
		env, err := resolveStringMap(e.h.Env, config, e.scrub)
		if err != nil {
			return nil, fmt.Errorf("the config of block %q: %w", e.block, err)
		}
		vars := map[string]string{}
		for _, k := range []string{"PATH", "HOME"} {
			if v, ok := os.LookupEnv(k); ok {
				vars[k] = v
			}
		}
		for k, v := range env {
			vars[k] = v
		}
		if strings.TrimSpace(command) == "" {
			if r := conf.Command.Runtime; r != nil {
				return nil, fmt.Errorf("the MCP server command of block %q is empty or only white space; set %s to the program that runs the server", e.block, r.Env)
			}
			return nil, fmt.Errorf("the MCP server command of block %q is empty or only white space; fix its command and rebuild the artifact with agentform apply", e.block)
		}
		// A relative command is the workspace's, and the server runs
		// there, as plan ran it (serve's -chdir, not where serve runs).
		path, err := mcpwire.LookCommand(command, e.h.Dir, vars["PATH"])
		if err != nil {
			return nil, fmt.Errorf("the MCP server command of block %q %s; install the server on this machine or fix its command", e.block, e.scrub.Text(err.Error()))
		}
		cmd := exec.Command(path, args...)
		cmd.Dir = e.h.Dir
		for _, k := range slices.Sorted(maps.Keys(vars)) {
			cmd.Env = append(cmd.Env, k+"="+vars[k])
		}
		// Its own process group, killed whole on Close, so that a wrapper
		// (npx, a shell script) takes its children along.
		cmd.SysProcAttr = proctree.GroupAttr()
		e.stderr = &mcpwire.Tail{Max: 4096}
		cmd.Stderr = e.stderr
		cmd.WaitDelay = time.Second
		e.cmd = cmd
		inner := &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
		return &mcpwire.Transport{Inner: inner, Capture: e.capture}, nil
	case "http":
		if conf.URL == nil {
			return nil, fmt.Errorf("block %q has no MCP server url in agent.json; rebuild the artifact with agentform apply", e.block)
		}
		endpoint, err := e.h.Env.String(*conf.URL)
		if err != nil {
			return nil, err
		}
		if r := conf.URL.Runtime; r != nil {
			// With its parts: dial and DNS errors quote the host, a
			// server's own errors may quote any part.
			e.scrub.Add(endpoint, r.Env, r.Secret)
		}
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("the MCP server url of block %q is not an absolute http or https URL", e.block)
		}
		var token string
		if conf.AuthToken != nil {
			if token, err = e.h.Env.String(*conf.AuthToken); err != nil {
				return nil, err
			}
			// A token is a credential even when written literally.
			name := "auth_token"
			if conf.AuthToken.Runtime != nil {
				name = conf.AuthToken.Runtime.Env
			}
			e.scrub.Add(token, name, true)
		}
		headers, err := resolveStringMap(e.h.Env, conf.Headers, e.scrub)
		if err != nil {
			return nil, fmt.Errorf("the headers of block %q: %w", e.block, err)
		}
		if err := blockHeaders(e.block, headers, token); err != nil {
			return nil, err
		}
		rt := &mcpRoundTripper{base: http.DefaultTransport, headers: headers, token: token, capture: e.capture}
		e.httpRT = rt
		return &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: rt, CheckRedirect: sameorigin.CheckRedirect}}, nil
	}
	return nil, fmt.Errorf("block %q has the unknown MCP transport %q; rebuild the artifact with agentform apply", e.block, kind)
}

// resolveStringMap resolves an object of string values (an mcp block's
// config or the headers of an mcp or a2a block): a JSON object whose
// values are scalars or runtime references, or one reference to such an
// object. Values read from references are added to scrub. Numbers and
// booleans become their text; null and nested values are left out, as at
// plan time.
func resolveStringMap(env *Env, raw artifact.JSON, scrub *secretparts.Scrubber) (map[string]string, error) {
	out := map[string]string{}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return out, nil
	}
	// Which values are runtime references, to scrub them from errors.
	var whole any
	if err := json.Unmarshal(raw, &whole); err != nil {
		return nil, errors.New("an object of strings in agent.json is not valid JSON; rebuild the artifact with agentform apply")
	}
	refs := map[string]*artifact.RuntimeRef{}
	var wholeRef *artifact.RuntimeRef
	if m, ok := whole.(map[string]any); ok {
		if ref, ok := asRef(m); ok {
			wholeRef = ref
		} else {
			for k, v := range m {
				if vm, ok := v.(map[string]any); ok {
					if ref, ok := asRef(vm); ok {
						refs[k] = ref
					}
				}
			}
		}
	}
	resolved, err := env.Resolve(json.RawMessage(raw))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(resolved))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, errors.New("a value that must be an object of strings is not one")
	}
	for k, v := range m {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		case bool:
			s = fmt.Sprint(x)
		default:
			continue
		}
		out[k] = s
		if ref := refs[k]; ref != nil {
			scrub.Add(s, ref.Env, ref.Secret)
		} else if wholeRef != nil {
			scrub.Add(s, wholeRef.Env, wholeRef.Secret)
		}
	}
	return out, nil
}

// list lists the upstream server's tools, following pagination, and
// returns each served tool's digest by served name, computed from the raw
// JSON the server sent exactly as the lock computes it.
func (e *mcpExecutor) list(ctx context.Context) (map[string]string, error) {
	e.listMu.Lock()
	defer e.listMu.Unlock()
	served := map[string]string{}
	if ir := e.session.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Tools == nil {
		return served, nil // the server offers no tools at all
	}
	seen := map[string]bool{}
	var kept mcpwire.Listing
	cursor := ""
	ctx, answer := withMCPAnswer(ctx)
	for page := 0; ; page++ {
		if page >= mcpMaxPages {
			return nil, fmt.Errorf("tools/list returned more than %d pages", mcpMaxPages)
		}
		e.capture.Reset()
		if _, err := e.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}); err != nil {
			if terr := e.tooLarge(answer, err); terr != nil {
				return nil, terr
			}
			return nil, err
		}
		raw := e.capture.Take()
		if raw == nil {
			return nil, errors.New("the tools/list answer was not seen on the connection")
		}
		var result struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &result); err != nil {
			return nil, fmt.Errorf("the tools/list answer is not valid: %v", err)
		}
		for i, rt := range result.Tools {
			// Only names and digests are kept, but a name may be as long
			// as the answer: the same bound as the plan's.
			if err := kept.Keep(len(rt)); err != nil {
				return nil, err
			}
			name, digest, err := resolve.MCPToolDigest(rt)
			if err != nil {
				return nil, fmt.Errorf("tools/list page %d, tool %d: %v", page+1, i+1, err)
			}
			if _, dup := served[name]; dup {
				// Scrubbed before it is quoted: quoting escapes what the
				// scrubber looks for.
				return nil, fmt.Errorf("tools/list lists the tool %q twice", e.scrub.Text(name))
			}
			served[name] = digest
		}
		if result.NextCursor == "" {
			return served, nil
		}
		if seen[result.NextCursor] {
			return nil, errors.New("tools/list pagination repeats a cursor")
		}
		seen[result.NextCursor] = true
		cursor = result.NextCursor
	}
}

// check withdraws every registered tool whose served tool is gone or
// whose digest differs from the locked one.
func (e *mcpExecutor) check(served map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(e.tools)) {
		m := e.tools[name].MCP
		digest, ok := served[m.Served]
		switch {
		case !ok:
			e.withdraw(name, fmt.Sprintf("upstream tool %q is no longer served by the MCP server of block %q; run agentform plan to review the change and apply again", m.Served, e.block))
		case m.Digest == "":
			e.withdraw(name, fmt.Sprintf("upstream tool %q has no locked digest in the artifact, so its definition cannot be checked; run agentform lock and apply again", m.Served))
		case digest != m.Digest:
			e.withdraw(name, fmt.Sprintf("upstream tool %q changed since it was locked (digest %s → %s); run agentform lock -upgrade and apply again", m.Served, mcpShortDigest(m.Digest), mcpShortDigest(digest)))
		}
	}
}

// withdraw withdraws a registered tool once, for good.
func (e *mcpExecutor) withdraw(name, reason string) {
	e.mu.Lock()
	_, already := e.withdrawn[name]
	if !already {
		e.withdrawn[name] = reason
	}
	e.mu.Unlock()
	if !already && e.h.Withdraw != nil {
		e.h.Withdraw(name, reason)
	}
}

// withdrawnReason returns why a tool was withdrawn, or "".
func (e *mcpExecutor) withdrawnReason(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.withdrawn[name]
}

// watch re-checks the served tools whenever the server announces a change.
// When the server cannot list them any more, every tool still served is
// withdrawn: an unverified definition is never served.
func (e *mcpExecutor) watch() {
	defer e.wg.Done()
	for {
		select {
		case <-e.done:
			return
		case <-e.recheck:
		}
		e.verifyMu.Lock()
		target := e.announced
		e.verifyMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), mcpStartTimeout)
		listed := make(chan struct{})
		go func() {
			select {
			case <-e.done:
				cancel()
			case <-listed:
			}
		}()
		served, err := e.list(ctx)
		close(listed)
		errText := ""
		if err != nil {
			errText = e.scrub.Text(mcpErrText(ctx, err))
		}
		cancel()
		select {
		case <-e.done:
			return
		default:
		}
		if err != nil {
			reason := fmt.Sprintf("the MCP server of block %q announced a change to its tools but could not list them (%s), so they cannot be checked against the lock; restart agentform serve once the server works", e.block, errText)
			for _, name := range slices.Sorted(maps.Keys(e.tools)) {
				e.withdraw(name, reason)
			}
			e.markVerified(target)
			continue
		}
		e.check(served)
		e.markVerified(target)
	}
}

// markVerified records that every announcement up to target was checked.
func (e *mcpExecutor) markVerified(target int64) {
	e.verifyMu.Lock()
	defer e.verifyMu.Unlock()
	if target > e.verified {
		e.verified = target
		close(e.verifiedCh)
		e.verifiedCh = make(chan struct{})
	}
}

// awaitVerified waits until no announced change is unchecked.
func (e *mcpExecutor) awaitVerified(ctx context.Context) error {
	for {
		e.verifyMu.Lock()
		if e.verified >= e.announced {
			e.verifyMu.Unlock()
			return nil
		}
		ch := e.verifiedCh
		e.verifyMu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("the MCP server of block %q announced a change to its tools that is still being checked against the lock: %w", e.block, ctx.Err())
		case <-e.done:
			return fmt.Errorf("the MCP server of block %q is shut down", e.block)
		}
	}
}

// Call forwards a call to the upstream tool. A single text content
// becomes the output string; any other result becomes
// {"content": [...], "structuredContent": ...}. An isError result has
// status error.
func (e *mcpExecutor) Call(ctx context.Context, call *Call) (*Result, error) {
	t, ok := e.tools[call.Tool.Name]
	if !ok {
		return nil, fmt.Errorf("tool %q is not a tool of block %q", call.Tool.Name, e.block)
	}
	if err := e.awaitVerified(ctx); err != nil {
		return nil, err
	}
	if reason := e.withdrawnReason(t.Name); reason != "" {
		return nil, fmt.Errorf("tool %q is withdrawn: %s", t.Name, reason)
	}
	args := json.RawMessage(call.Args)
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage(`{}`)
	}
	// The call's requests end with it: the SDK reads on what an event
	// stream sends after the answer until its request ends, and an
	// upstream may send without end.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx, answer := withMCPAnswer(ctx)
	res, err := e.session.CallTool(ctx, &mcp.CallToolParams{Name: t.MCP.Served, Arguments: args})
	if err != nil {
		if terr := e.tooLarge(answer, err); terr != nil {
			return nil, fmt.Errorf("calling %q on the MCP server of block %q failed: %w", t.MCP.Served, e.block, terr)
		}
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			// Its message can quote the arguments: the record keeps the
			// code.
			return nil, &toolError{
				reason: fmt.Sprintf("the MCP server answered the call of %q with JSON-RPC error %d%s", t.MCP.Served, werr.Code, rpcCode(int(werr.Code), nil)),
				text:   fmt.Sprintf("the MCP server answered the call of %q with error %d: %s", t.MCP.Served, werr.Code, e.scrub.Text(werr.Message)),
			}
		}
		// A stdio server that exits ends the connection: a call in flight
		// then sees the end of its output (EOF) or of its input (a broken
		// pipe), the later ones a closed connection.
		if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
			e.cmd != nil && (errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE)) {
			return nil, e.lost()
		}
		return nil, fmt.Errorf("calling %q on the MCP server of block %q failed: %s", t.MCP.Served, e.block, e.scrub.Text(mcpErrText(ctx, err)))
	}
	out, err := mcpOutput(res)
	if err != nil {
		return nil, fmt.Errorf("the answer of the MCP server to the call of %q cannot be encoded: %v", t.MCP.Served, err)
	}
	if res.IsError {
		return &Result{Output: out, Status: StatusError, Reason: fmt.Sprintf("the MCP server's tool %q returned an error result", t.MCP.Served)}, nil
	}
	return &Result{Output: out, Status: StatusSuccess}, nil
}

// lost is the error of a call made once the connection to the upstream
// server is gone for good: a stdio server that exited, or an HTTP
// server that no longer knows the session (it restarted). serve does not
// connect again, as the tools of a new session would have to be checked
// against the lock again: the operator restarts serve, told once in the
// log.
func (e *mcpExecutor) lost() error {
	what := "it ended the session (it restarted, say)"
	if e.cmd != nil {
		what = "its process exited"
	}
	msg := fmt.Sprintf("the MCP server of block %q is no longer connected: %s; every call of its tools fails until agentform serve is restarted", e.block, what)
	e.lostOnce.Do(func() { e.h.Logf("Error: %s%s", msg, e.stderrNote()) })
	return errors.New(msg + e.stderrNote())
}

// mcpOutput turns a tools/call result into a call's output.
func mcpOutput(res *mcp.CallToolResult) (json.RawMessage, error) {
	if len(res.Content) == 1 && res.StructuredContent == nil {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			return json.Marshal(tc.Text)
		}
	}
	content := res.Content
	if content == nil {
		content = []mcp.Content{}
	}
	return json.Marshal(struct {
		Content           []mcp.Content `json:"content"`
		StructuredContent any           `json:"structuredContent,omitempty"`
	}{content, res.StructuredContent})
}

// Close closes the upstream session and kills the stdio server's process
// group, and every process it started that left the group (found before
// the session is closed, while the server is their ancestor).
func (e *mcpExecutor) Close() error {
	e.closeOnce.Do(func() {
		close(e.done)
		var tree []proctree.Proc
		if e.server.Pid != 0 {
			tree = e.server.Descendants()
		}
		defer proctree.Kill(tree)
		if e.session != nil {
			closed := make(chan struct{})
			go func() {
				_ = e.session.Close()
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(mcpCloseTimeout):
			}
		}
		e.kill()
		e.wg.Wait()
	})
	return nil
}

// stderrNote returns the end of the stdio server's standard error, scrubbed
// of runtime values, for a startup error.
func (e *mcpExecutor) stderrNote() string {
	if e.stderr == nil {
		return ""
	}
	lines := mcpwire.LastLines(e.scrub.Text(e.stderr.String()), 10)
	if len(lines) == 0 {
		return ""
	}
	return "; its standard error ended with:\n  " + strings.Join(lines, "\n  ")
}

// kill kills the stdio server's whole process group.
func (e *mcpExecutor) kill() {
	_ = mcpwire.KillGroup(e.cmd)
	if e.untrack != nil {
		e.untrack()
	}
}

// tooLarge returns why a request of the upstream failed with err when a
// message of the server was over the bound (mcpwire.MaxAnswer), or nil.
// Over HTTP that was the request's own answer, and it failed the request
// alone (mcpBound); over stdio the SDK refuses a longer line, which ends
// the connection, so that every later request fails the same way. An
// error the server answered with is never one of these, whatever it says.
func (e *mcpExecutor) tooLarge(a *mcpAnswer, err error) error {
	var werr *jsonrpc.Error
	switch {
	case a.tooLarge():
		return mcpwire.ErrTooLarge
	case e.cmd != nil && !errors.As(err, &werr) && mcpwire.LineTooLong(err):
		return errMCPLineTooLong
	}
	return nil
}

// errMCPLineTooLong is why requests of a stdio server fail once it wrote
// a line over the bound.
var errMCPLineTooLong = fmt.Errorf("the MCP server wrote a message larger than %s on its standard output, which ends the connection to it; restart agentform serve once the server is fixed", mcpwire.MaxAnswerText)

// mcpErrText describes an error of the upstream session, saying so when
// the operation ran out of time.
func mcpErrText(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the MCP server did not answer in time"
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		// An interrupt or a client's cancellation, not the server: in
		// words, rather than the library's "context canceled".
		return "cancelled before the MCP server answered"
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		// Without the URL, which may be a runtime value.
		err = uerr.Err
	}
	// Without what the SDK's decoder quotes of the server's bytes: it is
	// cut, and a runtime value cut in two is not scrubbed.
	return mcpwire.ErrorText(err)
}

// mcpShortDigest abbreviates "sha256:<hex>" for a message.
func mcpShortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12] + "…"
	}
	if d == "" {
		return "(none)"
	}
	return d
}

// mcpRoundTripper adds the block's headers and bearer token to every
// request to an HTTP server, and shows the capture the JSON-RPC messages
// of requests and of JSON and event-stream responses.
type mcpRoundTripper struct {
	base    http.RoundTripper
	headers map[string]string
	token   string
	capture *mcpwire.Capture
	// refused is the last answer's status when it was 401 or 403, else 0.
	refused atomic.Int32
}

// refusedStatus is 401 or 403 when the HTTP server last answered so, else 0.
func (e *mcpExecutor) refusedStatus() int {
	if e.httpRT == nil {
		return 0
	}
	return int(e.httpRT.refused.Load())
}

// RoundTrip implements http.RoundTripper.
func (rt *mcpRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, k := range slices.Sorted(maps.Keys(rt.headers)) {
		r.Header.Set(k, rt.headers[k])
	}
	if rt.token != "" {
		r.Header.Set("Authorization", "Bearer "+rt.token)
	}
	if err := mcpwire.TapRequest(rt.capture, r); err != nil {
		return nil, err
	}
	resp, err := rt.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	// The capture sees what the SDK gets: an answer over the bound is
	// never read whole.
	mcpBound(r, resp)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		rt.refused.Store(int32(resp.StatusCode))
	} else {
		rt.refused.Store(0)
	}
	mcpwire.TapResponse(rt.capture, resp)
	return resp, nil
}
