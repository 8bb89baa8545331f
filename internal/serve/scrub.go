package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/secretparts"
)

// scrubber replaces runtime values in texts that are recorded or shown:
// errors of every kind of tool, whatever they quote (a URL with a token in
// its path, a header, a command line), an upstream server's name, a
// javascript tool's console output. A value is replaced by "(value of
// ENV)"; the credentials inside it and the parts of a runtime URL that
// messages quote (secretparts), by "(part of ENV)"; each also where it is
// quoted re-encoded (secretparts.Forms). It is safe for concurrent use,
// values added while others read included.
type scrubber struct {
	mu sync.Mutex
	// In the order text applies them, each longest first: secrets'
	// whole values, wherever they occur; plain values, as whole words
	// (secretparts.ReplacePart); the credentials and lines inside values,
	// wherever they occur; the parts of runtime URLs, as whole words.
	secrets, plain, pairs, parts []scrubPair
	// keep are names never hidden as URL parts (keepNames).
	keep []string
	// secretsR and pairsR replace secrets and pairs; nil until text
	// needs them after an add.
	secretsR, pairsR *strings.Replacer
}

// scrubPair is one text to replace and what replaces it.
type scrubPair struct{ old, new string }

// scrubMin is the shortest value scrubbed whole: shorter ones ("1",
// "true") would mangle every message and are no secret. Parts have their
// own bounds (secretparts).
const scrubMin = 4

// newScrubber collects the values of refs that are set in env.
func newScrubber(env *Env, refs []artifact.RuntimeRef) *scrubber {
	s := &scrubber{}
	for _, r := range refs {
		if v, ok := env.lookup(r.Env); ok {
			s.add(v, r.Env, r.Secret)
		}
	}
	return s
}

// add records a value read from the variable env; secret says it was
// given as secret(runtime(...)), which makes more of it a credential
// (secretparts.Credentials) and hides more of a URL
// (secretparts.URLParts).
func (s *scrubber) add(value, env string, secret bool) {
	var secrets, plain, pairs, parts []scrubPair
	// "true", "false" and "null" in any case (a flag's value) say nothing
	// of a secret and are words of many messages ("allow_loopback is not
	// true", Python's True): not replaced whole.
	flag := strings.EqualFold(value, "true") || strings.EqualFold(value, "false") || strings.EqualFold(value, "null")
	if len(value) >= scrubMin && !flag {
		for _, f := range secretparts.Forms(value) {
			p := scrubPair{f, "(value of " + env + ")"}
			if secret {
				// Wherever it is: a secret inside a longer word (a
				// token in a URL) is still the secret.
				secrets = append(secrets, p)
			} else {
				// A plain value (a region, a mode) only as a whole word:
				// "east" is no part of "northeast".
				plain = append(plain, p)
			}
		}
	}
	// The credentials inside it, and each line of a secret of several
	// (a tail of text may hold only some of them).
	for _, p := range slices.Concat(secretparts.Credentials(value, secret), secretparts.Lines(value, secret)) {
		for _, f := range secretparts.Forms(p) {
			pairs = append(pairs, scrubPair{f, "(part of " + env + ")"})
		}
	}
	for _, p := range secretparts.URLParts(value, secret) {
		for _, f := range secretparts.Forms(p) {
			parts = append(parts, scrubPair{f, "(part of " + env + ")"})
		}
	}
	if len(secrets)+len(plain)+len(pairs)+len(parts) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Longer texts first, so that a value containing another, or a part,
	// is replaced whole: the replacer tries them in this order. New
	// slices, as text reads the old ones after it unlocks.
	longest := func(a, b scrubPair) int { return len(b.old) - len(a.old) }
	merge := func(old, more []scrubPair) []scrubPair {
		return slices.SortedStableFunc(slices.Values(slices.Concat(old, more)), longest)
	}
	s.secrets, s.plain, s.pairs, s.parts = merge(s.secrets, secrets), merge(s.plain, plain), merge(s.pairs, pairs), merge(s.parts, s.kept(parts))
	s.secretsR, s.pairsR = nil, nil
}

// keepNames leaves out of the URL parts hidden from messages the names
// given: the workspace's own names (an agent, a block, a tool, a skill),
// which messages quote as themselves, and which a runtime URL's host may
// share (http://research:8080 for the block "research"). The URL's host
// with its port, and every value and credential, stay hidden.
func (s *scrubber) keepNames(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = append(s.keep, names...)
	s.parts = s.kept(s.parts)
}

// kept returns parts without those named in keep, in a new slice.
func (s *scrubber) kept(parts []scrubPair) []scrubPair {
	return slices.DeleteFunc(slices.Clone(parts), func(p scrubPair) bool { return slices.Contains(s.keep, p.old) })
}

// agentNames are the names an agent's messages quote as its own.
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

// replacerOf replaces every pair wherever it occurs; nil for none.
func replacerOf(pairs []scrubPair) *strings.Replacer {
	if len(pairs) == 0 {
		return nil
	}
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.old, p.new)
	}
	return strings.NewReplacer(args...)
}

// text returns t with every runtime value, and every part of one,
// replaced.
func (s *scrubber) text(t string) string {
	if s == nil {
		return t
	}
	s.mu.Lock()
	if s.secretsR == nil {
		s.secretsR = replacerOf(s.secrets)
	}
	if s.pairsR == nil {
		s.pairsR = replacerOf(s.pairs)
	}
	secretsR, plain, pairsR, parts := s.secretsR, s.plain, s.pairsR, s.parts
	s.mu.Unlock()
	if secretsR != nil {
		t = secretsR.Replace(t)
	}
	for _, p := range plain {
		t = secretparts.ReplacePart(t, p.old, p.new)
	}
	if pairsR != nil {
		t = pairsR.Replace(t)
	}
	for _, p := range parts {
		t = secretparts.ReplacePart(t, p.old, p.new)
	}
	return t
}

// whole returns what replaces t when t is, as a whole, a value or part
// the scrubber hides.
func (s *scrubber) whole(t string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range slices.Concat(s.secrets, s.plain, s.pairs, s.parts) {
		if p.old == t {
			return p.new, true
		}
	}
	return "", false
}

// empty reports whether nothing is scrubbed.
func (s *scrubber) empty() bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.secrets)+len(s.plain)+len(s.pairs)+len(s.parts) == 0
}

// json returns a JSON value with every string in it scrubbed (the output
// of a failed call, which often quotes what the tool was given).
func (s *scrubber) json(raw json.RawMessage) json.RawMessage {
	if s.empty() || len(raw) == 0 {
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
		case json.Number:
			// A number that is a runtime value (a PIN) is scrubbed too,
			// and becomes the string that says so; one that only holds
			// its digits (148290 for 4829) is another number.
			if t, ok := s.whole(x.String()); ok {
				return t
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			// In key order, so that keys that scrub to the same text are
			// told apart the same way every time.
			for _, k := range slices.Sorted(maps.Keys(x)) {
				key := s.text(k)
				for n := 2; ; n++ {
					if _, taken := out[key]; !taken {
						break
					}
					key = fmt.Sprintf("%s (%d)", s.text(k), n)
				}
				out[key] = walk(x[k])
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

// data returns a value that encodes to JSON (an activity event's data)
// as JSON with every string in it scrubbed; null when it does not encode.
func (s *scrubber) data(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return s.json(raw)
}
