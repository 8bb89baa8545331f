package resolve

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/agentform/agentform/internal/manifest"
)

// lookup returns a runtime reference's value from the plan's environment,
// else its default. ok is false when neither exists.
func (r Request) lookup(ref *manifest.RuntimeRef) (cty.Value, bool) {
	if r.Env != nil {
		if v, ok := r.Env(ref.Env); ok {
			return cty.StringVal(v), true
		}
	}
	if ref.HasDefault() {
		return ref.Default, true
	}
	return cty.NilVal, false
}

// envSet reports whether the environment the plan reads sets name (a
// reference then takes its value, not its default).
func (r Request) envSet(name string) bool {
	if r.Env == nil {
		return false
	}
	_, ok := r.Env(name)
	return ok
}

// String returns the value of a string argument for discovery: the literal,
// or a runtime reference read from the environment or its default. ok is
// false when a runtime value is unset and has no default. The result may
// be a secret: use it to reach a server, never write it anywhere.
func (r Request) String(s manifest.String) (string, bool) {
	if s.Runtime == nil {
		return s.Value, s.Set || s.Value != ""
	}
	v, ok := r.lookup(s.Runtime)
	if !ok {
		return "", false
	}
	sv, err := convert.Convert(v, cty.String)
	if err != nil || sv.IsNull() {
		return "", false
	}
	return sv.AsString(), true
}

// Strings returns a list argument's values for discovery, reading
// per-element runtime references (mcp args). missing names the
// environment variables that are unset without a default.
func (r Request) Strings(l manifest.StringList) (values []string, missing []string) {
	if l.Runtime != nil {
		v, ok := r.lookup(l.Runtime)
		if !ok {
			return nil, []string{l.Runtime.Env}
		}
		if v.Type() == cty.String {
			// From the environment: read as serve reads it (serve.Env
			// Strings), a JSON list of strings when the default is a list,
			// else the text split at commas.
			// (A secret's default is withheld from the artifact, so serve
			// splits its text.)
			return envList(v.AsString(), l.Runtime.HasDefault() && !l.Runtime.Secret), nil
		}
		if lv, err := convert.Convert(v, cty.List(cty.String)); err == nil && !lv.IsNull() {
			for it := lv.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				if !ev.IsNull() {
					values = append(values, ev.AsString())
				}
			}
		}
		return values, nil
	}
	for i, s := range l.Values {
		if i < len(l.ElemRuntime) && l.ElemRuntime[i] != nil {
			v, ok := r.lookup(l.ElemRuntime[i])
			if !ok {
				missing = append(missing, l.ElemRuntime[i].Env)
				continue
			}
			sv, err := convert.Convert(v, cty.String)
			if err != nil || sv.IsNull() {
				missing = append(missing, l.ElemRuntime[i].Env)
				continue
			}
			s = sv.AsString()
		}
		values = append(values, s)
	}
	return values, missing
}

// envList is a list-valued runtime reference's environment text as serve
// reads it: a JSON list of strings when the reference has a (list)
// default, else, and when the text is no such list, its comma-separated
// parts, trimmed, empty ones left out.
func envList(text string, listDefault bool) []string {
	if listDefault {
		var out []string
		if json.Unmarshal([]byte(text), &out) == nil {
			return out
		}
	}
	var out []string
	for _, p := range strings.Split(text, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// StringMap returns a string-valued object argument (headers, an MCP
// server's environment) for discovery, reading runtime references.
// missing names the environment variables that are unset without a
// default.
func (r Request) StringMap(d manifest.Dynamic) (values map[string]string, missing []string) {
	values = map[string]string{}
	if d.Value == cty.NilVal || d.Value.IsNull() {
		return values, nil
	}
	if ref, ok := refOf(d.Value); ok {
		return values, []string{ref.Env}
	}
	for it := d.Value.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		if ref, ok := refOf(ev); ok {
			v, ok := r.lookup(ref)
			if !ok {
				missing = append(missing, ref.Env)
				continue
			}
			sv, err := convert.Convert(v, cty.String)
			if err != nil || sv.IsNull() {
				missing = append(missing, ref.Env)
				continue
			}
			values[k.AsString()] = sv.AsString()
			continue
		}
		sv, err := convert.Convert(ev, cty.String)
		if err == nil && !sv.IsNull() {
			values[k.AsString()] = sv.AsString()
		}
	}
	return values, missing
}

func refOf(v cty.Value) (*manifest.RuntimeRef, bool) { return manifest.RuntimeRefOf(v) }

// sentence makes a reason a sentence of its own: its first letter upper
// case, one full stop at the end.
func sentence(reason string) string {
	reason = strings.TrimSuffix(strings.TrimSpace(reason), ".")
	if r, size := utf8.DecodeRuneInString(reason); unicode.IsLower(r) {
		reason = string(unicode.ToUpper(r)) + reason[size:]
	}
	return reason + "."
}

// missingEnvDetail says which runtime values could not be read, naming
// variables only (never values).
func missingEnvDetail(vars []string) string {
	return fmt.Sprintf("The environment variables %q are not set and have no default, so agentform cannot reach the server at plan time.", vars)
}
