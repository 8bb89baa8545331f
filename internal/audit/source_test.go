package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// writeWorkspace writes manifest as the agent.acl of a new workspace and
// returns its directory.
func writeWorkspace(t testing.TB, manifest string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// deniedCellsManifest has agents × tools cells, two thirds of them denied
// (AF101 notes), followed by pad bytes of comments.
func deniedCellsManifest(agents, tools, pad int) string {
	var b strings.Builder
	for i := range agents {
		fmt.Fprintf(&b, "agent \"a%03d\" {\n  capabilities = [\"g%d\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n\n", i, i%3)
	}
	for i := range tools {
		fmt.Fprintf(&b, "tool \"t%03d\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"g%d\"]\n}\n\n", i, i%3)
	}
	line := "# " + strings.Repeat("padding ", 9) + "\n"
	for b.Len() < pad {
		b.WriteString(line)
	}
	return b.String()
}

// workspaceReport audits the workspace in dir and returns the report and
// the write options the CLI would use (its manifest files as the source).
func workspaceReport(t testing.TB, dir string) (*Report, WriteOptions) {
	t.Helper()
	r := ruleFixtureReport(t, dir)
	names, err := filepath.Glob(filepath.Join(dir, "*.acl*"))
	if err != nil {
		t.Fatal(err)
	}
	src := map[string][]byte{}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		src[filepath.Base(name)] = b
	}
	return r, WriteOptions{ShowWaived: true, Source: src}
}

// TestSnippetMemory checks that source snippets cost memory in proportion
// to the lines they show, not to the file times the findings: a 1 MB
// manifest with hundreds of findings is rendered in a few megabytes.
func TestSnippetMemory(t *testing.T) {
	r, opts := workspaceReport(t, writeWorkspace(t, deniedCellsManifest(24, 24, 1<<20)))
	if n := len(ruleFindingsOf(r.Findings, RuleDeniedCell)); n < 300 {
		t.Fatalf("AF101 findings\ngot:  %d\nwant: at least 300", n)
	}
	for _, format := range []Format{FormatHTML, FormatTable} {
		t.Run(string(format), func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out := writeReport(t, r, format, opts)
			runtime.ReadMemStats(&after)
			if !strings.Contains(string(out), "capabilities = [") {
				t.Fatalf("the report shows no snippet\ngot:\n%.2000s", out)
			}
			const limit = 32 << 20
			if got := after.TotalAlloc - before.TotalAlloc; got > limit {
				t.Errorf("bytes allocated to render %d findings\ngot:  %d\nwant: at most %d", len(r.Findings), got, limit)
			}
		})
	}
}

// TestSnippetsRedactCredentials audits workspaces that hold credentials in
// every way the manifest allows (literal, built from a local, a heredoc,
// a runtime() default, a default inside secret(); in native and JSON
// syntax) and renders them in every format with waived findings and
// source snippets: none may repeat a credential, and snippets show
// "(redacted)" in their place, keeping the environment variable names.
func TestSnippetsRedactCredentials(t *testing.T) {
	const secret = "s3cr3t"
	for _, tc := range []struct {
		fixture string
		// want maps a format to text its output must hold.
		want map[Format][]string
		// lines is text that snippets of the whole manifest must hold.
		lines []string
	}{
		{
			fixture: "native",
			want: map[Format][]string{
				FormatTable: {
					"11 |       api_key = (redacted)",
					`31 |   auth_token   = runtime("GITHUB_TOKEN", (redacted))`,
					`33 |   headers = { Authorization = secret(runtime("HDR", (redacted))), X-Api-Key = (redacted) }`,
					"41 |     DEPLOY_TOKEN = (redacted)\n      42 | (redacted)\n      43 | (redacted)\n",
				},
				FormatHTML: {
					`api_key = (redacted)`,
					`auth_token   = runtime(&#34;GITHUB_TOKEN&#34;, (redacted))`,
					`Authorization = secret(runtime(&#34;HDR&#34;, (redacted))), X-Api-Key = (redacted) }`,
				},
			},
			// The local the X-Api-Key header is built from, and the
			// default inside secret() that no finding points at.
			lines: []string{`token_prefix = (redacted)`, `REGION = secret(runtime("REGION", (redacted))), LOG_LEVEL = "debug"`},
		},
		{
			fixture: "json",
			want: map[Format][]string{
				FormatTable: {`12 |       "auth_token": (redacted), "capabilities": ["remote::github"],`},
			},
			// A credential header hides its value only; a string that
			// calls secret() is hidden whole.
			lines: []string{`"headers": {"Authorization": (redacted), "X-Trace": "${runtime(`, `"config": {"REGION": (redacted), "LOG_LEVEL": "debug"}`},
		},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			r, opts := workspaceReport(t, filepath.Join("testdata", "TestSnippetsRedactCredentials", tc.fixture))
			for _, format := range Formats() {
				out := string(writeReport(t, r, format, opts))
				if i := strings.Index(out, secret); i >= 0 {
					t.Errorf("the %s report repeats a credential\ngot:  …%s…\nwant: no %q", format, out[max(0, i-80):min(len(out), i+40)], secret)
				}
				for _, s := range tc.want[format] {
					if !strings.Contains(out, s) {
						t.Errorf("the %s report lacks %q\ngot:\n%s", format, s, out)
					}
				}
			}
			// Every line of the manifest, quoted as a snippet would quote
			// it, hides every credential.
			src := newSourceSet(opts.Source, r.Redaction)
			var all strings.Builder
			for name := range opts.Source {
				_, lines := src.snippet(rng(name, 1, 1, 1000, 1), 1000)
				all.WriteString(strings.Join(lines, "\n"))
			}
			if strings.Contains(all.String(), secret) {
				t.Errorf("a snippet can show a credential\ngot:\n%s\nwant: no %q", all.String(), secret)
			}
			for _, s := range tc.lines {
				if !strings.Contains(all.String(), s) {
					t.Errorf("snippets lack %q\ngot:\n%s", s, all.String())
				}
			}
		})
	}
}
