package serve

import (
	"testing"

	"github.com/agentform/agentform/internal/artifact"
)

// TestScrubberKeepsOwnNames: a runtime URL's host that is also one of
// the agent's own names (a block, a skill) is not hidden where messages
// quote that name; the host with its port, and the whole URL, are.
func TestScrubberKeepsOwnNames(t *testing.T) {
	env := map[string]string{"RESEARCH_AGENT_URL": "http://research:8080"}
	s := newScrubber(NewEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }), []artifact.RuntimeRef{{Env: "RESEARCH_AGENT_URL"}})
	s.Keep(agentNames(&artifact.Agent{Name: "researcher", Blocks: []artifact.Block{{Name: "research"}}})...)
	for _, tc := range []struct{ in, want string }{
		{`the A2A agent of block "research" could not be reached`, `the A2A agent of block "research" could not be reached`},
		{"dial tcp research:8080: refused", "dial tcp (part of RESEARCH_AGENT_URL): refused"},
		{"GET http://research:8080 failed", "GET (value of RESEARCH_AGENT_URL) failed"},
	} {
		if got := s.Text(tc.in); got != tc.want {
			t.Errorf("text(%q)\ngot:  %s\nwant: %s", tc.in, got, tc.want)
		}
	}
	// Added later (an executor's), kept too.
	s.Add("http://research:9090", "OTHER", false)
	if got := s.Text(`skill "research" has no file`); got != `skill "research" has no file` {
		t.Errorf("after add: %s", got)
	}
}
