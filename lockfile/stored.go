package lockfile

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Stored returns a copy of t as the lockfile stores it, which is what Parse
// reads back from Bytes for an entry Validate accepts: every string
// NFC-normalised valid UTF-8 (definitions and card_json still the same
// JSON), hashed_fields distinct and sorted, map entries without a value
// left out. A lock entry made by resolving and one read from the file then
// hold the same text, so that what is built from either (an artifact's
// block lock) is the same byte for byte. Stored returns nil for a nil
// tool.
func (t *Tool) Stored() *Tool {
	if t == nil {
		return nil
	}
	return &Tool{
		Kind:          canon(t.Kind),
		Source:        canon(t.Source),
		Deps:          canon(t.Deps),
		Bundle:        canon(t.Bundle),
		Bundler:       canon(t.Bundler),
		UVLock:        canon(t.UVLock),
		Interpreter:   canon(t.Interpreter),
		ServerName:    canon(t.ServerName),
		ServerVersion: canon(t.ServerVersion),
		HashedFields:  normalFields(t.HashedFields),
		Served:        storedMap(t.Served, canon),
		Definitions:   storedMap(t.Definitions, canonJSON),
		Card:          canon(t.Card),
		CardName:      canon(t.CardName),
		CardVersion:   canon(t.CardVersion),
		CardJSON:      canonJSON(t.CardJSON),
	}
}

// ExactJSON returns a JSON text (an MCP tool's definition) in a form the
// lockfile keeps exactly, so that it reads back as the same JSON value: the
// text itself, readable, when storing it changes nothing but escapes (a
// combining mark after an escape sequence is escaped); else the text with
// every non-ASCII character escaped. That is text NFC-normalising would
// change, such as a decomposed accent, which in a property name or an enum
// value would change what a schema says.
func ExactJSON(s string) string {
	if e := escapeJoining(s); canon(e) == e {
		return e
	}
	return ASCIIJSON(s)
}

// ASCIIJSON escapes every non-ASCII character of a JSON text as \uXXXX (a
// UTF-16 surrogate pair above U+FFFF; an invalid byte as U+FFFD). Outside
// its strings JSON has no non-ASCII characters, so the result is the same
// JSON, which the lockfile keeps as it is.
func ASCIIJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r1, r2 := utf16.EncodeRune(r); {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r1 != utf8.RuneError:
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// Canonical returns s as the lockfile stores it: valid UTF-8 in normal
// form C (NFC), as HCL reads every string back.
func Canonical(s string) string {
	return canon(s)
}

// storedMap is m as the lockfile stores it: keys and values canonical,
// entries without a value left out (of keys that are the same once
// canonical, the one Bytes writes), nil when none is left.
func storedMap(m map[string]string, value func(string) string) map[string]string {
	var out map[string]string
	for _, e := range entries(m, func(s string) bool { return s == "" }) {
		if out == nil {
			out = make(map[string]string, len(m))
		}
		out[canon(e.name)] = value(e.value)
	}
	return out
}
