package resolve

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
)

// Lengths below which a part of a value is not looked for on its own: a
// short query value or password ("json", "on") is an ordinary word of any
// description. A shorter token is not found either.
const (
	minQuotedPart     = 8
	minQuotedPassword = 6
)

// quotableParts lists the credentials inside a runtime value that a remote
// server may quote on their own, besides the whole value: a URL's user
// name and password, and the Basic Authorization header Go sends for them,
// whatever the value; and, for a secret() value, also each query value (as
// given and decoded) and the token of a header such as "Bearer X" (of
// "Basic X", the password in X too). Query values and header words of a
// plain runtime() value are not credentials by construction (a tenant, a
// format) and are left alone.
func quotableParts(value string, secret bool) []string {
	var out []string
	add := func(s string, min int) {
		if len(s) >= min {
			out = append(out, s)
		}
	}
	if u, err := url.Parse(value); err == nil && u.Scheme != "" && u.Host != "" {
		if u.User != nil {
			add(u.User.Username(), minQuotedPart)
			pass, ok := u.User.Password()
			if ok {
				add(pass, minQuotedPassword)
			}
			add(base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)), minQuotedPart)
		}
		if secret {
			for _, kv := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
				_, raw, _ := strings.Cut(kv, "=")
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

// quotes reports whether any string or number of a decoded JSON value
// (object keys included) contains one of needles, ignoring case. Decoded,
// so that escapes in the JSON text (\u0026, \") cannot hide a needle.
func quotes(v any, needles []string) bool {
	switch x := v.(type) {
	case string:
		lower := strings.ToLower(x)
		for _, n := range needles {
			if n != "" && strings.Contains(lower, strings.ToLower(n)) {
				return true
			}
		}
	case json.Number:
		return quotes(string(x), needles)
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
