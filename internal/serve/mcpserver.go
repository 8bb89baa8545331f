package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/version"
)

// OverrideHeader is the HTTP header a client may send on its first request
// to override the agent's capabilities for its session ("extend:a,b",
// "replace:a,b" or "inherit"). It is honoured only for extensible agents.
const OverrideHeader = "X-Agentform-Capability-Override"

// mcpSession is one MCP server over one set of held tags: the stdio
// server, or the server of every HTTP session with the same override.
type mcpSession struct {
	server *mcp.Server
	held   []string
}

// MCPServer returns an MCP server exposing exactly the tools the grant
// allows. via is recorded in each call record; session, when not "", is
// the session id for every call (stdio: one session per process unless
// -session names one); otherwise the MCP session id is used.
func (s *Server) MCPServer(g Grant, via, session string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentform-" + s.agent.Name, Version: version.Version}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("Tools of the agent %q, served by agentform with its capabilities enforced.", s.agent.Name),
		Capabilities: &mcp.ServerCapabilities{
			Tools:   &mcp.ToolCapabilities{ListChanged: true},
			Logging: &mcp.LoggingCapabilities{},
		},
	})
	// The withdraw hook is registered before the tools are listed, and
	// both take mu, so a tool withdrawn while the server is built is
	// either never added or removed again.
	var mu sync.Mutex
	added := map[string]bool{}
	gone := map[string]bool{}
	s.mu.Lock()
	s.onWithdraw = append(s.onWithdraw, func(tool string) {
		mu.Lock()
		defer mu.Unlock()
		gone[tool] = true
		if added[tool] {
			delete(added, tool)
			srv.RemoveTools(tool)
		}
	})
	s.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	for _, t := range s.Allowed(g.Held) {
		if gone[t.Name] {
			continue
		}
		params := inputSchema(t.Parameters)
		name := t.Name
		added[name] = true
		srv.AddTool(&mcp.Tool{Name: name, Description: t.Description, InputSchema: params}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sid := session
			if sid == "" {
				sid = req.Session.ID()
			}
			if sid == "" {
				sid = "default"
			}
			token := req.Params.GetProgressToken()
			resp, err := s.Call(ctx, Request{
				Tool: name, Args: req.Params.Arguments, Session: sid, Via: via, Held: g.Held, Override: g.Override,
				Event: func(kind string, data any) {
					_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "agentform/" + kind, Data: data})
				},
				Progress: func(progress, total float64, message string) {
					if token == nil {
						return
					}
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: progress, Total: total, Message: message})
				},
			})
			if err != nil {
				return nil, err
			}
			return toolResult(resp), nil
		})
	}
	// A call of a tool this server does not list (denied, withdrawn, or
	// unknown) is refused by Call and recorded as blocked, instead of the
	// SDK's bare "unknown tool" error that would leave no record.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			params, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok {
				return next(ctx, method, req)
			}
			mu.Lock()
			listed := added[params.Name]
			mu.Unlock()
			if listed {
				return next(ctx, method, req)
			}
			sid := session
			if sid == "" {
				sid = req.GetSession().ID()
			}
			resp, err := s.Call(ctx, Request{Tool: params.Name, Args: params.Arguments, Session: sid, Via: via, Held: g.Held, Override: g.Override})
			if err != nil {
				return nil, err
			}
			return toolResult(resp), nil
		}
	})
	return srv
}

// inputSchema is the schema tools/list shows for a tool's parameters. MCP
// requires an object schema; parameters that do not say "type": "object"
// (an anyOf, an empty schema) are wrapped in one, so that any schema the
// artifact holds can be served. Arguments are validated against the
// parameters themselves.
func inputSchema(params artifact.JSON) json.RawMessage {
	raw := bytes.TrimSpace(params)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object"}`)
	}
	var probe struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(raw, &probe) == nil && probe.Type == "object" {
		return json.RawMessage(raw)
	}
	return json.RawMessage(`{"type":"object","allOf":[` + string(raw) + `]}`)
}

// toolResult turns a call's response into an MCP tool result: the output
// as text (a string as itself, anything else as JSON) and, for an object,
// as structured content too; an error, a refusal or a failed tool is an
// error result whose text says why.
func toolResult(resp *Response) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	var text string
	var s string
	if json.Unmarshal(resp.Output, &s) == nil {
		text = s
	} else if string(resp.Output) != "null" {
		text = string(resp.Output)
		var obj map[string]any
		if json.Unmarshal(resp.Output, &obj) == nil {
			res.StructuredContent = json.RawMessage(resp.Output)
		}
	}
	switch resp.Status {
	case StatusSuccess, StatusPartialSuccess:
	default:
		res.IsError = true
		msg := resp.Status
		if resp.Error != "" {
			msg += ": " + resp.Error
		}
		if text != "" {
			msg += "\n" + text
		}
		text = msg
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	return res
}

// ServeStdio serves the agent over in and out (standard input and output)
// until the client disconnects or ctx ends. session names the session
// whose state calls use; "" starts a new one.
//
// At the end of in every request already read is still answered (calls
// in flight finish), within stdioDrainTimeout; then ServeStdio returns
// nil, or an error when requests were left unanswered. When ctx ends the
// calls in flight are cancelled and ServeStdio returns nil at once (after
// at most stdioStopGrace for calls that do not stop).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, session string) error {
	if session == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		session = "stdio-" + id.String()
	}
	s.logPlain("agentform: serving agent %q over stdio (session %s): %s", s.agent.Name, session, toolCount(len(s.Allowed(s.held))))
	inner, err := (&mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}).Connect(ctx)
	if err != nil {
		return err
	}
	conn := newDrainConn(ctx, inner, stdioDrainTimeout)
	defer conn.Close()
	srv := s.MCPServer(s.Grant(), "stdio", session)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, conn) }()
	select {
	case err = <-done:
	case <-conn.forced:
		// Stopped: the SDK cancels the calls in flight; one that does not
		// return is not waited for long.
		select {
		case err = <-done:
		case <-time.After(stdioStopGrace):
			s.opts.Logf("agentform: calls still running %s after serve stopped; exiting without them", stdioStopGrace)
			err = nil
		}
	}
	if n := conn.Unanswered(); n > 0 {
		what := "requests were"
		if n == 1 {
			what = "request was"
		}
		return fmt.Errorf("%d %s still unanswered %s after the end of input", n, what, stdioDrainTimeout)
	}
	if bad := conn.BadInput(); bad != nil {
		// The SDK's reader cannot go on past a line that is not JSON.
		return fmt.Errorf("standard input could not be read as JSON-RPC: %s; serve answers one JSON-RPC message per line", bad)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// maxOverrideServers bounds the distinct grants HTTP sessions may ask
// for besides the server's own: each gets its own MCP server, kept for the
// life of serve.
const maxOverrideServers = 64

// HTTP session bounds: at most maxHTTPSessions are open at once; one more
// closes the session idle longest, when it has been idle for at least
// httpSessionIdle (its client gets 404 and must initialize again), and
// is refused otherwise. Sessions are not closed for idleness alone, since
// some clients (go-sdk's) do not open another on a 404. The initialize
// request that opens one may be at most maxInitializeBytes (clients send
// a few hundred bytes; the session keeps what it said about itself for
// its life).
const (
	maxHTTPSessions    = 256
	maxInitializeBytes = 64 << 10
)

// httpSessionIdle is a variable for tests.
var httpSessionIdle = 10 * time.Minute

// Handler returns the streamable HTTP handler: one MCP server per distinct
// grant (sessions with the same override share it; the override is part
// of the grant, as calls record it), each HTTP session with its own
// session state. Only a request that opens a session (a POST of
// initialize without a session id) makes the server of a new override.
func (s *Server) Handler() http.Handler {
	var mu sync.Mutex
	servers := map[string]*mcp.Server{}
	// seen is when each session last sent a request; opening counts the
	// initialize requests admitted whose session the SDK has not made yet.
	seen := map[string]time.Time{}
	opening := 0
	grantKey := func(g Grant) string { return strings.Join(g.Held, ",") + " " + g.Override }
	// The server's own grant (no header, inherit, a locked agent's ignored
	// header) is built now and does not count toward the bound: sessions
	// that ask for other overrides cannot lock it out.
	servers[grantKey(s.Grant())] = s.MCPServer(s.Grant(), "http", "")
	// admit makes room for one more session, closing the one idle longest
	// when the bound is reached; false when every one is in use. Called
	// with mu held.
	admit := func(now time.Time) bool {
		var sessions []*mcp.ServerSession
		live := map[string]bool{}
		for _, srv := range servers {
			for ss := range srv.Sessions() {
				sessions = append(sessions, ss)
				live[ss.ID()] = true
				if _, ok := seen[ss.ID()]; !ok {
					seen[ss.ID()] = now
				}
			}
		}
		for id := range seen {
			if !live[id] {
				delete(seen, id)
			}
		}
		if len(sessions)+opening < maxHTTPSessions {
			return true
		}
		var idlest *mcp.ServerSession
		for _, ss := range sessions {
			if idlest == nil || seen[ss.ID()].Before(seen[idlest.ID()]) {
				idlest = ss
			}
		}
		if idlest == nil || now.Sub(seen[idlest.ID()]) < httpSessionIdle {
			return false
		}
		s.logPlain("agentform: closed HTTP session %s, idle since %s, to open another (at most %d are open)", idlest.ID(), seen[idlest.ID()].UTC().Format(time.RFC3339), maxHTTPSessions)
		delete(seen, idlest.ID())
		_ = idlest.Close()
		return true
	}
	// serverFor returns the MCP server of a grant: with create, building
	// it once (and, with opens, making room for another session and
	// counting it as opening); without, the one built already, or nil.
	serverFor := func(g Grant, create, opens bool) (*mcp.Server, error) {
		mu.Lock()
		defer mu.Unlock()
		if opens {
			if !admit(time.Now()) {
				return nil, fmt.Errorf("too many open sessions (%d) on this server, none idle for %s: close one (DELETE) or try again later", maxHTTPSessions, httpSessionIdle)
			}
		}
		key := grantKey(g)
		srv, ok := servers[key]
		if !ok && create {
			if len(servers) > maxOverrideServers {
				return nil, fmt.Errorf("too many distinct capability overrides (%d) on this server", maxOverrideServers)
			}
			srv = s.MCPServer(g, "http", "")
			servers[key] = srv
		}
		if opens && srv != nil {
			opening++
		}
		return srv, nil
	}
	// opened records the session an admitted initialize made (or not).
	opened := func(id string) {
		mu.Lock()
		defer mu.Unlock()
		opening--
		if id != "" {
			seen[id] = time.Now()
		}
	}
	// used records a request of a session.
	used := func(id string) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := seen[id]; ok {
			seen[id] = time.Now()
		}
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		g, err := s.GrantFor(strings.TrimSpace(r.Header.Get(OverrideHeader)))
		if err != nil {
			return nil
		}
		// The wrapper below made the server of any request that reaches
		// here; nil (a bare 400) never serves one grant for another.
		srv, _ := serverFor(g, false, false)
		return srv
	}, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The SDK picks the server per session; a bad header is refused
		// here with the reason instead of its bare "no server".
		if len(r.Header.Values(OverrideHeader)) > 1 {
			http.Error(w, "more than one "+OverrideHeader+" header: send one", http.StatusBadRequest)
			return
		}
		g, err := s.GrantFor(strings.TrimSpace(r.Header.Get(OverrideHeader)))
		if err != nil {
			http.Error(w, "invalid "+OverrideHeader+": "+err.Error(), http.StatusBadRequest)
			return
		}
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			used(id)
		} else if r.Method == http.MethodPost {
			// A request without a session: initialize, which opens one, or
			// a request of a protocol without sessions. Either may make
			// the server of a new override; nothing else does (a GET of
			// any path with a new header would take a slot for good).
			method, size, batch := requestMethod(r)
			switch {
			case batch:
				http.Error(w, "a request without a session must be one JSON-RPC message, not a batch", http.StatusBadRequest)
				return
			case method == "initialize" && size > maxInitializeBytes:
				http.Error(w, fmt.Sprintf("an initialize request may be at most %d bytes", maxInitializeBytes), http.StatusRequestEntityTooLarge)
				return
			case method != "":
				opens := method == "initialize"
				if _, err := serverFor(g, true, opens); err != nil {
					http.Error(w, err.Error(), http.StatusServiceUnavailable)
					return
				}
				if opens {
					// Deferred: a handler that panics (net/http recovers
					// it) must not leave the session counted as opening.
					defer func() { opened(w.Header().Get("Mcp-Session-Id")) }()
					mcpHandler.ServeHTTP(w, r)
					return
				}
			}
		}
		if srv, _ := serverFor(g, false, false); srv == nil {
			http.Error(w, "no session of this server asked for this "+OverrideHeader+": a session sends it with its initialize request", http.StatusBadRequest)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
}

// requestMethod returns the method of the JSON-RPC request a POST's body
// holds ("" for anything else: a response, not JSON, a body over the SDK's
// bound), the body's size, and whether it is a batch (a JSON array),
// leaving the body to be read again.
func requestMethod(r *http.Request) (method string, size int, batch bool) {
	if r.Body == nil {
		return "", 0, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, mcp.DefaultMaxRequestBodyBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		return "", len(body), true
	}
	if err != nil || len(body) > mcp.DefaultMaxRequestBodyBytes {
		return "", len(body), false
	}
	var msg struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return "", len(body), false
	}
	return msg.Method, len(body), false
}

// ServeHTTP listens on addr and serves streamable HTTP at /mcp (and /)
// until ctx ends. ready, when set, is called with the bound address.
func (s *Server) ServeHTTP(ctx context.Context, addr string, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		s.logPlain("Warning: listening on %s, which is not a loopback address: anyone who can reach it can call the agent's tools", ln.Addr())
	}
	h := s.Handler()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.logPlain("agentform: serving agent %q at http://%s/mcp: %s", s.agent.Name, ln.Addr(), toolCount(len(s.Allowed(s.held))))
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// toolCount says how many tools: "1 tool", "2 tools".
func toolCount(n int) string {
	if n == 1 {
		return "1 tool"
	}
	return fmt.Sprintf("%d tools", n)
}
