package audit

import (
	"bytes"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/render"
)

// FuzzSourceRedaction feeds arbitrary bytes, as a broken manifest could hold
// them, to the raw-bytes credential scan (native and JSON) and through the
// snippet code that masks what it finds, and scrubs messages with the
// values it found. Nothing may panic, and every range is inside its file.
func FuzzSourceRedaction(f *testing.F) {
	f.Add([]byte("tool \"a\" {\n  url = \"https://a.example.com\n  auth_token = secret(runtime(\"T\", \"hidden-default\"))\n}\n"), false)
	f.Add([]byte("{\"tool\": {\"a\": {\"auth_token\": \"hidden-value\" \"headers\": {\"Authorization\": \"Bearer x\"}}}}"), true)
	f.Add([]byte("x = { \"$runtime\" = { env = \"U\", default = \"hidden\", secret = true } }\n"), false)
	f.Add([]byte("a = secret(\n"), false)
	f.Add([]byte("\"\\u00"), true)
	f.Fuzz(func(t *testing.T, src []byte, json bool) {
		name := "agent.acl"
		if json {
			name = "agent.acl.json"
		}
		red := SourceRedaction(map[string][]byte{name: src})
		for _, r := range red.Ranges() {
			if r.Filename != name || r.Start.Byte < 0 || r.End.Byte < r.Start.Byte || r.End.Byte > len(src) {
				t.Fatalf("range %v outside the %d bytes of %s", r, len(src), name)
			}
		}
		var out bytes.Buffer
		rng := hcl.Range{Filename: name, Start: hcl.InitialPos, End: hcl.Pos{Line: 1, Column: 2, Byte: min(1, len(src))}}
		render.Diagnostics(&out, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "x", Subject: &rng}},
			map[string]*hcl.File{name: {Bytes: src}}, red, false)
		_ = red.Scrub(string(src))
	})
}
