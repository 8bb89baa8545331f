package resolve

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// Lengths below which a part of a secret is not looked for on its own: a
// short query value or password ("json", "on") is an ordinary word of any
// description.
const (
	minQuotedPart     = 8
	minQuotedPassword = 6
)

// quotableParts lists the forms in which a remote server may quote a
// runtime value it was sent, besides the value itself: for a URL, its
// credentials (also as the Basic Authorization header Go sends for them)
// and its query values; for a header such as "Bearer X", X.
func quotableParts(value string) []string {
	var out []string
	add := func(s string, min int) {
		if len(s) >= min {
			out = append(out, s)
		}
	}
	if u, err := url.Parse(value); err == nil && u.Scheme != "" && u.Host != "" {
		if u.User != nil {
			pass, ok := u.User.Password()
			if ok {
				add(pass, minQuotedPassword)
			}
			add(base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)), minQuotedPart)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v, minQuotedPart)
			}
		}
	}
	if f := strings.Fields(value); len(f) > 1 {
		add(f[len(f)-1], minQuotedPart)
	}
	return out
}

// quotes reports whether any string of a decoded JSON value (object keys
// included) contains one of needles. Decoded, so that escapes in the JSON
// text (\u0026, \") cannot hide a needle.
func quotes(v any, needles []string) bool {
	switch x := v.(type) {
	case string:
		for _, n := range needles {
			if n != "" && strings.Contains(x, n) {
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
