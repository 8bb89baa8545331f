package resolve

import (
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaMaxExpandedSize bounds a schema's size with its references
// expanded: a subschema counts 1 and the expanded sizes of its
// subschemas, and a "$ref" (or "$dynamicRef", "$recursiveRef") counts the
// expanded size of what it names. Validating arguments walks the schema
// with its references expanded, so a schema well within SchemaMaxNodes can
// still make each validation take minutes by fan-out: 27 definitions, each
// naming the next twice in an "allOf", are 2^27 subschemas to check. A
// reference back into a subschema it is part of (a recursive schema, as
// for tree-shaped arguments) counts 1: its expansion is bounded by the
// arguments' depth, not by the schema.
const SchemaMaxExpandedSize = 100_000

// schemaExpandedBound checks a compiled schema against
// SchemaMaxExpandedSize, locating the error at the first subschema (in a
// fixed order) whose expanded size passes the bound. Each subschema's size
// is computed once, so the check costs the size of the compiled schema.
func schemaExpandedBound(root *jsonschema.Schema) error {
	// The targets of a "$dynamicRef" or a "$recursiveRef" depend on the
	// arguments' path through the schema: any subschema with the anchor
	// may be one, and the largest counts.
	dynamic := map[string][]*jsonschema.Schema{}
	var recursive []*jsonschema.Schema
	seen := map[*jsonschema.Schema]bool{}
	var collect func(s *jsonschema.Schema)
	collect = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.DynamicAnchor != "" {
			dynamic[s.DynamicAnchor] = append(dynamic[s.DynamicAnchor], s)
		}
		if s.RecursiveAnchor {
			recursive = append(recursive, s)
		}
		for _, c := range schemaParts(s) {
			collect(c)
		}
		for _, c := range schemaRefs(s, nil, nil) {
			collect(c)
		}
	}
	collect(root)

	const over = SchemaMaxExpandedSize + 1
	size := map[*jsonschema.Schema]int{}
	expanding := map[*jsonschema.Schema]bool{}
	var first *jsonschema.Schema
	var expand func(s *jsonschema.Schema) int
	expand = func(s *jsonschema.Schema) int {
		if first != nil {
			return over
		}
		if n, ok := size[s]; ok {
			return n
		}
		if expanding[s] {
			return 1
		}
		expanding[s] = true
		n := 1
		for _, c := range schemaParts(s) {
			n = min(n+expand(c), over)
		}
		largest := 0
		for _, t := range schemaRefs(s, dynamic, recursive) {
			largest = max(largest, expand(t))
		}
		n = min(n+largest, over)
		if s.Ref != nil {
			n = min(n+expand(s.Ref), over)
		}
		delete(expanding, s)
		size[s] = n
		if n >= over && first == nil {
			first = s
		}
		return n
	}
	if expand(root) < over {
		return nil
	}
	at, _ := strings.CutPrefix(first.Location, schemaLocation+"#")
	if at == first.Location {
		at = "" // a subschema with an "$id" of its own
	}
	return &SchemaBoundError{At: at, Problem: fmt.Sprintf("with its references expanded it is more than %d subschemas, the most agentform accepts (each validation would check them all)", SchemaMaxExpandedSize)}
}

// schemaRefs is what s names other than by "$ref": the targets a
// "$dynamicRef" or a "$recursiveRef" may resolve to, of which the
// expansion counts the largest. With dynamic and recursive nil, it is
// their static targets only. s.Ref is not in it: it always applies.
func schemaRefs(s *jsonschema.Schema, dynamic map[string][]*jsonschema.Schema, recursive []*jsonschema.Schema) []*jsonschema.Schema {
	var refs []*jsonschema.Schema
	if s.Ref != nil && dynamic == nil {
		refs = append(refs, s.Ref)
	}
	if d := s.DynamicRef; d != nil {
		if d.Ref != nil {
			refs = append(refs, d.Ref)
		}
		if d.Anchor != "" {
			refs = append(refs, dynamic[d.Anchor]...)
		}
	}
	if s.RecursiveRef != nil {
		refs = append(refs, s.RecursiveRef)
		refs = append(refs, recursive...)
	}
	return refs
}

// schemaParts is s's subschemas, in a fixed order, references left out.
func schemaParts(s *jsonschema.Schema) []*jsonschema.Schema {
	var parts []*jsonschema.Schema
	add := func(c ...*jsonschema.Schema) {
		for _, x := range c {
			if x != nil {
				parts = append(parts, x)
			}
		}
	}
	addAny := func(v any) {
		switch v := v.(type) {
		case *jsonschema.Schema:
			add(v)
		case []*jsonschema.Schema:
			add(v...)
		}
	}
	add(s.Not, s.If, s.Then, s.Else, s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	add(s.AllOf...)
	add(s.AnyOf...)
	add(s.OneOf...)
	add(s.PrefixItems...)
	addAny(s.AdditionalProperties)
	addAny(s.Items)
	addAny(s.AdditionalItems)
	for _, k := range sortedKeys(s.Properties) {
		add(s.Properties[k])
	}
	for _, k := range sortedKeys(s.DependentSchemas) {
		add(s.DependentSchemas[k])
	}
	for _, k := range sortedKeys(s.Dependencies) {
		addAny(s.Dependencies[k])
	}
	pats := make([]jsonschema.Regexp, 0, len(s.PatternProperties))
	for re := range s.PatternProperties {
		pats = append(pats, re)
	}
	sort.Slice(pats, func(i, j int) bool { return pats[i].String() < pats[j].String() })
	for _, re := range pats {
		add(s.PatternProperties[re])
	}
	return parts
}
