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
// the write options the CLI would use (the manifest as the source).
func workspaceReport(t testing.TB, dir string) (*Report, WriteOptions) {
	t.Helper()
	r := ruleFixtureReport(t, dir)
	src, err := os.ReadFile(filepath.Join(dir, "agent.acl"))
	if err != nil {
		t.Fatal(err)
	}
	return r, WriteOptions{ShowWaived: true, Source: map[string][]byte{"agent.acl": src}}
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
			out := render(t, r, format, opts)
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
