// Package sameorigin keeps a block's credentials on the origin they were
// given for: the CheckRedirect of every HTTP client that sends a bearer
// token or a header such as X-Api-Key (mcp over HTTP, a2a), at plan time
// and in serve.
package sameorigin

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// ErrCrossOrigin is the error of a refused redirect (errors.Is).
var ErrCrossOrigin = errors.New("refused a redirect to another origin: the block's credentials are only sent to the scheme, host and port of its url")

// CheckRedirect refuses a redirect to another scheme, host or port, so that
// no credential follows it (Go's client drops Authorization on such a
// redirect, but not other headers, and a round tripper that adds the token
// adds it again); at most 10 redirects. Origins are compared as browsers
// compare them: the scheme and host name without regard to case, and a
// missing port as the scheme's default, so that http://h and http://h:80
// are one origin. The error names no host: hosts may come from runtime
// values.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if originOf(req.URL) != originOf(via[0].URL) {
		return ErrCrossOrigin
	}
	return nil
}

// origin is a URL's scheme, host name and port, normalised: lower case,
// and the scheme's default port when the URL names none.
type origin struct {
	scheme, host, port string
}

// originOf returns u's origin. A scheme other than http and https has no
// default port, so that its origins differ by what the URL spells.
func originOf(u *url.URL) origin {
	o := origin{
		scheme: strings.ToLower(u.Scheme),
		host:   strings.ToLower(u.Hostname()),
		port:   u.Port(),
	}
	if o.port == "" {
		switch o.scheme {
		case "http":
			o.port = "80"
		case "https":
			o.port = "443"
		}
	}
	return o
}
