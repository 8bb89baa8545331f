package secretparts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"
)

// Scrubber replaces runtime values in texts that are shown or recorded:
// plan's messages about a server it could not read, serve's errors of
// every kind of tool, whatever they quote (a URL with a token in its
// path, a header, a command line), an upstream server's name, a
// javascript tool's console output. A value is replaced by "(value of
// ENV)"; the credentials inside it (Credentials), the lines of a secret
// of several (Lines) and the parts of a runtime URL that messages quote
// (URLParts), by "(part of ENV)"; each also where it is quoted re-encoded
// (Forms). The zero value hides nothing and is ready to use; a nil
// *Scrubber hides nothing. It is safe for concurrent use, values added
// while others read included.
type Scrubber struct {
	mu sync.Mutex
	// In the order Text applies them, each longest first: secrets' whole
	// values, wherever they occur; plain values, as whole words
	// (ReplacePart); the credentials and lines inside values, wherever
	// they occur; the parts of runtime URLs, as whole words.
	secrets, plain, pairs, parts []pair
	// keep are names never hidden as URL parts (Keep).
	keep []string
	// secretsR and pairsR replace secrets and pairs; nil until Text
	// needs them after an Add.
	secretsR, pairsR *strings.Replacer
}

// pair is one text to replace and what replaces it.
type pair struct{ old, new string }

// MinWhole is the shortest value a Scrubber replaces whole: shorter ones
// ("1", "on") would mangle every message and are no secret. Parts have
// their own bounds.
const MinWhole = 4

// Add records a value read from the variable env; secret says it was
// given as secret(runtime(...)), which makes more of it a credential
// (Credentials) and hides more of a URL (URLParts). An empty value adds
// nothing.
func (s *Scrubber) Add(value, env string, secret bool) {
	var secrets, plain, pairs, parts []pair
	// "true", "false" and "null" in any case (a flag's value) say nothing
	// of a secret and are words of many messages ("allow_loopback is not
	// true", Python's True): not replaced whole.
	flag := strings.EqualFold(value, "true") || strings.EqualFold(value, "false") || strings.EqualFold(value, "null")
	if len(value) >= MinWhole && !flag {
		for _, f := range Forms(value) {
			p := pair{f, "(value of " + env + ")"}
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
	for _, p := range slices.Concat(Credentials(value, secret), Lines(value, secret)) {
		for _, f := range Forms(p) {
			pairs = append(pairs, pair{f, "(part of " + env + ")"})
		}
	}
	for _, p := range URLParts(value, secret) {
		for _, f := range Forms(p) {
			parts = append(parts, pair{f, "(part of " + env + ")"})
		}
	}
	if len(secrets)+len(plain)+len(pairs)+len(parts) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Longer texts first, so that a value containing another, or a part,
	// is replaced whole: the replacer tries them in this order (byte
	// order among equals, so that the order values are added in does not
	// matter). New slices, as Text reads the old ones after it unlocks.
	order := func(a, b pair) int {
		if len(a.old) != len(b.old) {
			return len(b.old) - len(a.old)
		}
		return strings.Compare(a.old, b.old)
	}
	merge := func(old, more []pair) []pair {
		return slices.SortedStableFunc(slices.Values(slices.Concat(old, more)), order)
	}
	s.secrets, s.plain, s.pairs, s.parts = merge(s.secrets, secrets), merge(s.plain, plain), merge(s.pairs, pairs), merge(s.parts, s.kept(parts))
	s.secretsR, s.pairsR = nil, nil
}

// Keep leaves out of the URL parts hidden from texts the names given: a
// workspace's own names (an agent, a block, a tool, a skill), which
// messages quote as themselves, and which a runtime URL's host may share
// (http://research:8080 for the block "research"). The URL's host with
// its port, and every value and credential, stay hidden.
func (s *Scrubber) Keep(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = append(s.keep, names...)
	s.parts = s.kept(s.parts)
}

// kept returns parts without those named in keep, in a new slice.
func (s *Scrubber) kept(parts []pair) []pair {
	return slices.DeleteFunc(slices.Clone(parts), func(p pair) bool { return slices.Contains(s.keep, p.old) })
}

// replacerOf replaces every pair wherever it occurs; nil for none.
func replacerOf(pairs []pair) *strings.Replacer {
	if len(pairs) == 0 {
		return nil
	}
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.old, p.new)
	}
	return strings.NewReplacer(args...)
}

// Text returns t with every value added, and every part of one, replaced.
// A value quoted with its accents composed otherwise than in the value
// and in Forms' two normal forms (some composed, some not) is found in
// the text normalised; the text is kept as it was unless that finds one.
func (s *Scrubber) Text(t string) string {
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
	scrub := func(t string) string {
		if secretsR != nil {
			t = secretsR.Replace(t)
		}
		for _, p := range plain {
			t = ReplacePart(t, p.old, p.new)
		}
		if pairsR != nil {
			t = pairsR.Replace(t)
		}
		for _, p := range parts {
			t = ReplacePart(t, p.old, p.new)
		}
		return t
	}
	t = scrub(t)
	if !norm.NFC.IsNormalString(t) {
		if n := norm.NFC.String(t); scrub(n) != n {
			t = scrub(n)
		}
	}
	return t
}

// Whole returns what replaces t when t is, as a whole, a value or part
// the scrubber hides.
func (s *Scrubber) Whole(t string) (string, bool) {
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range slices.Concat(s.secrets, s.plain, s.pairs, s.parts) {
		if p.old == t {
			return p.new, true
		}
	}
	return "", false
}

// Empty reports whether the scrubber hides nothing.
func (s *Scrubber) Empty() bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.secrets)+len(s.plain)+len(s.pairs)+len(s.parts) == 0
}

// JSON returns a JSON value with every string in it, keys included,
// scrubbed (the output of a failed call, which often quotes what the tool
// was given); a number that is a value hidden (a PIN) becomes the string
// that says so. Text that is not JSON is scrubbed as text.
func (s *Scrubber) JSON(raw json.RawMessage) json.RawMessage {
	if s.Empty() || len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return json.RawMessage(s.Text(string(raw)))
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return s.Text(x)
		case json.Number:
			// A number that only holds a value's digits (148290 for
			// 4829) is another number.
			if t, ok := s.Whole(x.String()); ok {
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
				key := s.Text(k)
				for n := 2; ; n++ {
					if _, taken := out[key]; !taken {
						break
					}
					key = fmt.Sprintf("%s (%d)", s.Text(k), n)
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
