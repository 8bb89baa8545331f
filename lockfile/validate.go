package lockfile

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentform/agentform/internal/manifest"
)

// Validate reports whether Parse would refuse f.Bytes(), without encoding
// or parsing anything: it applies Parse's rules to the entries as Bytes
// writes them (canonical strings, empty fields and entries left out). It
// returns nil exactly when f.Bytes() parses without errors (FuzzValidate
// holds the two to each other), and otherwise an error naming the first
// offending entry in the order Bytes writes them.
//
// Parsing a lockfile of a few hundred entries back takes tens of
// milliseconds of HCL scanning; validating it, well under one.
func (f *File) Validate() error {
	if f == nil {
		return nil
	}
	for _, e := range entries(f.Skills, (*Skill).empty) {
		if e.name == "" {
			return fmt.Errorf("a skill entry has an empty name")
		}
		if n := canon(e.name); !manifest.IsName(n) {
			return fmt.Errorf("skill %q: not a valid name", n)
		}
		if !validHash(canon(e.value.Source), prefixH1) {
			return fmt.Errorf("skill %q: the %q value must be %s", e.name, "source", hashForm(prefixH1))
		}
	}
	for _, e := range entries(f.Tools, (*Tool).empty) {
		if e.name == "" {
			return fmt.Errorf("a tool entry has an empty name")
		}
		if n := canon(e.name); !manifest.IsName(n) {
			return fmt.Errorf("tool %q: not a valid name", n)
		}
		if err := e.value.validate(); err != nil {
			return fmt.Errorf("tool %q: %w", e.name, err)
		}
	}
	return nil
}

// validate applies Parse's rules to a non-empty tool entry.
func (t *Tool) validate() error {
	kind := canon(t.Kind)
	if kind == "" {
		return fmt.Errorf("it has no kind")
	}
	allowed, known := kindAttrs[kind]
	if !known {
		return fmt.Errorf("the kind is one of %s; got %q", strings.Join(quoteAll(kindNames), ", "), kind)
	}
	// Each attribute Bytes would write, in its order: its name, whether
	// Bytes writes it, and its check (nil: any string).
	served := entries(t.Served, func(s string) bool { return s == "" })
	defs := entries(t.Definitions, func(s string) bool { return s == "" })
	for _, a := range []struct {
		name    string
		written bool
		check   func() error
	}{
		{"source", t.Source != "", func() error { return checkHashValue("source", t.Source, prefixH1) }},
		{"deps", t.Deps != "", func() error { return checkHashValue("deps", t.Deps, prefixSHA256) }},
		{"bundle", t.Bundle != "", func() error { return checkHashValue("bundle", t.Bundle, prefixSHA256) }},
		{"bundler", t.Bundler != "", nil},
		{"uv_lock", t.UVLock != "", func() error { return checkHashValue("uv_lock", t.UVLock, prefixSHA256) }},
		{"interpreter", t.Interpreter != "", func() error {
			if v := canon(t.Interpreter); !contains(pythonInterpreters, v) {
				return fmt.Errorf("the interpreter is one of %s; got %q", strings.Join(quoteAll(pythonInterpreters), ", "), v)
			}
			return nil
		}},
		{"server", t.ServerName != "" || t.ServerVersion != "", nil},
		{"hashed_fields", len(normalFields(t.HashedFields)) > 0, nil},
		{"tools", len(served) > 0, func() error {
			for _, s := range served {
				if s.name == "" {
					return fmt.Errorf("a served tool name in %q is empty", "tools")
				}
				if err := checkHashValue(fmt.Sprintf("tools[%q]", s.name), s.value, prefixSHA256); err != nil {
					return err
				}
			}
			return nil
		}},
		{"definitions", len(defs) > 0, func() error {
			for _, d := range defs {
				if d.name == "" {
					return fmt.Errorf("a served tool name in %q is empty", "definitions")
				}
				if !json.Valid([]byte(canonJSON(d.value))) {
					return fmt.Errorf("the definition of %q is not valid JSON", d.name)
				}
			}
			return nil
		}},
		{"card", t.Card != "", func() error { return checkHashValue("card", t.Card, prefixSHA256) }},
		{"card_name", t.CardName != "", nil},
		{"card_version", t.CardVersion != "", nil},
		{"card_json", t.CardJSON != "", func() error {
			if !json.Valid([]byte(canonJSON(t.CardJSON))) {
				return fmt.Errorf("card_json is not valid JSON")
			}
			return nil
		}},
	} {
		if !a.written {
			continue
		}
		if !contains(allowed, a.name) {
			return fmt.Errorf("a %s entry has no %q argument; it has %s", kind, a.name, strings.Join(quoteAll(append([]string{"kind"}, allowed...)), ", "))
		}
		if a.check != nil {
			if err := a.check(); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkHashValue checks the hash value of the attribute name as Parse
// would read it back.
func checkHashValue(name, value, prefix string) error {
	if !validHash(canon(value), prefix) {
		return fmt.Errorf("the %q value must be %s", name, hashForm(prefix))
	}
	return nil
}

// hashForm describes the hashes with prefix, for errors.
func hashForm(prefix string) string {
	if prefix == prefixH1 {
		return `a dirhash "h1:" digest: "h1:" followed by the standard base64 of 32 bytes`
	}
	return `"sha256:" followed by 64 lowercase hexadecimal digits`
}
