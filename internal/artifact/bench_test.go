package artifact

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// benchFiles returns an agent with n javascript tools: n small bundles and
// an agent.json listing them. The agent holds "math", so every tool's
// cell is allow, as Verify checks.
func benchFiles(b *testing.B, n int) []File {
	b.Helper()
	a := &Agent{Name: "bench", Graph: Graph{Type: "react"}, Model: Model{Provider: String{Value: "anthropic"}, Name: String{Value: "m"}},
		Capabilities: Literals("math")}
	files := make([]File, 0, n+1)
	for i := range n {
		name := fmt.Sprintf("tool%04d", i)
		bundle := []byte(fmt.Sprintf("const %s = {\n  name: %q,\n  description: \"Tool number %d.\",\n  execute: ({ args }) => ({ output: args.x * %d }),\n};\nexport { %s };\n%s",
			name, name, i, i, name, strings.Repeat("// padding to a realistic small bundle\n", 20)))
		file := "tools/" + name + "/bundle.js"
		files = append(files, File{Path: file, Data: bundle})
		a.Tools = append(a.Tools, Tool{Name: name, Block: "tool." + name, Kind: KindJavaScript, Description: fmt.Sprintf("Tool number %d.", i),
			Parameters: JSON(`{"type":"object","properties":{"x":{"type":"number"}}}`), Requires: []string{"math::" + name},
			Enabled: Bool{Value: true}, File: file})
		a.Blocks = append(a.Blocks, Block{Name: name, Kind: KindJavaScript, Lock: &Lock{Kind: KindJavaScript, Bundle: digest(bundle)}})
		a.Matrix = append(a.Matrix, Cell{Tool: name, Decision: DecisionAllow})
	}
	data, err := MarshalAgent(a)
	if err != nil {
		b.Fatal(err)
	}
	return append(files, File{Path: AgentName, Data: data})
}

// BenchmarkBuild builds the artifact of an agent with 1,000 javascript
// tools (about 1 KiB bundles).
func BenchmarkBuild(b *testing.B) {
	files := benchFiles(b, 1000)
	var size int
	b.ReportAllocs()
	for b.Loop() {
		out, err := Build(files)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "artifact-bytes")
}

// BenchmarkReadVerify reads and verifies the same artifact.
func BenchmarkReadVerify(b *testing.B) {
	artifact, err := Build(benchFiles(b, 1000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		a, err := Read(bytes.NewReader(artifact))
		if err != nil {
			b.Fatal(err)
		}
		if problems := Verify(a, nil); len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}

// BenchmarkMarshalAgent marshals agent.json for 1,000 tools.
func BenchmarkMarshalAgent(b *testing.B) {
	files := benchFiles(b, 1000)
	a, err := ParseAgent(files[len(files)-1].Data)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MarshalAgent(a); err != nil {
			b.Fatal(err)
		}
	}
}
