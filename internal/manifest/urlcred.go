package manifest

import (
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// urlCredentialParams are query parameters that carry a credential
// whatever CredentialConfigKey says of their name: signed URLs and
// OAuth-style parameters.
var urlCredentialParams = []string{"access_token", "auth", "code", "key", "sig", "signature", "token"}

// URLCredential is one credential a URL carries.
type URLCredential struct {
	// Key identifies it within the URL ("password", "user",
	// "query.api_key"); What names it in messages.
	Key, What string
	// Value is the credential itself.
	Value string
}

// URLCredentials returns the credentials written into a URL: the
// password of its user information, or the user name when there is no
// password (https://TOKEN@host), and the values of query parameters
// named like a credential (CredentialConfigKey: api_key, client_secret;
// any name ending in "signature", X-Amz-Signature; and token, key, sig,
// code, auth, access_token). A string
// that is no URL carries none.
func URLCredentials(raw string) []URLCredential {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []URLCredential
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, URLCredential{Key: "password", What: "password", Value: p})
		} else if n := u.User.Username(); n != "" {
			out = append(out, URLCredential{Key: "user", What: "user information", Value: n})
		}
	}
	// ParseQuery keeps the pairs it can read when others are malformed.
	q, _ := url.ParseQuery(u.RawQuery)
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !credentialParam(k) {
			continue
		}
		n := 0
		for _, v := range q[k] {
			if v == "" {
				continue
			}
			key := "query." + k
			if n++; n > 1 {
				key += "#" + strconv.Itoa(n)
			}
			out = append(out, URLCredential{Key: key, What: "query parameter " + strconv.Quote(k), Value: v})
		}
	}
	return out
}

// DisplayURL returns raw for messages with every credential
// URLCredentials finds replaced by "REDACTED" (user information and
// query values; the query is then re-encoded, in key order); raw itself
// when it carries none.
func DisplayURL(raw string) string {
	if len(URLCredentials(raw)) == 0 {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		} else if u.User.Username() != "" {
			u.User = url.User("REDACTED")
		}
	}
	q, _ := url.ParseQuery(u.RawQuery)
	changed := false
	for k, vs := range q {
		if !credentialParam(k) {
			continue
		}
		for i, v := range vs {
			if v != "" {
				vs[i], changed = "REDACTED", true
			}
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// credentialParam reports whether a query parameter's name marks its
// value as a credential.
func credentialParam(k string) bool {
	lk := strings.ToLower(k)
	return slices.Contains(urlCredentialParams, lk) || strings.HasSuffix(lk, "signature") || CredentialConfigKey(k)
}
