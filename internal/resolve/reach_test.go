package resolve

import (
	"bufio"
	"context"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hang {
				tc.url = "http://" + hangingAddr(t)
			}
			var p *url.URL
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
			trace, blind := reachTrace(u, func() { reached.Store(true) })
			ctx, cancel := context.WithTimeout(httptrace.WithClientTrace(context.Background(), trace), 300*time.Millisecond)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := &http.Transport{Proxy: proxyFor}
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
// that refuses the connection, and neither blames the server. For a runtime URL the reason says it was the proxy, and
// names neither the proxy's address nor the URL's.
func TestResolveProxyUnreachable(t *testing.T) {
	closed, err := url.Parse(mcpClosedURL(t))
	if err != nil {
		t.Fatal(err)
	}
	tlsProxy := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsProxy.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsProxy.StartTLS()
	t.Cleanup(tlsProxy.Close)
	mcpLive := newMCPHTTPServer(t, 3, 0)
	live, diags := ResolveMCP(context.Background(), mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\n", mcpLive.URL), nil))
	if len(diags) > 0 {
		t.Fatalf("listing the live server: %s", diags.Error())
	}
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
		{"untrusted certificate", tlsProxy.URL, "proxyconnect", "the proxy could not be reached: the server's TLS certificate is not trusted", []string{"http", "https"}},
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
					req.Locked = live.Pin
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
