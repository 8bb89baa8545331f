package serve

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBannerUnscrubbed: the line that tells the operator where the agent
// is served is written as is; a runtime value that happens to be part of
// it ("serving", an address) once turned it into "(value of X)".
func TestBannerUnscrubbed(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": `
agent "assistant" {
  capabilities = runtime("CAPS", ["shell"])
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
tool "list" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell"]
}
`})
	_, _, data := buildArtifact(t, dir, "assistant", nil)
	path := filepath.Join(dir, "assistant.agent.tgz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logged []string
	env := map[string]string{"CAPS": "serving"}
	s, err := Open(context.Background(), path, Options{Dir: dir, Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Logf: func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			logged = append(logged, fmt.Sprintf(f, a...))
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var addr net.Addr
	if err := s.ServeHTTP(ctx, "127.0.0.1:0", func(a net.Addr) { addr = a; cancel() }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := fmt.Sprintf("agentform: serving agent %q at http://%s/mcp: 0 tools", "assistant", addr)
	if !strings.Contains(strings.Join(logged, "\n"), want) {
		t.Errorf("got:\n%s\nwant a line: %s", strings.Join(logged, "\n"), want)
	}
}

// TestToolCount: the banner and the upstream log line count tools in
// English.
func TestToolCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 tools", 1: "1 tool", 2: "2 tools"} {
		if got := toolCount(n); got != want {
			t.Errorf("toolCount(%d) = %q, want %q", n, got, want)
		}
	}
}
