package manifest

import (
	"encoding/json"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// RuntimeRef is a value supplied when the agent starts: runtime("ENV") or
// runtime("ENV", default), optionally wrapped in secret(). agentform never
// resolves it into anything it writes; plans, artifacts, the lockfile and
// state keep the reference.
type RuntimeRef struct {
	// Env is the environment variable that supplies the value.
	Env string
	// Default is the value used when Env is unset; cty.NilVal when there is
	// none. A secret's default is as sensitive as its value: MarshalJSON
	// never writes it.
	Default cty.Value
	// Secret marks the value sensitive (secret(runtime(...))).
	Secret bool
	// Range is where the reference is written.
	Range hcl.Range
}

// HasDefault reports whether the reference carries a default value.
func (r *RuntimeRef) HasDefault() bool {
	return r != nil && r.Default != cty.NilVal && !r.Default.IsNull()
}

// MarshalJSON renders the reference as {"env": ..., "default": ..., "secret":
// true}. The default of a secret reference is replaced by "has_default" so
// that no secret material is ever serialised.
func (r *RuntimeRef) MarshalJSON() ([]byte, error) {
	out := map[string]any{"env": r.Env}
	if r.Secret {
		out["secret"] = true
		if r.HasDefault() {
			out["has_default"] = true
		}
	} else if r.HasDefault() {
		raw, err := ctyjson.Marshal(r.Default, r.Default.Type())
		if err != nil {
			return nil, err
		}
		out["default"] = json.RawMessage(raw)
	}
	return json.Marshal(out)
}

// String is a string argument. When Runtime is set the value is known only
// at runtime and Value holds nothing (or the non-secret default, for
// convenience of callers that want a best guess).
type String struct {
	Value   string
	Runtime *RuntimeRef
	// Set reports whether the argument was written in the manifest; Value
	// holds the default otherwise.
	Set   bool
	Range hcl.Range
	// invalid marks an argument whose value could not be read; its error
	// is already reported, so later checks stay quiet about it.
	invalid bool
}

// Known reports whether the value is fixed at build time.
func (s String) Known() bool { return s.Runtime == nil }

// literal reports whether the argument was written with a value that was
// read successfully and is fixed at build time.
func (s String) literal() bool { return s.Set && !s.invalid && s.Runtime == nil }

// Bool is a boolean argument that may be known only at runtime.
type Bool struct {
	Value   bool
	Runtime *RuntimeRef
	Set     bool
	Range   hcl.Range
}

// Known reports whether the value is fixed at build time.
func (b Bool) Known() bool { return b.Runtime == nil }

// Int is a whole-number argument that may be known only at runtime.
type Int struct {
	Value   int64
	Runtime *RuntimeRef
	Set     bool
	Range   hcl.Range
}

// Known reports whether the value is fixed at build time.
func (i Int) Known() bool { return i.Runtime == nil }

// StringList is a list-of-strings argument that may be known only at
// runtime as a whole.
type StringList struct {
	Values  []string
	Runtime *RuntimeRef
	Set     bool
	Range   hcl.Range
	// ElemRanges holds the range of each element written in the manifest,
	// parallel to Values, for located diagnostics about one element.
	ElemRanges []hcl.Range
	// ElemRuntime, when not nil, is parallel to Values and holds the
	// runtime reference of each element known only at runtime (mcp args).
	ElemRuntime []*RuntimeRef
}

// Known reports whether the list is fixed at build time.
func (l StringList) Known() bool { return l.Runtime == nil }

// ElemRange returns where element i is written: its own range, or the
// whole list's when the elements cannot be told apart.
func (l StringList) ElemRange(i int) hcl.Range {
	if i < len(l.ElemRanges) {
		return l.ElemRanges[i]
	}
	return l.Range
}

// Dynamic is a free-form value (tool config, headers, provider params)
// whose parts may be runtime references. Runtime references inside it are
// stored as capsule values; use Refs to list them and JSON to serialise
// them as references.
type Dynamic struct {
	Value cty.Value
	Set   bool
	Range hcl.Range
}

// Refs returns every runtime reference inside the value, in a stable order.
func (d Dynamic) Refs() []*RuntimeRef {
	var refs []*RuntimeRef
	if d.Value == cty.NilVal {
		return nil
	}
	_ = cty.Walk(d.Value, func(_ cty.Path, v cty.Value) (bool, error) {
		if ref, ok := refFromValue(v); ok {
			refs = append(refs, ref)
			return false, nil
		}
		return true, nil
	})
	return refs
}

// JSON returns the value as plain Go data ready for encoding/json: objects
// become map[string]any, runtime references become *RuntimeRef (which
// marshal as references, never values).
func (d Dynamic) JSON() any {
	if d.Value == cty.NilVal {
		return nil
	}
	return ctyToGo(d.Value)
}

func ctyToGo(v cty.Value) any {
	if ref, ok := refFromValue(v); ok {
		return ref
	}
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString()
	case ty == cty.Bool:
		return v.True()
	case ty == cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); acc == 0 {
			return i
		}
		f, _ := bf.Float64()
		return f
	case ty.IsObjectType() || ty.IsMapType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out[k.AsString()] = ctyToGo(ev)
		}
		return out
	case ty.IsTupleType() || ty.IsListType() || ty.IsSetType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			out = append(out, ctyToGo(ev))
		}
		return out
	}
	return nil
}

// sortedKeys returns the keys of a map in ascending order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// RuntimeRefOf returns the runtime reference a value stands for, if it is
// one (inside a Dynamic, runtime references are capsule values).
func RuntimeRefOf(v cty.Value) (*RuntimeRef, bool) { return refFromValue(v) }
