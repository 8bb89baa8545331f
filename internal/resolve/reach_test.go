package resolve

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
