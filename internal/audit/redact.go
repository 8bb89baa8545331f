package audit

import (
	"bytes"
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/apparentlymart/go-textseg/v17/textseg"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/render"
)

// Redaction returns what output must not show of cfg's text, for
// render.Diagnostics (every command prints diagnostics that quote the
// manifest) and for the report (Report.Redaction). Its ranges are:
//
//   - the value of a credential-like field written as a literal (AF306);
//   - the default of a credential-like field read with runtime(), with or
//     without secret() (AF305 reports it without);
//   - the default of every runtime() inside secret(), whatever the field,
//     and any other argument of secret(); likewise the default of every
//     serialised runtime value marked secret
//     ({ "$runtime" = { env = "U", default = "x", secret = true } });
//   - the value of every field named like a credential (auth_token,
//     secret_key, a credential header, a credential config key), found
//     in the syntax tree whether or not it decoded: a value of the wrong
//     type or one that fails to evaluate is an error whose diagnostic
//     quotes the line;
//   - the value of every local such a value or default is built from,
//     in either syntax.
//
// The environment variable names stay visible in native syntax. In JSON
// syntax a credential's value is located key by key; a string that
// calls secret() (read as an HCL template) is covered whole, since its
// escapes keep template positions from matching the file's.
//
// Its values are those credentials, defaults and locals themselves, so
// that a message that interpolates one (a check's error_message, a
// waiver's reason) can be scrubbed. cfg may be nil.
func Redaction(cfg *manifest.Config) *render.Redaction {
	if cfg == nil {
		return nil
	}
	return newAuditorForConfig(cfg).redaction()
}

// sensitiveScan collects what Redaction hides.
type sensitiveScan struct {
	a         *auditor
	ctx       *hcl.EvalContext
	locals    map[string]localDef
	seenLocal map[string]bool
	ranges    []hcl.Range
	values    []string
}

// localDef is where a local's value is written and the locals it reads.
type localDef struct {
	rng  hcl.Range
	deps []string
}

func (a *auditor) redaction() *render.Redaction {
	s := &sensitiveScan{a: a, ctx: a.cfg.EvalContext(nil), locals: a.localDefs(), seenLocal: map[string]bool{}}
	for _, c := range a.credentials() {
		if c.scrubOnly {
			s.addValue(c.value)
			continue
		}
		if c.literal {
			s.addValue(c.value)
		}
		if c.ref.HasDefault() {
			s.addValue(c.ref.Default)
		}
		if !c.literal && !c.ref.HasDefault() {
			continue
		}
		if doc := a.jsonDoc(c.rng.Filename); doc != nil {
			if v := doc.valueAt(c.rng.Start.Byte); v != nil {
				s.coverJSON(c.rng.Filename, doc, v)
			} else {
				s.ranges = append(s.ranges, *c.rng)
			}
			continue
		}
		e := a.findExpr(*c.rng)
		switch {
		case e == nil:
			s.ranges = append(s.ranges, *c.rng)
		case c.literal:
			s.cover(e, true)
		default:
			s.coverDefaults(e, true)
		}
	}
	for _, name := range sortedMapKeys(a.cfg.Files) {
		if doc := a.jsonDoc(name); doc != nil {
			s.jsonSecrets(name, doc)
			s.jsonCredentials(name, doc, doc.root, "")
			s.jsonMarkers(name, doc, doc.root)
			continue
		}
		body := syntaxBody(a.cfg, name)
		if body == nil {
			continue
		}
		s.nativeCredentials(body, "")
		_ = hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
			switch n := n.(type) {
			case *hclsyntax.FunctionCallExpr:
				if n.Name == "secret" {
					s.coverSecret(n, true)
				}
			case *hclsyntax.ObjectConsExpr:
				if def, secret, ok := nativeMarker(n); ok && def != nil && secret {
					s.cover(def, true)
				}
			}
			return nil
		})
	}
	// A file that did not parse has a partial syntax tree, or none.
	for _, name := range sortedMapKeys(a.cfg.Unparsed) {
		if f := a.cfg.Files[name]; f != nil {
			r, v := scanSource(name, f.Bytes)
			s.ranges = append(s.ranges, r...)
			s.values = append(s.values, v...)
		}
	}
	slices.SortFunc(s.ranges, func(x, y hcl.Range) int {
		return cmp.Or(strings.Compare(x.Filename, y.Filename), cmp.Compare(x.Start.Byte, y.Start.Byte), cmp.Compare(x.End.Byte, y.End.Byte))
	})
	return render.NewRedaction(slices.Compact(s.ranges), s.withoutPolicyWords())
}

// withoutPolicyWords returns the values to scrub less the default of a
// secret capability_policy: it is "locked" or "extensible", words every
// report prints of its own (AF102 quotes an extensible agent's policy,
// AF108 says a deployment can make one extensible), and no output
// prints the secret's default itself (a plan assumes locked). Scrubbed,
// it turned those sentences into "(redacted)"; its source is still
// masked where it is written.
func (s *sensitiveScan) withoutPolicyWords() []string {
	words := map[string]bool{}
	for _, a := range s.a.cfg.Agents {
		if ref := a.CapabilityPolicy.Runtime; ref != nil && ref.HasDefault() {
			if v, _ := ref.Default.UnmarkDeep(); v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
				if w := v.AsString(); w == manifest.PolicyLocked || w == manifest.PolicyExtensible {
					words[w] = true
				}
			}
		}
	}
	if len(words) == 0 {
		return s.values
	}
	return slices.DeleteFunc(slices.Clone(s.values), func(v string) bool { return words[v] })
}

// cover hides an expression's value and the locals it reads; ranged says
// whether e's range is a range of the file (false for a template read
// from a JSON string, whose string the caller hides).
func (s *sensitiveScan) cover(e hclsyntax.Expression, ranged bool) {
	if ranged {
		s.ranges = append(s.ranges, e.Range())
	}
	if v, diags := e.Value(s.ctx); !diags.HasErrors() {
		s.addValue(v)
	}
	for _, tr := range e.Variables() {
		s.coverLocalPart(tr)
	}
}

// coverLocalPart hides the local a traversal reads: its source and the
// locals it reads like coverLocal, but of its value only the part the
// traversal reads (locals.creds.token scrubs the token, not the owner
// written next to it).
func (s *sensitiveScan) coverLocalPart(tr hcl.Traversal) {
	name := localName(tr)
	if len(tr) <= 2 || name == "" {
		s.coverLocal(name)
		return
	}
	locals := s.ctx.Variables["locals"]
	if !locals.Type().IsObjectType() || !locals.Type().HasAttribute(name) {
		s.coverLocal(name)
		return
	}
	if v, diags := tr[2:].TraverseRel(locals.GetAttr(name)); !diags.HasErrors() {
		s.addValue(v)
	} else {
		s.addValue(locals.GetAttr(name))
	}
	def, ok := s.locals[name]
	if !ok {
		return
	}
	s.ranges = append(s.ranges, def.rng)
	for _, dep := range def.deps {
		s.coverLocal(dep)
	}
}

// coverDefaults hides the default of every runtime() call in e.
func (s *sensitiveScan) coverDefaults(e hclsyntax.Expression, ranged bool) {
	_ = hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		if call, ok := n.(*hclsyntax.FunctionCallExpr); ok && call.Name == "runtime" {
			for _, arg := range call.Args[min(1, len(call.Args)):] {
				s.cover(arg, ranged)
			}
		}
		return nil
	})
}

// coverSecret hides what a secret() call holds: the defaults of the
// runtime() it wraps, or whatever else it was given (secret("...") is an
// error whose diagnostic quotes the line). It reports whether it hid
// anything.
func (s *sensitiveScan) coverSecret(call *hclsyntax.FunctionCallExpr, ranged bool) bool {
	hid := false
	for _, arg := range call.Args {
		if rt, ok := arg.(*hclsyntax.FunctionCallExpr); ok && rt.Name == "runtime" {
			if len(rt.Args) > 1 {
				s.coverDefaults(rt, ranged)
				hid = true
			}
			continue
		}
		s.cover(arg, ranged)
		hid = true
	}
	return hid
}

// coverLocal hides the value of the named local and of the locals it
// reads.
func (s *sensitiveScan) coverLocal(name string) {
	def, ok := s.locals[name]
	if !ok || s.seenLocal[name] {
		return
	}
	s.seenLocal[name] = true
	s.ranges = append(s.ranges, def.rng)
	if locals := s.ctx.Variables["locals"]; locals.Type().IsObjectType() && locals.Type().HasAttribute(name) {
		s.addValue(locals.GetAttr(name))
	}
	for _, dep := range def.deps {
		s.coverLocal(dep)
	}
}

// coverJSON hides a JSON value: its text, its strings and the locals
// they read.
func (s *sensitiveScan) coverJSON(name string, doc *jsonDoc, v *jsonValue) {
	s.ranges = append(s.ranges, doc.rangeOf(name, v))
	for _, str := range v.stringLeaves() {
		s.values = append(s.values, str.str)
		tmpl, diags := hclsyntax.ParseTemplate([]byte(str.str), name, hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		s.cover(tmpl, false)
	}
}

// jsonSecrets hides every string of a JSON-syntax file that calls
// secret() with something to hide, and the rest of a file the JSON
// reader cannot follow when that rest mentions secret.
func (s *sensitiveScan) jsonSecrets(name string, doc *jsonDoc) {
	for _, str := range doc.strings {
		if !strings.Contains(str.str, "{") {
			continue // no interpolation, no call
		}
		tmpl, diags := hclsyntax.ParseTemplate([]byte(str.str), name, hcl.InitialPos)
		if diags.HasErrors() {
			// hcl reports the template's error and quotes the line.
			if strings.Contains(str.str, "secret") {
				s.ranges = append(s.ranges, doc.rangeOf(name, str))
				s.values = append(s.values, str.str)
			}
			continue
		}
		hid := false
		_ = hclsyntax.VisitAll(tmpl, func(n hclsyntax.Node) hcl.Diagnostics {
			if call, ok := n.(*hclsyntax.FunctionCallExpr); ok && call.Name == "secret" {
				hid = s.coverSecret(call, false) || hid
			}
			return nil
		})
		if hid {
			s.ranges = append(s.ranges, doc.rangeOf(name, str))
		}
	}
	if doc.err != nil && bytes.Contains(doc.src[doc.errAt:], []byte("secret")) {
		s.ranges = append(s.ranges, hcl.Range{Filename: name, Start: posAt(doc.src, doc.errAt), End: posAt(doc.src, len(doc.src))})
	}
}

// addValue records the strings (and numbers) of v as credential values.
func (s *sensitiveScan) addValue(v cty.Value) {
	s.values = append(s.values, ValueStrings(v)...)
}

// ValueStrings returns the strings and numbers of v, however nested, as
// a redaction scrubs them.
func ValueStrings(v cty.Value) []string {
	if v == cty.NilVal {
		return nil
	}
	v, _ = v.UnmarkDeep()
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	switch {
	case v.Type() == cty.String:
		return []string{v.AsString()}
	case v.Type() == cty.Number:
		return []string{v.AsBigFloat().Text('f', -1)}
	case v.CanIterateElements():
		var out []string
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			out = append(out, ValueStrings(ev)...)
		}
		return out
	}
	return nil
}

// localDefs maps the name of every local, in either syntax, to where its
// value is written and the locals it reads.
func (a *auditor) localDefs() map[string]localDef {
	out := map[string]localDef{}
	add := func(name string, def localDef) {
		if _, dup := out[name]; !dup {
			out[name] = def
		}
	}
	for _, name := range sortedMapKeys(a.cfg.Files) {
		if doc := a.jsonDoc(name); doc != nil {
			if doc.root == nil {
				continue
			}
			blocks := doc.root.member("locals")
			if blocks == nil {
				continue
			}
			objs := blocks.elems
			if blocks.members != nil {
				objs = []*jsonValue{blocks}
			}
			for _, obj := range objs {
				for _, m := range obj.members {
					def := localDef{rng: doc.rangeOf(name, m.value)}
					for _, str := range m.value.stringLeaves() {
						if tmpl, diags := hclsyntax.ParseTemplate([]byte(str.str), name, hcl.InitialPos); !diags.HasErrors() {
							for _, tr := range tmpl.Variables() {
								def.deps = append(def.deps, localName(tr))
							}
						}
					}
					add(m.key, def)
				}
			}
			continue
		}
		body := syntaxBody(a.cfg, name)
		if body == nil {
			continue
		}
		for _, blk := range body.Blocks {
			if blk.Type != "locals" {
				continue
			}
			for _, attrName := range sortedMapKeys(blk.Body.Attributes) {
				expr := blk.Body.Attributes[attrName].Expr
				def := localDef{rng: expr.Range()}
				for _, tr := range expr.Variables() {
					def.deps = append(def.deps, localName(tr))
				}
				add(attrName, def)
			}
		}
	}
	return out
}

// jsonDoc returns the index of a JSON-syntax manifest file, made once;
// nil for a native file or one the configuration does not hold.
func (a *auditor) jsonDoc(name string) *jsonDoc {
	if doc, ok := a.docs[name]; ok {
		return doc
	}
	var doc *jsonDoc
	if f := a.cfg.Files[name]; f != nil && syntaxBody(a.cfg, name) == nil && f.Bytes != nil {
		doc = parseJSONDoc(f.Bytes)
	}
	if a.docs == nil {
		a.docs = map[string]*jsonDoc{}
	}
	a.docs[name] = doc
	return doc
}

// rangeOf returns the range of v in the file name.
func (d *jsonDoc) rangeOf(name string, v *jsonValue) hcl.Range {
	if d.pos == nil {
		d.pos = newPosIndex(d.src)
	}
	return hcl.Range{Filename: name, Start: d.pos.at(v.start), End: d.pos.at(v.end)}
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

// posAt returns the position of byte offset off of src: its line, its
// column counted in grapheme clusters as hcl counts them, and off.
func posAt(src []byte, off int) hcl.Pos { return newPosIndex(src).at(off) }

// posIndex finds the positions of many offsets of one file without
// reading it from the start for each: the offsets of its line breaks, and,
// for each line asked about, where its grapheme clusters start (so a long
// minified line is read once, not once per position).
type posIndex struct {
	src      []byte
	breaks   []int
	clusters map[int][]int
}

func newPosIndex(src []byte) *posIndex {
	p := &posIndex{src: src, clusters: map[int][]int{}}
	for i, b := range src {
		if b == '\n' {
			p.breaks = append(p.breaks, i)
		}
	}
	return p
}

// at is posAt(p.src, off).
func (p *posIndex) at(off int) hcl.Pos {
	off = max(0, min(off, len(p.src)))
	line := sort.SearchInts(p.breaks, off) // line breaks before off
	start, end := 0, len(p.src)
	if line > 0 {
		start = p.breaks[line-1] + 1
	}
	if line < len(p.breaks) {
		end = p.breaks[line]
	}
	starts, ok := p.clusters[line]
	if !ok {
		for rest, at := p.src[start:end], start; len(rest) > 0; {
			n, _, _ := textseg.ScanGraphemeClusters(rest, true)
			if n == 0 {
				break
			}
			starts = append(starts, at)
			rest, at = rest[n:], at+n
		}
		p.clusters[line] = starts
	}
	return hcl.Pos{Line: line + 1, Column: sort.SearchInts(starts, off) + 1, Byte: off}
}

// credentialField reports whether the field name, written in the block,
// argument or object key parent, holds a credential: an auth_token or a
// secret_key anywhere, a credential header in headers, a credential key
// in a config.
func credentialField(parent, name string) bool {
	switch {
	case name == "auth_token" || name == "secret_key":
		return true
	case parent == "headers":
		return slices.Contains(credentialHeaders, strings.ToLower(name))
	case parent == "config":
		return manifest.CredentialConfigKey(name)
	}
	return false
}

// nativeCredentials hides every credential field of a native-syntax body
// found by its name (credentialField), whether or not its value decoded:
// a value of the wrong type, a call that fails or a template that reads
// an unknown name is an error whose diagnostic quotes the line.
func (s *sensitiveScan) nativeCredentials(body *hclsyntax.Body, parent string) {
	for _, name := range sortedMapKeys(body.Attributes) {
		s.nativeField(parent, name, body.Attributes[name].Expr)
	}
	for _, blk := range body.Blocks {
		if blk.Type != "locals" {
			s.nativeCredentials(blk.Body, blk.Type)
		}
	}
}

// nativeField hides the value e of the field name when it is a
// credential, and looks for credentials in the objects it holds.
func (s *sensitiveScan) nativeField(parent, name string, e hclsyntax.Expression) {
	if credentialField(parent, name) {
		s.coverCredential(e)
		return
	}
	switch e := e.(type) {
	case *hclsyntax.ParenthesesExpr:
		s.nativeField(parent, name, e.Expression)
	case *hclsyntax.ObjectConsExpr:
		for _, item := range e.Items {
			if key := exprKey(item.KeyExpr); key != "" {
				s.nativeField(name, key, item.ValueExpr)
			}
		}
	case *hclsyntax.TupleConsExpr:
		for _, el := range e.Exprs {
			s.nativeField(parent, name, el)
		}
	}
}

// coverCredential hides a credential field's value written in native
// syntax: the defaults of the runtime() it reads (the variable names stay
// visible), or, when it reads none, the whole value and the locals it
// reads. The literal parts of a template ("Bearer ") are not scrubbed
// from text: they are not the credential, and agentform's own hints
// quote them.
func (s *sensitiveScan) coverCredential(e hclsyntax.Expression) {
	runtime, secret, marker := false, false, false
	_ = hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.FunctionCallExpr:
			runtime = runtime || n.Name == "runtime"
			secret = secret || n.Name == "secret"
		case *hclsyntax.ObjectConsExpr:
			_, _, isMarker := nativeMarker(n)
			marker = marker || isMarker
		}
		return nil
	})
	switch {
	case secret && !runtime && !marker:
		// secret() alone: the walk over every secret() call hides it.
	case runtime:
		s.coverDefaults(e, true)
	case marker:
		s.coverMarkers(e, true)
	default:
		s.cover(e, true)
	}
}

// jsonCredentials hides every credential field of a JSON-syntax file
// found by its key (credentialField), whether or not its value decoded.
func (s *sensitiveScan) jsonCredentials(name string, doc *jsonDoc, v *jsonValue, parent string) {
	if v == nil {
		return
	}
	for _, m := range v.members {
		if credentialField(parent, m.key) {
			s.coverJSON(name, doc, m.value)
			continue
		}
		if m.key != "locals" || parent != "" {
			s.jsonCredentials(name, doc, m.value, m.key)
		}
	}
	for _, e := range v.elems {
		s.jsonCredentials(name, doc, e, parent)
	}
}

// runtimeMarker is the key of the serialised runtime value:
// { "$runtime" = { env = "U", default = "x", secret = true } }.
const runtimeMarker = "$runtime"

// nativeMarker returns the default written in a serialised runtime value
// (nil when it has none) and whether it is marked secret; ok is false
// when o is not one.
func nativeMarker(o *hclsyntax.ObjectConsExpr) (def hclsyntax.Expression, secret, ok bool) {
	for _, item := range o.Items {
		if exprKey(item.KeyExpr) != runtimeMarker {
			continue
		}
		spec, isObj := item.ValueExpr.(*hclsyntax.ObjectConsExpr)
		if !isObj {
			return nil, false, true
		}
		for _, f := range spec.Items {
			switch exprKey(f.KeyExpr) {
			case "default":
				def = f.ValueExpr
			case "secret":
				v, diags := f.ValueExpr.Value(nil)
				if !diags.HasErrors() && v.IsKnown() && !v.IsNull() {
					if b, err := convert.Convert(v, cty.Bool); err == nil && !b.IsNull() {
						secret = b.True()
					}
				}
			}
		}
		return def, secret, true
	}
	return nil, false, false
}

// coverMarkers hides the default of every serialised runtime value in e
// that all says to hide: a secret one, or any when all is set (e is a
// credential's value).
func (s *sensitiveScan) coverMarkers(e hclsyntax.Node, all bool) {
	_ = hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		if o, ok := n.(*hclsyntax.ObjectConsExpr); ok {
			if def, secret, ok := nativeMarker(o); ok && def != nil && (secret || all) {
				s.cover(def, true)
			}
		}
		return nil
	})
}

// jsonMarkers hides the default of every serialised runtime value of a
// JSON-syntax file marked secret.
func (s *sensitiveScan) jsonMarkers(name string, doc *jsonDoc, v *jsonValue) {
	if v == nil {
		return
	}
	for _, m := range v.members {
		if m.key == runtimeMarker {
			if def, secret := jsonMarker(doc, m.value); def != nil && secret {
				s.coverJSON(name, doc, def)
			}
		}
		s.jsonMarkers(name, doc, m.value)
	}
	for _, e := range v.elems {
		s.jsonMarkers(name, doc, e)
	}
}

// jsonMarker returns the default of the spec of a serialised runtime
// value written in JSON (nil when it has none) and whether it is marked
// secret.
func jsonMarker(doc *jsonDoc, spec *jsonValue) (def *jsonValue, secret bool) {
	if s := spec.member("secret"); s != nil {
		text := string(bytes.Trim(doc.src[s.start:s.end], `"`))
		secret = text == "true"
	}
	return spec.member("default"), secret
}
