package serve

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchServer builds an artifact with one trivial javascript tool and
// opens it for serving.
func benchServer(b *testing.B) *Server {
	b.Helper()
	dir := b.TempDir()
	writeFiles(b, dir, map[string]string{
		"agent.acl": `
agent "bench" {
  capabilities = ["echo"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "echo" {
  kind         = "javascript"
  source       = "./tools/echo"
  capabilities = ["echo::say"]
}
`,
		"tools/echo/package.json": `{"name": "echo", "version": "1.0.0", "private": true, "type": "module"}`,
		"tools/echo/index.js": `export const echo = {
  name: "echo",
  description: "Echoes its text.",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute({ args }) { return { output: args.text }; },
};
`,
	})
	_, _, data := buildArtifact(b, dir, "bench", nil)
	path := filepath.Join(dir, "bench.agent.tgz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	s, err := Open(context.Background(), path, Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchCalls calls echo b.N times through the client session and reports
// calls per second.
func benchCalls(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}

// BenchmarkServeStdio measures calls per second of a trivial javascript
// tool through serve's stdio transport (in-process pipes), each call
// checked, run in a fresh goja runtime and recorded in runtime.db.
func BenchmarkServeStdio(b *testing.B) {
	s := benchServer(b)
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.ServeStdio(ctx, serverIn, serverOut, "bench")
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchCalls(b, cs)
}

// BenchmarkServeHTTP is BenchmarkServeStdio over streamable HTTP.
func BenchmarkServeHTTP(b *testing.B) {
	s := benchServer(b)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchCalls(b, cs)
}
