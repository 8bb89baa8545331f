package sameorigin

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestCheckRedirect(t *testing.T) {
	req := func(u string) *http.Request {
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Request{URL: p}
	}
	first := []*http.Request{req("https://mcp.internal.example:8443/mcp")}
	for _, tc := range []struct {
		to string
		ok bool
	}{
		{"https://mcp.internal.example:8443/v2/mcp", true},
		{"https://other.example:8443/mcp", false},
		{"http://mcp.internal.example:8443/mcp", false},
		{"https://mcp.internal.example/mcp", false},
		{"https://mcp.internal.example:9443/mcp", false},
		{"https://MCP.Internal.Example:8443/mcp", true},
		{"https://mcp.internal.example.other:8443/mcp", false},
	} {
		err := CheckRedirect(req(tc.to), first)
		if (err == nil) != tc.ok {
			t.Errorf("redirect to %s: got %v, want allowed %v", tc.to, err, tc.ok)
		}
		if err != nil && (strings.Contains(err.Error(), "example") || strings.Contains(err.Error(), "443")) {
			t.Errorf("redirect to %s: the error %q names a host", tc.to, err)
		}
	}
	// A missing port is the scheme's default, either way round.
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"http://h.example/mcp", "http://h.example:80/v2", true},
		{"http://h.example:80/mcp", "http://h.example/v2", true},
		{"https://h.example/mcp", "https://h.example:443/v2", true},
		{"https://h.example/mcp", "https://h.example:80/v2", false},
		{"http://h.example/mcp", "http://h.example:443/v2", false},
		{"http://h.example/mcp", "https://h.example/v2", false},
		{"http://[::1]/mcp", "http://[::1]:80/v2", true},
		{"http://[::1]:8080/mcp", "http://[::2]:8080/v2", false},
		// Unicode case folding maps İ (U+0130) to i, but the client
		// connects to xn--i-9bb.example: another host.
		{"http://i.example/mcp", "http://İ.example/v2", false},
		{"http://k.example/mcp", "http://\u212a.example/v2", false},
		// Interface names are case-sensitive.
		{"http://[fe80::1%25eth0]/mcp", "http://[fe80::1%25ETH0]/v2", false},
		{"http://[FE80::1%25eth0]/mcp", "http://[fe80::1%25eth0]/v2", true},
	} {
		err := CheckRedirect(req(tc.to), []*http.Request{req(tc.from)})
		if (err == nil) != tc.ok {
			t.Errorf("redirect from %s to %s: got %v, want allowed %v", tc.from, tc.to, err, tc.ok)
		}
	}
	// A scheme spelled in capitals (url.Parse lower-cases it; a URL built
	// by hand may not).
	upper := &http.Request{URL: &url.URL{Scheme: "HTTPS", Host: "mcp.internal.example:8443", Path: "/mcp"}}
	if err := CheckRedirect(upper, first); err != nil {
		t.Errorf("redirect to %s: got %v, want allowed", upper.URL, err)
	}
	// The original request and ten redirects: the tenth is followed, the
	// eleventh is not.
	var via []*http.Request
	for range 10 {
		via = append(via, first[0])
	}
	if err := CheckRedirect(req("https://mcp.internal.example:8443/mcp"), via); err != nil {
		t.Errorf("the tenth redirect: got %v, want followed", err)
	}
	via = append(via, first[0])
	if err := CheckRedirect(req("https://mcp.internal.example:8443/mcp"), via); err == nil {
		t.Errorf("an eleventh redirect was followed")
	}
}

// TestCheckRedirectKeepsMethod: a redirect that would send a POST on as
// a GET is refused, with its status; one that keeps the method (307,
// 308), or a GET's, is followed.
func TestCheckRedirectKeepsMethod(t *testing.T) {
	u, _ := url.Parse("https://mcp.example/mcp")
	post := &http.Request{Method: http.MethodPost, URL: u}
	next := func(method string, status int) *http.Request {
		v, _ := url.Parse("https://mcp.example/mcp/")
		return &http.Request{Method: method, URL: v, Response: &http.Response{StatusCode: status}}
	}
	err := CheckRedirect(next(http.MethodGet, http.StatusMovedPermanently), []*http.Request{post})
	var mc *MethodChangedError
	if !errors.Is(err, ErrMethodChanged) || !errors.As(err, &mc) || mc.Status != http.StatusMovedPermanently || !strings.Contains(err.Error(), "HTTP 301") {
		t.Errorf("a 301 of a POST: got %v, want ErrMethodChanged with the status", err)
	}
	if err := CheckRedirect(next(http.MethodPost, http.StatusPermanentRedirect), []*http.Request{post}); err != nil {
		t.Errorf("a 308 of a POST: got %v, want followed", err)
	}
	get := &http.Request{Method: http.MethodGet, URL: u}
	if err := CheckRedirect(next(http.MethodGet, http.StatusFound), []*http.Request{get}); err != nil {
		t.Errorf("a 302 of a GET: got %v, want followed", err)
	}
}

// TestCheckRedirectKeepsToken: Go's client drops the Authorization header
// on a redirect to a host name spelled differently, even in case only;
// within the origin CheckRedirect sends it again, and across origins the
// redirect is refused before anything is sent.
func TestCheckRedirectKeepsToken(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusTemporaryRedirect)
			return
		}
		got = append(got, r.Host+" "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Api-Key"))
	}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	client := &http.Client{CheckRedirect: CheckRedirect}
	get := func(to string) error {
		r, err := http.NewRequest(http.MethodGet, "http://localhost:"+port+"/start?to="+url.QueryEscape(to), nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer tok")
		r.Header.Set("X-Api-Key", "key")
		resp, err := client.Do(r)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get("http://LOCALHOST:" + port + "/x"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"LOCALHOST:" + port + " Bearer tok key"}; !slices.Equal(got, want) {
		t.Errorf("requests after a redirect within the origin\ngot:  %q\nwant: %q", got, want)
	}
	got = nil
	if err := get("http://127.0.0.1:" + port + "/x"); !errors.Is(err, ErrCrossOrigin) {
		t.Errorf("redirect to another origin: got %v, want ErrCrossOrigin", err)
	}
	if len(got) != 0 {
		t.Errorf("requests after a refused redirect: %q, want none", got)
	}
}
