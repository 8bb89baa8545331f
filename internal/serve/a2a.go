package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/sameorigin"
	"github.com/agentform/agentform/internal/secretparts"
)

func init() { register(artifact.KindA2A, newA2AExecutor) }

// An a2a block's four tools call the remote agent over A2A's JSON-RPC
// binding. agentform speaks both protocol versions in use: A2A 1.0
// (SendMessage, SendStreamingMessage, GetTask, CancelTask, with the
// A2A-Version header) and A2A 0.3 (message/send, message/stream,
// tasks/get, tasks/cancel). The agent card locked in the artifact decides
// which, and where to send requests: the JSON-RPC interface it lists.
const (
	a2aV1  = "1.0"
	a2aV03 = "0.3"

	// a2aDefaultTimeout bounds a call when the block sets no timeout_secs.
	a2aDefaultTimeout = 5 * time.Minute
	// a2aMaxBody bounds one JSON-RPC answer or stream event.
	a2aMaxBody = 16 << 20
	// a2aMaxProgress bounds the text of a progress notification.
	a2aMaxProgress = 200
)

// a2aExecutor runs the send, stream, get_task and cancel_task tools of one
// a2a block.
type a2aExecutor struct {
	h     *Host
	block string
	// tools are the block's registered tools by registered name.
	tools map[string]*artifact.Tool

	endpoint string
	version  string
	tenant   string
	headers  map[string]string
	token    string
	timeout  time.Duration
	modes    []string
	client   *http.Client
	scrub    *secretparts.Scrubber
}

// newA2AExecutor resolves the block's settings and reads the agent card
// from the artifact. It does not contact the agent: an agent that is down
// fails the calls, not the server.
func newA2AExecutor(_ context.Context, h *Host, block string, tools []*artifact.Tool) (Executor, error) {
	e := &a2aExecutor{h: h, block: block, tools: map[string]*artifact.Tool{}, scrub: &secretparts.Scrubber{}, client: &http.Client{CheckRedirect: sameorigin.CheckRedirect}}
	var conf *artifact.A2A
	var cardFile string
	for _, t := range tools {
		if t.A2A == nil {
			return nil, fmt.Errorf("tool %q of block %q has no a2a settings in agent.json; rebuild the artifact with agentform apply", t.Name, block)
		}
		switch t.A2A.Operation {
		case artifact.A2ASend, artifact.A2AStream, artifact.A2AGetTask, artifact.A2ACancelTask:
		default:
			return nil, fmt.Errorf("tool %q of block %q has the unknown a2a operation %q; rebuild the artifact with agentform apply", t.Name, block, t.A2A.Operation)
		}
		e.tools[t.Name] = t
		if conf == nil {
			conf, cardFile = t.A2A, t.File
		}
	}
	if conf == nil {
		return nil, fmt.Errorf("block %q has no tools to serve", block)
	}

	base, err := h.Env.String(conf.URL)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the url of a2a block %q is not an absolute http or https URL", block)
	}
	if r := conf.URL.Runtime; r != nil {
		// With its parts (host, user name, a secret URL's path): errors
		// quote them apart from the whole.
		e.scrub.Add(base, r.Env, r.Secret)
	}
	if conf.AuthToken != nil {
		if e.token, err = h.Env.String(*conf.AuthToken); err != nil {
			return nil, err
		}
		name := "auth_token"
		if conf.AuthToken.Runtime != nil {
			name = conf.AuthToken.Runtime.Env
		}
		e.scrub.Add(e.token, name, true)
	}
	if e.headers, err = resolveStringMap(h.Env, conf.Headers, e.scrub); err != nil {
		return nil, fmt.Errorf("the headers of block %q: %w", block, err)
	}
	if err := blockHeaders(block, e.headers, e.token); err != nil {
		return nil, err
	}
	e.timeout = a2aDefaultTimeout
	if conf.TimeoutSecs != nil {
		n, err := h.Env.Int(*conf.TimeoutSecs)
		if err != nil {
			return nil, err
		}
		if n < 1 {
			// The manifest refuses it; a runtime value is checked here.
			return nil, fmt.Errorf("the timeout_secs of block %q is %d: it must be at least 1", block, n)
		}
		e.timeout = time.Duration(n) * time.Second
	}
	e.modes = conf.DefaultAcceptedOutputModes

	iface := a2aInterface{URL: base, Version: a2aV1}
	if cardFile == "" {
		h.Logf("a2a block %q: the artifact holds no agent card (it could not be fetched when the plan was made); calling its url with A2A %s", block, a2aV1)
	} else {
		card, ok := h.Files[cardFile]
		if !ok {
			return nil, fmt.Errorf("the artifact lacks %s, the agent card of block %q; rebuild it with agentform apply", cardFile, block)
		}
		if conf.CardDigest != "" {
			sum := sha256.Sum256(card)
			if got := "sha256:" + hex.EncodeToString(sum[:]); got != conf.CardDigest {
				return nil, fmt.Errorf("the agent card of block %q in the artifact does not match its locked digest %s; rebuild the artifact with agentform apply", block, conf.CardDigest)
			}
		}
		if iface, err = a2aCardInterface(card); err != nil {
			return nil, fmt.Errorf("the agent card of block %q %v", block, err)
		}
		if iface.URL, err = a2aRestoreURL(iface.URL, base, conf.URL); err != nil {
			return nil, fmt.Errorf("the agent card of block %q: %v", block, err)
		}
	}
	e.endpoint, e.version = iface.URL, iface.Version

	if conf.Tenant != nil {
		switch conf.Tenant.Policy {
		case "fixed":
			if conf.Tenant.ID != nil {
				if e.tenant, err = h.Env.String(*conf.Tenant.ID); err != nil {
					return nil, err
				}
			}
		case "inherit", "":
			e.tenant = iface.Tenant
		}
	} else {
		e.tenant = iface.Tenant
	}
	if e.tenant != "" && e.version != a2aV1 {
		h.Logf("a2a block %q: the agent speaks A2A %s, which has no tenants; the tenant is not sent", block, e.version)
		e.tenant = ""
	}
	return e, nil
}

// a2aInterface is where and how to call an agent.
type a2aInterface struct {
	URL     string
	Version string
	Tenant  string
}

// a2aCardInterface picks the JSON-RPC interface of an agent card: of an
// A2A 1.0 card (supportedInterfaces), the 1.x one, else a 0.3 one; of a
// 0.3 card, url (or the JSON-RPC entry of additionalInterfaces). The
// returned error completes "the agent card of block X ...".
func a2aCardInterface(raw []byte) (a2aInterface, error) {
	var card struct {
		URL                  string `json:"url"`
		PreferredTransport   string `json:"preferredTransport"`
		ProtocolVersion      string `json:"protocolVersion"`
		AdditionalInterfaces []struct {
			URL       string `json:"url"`
			Transport string `json:"transport"`
		} `json:"additionalInterfaces"`
		SupportedInterfaces []struct {
			URL             string `json:"url"`
			ProtocolBinding string `json:"protocolBinding"`
			ProtocolVersion string `json:"protocolVersion"`
			Tenant          string `json:"tenant"`
		} `json:"supportedInterfaces"`
	}
	if err := json.Unmarshal(raw, &card); err != nil {
		return a2aInterface{}, fmt.Errorf("is not valid: %v", err)
	}
	if len(card.SupportedInterfaces) > 0 {
		var legacy *a2aInterface
		for _, in := range card.SupportedInterfaces {
			if !strings.EqualFold(in.ProtocolBinding, "JSONRPC") {
				continue
			}
			switch v := in.ProtocolVersion; {
			case v == "1" || strings.HasPrefix(v, "1."):
				return a2aInterface{URL: in.URL, Version: a2aV1, Tenant: in.Tenant}, nil
			case strings.HasPrefix(v, "0.3") && legacy == nil:
				legacy = &a2aInterface{URL: in.URL, Version: a2aV03, Tenant: in.Tenant}
			}
		}
		if legacy != nil {
			return *legacy, nil
		}
		return a2aInterface{}, errors.New("lists no JSON-RPC interface of A2A 1.x or 0.3, the versions agentform speaks")
	}
	if card.ProtocolVersion != "" && !strings.HasPrefix(card.ProtocolVersion, "0.") {
		return a2aInterface{}, fmt.Errorf("declares A2A %s without listing its interfaces; agentform speaks A2A 1.x and 0.3", card.ProtocolVersion)
	}
	if card.PreferredTransport == "" || strings.EqualFold(card.PreferredTransport, "JSONRPC") {
		return a2aInterface{URL: card.URL, Version: a2aV03}, nil
	}
	for _, in := range card.AdditionalInterfaces {
		if strings.EqualFold(in.Transport, "JSONRPC") {
			return a2aInterface{URL: in.URL, Version: a2aV03}, nil
		}
	}
	return a2aInterface{}, fmt.Errorf("offers no JSON-RPC interface (its transport is %s); agentform speaks A2A over JSON-RPC", card.PreferredTransport)
}

// a2aRestoreURL turns the URL of a locked card into the one to call. At
// plan time a runtime url was masked in the card as ${ENV} (the whole url,
// or its host after "://"); it is replaced by the value the url has now.
// An empty URL means the block's url.
func a2aRestoreURL(cardURL, base string, ref artifact.String) (string, error) {
	if cardURL == "" {
		return base, nil
	}
	if ref.Runtime != nil {
		ph := "${" + ref.Runtime.Env + "}"
		if u, err := url.Parse(base); err == nil {
			cardURL = strings.ReplaceAll(cardURL, "://"+ph, "://"+u.Host)
		}
		cardURL = strings.ReplaceAll(cardURL, ph, strings.TrimRight(base, "/"))
	}
	if strings.Contains(cardURL, "${") {
		return "", errors.New("names its endpoint with a runtime value other than the block's url, which agentform cannot restore")
	}
	u, err := url.Parse(cardURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("names an endpoint that is not an absolute http or https URL")
	}
	return cardURL, nil
}

// a2aArgs are the arguments of the four tools (the schemas the resolver
// registers: message, context_id and task_id for send and stream; task_id
// for get_task and cancel_task).
type a2aArgs struct {
	Message   string `json:"message"`
	ContextID string `json:"context_id"`
	TaskID    string `json:"task_id"`
}

// Call runs one of the four operations.
func (e *a2aExecutor) Call(ctx context.Context, call *Call) (*Result, error) {
	t, ok := e.tools[call.Tool.Name]
	if !ok {
		return nil, fmt.Errorf("tool %q is not a tool of block %q", call.Tool.Name, e.block)
	}
	var args a2aArgs
	if len(bytes.TrimSpace(call.Args)) > 0 {
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return nil, fmt.Errorf("the arguments of %q are not an object of strings: %v", t.Name, err)
		}
	}
	// The call ends at timeout_secs, or sooner at the deadline the call
	// came with (serve's call limit, invoke -timeout): messages name the
	// one that applies.
	limit := fmt.Sprintf("%s (timeout_secs)", e.timeout)
	if d, ok := ctx.Deadline(); ok && time.Until(d) < e.timeout {
		limit = fmt.Sprintf("%s (the call's time limit, before timeout_secs)", time.Until(d).Round(time.Second))
	}
	ctx = context.WithValue(ctx, a2aLimitKey{}, limit)
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	op := t.A2A.Operation
	switch op {
	case artifact.A2ASend, artifact.A2AStream:
		if args.Message == "" {
			return nil, fmt.Errorf("%q needs a message", t.Name)
		}
		params := e.sendParams(args, op == artifact.A2ASend)
		if op == artifact.A2AStream {
			return e.stream(ctx, call, params)
		}
		method := map[string]string{a2aV1: "SendMessage", a2aV03: "message/send"}[e.version]
		result, res, err := e.rpc(ctx, method, params)
		if res != nil || err != nil {
			return res, err
		}
		return e.sendResult(result)
	case artifact.A2AGetTask, artifact.A2ACancelTask:
		if args.TaskID == "" {
			return nil, fmt.Errorf("%q needs a task_id", t.Name)
		}
		params := map[string]any{"id": args.TaskID}
		if e.tenant != "" {
			params["tenant"] = e.tenant
		}
		method := map[string]map[string]string{
			artifact.A2AGetTask:    {a2aV1: "GetTask", a2aV03: "tasks/get"},
			artifact.A2ACancelTask: {a2aV1: "CancelTask", a2aV03: "tasks/cancel"},
		}[op][e.version]
		result, res, err := e.rpc(ctx, method, params)
		if res != nil || err != nil {
			return res, err
		}
		task, err := a2aParseTask(result)
		if err != nil {
			return nil, fmt.Errorf("the A2A agent answered %s with a task agentform cannot read: %v", method, err)
		}
		return a2aTaskResult(task)
	}
	return nil, fmt.Errorf("tool %q has the unknown a2a operation %q", t.Name, op)
}

// sendParams builds the params of a send or stream request: one text
// message, with the context and task to continue, the accepted output
// modes and the tenant.
func (e *a2aExecutor) sendParams(args a2aArgs, blocking bool) map[string]any {
	msg := map[string]any{"messageId": a2aNewID()}
	if e.version == a2aV1 {
		msg["role"] = "ROLE_USER"
		msg["parts"] = []any{map[string]any{"text": args.Message}}
	} else {
		msg["kind"] = "message"
		msg["role"] = "user"
		msg["parts"] = []any{map[string]any{"kind": "text", "text": args.Message}}
	}
	if args.ContextID != "" {
		msg["contextId"] = args.ContextID
	}
	if args.TaskID != "" {
		msg["taskId"] = args.TaskID
	}
	params := map[string]any{"message": msg}
	conf := map[string]any{}
	if len(e.modes) > 0 {
		conf["acceptedOutputModes"] = e.modes
	}
	if e.version == a2aV03 && blocking {
		// 1.0 blocks unless told returnImmediately.
		conf["blocking"] = true
	}
	if len(conf) > 0 {
		params["configuration"] = conf
	}
	if e.tenant != "" {
		params["tenant"] = e.tenant
	}
	return params
}

// a2aRPCResponse is a JSON-RPC 2.0 response.
type a2aRPCResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// errorResult turns a JSON-RPC error of the agent into an error result:
// the tool ran, and the agent refused. The agent's message is the output;
// the record keeps the method and the code.
func (e *a2aExecutor) errorResult(method string, code int, message string) *Result {
	out, _ := json.Marshal(fmt.Sprintf("the A2A agent answered %s with error %d: %s", method, code, e.scrub.Text(message)))
	return &Result{Output: out, Status: StatusError,
		Reason: fmt.Sprintf("the A2A agent answered %s with JSON-RPC error %d%s", method, code, rpcCode(code, a2aCodes))}
}

// a2aCodes name the error codes the A2A protocol defines.
var a2aCodes = map[int]string{
	-32001: "task not found",
	-32002: "task not cancelable",
	-32003: "push notifications not supported",
	-32004: "unsupported operation",
	-32005: "content type not supported",
	-32006: "invalid agent response",
	-32007: "authenticated extended card not configured",
}

// post sends one JSON-RPC request and returns the HTTP response, which
// the caller closes. A non-2xx answer is an error.
func (e *a2aExecutor) post(ctx context.Context, method string, params any, accept string) (*http.Response, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": a2aNewID(), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("the A2A endpoint of block %q is not a valid URL", e.block)
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if e.version == a2aV1 {
		req.Header.Set("A2A-Version", a2aV1)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, e.netError(ctx, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return nil, fmt.Errorf("the A2A agent of block %q refused the request (HTTP %s); check its auth_token and headers", e.block, resp.Status)
		}
		// Agents (@a2a-js/sdk's among them) send a JSON-RPC error with
		// HTTP 500 or 400: its code and message say what went wrong.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var r a2aRPCResponse
		if json.Unmarshal(body, &r) == nil && r.Error != nil {
			return nil, &a2aHTTPRPCError{status: resp.Status, code: r.Error.Code, message: r.Error.Message}
		}
		return nil, fmt.Errorf("the A2A agent of block %q answered HTTP %s", e.block, resp.Status)
	}
	return resp, nil
}

// a2aHTTPRPCError is a JSON-RPC error an agent answered with an HTTP
// error status: rpc and stream return it as the error Result of the
// call, as they do one sent with 200.
type a2aHTTPRPCError struct {
	status  string
	code    int
	message string
}

func (e *a2aHTTPRPCError) Error() string {
	return fmt.Sprintf("HTTP %s, JSON-RPC error %d", e.status, e.code)
}

// netError describes a failed request without its URL.
func (e *a2aExecutor) netError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the A2A agent of block %q did not answer within %s", e.block, a2aLimit(ctx, e.timeout))
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return errors.New("the call was cancelled")
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("the A2A agent of block %q could not be reached: %s", e.block, e.scrub.Text(err.Error()))
}

// rpc sends one request and returns its result; a JSON-RPC error of the
// agent comes back as an error Result.
func (e *a2aExecutor) rpc(ctx context.Context, method string, params any) (json.RawMessage, *Result, error) {
	resp, err := e.post(ctx, method, params, "application/json")
	if rerr, ok := errors.AsType[*a2aHTTPRPCError](err); ok {
		return nil, e.errorResult(method, rerr.code, rerr.message), nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, a2aMaxBody+1))
	if err != nil {
		return nil, nil, e.netError(ctx, err)
	}
	if len(body) > a2aMaxBody {
		return nil, nil, fmt.Errorf("the answer of the A2A agent of block %q is larger than %d bytes", e.block, a2aMaxBody)
	}
	var r a2aRPCResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, fmt.Errorf("the A2A agent of block %q did not answer %s with JSON-RPC: %v", e.block, method, err)
	}
	if r.Error != nil {
		return nil, e.errorResult(method, r.Error.Code, r.Error.Message), nil
	}
	if len(r.Result) == 0 {
		return nil, nil, fmt.Errorf("the A2A agent of block %q answered %s without a result", e.block, method)
	}
	return r.Result, nil, nil
}

// sendResult reads the answer to a send: a task or a message.
func (e *a2aExecutor) sendResult(raw json.RawMessage) (*Result, error) {
	ev, err := a2aParseEvent(raw)
	if err != nil {
		return nil, fmt.Errorf("the A2A agent of block %q answered with something agentform cannot read: %v", e.block, err)
	}
	switch {
	case ev.task != nil:
		return a2aTaskResult(ev.task)
	case ev.message != nil:
		return a2aJSONResult(ev.message, StatusSuccess)
	}
	return nil, fmt.Errorf("the A2A agent of block %q answered a message with neither a task nor a message", e.block)
}

// stream sends a streaming message, forwards each event as progress and
// an "a2a" event, and returns the task as the events left it (or the
// message the agent answered with). When the stream ends early (the call
// is canceled or times out, or the agent hangs up) with a task under way,
// the task so far is returned as partial_success, so that its id is not
// lost.
func (e *a2aExecutor) stream(ctx context.Context, call *Call, params any) (*Result, error) {
	method := map[string]string{a2aV1: "SendStreamingMessage", a2aV03: "message/stream"}[e.version]
	resp, err := e.post(ctx, method, params, "text/event-stream")
	if rerr, ok := errors.AsType[*a2aHTTPRPCError](err); ok {
		return e.errorResult(method, rerr.code, rerr.message), nil
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// An agent answers a request it refuses with plain JSON.
		body, err := io.ReadAll(io.LimitReader(resp.Body, a2aMaxBody))
		if err != nil {
			return nil, e.netError(ctx, err)
		}
		var r a2aRPCResponse
		if json.Unmarshal(body, &r) == nil && r.Error != nil {
			return e.errorResult(method, r.Error.Code, r.Error.Message), nil
		}
		if json.Unmarshal(body, &r) == nil && len(r.Result) > 0 {
			return e.sendResult(r.Result)
		}
		return nil, fmt.Errorf("the A2A agent of block %q did not answer %s with an event stream", e.block, method)
	}

	var task *a2aTask
	var message *a2aMessage
	n := 0
	done := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), a2aMaxBody)
	var data bytes.Buffer
	// merged counts the bytes of the artifact events merged into the
	// task: an agent appending to an artifact forever must not grow the
	// task (and serve's memory) without bound.
	merged := 0
	handle := func(payload []byte) (*Result, error) {
		var r a2aRPCResponse
		if err := json.Unmarshal(payload, &r); err != nil {
			return nil, fmt.Errorf("the A2A agent of block %q sent a stream event that is not JSON-RPC: %v", e.block, err)
		}
		if r.Error != nil {
			return e.errorResult(method, r.Error.Code, r.Error.Message), nil
		}
		ev, err := a2aParseEvent(r.Result)
		if err != nil {
			return nil, fmt.Errorf("the A2A agent of block %q sent a stream event agentform cannot read: %v", e.block, err)
		}
		n++
		var progress string
		var event any
		switch {
		case ev.task != nil:
			task = ev.task
			progress, event = "task "+task.State, task
			done = a2aFinal(task.State)
		case ev.message != nil:
			message = ev.message
			progress, event = "message: "+message.Text, message
			done = true
		case ev.status != nil:
			if task == nil {
				task = &a2aTask{Kind: "task", TaskID: ev.status.TaskID, ContextID: ev.status.ContextID}
			}
			task.State, task.Message = ev.status.State, ev.status.Message
			progress, event = ev.status.State, ev.status
			if ev.status.Message != "" {
				progress += ": " + ev.status.Message
			}
			done = ev.status.Final || a2aFinal(ev.status.State)
		case ev.artifact != nil:
			if merged += len(payload); merged > a2aMaxBody {
				return nil, fmt.Errorf("the A2A agent of block %q streamed more than %d MiB of artifacts for one task, the most agentform keeps of one call", e.block, a2aMaxBody>>20)
			}
			if task == nil {
				task = &a2aTask{Kind: "task", TaskID: ev.artifact.TaskID, ContextID: ev.artifact.ContextID}
			}
			task.merge(ev.artifact)
			progress, event = "artifact", ev.artifact
			if ev.artifact.Artifact.Name != "" {
				progress += " " + ev.artifact.Artifact.Name
			}
		}
		call.Progress(float64(n), 0, a2aShort(progress))
		call.Event("a2a", event)
		return nil, nil
	}
	for !done && sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if len(line) > 0 {
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				v = bytes.TrimPrefix(v, []byte(" "))
				if data.Len()+1+len(v) > a2aMaxBody {
					// An event's lines are kept until the blank line that
					// ends it: one that never comes must not hold memory.
					return nil, fmt.Errorf("the A2A agent of block %q sent a stream event larger than %d MiB, the most agentform reads of one", e.block, a2aMaxBody>>20)
				}
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.Write(v)
			}
			continue
		}
		if data.Len() == 0 {
			continue
		}
		res, err := handle(data.Bytes())
		data.Reset()
		if res != nil || err != nil {
			return res, err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil, fmt.Errorf("the A2A agent of block %q sent a stream line longer than %d MiB, the most agentform reads of one", e.block, a2aMaxBody>>20)
	}
	if !done && data.Len() > 0 && sc.Err() == nil && ctx.Err() == nil {
		// The last event, not followed by a blank line, at a clean end
		// of the stream. One the stream was cut in (a read error, the
		// call's deadline) is not an event: the task so far stands.
		res, err := handle(data.Bytes())
		if res != nil || err != nil && task == nil && message == nil {
			return res, err
		}
	}
	if message != nil {
		return a2aJSONResult(message, StatusSuccess)
	}
	if task == nil {
		if err := sc.Err(); err != nil {
			return nil, e.netError(ctx, err)
		}
		return nil, fmt.Errorf("the A2A agent of block %q ended the stream without a task or message", e.block)
	}
	if done {
		return a2aTaskResult(task)
	}
	why := "the agent ended the stream"
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("the stream timed out after %s", a2aLimit(ctx, e.timeout))
	case ctx.Err() != nil:
		why = "the call was cancelled"
	}
	task.Note = fmt.Sprintf("%s before the task finished; follow it with the get_task tool and task_id %q, or stop it with cancel_task", why, task.TaskID)
	return a2aJSONResult(task, StatusPartialSuccess)
}

// Close releases idle connections.
func (e *a2aExecutor) Close() error {
	e.client.CloseIdleConnections()
	return nil
}

// a2aTask is a task as a tool outputs it, the same for both protocol
// versions.
type a2aTask struct {
	Kind      string        `json:"kind"`
	TaskID    string        `json:"task_id"`
	ContextID string        `json:"context_id,omitempty"`
	State     string        `json:"state"`
	Message   string        `json:"message,omitempty"`
	Artifacts []a2aArtifact `json:"artifacts,omitempty"`
	Note      string        `json:"note,omitempty"`
}

// a2aMessage is a message of the agent as a tool outputs it.
type a2aMessage struct {
	Kind      string `json:"kind"`
	ContextID string `json:"context_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	a2aContent
}

// a2aArtifact is one artifact of a task.
type a2aArtifact struct {
	ID   string `json:"-"`
	Name string `json:"name,omitempty"`
	a2aContent
}

// a2aContent is what a list of parts holds: the text parts joined, the
// data parts, and the files (never their inline bytes).
type a2aContent struct {
	Text  string    `json:"text,omitempty"`
	Data  []any     `json:"data,omitempty"`
	Files []a2aFile `json:"files,omitempty"`
}

// a2aFile is a file part.
type a2aFile struct {
	Name      string `json:"name,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	URL       string `json:"url,omitempty"`
	Inline    bool   `json:"inline,omitempty"`
}

// a2aStatusEvent is a status update of a stream.
type a2aStatusEvent struct {
	Kind      string `json:"kind"`
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id,omitempty"`
	State     string `json:"state"`
	Message   string `json:"message,omitempty"`
	Final     bool   `json:"-"`
}

// a2aArtifactEvent is an artifact update of a stream.
type a2aArtifactEvent struct {
	Kind      string      `json:"kind"`
	TaskID    string      `json:"task_id"`
	ContextID string      `json:"context_id,omitempty"`
	Artifact  a2aArtifact `json:"artifact"`
	Append    bool        `json:"append,omitempty"`
	LastChunk bool        `json:"last_chunk,omitempty"`
}

// merge applies an artifact update to the task.
func (t *a2aTask) merge(ev *a2aArtifactEvent) {
	for i := range t.Artifacts {
		a := &t.Artifacts[i]
		if ev.Artifact.ID == "" || a.ID != ev.Artifact.ID {
			continue
		}
		if ev.Append {
			a.Text += ev.Artifact.Text
			a.Data = append(a.Data, ev.Artifact.Data...)
			a.Files = append(a.Files, ev.Artifact.Files...)
		} else {
			*a = ev.Artifact
		}
		return
	}
	t.Artifacts = append(t.Artifacts, ev.Artifact)
}

// a2aEvent is one decoded result or stream event: exactly one field is
// set.
type a2aEvent struct {
	task     *a2aTask
	message  *a2aMessage
	status   *a2aStatusEvent
	artifact *a2aArtifactEvent
}

// a2aWire holds the fields of the protocol objects agentform reads, in
// both versions: 1.0 wraps results in {"task"|"message"|"statusUpdate"|
// "artifactUpdate": ...}, 0.3 marks them with "kind".
type a2aWire struct {
	Kind      string          `json:"kind"`
	ID        string          `json:"id"`
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Status    *a2aWireStatus  `json:"status"`
	Artifacts []a2aWireArt    `json:"artifacts"`
	Artifact  *a2aWireArt     `json:"artifact"`
	Parts     []a2aWirePart   `json:"parts"`
	Append    bool            `json:"append"`
	LastChunk bool            `json:"lastChunk"`
	Final     bool            `json:"final"`
	Task      json.RawMessage `json:"task"`
	Message   json.RawMessage `json:"message"`
	StatusUp  json.RawMessage `json:"statusUpdate"`
	ArtUp     json.RawMessage `json:"artifactUpdate"`
}

type a2aWireStatus struct {
	State   string       `json:"state"`
	Message *a2aWireMsgs `json:"message"`
}

type a2aWireMsgs struct {
	Parts []a2aWirePart `json:"parts"`
}

type a2aWireArt struct {
	ArtifactID string        `json:"artifactId"`
	Name       string        `json:"name"`
	Parts      []a2aWirePart `json:"parts"`
}

// a2aWirePart is a part: 1.0 {"text"}|{"data"}|{"url"|"raw", "filename",
// "mediaType"}, 0.3 {"kind": "text"|"data"|"file", "file": {...}}.
type a2aWirePart struct {
	Kind      string          `json:"kind"`
	Text      *string         `json:"text"`
	Data      json.RawMessage `json:"data"`
	URL       string          `json:"url"`
	Raw       json.RawMessage `json:"raw"`
	Filename  string          `json:"filename"`
	MediaType string          `json:"mediaType"`
	File      *struct {
		URI      string          `json:"uri"`
		Bytes    json.RawMessage `json:"bytes"`
		Name     string          `json:"name"`
		MimeType string          `json:"mimeType"`
	} `json:"file"`
}

// a2aParseEvent decodes a send result or a stream event of either
// version.
func a2aParseEvent(raw json.RawMessage) (*a2aEvent, error) {
	var w a2aWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	switch {
	case len(w.Task) > 0 && string(w.Task) != "null":
		t, err := a2aParseTask(w.Task)
		return &a2aEvent{task: t}, err
	case len(w.Message) > 0 && string(w.Message) != "null" && w.Kind == "":
		var m a2aWire
		if err := json.Unmarshal(w.Message, &m); err != nil {
			return nil, err
		}
		return &a2aEvent{message: a2aToMessage(&m)}, nil
	case len(w.StatusUp) > 0 && string(w.StatusUp) != "null":
		var s a2aWire
		if err := json.Unmarshal(w.StatusUp, &s); err != nil {
			return nil, err
		}
		return &a2aEvent{status: a2aToStatus(&s)}, nil
	case len(w.ArtUp) > 0 && string(w.ArtUp) != "null":
		var a a2aWire
		if err := json.Unmarshal(w.ArtUp, &a); err != nil {
			return nil, err
		}
		return &a2aEvent{artifact: a2aToArtifactEvent(&a)}, nil
	}
	switch w.Kind {
	case "task":
		return &a2aEvent{task: a2aToTask(&w)}, nil
	case "message":
		return &a2aEvent{message: a2aToMessage(&w)}, nil
	case "status-update":
		return &a2aEvent{status: a2aToStatus(&w)}, nil
	case "artifact-update":
		return &a2aEvent{artifact: a2aToArtifactEvent(&w)}, nil
	}
	return nil, errors.New("neither a task, a message nor a task update")
}

// a2aParseTask decodes a task of either version.
func a2aParseTask(raw json.RawMessage) (*a2aTask, error) {
	var w a2aWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	if w.ID == "" {
		return nil, errors.New("the task has no id")
	}
	return a2aToTask(&w), nil
}

func a2aToTask(w *a2aWire) *a2aTask {
	t := &a2aTask{Kind: "task", TaskID: w.ID, ContextID: w.ContextID, State: "unknown"}
	if w.Status != nil {
		t.State = a2aState(w.Status.State)
		if w.Status.Message != nil {
			t.Message = a2aParts(w.Status.Message.Parts).Text
		}
	}
	for _, a := range w.Artifacts {
		t.Artifacts = append(t.Artifacts, a2aArtifact{ID: a.ArtifactID, Name: a.Name, a2aContent: a2aParts(a.Parts)})
	}
	return t
}

func a2aToMessage(w *a2aWire) *a2aMessage {
	return &a2aMessage{Kind: "message", ContextID: w.ContextID, TaskID: w.TaskID, a2aContent: a2aParts(w.Parts)}
}

func a2aToStatus(w *a2aWire) *a2aStatusEvent {
	s := &a2aStatusEvent{Kind: "status-update", TaskID: w.TaskID, ContextID: w.ContextID, State: "unknown", Final: w.Final}
	if w.Status != nil {
		s.State = a2aState(w.Status.State)
		if w.Status.Message != nil {
			s.Message = a2aParts(w.Status.Message.Parts).Text
		}
	}
	return s
}

func a2aToArtifactEvent(w *a2aWire) *a2aArtifactEvent {
	ev := &a2aArtifactEvent{Kind: "artifact-update", TaskID: w.TaskID, ContextID: w.ContextID, Append: w.Append, LastChunk: w.LastChunk}
	if w.Artifact != nil {
		ev.Artifact = a2aArtifact{ID: w.Artifact.ArtifactID, Name: w.Artifact.Name, a2aContent: a2aParts(w.Artifact.Parts)}
	}
	return ev
}

// a2aParts reads a list of parts of either version.
func a2aParts(parts []a2aWirePart) a2aContent {
	var c a2aContent
	var texts []string
	for _, p := range parts {
		switch {
		case p.Text != nil:
			texts = append(texts, *p.Text)
		case len(p.Data) > 0 && string(p.Data) != "null":
			var v any
			if json.Unmarshal(p.Data, &v) == nil {
				c.Data = append(c.Data, v)
			}
		case p.File != nil:
			c.Files = append(c.Files, a2aFile{Name: p.File.Name, MediaType: p.File.MimeType, URL: p.File.URI, Inline: len(p.File.Bytes) > 0})
		case p.URL != "" || len(p.Raw) > 0:
			c.Files = append(c.Files, a2aFile{Name: p.Filename, MediaType: p.MediaType, URL: p.URL, Inline: len(p.Raw) > 0})
		}
	}
	c.Text = strings.Join(texts, "\n")
	return c
}

// a2aState normalizes a task state: "TASK_STATE_INPUT_REQUIRED" (1.0) and
// "input-required" (0.3) are both "input-required".
func a2aState(s string) string {
	s = strings.TrimPrefix(s, "TASK_STATE_")
	s = strings.ReplaceAll(strings.ToLower(s), "_", "-")
	if s == "" || s == "unspecified" {
		return "unknown"
	}
	return s
}

// a2aFinal reports whether a task in state s waits for nothing more from
// the agent: a terminal state, or one that needs the caller.
func a2aFinal(s string) bool {
	switch s {
	case "completed", "failed", "canceled", "rejected", "input-required", "auth-required":
		return true
	}
	return false
}

// a2aTaskResult is the result of a call that returned a task: an error
// result when the agent failed or rejected it.
func a2aTaskResult(t *a2aTask) (*Result, error) {
	if t.State == "failed" || t.State == "rejected" {
		res, err := a2aJSONResult(t, StatusError)
		if res != nil {
			res.Reason = "the A2A agent's task ended " + t.State
		}
		return res, err
	}
	return a2aJSONResult(t, StatusSuccess)
}

func a2aJSONResult(v any, status string) (*Result, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &Result{Output: out, Status: status}, nil
}

// a2aShort shortens a progress message.
func a2aShort(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > a2aMaxProgress {
		return string(r[:a2aMaxProgress-1]) + "…"
	}
	return s
}

// a2aNewID returns a random UUID (version 4).
func a2aNewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// a2aLimitKey carries, in a call's context, how messages name the time
// limit that applies to it.
type a2aLimitKey struct{}

// a2aLimit names the time limit of the call of ctx (timeout_secs, or the
// shorter deadline the call came with); def when ctx does not say.
func a2aLimit(ctx context.Context, def time.Duration) string {
	if s, ok := ctx.Value(a2aLimitKey{}).(string); ok {
		return s
	}
	return fmt.Sprintf("%s (timeout_secs)", def)
}
