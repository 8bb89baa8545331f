package audit

import (
	"testing"

	"github.com/agentform/agentform/internal/manifest"
)

// TestIsCredentialConfigKey: a config key names a credential when its
// words contain a credential mark, anywhere, unless its last word says it
// names or locates one, or the mark counts tokens.
func TestIsCredentialConfigKey(t *testing.T) {
	for key, want := range map[string]bool{
		"API_TOKEN": true, "GITHUB_TOKEN": true, "authToken": true, "token": true,
		"DB_PASSWORD": true, "CLIENT_SECRET": true, "api_key": true, "OPENAI_API_KEY": true,
		"apiKey": true, "AWS_SECRET_ACCESS_KEY": true, "passwd": true,
		// Containment, camelCase included: the mark need not end the key.
		"secretKey": true, "secretAccessKey": true, "GITHUB_TOKEN_2": true, "PASSWORD_PROD": true,
		"TOKEN_VALUE": true, "APIKey": true, "APITOKEN": true, "DB_SECRETS": true,
		"AWS_ACCESS_KEY": true, "accessKey": true,
		"GITHUB_PAT": true, "GH_PAT": true, "ghPat": true, "SSH_PASSPHRASE": true, "SESSION_COOKIE": true,
		"PRIVATE_KEY": true, "privateKeyPem": true, "MAX_TOKENS_SECRET": true,
		// Not credentials: token counts, names and locations of credentials.
		"MAX_TOKENS": false, "max_output_tokens": false, "TOKEN_URL": false, "SECRET_NAME": false,
		"PRIVATE_KEY_PATH": false, "AWS_ACCESS_KEY_ID": false, "apiKeyId": false, "TOKEN_TTL": false,
		"SECRET_IDS": false, "TOKEN_TYPE": false, "PASSWORD_FILE": false, "TOKEN_EXPIRY": false,
		"TOKEN_LIMIT": false, "TOKEN_COUNT": false, "OAUTH_TOKEN_URI": false,
		"REGION": false, "PATH": false, "PATTERN": false, "SPATIAL": false,
		// A mark inside a longer word, and keys that say where or whether
		// a credential is, not what it is.
		"TOKENIZER": false, "TOKEN_REQUIRED": false, "TOKEN_ENV": false, "COOKIE_DOMAIN": false,
		"SECRETS_MANAGER_REGION": false, "TOKEN_ENDPOINT": false, "SECRET_ARN": false,
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

// TestRedactionTemplateLiterals: the literal parts of a credential
// template are not credentials; scrubbing them would blank agentform's
// own hints ("Authorization: Bearer <token>").
func TestRedactionTemplateLiterals(t *testing.T) {
	src := `tool "a" {
  kind         = "a2a"
  url          = "https://a.example.com"
  capabilities = ["remote::a"]
  auth_token   = "Bearer ${nope}"
}
`
	cfg, _ := manifest.LoadSources(t.TempDir(), map[string][]byte{"agent.acl": []byte(src)})
	in := `the token is sent as "Authorization: Bearer <token>"`
	if got := Redaction(cfg).Scrub(in); got != in {
		t.Errorf("got:\n%s\nwant:\n%s", got, in)
	}
}

// TestRedactionPolicyWords: the default of a secret capability_policy is
// a policy word that reports print of their own; scrubbing it blanked
// AF102's and AF108's sentences. Its source stays masked, and a
// credential that is not a policy is still scrubbed.
func TestRedactionPolicyWords(t *testing.T) {
	src := `agent "a" {
  capabilities      = ["x"]
  capability_policy = secret(runtime("P", "extensible"))
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "m"
  }
}
tool "r" {
  kind         = "a2a"
  url          = "https://a.example.com"
  capabilities = ["remote::a"]
  auth_token   = secret(runtime("T", "SEKRET-16"))
}
`
	cfg, diags := manifest.LoadSources(t.TempDir(), map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	r := Redaction(cfg)
	in := `a deployment can make it extensible; token SEKRET-16`
	if got, want := r.Scrub(in), `a deployment can make it extensible; token (redacted)`; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	masked := false
	for _, rng := range r.Ranges() {
		masked = masked || rng.Filename == "agent.acl" && rng.Start.Line == 3 && rng.Start.Column == 43
	}
	if !masked {
		t.Errorf("got: ranges %v\nwant: the default masked where it is written (line 3, column 43)", r.Ranges())
	}
}
