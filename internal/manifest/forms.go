package manifest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// agentc reads manifests through serde, where a block and an object-valued
// argument are the same thing: graph { type = "react" } and
// graph = { type = "react" } mean the same, and so do tool
// config = { K = "v" } and config { K = "v" }. The loader accepts both
// forms everywhere agentc does: content reads a body with a schema and
// turns whichever form was written into the one the decoder expects.

// content is body.Content(schema) accepting both forms of every unlabelled
// block and every argument.
func (d *decoder) content(body hcl.Body, schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	c, _, diags := d.readBody(body, schema, false)
	listExpected(diags, schema)
	return c, diags
}

// listExpected completes HCL's "An argument named "x" is not expected
// here." where no close name was suggested, with what the block takes:
// the reader need not look it up.
func listExpected(diags hcl.Diagnostics, schema *hcl.BodySchema) {
	var names []string
	for _, a := range schema.Attributes {
		names = append(names, a.Name)
	}
	for _, b := range schema.Blocks {
		names = append(names, b.Type)
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, diag := range diags {
		if (diag.Summary == "Unsupported argument" || diag.Summary == "Unsupported block type") && strings.HasSuffix(diag.Detail, " not expected here.") {
			diag.Detail += " Valid here: " + quotedList(names) + "."
		}
	}
}

// partialContent is body.PartialContent(schema) accepting both forms.
func (d *decoder) partialContent(body hcl.Body, schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	c, _, diags := d.readBody(body, schema, true)
	return c, diags
}

func (d *decoder) readBody(body hcl.Body, schema *hcl.BodySchema, partial bool) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	if _, native := body.(*hclsyntax.Body); !native {
		// JSON bodies already read an object as either form; object
		// bodies implement both forms themselves.
		if partial {
			return body.PartialContent(schema)
		}
		c, diags := body.Content(schema)
		return c, nil, diags
	}
	aug := &hcl.BodySchema{}
	attrNames := map[string]bool{}
	blockNames := map[string]bool{}
	for _, a := range schema.Attributes {
		aug.Attributes = append(aug.Attributes, hcl.AttributeSchema{Name: a.Name})
		aug.Blocks = append(aug.Blocks, hcl.BlockHeaderSchema{Type: a.Name})
		attrNames[a.Name] = true
	}
	for _, b := range schema.Blocks {
		aug.Blocks = append(aug.Blocks, b)
		if len(b.LabelNames) == 0 && !attrNames[b.Type] {
			aug.Attributes = append(aug.Attributes, hcl.AttributeSchema{Name: b.Type})
			blockNames[b.Type] = true
		}
	}
	var c *hcl.BodyContent
	var rest hcl.Body
	var diags hcl.Diagnostics
	if partial {
		c, rest, diags = body.PartialContent(aug)
	} else {
		c, diags = body.Content(aug)
	}
	if c == nil {
		return nil, rest, diags
	}
	out := &hcl.BodyContent{Attributes: hcl.Attributes{}, MissingItemRange: c.MissingItemRange}
	for name, attr := range c.Attributes {
		if !blockNames[name] {
			out.Attributes[name] = attr
			continue
		}
		if _, err := hcl.ExprMap(attr.Expr); err.HasErrors() {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Incorrect attribute value type",
				Detail:  fmt.Sprintf("%q is a block: write %s { ... } or %s = { ... }.", name, name, name),
				Subject: attr.Expr.Range().Ptr()})
			continue
		}
		out.Blocks = append(out.Blocks, &hcl.Block{Type: name, Body: objectBody{expr: attr.Expr}, DefRange: attr.NameRange, TypeRange: attr.NameRange})
	}
	for _, b := range c.Blocks {
		if !attrNames[b.Type] {
			out.Blocks = append(out.Blocks, b)
			continue
		}
		if prev, dup := out.Attributes[b.Type]; dup {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate argument",
				Detail:  fmt.Sprintf("The argument %q was already set at %s.", b.Type, prev.Range),
				Subject: b.DefRange.Ptr()})
			continue
		}
		if len(b.Labels) > 0 {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unexpected block label",
				Detail: fmt.Sprintf("%q takes no label.", b.Type), Subject: b.LabelRanges[0].Ptr()})
			continue
		}
		attrs, ad := b.Body.JustAttributes()
		diags = append(diags, ad...)
		out.Attributes[b.Type] = &hcl.Attribute{Name: b.Type, Expr: &blockExpr{block: b, attrs: attrs}, Range: b.DefRange, NameRange: b.TypeRange}
	}
	for _, a := range schema.Attributes {
		if _, ok := out.Attributes[a.Name]; !ok && a.Required {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing required argument",
				Detail:  fmt.Sprintf("The argument %q is required, but no definition was found.", a.Name),
				Subject: c.MissingItemRange.Ptr()})
		}
	}
	// Keep the source order of blocks, which decoders rely on for
	// "already declared at" messages.
	sortBlocksByPos(out.Blocks)
	// And of diagnostics: HCL reports unsupported arguments, and the loop
	// above its attributes, in the order of a map.
	sortDiagsByPos(diags)
	return out, rest, diags
}

// sortDiagsByPos orders diagnostics by where they are, keeping the order
// of those at the same place (and of those placed nowhere, first).
func sortDiagsByPos(diags hcl.Diagnostics) {
	key := func(d *hcl.Diagnostic) (string, int) {
		if d.Subject == nil {
			return "", -1
		}
		return d.Subject.Filename, d.Subject.Start.Byte
	}
	slices.SortStableFunc(diags, func(a, b *hcl.Diagnostic) int {
		af, ab := key(a)
		bf, bb := key(b)
		if c := strings.Compare(af, bf); c != 0 {
			return c
		}
		return ab - bb
	})
}

func sortBlocksByPos(blocks hcl.Blocks) {
	for i := 1; i < len(blocks); i++ {
		for j := i; j > 0 && blocks[j].DefRange.Start.Byte < blocks[j-1].DefRange.Start.Byte && blocks[j].DefRange.Filename == blocks[j-1].DefRange.Filename; j-- {
			blocks[j], blocks[j-1] = blocks[j-1], blocks[j]
		}
	}
}

// objectBody is a block written as an object: name = { ... }.
type objectBody struct {
	expr  hcl.Expression
	pairs []hcl.KeyValuePair // nil: all pairs of expr
}

func (b objectBody) items() []hcl.KeyValuePair {
	if b.pairs != nil {
		return b.pairs
	}
	pairs, _ := hcl.ExprMap(b.expr)
	return pairs
}

func (b objectBody) attr(kv hcl.KeyValuePair, name string) *hcl.Attribute {
	return &hcl.Attribute{Name: name, Expr: kv.Value, Range: hcl.RangeBetween(kv.Key.Range(), kv.Value.Range()), NameRange: kv.Key.Range()}
}

// PartialContent implements hcl.Body.
func (b objectBody) PartialContent(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	content := &hcl.BodyContent{Attributes: hcl.Attributes{}, MissingItemRange: b.MissingItemRange()}
	var diags hcl.Diagnostics
	used := map[int]bool{}
	items := b.items()
	for _, as := range schema.Attributes {
		found := false
		for i, kv := range items {
			if keyName(kv.Key) != as.Name {
				continue
			}
			if found {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate argument",
					Detail: fmt.Sprintf("The argument %q was already set.", as.Name), Subject: kv.Key.Range().Ptr()})
			}
			found, used[i] = true, true
			content.Attributes[as.Name] = b.attr(kv, as.Name)
		}
		if !found && as.Required {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing required argument",
				Detail:  fmt.Sprintf("The argument %q is required, but no definition was found.", as.Name),
				Subject: b.MissingItemRange().Ptr()})
		}
	}
	for _, bs := range schema.Blocks {
		for i, kv := range items {
			if keyName(kv.Key) != bs.Type || len(bs.LabelNames) > 0 {
				continue
			}
			used[i] = true
			values := []hcl.Expression{kv.Value}
			if list, err := hcl.ExprList(kv.Value); !err.HasErrors() {
				values = list
			}
			for _, v := range values {
				if _, err := hcl.ExprMap(v); err.HasErrors() {
					diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Incorrect attribute value type",
						Detail: fmt.Sprintf("%q must be an object: %s = { ... }.", bs.Type, bs.Type), Subject: v.Range().Ptr()})
					continue
				}
				content.Blocks = append(content.Blocks, &hcl.Block{Type: bs.Type, Body: objectBody{expr: v}, DefRange: kv.Key.Range(), TypeRange: kv.Key.Range()})
			}
		}
	}
	var rest []hcl.KeyValuePair
	for i, kv := range items {
		if !used[i] {
			rest = append(rest, kv)
		}
	}
	if rest == nil {
		rest = []hcl.KeyValuePair{}
	}
	return content, objectBody{expr: b.expr, pairs: rest}, diags
}

// Content implements hcl.Body.
func (b objectBody) Content(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	content, rest, diags := b.PartialContent(schema)
	var names []string
	for _, a := range schema.Attributes {
		names = append(names, a.Name)
	}
	for _, bs := range schema.Blocks {
		names = append(names, bs.Type)
	}
	for _, kv := range rest.(objectBody).items() {
		name := keyName(kv.Key)
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported argument",
			Detail:  fmt.Sprintf("An argument named %q is not expected here.%s", name, didYouMean(name, names)),
			Subject: kv.Key.Range().Ptr()})
	}
	return content, diags
}

// JustAttributes implements hcl.Body.
func (b objectBody) JustAttributes() (hcl.Attributes, hcl.Diagnostics) {
	attrs := hcl.Attributes{}
	var diags hcl.Diagnostics
	for _, kv := range b.items() {
		name := keyName(kv.Key)
		if name == "" {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid argument name",
				Detail: "Argument names must be names or quoted strings.", Subject: kv.Key.Range().Ptr()})
			continue
		}
		attrs[name] = b.attr(kv, name)
	}
	return attrs, diags
}

// MissingItemRange implements hcl.Body.
func (b objectBody) MissingItemRange() hcl.Range {
	r := b.expr.Range()
	return hcl.Range{Filename: r.Filename, Start: r.End, End: r.End}
}

// blockExpr is an object argument written as a block: name { ... }.
type blockExpr struct {
	block *hcl.Block
	attrs hcl.Attributes
}

// Value implements hcl.Expression.
func (e *blockExpr) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	vals := map[string]cty.Value{}
	var diags hcl.Diagnostics
	for _, name := range sortedKeys(e.attrs) {
		v, d := e.attrs[name].Expr.Value(ctx)
		diags = append(diags, d...)
		vals[name] = v
	}
	return cty.ObjectVal(vals), diags
}

// Variables implements hcl.Expression.
func (e *blockExpr) Variables() []hcl.Traversal {
	var out []hcl.Traversal
	for _, name := range sortedKeys(e.attrs) {
		out = append(out, e.attrs[name].Expr.Variables()...)
	}
	return out
}

// Range implements hcl.Expression.
func (e *blockExpr) Range() hcl.Range { return e.block.DefRange }

// StartRange implements hcl.Expression.
func (e *blockExpr) StartRange() hcl.Range { return e.block.DefRange }

// ExprMap lets hcl.ExprMap see the block's arguments as key/value pairs.
func (e *blockExpr) ExprMap() []hcl.KeyValuePair {
	pairs := []hcl.KeyValuePair{}
	for _, name := range sortedKeys(e.attrs) {
		a := e.attrs[name]
		pairs = append(pairs, hcl.KeyValuePair{Key: hcl.StaticExpr(cty.StringVal(name), a.NameRange), Value: a.Expr})
	}
	return pairs
}
