// Package sameorigin keeps a block's credentials on the origin they were
// given for: the CheckRedirect of every HTTP client that sends a bearer
// token or a header such as X-Api-Key (mcp over HTTP, a2a), at plan time
// and in serve.
package sameorigin

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ErrCrossOrigin is the error of a refused redirect (errors.Is).
var ErrCrossOrigin = errors.New("refused a redirect to another origin: the block's credentials are only sent to the scheme, host and port of its url")

// ErrMethodChanged is the error of a redirect that would send a POST on
// as a GET (errors.Is): HTTP 301, 302 and 303 do that, and the request
// (an MCP or A2A message) would be lost, the answer a confusing 405.
var ErrMethodChanged = errors.New("refused a redirect that would send the POST on as a GET (HTTP 301, 302 or 303): the endpoint is where the redirect points")

// CheckRedirect refuses a redirect to another scheme, host or port, so that
// no credential follows it (Go's client drops Authorization on such a
// redirect, but not other headers, and a round tripper that adds the token
// adds it again); it follows at most 10 redirects. Origins are compared as
// browsers compare them: the scheme and an ASCII host name without regard
// to case, and a missing port as the scheme's default, so that http://h
// and http://H:80 are one origin. A host name with other characters must
// be spelled the same (Unicode case folding maps some of them to ASCII
// letters of another host). On a redirect within the origin the first
// request's Authorization header is sent again where Go's client dropped
// it (it compares host names as spelled). A redirect that would send a
// POST on as a GET (301, 302, 303) is refused too (ErrMethodChanged): the
// message would be lost. The error names no host: hosts may come from
// runtime values.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > 10 {
		return errors.New("stopped after 10 redirects")
	}
	if originOf(req.URL) != originOf(via[0].URL) {
		return ErrCrossOrigin
	}
	if prev := via[len(via)-1]; prev.Method == http.MethodPost && req.Method == http.MethodGet {
		e := &MethodChangedError{}
		if req.Response != nil {
			e.Status = req.Response.StatusCode
		}
		return e
	}
	// Go's client gives every redirect request a header map of its own.
	if auth, ok := via[0].Header["Authorization"]; ok && req.Header.Get("Authorization") == "" {
		req.Header["Authorization"] = slices.Clone(auth)
	}
	return nil
}

// MethodChangedError is ErrMethodChanged with the redirect's status.
type MethodChangedError struct {
	Status int // 0 when unknown
}

func (e *MethodChangedError) Error() string {
	if e.Status == 0 {
		return ErrMethodChanged.Error()
	}
	return fmt.Sprintf("%s; the server answered HTTP %d", ErrMethodChanged, e.Status)
}

// Is makes errors.Is(err, ErrMethodChanged) hold.
func (e *MethodChangedError) Is(target error) bool { return target == ErrMethodChanged }

// origin is a URL's scheme, host name and port, normalised: ASCII letters
// in lower case, and the scheme's default port when the URL names none.
type origin struct {
	scheme, host, port string
}

// originOf returns u's origin. A scheme other than http and https has no
// default port, so that its origins differ by what the URL spells. An IPv6
// zone (fe80::1%eth0) keeps its case: interface names are case-sensitive.
func originOf(u *url.URL) origin {
	host := u.Hostname()
	zone := ""
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host, zone = host[:i], host[i:]
	}
	o := origin{
		scheme: asciiLower(u.Scheme),
		host:   asciiLower(host) + zone,
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

// asciiLower lower-cases the ASCII letters of s and nothing else.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}
