// Package sameorigin keeps a block's credentials on the origin they were
// given for: the CheckRedirect of every HTTP client that sends a bearer
// token or a header such as X-Api-Key (mcp over HTTP, a2a), at plan time
// and in serve.
package sameorigin

import (
	"errors"
	"net/http"
)

// ErrCrossOrigin is the error of a refused redirect (errors.Is).
var ErrCrossOrigin = errors.New("refused a redirect to another origin: the block's credentials are only sent to the scheme, host and port of its url")

// CheckRedirect refuses a redirect to another scheme, host or port, so that
// no credential follows it (Go's client drops Authorization on such a
// redirect, but not other headers, and a round tripper that adds the token
// adds it again); at most 10 redirects. The error names no host: hosts may
// come from runtime values.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return ErrCrossOrigin
	}
	return nil
}
