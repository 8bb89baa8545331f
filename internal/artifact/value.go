package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// RuntimeRef is a value supplied when the agent starts: runtime("ENV") or
// runtime("ENV", default), optionally wrapped in secret(). agent.json
// keeps the reference, never the value. It marshals as
//
//	{"env": "X", "default": <JSON value>}      a plain reference
//	{"env": "X", "has_default": true, "secret": true}   a secret
//
// A secret's default is as sensitive as its value: MarshalJSON never
// writes it, whatever Default holds, and writes has_default instead, so
// that the agent's host knows the variable is expected to be set.
type RuntimeRef struct {
	// Env is the environment variable that supplies the value.
	Env string
	// Default is the JSON value used when Env is unset; nil when there is
	// none. It is never written for a secret.
	Default JSON
	// Secret marks the value sensitive (secret(runtime(...))).
	Secret bool
	// HasDefault records, for a secret, that the manifest gave a default
	// which agent.json withholds. For a plain reference it is implied by
	// Default and not written.
	HasDefault bool
}

// runtimeRefJSON is RuntimeRef's wire form, in key order.
type runtimeRefJSON struct {
	Env        string `json:"env"`
	Default    JSON   `json:"default,omitempty"`
	HasDefault bool   `json:"has_default,omitempty"`
	Secret     bool   `json:"secret,omitempty"`
}

// MarshalJSON writes the reference; see RuntimeRef.
func (r RuntimeRef) MarshalJSON() ([]byte, error) {
	w := runtimeRefJSON{Env: r.Env, Secret: r.Secret}
	if r.Secret {
		w.HasDefault = r.HasDefault || r.Default.set()
	} else if r.Default.set() {
		w.Default = r.Default
	}
	return marshalCanonical(w)
}

// UnmarshalJSON reads a reference object; "env" is required.
func (r *RuntimeRef) UnmarshalJSON(data []byte) error {
	var w runtimeRefJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Env == "" {
		return errors.New(`runtime reference without "env"`)
	}
	*r = RuntimeRef{Env: w.Env, Secret: w.Secret, HasDefault: w.HasDefault}
	if !w.Secret {
		r.Default = w.Default
	}
	return nil
}

// compare orders references by env, then plain before secret, then by
// default, for the sorted runtime list.
func (r *RuntimeRef) compare(o *RuntimeRef) int {
	if r.Env != o.Env {
		if r.Env < o.Env {
			return -1
		}
		return 1
	}
	if r.Secret != o.Secret {
		if !r.Secret {
			return -1
		}
		return 1
	}
	a, _ := r.MarshalJSON()
	b, _ := o.MarshalJSON()
	return bytes.Compare(a, b)
}

// String is a string that may be known only at runtime: a JSON string, or
// a runtime reference object when Runtime is set (Value is then ignored).
type String struct {
	Value   string
	Runtime *RuntimeRef
}

// MarshalJSON writes the string or the reference.
func (s String) MarshalJSON() ([]byte, error) {
	if s.Runtime != nil {
		return s.Runtime.MarshalJSON()
	}
	return marshalCanonical(s.Value)
}

// UnmarshalJSON reads a string or a reference object.
func (s *String) UnmarshalJSON(data []byte) error {
	*s = String{}
	if isObject(data) {
		s.Runtime = new(RuntimeRef)
		return s.Runtime.UnmarshalJSON(data)
	}
	return json.Unmarshal(data, &s.Value)
}

// Int is a whole number that may be known only at runtime: a JSON number,
// or a runtime reference object when Runtime is set.
type Int struct {
	Value   int64
	Runtime *RuntimeRef
}

// MarshalJSON writes the number or the reference.
func (i Int) MarshalJSON() ([]byte, error) {
	if i.Runtime != nil {
		return i.Runtime.MarshalJSON()
	}
	return json.Marshal(i.Value)
}

// UnmarshalJSON reads a number or a reference object.
func (i *Int) UnmarshalJSON(data []byte) error {
	*i = Int{}
	if isObject(data) {
		i.Runtime = new(RuntimeRef)
		return i.Runtime.UnmarshalJSON(data)
	}
	return json.Unmarshal(data, &i.Value)
}

// Bool is a boolean that may be known only at runtime: true, false, or a
// runtime reference object when Runtime is set.
type Bool struct {
	Value   bool
	Runtime *RuntimeRef
}

// MarshalJSON writes the boolean or the reference.
func (b Bool) MarshalJSON() ([]byte, error) {
	if b.Runtime != nil {
		return b.Runtime.MarshalJSON()
	}
	return json.Marshal(b.Value)
}

// UnmarshalJSON reads a boolean or a reference object.
func (b *Bool) UnmarshalJSON(data []byte) error {
	*b = Bool{}
	if isObject(data) {
		b.Runtime = new(RuntimeRef)
		return b.Runtime.UnmarshalJSON(data)
	}
	return json.Unmarshal(data, &b.Value)
}

// Strings is a list of strings that may be known only at runtime as a
// whole (Runtime set: a reference object) or element by element (an
// element's Runtime set: a reference object in the array). A nil list
// marshals as [].
type Strings struct {
	Values  []String
	Runtime *RuntimeRef
}

// Literals returns a Strings of plain values.
func Literals(values ...string) Strings {
	out := Strings{Values: make([]String, len(values))}
	for i, v := range values {
		out.Values[i] = String{Value: v}
	}
	return out
}

// MarshalJSON writes the array or the reference.
func (l Strings) MarshalJSON() ([]byte, error) {
	if l.Runtime != nil {
		return l.Runtime.MarshalJSON()
	}
	values := l.Values
	if values == nil {
		values = []String{}
	}
	return marshalCanonical(values)
}

// UnmarshalJSON reads an array (of strings and reference objects) or a
// reference object.
func (l *Strings) UnmarshalJSON(data []byte) error {
	*l = Strings{}
	if isObject(data) {
		l.Runtime = new(RuntimeRef)
		return l.Runtime.UnmarshalJSON(data)
	}
	return json.Unmarshal(data, &l.Values)
}

// JSON is a JSON value held as text: a JSON Schema, a tool's config, a
// runtime reference's default. It marshals canonically: object keys
// sorted, insignificant space removed, numbers written as given, no HTML
// escaping; nil or empty marshals as null. Runtime references inside a
// free-form value (config, headers) appear as reference objects.
type JSON []byte

// set reports whether j holds a value other than null.
func (j JSON) set() bool {
	t := bytes.TrimSpace(j)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// MarshalJSON writes the value canonically.
func (j JSON) MarshalJSON() ([]byte, error) {
	if !j.set() {
		return []byte("null"), nil
	}
	if b, ok := canonicalMemo.get(j); ok {
		return b, nil
	}
	b, err := j.canonical()
	if err == nil {
		canonicalMemo.put(j, b)
	}
	return b, err
}

func (j JSON) canonical() ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON value: %w", err)
	}
	if dec.More() {
		return nil, errors.New("invalid JSON value: data after the value")
	}
	return marshalCanonical(v)
}

// UnmarshalJSON keeps a copy of the value's text; null becomes nil.
func (j *JSON) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*j = nil
		return nil
	}
	*j = append(JSON(nil), data...)
	return nil
}

// isObject reports whether a JSON text is an object.
func isObject(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '{'
}

// marshalCanonical encodes v compactly without HTML escaping, so that
// descriptions and schemas keep "<", ">" and "&" as written.
func marshalCanonical(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// canonicalMemo remembers the canonical form of JSON values. Every agent
// of a workspace lists every tool in its agent.json, so an apply writing
// ten artifacts canonicalised each tool's schema ten times (decoding and
// encoding it). It holds values of at most canonicalMemoSize bytes and
// forgets everything when it holds canonicalMemoTotal bytes, so a
// long-running process (the Terraform provider) cannot grow it without
// end; a value it does not hold is canonicalised again.
var canonicalMemo = &jsonMemo{m: map[string][]byte{}}

// elementMemo remembers, by their compact encoding, the indented encoding
// of agent.json's tool and block entries (MarshalAgent), under the same
// bounds as canonicalMemo.
var elementMemo = &jsonMemo{m: map[string][]byte{}}

const (
	canonicalMemoSize  = 64 << 10
	canonicalMemoTotal = 16 << 20
)

type jsonMemo struct {
	mu    sync.Mutex
	m     map[string][]byte
	bytes int // held in keys and values
}

// get returns a copy of the canonical form of j, if remembered.
func (c *jsonMemo) get(j JSON) ([]byte, bool) {
	b, ok := c.getShared(j)
	return bytes.Clone(b), ok
}

// getShared is get without the copy, for callers that never modify
// the result.
func (c *jsonMemo) getShared(j JSON) ([]byte, bool) {
	if len(j) > canonicalMemoSize {
		return nil, false
	}
	c.mu.Lock()
	b, ok := c.m[string(j)]
	c.mu.Unlock()
	return b, ok
}

func (c *jsonMemo) put(j JSON, canonical []byte) {
	if len(j) > canonicalMemoSize {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[string(j)]; ok {
		return
	}
	if c.bytes+len(j)+len(canonical) > canonicalMemoTotal {
		clear(c.m)
		c.bytes = 0
	}
	c.m[string(j)] = bytes.Clone(canonical)
	c.bytes += len(j) + len(canonical)
}
