package resolve

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/lockfile"
)

// silentAddr returns the address of a listener that accepts connections
// and never writes to them.
func silentAddr(t *testing.T) string {
	return serveConns(t, func(net.Conn, func(net.Conn)) {})
}

// serveConns listens on a local address and passes each connection to
// handle in a goroutine of its own, with keep, which holds another
// connection open until the test ends, as every accepted one is. The
// goroutines never call t: they may outlive the test.
func serveConns(t *testing.T, handle func(c net.Conn, keep func(net.Conn))) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var open []net.Conn
	closed := false
	keep := func(c net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			c.Close()
			return
		}
		open = append(open, c)
	}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		closed = true
		for _, c := range open {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			keep(c)
			go handle(c, keep)
		}
	}()
	return ln.Addr().String()
}

// httpsProxy starts an https proxy that tunnels every CONNECT to target
// (502 when it cannot connect), answers no other request, and returns its
// URL and a pool that trusts its certificate.
func httpsProxy(t *testing.T, target string) (*url.URL, *x509.CertPool) {
	t.Helper()
	var mu sync.Mutex
	var open []io.Closer
	track := func(c io.Closer) {
		mu.Lock()
		defer mu.Unlock()
		open = append(open, c)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			<-r.Context().Done()
			return
		}
		up, err := net.DialTimeout("tcp", target, 2*time.Second)
		if err != nil {
			http.Error(w, "no route", http.StatusBadGateway)
			return
		}
		c, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			up.Close()
			return
		}
		track(up)
		track(c)
		_, _ = c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
		go func() { _, _ = io.Copy(up, buf); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(func() {
		srv.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return u, pool
}

// TestReachTrace: a request reaches the server once a direct connection
// is up or a TLS handshake with it starts (through a proxy's tunnel too),
// never when a plain http request only reaches a proxy.
func TestReachTrace(t *testing.T) {
	silent := silentAddr(t)
	// A proxy that tunnels CONNECT to target and otherwise says nothing.
	proxy := func(t *testing.T, target string) *url.URL {
		addr := serveConns(t, func(c net.Conn, keep func(net.Conn)) {
			req, err := http.ReadRequest(bufio.NewReader(c))
			if err != nil || req.Method != http.MethodConnect {
				return
			}
			up, err := net.DialTimeout("tcp", target, 2*time.Second)
			if err != nil {
				return
			}
			keep(up)
			c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
		})
		return &url.URL{Scheme: "http", Host: addr}
	}
	var roots *x509.CertPool
	viaHTTPS := func(target string) func(t *testing.T) *url.URL {
		return func(t *testing.T) *url.URL {
			var p *url.URL
			p, roots = httpsProxy(t, target)
			return p
		}
	}
	for _, tc := range []struct {
		name    string
		url     string
		hang    bool
		proxy   func(t *testing.T) *url.URL
		reached bool
		blind   bool
	}{
		{name: "direct, silent server", url: "http://" + silent, reached: true},
		{name: "direct, TLS handshake unanswered", url: "https://" + silent, reached: true},
		{name: "direct, connection hangs", hang: true, reached: false},
		{name: "http through a proxy", url: "http://agent.internal.example", proxy: func(t *testing.T) *url.URL { return proxy(t, silent) }, reached: false, blind: true},
		{name: "https through a proxy's tunnel", url: "https://agent.internal.example", proxy: func(t *testing.T) *url.URL { return proxy(t, silent) }, reached: true},
		// Through an https proxy the proxy's own handshake is not the
		// server's; the one inside the tunnel is.
		{name: "https through an https proxy's tunnel", url: "https://agent.internal.example", proxy: viaHTTPS(silent), reached: true},
		{name: "https through an https proxy, no tunnel", url: "https://agent.internal.example", proxy: viaHTTPS(closedAddr(t)), reached: false},
		{name: "http through an https proxy", url: "http://agent.internal.example", proxy: viaHTTPS(silent), reached: false, blind: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hang {
				tc.url = "http://" + hangingAddr(t)
			}
			var p *url.URL
			roots = nil
			if tc.proxy != nil {
				p = tc.proxy(t)
			}
			defer func(f func(*http.Request) (*url.URL, error)) { proxyFor = f }(proxyFor)
			proxyFor = http.ProxyURL(p)
			if p == nil {
				proxyFor = func(*http.Request) (*url.URL, error) { return nil, nil }
			}
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			var reached atomic.Bool
			trace, blind := reachTrace(u, func() { reached.Store(true) }, nil)
			ctx, cancel := context.WithTimeout(httptrace.WithClientTrace(context.Background(), trace), 300*time.Millisecond)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := &http.Transport{Proxy: proxyFor, TLSClientConfig: &tls.Config{RootCAs: roots}}
			defer tr.CloseIdleConnections()
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
				t.Fatalf("got an answer, want a timeout")
			}
			if reached.Load() != tc.reached || blind != tc.blind {
				t.Errorf("reached %v, blind %v; want %v, %v", reached.Load(), blind, tc.reached, tc.blind)
			}
		})
	}
}

// TestResolveProxyUnreachable: a proxy that cannot be reached (nothing
// listening, or a certificate that does not verify), one that refuses to
// open a tunnel to the server, or one that hangs up on a plain http request,
// leaves the server or agent unreached (or not known to be reached): mcp
// and a2a both fall back to the lock entry with a warning, as for a server
// that refuses the connection, and neither blames the server. For a
// runtime URL the reason says it was the proxy, and names neither the
// proxy's address nor the URL's.
func TestResolveProxyUnreachable(t *testing.T) {
	closed, err := url.Parse(mcpClosedURL(t))
	if err != nil {
		t.Fatal(err)
	}
	tlsProxy := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsProxy.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsProxy.StartTLS()
	t.Cleanup(tlsProxy.Close)
	_, pin := mcpLivePin(t)
	// A proxy that refuses to open a tunnel (the agent down, or not
	// allowed), as Squid does: only for https, since a plain http request
	// through a proxy takes the proxy's answer for the server's.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no route to agent", http.StatusBadGateway)
	}))
	t.Cleanup(refusing.Close)
	// A proxy that takes a plain http request and hangs up: the server
	// may never have been asked.
	hangUp := serveConns(t, func(c net.Conn, _ func(net.Conn)) {
		_, _ = c.Read(make([]byte, 4096))
		c.Close()
	})
	const agent = "agent.example.com"
	for _, proxy := range []struct {
		name, url, literalWhy, runtimeWhy string
		schemes                           []string
	}{
		{"refused", "http://" + closed.Host, "proxyconnect", "the proxy could not be reached: connection refused", []string{"http", "https"}},
		{"untrusted certificate", tlsProxy.URL, "proxyconnect", "the proxy could not be reached: its TLS certificate is not trusted", []string{"http", "https"}},
		{"tunnel refused", refusing.URL, "Bad Gateway", "a network error", []string{"https"}},
		{"hung up", "http://" + hangUp, "EOF", "a network error", []string{"http"}},
	} {
		p, err := url.Parse(proxy.url)
		if err != nil {
			t.Fatal(err)
		}
		for _, scheme := range proxy.schemes {
			for _, runtimeURL := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/runtime=%v", proxy.name, scheme, runtimeURL), func(t *testing.T) {
					defer func(f func(*http.Request) (*url.URL, error)) { proxyFor = f }(proxyFor)
					proxyFor = http.ProxyURL(p)
					base := scheme + "://" + agent
					check := func(kind string, res *Resolved, diags hcl.Diagnostics, summary string) {
						t.Helper()
						if diags.HasErrors() || len(diags) != 1 || diags[0].Summary != summary {
							t.Fatalf("%s diagnostics:\ngot:  %s\nwant: one warning %q", kind, diagText(diags), summary)
						}
						if res == nil || !res.FromLock {
							t.Errorf("%s: got %+v, want the tools from the lock entry", kind, res)
						}
						text := diags[0].Detail
						if !runtimeURL {
							if !strings.Contains(text, proxy.literalWhy) {
								t.Errorf("%s detail:\ngot:  %s\nwant: Go's error, with %q", kind, text, proxy.literalWhy)
							}
							return
						}
						if !strings.Contains(text, proxy.runtimeWhy) {
							t.Errorf("%s detail:\ngot:  %s\nwant: %q", kind, text, proxy.runtimeWhy)
						}
						for _, hidden := range []string{agent, p.Host, p.Port()} {
							if strings.Contains(text, hidden) {
								t.Errorf("%s detail names %q: %s", kind, hidden, text)
							}
						}
					}

					body, env := fmt.Sprintf("transport = \"http\"\nurl = %q\n", base+"/mcp"), map[string]string(nil)
					if runtimeURL {
						body, env = "transport = \"http\"\nurl = runtime(\"MCP_URL\")\n", map[string]string{"MCP_URL": base + "/mcp"}
					}
					req := mcpTestRequest(t, body, env)
					req.Locked = pin
					res, diags := ResolveMCP(context.Background(), req)
					check("mcp", res, diags, "Served tools taken from agentform.lock.hcl")

					body, env = fmt.Sprintf("url = %q", base), nil
					if runtimeURL {
						body, env = `url = runtime("PLANNER_URL")`, map[string]string{"PLANNER_URL": base}
					}
					areq := a2aRequest(t, body, env)
					areq.Locked = &lockfile.Tool{Kind: "a2a", Card: "sha256:" + strings.Repeat("0", 64), CardName: "Planner"}
					res, diags = ResolveA2A(context.Background(), areq)
					check("a2a", res, diags, "Cannot reach A2A agent")
				})
			}
		}
	}
}

// closedAddr returns a local address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(mcpClosedURL(t))
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestResolveThroughHTTPSProxy: through an https proxy, a server that took
// the tunnelled connection and then failed its TLS handshake (an https URL
// at a plain HTTP port) was reached, and fails the plan for mcp and a2a
// alike, as it does without the proxy; one the proxy could not connect to
// was not, and both fall back to the lock entry.
func TestResolveThroughHTTPSProxy(t *testing.T) {
	plain := httptest.NewUnstartedServer(http.NotFoundHandler())
	plain.Config.ErrorLog = log.New(io.Discard, "", 0)
	plain.Start()
	t.Cleanup(plain.Close)
	_, pin := mcpLivePin(t)
	for _, tc := range []struct {
		name, target string
		severity     hcl.DiagnosticSeverity
		mcp, a2a     string
	}{
		{"plain http port", strings.TrimPrefix(plain.URL, "http://"), hcl.DiagError, "MCP server failed", "Cannot fetch A2A agent card"},
		{"no tunnel", closedAddr(t), hcl.DiagWarning, "Served tools taken from agentform.lock.hcl", "Cannot reach A2A agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, roots := httpsProxy(t, tc.target)
			defer func(f func(*http.Request) (*url.URL, error)) { proxyFor = f }(proxyFor)
			proxyFor = http.ProxyURL(p)
			tr := resolveTransport.(*http.Transport).Clone()
			tr.TLSClientConfig = &tls.Config{RootCAs: roots}
			defer tr.CloseIdleConnections()
			defer func(rt http.RoundTripper, c *http.Client) { resolveTransport, a2aHTTPClient = rt, c }(resolveTransport, a2aHTTPClient)
			resolveTransport = tr
			a2aHTTPClient = &http.Client{Transport: tr, CheckRedirect: a2aHTTPClient.CheckRedirect}

			req := mcpTestRequest(t, "transport = \"http\"\nurl = \"https://mcp.example.com/mcp\"\n", nil)
			req.Locked = pin
			_, diags := ResolveMCP(context.Background(), req)
			if len(diags) != 1 || diags[0].Severity != tc.severity || diags[0].Summary != tc.mcp {
				t.Errorf("mcp:\ngot:  %s\nwant: %v %q", diagText(diags), tc.severity, tc.mcp)
			}
			areq := a2aRequest(t, `url = "https://agent.example.com"`, nil)
			areq.Locked = &lockfile.Tool{Kind: "a2a", Card: "sha256:" + strings.Repeat("0", 64), CardName: "Planner"}
			_, diags = ResolveA2A(context.Background(), areq)
			if len(diags) != 1 || diags[0].Severity != tc.severity || diags[0].Summary != tc.a2a {
				t.Errorf("a2a:\ngot:  %s\nwant: %v %q", diagText(diags), tc.severity, tc.a2a)
			}
		})
	}
}

// TestResolveRequestNotMade: a request that could not be made at all (a
// header value or token HTTP cannot carry, from a runtime() value) is the
// configuration's fault: an error for mcp and a2a alike, not a server out
// of reach, located at the headers (or auth_token) rather than the url,
// naming the header and its variable and not its value.
func TestResolveRequestNotMade(t *testing.T) {
	mcpLive, pin := mcpLivePin(t)
	agent := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(agent.Close)
	const value = "secret-part\nsecond-line"
	check := func(kind string, res *Resolved, diags hcl.Diagnostics, summary string, at hcl.Range, has ...string) {
		t.Helper()
		if len(diags) != 1 || diags[0].Severity != hcl.DiagError || diags[0].Summary != summary {
			t.Fatalf("%s:\ngot:  %s\nwant: the error %q", kind, diagText(diags), summary)
		}
		if res != nil && res.FromLock {
			t.Errorf("%s: the lock entry was used", kind)
		}
		if got := *diags[0].Subject; got != at {
			t.Errorf("%s range:\ngot:  %s\nwant: %s", kind, got, at)
		}
		d := diags[0].Detail
		for _, want := range has {
			if !strings.Contains(d, want) {
				t.Errorf("%s detail:\ngot:  %s\nwant: %q in it", kind, d, want)
			}
		}
		if strings.Contains(d, "secret-part") {
			t.Errorf("%s detail:\ngot:  %s\nwant: not the value", kind, d)
		}
	}
	for _, v := range []string{value, "secret-part\r", "secret-part\x00"} {
		env := map[string]string{"X_KEY": v}
		req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\nheaders = { \"X-Key\" = runtime(\"X_KEY\") }\n", mcpLive.URL), env)
		req.Locked = pin
		res, diags := ResolveMCP(context.Background(), req)
		check("mcp", res, diags, "Invalid HTTP header", req.Tool.MCP.Headers.Range, `header "X-Key", given by runtime("X_KEY")`, "Set X_KEY to a value on one line")

		areq := a2aRequest(t, fmt.Sprintf("url = %q\nheaders = { \"X-Key\" = runtime(\"X_KEY\") }", agent.URL), env)
		areq.Locked = &lockfile.Tool{Kind: "a2a", Card: "sha256:" + strings.Repeat("0", 64), CardName: "Planner"}
		res, diags = ResolveA2A(context.Background(), areq)
		check("a2a", res, diags, "Invalid HTTP header", areq.Tool.A2A.Headers.Range, `header "X-Key", given by runtime("X_KEY")`, "Set X_KEY to a value on one line")
	}

	env := map[string]string{"TOK": value}
	req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\nauth_token = secret(runtime(\"TOK\"))\n", mcpLive.URL), env)
	req.Locked = pin
	res, diags := ResolveMCP(context.Background(), req)
	check("mcp token", res, diags, "Invalid auth_token", req.Tool.MCP.AuthToken.Range, `runtime("TOK")`, "Set TOK to the token alone")
	areq := a2aRequest(t, fmt.Sprintf("url = %q\nauth_token = secret(runtime(\"TOK\"))", agent.URL), env)
	areq.Locked = &lockfile.Tool{Kind: "a2a", Card: "sha256:" + strings.Repeat("0", 64), CardName: "Planner"}
	res, diags = ResolveA2A(context.Background(), areq)
	check("a2a token", res, diags, "Invalid auth_token", areq.Tool.A2A.AuthToken.Range, `runtime("TOK")`, "Set TOK to the token alone")
}

// TestResolveURLCredentialsHidden: a url with a password or a token in
// its query is named in messages with those parts REDACTED (the a2a
// card's URL as it is requested, the path before the query), for a
// server that answers with an error and for an agent nothing listens
// for.
func TestResolveURLCredentialsHidden(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusNotImplemented)
	}))
	t.Cleanup(srv.Close)
	withCreds := func(base string) string {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword("bob", "pw-zz11")
		u.RawQuery = "page=2&api_key=key-zz22"
		return u.String()
	}
	req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\n", withCreds(srv.URL)), nil)
	_, diags := ResolveMCP(context.Background(), req)
	want := `"http://bob:REDACTED@` + strings.TrimPrefix(srv.URL, "http://") + `?page=2&api_key=REDACTED"`
	if !strings.Contains(diags.Error(), want) || strings.Contains(diags.Error(), "zz") {
		t.Errorf("mcp diagnostics:\ngot:  %s\nwant: the URL as %s, no credential", diags.Error(), want)
	}

	// An https url at a plain HTTP port: the TLS error of Go's client
	// quotes the url, its password as "***" and its query as written
	// (percent-encoded); a token as the user name it does not hide.
	host := strings.TrimPrefix(srv.URL, "http://")
	for raw, want := range map[string]string{
		"https://bob:zzpass1@" + host + "/mcp?sig=zzAbc%2Bdef%3D": `Post "https://bob:REDACTED@` + host + `/mcp?sig=REDACTED"`,
		"https://zztokenuser@" + host + "/mcp?page=1":             `Post "https://REDACTED@` + host + `/mcp?page=1"`,
	} {
		req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\n", raw), nil)
		_, diags := ResolveMCP(context.Background(), req)
		if !strings.Contains(diags.Error(), want) || strings.Contains(diags.Error(), "zz") {
			t.Errorf("mcp diagnostics for %s:\ngot:  %s\nwant: %s, no credential", raw, diags.Error(), want)
		}
	}

	closed := closedAddr(t)
	areq := a2aRequest(t, fmt.Sprintf("url = %q", withCreds("http://"+closed+"/agents/")), nil)
	_, diags = ResolveA2A(context.Background(), areq)
	want = "http://bob:REDACTED@" + closed + "/agents/.well-known/agent-card.json?page=2&api_key=REDACTED"
	if d := oneDiag(t, diags, hcl.DiagWarning, "Cannot reach A2A agent", areq.Tool.A2A.URL.Range); !strings.Contains(d.Detail, want) || strings.Contains(d.Detail, "zz") {
		t.Errorf("a2a detail:\ngot:  %s\nwant: the card's URL as %s, no credential", d.Detail, want)
	}
}
