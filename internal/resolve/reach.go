package resolve

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"

	"github.com/agentform/agentform/internal/manifest"
)

// reachTrace returns a client trace that calls reached once a request to u
// has reached the server itself, so that a timeout before that is a server
// out of reach (packets dropped on the way) and one after it a server that
// did not answer: a TLS handshake with the server starts (directly or
// through a proxy's tunnel), or a request gets a connection to it (new or
// kept). A plain http request through a proxy only ever reaches the proxy:
// blind says so, and then a timeout cannot tell the two apart. The proxy is
// the one the resolvers' transport uses (proxyFor).
//
// Through an https proxy every connection starts with a handshake with the
// proxy, and a tunnelled one has a second, with the server: a handshake
// beyond one per connection made is the server's.
//
// attempted, when not nil, is called once a request asks for a connection:
// a request that failed before (a header value HTTP cannot carry) is the
// configuration's fault, not the network's.
func reachTrace(u *url.URL, reached, attempted func()) (trace *httptrace.ClientTrace, blind bool) {
	proxy, err := proxyFor(&http.Request{URL: u})
	proxied := err != nil || proxy != nil
	proxyTLS := proxied && (proxy == nil || proxy.Scheme == "https")
	tunnel := u.Scheme == "https"
	var mu sync.Mutex
	connected, handshakes := 0, 0
	return &httptrace.ClientTrace{
		GetConn: func(string) {
			if attempted != nil {
				attempted()
			}
		},
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				mu.Lock()
				connected++
				mu.Unlock()
			}
		},
		TLSHandshakeStart: func() {
			if !proxyTLS {
				reached()
				return
			}
			mu.Lock()
			handshakes++
			server := handshakes > connected
			mu.Unlock()
			if server {
				reached()
			}
		},
		GotConn: func(httptrace.GotConnInfo) {
			if !proxied || tunnel {
				reached()
			}
		},
	}, proxied && !tunnel
}

// proxyFor is the proxy function of the transport the resolvers use
// (HTTP_PROXY, HTTPS_PROXY, NO_PROXY); a variable for tests.
var proxyFor = http.ProxyFromEnvironment

// resolveTransport is the transport mcp and a2a resolution use: Go's
// default, with the proxy proxyFor picks.
var resolveTransport http.RoundTripper = func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = func(r *http.Request) (*url.URL, error) { return proxyFor(r) }
	return t
}()

// requestText is the error of a request that could not be made, without
// the URL net/http puts before it ("Get \"…\": "): a header net/http
// refuses is named, its value never quoted.
func requestText(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}

// notConnected reports the error of a connection that could not be made:
// refused, a host name that does not resolve, or a proxy that cannot be
// reached (proxyconnect).
func notConnected(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return (errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect")) || errors.As(err, &dns)
}

// proxyError returns the error of a request that did not get as far as
// the proxy (a proxy refusing the connection, or one whose name does not
// resolve): the server was not reached. Nil for any other error.
func proxyError(err error) *net.OpError {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		return op
	}
	return nil
}

// noReachReason says why a request that reached nothing before timeout
// ended.
func noReachReason(blind bool, timeout string) string {
	if blind {
		return "no answer through the proxy within " + timeout
	}
	return "no connection within " + timeout
}

// scrubURLCredentials removes from text the credentials the url endpoint
// carries (manifest.URLCredentials), as an HTTP client's error quotes
// them: the url as Go prints it (its password as "***" or not, the query
// as written) becomes manifest.DisplayURL's form when shown is set (a
// literal url, which messages name), and any credential left, decoded or
// percent-encoded as the url writes it, becomes REDACTED.
func scrubURLCredentials(text, endpoint string, shown bool) string {
	creds := manifest.URLCredentials(endpoint)
	if len(creds) == 0 {
		return text
	}
	if shown {
		display := manifest.DisplayURL(endpoint)
		forms := []string{endpoint}
		if u, err := url.Parse(endpoint); err == nil {
			forms = append(forms, u.String(), u.Redacted())
			if _, ok := u.User.Password(); ok {
				// net/http's errors write the password as "***"
				// (its stripPassword).
				forms = append(forms, strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1))
			}
		}
		for _, f := range forms {
			text = strings.ReplaceAll(text, f, display)
		}
	}
	for _, c := range creds {
		for _, v := range []string{c.Raw, c.Value, url.QueryEscape(c.Value), url.PathEscape(c.Value)} {
			// A value this short would replace parts of words.
			if len(v) >= 4 {
				text = strings.ReplaceAll(text, v, "REDACTED")
			}
		}
	}
	return text
}
