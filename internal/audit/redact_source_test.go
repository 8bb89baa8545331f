package audit

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/render"
)

// masked returns src with the ranges SourceRedaction finds replaced by
// render.RedactMark.
func masked(name, src string) string {
	r := SourceRedaction(map[string][]byte{name: []byte(src)})
	var b strings.Builder
	at := 0
	for _, sp := range r.Spans(name, func(p hcl.Pos) int { return p.Byte }) {
		b.WriteString(src[at:sp.Start] + render.RedactMark)
		at = sp.End
	}
	return b.String() + src[at:]
}

// TestSourceRedaction: the redaction made from the bytes of a file that
// does not parse hides what Redaction hides of one that does, and, where
// an unterminated string keeps the tokens from telling a value's extent,
// the rest of the line.
func TestSourceRedaction(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"agent.acl", "tool \"a\" {\n  auth_token = \"SEKRET\" \"x\"\n  url = \"u\"\n}\n",
			"tool \"a\" {\n  auth_token = (redacted)\n  url = \"u\"\n}\n"},
		{"agent.acl", "tool \"a\" {\n  url = \"https://a\n  auth_token = secret(runtime(\"T\",\"SEKRET\"))\n  x = 1\n}\n",
			"tool \"a\" {\n  url = \"https://a\n  auth_token = (redacted)\n  x = 1\n}\n"},
		{"agent.acl", "tool \"a\" {\n  config = { REGION = secret(runtime(\"R\", \"SEKRET\")), Q = secret(\"SEKRET\") }\n}}\n",
			"tool \"a\" {\n  config = { REGION = secret(runtime(\"R\", (redacted))), Q = secret((redacted)) }\n}}\n"},
		{"agent.acl", "tool \"a\" {\n  headers = { Authorization = \"SEKRET\", X-Trace = \"abc\" } }\n  auth_token = runtime(\"T\", \"SEKRET\")\n}\n",
			"tool \"a\" {\n  headers = { Authorization = (redacted), X-Trace = \"abc\" } }\n  auth_token = runtime(\"T\", (redacted))\n}\n"},
		{"agent.acl", "tool \"a\" {\n  config = [{ API_TOKEN = \"SEKRET\" }]\n  t = { \"$runtime\" = { env = \"U\", default = \"SEKRET\", secret = true } } x\n}\n",
			"tool \"a\" {\n  config = [{ API_TOKEN = (redacted) }]\n  t = { \"$runtime\" = { env = \"U\", default = (redacted), secret = true } } x\n}\n"},
		{"agent.acl", "locals {\n  auth_token = \"public\"\n}\nx = \"a\" \"b\"\n",
			"locals {\n  auth_token = \"public\"\n}\nx = \"a\" \"b\"\n"},
		{"agent.acl.json", `{"tool": {"a": {"auth_token": "SEKRET", "headers": {"Authorization": "SEKRET", "X": "abc"}, "url": "${secret(runtime(\"U\", \"SEKRET\"))}", "note": "never call secret(x)" "config": {"API_TOKEN": ["SEKRET"], "T": {"$runtime": {"env": "U", "default": "SEKRET", "secret": true}}}}}}`,
			`{"tool": {"a": {"auth_token": (redacted), "headers": {"Authorization": (redacted), "X": "abc"}, "url": (redacted), "note": "never call secret(x)" "config": {"API_TOKEN": (redacted), "T": {"$runtime": {"env": "U", "default": (redacted), "secret": true}}}}}}`},
		{"agent.acl.json", "{\"tool\": {\"a\": {\"url\": \"https://x, \"auth_token\": \"SEKRET\"}}\n}\n",
			"{\"tool\": {\"a\": {\"url\": \"https://x, \"auth_token\": (redacted)\n}\n"},
		// secret( in a comment or a string's text is prose; an unclosed
		// secret( in code masks its own line only.
		{"agent.acl", "# wrap them in secret( so that\n// or secret( here\n/* secret(\n */\ntool \"a\" {\n  description = \"call secret( on it\"\n  url = \"https://a\n  auth_token = \"${secret(runtime(\"T\", \"SEKRET\"))}\n  z = 16\n}\n",
			"# wrap them in secret( so that\n// or secret( here\n/* secret(\n */\ntool \"a\" {\n  description = \"call secret( on it\"\n  url = \"https://a\n  auth_token = (redacted)\n  z = 16\n}\n"},
		{"agent.acl", "tool \"a\" {\n  url = \"https://a\n  q = secret(runtime(\"T\", \"SEKRET\"\n  z = 16\n}\n",
			"tool \"a\" {\n  url = \"https://a\n  q = (redacted)\n  z = 16\n}\n"},
		{"agent.acl", "tool \"a\" {\n  description = <<EOT\n  wrap it in secret( first\n  EOT\n  url = \"https://a\n  z = 16\n}\n",
			"tool \"a\" {\n  description = <<EOT\n  wrap it in secret( first\n  EOT\n  url = \"https://a\n  z = 16\n}\n"},
	} {
		if got := masked(tc.name, tc.src); got != tc.want {
			t.Errorf("%s:\n%s\ngot:\n%s\nwant:\n%s", tc.name, tc.src, got, tc.want)
		}
	}
}

// TestRedactionUnparsed: Redaction of a workspace with a file that does
// not parse masks that file's credentials, the syntax tree notwithstanding.
func TestRedactionUnparsed(t *testing.T) {
	src := "tool \"a\" {\n  url = \"https://a\n  auth_token = secret(runtime(\"T\",\"SEKRET-default\"))\n}\n"
	cfg, diags := manifest.LoadSources(t.TempDir(), map[string][]byte{"agent.acl": []byte(src)})
	if !diags.HasErrors() {
		t.Fatal("the manifest loads")
	}
	r := Redaction(cfg)
	if len(r.Ranges()) == 0 || r.Scrub("x SEKRET-default y") == "x SEKRET-default y" {
		t.Errorf("Redaction(%q) hides nothing: %v", src, r.Ranges())
	}
}
