package capability

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// propertyVocabulary is a tiny vocabulary whose tags collide as prefixes:
// namespace prefixes (math / math::add), plain string prefixes (math /
// mathematics / math_x, math::add / math::addition), literal "*", and some
// malformed tags on which the index must still agree with Satisfies.
var propertyVocabulary = []string{
	"math", "mathematics", "math_x", "math::add", "math::addition",
	"math::add::fast", "math::add::fast::v2", "math::sub", "mathematics::add",
	"net", "net::http", "net::http::get", "network",
	"*", "*::x", "a", "a:", "a:::b", "::x", "",
}

// naiveCell explains a cell by comparing every held tag with every required
// tag using Satisfies directly.
func naiveCell(agent Agent, tool Tool) (allowed bool, missing []string, matched map[string]string) {
	holds := slices.Clone(agent.Holds)
	// Most specific first: longest, then lexicographically smallest.
	slices.SortFunc(holds, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	reqs := slices.Clone(tool.Requires)
	slices.Sort(reqs)
	reqs = slices.Compact(reqs)
	missing, matched = []string{}, map[string]string{}
	for _, r := range reqs {
		found := false
		for _, h := range holds {
			if Satisfies(h, r) {
				matched[r] = h
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		matched = map[string]string{}
	}
	return len(missing) == 0, missing, matched
}

// randomTags draws up to max tags (possibly repeated) from the vocabulary.
func randomTags(r *rand.Rand, max int) []string {
	tags := make([]string, r.IntN(max+1))
	for i := range tags {
		tags[i] = propertyVocabulary[r.IntN(len(propertyVocabulary))]
	}
	return tags
}

func TestMatrixMatchesNaive(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0xca9ab111))
			// Tool counts cross 64-bit word boundaries now and then.
			agents := make([]Agent, r.IntN(12))
			for i := range agents {
				policy := []Policy{"", Locked, Extensible, "open"}[r.IntN(4)]
				agents[i] = Agent{Name: fmt.Sprintf("agent-%02d", i), Policy: policy, Holds: randomTags(r, 4)}
			}
			tools := make([]Tool, r.IntN(140))
			for i := range tools {
				tools[i] = Tool{Name: fmt.Sprintf("tool-%03d", i), Requires: randomTags(r, 3+3*r.IntN(2))}
			}
			r.Shuffle(len(agents), func(i, j int) { agents[i], agents[j] = agents[j], agents[i] })
			r.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })

			m := Compute(agents, tools)
			for _, agent := range agents {
				a, ok := m.AgentIndex(agent.Name)
				if !ok {
					t.Fatalf("AgentIndex(%q)\ngot:  not found\nwant: found", agent.Name)
				}
				var wantReachable []string
				var wantDenied []int
				for _, tool := range tools {
					ti, ok := m.ToolIndex(tool.Name)
					if !ok {
						t.Fatalf("ToolIndex(%q)\ngot:  not found\nwant: found", tool.Name)
					}
					allowed, missing, matched := naiveCell(agent, tool)
					if allowed {
						wantReachable = append(wantReachable, tool.Name)
					} else {
						wantDenied = append(wantDenied, ti)
					}
					if got := m.Allowed(a, ti); got != allowed {
						t.Fatalf("Allowed(%q, %q) with holds %q, requires %q\ngot:  %v\nwant: %v", agent.Name, tool.Name, agent.Holds, tool.Requires, got, allowed)
					}
					c := m.Cell(a, ti)
					if c.Allowed != allowed || !reflect.DeepEqual(c.Missing, missing) || !reflect.DeepEqual(c.Matched, matched) {
						t.Fatalf("Cell(%q, %q) with holds %q, requires %q\ngot:  allowed=%v missing=%q matched=%q\nwant: allowed=%v missing=%q matched=%q",
							agent.Name, tool.Name, agent.Holds, tool.Requires, c.Allowed, c.Missing, c.Matched, allowed, missing, matched)
					}
					if want := !allowed && agent.Policy == Extensible; c.OverrideReachable != want {
						t.Fatalf("Cell(%q, %q).OverrideReachable with policy %q\ngot:  %v\nwant: %v", agent.Name, tool.Name, agent.Policy, c.OverrideReachable, want)
					}
				}
				slices.Sort(wantReachable)
				slices.Sort(wantDenied)
				if got := m.Reachable(a); !equalStrings(got, wantReachable) {
					t.Fatalf("Reachable(%q)\ngot:  %q\nwant: %q", agent.Name, got, wantReachable)
				}
				if got := m.Denied(a); !slices.Equal(got, wantDenied) {
					t.Fatalf("Denied(%q)\ngot:  %v\nwant: %v", agent.Name, got, wantDenied)
				}
				if got := m.AllowedCount(a); got != len(wantReachable) {
					t.Fatalf("AllowedCount(%q)\ngot:  %d\nwant: %d", agent.Name, got, len(wantReachable))
				}
				for _, tag := range propertyVocabulary {
					want := slices.ContainsFunc(agent.Holds, func(h string) bool { return Satisfies(h, tag) })
					if got := m.Holds(a, tag); got != want {
						t.Fatalf("Holds(%q, %q) with holds %q\ngot:  %v\nwant: %v", agent.Name, tag, agent.Holds, got, want)
					}
				}
			}
		})
	}
}

// TestBenchmarkWorkloadMatchesNaive checks the indexed matrix against the
// naive computation on a slice of the realistic benchmark workload.
func TestBenchmarkWorkloadMatchesNaive(t *testing.T) {
	agents, tools := workload(1, 60, 700)
	m := Compute(agents, tools)
	sortedAgents, sortedTools := m.Agents(), m.Tools()
	allowedCells := 0
	for a, agent := range sortedAgents {
		for ti, tool := range sortedTools {
			want, _, _ := naiveCell(agent, tool)
			if got := m.Allowed(a, ti); got != want {
				t.Fatalf("Allowed(%q, %q) with holds %q, requires %q\ngot:  %v\nwant: %v", agent.Name, tool.Name, agent.Holds, tool.Requires, got, want)
			}
			if want {
				allowedCells++
			}
		}
	}
	if allowedCells == 0 {
		t.Errorf("allowed cells in the workload\ngot:  0\nwant: some")
	}
}
