package secretparts

import (
	"encoding/base64"
	"slices"
	"testing"
)

func TestCredentials(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		value  string
		secret bool
		want   []string
	}{
		// A password (also as written) and the Basic form, never the user
		// name beside it; not a password that repeats the user name.
		{"https://postgres:hunter22@localhost:5432/app", false, []string{"hunter22", b64("postgres:hunter22")}},
		{"postgresql://app:Xk9%40pL2%23qR7@db:5432/app", false, []string{"Xk9@pL2#qR7", "Xk9%40pL2%23qR7", b64("app:Xk9@pL2#qR7")}},
		{"postgresql://postgres:postgres@localhost/app", false, nil},
		{"postgresql://postgres@localhost/app", false, nil},
		// A token used as the user name, with or without an empty password,
		// in a secret value.
		{"https://ghpTOKEN12345@host/", true, []string{"ghpTOKEN12345", b64("ghpTOKEN12345:")}},
		{"https://sk_live_51HabcdEFGH1234:@api.example.com/mcp", true, []string{"sk_live_51HabcdEFGH1234", b64("sk_live_51HabcdEFGH1234:")}},
		{"https://ghpTOKEN12345@host/", false, nil},
		// Credential-named query values of a secret URL, raw and decoded;
		// settings (format, region) are not credentials.
		{"https://h/?api_key=abc%2Fdef12345&format=markdown&region=us-east-1", true, []string{"abc%2Fdef12345", "abc/def12345"}},
		{"https://h/?api_key=abc%2Fdef12345", false, nil},
		{"Bearer tok-12345678", true, []string{"tok-12345678"}},
		{"Basic " + b64("svc:passw0rd"), true, []string{b64("svc:passw0rd"), "passw0rd"}},
		{"Bearer tok-12345678", false, nil},
		{"Bearer short", true, nil},
		{"token abc12345678", true, []string{"abc12345678"}},
		{"Authorization: Bearer abcdefgh12345678", true, []string{"abcdefgh12345678"}},
		// Basic with a token as the user and no password.
		{"Basic " + b64("sk_live_SENTINEL_u:"), true, []string{b64("sk_live_SENTINEL_u:"), "sk_live_SENTINEL_u"}},
		// Two words that are no scheme and token.
		{"Acme Corporation", true, nil},
		// A sentence is no scheme and token: its last word is no credential.
		{"You are a concise research assistant", true, nil},
	} {
		if got := Credentials(tc.value, tc.secret); !slices.Equal(got, tc.want) {
			t.Errorf("Credentials(%q, %v)\ngot:  %q\nwant: %q", tc.value, tc.secret, got, tc.want)
		}
	}
}

func TestURLParts(t *testing.T) {
	for _, tc := range []struct {
		value  string
		secret bool
		want   []string
	}{
		// Host (with and without the port), a user name from 6 bytes, a
		// password from 4, as written and decoded.
		{"http://svcaccount:p%40ss@mcp.corp.example:8443/mcp", false, []string{"mcp.corp.example:8443", "mcp.corp.example", "svcaccount", "p@ss", "p%40ss"}},
		{"http://root@10.0.0.7/mcp?api_key=SENTINEL_q", false, []string{"10.0.0.7", "10.0.0.7"}},
		// A secret URL's path (without a trailing slash, as written and
		// decoded) and every query value from 4 bytes.
		{"https://hooks.example/services/T0K%2FEN-77/?api_key=SENTINEL_q&fmt=json&v=1&stream=true", true,
			[]string{"hooks.example", "hooks.example", "/services/T0K%2FEN-77", "/services/T0K/EN-77", "SENTINEL_q"}},
		// A segment as long as a token, on its own; a host as written and
		// lower-cased.
		{"https://Hooks.Example/services/T0/SENTINEL_seg1", true,
			[]string{"Hooks.Example", "Hooks.Example", "hooks.example", "/services/T0/SENTINEL_seg1", "SENTINEL_seg1"}},
		{"https://hooks.example/", true, []string{"hooks.example", "hooks.example"}},
		{"https://hooks.example/a", true, []string{"hooks.example", "hooks.example"}},
		// No absolute URL, no parts.
		{"Bearer tok-12345678", true, nil},
		{"/usr/local/bin/server", true, nil},
	} {
		if got := URLParts(tc.value, tc.secret); !slices.Equal(got, tc.want) {
			t.Errorf("URLParts(%q, %v)\ngot:  %q\nwant: %q", tc.value, tc.secret, got, tc.want)
		}
	}
}

func TestForms(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want []string
	}{
		{"plain-token_123", []string{"plain-token_123"}},
		// JSON escapes a quote and a backslash, not a slash; Go's encoder
		// also escapes <, > and &.
		// Percent-encoded with upper-case and lower-case hex digits;
		// escaped as HTML text as Go and as Python write it.
		{`pa"ss\w/rd`, []string{`pa"ss\w/rd`, `pa\"ss\\w/rd`, "pa%22ss%5Cw%2Frd", "pa%22ss%5Cw/rd", "pa%22ss%5cw%2frd", "pa%22ss%5cw/rd", `pa&#34;ss\w/rd`, `pa&quot;ss\w/rd`}},
		{"a&b c/d", []string{"a&b c/d", `a\u0026b c/d`, "a%26b+c%2Fd", "a&b%20c%2Fd", "a%26b%20c%2Fd", "a&b%20c/d", "a%26b%20c/d", "a%26b+c%2fd", "a&b%20c%2fd", "a%26b%20c%2fd", "a&amp;b c/d"}},
		// encodeURIComponent leaves ! ' ( ) * as they are, where Go
		// escapes them.
		{"P@ss!word1", []string{"P@ss!word1", "P%40ss%21word1", "P@ss%21word1", "P%40ss!word1"}},
	} {
		if got := Forms(tc.s); !slices.Equal(got, tc.want) {
			t.Errorf("Forms(%q)\ngot:  %q\nwant: %q", tc.s, got, tc.want)
		}
	}
}

func TestReplacePart(t *testing.T) {
	for _, tc := range []struct{ text, old, want string }{
		{"no upstream for 10.0.0.7:8443 (user svcaccount)", "10.0.0.7:8443", "no upstream for X (user svcaccount)"},
		{"lookup mcp.corp.example: no such host mcp.corp.example.", "mcp.corp.example", "lookup X: no such host X."},
		{`Served tools: "get_users", "user"`, "user", `Served tools: "get_users", "X"`},
		{"see /localhost-setup on localhost", "localhost", "see /localhost-setup on X"},
		{"api.mcp.corp.example and mcp.corp.examples", "mcp.corp.example", "api.mcp.corp.example and mcp.corp.examples"},
		{"userusers user", "user", "userusers X"},
		{"fmt=json, not jsonschema", "json", "fmt=X, not jsonschema"},
		// A path wherever it is, after a host too.
		{"POST http://h:80/hooks/T0K?x=1 and /hooks/T0K/", "/hooks/T0K", "POST http://h:80X?x=1 and X/"},
		// Not a longer path that begins with it.
		{"see /mcpdocs, not /mcp.", "/mcp", "see /mcpdocs, not X."},
		{"404: /hooks/T0K.json and /hooks/T0K_v2, /hooks/T0K-x", "/hooks/T0K", "404: X.json and X_v2, X-x"},
	} {
		if got := ReplacePart(tc.text, tc.old, "X"); got != tc.want {
			t.Errorf("ReplacePart(%q, %q)\ngot:  %q\nwant: %q", tc.text, tc.old, got, tc.want)
		}
	}
}

// TestLines: each line of a secret of several lines, from a token's
// length, as written and trimmed; none of a plain value or a single line.
func TestLines(t *testing.T) {
	key := "-----BEGIN KEY-----\r\n  MIIEvQIBADANBgkq  \nshort\n-----END KEY-----"
	want := []string{"-----BEGIN KEY-----", "  MIIEvQIBADANBgkq  ", "MIIEvQIBADANBgkq", "-----END KEY-----"}
	if got := Lines(key, true); !slices.Equal(got, want) {
		t.Errorf("Lines\ngot:  %q\nwant: %q", got, want)
	}
	if got := Lines(key, false); got != nil {
		t.Errorf("Lines of a plain value: %q, want none", got)
	}
	if got := Lines("one-line-secret-value", true); got != nil {
		t.Errorf("Lines of one line: %q, want none", got)
	}
}

// TestFormsEncodings: the forms a remote quotes a value in besides Go's.
func TestFormsEncodings(t *testing.T) {
	forms := Forms("café key=1")
	for _, want := range []string{`caf\u00e9 key=1`, "caf%C3%A9%20key%3D1", "cafe\u0301 key=1"} {
		if !slices.Contains(forms, want) {
			t.Errorf("Forms(\"café key=1\") = %q, want it to hold %q", forms, want)
		}
	}
}
