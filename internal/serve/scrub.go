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
	// pairs are replaced wherever they occur: values and credentials.
	pairs []scrubPair
	// parts are the parts of runtime URLs, replaced as
	// secretparts.ReplacePart does: ordinary words of messages (a host, a
	// query setting) only where they are no part of a longer name.
	parts []scrubPair
	// replacer replaces pairs; nil until text needs it after an add.
	replacer *strings.Replacer
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
	var pairs, parts []scrubPair
	// "true", "false" and "null" (a flag's value) say nothing of a
	// secret and are words of many messages ("allow_loopback is not
	// true"): not replaced whole.
	if len(value) >= scrubMin && value != "true" && value != "false" && value != "null" {
		for _, f := range secretparts.Forms(value) {
			pairs = append(pairs, scrubPair{f, "(value of " + env + ")"})
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
	if len(pairs)+len(parts) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Longer texts first, so that a value containing another, or a part,
	// is replaced whole: the replacer tries them in this order. New
	// slices, as text reads the old ones after it unlocks.
	longest := func(a, b scrubPair) int { return len(b.old) - len(a.old) }
	s.pairs = slices.SortedStableFunc(slices.Values(slices.Concat(s.pairs, pairs)), longest)
	s.parts = slices.SortedStableFunc(slices.Values(slices.Concat(s.parts, parts)), longest)
	s.replacer = nil
}

// text returns t with every runtime value, and every part of one,
// replaced.
func (s *scrubber) text(t string) string {
	if s == nil {
		return t
	}
	s.mu.Lock()
	r, parts := s.replacer, s.parts
	if r == nil && len(s.pairs) > 0 {
		args := make([]string, 0, 2*len(s.pairs))
		for _, p := range s.pairs {
			args = append(args, p.old, p.new)
		}
		r = strings.NewReplacer(args...)
		s.replacer = r
	}
	s.mu.Unlock()
	if r != nil {
		t = r.Replace(t)
	}
	for _, p := range parts {
		t = secretparts.ReplacePart(t, p.old, p.new)
	}
	return t
}

// empty reports whether nothing is scrubbed.
func (s *scrubber) empty() bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pairs)+len(s.parts) == 0
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
			// and becomes the string that says so.
			if t := s.text(x.String()); t != x.String() {
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
