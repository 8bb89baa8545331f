// Package secretparts says which pieces of a runtime value text may quote
// on their own, so that plan-time resolution (package resolve) and serve
// and invoke (package serve) hide the same ones, and hides them
// (Scrubber), so that both hide them the same way. A runtime value is
// hidden whole; this package names the rest:
//
//   - Credentials are the credentials inside a value: a URL's password, a
//     secret's token. They are secrets in their own right: a remote
//     definition that quotes one is refused, and messages replace it.
//   - URLParts are the parts of a runtime URL that messages quote apart
//     from the whole: its host and user name and, for a secret URL, its
//     path and query values. They are no secrets by themselves (a server's
//     definitions may well name its own host or path), so they are hidden
//     from messages only. Treating them as credentials would refuse
//     ordinary servers; treating a credential as one of them would let a
//     definition pin a password into the lockfile.
//   - Forms are the re-encodings of any value or part that a remote may
//     quote instead of the text itself: escaped in a JSON string, or
//     percent-encoded in a URL (either case of hex digit), or escaped as
//     HTML text.
//
// Parts shorter than a few bytes are left out: a short query value or
// password ("json", "on") is an ordinary word of any message, and
// replacing it would rewrite every text.
package secretparts

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Lengths below which a part is not looked for on its own.
const (
	// minCredential bounds a token, a user name used as one, a query
	// value named like a credential and a Basic Authorization value.
	minCredential = 8
	// minPassword bounds a password, which is usually shorter than a
	// token.
	minPassword = 6
	// minURLPart bounds a host, a password, a path and a query value
	// hidden from messages.
	minURLPart = 4
	// minUserName bounds a user name hidden from messages: shorter ones
	// ("root", "app") are words of many messages.
	minUserName = 6
	// minSecretURLPart bounds a secret URL's path and query values:
	// shorter ones ("/api", "json", "True") are words of many messages,
	// and a token is longer.
	minSecretURLPart = 8
	// minSegment bounds one segment of a secret URL's path.
	minSegment = 12
)

// credentialParams are substrings of the names of query parameters that
// carry credentials (api_key, access_token, sig, X-Amz-Credential, …);
// other query values (a region, a format) are settings, not secrets.
var credentialParams = []string{"key", "token", "secret", "sig", "pass", "auth", "cred", "code", "session"}

// Credentials lists the credentials inside a runtime value that a remote
// may quote on their own, besides the whole value. For any URL: its
// password (as written and decoded) unless it is the user name again (a
// local default such as postgres:postgres), and the Basic Authorization
// header Go sends for the user info. For a secret() value also: the user
// name when the password is empty or absent (a token used as the user
// name), the values of query parameters named like credentials (as
// written and decoded), and the token of a header such as "Bearer X", a
// value of two words (of "Basic X", the password in X too). A plain
// runtime() value's user name, query settings and header words are not
// credentials by construction.
// The list is in a fixed order and may hold one part twice.
func Credentials(value string, secret bool) []string {
	var out []string
	add := func(s string, min int) {
		if len(s) >= min {
			out = append(out, s)
		}
	}
	if u := parseURL(value); u != nil {
		if u.User != nil {
			name := u.User.Username()
			pass, _ := u.User.Password()
			if pass != "" && pass != name {
				add(pass, minPassword)
				// As written in the URL, percent-escapes and all.
				if _, raw, ok := strings.Cut(u.User.String(), ":"); ok && raw != pass {
					add(raw, minPassword)
				}
				add(base64.StdEncoding.EncodeToString([]byte(name+":"+pass)), minCredential)
			}
			if pass == "" && secret {
				add(name, minCredential)
				add(base64.StdEncoding.EncodeToString([]byte(name+":")), minCredential)
			}
		}
		if secret {
			for _, kv := range queryPairs(u) {
				name, raw, _ := strings.Cut(kv, "=")
				if !credentialParam(name) {
					continue
				}
				add(raw, minCredential)
				if dec, err := url.QueryUnescape(raw); err == nil && dec != raw {
					add(dec, minCredential)
				}
			}
		}
	}
	// A scheme and its token, the last two words ("Bearer X", also after
	// a header's name: "Authorization: Bearer X"). The second word of a
	// secret name ("Acme Corporation") or the last of a sentence is no
	// credential: hiding it would rewrite every message that uses the
	// word, and refuse every server whose definitions do.
	if f := strings.Fields(value); secret && len(f) >= 2 && authScheme(f[len(f)-2]) {
		last := f[len(f)-1]
		add(last, minCredential)
		if strings.EqualFold(f[len(f)-2], "basic") {
			if dec, err := base64.StdEncoding.DecodeString(last); err == nil {
				if user, pass, ok := strings.Cut(string(dec), ":"); ok {
					add(pass, minPassword)
					if pass == "" {
						// A token as the user name, no password (API
						// keys sent the way curl -u KEY: sends them).
						add(user, minCredential)
					}
				}
			}
		}
	}
	return out
}

// URLParts lists the parts of a runtime URL that messages quote apart from
// the whole (a dial error its host, a client error the URL with its
// password masked, a server its request path), to be hidden from messages
// and only there. For any URL: its host with and without the port, its
// user name and its password (as written and decoded). For a secret()
// URL also its path (as written and decoded, without a trailing slash)
// and the value of each query parameter (as written and decoded):
// webhook-style URLs carry their token in the path, and a query setting
// of a secret URL is no one's business either. A value that is no
// absolute URL has none. The list is in a fixed order and may hold one
// part twice.
func URLParts(value string, secret bool) []string {
	u := parseURL(value)
	if u == nil {
		return nil
	}
	var out []string
	add := func(s string, min int) {
		if len(s) >= min {
			out = append(out, s)
		}
	}
	add(u.Host, minURLPart)
	add(u.Hostname(), minURLPart)
	if lower := strings.ToLower(u.Hostname()); lower != u.Hostname() {
		// As resolvers and URL parsers quote it.
		add(lower, minURLPart)
	}
	if u.User != nil {
		add(u.User.Username(), minUserName)
		if pass, ok := u.User.Password(); ok {
			add(pass, minURLPart)
			if _, raw, ok := strings.Cut(u.User.String(), ":"); ok && raw != pass {
				add(raw, minURLPart)
			}
		}
	}
	if !secret {
		return out
	}
	escaped := strings.TrimRight(u.EscapedPath(), "/")
	add(escaped, minSecretURLPart)
	if decoded := strings.TrimRight(u.Path, "/"); decoded != escaped {
		add(decoded, minSecretURLPart)
	}
	// Each segment too, quoted on its own ("unknown webhook T0K3N"), when
	// as long as a token is and no word is ("services", "webhooks").
	for _, seg := range strings.Split(strings.Trim(u.Path, "/"), "/") {
		add(seg, minSegment)
	}
	for _, kv := range queryPairs(u) {
		_, raw, _ := strings.Cut(kv, "=")
		add(raw, minSecretURLPart)
		if dec, err := url.QueryUnescape(raw); err == nil && dec != raw {
			add(dec, minSecretURLPart)
		}
	}
	return out
}

// Lines lists the lines of a secret() value of several lines (a private
// key, a kubeconfig) from the length of a token, as written and without
// surrounding spaces: text that quotes such a value may be cut between
// its lines (the tail of a server's standard error), and then no longer
// holds it whole. Messages only: a line ("apiVersion: v1") may well be an
// ordinary line of a definition.
func Lines(value string, secret bool) []string {
	if !secret || !strings.Contains(value, "\n") {
		return nil
	}
	var out []string
	for _, line := range strings.Split(value, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, l := range []string{line, strings.TrimSpace(line)} {
			if len(l) >= minCredential && !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// Forms returns s followed by the other forms a remote may quote it in:
// escaped inside a JSON string (as most encoders write it, as Go's encoder
// writes it with <, > and & escaped too, and with every non-ASCII
// character escaped), percent-encoded as a query value, as a path segment
// and with a space as %20 (each also with lower-case hex digits), escaped
// as HTML text (&#34; as Go writes a quote, &quot; as Python does), and
// with its accents composed or decomposed otherwise. A form equal to one
// before it is left out, so that a plain word has one form only. Only a
// composed form is shorter than s.
func Forms(s string) []string {
	out := []string{s}
	add := func(f string) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) == nil {
		add(jsonInner(bytes.TrimSuffix(b.Bytes(), []byte("\n"))))
	}
	if quoted, err := json.Marshal(s); err == nil {
		add(jsonInner(quoted))
	}
	add(url.QueryEscape(s))
	add(url.PathEscape(s))
	// As other encoders write it, each leaving its own characters as
	// they are: JavaScript's encodeURIComponent and encodeURI, the
	// WHATWG form encoding (URLSearchParams, space as +), Python's quote
	// and quote_plus.
	for _, e := range percentEncoders {
		add(percentEncode(s, e.keep, e.plus))
	}
	// With lower-case hex digits (%2f), as other encoders (and hands)
	// write them: RFC 3986 makes the two the same.
	for _, f := range slices.Clone(out) {
		if l := lowerPercentHex(f); l != f {
			add(l)
		}
	}
	// Escaped as HTML text, as Go's html.EscapeString and as Python's
	// html.escape write it (an error page quoting a request).
	if h := html.EscapeString(s); h != s {
		add(h)
		add(strings.NewReplacer("&#34;", "&quot;", "&#39;", "&#x27;").Replace(h))
	}
	// In a JSON string with every non-ASCII character escaped (Python's
	// json.dumps).
	add(asciiJSON(s))
	// With its accents composed or decomposed otherwise (valid text only:
	// normalising other bytes makes replacement characters of them).
	if utf8.ValidString(s) {
		for _, n := range []string{norm.NFC.String(s), norm.NFD.String(s)} {
			if n != s {
				add(n)
			}
		}
	}
	return out
}

// percentEncoders are the percent-encodings Forms adds besides Go's: the
// characters each leaves unescaped besides ASCII letters and digits, and
// whether it writes a space as +.
var percentEncoders = []struct {
	keep string
	plus bool
}{
	{"-_.!~*'()", false},            // JavaScript encodeURIComponent
	{"-_.!~*'();,/?:@&=+$#", false}, // JavaScript encodeURI
	{"*-._", true},                  // WHATWG application/x-www-form-urlencoded
	{"_.-~/", false},                // Python urllib.parse.quote
	{"_.-~", true},                  // Python urllib.parse.quote_plus
	{"_.-~", false},                 // the same with a space as %20
}

// percentEncode writes s with every byte but ASCII letters, digits and
// keep as %XX (upper case), and with plus a space as +.
func percentEncode(s, keep string, plus bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c < 0x80 && strings.IndexByte(keep, c) >= 0:
			b.WriteByte(c)
		case c == ' ' && plus:
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// lowerPercentHex is s with the hex digits of each %XX in lower case.
func lowerPercentHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && isHex(b[i+1]) && isHex(b[i+2]) {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func lowerHex(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiJSON is s as a JSON string's text with every character outside
// printable ASCII written \uXXXX (a pair for one beyond the BMP).
func asciiJSON(s string) string {
	var b strings.Builder
	inner := jsonInnerOf(s)
	for _, r := range inner {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, "\\u%04x", u)
		}
	}
	return b.String()
}

// jsonInnerOf is s escaped as Go writes it in a JSON string, without the
// quotes and without escaping <, > and &.
func jsonInnerOf(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) != nil {
		return s
	}
	return jsonInner(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// jsonInner returns a JSON string's text without its quotes.
func jsonInner(quoted []byte) string {
	return string(quoted[1 : len(quoted)-1])
}

// parseURL returns value as a URL when it is an absolute one with a host,
// else nil.
func parseURL(value string) *url.URL {
	u, err := url.Parse(value)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil
	}
	return u
}

// authSchemes are the words an Authorization (or similar) header value
// starts with before its credential: the HTTP authentication schemes
// IANA registers, and the ones APIs use besides them. Compared without
// case.
var authSchemes = []string{"basic", "bearer", "concealed", "digest", "dpop", "gnap", "hoba", "mutual", "negotiate", "ntlm", "oauth", "privatetoken", "scram-sha-1", "scram-sha-256", "vapid",
	"token", "apikey", "api-key", "key", "sso-key", "aws4-hmac-sha256", "signature"}

// authScheme reports whether word is a scheme a credential follows.
func authScheme(word string) bool {
	return slices.ContainsFunc(authSchemes, func(s string) bool { return strings.EqualFold(s, word) })
}

// queryPairs splits a URL's query into its name=value pairs as written.
func queryPairs(u *url.URL) []string {
	return strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' })
}

// credentialParam reports whether a query parameter's name says it
// carries a credential.
func credentialParam(name string) bool {
	if dec, err := url.QueryUnescape(name); err == nil {
		name = dec
	}
	name = strings.ToLower(name)
	for _, c := range credentialParams {
		if strings.Contains(name, c) {
			return true
		}
	}
	return false
}

// ReplacePart replaces in text each occurrence of part, one of URLParts or
// a form of one, by new, where it is not part of a longer name: no letter,
// digit, '_', '-' or '.' right after it, but for a full stop that ends a
// sentence, and none right before it. A path (it starts with a slash) is
// a name only with the letters and digits after it, and none before (no
// name goes on before its slash: one quoted after its host is found
// there). So a host or user name hidden from a message does not also
// rewrite a tool name that contains it, nor a path /mcp the path
// /mcpdocs, while /hooks/T0K is found in /hooks/T0K.json.
func ReplacePart(text, part, new string) string {
	if part == "" {
		return text
	}
	path := strings.HasPrefix(part, "/")
	alnum := func(b byte) bool {
		return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
	}
	inName := func(b byte) bool { return b == '_' || b == '-' || b == '.' || alnum(b) }
	var b strings.Builder
	for {
		i := strings.Index(text, part)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(part)
		stop := end < len(text) && text[end] == '.' && (end+1 == len(text) || !inName(text[end+1]))
		// A path goes on only with a letter or digit (/mcp, /mcpdocs); a
		// '.', '_' or '-' after it ends it (/hooks/T0K.json).
		after := end < len(text) && (path && alnum(text[end]) || !path && inName(text[end]) && !stop)
		if (!path && i > 0 && inName(text[i-1])) || after {
			b.WriteString(text[:i+1])
			text = text[i+1:]
			continue
		}
		b.WriteString(text[:i])
		b.WriteString(new)
		text = text[end:]
	}
}
