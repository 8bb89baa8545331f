package audit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/apparentlymart/go-textseg/v17/textseg"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// redactMark stands in a source snippet for text that holds a credential.
const redactMark = "(redacted)"

// sensitiveRanges returns where the manifest's text holds credential
// material, for Report.Sensitive:
//
//   - the value of a credential-like field written as a literal (AF306);
//   - the default of a credential-like field read with runtime(), with or
//     without secret() (AF305 reports it without);
//   - the default of every runtime() inside secret(), whatever the field;
//   - the value of every local such a value or default is built from.
//
// The environment variable names stay visible. A JSON-syntax file has no
// syntax tree at hand: there a credential field's value, and every string
// that calls secret(), is covered whole. The ranges are sorted by file and
// position.
func (a *auditor) sensitiveRanges() []hcl.Range {
	var out []hcl.Range
	locals := a.localExprs()
	seenLocal := map[string]bool{}
	var cover func(e hclsyntax.Expression)
	cover = func(e hclsyntax.Expression) {
		out = append(out, e.Range())
		for _, tr := range e.Variables() {
			name := localName(tr)
			if le, ok := locals[name]; ok && !seenLocal[name] {
				seenLocal[name] = true
				cover(le)
			}
		}
	}
	coverDefaults := func(e hclsyntax.Expression) {
		_ = hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
			if call, ok := n.(*hclsyntax.FunctionCallExpr); ok && call.Name == "runtime" {
				for _, arg := range call.Args[min(1, len(call.Args)):] {
					cover(arg)
				}
			}
			return nil
		})
	}

	for _, c := range a.credentials() {
		if !c.literal && !c.ref.HasDefault() {
			continue
		}
		e := findExpr(a.cfg, *c.rng)
		switch {
		case e == nil:
			out = append(out, *c.rng)
		case c.literal:
			cover(e)
		default:
			coverDefaults(e)
		}
	}
	for _, name := range sortedMapKeys(a.cfg.Files) {
		body := syntaxBody(a.cfg, name)
		if body == nil {
			if f := a.cfg.Files[name]; f != nil {
				out = append(out, jsonSecretRanges(name, f.Bytes)...)
			}
			continue
		}
		_ = hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
			if call, ok := n.(*hclsyntax.FunctionCallExpr); ok && call.Name == "secret" {
				coverDefaults(call)
			}
			return nil
		})
	}
	slices.SortFunc(out, func(x, y hcl.Range) int {
		return cmp.Or(strings.Compare(x.Filename, y.Filename), cmp.Compare(x.Start.Byte, y.Start.Byte), cmp.Compare(x.End.Byte, y.End.Byte))
	})
	return slices.Compact(out)
}

// localExprs maps the name of every local written in native syntax to its
// value expression.
func (a *auditor) localExprs() map[string]hclsyntax.Expression {
	out := map[string]hclsyntax.Expression{}
	for _, name := range sortedMapKeys(a.cfg.Files) {
		body := syntaxBody(a.cfg, name)
		if body == nil {
			continue
		}
		for _, blk := range body.Blocks {
			if blk.Type != "locals" {
				continue
			}
			for attrName, attr := range blk.Body.Attributes {
				if _, dup := out[attrName]; !dup {
					out[attrName] = attr.Expr
				}
			}
		}
	}
	return out
}

// localName returns the local a traversal reads ("x" for locals.x or
// locals["x"]), or "".
func localName(tr hcl.Traversal) string {
	if tr.RootName() != "locals" || len(tr) < 2 {
		return ""
	}
	switch step := tr[1].(type) {
	case hcl.TraverseAttr:
		return step.Name
	case hcl.TraverseIndex:
		if k := step.Key; k.IsKnown() && !k.IsNull() && k.Type() == cty.String {
			return k.AsString()
		}
	}
	return ""
}

// jsonSecretRanges returns the ranges of the strings of a JSON-syntax file
// that call secret() (HCL reads them as templates: "${secret(runtime(...))}").
func jsonSecretRanges(name string, src []byte) []hcl.Range {
	var out []hcl.Range
	dec := json.NewDecoder(bytes.NewReader(src))
	var prev int64
	for {
		tok, err := dec.Token()
		if err != nil {
			// Text this reader cannot follow (hcl's JSON reader accepted
			// it) is hidden whole when it calls secret().
			if err != io.EOF && bytes.Contains(src[prev:], []byte("secret(")) {
				out = append(out, hcl.Range{Filename: name, Start: posAt(src, int(prev)), End: posAt(src, len(src))})
			}
			return out
		}
		end := int(dec.InputOffset())
		// Between tokens there are only spaces, colons and commas: the
		// string starts at the first quote after the previous token.
		if s, ok := tok.(string); ok && strings.Contains(s, "secret(") {
			if i := bytes.IndexByte(src[prev:end], '"'); i >= 0 {
				out = append(out, hcl.Range{Filename: name, Start: posAt(src, int(prev)+i), End: posAt(src, end)})
			}
		}
		prev = int64(end)
	}
}

// posAt returns the position of byte offset off of src: its line, its
// column counted in grapheme clusters as hcl counts them, and off.
func posAt(src []byte, off int) hcl.Pos {
	lineStart := bytes.LastIndexByte(src[:off], '\n') + 1
	pos := hcl.Pos{Line: bytes.Count(src[:off], []byte{'\n'}) + 1, Column: 1, Byte: off}
	for rest := src[lineStart:off]; len(rest) > 0; pos.Column++ {
		n, _, _ := textseg.ScanGraphemeClusters(rest, true)
		if n == 0 {
			break
		}
		rest = rest[n:]
	}
	return pos
}
