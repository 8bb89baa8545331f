package serve

import (
	"encoding/json"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/secretparts"
)

// The scrubber (secretparts.Scrubber) replaces runtime values in what
// serve records or shows: errors of every kind of tool, an upstream
// server's name, a javascript tool's console output.

// newScrubber collects the values of refs that are set in env.
func newScrubber(env *Env, refs []artifact.RuntimeRef) *secretparts.Scrubber {
	s := &secretparts.Scrubber{}
	for _, r := range refs {
		if v, ok := env.lookup(r.Env); ok {
			s.Add(v, r.Env, r.Secret)
		}
	}
	return s
}

// agentNames are the names an agent's messages quote as its own, kept
// out of the URL parts the scrubber hides (secretparts.Scrubber.Keep).
func agentNames(a *artifact.Agent) []string {
	names := []string{a.Name}
	for _, t := range a.Tools {
		names = append(names, t.Name)
	}
	for _, b := range a.Blocks {
		names = append(names, b.Name)
	}
	for _, sk := range a.Skills {
		names = append(names, sk.Name)
	}
	return names
}

// scrubData returns a value that encodes to JSON (an activity event's
// data) as JSON with every string in it scrubbed; null when it does not
// encode.
func scrubData(s *secretparts.Scrubber, v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return s.JSON(raw)
}
