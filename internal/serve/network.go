package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/idna"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/manifest"
)

// Defaults of the network block's limits when the manifest leaves them
// unset (documented in docs/agent-json.md).
const (
	defaultConnectTimeout   = 10 * time.Second
	defaultRequestTimeout   = 30 * time.Second
	defaultMaxRedirects     = 5
	defaultMaxResponseBytes = 10 << 20
	// defaultUserAgent is sent when neither the network block nor the
	// tool sets a User-Agent.
	defaultUserAgent = "agentform"
)

// noNetworkRule is the refusal of every request of an agent whose
// workspace has no network block.
const noNetworkRule = "the agent's workspace has no network block: tools have no network access; add a network block with a policy to allow it"

// network is the workspace's network block with its runtime values
// resolved: the policy every request of a tool goes through. It is safe
// for concurrent use. A nil *artifact.Network gives a network that
// refuses everything.
type network struct {
	// disabled is set when the workspace has no network block.
	disabled bool

	userAgent string
	// headers are the block's headers; their values may be secrets and
	// never appear in a message.
	headers http.Header

	methods  []string // nil: any method
	allow    []artifact.URLPattern
	allowSet bool

	allowLoopback, allowPrivate, allowLinkLocal bool

	connectTimeout time.Duration
	readTimeout    time.Duration // 0: only the request timeout
	requestTimeout time.Duration
	maxRedirects   int
	maxBytes       int64
	// sem bounds the requests in flight; nil when unlimited.
	sem chan struct{}

	transport *http.Transport
	client    *http.Client
}

// refusalError is a request the network block does not allow. Its text
// names the request and the rule, never a header value.
type refusalError struct{ msg string }

func (e *refusalError) Error() string { return e.msg }

// addressError is a connection refused at dial time because of the class
// of the address the hostname resolved to. It becomes a refusalError
// naming the request's URL.
type addressError struct {
	addr  netip.Addr
	class string // "loopback", "private" or "link-local"
	knob  string // the addresses switch that would allow it
}

func (e *addressError) Error() string {
	return fmt.Sprintf("%s is a %s address and network.policy.addresses.%s is not true", e.addr, e.class, e.knob)
}

// newNetwork resolves the network block n from env. Errors name the
// setting and its variable, never a value.
func newNetwork(env *Env, n *artifact.Network) (*network, error) {
	nw := &network{
		connectTimeout: defaultConnectTimeout,
		requestTimeout: defaultRequestTimeout,
		maxRedirects:   defaultMaxRedirects,
		maxBytes:       defaultMaxResponseBytes,
		headers:        http.Header{},
	}
	if n == nil {
		nw.disabled = true
		return nw, nil
	}
	if n.UserAgent != nil {
		ua, err := env.String(*n.UserAgent)
		if err != nil {
			return nil, fmt.Errorf("network.user_agent: %w", err)
		}
		if !httpguts.ValidHeaderFieldValue(ua) {
			return nil, errors.New("network.user_agent is not a valid header value (it has line breaks or control characters)")
		}
		nw.userAgent = ua
	}
	if err := nw.resolveHeaders(env, n.Headers); err != nil {
		return nil, err
	}
	if l := n.Limits; l != nil {
		ms := func(name string, v *artifact.Int, dst *time.Duration) error {
			if v == nil {
				return nil
			}
			i, err := env.Int(*v)
			if err != nil {
				return fmt.Errorf("network.limits.%s: %w", name, err)
			}
			if i < 1 {
				return fmt.Errorf("network.limits.%s must be at least 1", name)
			}
			*dst = time.Duration(min(i, int64(365*24*time.Hour/time.Millisecond))) * time.Millisecond
			return nil
		}
		if err := errors.Join(ms("connect_timeout_ms", l.ConnectTimeoutMS, &nw.connectTimeout),
			ms("read_timeout_ms", l.ReadTimeoutMS, &nw.readTimeout),
			ms("request_timeout_ms", l.RequestTimeoutMS, &nw.requestTimeout)); err != nil {
			return nil, err
		}
		count := func(name string, v *artifact.Int, least int64) (int64, bool, error) {
			if v == nil {
				return 0, false, nil
			}
			i, err := env.Int(*v)
			if err != nil {
				return 0, false, fmt.Errorf("network.limits.%s: %w", name, err)
			}
			if i < least {
				return 0, false, fmt.Errorf("network.limits.%s must be at least %d", name, least)
			}
			return i, true, nil
		}
		if i, ok, err := count("max_redirects", l.MaxRedirects, 0); err != nil {
			return nil, err
		} else if ok {
			nw.maxRedirects = int(min(i, 1000))
		}
		if i, ok, err := count("max_response_bytes", l.MaxResponseBytes, 1); err != nil {
			return nil, err
		} else if ok {
			nw.maxBytes = i
		}
		if i, ok, err := count("concurrency_limit", l.ConcurrencyLimit, 1); err != nil {
			return nil, err
		} else if ok {
			nw.sem = make(chan struct{}, min(i, 1<<16))
		}
	}
	if p := n.Policy; p != nil {
		if p.Methods != nil {
			methods, err := env.Strings(*p.Methods)
			if err != nil {
				return nil, fmt.Errorf("network.policy.methods: %w", err)
			}
			nw.methods = []string{}
			for _, m := range methods {
				nw.methods = append(nw.methods, strings.ToUpper(strings.TrimSpace(m)))
			}
		}
		nw.allow, nw.allowSet = p.Allow, p.AllowSet
		for i, pat := range p.Allow {
			if err := validatePattern(pat); err != nil {
				return nil, fmt.Errorf("network.policy.allow entry %d: %w", i+1, err)
			}
		}
		var err error
		for _, sw := range []struct {
			name string
			v    artifact.Bool
			dst  *bool
		}{
			{"allow_loopback", p.Addresses.AllowLoopback, &nw.allowLoopback},
			{"allow_private", p.Addresses.AllowPrivate, &nw.allowPrivate},
			{"allow_link_local", p.Addresses.AllowLinkLocal, &nw.allowLinkLocal},
		} {
			if *sw.dst, err = env.Bool(sw.v); err != nil {
				return nil, fmt.Errorf("network.policy.addresses.%s: %w", sw.name, err)
			}
		}
	}
	dialer := &net.Dialer{Timeout: nw.connectTimeout, KeepAlive: 30 * time.Second, Control: nw.control}
	nw.transport = &http.Transport{
		// No proxy: a proxy would be the address dialled, and the
		// destination's address could not be checked.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   nw.connectTimeout,
		ResponseHeaderTimeout: nw.readTimeout,
		MaxIdleConns:          32,
		IdleConnTimeout:       90 * time.Second,
	}
	nw.client = &http.Client{Transport: nw.transport, CheckRedirect: nw.checkRedirect}
	return nw, nil
}

// resolveHeaders reads the block's headers: an object of string values
// (or one reference to such an object).
func (nw *network) resolveHeaders(env *Env, raw artifact.JSON) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	resolved, err := env.Resolve(json.RawMessage(raw))
	if err != nil {
		return fmt.Errorf("network.headers: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(resolved, &m); err != nil {
		return errors.New("network.headers is not an object of header names and values")
	}
	for name, v := range m {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case float64, bool:
			s = fmt.Sprint(x)
		default:
			return fmt.Errorf("network.headers: the value of %q is not a string", name)
		}
		if err := headerError(name, s); err != nil {
			return fmt.Errorf("network.headers: %w", err)
		}
		nw.headers.Set(name, s)
	}
	return nil
}

// headerError says why a header cannot be sent, as net/http would refuse
// it: a name that is not an HTTP token, a value with a line break or
// another control character. It names the header, never its value: it may
// be a secret. An artifact of an agentform whose manifest checks let such
// a header through, or a runtime value, gets here.
func headerError(name, value string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("%q is not a valid header name", name)
	}
	if !httpguts.ValidHeaderFieldValue(value) {
		return fmt.Errorf("the value of %q is not a valid header value (it has line breaks or control characters)", name)
	}
	return nil
}

// blockHeaders checks the headers and token an mcp or a2a block sends with
// every request (headerError), so that such a block fails at startup
// rather than at each call.
func blockHeaders(block string, headers map[string]string, token string) error {
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		if err := headerError(name, headers[name]); err != nil {
			return fmt.Errorf("the headers of block %q: %w", block, err)
		}
	}
	if !httpguts.ValidHeaderFieldValue(token) {
		return fmt.Errorf("the auth_token of block %q is not a valid header value (it has line breaks or control characters)", block)
	}
	return nil
}

// close releases idle connections.
func (nw *network) close() {
	if nw.transport != nil {
		nw.transport.CloseIdleConnections()
	}
}

// hostNetworks shares one network per Host between the executors whose
// tools make requests, so that concurrency_limit bounds them together and
// connections are pooled once.
var hostNetworks struct {
	sync.Mutex
	m map[*Host]*sharedNetwork
}

// sharedNetwork is a Host's network and the number of executors using it.
type sharedNetwork struct {
	nw   *network
	refs int
}

// acquireNetwork returns the network of h's artifact, resolving it on
// first use; each successful call is paired with releaseNetwork.
func acquireNetwork(h *Host) (*network, error) {
	hostNetworks.Lock()
	defer hostNetworks.Unlock()
	if s := hostNetworks.m[h]; s != nil {
		s.refs++
		return s.nw, nil
	}
	var n *artifact.Network
	if h.Agent != nil {
		n = h.Agent.Network
	}
	env := h.Env
	if env == nil {
		env = NewEnv(nil)
	}
	nw, err := newNetwork(env, n)
	if err != nil {
		return nil, err
	}
	if hostNetworks.m == nil {
		hostNetworks.m = map[*Host]*sharedNetwork{}
	}
	hostNetworks.m[h] = &sharedNetwork{nw: nw, refs: 1}
	return nw, nil
}

// releaseNetwork drops one use of h's network, closing it after the last.
func releaseNetwork(h *Host) {
	hostNetworks.Lock()
	defer hostNetworks.Unlock()
	s := hostNetworks.m[h]
	if s == nil {
		return
	}
	if s.refs--; s.refs <= 0 {
		delete(hostNetworks.m, h)
		s.nw.close()
	}
}

// fetchRequest is one request a tool makes.
type fetchRequest struct {
	URL    string
	Method string
	Header http.Header
	Body   []byte
}

// fetchResponse is a response read in full.
type fetchResponse struct {
	// URL is the final URL, after redirects.
	URL        string
	Status     int
	StatusText string
	Header     http.Header
	Body       []byte
}

// fetch makes one request under the policy. A refusal by the policy is a
// *refusalError; other failures (timeouts, unreachable hosts, a body over
// the limit) are plain errors. No error holds a header value or the URL's
// credentials or query.
func (nw *network) fetch(ctx context.Context, req fetchRequest) (*fetchResponse, error) {
	p, err := nw.prepare(req)
	if err != nil {
		return nil, err
	}
	return nw.do(ctx, p)
}

// preparedRequest is a request that passed the checks that need no
// connection: URL, method, scheme, methods and allow patterns.
type preparedRequest struct {
	method string
	u      *url.URL
	header http.Header
	body   []byte
}

// prepare checks a request against the policy before any connection, so
// that the caller learns of a refusal at once.
func (nw *network) prepare(req fetchRequest) (*preparedRequest, error) {
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(req.URL)
	if err != nil || !u.IsAbs() || u.Host == "" && (u.Scheme == "http" || u.Scheme == "https") {
		return nil, fmt.Errorf("%q is not an absolute URL", redactRaw(req.URL))
	}
	if nw.disabled {
		return nil, refuse(method, u, noNetworkRule)
	}
	if !httpguts.ValidHeaderFieldName(method) {
		return nil, fmt.Errorf("%q is not an HTTP method", method)
	}
	if err := normalizeURL(u); err != nil {
		return nil, fmt.Errorf("%s: %w", redactURL(u), err)
	}
	if rule := nw.check(method, u); rule != "" {
		return nil, refuse(method, u, rule)
	}
	for name, values := range req.Header {
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, fmt.Errorf("%q is not a valid header name", name)
		}
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("the value of the header %q is not valid (it has line breaks or control characters)", name)
			}
		}
	}
	return &preparedRequest{method: method, u: u, header: req.Header, body: req.Body}, nil
}

// do makes a prepared request: the connection's address, redirects and
// limits are checked as it goes.
func (nw *network) do(ctx context.Context, p *preparedRequest) (*fetchResponse, error) {
	method, u := p.method, p.u
	ctx, cancel := context.WithTimeoutCause(ctx, nw.requestTimeout, errRequestTimeout)
	defer cancel()
	if nw.sem != nil {
		select {
		case nw.sem <- struct{}{}:
			defer func() { <-nw.sem }()
		case <-ctx.Done():
			return nil, fmt.Errorf("%s %s: waiting for a free slot (network.limits.concurrency_limit): %w", method, redactURL(u), context.Cause(ctx))
		}
	}
	// The body's reads are watched: a read that waits longer than the
	// read timeout cancels the request.
	ctx, cancelRead := context.WithCancelCause(ctx)
	defer cancelRead(nil)

	var body io.Reader
	if p.body != nil {
		body = bytes.NewReader(p.body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, redactURL(u), err)
	}
	// The block's headers and user agent are defaults; the tool's own
	// headers of the same name win.
	for name, values := range nw.headers {
		hreq.Header[name] = slices.Clone(values)
	}
	for name, values := range p.header {
		hreq.Header[http.CanonicalHeaderKey(name)] = slices.Clone(values)
	}
	if hreq.Header.Get("User-Agent") == "" {
		ua := nw.userAgent
		if ua == "" {
			ua = defaultUserAgent
		}
		hreq.Header.Set("User-Agent", ua)
	}

	resp, err := nw.client.Do(hreq)
	if err != nil {
		return nil, nw.requestError(ctx, method, u, err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	if resp.ContentLength > nw.maxBytes {
		return nil, nw.tooLarge(method, final)
	}
	var watchdog *time.Timer
	if nw.readTimeout > 0 {
		watchdog = time.AfterFunc(nw.readTimeout, func() { cancelRead(errReadTimeout) })
		defer watchdog.Stop()
	}
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(chunk)
		buf.Write(chunk[:n])
		if int64(buf.Len()) > nw.maxBytes {
			return nil, nw.tooLarge(method, final)
		}
		if watchdog != nil {
			watchdog.Reset(nw.readTimeout)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, nw.requestError(ctx, method, final, rerr)
		}
	}
	text := resp.Status
	if code := strconv.Itoa(resp.StatusCode); strings.HasPrefix(text, code) {
		text = strings.TrimSpace(text[len(code):])
	}
	return &fetchResponse{URL: final.String(), Status: resp.StatusCode, StatusText: text, Header: resp.Header, Body: buf.Bytes()}, nil
}

// Causes of a cancelled request context.
var (
	errRequestTimeout = errors.New("request timeout")
	errReadTimeout    = errors.New("read timeout")
)

// tooLarge is the error of a response body over max_response_bytes.
func (nw *network) tooLarge(method string, u *url.URL) error {
	return fmt.Errorf("%s %s: the response body is larger than network.limits.max_response_bytes (%d bytes)", method, redactURL(u), nw.maxBytes)
}

// requestError turns an error of the HTTP client into one that names the
// rule (a refusal) or the cause, with the URL redacted.
func (nw *network) requestError(ctx context.Context, method string, u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if pu, perr := url.Parse(ue.URL); perr == nil {
			u = pu
		}
		err = ue.Err
	}
	var re *refusalError
	if errors.As(err, &re) {
		return re
	}
	var ae *addressError
	if errors.As(err, &ae) {
		return refuse(method, u, "the connection to "+ae.Error())
	}
	switch context.Cause(ctx) {
	case errRequestTimeout:
		return fmt.Errorf("%s %s: the request did not finish within network.limits.request_timeout_ms (%d ms)", method, redactURL(u), nw.requestTimeout.Milliseconds())
	case errReadTimeout:
		return fmt.Errorf("%s %s: the server sent nothing for network.limits.read_timeout_ms (%d ms)", method, redactURL(u), nw.readTimeout.Milliseconds())
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		var oe *net.OpError
		switch {
		case errors.As(err, &oe) && oe.Op == "dial" || strings.Contains(err.Error(), "TLS handshake timeout"):
			return fmt.Errorf("%s %s: could not connect within network.limits.connect_timeout_ms (%d ms)", method, redactURL(u), nw.connectTimeout.Milliseconds())
		case nw.readTimeout > 0:
			return fmt.Errorf("%s %s: the server sent nothing for network.limits.read_timeout_ms (%d ms)", method, redactURL(u), nw.readTimeout.Milliseconds())
		}
		return fmt.Errorf("%s %s: timed out: %v", method, redactURL(u), err)
	}
	return fmt.Errorf("%s %s: %v", method, redactURL(u), err)
}

// refuse returns the refusal of a request.
func refuse(method string, u *url.URL, rule string) error {
	return &refusalError{msg: fmt.Sprintf("agentform refused %s %s: %s", method, redactURL(u), rule)}
}

// ambiguousPath reports a path that servers may route differently from
// how it reads.
func ambiguousPath(u *url.URL) bool {
	raw := strings.ToLower(u.EscapedPath())
	return strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") || strings.Contains(u.Path, "\\") || strings.Contains(u.Path, ";")
}

// check returns the rule a request breaks, or "".
func (nw *network) check(method string, u *url.URL) string {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("only http and https URLs are allowed, not %s", u.Scheme)
	}
	if nw.methods != nil && !slices.Contains(nw.methods, method) {
		return fmt.Sprintf("the method %s is not in network.policy.methods", method)
	}
	if nw.allowSet && ambiguousPath(u) {
		// Servers disagree on what these mean (%2F and %5C decoded into
		// separators, ";" path parameters), so a pathname pattern cannot
		// be trusted to describe where the request goes.
		return "the URL's path holds an encoded slash or backslash, a backslash or a \";\" segment parameter, which network.policy.allow patterns cannot vouch for"
	}
	if nw.allowSet && !slices.ContainsFunc(nw.allow, func(p artifact.URLPattern) bool { return matchURL(p, u) }) {
		if len(nw.allow) == 0 {
			return "network.policy.allow is empty, so no URL is allowed"
		}
		return "the URL matches none of the patterns of network.policy.allow"
	}
	return ""
}

// checkRedirect applies the policy to every redirect, and the redirect
// limit.
func (nw *network) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > nw.maxRedirects {
		return fmt.Errorf("stopped after %d redirects (network.limits.max_redirects)", nw.maxRedirects)
	}
	if err := normalizeURL(req.URL); err != nil {
		return err
	}
	if rule := nw.check(req.Method, req.URL); rule != "" {
		return &refusalError{msg: fmt.Sprintf("agentform refused the redirect from %s to %s %s: %s",
			redactURL(via[len(via)-1].URL), req.Method, redactURL(req.URL), rule)}
	}
	return nil
}

// control checks the address a connection is about to be made to: it
// runs after name resolution, for every address tried, so a hostname that
// resolves to a forbidden address (DNS rebinding included) is refused.
func (nw *network) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("unexpected address %q", address)
	}
	addr = embeddedIPv4(addr.Unmap().WithZone(""))
	switch {
	case addr.IsLoopback() || addr.IsUnspecified():
		if !nw.allowLoopback {
			return &addressError{addr: addr, class: "loopback", knob: "allow_loopback"}
		}
	case addr.IsPrivate() || sharedAddressSpace.Contains(addr):
		if !nw.allowPrivate {
			return &addressError{addr: addr, class: "private", knob: "allow_private"}
		}
	case addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast():
		if !nw.allowLinkLocal {
			return &addressError{addr: addr, class: "link-local", knob: "allow_link_local"}
		}
	}
	return nil
}

// sharedAddressSpace is 100.64.0.0/10 (RFC 6598, carrier-grade NAT), which
// reaches inside networks as private addresses do (cloud metadata and VPN
// overlays live there); it counts as private.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// nat64 and sixToFour are IPv6 prefixes that carry an IPv4 address (RFC
// 6052's well-known NAT64 prefix, RFC 3056's 6to4).
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address an IPv6 address wraps (NAT64,
// 6to4), so that it is classified as what it reaches; other addresses are
// returned as they are.
func embeddedIPv4(a netip.Addr) netip.Addr {
	if !a.Is6() {
		return a
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return a
}

// redactURL renders a URL for a message: scheme, host and path, without
// credentials, query or fragment (they may hold secrets).
func redactURL(u *url.URL) string {
	if u == nil {
		return "(no URL)"
	}
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath, Opaque: u.Opaque}
	s := r.String()
	if u.RawQuery != "" || u.ForceQuery {
		s += "?…"
	}
	return s
}

// redactRaw renders a string that is not a URL for a message, cut short
// at any query. A long one is not shown at all: cutting it could split a
// secret so that the scrubber no longer recognises it.
func redactRaw(s string) string {
	if i := strings.IndexAny(s, "?#@"); i >= 0 {
		s = s[:i] + "…"
	}
	if len(s) > 200 {
		return fmt.Sprintf("(a string of %d characters)", len(s))
	}
	return s
}

// normalizeURL puts the URL in the form it is checked and sent in: the
// hostname lower-case and in ASCII (IDNA), the path's dot segments
// resolved (as a browser would, so "/v2/../admin" cannot pass a "/v2/*"
// pattern and reach /admin).
func normalizeURL(u *url.URL) error {
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Host != "" {
		host := u.Hostname()
		if !strings.Contains(host, ":") { // not an IPv6 literal
			ascii, err := idna.Lookup.ToASCII(host)
			if err != nil {
				return fmt.Errorf("the hostname is not valid: %v", err)
			}
			host = ascii
		} else {
			host = "[" + strings.ToLower(host) + "]"
		}
		if p := u.Port(); p != "" {
			u.Host = host + ":" + p
		} else {
			u.Host = host
		}
	}
	escaped := removeDotSegments(u.EscapedPath())
	if escaped != u.EscapedPath() {
		p, err := url.PathUnescape(escaped)
		if err != nil {
			return fmt.Errorf("the path is not valid: %v", err)
		}
		u.Path, u.RawPath = p, escaped
	}
	return nil
}

// removeDotSegments resolves "." and ".." segments of an escaped path
// (also written %2e), as the URL standard does.
func removeDotSegments(p string) string {
	if p == "" {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch strings.ToLower(s) {
		case ".", "%2e":
			if last {
				out = append(out, "")
			}
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

// defaultPorts maps a scheme to the port a URL without one connects to.
var defaultPorts = map[string]string{"http": "80", "https": "443"}

// matchURL reports whether a normalized URL matches an allow pattern:
// every component of the pattern that is set matches the URL's. The
// protocol is compared without its ':', the hostname case-insensitively
// (in ASCII), the port against the port connected to (the scheme's
// default when the URL has none), the pathname case-sensitively against
// the escaped path ("/" when empty).
func matchURL(p artifact.URLPattern, u *url.URL) bool {
	port := u.Port()
	if port == "" {
		port = defaultPorts[u.Scheme]
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	hostOK := matchComponent(patternHost(p.Hostname), host, '.')
	if ip, err := netip.ParseAddr(patternHost(p.Hostname)); err == nil {
		// An IP address pattern is literal (an IPv6 one has colons that
		// are not named groups).
		uip, err := netip.ParseAddr(host)
		hostOK = err == nil && uip.Unmap() == ip.Unmap()
	}
	return hostOK && matchComponent(strings.ToLower(strings.TrimSuffix(p.Protocol, ":")), strings.ToLower(u.Scheme), 0) &&
		matchComponent(p.Port, port, 0) &&
		matchComponent(p.Pathname, path, '/')
}

// patternHost normalizes a hostname pattern as the URL's hostname is:
// lower-case, brackets of an IPv6 literal removed, no trailing dot.
func patternHost(h string) string {
	h = strings.ToLower(h)
	h = strings.TrimSuffix(h, ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		return h[1 : len(h)-1]
	}
	// A label written in Unicode is matched in its ASCII form, as the
	// URL's hostname is; labels with wildcards stay as written.
	labels := strings.Split(h, ".")
	for i, l := range labels {
		if isASCII(l) || strings.ContainsAny(l, "*:") {
			continue
		}
		if a, err := idna.Lookup.ToASCII(l); err == nil {
			labels[i] = a
		}
	}
	return strings.Join(labels, ".")
}

// isASCII reports whether s is plain ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// validatePattern checks an allow pattern as the manifest does
// (manifest.CheckURLPatternPart): its protocol is a scheme and its port,
// when literal, a port number. An artifact may come from elsewhere.
func validatePattern(p artifact.URLPattern) error {
	for _, c := range []struct{ name, value string }{{"protocol", p.Protocol}, {"port", p.Port}, {"hostname", p.Hostname}} {
		if err := manifest.CheckURLPatternPart(c.name, c.value); err != nil {
			return err
		}
	}
	return nil
}

// matchComponent reports whether s matches the pattern pat. An empty
// pattern matches anything. In a pattern, "*" matches any run of
// characters (sep included), ":name" a non-empty run without sep (any
// non-empty run when sep is 0), and every other character itself. It
// runs in time proportional to len(pat)*len(s), whatever the pattern.
func matchComponent(pat, s string, sep byte) bool {
	if pat == "" {
		return true
	}
	cols := len(s) + 1
	failed := make([]bool, (len(pat)+1)*cols) // (pi, si) known not to match
	var match func(pi, si int) bool
	match = func(pi, si int) bool {
		for pi < len(pat) {
			if failed[pi*cols+si] {
				return false
			}
			switch c := pat[pi]; {
			case c == '*':
				for pi < len(pat) && pat[pi] == '*' {
					pi++
				}
				if pi == len(pat) {
					return true
				}
				for i := si; i <= len(s); i++ {
					if match(pi, i) {
						return true
					}
				}
				failed[pi*cols+si] = true
				return false
			case c == ':' && nameLen(pat[pi+1:]) > 0:
				start := pi
				pi += 1 + nameLen(pat[pi+1:])
				for i := si + 1; i <= len(s); i++ {
					if sep != 0 && s[i-1] == sep {
						break
					}
					if match(pi, i) {
						return true
					}
				}
				failed[start*cols+si] = true
				return false
			default:
				if si == len(s) || s[si] != c {
					return false
				}
				pi, si = pi+1, si+1
			}
		}
		return si == len(s)
	}
	return match(0, 0)
}

// nameLen returns the length of the name at the start of s (a letter or
// '_', then letters, digits and '_'), or 0.
func nameLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || n > 0 && c >= '0' && c <= '9' {
			n++
			continue
		}
		break
	}
	return n
}
