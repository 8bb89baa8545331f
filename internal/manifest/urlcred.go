package manifest

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// urlCredentialParams are query parameters that carry a credential
// whatever CredentialConfigKey says of their name: signed URLs and
// bearer tokens in the query.
var urlCredentialParams = []string{"access_token", "key", "sig", "signature", "token"}

// nonSecretValues are query values that say something about a request,
// not who makes it (include_signature=true, token=none).
var nonSecretValues = []string{"true", "false", "yes", "no", "on", "off", "none", "null", "0", "1"}

// URLCredential is one credential a URL carries.
type URLCredential struct {
	// Key identifies it within the URL ("password", "user",
	// "query.api_key"); What names it in messages.
	Key, What string
	// Value is the credential itself, decoded; Raw is the text the URL
	// holds it as (percent-encoded), which error messages of HTTP
	// clients quote.
	Value, Raw string
}

// urlParts splits a URL's text, without decoding or validating it (a URL
// that url.Parse refuses can still hold a password): the user
// information before the host (hasUser when there is an "@"), and the
// query, with the offset of each in raw.
type urlParts struct {
	user, query     string
	userAt, queryAt int
	hasUser         bool
}

func splitURL(raw string) (p urlParts, ok bool) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return p, false
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		p.user, p.userAt, p.hasUser = rest[:at], i+3, true
	}
	if q := strings.Index(raw, "?"); q >= 0 && q > i {
		query := raw[q+1:]
		if h := strings.Index(query, "#"); h >= 0 {
			query = query[:h]
		}
		p.query, p.queryAt = query, q+1
	}
	return p, true
}

// queryPair is one name=value pair of a query, as written, with the
// offset of its value in the query.
type queryPair struct {
	name, value string
	valueAt     int
}

// queryPairs splits a query at "&" and ";" (url.ParseQuery drops the
// pairs of a query with ";", and a server may read them).
func queryPairs(query string) []queryPair {
	var out []queryPair
	start := 0
	for i := 0; i <= len(query); i++ {
		if i < len(query) && query[i] != '&' && query[i] != ';' {
			continue
		}
		pair := query[start:i]
		if k, v, found := strings.Cut(pair, "="); found {
			out = append(out, queryPair{name: k, value: v, valueAt: start + len(k) + 1})
		}
		start = i + 1
	}
	return out
}

// unescape decodes a query or user-information part, or returns it as it
// is when it is not valid percent-encoding.
func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// credentialParam reports whether a query parameter's name marks its
// value as a credential.
func credentialParam(name string) bool {
	lower := strings.ToLower(name)
	if slices.Contains(urlCredentialParams, lower) || CredentialConfigKey(name) {
		return true
	}
	words := configKeyWords(name)
	return len(words) > 1 && words[len(words)-1] == "SIGNATURE"
}

// secretQueryValue reports whether a credential parameter's value is one:
// not empty, and not a flag or "none".
func secretQueryValue(v string) bool {
	return v != "" && !slices.Contains(nonSecretValues, strings.ToLower(v))
}

// URLCredentials returns the credentials written into a URL: the
// password of its user information, or the user name when there is no
// password (https://TOKEN@host), and the values of query parameters
// named like a credential (CredentialConfigKey: api_key, client_secret;
// a name whose last word is "signature": X-Amz-Signature; and token,
// key, sig, signature, access_token), unless the value is a flag (true,
// false, none, ...). The URL is read as text: one url.Parse refuses can
// still carry a password.
func URLCredentials(raw string) []URLCredential {
	p, ok := splitURL(raw)
	if !ok {
		return nil
	}
	var out []URLCredential
	if p.hasUser {
		if user, pass, found := strings.Cut(p.user, ":"); found && pass != "" {
			out = append(out, URLCredential{Key: "password", What: "password", Value: unescape(pass), Raw: pass})
		} else if user != "" {
			out = append(out, URLCredential{Key: "user", What: "user information", Value: unescape(user), Raw: user})
		}
	}
	seen := map[string]int{}
	for _, q := range queryPairs(p.query) {
		name, value := unescape(q.name), unescape(q.value)
		if !credentialParam(name) || !secretQueryValue(value) {
			continue
		}
		key := "query." + name
		if seen[name]++; seen[name] > 1 {
			key += "#" + strconv.Itoa(seen[name])
		}
		out = append(out, URLCredential{Key: key, What: "query parameter " + strconv.Quote(name), Value: value, Raw: q.value})
	}
	return out
}

// DisplayURL returns raw for messages with every credential
// URLCredentials finds replaced by "REDACTED", in place (the rest of the
// text is as written); raw itself when it carries none.
func DisplayURL(raw string) string {
	if len(URLCredentials(raw)) == 0 {
		return raw
	}
	p, _ := splitURL(raw)
	type span struct{ at, end int }
	var spans []span
	if p.hasUser {
		if user, pass, found := strings.Cut(p.user, ":"); found && pass != "" {
			spans = append(spans, span{p.userAt + len(user) + 1, p.userAt + len(p.user)})
		} else if user != "" {
			spans = append(spans, span{p.userAt, p.userAt + len(p.user)})
		}
	}
	for _, q := range queryPairs(p.query) {
		if credentialParam(unescape(q.name)) && secretQueryValue(unescape(q.value)) {
			at := p.queryAt + q.valueAt
			spans = append(spans, span{at, at + len(q.value)})
		}
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(raw[last:s.at])
		b.WriteString("REDACTED")
		last = s.end
	}
	b.WriteString(raw[last:])
	return b.String()
}
