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
			{"password", "password", "zzpass11"},
			{"query.api_key", `query parameter "api_key"`, "zzkey22"},
		}},
		{"https://ghp_token123@example.com/", []URLCredential{{"user", "user information", "ghp_token123"}}},
		{"https://bob:@example.com/", []URLCredential{{"user", "user information", "bob"}}},
		{"https://example.com/?token=a&token=&token=b&X-Amz-Signature=s1&sig=s2&TOKEN_URL=u", []URLCredential{
			{"query.X-Amz-Signature", `query parameter "X-Amz-Signature"`, "s1"},
			{"query.sig", `query parameter "sig"`, "s2"},
			{"query.token", `query parameter "token"`, "a"},
			{"query.token#2", `query parameter "token"`, "b"},
		}},
		{"https://example.com/?bad=%zz&key=k1", []URLCredential{{"query.key", `query parameter "key"`, "k1"}}},
		{"::not a url", nil},
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
		"https://ghp_token123@example.com/a?z=1&token=t&a=2":      "https://REDACTED@example.com/a?a=2&token=REDACTED&z=1",
		"https://example.com/?X-Amz-Signature=abc&sig=":           "https://example.com/?X-Amz-Signature=REDACTED&sig=",
		"::not a url": "::not a url",
	} {
		if got := DisplayURL(in); got != want {
			t.Errorf("DisplayURL(%q)\ngot:  %q\nwant: %q", in, got, want)
		}
	}
}
