package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchWorkspace writes a workspace of n bash tools and m agents.
func benchWorkspace(b *testing.B, n, m int) string {
	dir := b.TempDir()
	var s strings.Builder
	for i := 0; i < m; i++ {
		fmt.Fprintf(&s, "agent \"agent%d\" {\n  capabilities = [\"ns%d\", \"ns%d::op%d\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n", i, i%50, (i+7)%50, i%40)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&s, "tool \"tool%d\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"ns%d::op%d\"]\n}\n", i, i%50, i%40)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkApply measures plan + apply of a 1,000-tool, 10-agent
// workspace from scratch, then a no-op plan + apply against its state.
func BenchmarkApply(b *testing.B) {
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			dir := benchWorkspace(b, 1000, 10)
			b.StartTimer()
			if _, _, err := planAndApply(b, context.Background(), dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("noop", func(b *testing.B) {
		dir := benchWorkspace(b, 1000, 10)
		if _, _, err := planAndApply(b, context.Background(), dir); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			p, _, err := planAndApply(b, context.Background(), dir)
			if err != nil {
				b.Fatal(err)
			}
			if p.HasChanges() {
				b.Fatal("no-op apply had changes")
			}
		}
	})
}
