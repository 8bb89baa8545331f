package serve

import (
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
