package serve

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentform/agentform/internal/artifact"
)

// scrubber replaces the resolved values of an agent's runtime references
// with "(value of ENV)" in texts that are recorded or shown: errors of
// every kind of tool, whatever they quote (a URL with a token in its path,
// a header, a command line).
type scrubber struct {
	replacer *strings.Replacer
}

// scrubMin is the shortest value scrubbed: shorter ones ("1", "true")
// would mangle every message and are no secret.
const scrubMin = 4

// newScrubber collects the values of refs that are set in env.
func newScrubber(env *Env, refs []artifact.RuntimeRef) *scrubber {
	type pair struct{ value, env string }
	var pairs []pair
	for _, r := range refs {
		v, ok := env.lookup(r.Env)
		if !ok || len(v) < scrubMin {
			continue
		}
		pairs = append(pairs, pair{v, r.Env})
	}
	// Longer values first, so that a value containing another is
	// replaced whole.
	slices.SortFunc(pairs, func(a, b pair) int { return len(b.value) - len(a.value) })
	var args []string
	for _, p := range pairs {
		args = append(args, p.value, "(value of "+p.env+")")
	}
	if len(args) == 0 {
		return &scrubber{}
	}
	return &scrubber{replacer: strings.NewReplacer(args...)}
}

// text returns s with every runtime value replaced.
func (s *scrubber) text(t string) string {
	if s == nil || s.replacer == nil {
		return t
	}
	return s.replacer.Replace(t)
}

// json returns a JSON value with every string in it scrubbed (the output
// of a failed call, which often quotes what the tool was given).
func (s *scrubber) json(raw json.RawMessage) json.RawMessage {
	if s == nil || s.replacer == nil || len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return json.RawMessage(s.text(string(raw)))
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return s.text(x)
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, val := range x {
				out[s.text(k)] = walk(val)
			}
			return out
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
