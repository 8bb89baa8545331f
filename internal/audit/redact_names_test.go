package audit

import (
	"testing"

	"github.com/agentform/agentform/internal/manifest"
)

// TestIsCredentialConfigKey: a config key names a credential by its last
// word or a key pair, not by mentioning tokens.
func TestIsCredentialConfigKey(t *testing.T) {
	for key, want := range map[string]bool{
		"API_TOKEN": true, "GITHUB_TOKEN": true, "authToken": true, "token": true,
		"DB_PASSWORD": true, "CLIENT_SECRET": true, "api_key": true, "OPENAI_API_KEY": true,
		"apiKey": true, "AWS_SECRET_ACCESS_KEY": true, "passwd": true,
		"MAX_TOKENS": false, "TOKEN_URL": false, "max_output_tokens": false, "TOKENIZER": false,
		"TOKEN_REQUIRED": false, "REGION": false, "SECRET_NAME": false,
	} {
		if got := isCredentialConfigKey(key); got != want {
			t.Errorf("isCredentialConfigKey(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestRedactionLocalPart: a credential that reads one element of a local
// object scrubs that element only.
func TestRedactionLocalPart(t *testing.T) {
	src := `locals {
  creds = { owner = "team-owner-1", token = "SEKRET-16" }
}
tool "a" {
  kind         = "a2a"
  url          = "https://a.example.com"
  capabilities = ["remote::a"]
  auth_token   = locals.creds.token
}
`
	cfg, _ := manifest.LoadSources(t.TempDir(), map[string][]byte{"agent.acl": []byte(src)})
	got := Redaction(cfg).Scrub("owner team-owner-1, token SEKRET-16")
	if want := "owner team-owner-1, token (redacted)"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
