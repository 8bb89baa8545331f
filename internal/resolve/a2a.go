package resolve

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/mcpwire"
	"github.com/agentform/agentform/internal/sameorigin"
	"github.com/agentform/agentform/internal/secretparts"
	"github.com/agentform/agentform/lockfile"
)

// A2ACardOutput is the name under which ResolveA2A stores the canonical
// agent card in Resolved.Outputs, so that apply can package it beside the
// tool (tools/<block>/agent-card.json) and a later plan can show it.
const A2ACardOutput = "agent-card.json"

// The agent card locations, relative to the agent's URL. A2A 0.3 moved the
// card from agent.json to agent-card.json; the old name is still read, with
// a deprecation warning.
const (
	a2aCardPath       = ".well-known/agent-card.json"
	a2aLegacyCardPath = ".well-known/agent.json"
)

// a2aMaxCardSize bounds the agent card body agentform reads.
const a2aMaxCardSize = 1 << 20

// a2aMinScrub is the shortest runtime value scrubbed from a fetched card;
// shorter values ("1", "on") carry no secret and replacing them would
// mangle the card.
const a2aMinScrub = 4

// a2aMaxLockedCard is the largest card_json a lock entry records.
const a2aMaxLockedCard = 64 << 10

// The input schemas of the four A2A tools follow the A2A protocol's
// message/send, message/stream, tasks/get and tasks/cancel methods, with
// the message reduced to its text.
//
// a2a_<block>_send and a2a_<block>_stream take
//
//	{
//	  "message":    string, required  the text of the message (one text part)
//	  "context_id": string, optional  continue a conversation (A2A contextId)
//	  "task_id":    string, optional  answer a task waiting for input (A2A taskId)
//	}
//
// a2a_<block>_get_task and a2a_<block>_cancel_task take
//
//	{
//	  "task_id": string, required  the task (A2A Task.id)
//	}
const (
	a2aMessageSchema = `{"additionalProperties":false,"properties":{` +
		`"context_id":{"description":"The A2A context id of an earlier exchange, to continue that conversation.","type":"string"},` +
		`"message":{"description":"The text of the message to send to the agent.","type":"string"},` +
		`"task_id":{"description":"The id of a task that is waiting for input, to answer it.","type":"string"}},` +
		`"required":["message"],"type":"object"}`
	a2aTaskSchema = `{"additionalProperties":false,"properties":{` +
		`"task_id":{"description":"The id of the task, as returned when the message was sent.","type":"string"}},` +
		`"required":["task_id"],"type":"object"}`
)

// a2aOperation is one of the four tools every a2a block registers.
type a2aOperation struct {
	suffix string
	schema string
	// verb describes the operation; %s is the agent's name.
	verb string
	// skills is set when the card's skills belong in the description.
	skills bool
}

var a2aOperations = []a2aOperation{
	{suffix: "cancel_task", schema: a2aTaskSchema, verb: "Cancel a running task of %s"},
	{suffix: "get_task", schema: a2aTaskSchema, verb: "Get the status and results of a task of %s"},
	{suffix: "send", schema: a2aMessageSchema, verb: "Send a message to %s", skills: true},
	{suffix: "stream", schema: a2aMessageSchema, verb: "Send a message to %s and stream its progress and replies", skills: true},
}

// a2aCard is what agentform reads from an agent card.
type a2aCard struct {
	Name        string
	Version     string
	Description string
	Skills      []a2aSkill
}

// a2aSkill is one entry of an agent card's skills.
type a2aSkill struct {
	ID          string
	Name        string
	Description string
}

// a2aSecret is a runtime value used to reach the agent: scrubbed from the
// card before anything is derived from it.
type a2aSecret struct {
	value string
	env   string
	// secret is set for a secret(runtime()) value.
	secret bool
}

// a2aHTTPClient follows redirects on the card's origin only: the block's
// token and headers go with every request.
var a2aHTTPClient = &http.Client{Transport: resolveTransport, CheckRedirect: sameorigin.CheckRedirect}

// ResolveA2A resolves an a2a tool block. It registers the block's four
// tools (send, stream, get_task, cancel_task), which the protocol fixes, and
// fetches the agent card from <url>/.well-known/agent-card.json (falling
// back to the deprecated /.well-known/agent.json) to describe them and to
// pin the card's digest, name and version. A runtime URL is read for
// discovery only: it, the auth token and runtime header values are
// scrubbed from the card (replaced by ${ENV}) before the card is hashed,
// stored in Outputs or used in a description, and they never appear in a
// diagnostic. When the card cannot be fetched (unreachable, a runtime URL
// that is unset, -refresh=false) the tools are still registered, the lock
// entry is reused when there is one (FromLock), and a warning says so. An
// agent that redirects to another origin, whose TLS certificate does not
// verify, or that takes the request and sends no answer in time, was
// reached: that is an error.
func ResolveA2A(ctx context.Context, req Request) (*Resolved, hcl.Diagnostics) {
	t := req.Tool
	if t == nil || t.A2A == nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid a2a tool",
			Detail: "The tool block has no a2a configuration; this is a bug in agentform."}}
	}
	a := t.A2A
	rng := a.URL.Range
	if rng.Filename == "" {
		rng = t.DeclRange
	}
	locked := req.Locked
	if locked != nil && locked.Kind != "a2a" {
		locked = nil
	}

	// unfetched registers the tools without a card: from the lock entry
	// when there is one, else with nothing pinned. pinnable says that a
	// plan that fetches the card would pin it, so that a lockfile without
	// an entry for the block is out of date: an error under
	// -lockfile=readonly, as it is when the card is fetched.
	unfetched := func(summary, why string, pinnable bool) (*Resolved, hcl.Diagnostics) {
		res := &Resolved{}
		detail := why
		// An entry of another kind is reported by the plan's lock
		// comparison (the block changed kind).
		if req.Locked == nil && pinnable && req.LockReadonly {
			return &Resolved{Unresolved: true}, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Lockfile out of date",
				Detail: fmt.Sprintf("-lockfile=readonly: %s has no entry for %q. %s Run agentform lock where the agent can be reached, review the change and commit %s.",
					lockfile.FileName, t.Name, why, lockfile.FileName),
				Subject: rng.Ptr(),
			}}
		}
		if locked != nil {
			// A card recorded while runtime values reached the agent (by
			// a version that recorded it then) is not carried on.
			res.Pin = a2aCopyPin(locked, !a2aUsesRuntime(t.A2A))
			res.FromLock = true
			detail += fmt.Sprintf(" agentform uses the card pinned in %s (%s).", lockfile.FileName, a2aCardLabel(locked))
			// The card itself, when the lock records it, describes the
			// tools and ships as it would from the agent: the artifacts
			// are the same as a plan that fetched it builds. A recorded
			// card that is not the one the entry's digest, name and
			// version name (edited by hand) is not built from.
			switch card, canonical := a2aCardFromLock(res.Pin); {
			case card != nil:
				res.Tools = a2aTools(t, card, "")
				res.DescriptionUnused = card.Description != ""
				res.Outputs = map[string][]byte{A2ACardOutput: canonical}
			case res.Pin.CardJSON != "":
				return &Resolved{Unresolved: true}, hcl.Diagnostics{{
					Severity: hcl.DiagError,
					Summary:  "A2A lock entry does not match its digest",
					Detail: fmt.Sprintf("%s %s records a card for %q that is not the one its digest, card_name and card_version name: the file was edited. agentform does not build from it. Run agentform lock where the agent can be reached, review the change and commit %s.",
						why, lockfile.FileName, t.Name, lockfile.FileName),
					Subject: rng.Ptr(),
				}}
			default:
				res.Tools = a2aTools(t, nil, locked.CardName)
			}
		} else {
			detail += " Its four tools are registered from the A2A protocol, but no card is pinned, so a changed card cannot be detected until agentform fetches it."
			res.Tools = a2aTools(t, nil, "")
			res.Unpinned = req.Locked == nil && pinnable
		}
		return res, hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: rng.Ptr()}}
	}

	if !req.Refresh {
		_, known := req.String(a.URL)
		return unfetched("A2A agent card not refreshed",
			fmt.Sprintf("With -refresh=false agentform does not fetch the agent card of tool %q.", t.Name), known)
	}
	base, ok := req.String(a.URL)
	if !ok {
		env := ""
		if a.URL.Runtime != nil {
			env = a.URL.Runtime.Env
		}
		return unfetched("A2A agent URL known only at runtime",
			fmt.Sprintf("The url of tool %q reads the environment variable %s, which is not set and has no default, so agentform cannot fetch the agent card at plan time. Set %s when planning to pin the card.", t.Name, env, env), false)
	}
	literal := a.URL.Runtime == nil
	// where names a card's URL in messages, as it is requested (JoinPath,
	// before the query) and without a credential written into the URL.
	where := func(path string) string {
		if literal {
			if d, err := url.Parse(manifest.DisplayURL(base)); err == nil {
				return d.JoinPath(path).String()
			}
			return strings.TrimRight(manifest.DisplayURL(base), "/") + "/" + path
		}
		return fmt.Sprintf("/%s under the URL in %s", path, a.URL.Runtime.Env)
	}

	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		var detail string
		if literal {
			detail = fmt.Sprintf("%q is not an absolute http or https URL. Write the agent's base URL, like \"https://planner.example.com\".", manifest.DisplayURL(base))
		} else if env := a.URL.Runtime.Env; !req.envSet(env) {
			detail = fmt.Sprintf("%s is unset, and the default of runtime(%q) is not an absolute http or https URL. Set %s, or the default, to the agent's base URL, like \"https://planner.example.com\".", env, env, env)
		} else {
			detail = fmt.Sprintf("The value of %s is not an absolute http or https URL. Set it to the agent's base URL, like \"https://planner.example.com\".", env)
		}
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid A2A URL", Detail: detail, Subject: rng.Ptr()}}
	}

	var secrets []a2aSecret
	addSecret := func(s manifest.String) {
		if s.Runtime == nil {
			return
		}
		if v, ok := req.String(s); ok {
			secrets = append(secrets, a2aSecret{value: v, env: s.Runtime.Env, secret: s.Runtime.Secret})
		}
	}
	addSecret(a.URL)
	if !literal {
		// The host alone (a card may name it without the scheme).
		secrets = append(secrets, a2aSecret{value: u.Host, env: a.URL.Runtime.Env})
	}
	addSecret(a.AuthToken)
	for _, ref := range a.Headers.Refs() {
		addSecret(manifest.String{Runtime: ref})
	}
	headers, missing := req.StringMap(a.Headers)
	token, hasToken := req.String(a.AuthToken)
	if a.AuthToken.Runtime != nil && !hasToken {
		missing = append(missing, a.AuthToken.Runtime.Env)
	}
	if hasToken && a.AuthToken.Set {
		if d := tokenProblem(a.AuthToken, token); d != nil {
			return nil, hcl.Diagnostics{d}
		}
	}
	if d := headerProblem(a.Headers, headers); d != nil {
		return nil, hcl.Diagnostics{d}
	}

	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// reached is set once a request reached the agent: a timeout before
	// that is an agent out of reach (packets dropped), one after it an
	// agent that did not answer.
	var reached, attempted atomic.Bool
	trace, blind := reachTrace(u, func() { reached.Store(true) }, func() { attempted.Store(true) })
	tctx := httptrace.WithClientTrace(fctx, trace)
	get := func(path string) (int, string, []byte, error) {
		return a2aGet(tctx, u.JoinPath(path), headers, token)
	}

	// Go's error text can quote what the agent sent (a malformed status
	// line echoing the token): runtime values are scrubbed from it.
	reasonOf := func(err error) string { return a2aScrubMessage(netReason(err, timeout, literal), secrets) }

	var diags hcl.Diagnostics
	path := a2aCardPath
	code, status, body, err := get(path)
	if err == nil && code == http.StatusNotFound {
		path = a2aLegacyCardPath
		code, status, body, err = get(path)
		if err == nil && code == http.StatusOK {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Deprecated A2A agent card location",
				Detail: fmt.Sprintf("The agent behind tool %q serves its card only at %s, the location used before A2A 0.3; current clients look for /%s. agentform used the old location. Ask the agent's maintainers to serve the card at /%s.",
					t.Name, where(a2aLegacyCardPath), a2aCardPath, a2aCardPath),
				Subject: rng.Ptr()})
		}
	}
	if err != nil {
		// An agent that answered with a redirect to another origin or
		// with a certificate that does not verify, or that took the
		// request and did not answer, was reached: the lock entry is not
		// a stand-in for what it should have answered (as for mcp
		// servers).
		var certErr *tls.CertificateVerificationError
		switch {
		case ctx.Err() != nil:
			return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "A2A agent card fetch cancelled",
				Detail: fmt.Sprintf("Fetching the agent card of tool %q was cancelled.", t.Name), Subject: rng.Ptr()})
		case !attempted.Load() && fctx.Err() == nil:
			// The request could not be made at all (a header value HTTP
			// cannot carry): the configuration's fault, not the network's.
			detail := fmt.Sprintf("agentform could not make the request for the agent card of tool %q at %s: %s. Check the block's headers and auth_token.",
				t.Name, where(path), a2aScrubMessage(requestText(err), secrets))
			return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot make the A2A request", Detail: detail, Subject: rng.Ptr()})
		case proxyError(err) != nil:
			// The proxy could not be reached (its certificate included):
			// neither was the agent.
		case errors.Is(err, sameorigin.ErrCrossOrigin) && len(missing) > 0:
			// Asked without its credentials, an agent behind a login
			// may redirect to it: like an agent not asked, below.
		case errors.Is(err, sameorigin.ErrCrossOrigin):
			return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "A2A agent redirected to another origin",
				Detail: fmt.Sprintf("The agent behind tool %q answered %s with a redirect to another scheme, host or port, which agentform does not follow, so that the block's token and headers are only sent where its url points. Set url to where the agent is.",
					t.Name, where(path)),
				Subject: rng.Ptr()})
		case errors.As(err, &certErr):
			return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "A2A agent certificate not trusted",
				Detail: fmt.Sprintf("agentform could not fetch the agent card of tool %q from %s over TLS: %s. Make its certificate authority trusted on this machine (SSL_CERT_FILE or the system store), or check the URL's host.",
					t.Name, where(path), reasonOf(err)),
				Subject: rng.Ptr()})
		case errors.Is(err, context.DeadlineExceeded) && reached.Load():
			detail := fmt.Sprintf("The agent behind tool %q accepted the request for %s but sent no answer within %s. Check that url is the agent's base URL and that the agent is healthy, or %s.",
				t.Name, where(path), timeout, req.raiseTimeout())
			if len(missing) > 0 {
				detail += " " + missingEnvDetail(missing)
			}
			return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "A2A agent did not answer", Detail: detail, Subject: rng.Ptr()})
		case reached.Load() && !notConnected(err):
			// Connected, and then the exchange failed: a TLS handshake
			// refused (https to a plain HTTP port, a client certificate
			// required), the connection closed before an answer. A later
			// connection that could not be made (the agent gone after
			// answering 404 at the first card path, or a kept connection
			// it closed) is the agent out of reach, below, as for mcp.
			detail := fmt.Sprintf("agentform reached the agent behind tool %q, but fetching its card from %s failed: %s. Check that url is the agent's base URL, with https only if the agent serves TLS, and that the agent is healthy.",
				t.Name, where(path), reasonOf(err))
			if len(missing) > 0 {
				detail += " " + missingEnvDetail(missing)
			}
			return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot fetch A2A agent card", Detail: detail, Subject: rng.Ptr()})
		}
		reason := reasonOf(err)
		if errors.Is(err, context.DeadlineExceeded) {
			reason = noReachReason(blind, timeout.String())
		}
		why := fmt.Sprintf("agentform could not fetch the agent card of tool %q from %s: %s.", t.Name, where(path), reason)
		if len(missing) > 0 {
			why += " " + missingEnvDetail(missing)
		}
		return unfetched("Cannot reach A2A agent", why, true)
	}
	fail := func(summary, detail string) (*Resolved, hcl.Diagnostics) {
		return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
	}
	switch {
	case code == http.StatusNotFound:
		return fail("A2A agent card not found",
			fmt.Sprintf("The agent behind tool %q answered HTTP 404 at both /%s and /%s. Check that url is the agent's base URL and that the agent publishes its card.", t.Name, a2aCardPath, a2aLegacyCardPath))
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		detail := fmt.Sprintf("The agent refused to serve its card at %s (HTTP %s). Check auth_token and headers of tool %q.", where(path), status, t.Name)
		if len(missing) > 0 {
			detail += " " + missingEnvDetail(missing)
		}
		return fail("Cannot fetch A2A agent card", detail)
	case code != http.StatusOK:
		return fail("Cannot fetch A2A agent card",
			fmt.Sprintf("The agent behind tool %q answered HTTP %s at %s. Check that the agent is healthy, then plan again.", t.Name, status, where(path)))
	case len(body) > a2aMaxCardSize:
		return fail("Invalid A2A agent card",
			fmt.Sprintf("The agent card at %s is larger than %d bytes; agentform reads cards up to that size.", where(path), a2aMaxCardSize))
	}

	tree, err := a2aDecodeJSON(body)
	if err != nil {
		return fail("Invalid A2A agent card", fmt.Sprintf("The agent card at %s is not valid JSON: %s.", where(path), a2aScrubMessage(err.Error(), secrets)))
	}
	// The scrub replaces each value whole; a card quoting only a
	// credential inside one (secretparts.Credentials: a URL's password, a
	// secret URL's query key, a secret header's token) is refused
	// instead, since replacing those too would rewrite ordinary cards, and
	// the card is written into the lockfile and artifacts. Each value is
	// looked for in the card with only its own whole occurrences replaced,
	// so that scrubbing another value cannot break a credential up.
	for _, sec := range secrets {
		var parts []string
		for _, p := range secretparts.Credentials(sec.value, sec.secret) {
			parts = append(parts, secretparts.Forms(p)...)
		}
		if len(parts) > 0 && quotes(a2aScrub(tree, []a2aSecret{sec}), parts) {
			return fail("A2A agent card quotes a credential", fmt.Sprintf("The agent card at %s quotes a credential from the value of %s (a password, query value or token in it). agentform does not write runtime values into the lockfile, plans or artifacts, so it cannot pin this card. Pass the credential as auth_token or a header the card does not echo, or fix the agent.", where(path), sec.env))
		}
	}
	tree = a2aScrub(tree, secrets)
	card, problem := a2aParseCard(tree)
	if problem != "" {
		return fail("Invalid A2A agent card", fmt.Sprintf("The agent card at %s %s.", where(path), problem))
	}
	canonical, err := mcpwire.CanonicalJSON(tree)
	if err != nil {
		return fail("Invalid A2A agent card", fmt.Sprintf("The agent card at %s cannot be encoded: %s.", where(path), err))
	}
	pin := &lockfile.Tool{Kind: "a2a", Card: SHA256(canonical), CardName: card.Name, CardVersion: card.Version}
	// The lockfile is committed: it records the card itself only when
	// nothing reaching the agent came from runtime(), since a card can echo
	// what it was sent in forms no scrubbing foresees, and only a card of
	// a reviewable size.
	if cardJSON := lockfile.ASCIIJSON(string(canonical)); !a2aUsesRuntime(a) && len(cardJSON) <= a2aMaxLockedCard {
		pin.CardJSON = string(cardJSON)
	}
	return &Resolved{
		Tools:             a2aTools(t, card, ""),
		Pin:               pin,
		Outputs:           map[string][]byte{A2ACardOutput: canonical},
		DescriptionUnused: card.Description != "",
	}, diags
}

// a2aGet fetches one card location. err is set only when no HTTP answer
// came back; body holds at most a2aMaxCardSize+1 bytes.
func a2aGet(ctx context.Context, u *url.URL, headers map[string]string, token string) (int, string, []byte, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, "", nil, err
	}
	for _, k := range a2aSortedKeys(headers) {
		hreq.Header.Set(k, headers[k])
	}
	if token != "" {
		hreq.Header.Set("Authorization", "Bearer "+token)
	}
	hreq.Header.Set("Accept", "application/json")
	resp, err := a2aHTTPClient.Do(hreq)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, a2aMaxCardSize+1))
	if err != nil {
		return 0, "", nil, err
	}
	return resp.StatusCode, a2aStatus(resp), body, nil
}

// a2aStatus renders "500 Internal Server Error" from the status code only,
// never from the server's reason phrase.
func a2aStatus(resp *http.Response) string {
	if text := http.StatusText(resp.StatusCode); text != "" {
		return fmt.Sprintf("%d %s", resp.StatusCode, text)
	}
	return fmt.Sprint(resp.StatusCode)
}

// netReason says why no answer came back. For a runtime URL it names a
// class of failure only: Go's network errors quote the address.
func netReason(err error, timeout time.Duration, literal bool) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	var opErr *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", timeout)
	case errors.Is(err, context.Canceled):
		return "the plan was cancelled"
	case errors.Is(err, sameorigin.ErrCrossOrigin):
		return "a redirect to another origin, not followed so that the block's credentials stay where its url points"
	case proxyError(err) != nil && !literal:
		// Named by kind too: the proxy's address is not the URL's.
		var inner *tls.CertificateVerificationError
		if errors.As(err, &inner) {
			return "the proxy could not be reached: its TLS certificate is not trusted"
		}
		return "the proxy could not be reached: " + netReason(proxyError(err).Err, timeout, false)
	// The TLS failures of a server that was reached, the same for a
	// literal URL: Go's text for them can carry its internals
	// ("readLoopPeekFailLocked: ").
	case errors.Is(err, http.ErrSchemeMismatch):
		return "the server answered in plain HTTP, not TLS"
	case errors.As(err, &recordErr):
		return "the server did not answer in TLS"
	case errors.As(err, &opErr) && opErr.Op == "remote error" && opErr.Err != nil:
		// A TLS alert; its text names no host ("tls: certificate
		// required"). Through an https proxy it may be the proxy's.
		return "a TLS alert ended the connection: " + strings.TrimPrefix(opErr.Err.Error(), "tls: ")
	case literal:
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			return urlErr.Err.Error()
		}
		return err.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "the host name could not be resolved"
	case errors.As(err, &certErr):
		return "the server's TLS certificate is not trusted"
	default:
		return "a network error"
	}
}

// a2aDecodeJSON decodes one JSON value, keeping numbers exact, and rejects
// trailing data.
func a2aDecodeJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the body is empty")
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// a2aParseCard validates the card's shape and reads the fields agentform
// uses. problem completes "The agent card at X ..." when it is invalid.
func a2aParseCard(tree any) (card *a2aCard, problem string) {
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("is %s, not a JSON object", jsonKind(tree))
	}
	str := func(m map[string]any, key, where string) (string, string) {
		v, ok := m[key]
		if !ok || v == nil {
			return "", ""
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Sprintf("has %s%q set to %s; it must be a string", where, key, jsonKind(v))
		}
		return s, ""
	}
	card = &a2aCard{}
	if _, ok := obj["name"]; !ok {
		return nil, "has no \"name\"; an agent card must name its agent"
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &card.Name}, {"version", &card.Version}, {"description", &card.Description}} {
		s, p := str(obj, f.key, "")
		if p != "" {
			return nil, p
		}
		*f.dst = s
	}
	if strings.TrimSpace(card.Name) == "" {
		return nil, "has an empty \"name\"; an agent card must name its agent"
	}
	if raw, ok := obj["skills"]; ok && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return nil, fmt.Sprintf("has \"skills\" set to %s; it must be an array", jsonKind(raw))
		}
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Sprintf("has skills[%d] set to %s; each skill must be an object", i, jsonKind(item))
			}
			var sk a2aSkill
			for _, f := range []struct {
				key string
				dst *string
			}{{"id", &sk.ID}, {"name", &sk.Name}, {"description", &sk.Description}} {
				s, p := str(m, f.key, fmt.Sprintf("skills[%d].", i))
				if p != "" {
					return nil, p
				}
				*f.dst = s
			}
			card.Skills = append(card.Skills, sk)
		}
	}
	return card, ""
}

// a2aScrub replaces every runtime value (without a trailing slash; for
// the URL also its host) in the strings and keys of a decoded JSON value
// with ${ENV}.
func a2aScrub(v any, secrets []a2aSecret) any {
	if len(secrets) == 0 {
		return v
	}
	switch x := v.(type) {
	case string:
		return a2aScrubText(x, secrets)
	case json.Number:
		// A number that is a value (a PIN sent as a header) becomes its
		// reference; a number that merely contains one's digits stays.
		for _, s := range secrets {
			if string(x) == s.value {
				return "${" + s.env + "}"
			}
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = a2aScrub(e, secrets)
		}
		return out
	case map[string]any:
		// Two keys can scrub to one ("${TOKEN}" and the token itself):
		// the first in byte order keeps it, so that the card, and its
		// digest, do not depend on the order a map is walked in.
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			sk := a2aScrubText(k, secrets)
			if _, taken := out[sk]; !taken {
				out[sk] = a2aScrub(x[k], secrets)
			}
		}
		return out
	}
	return v
}

// a2aScrubText replaces runtime values in s, as written or re-encoded
// (secretparts.Forms), by ${ENV}.
func a2aScrubText(s string, secrets []a2aSecret) string {
	var pairs []a2aPair
	for _, sec := range secrets {
		// Without a trailing slash, so that a URL set with or without
		// one scrubs to the same text.
		if v := strings.TrimRight(sec.value, "/"); len(v) >= a2aMinScrub {
			for _, f := range secretparts.Forms(v) {
				pairs = append(pairs, a2aPair{f, "${" + sec.env + "}"})
			}
		}
	}
	return a2aReplace(s, pairs)
}

// a2aScrubMessage replaces in a message what a2aScrubText replaces, as
// the card shows it, and then what serve hides of the same values
// (secretparts.Scrubber): the credentials inside each, by "(part of
// ENV)", and the parts of a runtime URL that messages quote. Messages
// only: in the card, such a credential is refused and such a part (the
// agent's own path) is the card's business.
func a2aScrubMessage(s string, secrets []a2aSecret) string {
	var scrub secretparts.Scrubber
	for _, sec := range secrets {
		scrub.Add(sec.value, sec.env, sec.secret)
	}
	return scrub.Text(a2aScrubText(s, secrets))
}

type a2aPair struct{ old, new string }

// a2aReplace replaces each pair's old text, longest first so that a value
// containing another is replaced whole.
func a2aReplace(s string, pairs []a2aPair) string {
	a2aSortPairs(pairs)
	for _, p := range pairs {
		s = strings.ReplaceAll(s, p.old, p.new)
	}
	return s
}

// a2aSortPairs sorts pairs longest first, in byte order among equals.
func a2aSortPairs(pairs []a2aPair) {
	sort.SliceStable(pairs, func(i, j int) bool {
		if len(pairs[i].old) != len(pairs[j].old) {
			return len(pairs[i].old) > len(pairs[j].old)
		}
		return pairs[i].old < pairs[j].old
	})
}

// a2aTools builds the four registered tools. card is the fetched card, or
// nil; lockedName is the locked card name used when there is no card. The
// block's description says what the agent is about when the card does not.
func a2aTools(t *manifest.Tool, card *a2aCard, lockedName string) []Tool {
	target := fmt.Sprintf("the A2A agent %q", t.Name)
	about := t.Description.Value
	if card != nil {
		target = card.Name
		if card.Description != "" {
			about = card.Description
		}
	} else if lockedName != "" {
		target = lockedName
	}
	tools := make([]Tool, 0, len(a2aOperations))
	for _, op := range a2aOperations {
		desc := fmt.Sprintf(op.verb, target)
		if about != "" {
			desc += ": " + about
		}
		if op.skills && card != nil && len(card.Skills) > 0 {
			desc += "\n\nSkills:"
			for _, sk := range card.Skills {
				name := sk.Name
				if name == "" {
					name = sk.ID
				}
				desc += "\n- " + name
				if sk.Description != "" {
					desc += ": " + sk.Description
				}
			}
		}
		tools = append(tools, Tool{
			Name:        "a2a_" + t.Name + "_" + op.suffix,
			Description: desc,
			InputSchema: json.RawMessage(op.schema),
		})
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools
}

func a2aCopyPin(l *lockfile.Tool, withCard bool) *lockfile.Tool {
	pin := &lockfile.Tool{Kind: "a2a", Card: l.Card, CardName: l.CardName, CardVersion: l.CardVersion}
	if withCard {
		pin.CardJSON = l.CardJSON
	}
	return pin
}

// a2aUsesRuntime reports whether anything that reaches the agent (its URL,
// token or headers) comes from runtime(): then its card may echo a
// runtime value, and the lockfile does not record it.
func a2aUsesRuntime(a *manifest.A2ATool) bool {
	return a != nil && (a.URL.Runtime != nil || a.AuthToken.Runtime != nil || len(a.Headers.Refs()) > 0)
}

// a2aCardLabel renders a lock entry as "Planner 1.2.0, sha256:...". A
// name or version holding a control character (a line break that would
// start a line of its own in the message) is quoted, escaped.
func a2aCardLabel(l *lockfile.Tool) string {
	parts := []string{}
	for _, s := range []string{l.CardName, l.CardVersion} {
		switch {
		case s == "":
		case strings.IndexFunc(s, unicode.IsControl) >= 0:
			parts = append(parts, strconv.Quote(s))
		default:
			parts = append(parts, s)
		}
	}
	label := strings.Join(parts, " ")
	if label == "" {
		return l.Card
	}
	return label + ", " + l.Card
}

func a2aSortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// A2ADrift compares an a2a block's lock entry with the card resolved now.
// A changed card is trust-on-first-use drift: one error, located at rng,
// that shows the locked name, version and digest beside the current ones
// and says to review the card and run agentform lock -upgrade. It returns
// nothing when either entry is missing or the digests agree.
func A2ADrift(block string, locked, current *lockfile.Tool, rng hcl.Range) hcl.Diagnostics {
	if locked == nil || current == nil || locked.Card == current.Card {
		return nil
	}
	rows := [][3]string{
		{"card_name", locked.CardName, current.CardName},
		{"card_version", locked.CardVersion, current.CardVersion},
		{"card", locked.Card, current.Card},
	}
	show := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The agent card behind tool %q is not the one pinned in %s:\n\n", block, lockfile.FileName)
	for _, r := range rows {
		if r[1] == r[2] {
			fmt.Fprintf(&b, "  %-12s  %s (unchanged)\n", r[0], show(r[1]))
			continue
		}
		fmt.Fprintf(&b, "  %-12s  locked:  %s\n  %-12s  current: %s\n", r[0], show(r[1]), "", show(r[2]))
	}
	switch old := a2aLockedCard(locked); {
	case old != "" && current.CardJSON != "":
		b.WriteString("\nWhat changed (locked beside served now):\n\n")
		b.WriteString(mcpDefinitionDiff(old, current.CardJSON))
		b.WriteString("\n")
	case current.CardJSON != "":
		b.WriteString("\nThe lock entry does not hold the locked card (it was written before agentform recorded cards, or its card_json does not match its card digest), so only the card served now can be shown:\n\n")
		b.WriteString(mcpShowDefinition(current.CardJSON))
		b.WriteString("\n")
	}
	b.WriteString("\n" + a2aDriftAdvice())
	return a2aDriftError("A2A agent card changed since lock", b.String(), block, rng)
}

// a2aDriftAdvice ends every A2A drift error: why it matters, what to do.
func a2aDriftAdvice() string {
	return fmt.Sprintf("The card tells your agents what the remote agent does and how to delegate to it; a card that changes under you can redirect that delegation. Review the new card (the agent serves it at /%s) and, if you trust it, run `agentform lock -upgrade` to pin it.", a2aCardPath)
}

// a2aDriftError is an A2A drift error located at the block.
func a2aDriftError(summary, detail, block string, rng hcl.Range) hcl.Diagnostics {
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   detail,
		Subject:  rng.Ptr(),
		Extra:    DriftDetail{Block: block},
	}}
}

// A2ADriftSinceApplyEntry is A2ADrift for an a2a block the lockfile has
// no entry for, against the lock entry the last apply recorded in state
// (applied): the card recorded beside the card served now.
func A2ADriftSinceApplyEntry(block string, applied, current *lockfile.Tool, rng hcl.Range) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range A2ADrift(block, applied, current, rng) {
		out = append(out, sinceApply(d, block, strings.NewReplacer(
			"is not the one pinned in "+lockfile.FileName, "is not the one the last apply recorded",
			"locked:  ", "applied: ",
			"(locked beside served now)", "(applied beside served now)",
			"--- locked/", "--- applied/",
			"The lock entry does not hold the locked card", "The last apply's entry does not hold its card",
			a2aDriftAdvice(), sinceApplyAdvice+a2aDriftAdvice(),
		)))
	}
	return out
}

// a2aLockedCard is the card a lock entry records, or "" when it records
// none or one that is not the card its digest names (a hand-edited entry).
func a2aLockedCard(l *lockfile.Tool) string {
	if _, canonical := a2aLockedTree(l); canonical == nil {
		return ""
	}
	return l.CardJSON
}

// a2aCardFromLock returns the card a lock entry records, read as a fetched
// card is, and the canonical JSON its digest is over; nil when
// a2aLockedCard has no card.
func a2aCardFromLock(l *lockfile.Tool) (*a2aCard, []byte) {
	tree, canonical := a2aLockedTree(l)
	if canonical == nil {
		return nil, nil
	}
	card, problem := a2aParseCard(tree)
	// The entry's name and version, which the digest does not cover, are
	// the card's (as the lockfile stores them).
	if problem != "" || l.CardName != lockfile.Canonical(card.Name) || l.CardVersion != lockfile.Canonical(card.Version) {
		return nil, nil
	}
	return card, canonical
}

// a2aLockedTree decodes the card a lock entry records and returns it with
// its canonical JSON; a nil canonical JSON when there is none or it is not
// the card the entry's digest names.
func a2aLockedTree(l *lockfile.Tool) (any, []byte) {
	if l == nil || l.CardJSON == "" {
		return nil, nil
	}
	tree, err := a2aDecodeJSON([]byte(l.CardJSON))
	if err != nil {
		return nil, nil
	}
	// The text too is the one agentform writes for the card, which is
	// what ships in the artifact's lock: not merely text that reads as it
	// (a duplicate key the reading skips).
	canonical, err := mcpwire.CanonicalJSON(tree)
	if err != nil || SHA256(canonical) != l.Card || l.CardJSON != lockfile.ASCIIJSON(string(canonical)) {
		return nil, nil
	}
	return tree, canonical
}
