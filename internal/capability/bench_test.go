package capability

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchNamespaces is a realistic namespace vocabulary of 50 names, including
// pairs where one is a plain string prefix of the other (math / mathematics).
var benchNamespaces = []string{
	"math", "mathematics", "net", "network", "fs", "fsx", "db", "dbadmin",
	"http", "https", "git", "github", "shell", "shellx", "k8s", "k8sadmin",
	"aws", "aws_s3", "gcp", "azure", "mail", "mailer", "calendar", "chat",
	"search", "browser", "code", "codegen", "image", "imaging", "audio", "video",
	"pdf", "docs", "sheets", "slides", "crm", "billing", "payments", "auth",
	"secrets", "vault", "queue", "cache", "metrics", "logs", "trace", "alerts",
	"ml", "vector",
}

// benchOps is a vocabulary of 40 operations.
var benchOps = []string{
	"read", "write", "list", "delete", "create", "update", "get", "put",
	"exec", "run", "query", "search", "add", "sub", "mul", "div",
	"send", "receive", "upload", "download", "sync", "watch", "scale", "deploy",
	"rollback", "approve", "review", "merge", "clone", "push", "pull", "fetch",
	"encrypt", "decrypt", "sign", "verify", "render", "parse", "index", "admin",
}

// benchVariants are third segments used by some tags.
var benchVariants = []string{"fast", "safe", "bulk", "dry_run", "v2"}

// randomTag draws a tag: mostly "ns::op", sometimes "ns::op::variant",
// occasionally a bare namespace.
func randomTag(r *rand.Rand) string {
	ns := benchNamespaces[r.IntN(len(benchNamespaces))]
	switch p := r.IntN(100); {
	case p < 10:
		return ns
	case p < 30:
		return ns + "::" + benchOps[r.IntN(len(benchOps))] + "::" + benchVariants[r.IntN(len(benchVariants))]
	default:
		return ns + "::" + benchOps[r.IntN(len(benchOps))]
	}
}

// workload deterministically generates agents holding 5 tags each (two root
// namespaces and three specific tags) and tools requiring 1–3 tags each.
func workload(seed uint64, nAgents, nTools int) ([]Agent, []Tool) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	agents := make([]Agent, nAgents)
	for i := range agents {
		holds := make([]string, 0, 5)
		for range 2 {
			holds = append(holds, benchNamespaces[r.IntN(len(benchNamespaces))])
		}
		for range 3 {
			holds = append(holds, randomTag(r))
		}
		policy := Locked
		if i%3 == 0 {
			policy = Extensible
		}
		agents[i] = Agent{Name: fmt.Sprintf("agent-%05d", r.IntN(1_000_000)), Policy: policy, Holds: holds}
	}
	tools := make([]Tool, nTools)
	for i := range tools {
		reqs := make([]string, 1+r.IntN(3))
		for j := range reqs {
			reqs[j] = randomTag(r)
		}
		tools[i] = Tool{Name: fmt.Sprintf("tool-%06d", r.IntN(10_000_000)), Requires: reqs}
	}
	return agents, tools
}

// BenchmarkMatrix computes the matrix for 1,000 agents × 10,000 tools.
func BenchmarkMatrix(b *testing.B) {
	agents, tools := workload(42, 1_000, 10_000)
	b.ReportAllocs()
	var m *Matrix
	for b.Loop() {
		m = Compute(agents, tools)
	}
	allowed := 0
	for a := range m.Agents() {
		allowed += m.AllowedCount(a)
	}
	b.ReportMetric(float64(allowed)/float64(len(agents)*len(tools)), "allowed-fraction")
}

// BenchmarkCell measures computing one explanation on demand.
func BenchmarkCell(b *testing.B) {
	agents, tools := workload(42, 1_000, 10_000)
	m := Compute(agents, tools)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = m.Cell(i%len(agents), (i*7919)%len(tools))
		i++
	}
}

// BenchmarkMatrixDense is a worst case for the row computation: every agent
// holds every root namespace, so every agent may call every tool.
func BenchmarkMatrixDense(b *testing.B) {
	agents, tools := workload(7, 1_000, 10_000)
	for i := range agents {
		agents[i].Holds = benchNamespaces
	}
	b.ReportAllocs()
	for b.Loop() {
		Compute(agents, tools)
	}
}
