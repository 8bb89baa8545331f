package state_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/state"
)

// benchCommit is an apply of 1,000 resources (100 agents with artifacts, 900
// tools with lock entries) and a matrix of 10 agents each allowed 1,000 tools.
func benchCommit() state.Commit {
	c := state.Commit{Matrix: map[string][]string{}}
	var tools []string
	for i := range 1000 {
		tools = append(tools, fmt.Sprintf("tool%04d", i))
	}
	for i := range 1000 {
		r := state.Resource{Fingerprint: "sha256:" + strings.Repeat("0f", 32)}
		if i < 100 {
			r.Type, r.Name = "agent", fmt.Sprintf("agent%03d", i)
			r.Attributes = map[string]string{"capabilities": "math, net, fs", "model": "m"}
			r.Artifact = &state.Artifact{Path: "dist/" + r.Name + ".agent.tgz", SHA256: strings.Repeat("ab", 32), Size: 1 << 20}
		} else {
			r.Type, r.Name, r.Kind = "tool", tools[i], "javascript"
			r.Attributes = map[string]string{"source": "h1:" + strings.Repeat("x", 44), "capabilities": "math"}
			r.Lock = json.RawMessage(`{"kind":"javascript","source":"h1:` + strings.Repeat("y", 44) + `","files":["index.js","package.json"]}`)
		}
		r.Address = r.Type + "." + r.Name
		c.Resources = append(c.Resources, r)
		c.Entry.Actions = append(c.Entry.Actions, state.Action{Address: r.Address, Action: state.ActionUpdate})
	}
	for i := range 10 {
		c.Matrix[fmt.Sprintf("agent%03d", i)] = tools
	}
	return c
}

func BenchmarkCommit(b *testing.B) {
	db, err := state.Open(b.TempDir(), state.Options{Operation: "apply", Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c := benchCommit()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.Commit(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead is what plan does against that state: open read-only and read
// meta, resources and matrix.
func BenchmarkRead(b *testing.B) {
	ws := b.TempDir()
	db, err := state.Open(ws, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Commit(benchCommit()); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := state.Open(ws, state.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Meta(); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Resources(); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Matrix(); err != nil {
			b.Fatal(err)
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitFresh is the first apply's commit: into a database just
// created, which grows as the transaction writes it.
func BenchmarkCommitFresh(b *testing.B) {
	c := benchCommit()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		db, err := state.Open(b.TempDir(), state.Options{Operation: "apply", Version: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := db.Commit(c); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
}
