package audit

import (
	"testing"

	"github.com/agentform/agentform/internal/manifest"
)

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
