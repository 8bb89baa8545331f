package resolve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/manifest"
)

func TestQuotes(t *testing.T) {
	var tree any
	if err := json.Unmarshal([]byte(`{"a":[{"b":"x tok-12345678 y"}],"pin":987654321,"size":9876543210,"k\u0026ey":1}`), &tree); err != nil {
		t.Fatal(err)
	}
	// As the resolvers decode: numbers as json.Number.
	d := json.NewDecoder(strings.NewReader(`{"pin":987654321,"size":9876543210}`))
	d.UseNumber()
	var nums any
	if err := d.Decode(&nums); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		v      any
		needle string
		want   bool
	}{
		{tree, "tok-12345678", true},
		{tree, "k&ey", true},
		{tree, "TOK-12345678", false},
		{nums, "987654321", true},
		{nums, "98765432", false},
		{"token p\u00e4ss-word here", "pa\u0308ss-word", true},
		{"token pa\u0308ss-word here", "p\u00e4ss-word", true},
		{"token pass-word here", "p\u00e4ss-word", false},
	} {
		if got := quotes(tc.v, []string{tc.needle}); got != tc.want {
			t.Errorf("quotes(%v, %q) = %v, want %v", tc.v, tc.needle, got, tc.want)
		}
	}
}

// TestMCPRedactParts: error text from a server loses the credentials
// inside a runtime value, not only the whole value.
func TestMCPRedactParts(t *testing.T) {
	s := redacting("https://h/mcp?api_key=QKEY-abcdef123", "MCP_URL")
	got := s.redact("JSON-RPC error: bad api key QKEY-abcdef123 for https://h/mcp?api_key=QKEY-abcdef123")
	if strings.Contains(got, "QKEY") || !strings.Contains(got, "(part of MCP_URL)") || !strings.Contains(got, "(value of MCP_URL)") {
		t.Errorf("redact got %q", got)
	}
}

// TestMCPRedactComposition: a value quoted with its accents composed
// differently is replaced; text without a value keeps its form.
func TestMCPRedactComposition(t *testing.T) {
	s := redacting("Caf\u00e9-SECRET-1", "KEY")
	if got := s.redact("tool e\u0301Cafe\u0301-SECRET-1"); strings.Contains(got, "SECRET") || !strings.Contains(got, "(value of KEY)") {
		t.Errorf("redact of the value decomposed: %q", got)
	}
	d := redacting("Cafe\u0301-SECRET-1", "KEY")
	if got := d.redact("tool Caf\u00e9-SECRET-1"); strings.Contains(got, "SECRET") {
		t.Errorf("redact of a decomposed value quoted composed: %q", got)
	}
	if in := "tool re\u0301sume\u0301"; s.redact(in) != in {
		t.Errorf("redact changed text that quotes no value: %q", s.redact(in))
	}
}

// TestRedactSecretLines: a secret of several lines, cut between them (the
// tail of a server's standard error keeps whole lines), has each line it
// still holds hidden.
func TestRedactSecretLines(t *testing.T) {
	kubeconfig := "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n    server: https://k8s.internal:6443\nusers:\n- user:\n    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ\n"
	s := redacting(kubeconfig, "KUBECONFIG_DATA")
	tail := "    server: https://k8s.internal:6443\nusers:\n- user:\n    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ\nerror: cannot load"
	got := s.redact(tail)
	for _, leak := range []string{"eyJhbGci", "k8s.internal"} {
		if strings.Contains(got, leak) {
			t.Errorf("redact of a tail of the secret's lines:\n%s\nwant no %q", got, leak)
		}
	}
	if !strings.Contains(got, "(part of KUBECONFIG_DATA)") || !strings.Contains(got, "error: cannot load") {
		t.Errorf("got:\n%s\nwant: the lines replaced, the server's own line kept", got)
	}
}

// TestMCPRedactPlainValues: plan hides a plain runtime value as serve
// does: as a whole word, and not at all when it is a flag's word or too
// short to be anything but a word of every message.
func TestMCPRedactPlainValues(t *testing.T) {
	s := &mcpSession{}
	s.addSecret("east", &manifest.RuntimeRef{Env: "REGION"})
	s.addSecret("true", &manifest.RuntimeRef{Env: "VERBOSE"})
	s.addSecret("on", &manifest.RuntimeRef{Env: "MODE"})
	in := "northeast: no region east; verbose is true; mode on"
	if got, want := s.redact(in), "northeast: no region (value of REGION); verbose is true; mode on"; got != want {
		t.Errorf("redact\ngot:  %s\nwant: %s", got, want)
	}
}

// redacting returns a session given one secret value, as addSecret records
// it.
func redacting(value, env string) *mcpSession {
	s := &mcpSession{}
	s.addSecret(value, &manifest.RuntimeRef{Env: env, Secret: true})
	return s
}
