package manifest

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/agentform/agentform/internal/pathfold"
)

// decodeLocals evaluates every locals block in dependency order and returns
// them as one object value for locals.NAME references.
func (d *decoder) decodeLocals(cfg *Config, blocks hcl.Blocks) cty.Value {
	attrs := map[string]*hcl.Attribute{}
	for _, b := range blocks {
		if b.Type != "locals" {
			continue
		}
		as, diags := b.Body.JustAttributes()
		d.add(diags)
		for _, name := range sortedKeys(as) {
			a := as[name]
			if prev, dup := attrs[name]; dup {
				d.errorf(a.NameRange, fmt.Sprintf("Duplicate local %q", name),
					"A local named %q was already defined at %s. Local names must be unique across all locals blocks.", name, prev.NameRange)
				continue
			}
			attrs[name] = a
			cfg.Locals[name] = &Local{Name: name, Range: a.Range}
		}
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{},
		Functions: map[string]function.Function{
			"runtime": buildTimeFunc("runtime", "locals"),
			"secret":  buildTimeFunc("secret", "locals"),
			"file":    d.fileFunc(),
		},
	}
	defer func() { d.locals = attrs }()
	values := map[string]cty.Value{}
	deps := map[string][]string{}
	for name, attr := range attrs {
		for _, ref := range localRefs(attr.Expr) {
			if _, defined := attrs[ref.name]; defined {
				deps[name] = append(deps[name], ref.name)
			}
		}
	}
	// Evaluated in dependency order (Kahn's algorithm, ties in name
	// order), each with only the locals it refers to in scope: a chain
	// of thousands of locals costs no more than as many separate ones.
	// A local that reads locals as a whole (for k, v in locals,
	// locals[<computed key>]) waits until nothing else can be
	// evaluated, and then sees every local evaluated so far.
	names := sortedKeys(attrs)
	waiting := make(map[string]int, len(names))
	dependentsOf := map[string][]string{}
	whole := map[string]bool{}
	for _, name := range names {
		seen := map[string]bool{}
		for _, dep := range deps[name] {
			if !seen[dep] {
				seen[dep] = true
				waiting[name]++
				dependentsOf[dep] = append(dependentsOf[dep], name)
			}
		}
		whole[name] = readsAllLocals(attrs[name].Expr)
	}
	var queue, held []string
	for _, name := range names {
		if waiting[name] == 0 {
			queue = append(queue, name)
		}
	}
	budget := &localsBudget{}
	for len(queue) > 0 || len(held) > 0 {
		if len(queue) == 0 {
			queue, held = held[:1], held[1:]
		}
		name := queue[0]
		queue = queue[1:]
		if whole[name] && len(queue) > 0 {
			held = append(held, name)
			continue
		}
		values[name] = d.evalLocal(name, attrs, deps, values, ctx, whole[name], budget)
		for _, next := range dependentsOf[name] {
			if waiting[next]--; waiting[next] == 0 {
				queue = append(queue, next)
			}
		}
	}
	// What is left is on a cycle or depends on one. Only the locals on a
	// cycle are reported; locals that merely depend on one stay unknown,
	// and their uses stay quiet.
	for _, name := range names {
		if _, done := values[name]; done {
			continue
		}
		if path := cyclePath(name, deps); path != nil {
			d.errorf(attrs[name].Expr.Range(), "Cycle in locals",
				"The local %q depends on itself: %s. Break the cycle by writing one of these values directly.", name, strings.Join(path, " → "))
		}
		values[name] = cty.DynamicVal
	}
	return cty.ObjectVal(values)
}

// evalLocal evaluates the local name, whose dependencies have values,
// with those alone as locals in scope (an expression that names locals
// as a whole sees them all); an error or a runtime value gives an
// unknown value, reported.
func (d *decoder) evalLocal(name string, attrs map[string]*hcl.Attribute, deps map[string][]string, values map[string]cty.Value, ctx *hcl.EvalContext, whole bool, budget *localsBudget) cty.Value {
	self := func() []string { return append(dependents(name, deps), name) }
	if !d.checkLocalRefs(attrs[name].Expr, attrs, self) {
		return cty.DynamicVal
	}
	scope := values
	if !whole {
		scope = make(map[string]cty.Value, len(deps[name]))
		for _, dep := range deps[name] {
			scope[dep] = values[dep]
		}
	}
	ctx.Variables["locals"] = cty.ObjectVal(scope)
	v, diags := attrs[name].Expr.Value(ctx)
	for _, diag := range diags {
		if diag.Summary == "Error in function call" && strings.Contains(diag.Detail, "cannot be used in locals") {
			fn := "runtime"
			if strings.Contains(diag.Detail, "secret()") {
				fn = "secret"
			}
			diag.Summary = "Runtime value in locals"
			diag.Detail = fmt.Sprintf("The local %q calls %s(), but locals are build-time constants and cannot hold values known only at runtime. Write %s(...) in the argument that needs the value instead of in the local.", name, fn, fn)
		}
	}
	d.add(diags)
	if diags.HasErrors() {
		return cty.DynamicVal
	}
	// Locals built from locals can double at each step (30 of them would
	// fill any memory before anything else saw the value), and many can
	// copy one large one.
	size := valueSize(v, MaxLocalSize)
	if size > MaxLocalSize {
		d.errorf(attrs[name].Expr.Range(), "Local value too large",
			"The local %q is larger than %d MiB (its strings, and one unit for each number, boolean and element). Locals hold prompts and settings, not data sets; build it from fewer or smaller parts.", name, MaxLocalSize>>20)
		return cty.DynamicVal
	}
	if budget.total += size; budget.total > MaxLocalsSize {
		if !budget.reported {
			budget.reported = true
			d.errorf(attrs[name].Expr.Range(), "Locals too large",
				"With the local %q, the locals of this workspace hold more than %d MiB in all (their strings, and one unit for each number, boolean and element). Locals hold prompts and settings, not data sets; build them from fewer or smaller parts.", name, MaxLocalsSize>>20)
		}
		return cty.DynamicVal
	}
	if holdsRuntimeMarker(v) {
		// The serialised form of a runtime value is one too.
		d.errorf(attrs[name].Expr.Range(), "Runtime value in locals",
			"The local %q holds a serialised runtime value (an object with a %q key), but locals are build-time constants and cannot hold values known only at runtime. Write runtime(...) in the argument that needs the value instead of in the local.", name, runtimeMarker)
		return cty.DynamicVal
	}
	return v
}

// MaxLocalSize bounds a local's value, as valueSize measures it: twice
// what a manifest file may hold; MaxLocalsSize bounds all of them.
const (
	MaxLocalSize  = 2 * MaxFileSize
	MaxLocalsSize = 4 * MaxLocalSize
)

// localsBudget counts the size of the locals evaluated so far.
type localsBudget struct {
	total    int
	reported bool
}

// valueSize measures v: its strings' bytes plus one for every other
// primitive and every element (and the bytes of object keys), counted
// until limit is passed (a value is never walked further than that, and
// a result above limit means only that).
func valueSize(v cty.Value, limit int) int {
	v, _ = v.UnmarkDeep()
	size := 0
	var walk func(v cty.Value)
	walk = func(v cty.Value) {
		size++
		switch {
		case v.IsNull() || !v.IsKnown():
		case v.Type() == cty.String:
			size += len(v.AsString())
		case v.CanIterateElements():
			for it := v.ElementIterator(); it.Next() && size <= limit; {
				k, e := it.Element()
				if k.Type() == cty.String {
					size += len(k.AsString())
				}
				walk(e)
			}
		}
	}
	walk(v)
	return size
}

// readsAllLocals reports whether an expression reads locals as a whole
// (for k, v in locals, locals[<computed key>], keys(locals)) rather than
// by name (locals.x, locals["x"]).
func readsAllLocals(expr hcl.Expression) bool {
	for _, tr := range expr.Variables() {
		if tr.RootName() != "locals" {
			continue
		}
		if len(tr) < 2 {
			return true
		}
		switch step := tr[1].(type) {
		case hcl.TraverseAttr:
		case hcl.TraverseIndex:
			if step.Key.Type() != cty.String {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// localRef is a reference to locals.NAME (or locals["NAME"]).
type localRef struct {
	name string
	rng  hcl.Range
}

// localRefs lists the locals an expression refers to.
func localRefs(expr hcl.Expression) []localRef {
	var out []localRef
	for _, tr := range expr.Variables() {
		if tr.RootName() != "locals" || len(tr) < 2 {
			continue
		}
		switch step := tr[1].(type) {
		case hcl.TraverseAttr:
			out = append(out, localRef{step.Name, tr.SourceRange()})
		case hcl.TraverseIndex:
			if step.Key.Type() == cty.String && step.Key.IsKnown() && !step.Key.IsNull() {
				out = append(out, localRef{step.Key.AsString(), tr.SourceRange()})
			}
		}
	}
	return out
}

// holdsRuntimeMarker reports whether v holds, at any depth, an object
// with the key of agentc's serialised runtime value.
func holdsRuntimeMarker(v cty.Value) bool {
	found := false
	_ = cty.Walk(v, func(_ cty.Path, v cty.Value) (bool, error) {
		if !v.IsNull() && v.Type().IsObjectType() && v.Type().HasAttribute(runtimeMarker) {
			found = true
		}
		return !found, nil
	})
	return found
}

// checkLocalRefs reports references to locals that are not defined, with a
// suggestion, before HCL reports them as a missing object attribute.
// Where expr is a local's value, self lists that local and those built
// from it (nil elsewhere): they are never suggested, since referring to
// one would make a cycle.
func (d *decoder) checkLocalRefs(expr hcl.Expression, attrs map[string]*hcl.Attribute, self func() []string) bool {
	ok := true
	for _, ref := range localRefs(expr) {
		if _, defined := attrs[ref.name]; defined {
			continue
		}
		ok = false
		var excluded []string
		if self != nil {
			excluded = self()
		}
		names := slices.DeleteFunc(sortedKeys(attrs), func(n string) bool { return slices.Contains(excluded, n) })
		d.errorf(ref.rng, "Reference to undeclared local value",
			"There is no local named %q in this workspace.%s Declare it in a locals block.", ref.name, didYouMean(ref.name, names))
	}
	return ok
}

// dependents lists the locals whose values use name, directly or
// through others: suggesting one of them in name's value would make a
// cycle.
func dependents(name string, deps map[string][]string) []string {
	var out []string
	for other := range deps {
		if other != name && slices.Contains(reachable(other, deps), name) {
			out = append(out, other)
		}
	}
	return out
}

// reachable lists the locals start's value uses, directly or through
// others.
func reachable(start string, deps map[string][]string) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(string)
	walk = func(n string) {
		for _, dep := range deps[n] {
			if !seen[dep] {
				seen[dep] = true
				out = append(out, dep)
				walk(dep)
			}
		}
	}
	walk(start)
	return out
}

// cyclePath returns the cycle through start as a list of names that begins
// and ends with start, or nil when start is not on a cycle.
func cyclePath(start string, deps map[string][]string) []string {
	seen := map[string]bool{}
	var walk func(name string, path []string) []string
	walk = func(name string, path []string) []string {
		for _, dep := range deps[name] {
			if dep == start {
				return append(path, dep)
			}
			if !seen[dep] {
				seen[dep] = true
				if p := walk(dep, append(path, dep)); p != nil {
					return p
				}
			}
		}
		return nil
	}
	return walk(start, []string{start})
}

// EvalContext returns an evaluation context with the workspace's locals and
// the given functions, for evaluating check conditions.
func (c *Config) EvalContext(funcs map[string]function.Function) *hcl.EvalContext {
	locals := c.localValues
	if locals == cty.NilVal {
		locals = cty.EmptyObjectVal
	}
	return &hcl.EvalContext{Variables: map[string]cty.Value{"locals": locals}, Functions: funcs}
}

var (
	buildOS   = []string{"linux", "mac_os", "windows"}
	buildArch = []string{"x86_64", "aarch64"}
)

func (d *decoder) decodeBuild(b *hcl.Block) *Build {
	content, diags := d.content(b.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "archetype"}, {Name: "os"}, {Name: "arch"},
	}})
	d.add(diags)
	out := &Build{DeclRange: b.DefRange}
	if content == nil {
		return out
	}
	a := content.Attributes
	out.Archetype = d.str(a, field{name: "archetype", oneOf: []string{"standalone"}}, "standalone")
	out.OS = d.str(a, field{name: "os", oneOf: buildOS}, "")
	out.Arch = d.str(a, field{name: "arch", oneOf: buildArch}, "")
	if out.OS.Set != out.Arch.Set {
		set, missing := "os", "arch"
		rng := out.OS.Range
		if out.Arch.Set {
			set, missing, rng = "arch", "os", out.Arch.Range
		}
		d.errorf(rng, fmt.Sprintf("Missing %q", missing),
			"The build block sets %q but not %q. Set both to cross-compile for a target, or neither to build for this host.", set, missing)
	}
	return out
}

func (d *decoder) decodeRuntime(b *hcl.Block) *RuntimeBlock {
	content, diags := d.content(b.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "default_tenant_id"}}})
	d.add(diags)
	out := &RuntimeBlock{DeclRange: b.DefRange}
	if content != nil {
		out.DefaultTenantID = d.str(content.Attributes, field{name: "default_tenant_id", runtime: true}, "default")
	}
	return out
}

// ProviderNames lists the model provider kinds the manifest language knows.
var ProviderNames = []string{"anthropic", "gemini", "huggingface", "ollama", "openai", "openrouter", "xai"}

// providerConfigFields lists the config fields of each provider kind.
var providerConfigFields = map[string][]string{
	"anthropic":   {"api_key", "base_url"},
	"gemini":      {"api_key"},
	"huggingface": {"api_key", "base_url"},
	"ollama":      {"base_url"},
	"openai":      {"api_key", "base_url"},
	"openrouter":  {"api_key"},
	"xai":         {"api_key"},
}

// inferenceParams lists the inference parameters every provider accepts.
var inferenceParams = []string{"frequency_penalty", "max_tokens", "presence_penalty", "provider_params", "seed", "stop_sequences", "temperature", "top_k", "top_p"}

// decodeProviders reads the providers block: one sub-block per provider
// kind, named after the kind.
func (d *decoder) decodeProviders(b *hcl.Block, out map[string]*Provider) {
	var schema hcl.BodySchema
	for _, name := range ProviderNames {
		schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{Type: name})
	}
	content, diags := d.content(b.Body, &schema)
	d.add(diags)
	if content == nil {
		return
	}
	for _, pb := range content.Blocks {
		if prev, dup := out[pb.Type]; dup {
			d.errorf(pb.DefRange, fmt.Sprintf("Duplicate provider %q", pb.Type),
				"The provider %q was already configured at %s.", pb.Type, prev.DeclRange)
			continue
		}
		out[pb.Type] = d.decodeProvider(pb, pb.Type, pb.Type)
	}
}

// decodeLabeledProvider reads a provider "label" { kind = "..." } block,
// agentc's newer syntax: several providers of one kind under distinct
// labels.
func (d *decoder) decodeLabeledProvider(b *hcl.Block, out map[string]*Provider) {
	label := b.Labels[0]
	kc, diags := d.partialContent(b.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "kind", Required: true}}})
	d.add(diags)
	if kc == nil || diags.HasErrors() {
		return
	}
	kind := d.str(kc.Attributes, field{name: "kind", oneOf: ProviderNames}, "")
	if !slices.Contains(ProviderNames, kind.Value) {
		// Registered anyway, so agents naming it get no second error.
		if _, dup := out[label]; !dup {
			out[label] = &Provider{Name: label, DeclRange: b.DefRange}
		}
		return
	}
	if prev, dup := out[label]; dup {
		d.errorf(b.LabelRanges[0], fmt.Sprintf("Duplicate provider %q", label),
			"A provider named %q was already configured at %s.", label, prev.DeclRange)
		return
	}
	out[label] = d.decodeProvider(b, label, kind.Value)
}

func (d *decoder) decodeProvider(b *hcl.Block, name, kind string) *Provider {
	schema := &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "models"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "config"}, {Type: "params"}},
	}
	if len(b.Labels) > 0 {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: "kind"})
	}
	content, diags := d.content(b.Body, schema)
	d.add(diags)
	p := &Provider{Name: name, Kind: kind, DeclRange: b.DefRange}
	if content == nil {
		return p
	}
	if attr, ok := content.Attributes["models"]; ok {
		p.Models, p.ModelParams = d.decodeModels(attr)
	}
	if cb := d.singleBlock(content.Blocks, "config"); cb != nil {
		p.Config = d.freeBlock(cb, providerConfigFields[kind], fmt.Sprintf("the config of a provider of kind %q", kind), nil)
	}
	if pb := d.singleBlock(content.Blocks, "params"); pb != nil {
		p.Params = d.freeBlock(pb, inferenceParams, "provider params", inferenceParamProblem)
	}
	return p
}

// decodeModels reads a provider's models allow-list, whose entries are
// model names or { name = "...", params = { ... } } objects.
func (d *decoder) decodeModels(attr *hcl.Attribute) (StringList, map[string]Dynamic) {
	out := StringList{Set: true, Range: attr.Expr.Range()}
	params := map[string]Dynamic{}
	v, _, ok := d.runtimeArg(attr, field{name: "models"})
	if !ok {
		return out, params
	}
	if !v.Type().IsTupleType() && !v.Type().IsListType() {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"The \"models\" argument must be a list of model names (or { name, params } objects), not %s.", friendly(v))
		return out, params
	}
	ranges := elemRanges(attr.Expr, v.LengthInt())
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		rng := ranges[i]
		if sv, err := convert.Convert(ev, cty.String); err == nil && !sv.IsNull() && ev.Type().IsPrimitiveType() {
			out.Values = append(out.Values, sv.AsString())
			out.ElemRanges = append(out.ElemRanges, rng)
			continue
		}
		if !ev.Type().IsObjectType() || !ev.Type().HasAttribute("name") {
			d.errorf(rng, "Invalid model entry",
				"Each entry of \"models\" is a model name or an object { name = \"...\", params = { ... } }; entry %d is %s.", i+1, friendly(ev))
			continue
		}
		for an := range ev.Type().AttributeTypes() {
			if an != "name" && an != "params" {
				d.errorf(rng, "Invalid model entry", "A model entry has only \"name\" and \"params\"; entry %d has %q.", i+1, an)
			}
		}
		nv, err := convert.Convert(ev.GetAttr("name"), cty.String)
		if err != nil || nv.IsNull() {
			d.errorf(rng, "Invalid model entry", "The name of model entry %d must be a string.", i+1)
			continue
		}
		out.Values = append(out.Values, nv.AsString())
		out.ElemRanges = append(out.ElemRanges, rng)
		if ev.Type().HasAttribute("params") {
			pv := ev.GetAttr("params")
			if !pv.Type().IsObjectType() {
				d.errorf(rng, "Invalid model entry", "The params of model %q must be an object.", nv.AsString())
				continue
			}
			for _, an := range slices.Sorted(maps.Keys(pv.Type().AttributeTypes())) {
				if !slices.Contains(inferenceParams, an) {
					d.errorf(keyRange(exprAt(attr.Expr, i, "params"), an), "Unsupported inference parameter", "Model %q sets %q, which is not an inference parameter.%s Parameters: %s.", nv.AsString(), an, didYouMean(an, inferenceParams), quotedList(inferenceParams))
				} else if problem := inferenceParamProblem(an, pv.GetAttr(an)); problem != "" {
					d.errorf(subRange(exprAt(attr.Expr, i, "params"), an), "Invalid inference parameter", "In the params of model %q, %q %s.", nv.AsString(), an, problem)
				}
			}
			params[nv.AsString()] = Dynamic{Value: pv, Set: true, Range: rng}
		}
	}
	return out, params
}

// inferenceParamTypes says what each inference parameter's value is.
var inferenceParamTypes = map[string]string{
	"frequency_penalty": "number", "presence_penalty": "number", "temperature": "number", "top_p": "number",
	"max_tokens": "count", "top_k": "count", "seed": "integer",
	"stop_sequences": "strings", "provider_params": "object",
}

// inferenceParamProblem says what is wrong with the value of the
// inference parameter name ("must be a number; it is a string"), or "":
// a number (a string that reads as one too, as HCL converts it), a whole
// number, max_tokens and top_k at least 1, stop_sequences a list of
// strings, provider_params an object. A null or a runtime value is
// checked when it is read.
func inferenceParamProblem(name string, v cty.Value) string {
	if v.IsNull() || !v.IsWhollyKnown() || containsRef(v) {
		return ""
	}
	is := friendly(v)
	want := ""
	switch inferenceParamTypes[name] {
	case "number", "integer", "count":
		n, err := convert.Convert(v, cty.Number)
		if err != nil {
			want = "a number"
			if inferenceParamTypes[name] != "number" {
				want = "a whole number"
			}
			break
		}
		bf := n.AsBigFloat()
		is = bf.Text('g', -1)
		switch {
		case inferenceParamTypes[name] == "number":
		case !bf.IsInt():
			want = "a whole number"
		case inferenceParamTypes[name] == "count" && bf.Sign() <= 0:
			want = "a whole number of at least 1"
		}
	case "strings":
		if l, err := convert.Convert(v, cty.List(cty.String)); err != nil || slices.ContainsFunc(l.AsValueSlice(), cty.Value.IsNull) {
			want = "a list of strings"
		}
	case "object":
		if !v.Type().IsObjectType() && !v.Type().IsMapType() {
			want = "an object"
		}
	}
	if want == "" {
		return ""
	}
	return fmt.Sprintf("must be %s; it is %s", want, is)
}

// freeBlock reads a block of free-form arguments (provider config and
// params) whose values may be runtime references; check, when set, says
// what is wrong with an argument's value.
func (d *decoder) freeBlock(b *hcl.Block, allowed []string, what string, check func(name string, v cty.Value) string) Dynamic {
	attrs, diags := b.Body.JustAttributes()
	d.add(diags)
	vals := map[string]cty.Value{}
	for _, name := range sortedKeys(attrs) {
		if !slices.Contains(allowed, name) {
			d.errorf(attrs[name].NameRange, "Unsupported argument",
				"An argument named %q is not expected in %s.%s Valid arguments: %s.", name, what, didYouMean(name, allowed), quotedList(allowed))
			continue
		}
		if v, ok := d.eval(attrs[name].Expr); ok {
			if check != nil {
				if problem := check(name, v); problem != "" {
					d.errorf(attrs[name].Expr.Range(), "Invalid inference parameter", "In %s, %q %s.", what, name, problem)
					continue
				}
			}
			vals[name] = v
		}
	}
	// Written as an argument (config = { ... }), the block's range is the
	// argument's name; the Dynamic's is the object, so that the value of
	// one key can be found in it (audit masks a provider's api_key).
	rng := b.DefRange
	if ob, ok := b.Body.(objectBody); ok && ob.expr != nil {
		rng = ob.expr.Range()
	}
	return Dynamic{Value: cty.ObjectVal(vals), Set: true, Range: rng}
}

func (d *decoder) decodeHTTPServer(b *hcl.Block) *HTTPServer {
	content, diags := d.content(b.Body, &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "host"}, {Name: "port"}, {Name: "max_request_size"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "protocol"}},
	})
	d.add(diags)
	out := &HTTPServer{DeclRange: b.DefRange}
	if content == nil {
		return out
	}
	a := content.Attributes
	out.Host = d.str(a, field{name: "host", runtime: true}, "127.0.0.1")
	if !out.Host.Set {
		out.Host.Runtime = &RuntimeRef{Env: "HTTP_HOST", Default: cty.StringVal("127.0.0.1"), Range: b.DefRange}
	}
	out.Port = d.integer(a, field{name: "port", runtime: true, min: 1, max: 65535}, 8080)
	if !out.Port.Set {
		out.Port.Runtime = &RuntimeRef{Env: "HTTP_PORT", Default: cty.NumberIntVal(8080), Range: b.DefRange}
	}
	out.MaxRequestSize = d.integer(a, field{name: "max_request_size", runtime: true, min: 1, max: 1 << 40}, 0)
	pb := d.singleBlock(content.Blocks, "protocol")
	if pb == nil {
		return out
	}
	pc, diags := d.content(pb.Body, &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "ag_ui"}, {Type: "a2a"}}})
	d.add(diags)
	if pc == nil {
		return out
	}
	proto := func(typ, def string) *Protocol {
		blk := d.singleBlock(pc.Blocks, typ)
		if blk == nil {
			return nil
		}
		c, diags := d.content(blk.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "path"}}})
		d.add(diags)
		p := &Protocol{DeclRange: blk.DefRange, Path: String{Value: def}}
		if c != nil {
			p.Path = d.str(c.Attributes, field{name: "path", runtime: true}, def)
		}
		return p
	}
	out.AGUI = proto("ag_ui", "/ag-ui")
	out.A2A = proto("a2a", "/a2a")
	return out
}

// Capability policies.
const (
	PolicyLocked     = "locked"
	PolicyExtensible = "extensible"
)

func (d *decoder) decodeAgent(b *hcl.Block) *Agent {
	a := &Agent{Name: b.Labels[0], DeclRange: b.DefRange}
	content, diags := d.content(b.Body, &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "version"}, {Name: "description"}, {Name: "prompt"},
			{Name: "capabilities"}, {Name: "capability_policy"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "graph"}, {Type: "model"}},
	})
	d.add(diags)
	a.CapabilityPolicy = String{Value: PolicyLocked}
	if content == nil {
		return a
	}
	at := content.Attributes
	a.Version = d.str(at, field{name: "version"}, "0.1.0")
	a.Description = d.str(at, field{name: "description"}, "")
	for _, s := range []struct {
		v    String
		name string
	}{{a.Version, "version"}, {a.Description, "description"}} {
		if s.v.literal() && strings.TrimSpace(s.v.Value) == "" {
			d.errorf(s.v.Range, fmt.Sprintf("Invalid value for %q", s.name), "The agent's %s must not be empty; remove the argument or give it a value.", s.name)
		}
	}
	a.Capabilities = d.strList(at, field{name: "capabilities", runtime: true})
	a.CapabilityPolicy = d.str(at, field{name: "capability_policy", runtime: true, oneOf: []string{PolicyExtensible, PolicyLocked}}, PolicyLocked)
	if p, ok := at["prompt"]; ok {
		a.Prompt = d.decodePrompt(p)
	}

	gb := d.singleBlock(content.Blocks, "graph")
	if gb == nil {
		d.errorf(b.DefRange, "Missing graph block",
			"Agent %q has no graph block. Every agent needs one, for example:\n  graph {\n    type = \"react\"\n  }", a.Name)
	} else {
		a.Graph = d.decodeGraph(gb)
	}
	mb := d.singleBlock(content.Blocks, "model")
	if mb == nil {
		d.errorf(b.DefRange, "Missing model block",
			"Agent %q has no model block. Every agent names the model it uses, for example:\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }", a.Name)
	} else {
		mc, diags := d.content(mb.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
			{Name: "provider", Required: true}, {Name: "name", Required: true},
		}})
		d.add(diags)
		a.Model.DeclRange = mb.DefRange
		if mc != nil {
			a.Model.Provider = d.str(mc.Attributes, field{name: "provider", runtime: true}, "")
			a.Model.Name = d.str(mc.Attributes, field{name: "name", runtime: true}, "")
		}
	}
	return a
}

func (d *decoder) decodeGraph(b *hcl.Block) Graph {
	g := Graph{DeclRange: b.DefRange}
	content, diags := d.content(b.Body, &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "type", Required: true}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "model"}},
	})
	d.add(diags)
	if content == nil {
		return g
	}
	g.Type = d.str(content.Attributes, field{name: "type", oneOf: []string{"react"}}, "")
	mb := d.singleBlock(content.Blocks, "model")
	if mb == nil {
		return g
	}
	mc, diags := d.content(mb.Body, &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "timeout"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "retry"}},
	})
	d.add(diags)
	g.Model = &ModelPolicy{DeclRange: mb.DefRange}
	if mc == nil {
		return g
	}
	g.Model.Timeout = d.integer(mc.Attributes, field{name: "timeout", runtime: true, min: 1, max: 86400000}, 0)
	rb := d.singleBlock(mc.Blocks, "retry")
	if rb == nil {
		return g
	}
	rc, diags := d.content(rb.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "max_attempts", Required: true}, {Name: "initial_backoff", Required: true}, {Name: "max_backoff", Required: true},
	}})
	d.add(diags)
	g.Model.Retry = &Retry{DeclRange: rb.DefRange}
	if rc != nil {
		ra := rc.Attributes
		g.Model.Retry.MaxAttempts = d.integer(ra, field{name: "max_attempts", runtime: true, min: 1, max: 100}, 0)
		g.Model.Retry.InitialBackoff = d.integer(ra, field{name: "initial_backoff", runtime: true, min: 0, max: 86400000}, 0)
		g.Model.Retry.MaxBackoff = d.integer(ra, field{name: "max_backoff", runtime: true, min: 0, max: 86400000}, 0)
	}
	return g
}

var langfuseFields = []string{
	"base_url", "cache_ttl_seconds", "fetch_timeout_seconds", "label", "max_retries",
	"prompt_name", "public_key", "secret_key", "source", "version",
}

// decodePrompt reads the three prompt forms: a string, a list of {role,
// content} messages, or a Langfuse source object.
func (d *decoder) decodePrompt(attr *hcl.Attribute) *Prompt {
	p := &Prompt{Range: attr.Expr.Range()}
	// An object constructor is decoded field by field so that runtime()
	// values and unknown keys are located precisely.
	if items, diags := hcl.ExprMap(attr.Expr); !diags.HasErrors() && len(items) > 0 {
		return d.decodeLangfuse(p, items)
	}
	v, ok := d.eval(attr.Expr)
	if !ok {
		return p
	}
	if v.IsNull() {
		d.errorf(attr.Expr.Range(), "Invalid prompt", "The prompt must not be null; remove the argument to have no prompt.")
		return p
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		p.Kind, p.Text = PromptText, v.AsString()
		return p
	case ty.IsTupleType() || ty.IsListType():
		p.Kind = PromptMessages
		roles := []string{"assistant", "system", "user"}
		msgTy := cty.Object(map[string]cty.Type{"role": cty.String, "content": cty.String})
		ranges := elemRanges(attr.Expr, v.LengthInt())
		for i := 0; v.LengthInt() > i; i++ {
			ev := v.Index(cty.NumberIntVal(int64(i)))
			mv, err := convert.Convert(ev, msgTy)
			if err != nil || mv.IsNull() || mv.GetAttr("role").IsNull() || mv.GetAttr("content").IsNull() {
				d.errorf(ranges[i], "Invalid prompt message",
					"Message %d of the prompt must be an object with string \"role\" and \"content\", like { role = \"system\", content = \"You are ...\" }.", i+1)
				return p
			}
			if objTy := ev.Type(); objTy.IsObjectType() {
				for name := range objTy.AttributeTypes() {
					if name != "role" && name != "content" {
						d.errorf(ranges[i], "Invalid prompt message",
							"Message %d of the prompt has an unexpected key %q; a message has only \"role\" and \"content\".", i+1, name)
						return p
					}
				}
			}
			role := mv.GetAttr("role").AsString()
			if !slices.Contains(roles, role) {
				d.errorf(ranges[i], "Invalid prompt message",
					"Message %d has role %q. Valid roles: %s.%s", i+1, role, quotedList(roles), didYouMean(role, roles))
				return p
			}
			p.Messages = append(p.Messages, PromptMessage{Role: role, Content: mv.GetAttr("content").AsString()})
		}
		if len(p.Messages) == 0 {
			d.errorf(attr.Expr.Range(), "Empty prompt", "A multi-turn prompt needs at least one message.")
		}
		return p
	}
	d.errorf(attr.Expr.Range(), "Invalid prompt",
		"The prompt must be a string, a list of { role, content } messages, or a Langfuse source object { source = \"langfuse\", prompt_name = ... }; got %s.", friendly(v))
	return p
}

func (d *decoder) decodeLangfuse(p *Prompt, items []hcl.KeyValuePair) *Prompt {
	p.Kind = PromptLangfuse
	lf := &LangfusePrompt{}
	p.Langfuse = lf
	attrs := hcl.Attributes{}
	for _, kv := range items {
		key := keyName(kv.Key)
		if key == "" {
			d.errorf(kv.Key.Range(), "Invalid prompt", "Prompt object keys must be names.")
			return p
		}
		if !slices.Contains(langfuseFields, key) {
			d.errorf(kv.Key.Range(), "Unsupported prompt field",
				"A Langfuse prompt has no field named %q.%s Fields: %s.", key, didYouMean(key, langfuseFields), quotedList(langfuseFields))
			continue
		}
		attrs[key] = &hcl.Attribute{Name: key, Expr: kv.Value, Range: hcl.RangeBetween(kv.Key.Range(), kv.Value.Range()), NameRange: kv.Key.Range()}
	}
	src := d.str(attrs, field{name: "source", oneOf: []string{"langfuse"}}, "")
	if !src.Set {
		d.errorf(p.Range, "Invalid prompt",
			"An object prompt is a Langfuse source and needs source = \"langfuse\". For a multi-turn prompt, write a list: [{ role = \"system\", content = \"...\" }].")
		return p
	}
	lf.PromptName = d.str(attrs, field{name: "prompt_name", runtime: true}, "")
	lf.PublicKey = d.str(attrs, field{name: "public_key", runtime: true}, "")
	lf.SecretKey = d.str(attrs, field{name: "secret_key", runtime: true}, "")
	lf.BaseURL = d.str(attrs, field{name: "base_url", runtime: true}, "")
	lf.Label = d.str(attrs, field{name: "label", runtime: true}, "")
	lf.Version = d.integer(attrs, field{name: "version", runtime: true, min: 1, max: 1 << 31}, 0)
	lf.CacheTTLSeconds = d.integer(attrs, field{name: "cache_ttl_seconds", runtime: true, min: 0, max: 1 << 31}, 0)
	lf.FetchTimeoutSeconds = d.integer(attrs, field{name: "fetch_timeout_seconds", runtime: true, min: 1, max: 3600}, 0)
	lf.MaxRetries = d.integer(attrs, field{name: "max_retries", runtime: true, min: 0, max: 100}, 0)
	for _, req := range []struct {
		s    String
		name string
	}{{lf.PromptName, "prompt_name"}, {lf.PublicKey, "public_key"}, {lf.SecretKey, "secret_key"}} {
		if !req.s.Set {
			d.errorf(p.Range, fmt.Sprintf("Missing %s", req.name),
				"A Langfuse prompt needs %s (prompt_name, public_key and secret_key are required; use secret(runtime(\"LANGFUSE_SECRET_KEY\")) for the key).", req.name)
		}
	}
	if lf.Label.Set && lf.Version.Set {
		d.errorf(lf.Version.Range, "Conflicting prompt selectors",
			"A Langfuse prompt is selected either by label or by version, not both. Remove \"label\" (set at %s) or \"version\".", lf.Label.Range)
	}
	return p
}

func (d *decoder) decodeSkill(b *hcl.Block) *Skill {
	s := &Skill{Name: b.Labels[0], DeclRange: b.DefRange}
	content, diags := d.content(b.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "source"}, {Name: "description"}, {Name: "content"}, {Name: "resources"},
	}})
	d.add(diags)
	if content == nil {
		return s
	}
	a := content.Attributes
	s.Source = d.str(a, field{name: "source"}, "")
	s.Description = d.str(a, field{name: "description"}, "")
	s.Content = d.str(a, field{name: "content"}, "")
	if attr, ok := a["resources"]; ok {
		if v, _, ok := d.runtimeArg(attr, field{name: "resources"}); ok {
			mv, err := convert.Convert(v, cty.Map(cty.String))
			if err != nil || mv.IsNull() {
				d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
					"The \"resources\" argument must map resource paths to their text, like { \"notes.md\" = \"...\" }; got %s.", friendly(v))
			} else {
				s.Resources = map[string]string{}
				values := mv.AsValueMap()
				// The file each resource becomes, as an artifact's file
				// system may read its name: the generated SKILL.md is one.
				files := map[string]string{resourceFileKey(skillFileName): skillFileName}
				for _, k := range sortedKeys(values) {
					ev := values[k]
					if ev.IsNull() {
						d.errorf(subRange(attr.Expr, k), "Incorrect attribute value type", "The text of resource %q must be a string, not null.", k)
						continue
					}
					if !safeRelPath(k) {
						d.errorf(keyRange(attr.Expr, k), "Invalid resource path",
							"The resource path %q must be relative and stay inside the skill (no \"..\", no leading \"/\").", k)
						continue
					}
					// As the artifact will hold it (a "./" or a "//"
					// is the same file, cleaned).
					if why := pathfold.CheckPath("skills/" + s.Name + "/" + path.Clean(k)); why != "" {
						d.errorf(keyRange(attr.Expr, k), "Invalid resource path",
							"The resource path %q cannot be a path of the skill's artifact files: %s. Rename the resource.", k, why)
						continue
					}
					fk := resourceFileKey(k)
					switch prev, dup := files[fk]; {
					case dup && prev == skillFileName:
						also := ""
						if path.Clean(k) != skillFileName {
							also = " (file names that differ only in letter case are one file on macOS and Windows)"
						}
						d.errorf(keyRange(attr.Expr, k), "Conflicting skill resource",
							"The resource %q names the skill's %s%s, which an inline skill generates from its description and content. Rename the resource.", k, skillFileName, also)
						continue
					case dup:
						d.errorf(keyRange(attr.Expr, k), "Conflicting skill resource",
							"The resources %q and %q name the same file of skill %q (as written, or once letter case and Unicode form are ignored, as on macOS and Windows, where one would unpack over the other). Keep one of them, or rename one.", prev, k, s.Name)
						continue
					}
					files[fk] = k
					s.Resources[k] = ev.AsString()
				}
				// A file cannot also be the directory of another.
				for _, k := range sortedKeys(s.Resources) {
					fk := resourceFileKey(k)
					for i := range len(fk) {
						if fk[i] != '/' {
							continue
						}
						if prev, ok := files[fk[:i]]; ok {
							d.errorf(keyRange(attr.Expr, k), "Conflicting skill resource",
								"The resource %q lies in the directory %q, which is also a file of skill %q. A path cannot be both a file and a directory: rename one.", k, prev, s.Name)
							delete(s.Resources, k)
							break
						}
					}
				}
			}
		}
	}
	switch {
	case s.Source.Set:
		for _, other := range []String{s.Description, s.Content} {
			if other.Set {
				d.errorf(other.Range, "Conflicting skill definition",
					"Skill %q has a source directory, so its description and content come from SKILL.md. Remove this argument, or remove \"source\" to define the skill inline.", s.Name)
			}
		}
		if _, ok := a["resources"]; ok {
			d.errorf(a["resources"].Expr.Range(), "Conflicting skill definition",
				"Skill %q has a source directory, so its resources are the files in it. Remove \"resources\", or remove \"source\" to define the skill inline.", s.Name)
		}
	default:
		if !s.Description.Set || !s.Content.Set {
			d.errorf(b.DefRange, "Incomplete skill",
				"Skill %q needs either source = \"./skills/%s\" (a directory with SKILL.md) or both description and content to define it inline.", s.Name, s.Name)
		}
	}
	return s
}

// skillFileName is the file that holds a skill's front matter and text.
const skillFileName = "SKILL.md"

// resourceFileKey is the file a skill resource path names as a case
// insensitive, normalising file system (macOS, Windows) reads it: "a/./B"
// and "a/b" are one file there. The artifact builder refuses two such
// paths by the same rule (pathfold); the manifest reports them where they
// are written.
func resourceFileKey(p string) string {
	return pathfold.Key(path.Clean(p))
}

func safeRelPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "" {
			return false
		}
	}
	return true
}

// CheckFunctions are the functions a check condition may call. The planner
// supplies can_call, holds and reachable over the matrix; length and
// contains (cty's standard library) work on what reachable returns.
var CheckFunctions = []string{"can_call", "contains", "holds", "length", "reachable"}

// CheckStdFunctions are the standard functions available in check
// conditions besides the matrix functions.
var CheckStdFunctions = map[string]function.Function{
	"contains": stdlib.ContainsFunc,
	"length":   stdlib.LengthFunc,
}

// checkTypeFuncs type-check check conditions at load time: they return
// unknown values of the right types.
var checkTypeFuncs = map[string]function.Function{
	"can_call":  function.New(&function.Spec{Params: []function.Parameter{{Name: "agent", Type: cty.String}, {Name: "tool", Type: cty.String}}, Type: function.StaticReturnType(cty.Bool), Impl: func([]cty.Value, cty.Type) (cty.Value, error) { return cty.UnknownVal(cty.Bool), nil }}),
	"holds":     function.New(&function.Spec{Params: []function.Parameter{{Name: "agent", Type: cty.String}, {Name: "tag", Type: cty.String}}, Type: function.StaticReturnType(cty.Bool), Impl: func([]cty.Value, cty.Type) (cty.Value, error) { return cty.UnknownVal(cty.Bool), nil }}),
	"reachable": function.New(&function.Spec{Params: []function.Parameter{{Name: "agent", Type: cty.String}}, Type: function.StaticReturnType(cty.List(cty.String)), Impl: func([]cty.Value, cty.Type) (cty.Value, error) { return cty.UnknownVal(cty.List(cty.String)), nil }}),
}

func (d *decoder) decodeCheck(b *hcl.Block) *Check {
	c := &Check{Name: b.Labels[0], DeclRange: b.DefRange}
	content, diags := d.content(b.Body, &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "assert"}}})
	// condition and error_message written in the check itself, as a
	// check with one assertion might read: say where they go, once per
	// argument, rather than also calling the check empty.
	misplaced := false
	for _, diag := range diags {
		if diag.Summary != "Unsupported argument" {
			continue
		}
		for _, name := range []string{"condition", "error_message"} {
			if strings.HasPrefix(diag.Detail, fmt.Sprintf("An argument named %q ", name)) {
				diag.Detail = fmt.Sprintf("%q goes inside an assert block of the check:\n  check %q {\n    assert {\n      condition     = ...\n      error_message = \"...\"\n    }\n  }", name, c.Name)
				misplaced = true
			}
		}
	}
	d.add(diags)
	if content == nil {
		return c
	}
	funcs := map[string]function.Function{}
	for k, f := range checkTypeFuncs {
		funcs[k] = f
	}
	for k, f := range CheckStdFunctions {
		funcs[k] = f
	}
	ctx := &hcl.EvalContext{Variables: d.ctx.Variables, Functions: funcs}
	for _, ab := range content.Blocks {
		ac, diags := d.content(ab.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
			{Name: "condition", Required: true}, {Name: "error_message", Required: true},
		}})
		d.add(diags)
		if ac == nil || diags.HasErrors() {
			continue
		}
		as := &Assert{Condition: ac.Attributes["condition"].Expr, ErrorMessage: ac.Attributes["error_message"].Expr, DeclRange: ab.DefRange}
		c.Asserts = append(c.Asserts, as)
		if !d.checkCalls(as.Condition) || !d.checkCalls(as.ErrorMessage) {
			continue
		}
		// An undeclared local gets the error (and suggestion) it gets
		// everywhere else, not HCL's "Unsupported attribute".
		if condOK, msgOK := d.checkLocalRefs(as.Condition, d.locals, nil), d.checkLocalRefs(as.ErrorMessage, d.locals, nil); !condOK || !msgOK {
			continue
		}
		if v, diags := as.Condition.Value(ctx); diags.HasErrors() {
			d.add(diags)
		} else if _, err := convert.Convert(v, cty.Bool); err != nil || v.IsNull() {
			d.errorf(as.Condition.Range(), "Invalid check condition",
				"The condition must be true or false, not %s. Use can_call(agent, tool), holds(agent, tag) or reachable(agent) to build it.", friendly(v))
		}
		// A null message would leave a failing check to say only that it
		// failed: the message is what tells the reader why it matters.
		if v, diags := as.ErrorMessage.Value(ctx); diags.HasErrors() {
			d.add(diags)
		} else if _, err := convert.Convert(v, cty.String); err != nil || v.IsNull() {
			d.errorf(as.ErrorMessage.Range(), "Invalid error message", "The error_message must be a string, not %s: write what the failed check means, like \"assistant must never reach the shell\".", friendly(v))
		}
	}
	if len(c.Asserts) == 0 && len(content.Blocks) == 0 && !misplaced {
		d.errorf(b.DefRange, "Empty check", "Check %q has no assert block; add at least one:\n  assert {\n    condition     = can_call(\"agent\", \"tool\")\n    error_message = \"...\"\n  }", c.Name)
	}
	return c
}

var (
	ruleIDPattern       = regexp.MustCompile(`^AF[1-4][0-9]{2}$`)
	waiverTargetPattern = regexp.MustCompile(`^((agent|tool|skill|provider)\.[A-Za-z_][A-Za-z0-9_-]*|network|filesystem)$`)
)

func (d *decoder) decodeWaiver(b *hcl.Block) *Waiver {
	w := &Waiver{RuleID: b.Labels[0], DeclRange: b.DefRange}
	if !ruleIDPattern.MatchString(w.RuleID) {
		d.errorf(b.LabelRanges[0], "Invalid rule ID",
			"%q is not an agentform rule ID. Rule IDs look like \"AF101\"; \"agentform audit\" prints the ID of each finding.", w.RuleID)
	}
	content, diags := d.content(b.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "target", Required: true}, {Name: "reason", Required: true}, {Name: "expires"},
	}})
	d.add(diags)
	if content == nil {
		return w
	}
	a := content.Attributes
	w.Target = d.str(a, field{name: "target"}, "")
	errsBefore := len(d.diags.Errs())
	w.Reason = d.str(a, field{name: "reason"}, "")
	reasonRead := len(d.diags.Errs()) == errsBefore // not empty for want of a value
	w.Expires = d.str(a, field{name: "expires"}, "")
	if w.Target.Set && w.Target.Value != "" && !waiverTargetPattern.MatchString(w.Target.Value) {
		detail := fmt.Sprintf("%q is not an address. A waiver targets \"agent.NAME\", \"tool.NAME\", \"skill.NAME\", \"provider.NAME\", \"network\" or \"filesystem\".", w.Target.Value)
		if strings.HasPrefix(w.Target.Value, "check.") {
			detail = fmt.Sprintf("%q is a check, and a failed check (AF110) cannot be waived: change the configuration or the check.", w.Target.Value)
		}
		d.errorf(w.Target.Range, "Invalid waiver target", "%s", detail)
	}
	if w.Reason.Set && reasonRead && strings.TrimSpace(w.Reason.Value) == "" {
		d.errorf(w.Reason.Range, "Empty waiver reason", "A waiver must say why the finding is accepted; reviewers read this reason.")
	}
	if w.Expires.Set {
		if _, err := time.Parse(time.DateOnly, w.Expires.Value); err != nil {
			d.errorf(w.Expires.Range, "Invalid expiry date", "%q is not a date; write it as YYYY-MM-DD, for example \"2027-03-31\".", w.Expires.Value)
		}
	}
	return w
}

// checkCalls reports every call in a check expression to a function checks
// do not have. Evaluation alone misses calls that && and || skip when their
// left side is not known at load time.
func (d *decoder) checkCalls(expr hcl.Expression) bool {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return true
	}
	good := true
	_ = hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if ok && call.Name == "holds" && len(call.Args) == 2 {
			// A tag written out is checked now: a malformed one is held
			// by no one, so !holds(...) over it would always pass.
			if v, diags := call.Args[1].Value(nil); !diags.HasErrors() && v.IsWhollyKnown() && v.Type() == cty.String && !v.IsNull() {
				if err := ValidateTag(v.AsString()); err != nil {
					good = false
					d.errorf(call.Args[1].Range(), "Invalid capability tag", "In holds(), %s. %s", err, TagHelp)
				} else if tag := v.AsString(); slices.Contains(strings.Split(tag, "::"), "*") {
					d.warnf(call.Args[1].Range(), "\"*\" is not a wildcard", "%s", HoldsStarText(tag))
				}
			}
		}
		if !ok || slices.Contains(CheckFunctions, call.Name) {
			return nil
		}
		good = false
		d.errorf(call.NameRange, "Call to unknown function",
			"Check conditions can call %s; there is no function named %q.%s", quotedList(CheckFunctions), call.Name, didYouMean(call.Name, CheckFunctions))
		return nil
	})
	return good
}

// HoldsStarText says what holds(agent, tag) asks when tag has a "*"
// segment: "*" is compared like any other segment.
func HoldsStarText(tag string) string {
	who := fmt.Sprintf("an agent holding %q", tag)
	if strings.Contains(tag, "::") {
		who += " or a namespace it starts with"
	}
	return fmt.Sprintf("holds(agent, %q) is true only for %s: \"*\" matches a literal \"*\" segment, not every tag. Ask about each tag, or use can_call(agent, tool) for the tools that require them.", tag, who)
}

func (d *decoder) decodeCodegenBlock(b *hcl.Block) *CodegenBlock {
	cb := &CodegenBlock{Name: b.Labels[0], DeclRange: b.DefRange}
	content, diags := d.content(b.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "description"}, {Name: "generates"}, {Name: "contributes"}, {Name: "dependencies"},
	}})
	d.add(diags)
	if content == nil {
		return cb
	}
	a := content.Attributes
	cb.Description = d.str(a, field{name: "description"}, "")
	if cb.Description.literal() && strings.TrimSpace(cb.Description.Value) == "" {
		d.errorf(cb.Description.Range, "Invalid value for \"description\"", "The description must not be empty; remove it or give it a value.")
	}
	read := func(name, what string) map[string]string {
		attr, ok := a[name]
		if !ok {
			return nil
		}
		v, _, ok := d.runtimeArg(attr, field{name: name})
		if !ok {
			return nil
		}
		mv, err := convert.Convert(v, cty.Map(cty.String))
		if err != nil || mv.IsNull() {
			d.errorf(attr.Expr.Range(), "Incorrect attribute value type", "The %q argument maps %s, like { \"src/x.rs\" = \"templates/x.rs.j2\" }; got %s.", name, what, friendly(v))
			return nil
		}
		out := map[string]string{}
		for k, ev := range mv.AsValueMap() {
			if ev.IsNull() {
				d.errorf(subRange(attr.Expr, k), "Incorrect attribute value type", "The value for %q in %q must be a string, not null.", k, name)
				continue
			}
			out[k] = ev.AsString()
		}
		return out
	}
	cb.Generates = read("generates", "output paths to template paths")
	cb.Contributes = read("contributes", "extension points to template paths")
	cb.Dependencies = read("dependencies", "crate names to versions")
	return cb
}
