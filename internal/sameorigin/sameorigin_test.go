package sameorigin

import (
	"net/http"
	"net/url"
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
		{"HTTPS://mcp.internal.example:8443/mcp", true},
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
	} {
		err := CheckRedirect(req(tc.to), []*http.Request{req(tc.from)})
		if (err == nil) != tc.ok {
			t.Errorf("redirect from %s to %s: got %v, want allowed %v", tc.from, tc.to, err, tc.ok)
		}
	}
	var via []*http.Request
	for range 10 {
		via = append(via, first[0])
	}
	if err := CheckRedirect(req("https://mcp.internal.example:8443/mcp"), via); err == nil {
		t.Errorf("an eleventh redirect was followed")
	}
}
