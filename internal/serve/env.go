package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentform/agentform/internal/artifact"
)

// Env resolves the runtime references of an artifact from the environment
// of the process that serves it. A value comes from its variable, or from
// the reference's default when the variable is unset; a secret's default
// is never in the artifact, so a secret must be set. Resolved values stay
// in memory: nothing here logs or stores them.
type Env struct {
	lookup func(string) (string, bool)
}

// NewEnv returns an Env reading variables through lookup (os.LookupEnv).
func NewEnv(lookup func(string) (string, bool)) *Env {
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	return &Env{lookup: lookup}
}

// MissingError lists the runtime variables that must be set and are not.
type MissingError struct {
	Vars []string
}

func (e *MissingError) Error() string {
	if len(e.Vars) == 1 {
		return fmt.Sprintf("the artifact needs the environment variable %s, which is not set", e.Vars[0])
	}
	return fmt.Sprintf("the artifact needs these environment variables, which are not set: %s", strings.Join(e.Vars, ", "))
}

// Check returns a *MissingError naming every reference in refs (agent.json
// "runtime") that has no value: unset and without a default, or a secret
// that is unset (its default, if any, is withheld from the artifact).
func (e *Env) Check(refs []artifact.RuntimeRef) error {
	var missing []string
	for _, r := range refs {
		if _, ok := e.lookup(r.Env); ok {
			continue
		}
		if r.Secret || len(bytes.TrimSpace(r.Default)) == 0 {
			missing = append(missing, r.Env)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return &MissingError{Vars: slices.Compact(missing)}
}

// Value returns the JSON value of a reference: the variable's text,
// converted to the type of the default when the default is not a string
// (number, boolean, or a JSON array or object); the default when unset.
func (e *Env) Value(r *artifact.RuntimeRef) (json.RawMessage, error) {
	s, ok := e.lookup(r.Env)
	def := bytes.TrimSpace(r.Default)
	if !ok {
		if r.Secret || len(def) == 0 {
			return nil, &MissingError{Vars: []string{r.Env}}
		}
		return json.RawMessage(def), nil
	}
	if len(def) > 0 && def[0] != '"' {
		var probe any
		if err := json.Unmarshal([]byte(s), &probe); err == nil && sameKind(probe, def) {
			return json.RawMessage(s), nil
		}
		if def[0] == '[' {
			// A list may also be given comma-separated.
			var parts []string
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					parts = append(parts, p)
				}
			}
			b, _ := json.Marshal(parts)
			return b, nil
		}
		// Name the variable, never its value.
		return nil, fmt.Errorf("the environment variable %s does not hold a value of the type of its default (%s)", r.Env, jsonKind(def))
	}
	b, _ := json.Marshal(s)
	return b, nil
}

func sameKind(v any, def []byte) bool {
	var d any
	if json.Unmarshal(def, &d) != nil {
		return false
	}
	switch d.(type) {
	case float64:
		_, ok := v.(float64)
		return ok
	case bool:
		_, ok := v.(bool)
		return ok
	case []any:
		_, ok := v.([]any)
		return ok
	case map[string]any:
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

func jsonKind(def []byte) string {
	switch def[0] {
	case '[':
		return "a list"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// String resolves a string value.
func (e *Env) String(v artifact.String) (string, error) {
	if v.Runtime == nil {
		return v.Value, nil
	}
	raw, err := e.Value(v.Runtime)
	if err != nil {
		return "", err
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	return strings.Trim(string(raw), `"`), nil
}

// Int resolves a number value.
func (e *Env) Int(v artifact.Int) (int64, error) {
	if v.Runtime == nil {
		return v.Value, nil
	}
	raw, err := e.Value(v.Runtime)
	if err != nil {
		return 0, err
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the environment variable %s is not a whole number", v.Runtime.Env)
	}
	return n, nil
}

// Bool resolves a boolean value ("true"/"false", "1"/"0").
func (e *Env) Bool(v artifact.Bool) (bool, error) {
	if v.Runtime == nil {
		return v.Value, nil
	}
	raw, err := e.Value(v.Runtime)
	if err != nil {
		return false, err
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	b, err := strconv.ParseBool(strings.TrimSpace(string(raw)))
	if err != nil {
		return false, fmt.Errorf("the environment variable %s is not true or false", v.Runtime.Env)
	}
	return b, nil
}

// Strings resolves a list of string values.
func (e *Env) Strings(v artifact.Strings) ([]string, error) {
	if v.Runtime != nil {
		raw, err := e.Value(v.Runtime)
		if err != nil {
			return nil, err
		}
		var out []string
		if json.Unmarshal(raw, &out) == nil {
			return out, nil
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
			return out, nil
		}
		return nil, fmt.Errorf("the environment variable %s is not a list of strings", v.Runtime.Env)
	}
	out := make([]string, 0, len(v.Values))
	for _, s := range v.Values {
		r, err := e.String(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Resolve returns a free-form JSON value (config, headers) with every
// runtime reference inside it replaced by its value. A reference is an
// object whose keys are "env" (a string) and at most "default",
// "has_default" and "secret". null or empty input gives null.
func (e *Env) Resolve(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	out, err := e.resolve(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func (e *Env) resolve(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := asRef(x); ok {
			raw, err := e.Value(ref)
			if err != nil {
				return nil, err
			}
			var out any
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			if err := d.Decode(&out); err != nil {
				return nil, err
			}
			return out, nil
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			r, err := e.resolve(val)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			r, err := e.resolve(val)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// asRef reports whether an object is a runtime reference.
func asRef(m map[string]any) (*artifact.RuntimeRef, bool) {
	env, ok := m["env"].(string)
	if !ok || env == "" {
		return nil, false
	}
	for k := range m {
		switch k {
		case "env", "default", "has_default", "secret":
		default:
			return nil, false
		}
	}
	ref := &artifact.RuntimeRef{Env: env}
	if s, ok := m["secret"].(bool); ok {
		ref.Secret = s
	}
	if d, ok := m["default"]; ok && !ref.Secret {
		b, _ := json.Marshal(d)
		ref.Default = b
	}
	return ref, true
}
