package resolve

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Lengths below which a part of a value is not looked for on its own: a
// short query value or password ("json", "on") is an ordinary word of any
// description. A shorter token is not found either.
const (
	minQuotedPart     = 8
	minQuotedPassword = 6
)

// credentialParams are substrings of the names of query parameters that
// carry credentials (api_key, access_token, sig, X-Amz-Credential, …);
// other query values (a region, a format) are settings, not secrets.
var credentialParams = []string{"key", "token", "secret", "sig", "pass", "auth", "cred", "code", "session"}

// quotableParts lists the credentials inside a runtime value that a remote
// server may quote on their own, besides the whole value. For any URL:
// its password (as written and decoded) unless it is the user name again
// (a local default such as postgres:postgres), and the Basic Authorization
// header Go sends for the user info. For a secret() value also: the user
// name when the password is empty or absent (a token used as the user
// name), the values of query parameters named like credentials (as written
// and decoded), and the token of a header such as "Bearer X" (of
// "Basic X", the password in X too). A plain runtime() value's user name,
// query settings and header words are not credentials by construction.
func quotableParts(value string, secret bool) []string {
	var out []string
	add := func(s string, min int) {
		if len(s) >= min {
			out = append(out, s)
		}
	}
	if u, err := url.Parse(value); err == nil && u.Scheme != "" && u.Host != "" {
		if u.User != nil {
			name := u.User.Username()
			pass, _ := u.User.Password()
			if pass != "" && pass != name {
				add(pass, minQuotedPassword)
				// As written in the URL, percent-escapes and all.
				if _, raw, ok := strings.Cut(u.User.String(), ":"); ok && raw != pass {
					add(raw, minQuotedPassword)
				}
				add(base64.StdEncoding.EncodeToString([]byte(name+":"+pass)), minQuotedPart)
			}
			if pass == "" && secret {
				add(name, minQuotedPart)
				add(base64.StdEncoding.EncodeToString([]byte(name+":")), minQuotedPart)
			}
		}
		if secret {
			for _, kv := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
				name, raw, _ := strings.Cut(kv, "=")
				if !credentialParam(name) {
					continue
				}
				add(raw, minQuotedPart)
				if dec, err := url.QueryUnescape(raw); err == nil && dec != raw {
					add(dec, minQuotedPart)
				}
			}
		}
	}
	if f := strings.Fields(value); secret && len(f) > 1 {
		last := f[len(f)-1]
		add(last, minQuotedPart)
		if strings.EqualFold(f[0], "basic") {
			if dec, err := base64.StdEncoding.DecodeString(last); err == nil {
				if _, pass, ok := strings.Cut(string(dec), ":"); ok {
					add(pass, minQuotedPassword)
				}
			}
		}
	}
	return out
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

// quotes reports whether any string of a decoded JSON value (object keys
// included) contains one of needles, or any number is one. Decoded, so
// that escapes in the JSON text (\u0026, \") cannot hide a needle; and
// compared NFC-normalised too, so that composing its accents differently
// cannot (the lockfile stores names normalised).
func quotes(v any, needles []string) bool {
	switch x := v.(type) {
	case string:
		for _, n := range needles {
			if n != "" && (strings.Contains(x, n) || strings.Contains(norm.NFC.String(x), norm.NFC.String(n))) {
				return true
			}
		}
	case json.Number:
		for _, n := range needles {
			if string(x) == n {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if quotes(e, needles) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if quotes(k, needles) || quotes(e, needles) {
				return true
			}
		}
	}
	return false
}
