package manifest

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// field describes one argument: its name, whether runtime() is accepted,
// and the values it may take.
type field struct {
	name string
	// runtime reports whether runtime() and secret(runtime()) are accepted.
	runtime bool
	// oneOf, when set, lists the allowed values of a string argument.
	oneOf []string
	// min and max bound a whole number (inclusive) when max > min.
	min, max int64
	// elemRuntime accepts runtime() for single list elements (mcp args).
	elemRuntime bool
}

// decoder accumulates diagnostics while reading typed values out of HCL
// bodies. It never panics on any input: every unexpected shape is a
// diagnostic.
type decoder struct {
	// dir is the workspace directory, for file(); "" disables it.
	dir string
	ctx *hcl.EvalContext
	// locals holds the workspace's locals once they are read, so that a
	// reference to an undeclared one gets a precise error.
	locals map[string]*hcl.Attribute
	// providersWritten says that a providers or provider block was
	// written, whether or not it decoded: model.provider then names a
	// declared provider, not a kind.
	providersWritten bool
	diags            hcl.Diagnostics
}

func (d *decoder) add(diags hcl.Diagnostics) { d.diags = append(d.diags, diags...) }

func (d *decoder) errorf(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  &r,
	})
}

func (d *decoder) warnf(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  &r,
	})
}

// eval evaluates an expression; ok is false when evaluation failed (the
// diagnostics are recorded) or the value is unknown.
func (d *decoder) eval(expr hcl.Expression) (cty.Value, bool) {
	if d.locals != nil && !d.checkLocalRefs(expr, d.locals, nil) {
		return cty.NilVal, false
	}
	v, diags := expr.Value(d.ctx)
	explainRuntimeInTemplate(diags)
	d.add(diags)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	if !v.IsWhollyKnown() {
		// Only a local that failed to evaluate yields unknown values; its
		// error is already reported.
		return cty.NilVal, false
	}
	v, err := decodeRuntimeMarkers(v)
	if err != nil {
		d.errorf(expr.Range(), "Invalid runtime marker", "%s.", err)
		return cty.NilVal, false
	}
	return v, true
}

// explainRuntimeInTemplate rewrites HCL's error for a runtime() or
// secret() value written inside a string ("Bearer ${secret(runtime("T"))}"),
// which says only that a string was required, to say what to write
// instead.
func explainRuntimeInTemplate(diags hcl.Diagnostics) {
	for _, diag := range diags {
		if diag.Summary != "Invalid template interpolation value" || diag.Expression == nil {
			continue
		}
		v, _ := diag.Expression.Value(diag.EvalContext)
		if _, ok := refFromValue(v); !ok {
			continue
		}
		diag.Summary = "Runtime value inside a string"
		diag.Detail = "runtime() and secret() stand for a whole value, known only when the agent starts, so they cannot be part of a string. " +
			"Where the argument accepts runtime values, make the whole value the runtime value and set the environment variable to the complete text: " +
			"headers = { Authorization = secret(runtime(\"AUTH_HEADER\")) } rather than \"Bearer ${...}\". " +
			"An mcp or a2a auth_token = secret(runtime(\"TOKEN\")) is sent as \"Bearer <token>\"."
	}
}

// runtimeMarker is the key of agentc's serialised runtime value:
// { "$runtime" = { env = "PORT", default = 8080, secret = false } }.
const runtimeMarker = "$runtime"

// decodeRuntimeMarkers turns serialised runtime values into runtime
// references, exactly as if runtime() or secret(runtime()) had been
// written.
func decodeRuntimeMarkers(v cty.Value) (cty.Value, error) {
	return cty.Transform(v, func(_ cty.Path, v cty.Value) (cty.Value, error) {
		ty := v.Type()
		if v.IsNull() || !ty.IsObjectType() || !ty.HasAttribute(runtimeMarker) {
			return v, nil
		}
		if len(ty.AttributeTypes()) != 1 {
			return v, fmt.Errorf("an object with a %q key describes one runtime value and may have no other keys", runtimeMarker)
		}
		spec := v.GetAttr(runtimeMarker)
		st := spec.Type()
		if spec.IsNull() || !st.IsObjectType() || !st.HasAttribute("env") {
			return v, fmt.Errorf("%q must be an object with env (and optionally default and secret)", runtimeMarker)
		}
		for name := range st.AttributeTypes() {
			if name != "env" && name != "default" && name != "secret" {
				return v, fmt.Errorf("%q has no field %q; its fields are env, default and secret", runtimeMarker, name)
			}
		}
		env := spec.GetAttr("env")
		if env.Type() != cty.String || env.IsNull() {
			return v, fmt.Errorf("the env of %q must be a string", runtimeMarker)
		}
		if err := checkEnvName(env.AsString()); err != nil {
			return v, err
		}
		ref := &RuntimeRef{Env: env.AsString()}
		if st.HasAttribute("default") {
			ref.Default = spec.GetAttr("default")
		}
		if st.HasAttribute("secret") {
			sv, err := convert.Convert(spec.GetAttr("secret"), cty.Bool)
			if err != nil || sv.IsNull() {
				return v, fmt.Errorf("the secret of %q must be true or false", runtimeMarker)
			}
			ref.Secret = sv.True()
		}
		return cty.CapsuleVal(runtimeRefType, ref), nil
	})
}

// runtimeArg evaluates an attribute and separates a runtime reference from
// a literal. It reports a located error when the field does not accept
// runtime values.
func (d *decoder) runtimeArg(attr *hcl.Attribute, f field) (cty.Value, *RuntimeRef, bool) {
	v, ok := d.eval(attr.Expr)
	if !ok {
		return cty.NilVal, nil, false
	}
	if ref, isRef := refFromValue(v); isRef {
		if !f.runtime {
			d.errorf(attr.Expr.Range(), "Runtime value not allowed",
				"The %q argument is read at build time, so it cannot be a runtime() or secret() value. Write the value in the manifest (a local works too).", f.name)
			return cty.NilVal, nil, false
		}
		r := *ref
		r.Range = attr.Expr.Range()
		return cty.NilVal, &r, true
	}
	if containsRef(v) && !(f.elemRuntime && (v.Type().IsTupleType() || v.Type().IsListType())) {
		if !f.runtime {
			d.errorf(attr.Expr.Range(), "Runtime value not allowed",
				"The %q argument is read at build time, so it cannot contain runtime() or secret() values. Write the values in the manifest (a local works too).", f.name)
		} else {
			d.errorf(attr.Expr.Range(), "Runtime value not allowed",
				"The %q argument must be a plain value; runtime() and secret() can only stand for the whole argument here.", f.name)
		}
		return cty.NilVal, nil, false
	}
	return v, nil, true
}

func containsRef(v cty.Value) bool {
	found := false
	_ = cty.Walk(v, func(_ cty.Path, ev cty.Value) (bool, error) {
		if _, ok := refFromValue(ev); ok {
			found = true
			return false, nil
		}
		return !found, nil
	})
	return found
}

// checkDefault type-checks a runtime reference's default against the
// field's type and allowed values.
func (d *decoder) checkDefault(ref *RuntimeRef, ty cty.Type, f field) cty.Value {
	if !ref.HasDefault() {
		return cty.NilVal
	}
	v, err := convert.Convert(ref.Default, ty)
	if err != nil {
		d.errorf(ref.Range, "Invalid runtime default",
			"The default of runtime(%q) for %q must be %s, not %s.", ref.Env, f.name, typeName(ty), friendly(ref.Default))
		return cty.NilVal
	}
	return v
}

func (d *decoder) str(attrs hcl.Attributes, f field, def string) String {
	out := String{Value: def}
	attr, ok := attrs[f.name]
	if !ok {
		return out
	}
	out.Set, out.Range = true, attr.Expr.Range()
	v, ref, ok := d.runtimeArg(attr, f)
	if !ok {
		out.invalid = true
		return out
	}
	if ref != nil {
		out.Runtime = ref
		if dv := d.checkDefault(ref, cty.String, f); dv != cty.NilVal {
			if ref.Secret {
				d.checkSecretOneOf(ref, f, dv.AsString())
			} else if d.checkOneOf(ref.Range, f, dv.AsString()) {
				out.Value = dv.AsString()
			}
		}
		return out
	}
	s, ok := d.toString(attr, f, v)
	if !ok {
		out.invalid = true
		return out
	}
	out.Value = s
	d.checkOneOf(attr.Expr.Range(), f, s)
	return out
}

func (d *decoder) toString(attr *hcl.Attribute, f field, v cty.Value) (string, bool) {
	sv, err := convert.Convert(v, cty.String)
	if err != nil || sv.IsNull() {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"The %q argument must be a string, not %s.", f.name, friendly(v))
		return "", false
	}
	return sv.AsString(), true
}

func (d *decoder) checkOneOf(rng hcl.Range, f field, s string) bool {
	if len(f.oneOf) == 0 {
		return true
	}
	for _, o := range f.oneOf {
		if s == o {
			return true
		}
	}
	d.errorf(rng, fmt.Sprintf("Invalid value for %q", f.name), "%q is not a valid value for %q. Valid values: %s.%s",
		s, f.name, quotedList(f.oneOf), didYouMean(s, f.oneOf))
	return false
}

// checkSecretOneOf is checkOneOf for the default of a secret(), which the
// message must not quote: a secret's value, even its default, appears in
// no output (the JSON diagnostics of validate and plan carry the detail
// without the source line).
func (d *decoder) checkSecretOneOf(ref *RuntimeRef, f field, s string) bool {
	if len(f.oneOf) == 0 || slices.Contains(f.oneOf, s) {
		return true
	}
	d.errorf(ref.Range, fmt.Sprintf("Invalid value for %q", f.name), "The default of secret(runtime(%q)) is not a valid value for %q (a secret's value is not shown). Valid values: %s.",
		ref.Env, f.name, quotedList(f.oneOf))
	return false
}

func (d *decoder) boolean(attrs hcl.Attributes, f field, def bool) Bool {
	out := Bool{Value: def}
	attr, ok := attrs[f.name]
	if !ok {
		return out
	}
	out.Set, out.Range = true, attr.Expr.Range()
	v, ref, ok := d.runtimeArg(attr, f)
	if !ok {
		return out
	}
	if ref != nil {
		out.Runtime = ref
		if dv := d.checkDefault(ref, cty.Bool, f); dv != cty.NilVal && !ref.Secret {
			out.Value = dv.True()
		}
		return out
	}
	bv, err := convert.Convert(v, cty.Bool)
	if err != nil || bv.IsNull() {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"The %q argument must be true or false, not %s.", f.name, friendly(v))
		return out
	}
	out.Value = bv.True()
	return out
}

func (d *decoder) integer(attrs hcl.Attributes, f field, def int64) Int {
	out := Int{Value: def}
	attr, ok := attrs[f.name]
	if !ok {
		return out
	}
	out.Set, out.Range = true, attr.Expr.Range()
	v, ref, ok := d.runtimeArg(attr, f)
	if !ok {
		return out
	}
	if ref != nil {
		out.Runtime = ref
		if dv := d.checkDefault(ref, cty.Number, f); dv != cty.NilVal {
			if ref.Secret {
				d.checkSecretWholeNumber(ref, f, dv)
			} else if n, ok := d.wholeNumber(ref.Range, f, dv); ok {
				out.Value = n
			}
		}
		return out
	}
	nv, err := convert.Convert(v, cty.Number)
	if err != nil || nv.IsNull() {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"The %q argument must be a whole number, not %s.", f.name, friendly(v))
		return out
	}
	if n, ok := d.wholeNumber(attr.Expr.Range(), f, nv); ok {
		out.Value = n
	}
	return out
}

// checkSecretWholeNumber is wholeNumber for the default of a secret(),
// which the message must not quote (checkSecretOneOf).
func (d *decoder) checkSecretWholeNumber(ref *RuntimeRef, f field, v cty.Value) {
	bf := v.AsBigFloat()
	n, acc := bf.Int64()
	if bf.IsInt() && acc == big.Exact && (f.max <= f.min || n >= f.min && n <= f.max) {
		return
	}
	want := "a whole number"
	if f.max > f.min {
		want = fmt.Sprintf("a whole number between %d and %d", f.min, f.max)
	}
	d.errorf(ref.Range, fmt.Sprintf("Invalid value for %q", f.name), "The default of secret(runtime(%q)) for %q must be %s (a secret's value is not shown).", ref.Env, f.name, want)
}

func (d *decoder) wholeNumber(rng hcl.Range, f field, v cty.Value) (int64, bool) {
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		d.errorf(rng, fmt.Sprintf("Invalid value for %q", f.name), "The %q argument must be a whole number, not %s.", f.name, bf.Text('g', -1))
		return 0, false
	}
	n, acc := bf.Int64()
	if acc != big.Exact {
		d.errorf(rng, fmt.Sprintf("Invalid value for %q", f.name), "The %q argument is out of range.", f.name)
		return 0, false
	}
	if f.max > f.min && (n < f.min || n > f.max) {
		d.errorf(rng, fmt.Sprintf("Invalid value for %q", f.name), "The %q argument must be between %d and %d, not %d.", f.name, f.min, f.max, n)
		return 0, false
	}
	return n, true
}

func (d *decoder) strList(attrs hcl.Attributes, f field) StringList {
	var out StringList
	attr, ok := attrs[f.name]
	if !ok {
		return out
	}
	out.Set, out.Range = true, attr.Expr.Range()
	v, ref, ok := d.runtimeArg(attr, f)
	if !ok {
		return out
	}
	if ref != nil {
		out.Runtime = ref
		if dv := d.checkDefault(ref, cty.List(cty.String), f); dv != cty.NilVal && !ref.Secret {
			out.Values = listStrings(dv)
		}
		return out
	}
	if f.elemRuntime && (v.Type().IsTupleType() || v.Type().IsListType()) && containsRef(v) {
		return d.strListWithRefs(attr, f, v, out)
	}
	lv, err := convert.Convert(v, cty.List(cty.String))
	if err != nil && !v.IsNull() && v.IsKnown() && (v.Type().IsTupleType() || v.Type().IsListType() || v.Type().IsSetType()) {
		// A list, but an element is no string: say which, where it is,
		// rather than "must be a list of strings, not a list".
		ranges := elemRanges(attr.Expr, v.LengthInt())
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			if _, ev := it.Element(); !ev.IsNull() {
				if _, err := convert.Convert(ev, cty.String); err != nil {
					d.errorf(ranges[i], "Incorrect attribute value type",
						"Element %d of %q must be a string, not %s.", i+1, f.name, friendly(ev))
					return out
				}
			}
		}
	}
	if err != nil || lv.IsNull() {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"The %q argument must be a list of strings, not %s.", f.name, friendly(v))
		return out
	}
	out.Values = listStrings(lv)
	out.ElemRanges = elemRanges(attr.Expr, len(out.Values))
	for i, s := range out.Values {
		d.checkOneOf(out.ElemRanges[i], f, s)
	}
	return out
}

// strListWithRefs reads a list some of whose elements are runtime
// references (mcp args).
func (d *decoder) strListWithRefs(attr *hcl.Attribute, f field, v cty.Value, out StringList) StringList {
	n := v.LengthInt()
	out.ElemRanges = elemRanges(attr.Expr, n)
	out.ElemRuntime = make([]*RuntimeRef, n)
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		if ref, ok := refFromValue(ev); ok {
			r := *ref
			r.Range = out.ElemRanges[i]
			out.ElemRuntime[i] = &r
			out.Values = append(out.Values, "")
			d.checkDefault(&r, cty.String, field{name: fmt.Sprintf("%s[%d]", f.name, i)})
			continue
		}
		sv, err := convert.Convert(ev, cty.String)
		if err != nil || sv.IsNull() {
			d.errorf(out.ElemRanges[i], "Incorrect attribute value type",
				"Element %d of %q must be a string or a runtime() value, not %s.", i+1, f.name, friendly(ev))
			out.Values = append(out.Values, "")
			continue
		}
		out.Values = append(out.Values, sv.AsString())
	}
	return out
}

func listStrings(v cty.Value) []string {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	out := make([]string, 0, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.IsNull() {
			out = append(out, "")
			continue
		}
		out = append(out, ev.AsString())
	}
	return out
}

// elemRanges returns the range of each element of a list expression, or the
// whole expression's range when the elements cannot be told apart (a local
// reference, JSON syntax).
func elemRanges(expr hcl.Expression, n int) []hcl.Range {
	out := make([]hcl.Range, n)
	exprs, diags := hcl.ExprList(expr)
	for i := range out {
		if !diags.HasErrors() && len(exprs) == n {
			out[i] = exprs[i].Range()
		} else {
			out[i] = expr.Range()
		}
	}
	return out
}

// dynamic reads a free-form object argument whose values may be runtime
// references anywhere inside.
func (d *decoder) dynamic(attrs hcl.Attributes, f field) Dynamic {
	var out Dynamic
	attr, ok := attrs[f.name]
	if !ok {
		return out
	}
	out.Set, out.Range = true, attr.Expr.Range()
	v, ok := d.eval(attr.Expr)
	if !ok {
		return out
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"The %q argument must be an object, like { key = \"value\" }, not %s.", f.name, friendly(v))
		return out
	}
	if !f.runtime && containsRef(v) {
		d.errorf(attr.Expr.Range(), "Runtime value not allowed",
			"The %q argument is read at build time, so it cannot contain runtime() or secret() values.", f.name)
		return out
	}
	out.Value = v
	return out
}

// stringMap reads an object argument whose values are strings or runtime
// references (headers, environment maps).
func (d *decoder) stringMap(attrs hcl.Attributes, f field) Dynamic {
	out := d.dynamic(attrs, f)
	if out.Value == cty.NilVal {
		return out
	}
	for it := out.Value.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		if ref, ok := refFromValue(ev); ok {
			// Its default, if any, must be a string too: a list or an
			// object cannot be a header or an environment value.
			r := *ref
			r.Range = subRange(attrs[f.name].Expr, k.AsString())
			d.checkDefault(&r, cty.String, field{name: f.name + "." + k.AsString()})
			continue
		}
		if _, err := convert.Convert(ev, cty.String); err != nil || ev.IsNull() || !ev.Type().IsPrimitiveType() {
			d.errorf(subRange(attrs[f.name].Expr, k.AsString()), "Incorrect attribute value type",
				"Every value of %q must be a string or a runtime() value; %q is %s.", f.name, k.AsString(), friendly(ev))
			out.Value = cty.NilVal
			return out
		}
	}
	return out
}

// singleBlock returns the only block of a type among blocks, reporting
// duplicates.
func (d *decoder) singleBlock(blocks hcl.Blocks, typ string) *hcl.Block {
	var first *hcl.Block
	for _, b := range blocks {
		if b.Type != typ {
			continue
		}
		if first != nil {
			d.errorf(b.DefRange, fmt.Sprintf("Duplicate %s block", typ),
				"Only one %s block is allowed here; another was already declared at %s.", typ, first.DefRange)
			continue
		}
		first = b
	}
	return first
}

func friendly(v cty.Value) string {
	if _, ok := refFromValue(v); ok {
		return "a runtime value"
	}
	if v.IsNull() {
		return "null"
	}
	return typeName(v.Type())
}

// typeName names a type as the manifest writes its values, with an
// article: HCL's own names ("tuple" for ["a"], "object" for a map) are
// its internals, and a bracketed list is what users call a list.
func typeName(ty cty.Type) string {
	switch {
	case ty == cty.String:
		return "a string"
	case ty == cty.Number:
		return "a number"
	case ty == cty.Bool:
		return "a bool"
	case ty.IsTupleType() || ty.IsListType() || ty.IsSetType():
		return "a list"
	case ty.IsObjectType() || ty.IsMapType():
		return "an object"
	}
	return ty.FriendlyName()
}

func quotedList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// didYouMean suggests the closest of the candidates to given, as a sentence
// starting with a space, or "" when none is close.
func didYouMean(given string, candidates []string) string {
	if s := nameSuggestion(given, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

// Suggest returns the candidate closest to given, which it likely meant,
// or "" when none is close (as didYouMean chooses).
func Suggest(given string, candidates []string) string { return nameSuggestion(given, candidates) }

func nameSuggestion(given string, candidates []string) string {
	// One that differs only in case ("get" for "GET") is what was meant.
	for _, c := range candidates {
		if strings.EqualFold(given, c) {
			return c
		}
	}
	// A candidate that starts with what was written ("host" for
	// "hostname") is the likeliest meaning.
	for _, c := range candidates {
		if len(given) >= 3 && strings.HasPrefix(c, given) {
			return c
		}
	}
	best, bestDist := "", 3
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		if dist := levenshtein.Distance(given, c, nil); dist < bestDist {
			best, bestDist = c, dist
		}
	}
	return best
}

// subRange returns the range of the part of a list or object constructor
// expression reached by steps (int for list elements, string for object
// keys), or of the deepest part it could reach. Diagnostics about one
// element or key point there rather than at the whole argument.
func subRange(expr hcl.Expression, steps ...any) hcl.Range {
	return exprAt(expr, steps...).Range()
}

// exprAt descends into list and object constructors by steps (see
// subRange) and returns the deepest expression reached.
func exprAt(expr hcl.Expression, steps ...any) hcl.Expression {
	for _, step := range steps {
		switch s := step.(type) {
		case int:
			items, diags := hcl.ExprList(expr)
			if diags.HasErrors() || s < 0 || s >= len(items) {
				return expr
			}
			expr = items[s]
		case string:
			pairs, diags := hcl.ExprMap(expr)
			if diags.HasErrors() {
				return expr
			}
			next := expr
			for _, kv := range pairs {
				if keyName(kv.Key) == s {
					next = kv.Value
					break
				}
			}
			if next == expr {
				return expr
			}
			expr = next
		}
	}
	return expr
}

// keyRange returns the range of an object key, for diagnostics about the
// key itself (an unknown or invalid name).
func keyRange(expr hcl.Expression, key string) hcl.Range {
	pairs, diags := hcl.ExprMap(expr)
	if diags.HasErrors() {
		return expr.Range()
	}
	for _, kv := range pairs {
		if keyName(kv.Key) == key {
			return kv.Key.Range()
		}
	}
	return expr.Range()
}

// keyName returns an object key written as a bare name or a quoted string,
// or "" when it is neither.
func keyName(expr hcl.Expression) string {
	if k := hcl.ExprAsKeyword(expr); k != "" {
		return k
	}
	v, diags := expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}
