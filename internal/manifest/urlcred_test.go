package manifest

import (
	"reflect"
	"testing"
)

func TestURLCredentials(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want []URLCredential
	}{
		{"https://example.com/mcp", nil},
		{"https://example.com/mcp?page=2&name=x", nil},
		{"http://bob:zzpass11@127.0.0.1:18765/mcp?api_key=zzkey22", []URLCredential{
			{"password", "password", "zzpass11", "zzpass11"},
			{"query.api_key", `query parameter "api_key"`, "zzkey22", "zzkey22"},
		}},
		{"https://ghp_token123@example.com/", []URLCredential{{"user", "user information", "ghp_token123", "ghp_token123"}}},
		{"https://bob:@example.com/", []URLCredential{{"user", "user information", "bob", "bob"}}},
		// Written order; a repeated name is numbered; flags and empty
		// values are not credentials.
		{"https://example.com/?token=a1&token=&token=b2&X-Amz-Signature=s1&sig=s2&TOKEN_URL=u&include_signature=true&token=none", []URLCredential{
			{"query.token", `query parameter "token"`, "a1", "a1"},
			{"query.token#2", `query parameter "token"`, "b2", "b2"},
			{"query.X-Amz-Signature", `query parameter "X-Amz-Signature"`, "s1", "s1"},
			{"query.sig", `query parameter "sig"`, "s2", "s2"},
		}},
		// Percent-encoded: Value decoded, Raw as written.
		{"https://u%40x:p%2Bw@example.com/?sig=zzAbc%2Bdef%3D", []URLCredential{
			{"password", "password", "p+w", "p%2Bw"},
			{"query.sig", `query parameter "sig"`, "zzAbc+def=", "zzAbc%2Bdef%3D"},
		}},
		// Read as text: a query with ";" and a URL url.Parse refuses.
		{"https://example.com/?x=1;token=zzsemi1", []URLCredential{{"query.token", `query parameter "token"`, "zzsemi1", "zzsemi1"}}},
		{"http://bob:zzsecret1@127.0.0.1:1/a%zz?token=zztok2#frag", []URLCredential{
			{"password", "password", "zzsecret1", "zzsecret1"},
			{"query.token", `query parameter "token"`, "zztok2", "zztok2"},
		}},
		// Ordinary parameters.
		{"https://docs.example.com/mcp?code=python&auth=none&include_signature=true", nil},
		{"http://[::1]:8080/mcp?page=1", nil},
		{"not a url", nil},
	} {
		if got := URLCredentials(tc.url); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("URLCredentials(%q)\ngot:  %q\nwant: %q", tc.url, got, tc.want)
		}
	}
}

func TestDisplayURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/mcp?page=2":                          "https://example.com/mcp?page=2",
		"http://bob:zzpass11@127.0.0.1:18765/mcp?api_key=zzkey22": "http://bob:REDACTED@127.0.0.1:18765/mcp?api_key=REDACTED",
		"https://ghp_token123@example.com/a?z=1&token=t1&a=a%20b": "https://REDACTED@example.com/a?z=1&token=REDACTED&a=a%20b",
		"https://example.com/?X-Amz-Signature=abc&sig=":           "https://example.com/?X-Amz-Signature=REDACTED&sig=",
		"https://example.com/?bad=%zz;key=k1#key=frag":            "https://example.com/?bad=%zz;key=REDACTED#key=frag",
		"http://[fe80::1%25en0]:8080/?token=t2":                   "http://[fe80::1%25en0]:8080/?token=REDACTED",
		"not a url":                                               "not a url",
	} {
		if got := DisplayURL(in); got != want {
			t.Errorf("DisplayURL(%q)\ngot:  %q\nwant: %q", in, got, want)
		}
	}
}
