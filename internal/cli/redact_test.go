package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCredentialsNeverPrinted runs audit in every format, validate, plan
// and plan -json on workspaces whose credentials are written where the
// credential scan used to miss them, and searches every output for them:
// a literal in a JSON provider config, a minified JSON file quoted by
// warnings, secret() spelled with spaces or a line break, a JSON local
// that feeds a native credential, a credential field or header that does
// not decode, in either syntax, or reads a local that does not (its
// error quotes the line), the default of a serialised secret runtime
// value ({"$runtime": {...}}) of the wrong type, a provider config
// written as an object (config = {...}), and a local interpolated into a check message
// and a waiver reason; and workspaces that do not parse (an unterminated
// string that swallows a secret() call, two strings for a token, a
// minified JSON file missing a comma), through every command and fmt.
// Each also shows its hidden values in place, so
// what is not a credential stays readable.
func TestCredentialsNeverPrinted(t *testing.T) {
	const secret = "SEKRET"
	for _, tc := range []struct {
		fixture string
		want    []string
	}{
		{"json-provider", []string{`"providers": {"anthropic": {"config": {"api_key": (redacted)}}},`, `"network": {"headers": {"Authorization": (redacted)}},`}},
		{"json-minified", []string{`"auth_token": (redacted)`, `"headers": {"Authorization": (redacted), "X-Trace": "abc"}`}},
		{"json-secret-spacing", []string{`"config": {"REGION": (redacted), "ZONE": (redacted), "Q": (redacted)}`}},
		{"json-locals", []string{`(redacted), "jtok": (redacted)}, "tool"`, `auth_token   = (redacted)`}},
		{"undecoded-headers", []string{`headers      = { Authorization = (redacted), X-Retry = ["1"] }`}},
		{"undecoded-native", []string{`auth_token   = (redacted)`, `    Authorization = (redacted)`}},
		{"undecoded-locals", []string{`tok = (redacted)`}},
		{"undecoded-json", []string{`"config": [{"API_TOKEN": (redacted), "BAD": [1]}]`, `"auth_token": (redacted)},`}},
		{"runtime-marker", []string{`timeout = { "$runtime" = { env = "U", default = (redacted), secret = true } }`}},
		{"runtime-marker-json", []string{`{"$runtime": {"env": "U", "default": (redacted), "secret": true}}`}},
		{"provider-object", []string{`    config = { api_key = (redacted), bogus = "x" }`, `in the config of a provider`}},
		{"provider-labelled", []string{`  config = { api_key = (redacted), bogus = "x" }`}},
		{"provider-attributes", []string{`{ anthropic = { config = { api_key = (redacted), bogus = "x" } } }`, `in the config of a provider`}},
		{"message-locals", []string{`assistant cannot use token (redacted)`, `demo token (redacted) is public`}},
		{"config-key-names", []string{`    secretKey       = (redacted)`, `    secretAccessKey = (redacted)`, `    GITHUB_TOKEN_2  = (redacted)`, `    PASSWORD_PROD   = (redacted)`, `    TOKEN_VALUE     = (redacted)`, `    GH_PAT          = (redacted)`, `    SSH_PASSPHRASE  = (redacted)`, `    Cookie              = (redacted)`, `    Proxy-Authorization = (redacted)`, `    X-Auth-Token        = (redacted)`, `    Private-Token       = (redacted)`}},
		{"message-substrings", []string{`cannot use session sess_(redacted), password (redacted), pin (redacted)`}},
		// Files that do not parse: the redaction is made from their bytes.
		{"syntax-unterminated", []string{`    16:   auth_token   = (redacted)`, `    15:   url          = "https://a.example.com`}},
		{"syntax-adjacent", []string{`auth_token   = (redacted)`}},
		{"syntax-headers", []string{`headers      = { Authorization = (redacted), X-Trace = "abc" } }`}},
		{"syntax-comment", []string{`    16:   url          = "https://a.example.com" "x"`}},
		{"syntax-json-minified", []string{`{"$runtime": {"env": "U", "default": (redacted), "secret": true}}}}, "x": {"kind": "bash" "commands"`}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			dir := filepath.Join("testdata", "TestCredentialsNeverPrinted", tc.fixture)
			var all strings.Builder
			runs := [][]string{{"validate"}, {"validate", "-json"}, {"plan", "-refresh=false", "-no-color"}, {"plan", "-refresh=false", "-json"}, {"graph", "-refresh=false"}, {"fmt", "-check", "-no-color"}}
			for _, format := range auditFormats {
				runs = append(runs, []string{"audit", "-refresh=false", "-no-color", "-show-waived", "-format=" + format})
			}
			// fmt - reads the native file on stdin (its output, the
			// formatted file, is not searched: only its diagnostics).
			stdin := ""
			if src, err := os.ReadFile(filepath.Join(dir, "agent.acl")); err == nil {
				stdin = string(src)
				runs = append(runs, []string{"fmt", "-check", "-"})
			}
			for _, args := range runs {
				_, stdout, stderr := run(t, stdin, append([]string{"-chdir=" + dir}, args...)...)
				if i := strings.Index(stdout+stderr, secret); i >= 0 {
					out := stdout + stderr
					t.Errorf("%s prints a credential\ngot:  …%s…\nwant: no %q", strings.Join(args, " "), out[max(0, i-100):min(len(out), i+40)], secret)
				}
				fmt.Fprintf(&all, "%s\n%s\n", stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(all.String(), w) {
					t.Errorf("no output holds %q\ngot:\n%s", w, all.String())
				}
			}
		})
	}
}

// TestAuditMinifiedManifestSnippets: a minified .acl.json is one long
// line; each finding's snippet shows a window of it, not the whole line,
// so the report grows with the findings, not with findings × file size.
// A string that only mentions "secret(" in prose is not hidden.
func TestAuditMinifiedManifestSnippets(t *testing.T) {
	var tools []string
	for i := range 300 {
		tools = append(tools, fmt.Sprintf(`"t%03d": {"kind": "bash", "commands": ["ls"], "capabilities": ["x"], "config": {"API_TOKEN": "SEKRET-%03d", "NOTE": "never call secret(x) here %03d"}}`, i, i, i))
	}
	src := `{"agent": {"assistant": {"capabilities": ["x"], "graph": {"type": "react"}, "model": {"provider": "anthropic", "name": "claude-haiku-4-5"}}}, "tool": {` + strings.Join(tools, ", ") + `}}`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.acl.json"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"table", "html"} {
		_, stdout, stderr := run(t, "", "-chdir="+dir, "audit", "-refresh=false", "-no-color", "-format="+format)
		if n := len(stdout); n > 1<<20 {
			t.Errorf("the %s report is %d bytes for a %d-byte manifest", format, n, len(src))
		}
		if strings.Contains(stdout+stderr, "SEKRET") {
			t.Errorf("the %s report prints a credential", format)
		}
		text := strings.ReplaceAll(stdout, "&#34;", `"`)
		if !strings.Contains(text, `"NOTE": "never call secret(x) here 150"`) || !strings.Contains(text, `"API_TOKEN": (redacted)`) {
			t.Errorf("the %s report lacks the window around a finding\ngot:\n%.3000s", format, stdout)
		}
	}
}
