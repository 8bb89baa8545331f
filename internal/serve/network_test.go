package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentform/agentform/internal/artifact"
)

// fetcherJS is a tool that fetches args.url with args.method, headers and
// body, through agentc:http or the global fetch, and reports the
// response. With args.catch it catches a failed fetch and returns its
// message as output.
const fetcherJS = `import { fetch as httpFetch } from "agentc:http";

export const fetcher = {
  name: "fetcher",
  description: "Fetches a URL.",
  parameters: { type: "object" },
  async execute({ args }) {
    const f = args.global ? fetch : httpFetch;
    try {
      const res = await f(args.url, { method: args.method, headers: args.headers, body: args.body });
      const body = args.json ? await res.json() : await res.text();
      let again = null;
      try { await res.text(); } catch (e) { again = e.message; }
      return {
        output: {
          status: res.status, ok: res.ok, statusText: res.statusText, url: res.url,
          type: res.headers.get("Content-Type"), body, again, same: f === globalThis.fetch,
        },
      };
    } catch (e) {
      if (args.catch) { return { output: "caught: " + e.message }; }
      throw e;
    }
  },
};
`

// testSecret is the value of the secret header; it must never appear in
// an error.
const testSecret = "s3cr3t-header-value"

// netServers are the servers of the network tests: allowed is in the
// policy's allow list, other is not. Each counts the requests it got.
type netServers struct {
	allowed, other         *httptest.Server
	allowedHits, otherHits atomic.Int64
	allowedPort, otherPort string
}

func newNetServers(t *testing.T) *netServers {
	s := &netServers{}
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{
			"method": r.Method, "body": string(body), "ua": r.Header.Get("User-Agent"),
			"deployment": r.Header.Get("X-Deployment"), "key": r.Header.Get("X-Api-Key"), "tool": r.Header.Get("X-Tool"),
			"path": r.URL.Path,
		})
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "4096")
		_, _ = w.Write([]byte(strings.Repeat("x", 4096)))
	})
	mux.HandleFunc("/big-chunked", func(w http.ResponseWriter, r *http.Request) {
		for range 8 {
			_, _ = w.Write([]byte(strings.Repeat("y", 512)))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/redirect-in", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/echo", http.StatusFound)
	})
	mux.HandleFunc("/redirect-out", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.other.URL+"/landing", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	s.allowed = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.allowedHits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.allowed.Close)
	s.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.otherHits.Add(1)
		_, _ = io.WriteString(w, "should not be reached")
	}))
	t.Cleanup(s.other.Close)
	s.allowedPort = mustPort(t, s.allowed.URL)
	s.otherPort = mustPort(t, s.other.URL)
	return s
}

func mustPort(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// networkBlock is the network block of the tests, allowing the allowed
// server by 127.0.0.1 and by localhost.
func (s *netServers) networkBlock() string {
	return fmt.Sprintf(`
network {
  user_agent = "agentform-test/1"
  headers = {
    "X-Deployment" = "staging"
    "X-Api-Key"    = secret(runtime("TEST_API_KEY"))
  }
  limits {
    max_response_bytes = runtime("TEST_MAX_BYTES", 1024)
    max_redirects      = 2
    request_timeout_ms = 10000
  }
  policy {
    methods = ["GET", "POST"]
    addresses {
      allow_loopback = runtime("TEST_LOOPBACK", true)
    }
    allow = [
      { protocol = "http", hostname = "127.0.0.1", port = %q },
      { protocol = "http", hostname = "localhost", port = %q },
    ]
  }
}
`, s.allowedPort, s.allowedPort)
}

// fetchArgs returns the arguments of a fetcher call.
func fetchArgs(t *testing.T, args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestJavaScriptFetch runs the fetcher tool against real servers under a
// real network block: allowed requests reach the server with the block's
// headers; everything the policy does not allow is refused before any
// byte reaches the server, with an error that names the URL and the rule
// and never the secret header.
func TestJavaScriptFetch(t *testing.T) {
	s := newNetServers(t)
	dir := jsWorkspace(t, map[string]string{"fetcher": fetcherJS}, s.networkBlock())
	env := map[string]string{"TEST_API_KEY": testSecret}
	a, arch, _ := buildArtifact(t, dir, "a", env)
	f := startJS(t, a, arch, env)
	ctx := context.Background()

	t.Run("allowed", func(t *testing.T) {
		res, err, _ := f.call(t, ctx, "fetcher", fetchArgs(t, map[string]any{
			"url": s.allowed.URL + "/echo", "method": "post", "body": "hello", "headers": map[string]string{"X-Tool": "yes"}, "json": true,
		}))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Status     int               `json:"status"`
			OK         bool              `json:"ok"`
			StatusText string            `json:"statusText"`
			Type       string            `json:"type"`
			Body       map[string]string `json:"body"`
			Again      string            `json:"again"`
			Same       bool              `json:"same"`
		}
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatalf("%v: %s", err, res.Output)
		}
		want := map[string]string{"method": "POST", "body": "hello", "ua": "agentform-test/1", "deployment": "staging", "key": testSecret, "tool": "yes", "path": "/echo"}
		for k, v := range want {
			if out.Body[k] != v {
				t.Errorf("the server saw %s\ngot:  %q\nwant: %q", k, out.Body[k], v)
			}
		}
		if out.Status != 200 || !out.OK || out.StatusText != "OK" || out.Type != "application/json" || !out.Same {
			t.Errorf("response\ngot:  %s\nwant: 200, ok, \"OK\", application/json, agentc:http's fetch being the global one", res.Output)
		}
		if !strings.Contains(out.Again, "already read") {
			t.Errorf("reading the body twice\ngot:  %q\nwant: an error saying it was already read", out.Again)
		}
	})

	t.Run("global fetch and an allowed redirect", func(t *testing.T) {
		res, err, _ := f.call(t, ctx, "fetcher", fetchArgs(t, map[string]any{"url": s.allowed.URL + "/redirect-in", "global": true, "json": true}))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			URL  string            `json:"url"`
			Body map[string]string `json:"body"`
			Same bool              `json:"same"`
		}
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatal(err)
		}
		if out.URL != s.allowed.URL+"/echo" || out.Body["method"] != "GET" || !out.Same {
			t.Errorf("got:  %s\nwant: the final URL %s/echo, GET, the global fetch", res.Output, s.allowed.URL)
		}
	})

	refused := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"outside the allow list", map[string]any{"url": s.other.URL + "/x?token=abc123"},
			[]string{fmt.Sprintf("agentform refused GET http://127.0.0.1:%s/x?…: the URL matches none of the patterns of network.policy.allow", s.otherPort)}},
		{"method not allowed", map[string]any{"url": s.allowed.URL + "/echo", "method": "DELETE"},
			[]string{fmt.Sprintf("agentform refused DELETE http://127.0.0.1:%s/echo: the method DELETE is not in network.policy.methods", s.allowedPort)}},
		{"not http", map[string]any{"url": "file:///etc/passwd"},
			[]string{"only http and https URLs are allowed, not file"}},
		{"redirect to a URL outside the allow list", map[string]any{"url": s.allowed.URL + "/redirect-out"},
			[]string{fmt.Sprintf("agentform refused the redirect from http://127.0.0.1:%s/redirect-out to GET http://127.0.0.1:%s/landing: the URL matches none of the patterns", s.allowedPort, s.otherPort)}},
		{"a refusal the tool catches still fails the call", map[string]any{"url": s.other.URL + "/", "catch": true},
			[]string{"agentform refused GET", "matches none of the patterns"}},
		{"dot segments are resolved before matching", map[string]any{"url": "http://127.0.0.1:" + s.allowedPort + "/../../x", "method": "PUT"},
			[]string{fmt.Sprintf("agentform refused PUT http://127.0.0.1:%s/x: the method PUT", s.allowedPort)}},
	}
	for _, tc := range refused {
		t.Run("refused "+tc.name, func(t *testing.T) {
			before := s.allowedHits.Load()
			res, err, _ := f.call(t, ctx, "fetcher", fetchArgs(t, tc.args))
			if err == nil {
				t.Fatalf("got:  output %s\nwant: a refusal", res.Output)
			}
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\ngot:  %v\nwant: it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), "abc123") {
				t.Errorf("the error holds a secret: %v", err)
			}
			if tc.name != "redirect to a URL outside the allow list" && s.allowedHits.Load() != before {
				t.Errorf("the allowed server got a request the policy refused")
			}
			if n := s.otherHits.Load(); n != 0 {
				t.Errorf("the server outside the allow list got %d requests", n)
			}
		})
	}

	for _, tc := range []struct {
		name, path string
		want       string
	}{
		{"too many redirects", "/loop", "stopped after 2 redirects (network.limits.max_redirects)"},
		{"response too large", "/big", "the response body is larger than network.limits.max_response_bytes (1024 bytes)"},
		{"response too large without a length", "/big-chunked", "the response body is larger than network.limits.max_response_bytes (1024 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err, _ := f.call(t, ctx, "fetcher", fetchArgs(t, map[string]any{"url": s.allowed.URL + tc.path}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error\ngot:  %v\nwant: it to contain %q", err, tc.want)
			}
		})
	}

	t.Run("limit from the environment", func(t *testing.T) {
		env := map[string]string{"TEST_API_KEY": testSecret, "TEST_MAX_BYTES": "8192"}
		f := startJS(t, a, arch, env)
		res, err, _ := f.call(t, ctx, "fetcher", fetchArgs(t, map[string]any{"url": s.allowed.URL + "/big"}))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res.Output), strings.Repeat("x", 4096)) {
			t.Errorf("got:  %.100s…\nwant: the 4096-byte body", res.Output)
		}
	})

	// allow_loopback = runtime("TEST_LOOPBACK", true), turned off: the
	// address connected to is checked, also when a hostname resolves to
	// it.
	t.Run("loopback refused", func(t *testing.T) {
		env := map[string]string{"TEST_API_KEY": testSecret, "TEST_LOOPBACK": "false"}
		f := startJS(t, a, arch, env)
		for _, host := range []string{"127.0.0.1", "localhost"} {
			before := s.allowedHits.Load()
			u := fmt.Sprintf("http://%s:%s/echo", host, s.allowedPort)
			_, err, _ := f.call(t, ctx, "fetcher", fetchArgs(t, map[string]any{"url": u}))
			if err == nil || !strings.Contains(err.Error(), "agentform refused GET "+u+": the connection to ") ||
				!strings.Contains(err.Error(), "is a loopback address and network.policy.addresses.allow_loopback is not true") {
				t.Errorf("%s\ngot:  %v\nwant: refused as a loopback address", host, err)
			}
			if s.allowedHits.Load() != before {
				t.Errorf("%s: the server got a request the policy refused", host)
			}
		}
	})
}

// TestJavaScriptFetchNoNetworkBlock checks that without a network block
// every request is refused.
func TestJavaScriptFetchNoNetworkBlock(t *testing.T) {
	s := newNetServers(t)
	dir := jsWorkspace(t, map[string]string{"fetcher": fetcherJS}, "")
	f := newJSFixture(t, dir, nil)
	if f.agent.Network != nil {
		t.Fatalf("got:  a network in agent.json\nwant: none")
	}
	_, err, _ := f.call(t, context.Background(), "fetcher", fetchArgs(t, map[string]any{"url": s.allowed.URL + "/echo"}))
	want := fmt.Sprintf("agentform refused GET %s/echo: %s", s.allowed.URL, noNetworkRule)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error\ngot:  %v\nwant: it to contain %q", err, want)
	}
	if n := s.allowedHits.Load(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
}

// TestNetworkConcurrencyLimit checks that concurrency_limit bounds the
// requests in flight: the server records the most it saw at once.
func TestNetworkConcurrencyLimit(t *testing.T) {
	var inFlight, most atomic.Int64
	release := make(chan struct{})
	arrived := make(chan struct{}, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		arrived <- struct{}{}
		<-release
	}))
	defer srv.Close()
	nw, err := newNetwork(NewEnv(nil), &artifact.Network{
		Limits: &artifact.NetworkLimits{ConcurrencyLimit: &artifact.Int{Value: 1}},
		Policy: &artifact.NetworkPolicy{Addresses: artifact.NetworkAddresses{AllowLoopback: artifact.Bool{Value: true}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer nw.close()
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := nw.fetch(context.Background(), fetchRequest{URL: srv.URL}); err != nil {
				t.Error(err)
			}
		}()
	}
	// Let each request in once the one before it has arrived; with the
	// limit, the next cannot arrive before this one is released.
	for range 3 {
		<-arrived
		release <- struct{}{}
	}
	wg.Wait()
	if got := most.Load(); got != 1 {
		t.Errorf("requests in flight at once\ngot:  %d\nwant: 1", got)
	}
}

// TestNetworkConfigErrors checks that a network block that cannot be
// used fails with an error naming the setting and never a value.
func TestNetworkConfigErrors(t *testing.T) {
	env := NewEnv(func(name string) (string, bool) {
		switch name {
		case "BAD_HEADER":
			return "line\nbreak " + testSecret, true
		case "BAD_INT":
			return "many", true
		}
		return "", false
	})
	for _, tc := range []struct {
		name string
		n    *artifact.Network
		want string
	}{
		{"header value", &artifact.Network{Headers: artifact.JSON(`{"X-Key":{"env":"BAD_HEADER","secret":true}}`)},
			`network.headers: the value of "X-Key" is not a valid header value`},
		{"missing secret", &artifact.Network{Headers: artifact.JSON(`{"X-Key":{"env":"UNSET_KEY","secret":true}}`)},
			"UNSET_KEY"},
		{"limit", &artifact.Network{Limits: &artifact.NetworkLimits{MaxResponseBytes: &artifact.Int{Runtime: &artifact.RuntimeRef{Env: "BAD_INT"}}}},
			"network.limits.max_response_bytes: the environment variable BAD_INT is not a whole number"},
		{"pattern", &artifact.Network{Policy: &artifact.NetworkPolicy{AllowSet: true, Allow: []artifact.URLPattern{{Port: "99999"}}}},
			`network.policy.allow entry 1: the port "99999" is not a port number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newNetwork(env, tc.n)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), testSecret) {
				t.Errorf("got:  %v\nwant: an error containing %q and no value", err, tc.want)
			}
		})
	}
}

// TestMatchURL checks the allow-pattern matcher.
func TestMatchURL(t *testing.T) {
	for _, tc := range []struct {
		pattern artifact.URLPattern
		url     string
		want    bool
	}{
		{artifact.URLPattern{}, "https://anything.test/x", true},
		{artifact.URLPattern{Protocol: "https"}, "https://a.test/", true},
		{artifact.URLPattern{Protocol: "https:"}, "https://a.test/", true},
		{artifact.URLPattern{Protocol: "https"}, "http://a.test/", false},
		{artifact.URLPattern{Protocol: "http*"}, "https://a.test/", true},
		{artifact.URLPattern{Hostname: "api.acme.test"}, "https://API.Acme.test/", true},
		{artifact.URLPattern{Hostname: "api.acme.test"}, "https://api.acme.test.evil.test/", false},
		{artifact.URLPattern{Hostname: "api.acme.test"}, "https://evilapi.acme.test/", false},
		{artifact.URLPattern{Hostname: "*.acme.test"}, "https://api.acme.test/", true},
		{artifact.URLPattern{Hostname: "*.acme.test"}, "https://a.b.acme.test/", true},
		{artifact.URLPattern{Hostname: "*.acme.test"}, "https://acme.test/", false},
		{artifact.URLPattern{Hostname: "*.acme.test"}, "https://evilacme.test/", false},
		{artifact.URLPattern{Hostname: ":tenant.api.acme.test"}, "https://blue.api.acme.test/", true},
		{artifact.URLPattern{Hostname: ":tenant.api.acme.test"}, "https://a.b.api.acme.test/", false},
		{artifact.URLPattern{Hostname: ":tenant.api.acme.test"}, "https://api.acme.test/", false},
		{artifact.URLPattern{Hostname: "127.0.0.1"}, "http://127.0.0.1:8080/", true},
		{artifact.URLPattern{Hostname: "[::1]"}, "http://[::1]:8080/", true},
		{artifact.URLPattern{Hostname: "::1"}, "http://[0:0::1]/", true},
		{artifact.URLPattern{Hostname: "::1"}, "http://[::2]/", false},
		{artifact.URLPattern{Port: "443"}, "https://a.test/", true},
		{artifact.URLPattern{Port: "443"}, "https://a.test:443/", true},
		{artifact.URLPattern{Port: "443"}, "http://a.test/", false},
		{artifact.URLPattern{Port: "80"}, "http://a.test/", true},
		{artifact.URLPattern{Port: "8*"}, "http://a.test:8443/", true},
		{artifact.URLPattern{Pathname: "/v2/*"}, "https://a.test/v2/users/1", true},
		{artifact.URLPattern{Pathname: "/v2/*"}, "https://a.test/v2", false},
		{artifact.URLPattern{Pathname: "/v2/*"}, "https://a.test/v3/x", false},
		{artifact.URLPattern{Pathname: "/v2/*"}, "https://a.test/v2/../admin", false},
		{artifact.URLPattern{Pathname: "/v2/*"}, "https://a.test/v2/%2e%2e/admin", false},
		{artifact.URLPattern{Pathname: "/V2/*"}, "https://a.test/v2/x", false},
		{artifact.URLPattern{Pathname: "/"}, "https://a.test", true},
		{artifact.URLPattern{Pathname: "/users/:id"}, "https://a.test/users/42", true},
		{artifact.URLPattern{Pathname: "/users/:id"}, "https://a.test/users/42/delete", false},
		{artifact.URLPattern{Pathname: "/users/:id/*"}, "https://a.test/users/42/x/y", true},
		{artifact.URLPattern{Pathname: "*a*a*a*a*a*b"}, "https://a.test/" + strings.Repeat("a", 200), false},
		{artifact.URLPattern{Protocol: "https", Hostname: "*.acme.test", Pathname: "/v2/*"}, "https://x.acme.test/v2/q?x=1", true},
		{artifact.URLPattern{Protocol: "https", Hostname: "*.acme.test", Pathname: "/v2/*"}, "http://x.acme.test/v2/q", false},
		{artifact.URLPattern{Hostname: "bücher.test"}, "https://xn--bcher-kva.test/", true},
		{artifact.URLPattern{Hostname: "xn--bcher-kva.test"}, "https://BÜCHER.test/", true},
	} {
		t.Run(fmt.Sprintf("%+v %s", tc.pattern, tc.url), func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if err := normalizeURL(u); err != nil {
				t.Fatal(err)
			}
			if got := matchURL(tc.pattern, u); got != tc.want {
				t.Errorf("got:  %v\nwant: %v", got, tc.want)
			}
		})
	}
}

// TestNetworkTimeouts checks the read and request timeouts against a
// server that stops sending: without them the request would wait for the
// test to end.
func TestNetworkTimeouts(t *testing.T) {
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(stall)
	ms := func(v int64) *artifact.Int { return &artifact.Int{Value: v} }
	loopback := &artifact.NetworkPolicy{Addresses: artifact.NetworkAddresses{AllowLoopback: artifact.Bool{Value: true}}}
	for _, tc := range []struct {
		name   string
		limits *artifact.NetworkLimits
		path   string
		want   string
	}{
		{"read timeout before the headers", &artifact.NetworkLimits{ReadTimeoutMS: ms(50)}, "/headers",
			"the server sent nothing for network.limits.read_timeout_ms (50 ms)"},
		{"read timeout in the body", &artifact.NetworkLimits{ReadTimeoutMS: ms(50)}, "/body",
			"the server sent nothing for network.limits.read_timeout_ms (50 ms)"},
		{"request timeout", &artifact.NetworkLimits{RequestTimeoutMS: ms(50)}, "/body",
			"the request did not finish within network.limits.request_timeout_ms (50 ms)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nw, err := newNetwork(NewEnv(nil), &artifact.Network{Limits: tc.limits, Policy: loopback})
			if err != nil {
				t.Fatal(err)
			}
			defer nw.close()
			_, err = nw.fetch(context.Background(), fetchRequest{URL: srv.URL + tc.path})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got:  %v\nwant: an error containing %q", err, tc.want)
			}
		})
	}
}
