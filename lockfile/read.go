package lockfile

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/safefile"
)

// Kinds of tool that have lock entries (manifest.KindJavaScript etc.).
// bash tools pin nothing (commands are looked up on each host) and have
// none.
const (
	kindJavaScript = "javascript"
	kindPython     = "python"
	kindMCP        = "mcp"
	kindA2A        = "a2a"
)

// Interpreters a python entry may record.
var pythonInterpreters = []string{"embedded", "static"}

// maxNesting bounds how deeply brackets, braces, parentheses and template
// interpolations may nest in a lockfile. A real lockfile nests two levels;
// the bound keeps hostile input from exhausting the parser's stack.
const maxNesting = 64

// fixHint ends the detail of every diagnostic about a damaged entry.
const fixHint = `Restore ` + FileName + ` from version control, or delete the entry and run "agentform lock" to pin it again.`

// kindAttrs lists the attributes each kind may have besides kind itself.
var kindAttrs = map[string][]string{
	kindJavaScript: {"source", "deps", "bundle", "bundler"},
	kindPython:     {"source", "uv_lock", "interpreter"},
	kindMCP:        {"server", "hashed_fields", "tools", "definitions"},
	kindA2A:        {"card", "card_name", "card_version", "card_json"},
}

var kindNames = []string{kindA2A, kindJavaScript, kindMCP, kindPython}

var rootSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "skill", LabelNames: []string{"name"}},
		{Type: "tool", LabelNames: []string{"name"}},
	},
}

var skillSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "source", Required: true}},
}

var toolSchema = func() *hcl.BodySchema {
	s := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "kind", Required: true}}}
	for _, name := range toolAttrOrder[1:] {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: name})
	}
	return s
}()

// New returns an empty lockfile with non-nil maps.
func New() *File {
	return &File{Tools: map[string]*Tool{}, Skills: map[string]*Skill{}}
}

// Load reads the lockfile of the workspace directory dir (dir/FileName).
// Diagnostics name the file FileName, as manifest diagnostics name files
// relative to the workspace. A missing lockfile is an empty File and no
// diagnostics.
func Load(dir string) (*File, hcl.Diagnostics) {
	return read(filepath.Join(dir, FileName), FileName)
}

// Read reads and parses the lockfile at path; diagnostics name the file
// path. A missing file is an empty File and no diagnostics; any other read
// error is a diagnostic. The returned File is never nil: on errors it holds
// whatever could be decoded.
func Read(path string) (*File, hcl.Diagnostics) {
	return read(path, path)
}

// MaxFileSize is the largest lockfile ReadFile reads: far above what
// thousands of tools write, it only stops a file that never ends (a link to
// a device).
const MaxFileSize = 256 << 20

// ReadFile returns the bytes of the lockfile at path, refusing what is not
// a regular file or is larger than MaxFileSize (safefile.Read).
func ReadFile(path string) ([]byte, error) {
	return safefile.Read(path, MaxFileSize)
}

// Source returns the lockfile of dir as a file to show the source lines of
// its diagnostics from: its bytes, not parsed again (parsing would recurse
// as deep as a file Load refused for its nesting); nil when it cannot be
// read.
func Source(dir string) *hcl.File {
	src, err := ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		return nil
	}
	return &hcl.File{Bytes: src}
}

func read(path, name string) (*File, hcl.Diagnostics) {
	src, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	if err != nil {
		// No line of it to show: the error is about the file.
		detail := fmt.Sprintf("Reading %s: %s. Check the file's permissions, or delete it and run \"agentform lock\" to write it again.", name, err)
		if refused := (*safefile.ReadError)(nil); errors.As(err, &refused) {
			detail = fmt.Sprintf("%s %s. agentform keeps its lockfile there: move it away, and restore %s from version control or run \"agentform lock\" to write it again.", name, refused.Reason, FileName)
		}
		return New(), hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read lockfile",
			Detail:   detail,
		}}
	}
	return Parse(src, name)
}

// hinted adds fixHint to the errors that do not say what to do: the
// parser's own (syntax errors, unknown or repeated arguments, wrong
// blocks), which speak of the file as if it were written by hand.
func hinted(diags hcl.Diagnostics) hcl.Diagnostics {
	for _, d := range diags {
		if d.Severity == hcl.DiagError && !strings.Contains(d.Detail, "agentform lock") {
			d.Detail = strings.TrimSpace(d.Detail + " " + fixHint)
		}
	}
	return diags
}

// Parse decodes a lockfile's content; filename names it in diagnostics.
// Parsing is strict: an unknown block or attribute, an attribute that does
// not belong to the entry's kind, a duplicate entry or key, a value of the
// wrong type and a malformed hash are all errors located in the source.
// The returned File is never nil; on errors it holds whatever could be
// decoded. Parse never panics, whatever src holds.
func Parse(src []byte, filename string) (*File, hcl.Diagnostics) {
	lf := New()
	if d := checkNesting(filename, src); d != nil {
		return lf, hcl.Diagnostics{d}
	}
	// The manifest's count also bounds the chains of operators, indexes
	// and splats the parser folds into deep trees (a[*][*]...), which the
	// count above does not see.
	if d := manifest.CheckNesting(filename, src); d != nil {
		d.Summary = "Lockfile nested too deeply"
		d.Detail = fmt.Sprintf("This file nests or chains expressions deeper than the parser can take; a lockfile never does. %s", fixHint)
		return lf, hcl.Diagnostics{d}
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() || file == nil {
		return lf, hinted(diags)
	}
	p := &parser{diags: diags}
	content, d := file.Body.Content(rootSchema)
	p.diags = append(p.diags, d...)
	seen := map[string]*hcl.Block{}
	for _, block := range content.Blocks {
		name := block.Labels[0]
		if name == "" {
			p.errorf(block.LabelRanges[0], "Invalid entry name", "A %s entry needs a non-empty name: the name of its %s block. %s", block.Type, block.Type, fixHint)
			continue
		}
		if !manifest.IsName(name) {
			// The manifest's rule: no block could have this name, and a
			// name printed as it is could carry terminal escapes.
			p.errorf(block.LabelRanges[0], "Invalid entry name", "%s is not the name of any %s block: a name starts with an ASCII letter or underscore and contains only ASCII letters, digits, underscores and dashes (at most 64 characters). %s", strconv.QuoteToASCII(name), block.Type, fixHint)
			continue
		}
		key := block.Type + "." + name
		if first, ok := seen[key]; ok {
			p.errorf(block.DefRange, "Duplicate "+block.Type+" entry",
				"A %s %q entry was already declared at line %d. Each %s has one entry; remove one of them. %s",
				block.Type, name, first.DefRange.Start.Line, block.Type, fixHint)
			continue
		}
		seen[key] = block
		switch block.Type {
		case "skill":
			if s := p.skill(block); s != nil {
				lf.Skills[name] = s
			}
		case "tool":
			if t := p.tool(block); t != nil {
				lf.Tools[name] = t
			}
		}
	}
	return lf, hinted(p.diags)
}

// parser accumulates diagnostics while decoding entries.
type parser struct {
	diags hcl.Diagnostics
}

func (p *parser) errorf(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	p.diags = append(p.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  &r,
	})
}

func (p *parser) skill(block *hcl.Block) *Skill {
	content, diags := block.Body.Content(skillSchema)
	p.diags = append(p.diags, diags...)
	s := &Skill{}
	if a, ok := content.Attributes["source"]; ok {
		s.Source = p.hash(a, prefixH1)
	}
	return s
}

func (p *parser) tool(block *hcl.Block) *Tool {
	content, diags := block.Body.Content(toolSchema)
	p.diags = append(p.diags, diags...)
	t := &Tool{}
	a, ok := content.Attributes["kind"]
	if !ok {
		return t
	}
	kind, ok := p.exprString(a.Expr, `The "kind" argument`)
	if !ok {
		return t
	}
	t.Kind = kind
	allowed, known := kindAttrs[kind]
	if !known {
		hint := ""
		switch s := nameSuggestion(strings.ToLower(kind), kindNames); {
		case s != "":
			hint = fmt.Sprintf(" Did you mean %q?", s)
		case strings.EqualFold(kind, "bash"):
			hint = " bash tools have no lock entry."
		}
		p.errorf(a.Expr.Range(), "Invalid tool kind",
			"The kind of a tool entry is one of %s; got %q.%s %s",
			strings.Join(quoteAll(kindNames), ", "), kind, hint, fixHint)
		return t
	}
	// Attributes in file order, so that diagnostics come out in order.
	attrs := make([]*hcl.Attribute, 0, len(content.Attributes))
	for _, a := range content.Attributes {
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Range.Start.Byte < attrs[j].Range.Start.Byte })
	for _, a := range attrs {
		if a.Name == "kind" {
			continue
		}
		if !contains(allowed, a.Name) {
			p.errorf(a.NameRange, "Unsupported argument",
				"An argument named %q is not expected in a %s tool entry; %s entries have %s. %s",
				a.Name, t.Kind, t.Kind, strings.Join(quoteAll(append([]string{"kind"}, allowed...)), ", "), fixHint)
			continue
		}
		switch a.Name {
		case "source":
			t.Source = p.hash(a, prefixH1)
		case "deps":
			t.Deps = p.hash(a, prefixSHA256)
		case "bundle":
			t.Bundle = p.hash(a, prefixSHA256)
		case "bundler":
			t.Bundler = p.str(a)
		case "uv_lock":
			t.UVLock = p.hash(a, prefixSHA256)
		case "interpreter":
			t.Interpreter = p.str(a)
			if t.Interpreter != "" && !contains(pythonInterpreters, t.Interpreter) {
				p.errorf(a.Expr.Range(), "Invalid interpreter",
					"The interpreter of a python entry is one of %s; got %q. %s",
					strings.Join(quoteAll(pythonInterpreters), ", "), t.Interpreter, fixHint)
				t.Interpreter = ""
			}
		case "server":
			t.ServerName, t.ServerVersion = p.server(a)
		case "hashed_fields":
			t.HashedFields = p.hashedFields(a)
		case "tools":
			t.Served = p.stringMap(a, "served tool", func(expr hcl.Expression, v string) bool {
				return p.checkHash(expr, a.Name, v, prefixSHA256)
			})
		case "definitions":
			t.Definitions = p.stringMap(a, "definition", func(expr hcl.Expression, v string) bool {
				if !json.Valid([]byte(v)) {
					p.errorf(expr.Range(), "Invalid tool definition",
						"Each definitions value is the served tool's canonical JSON (its hashed fields); this one is not valid JSON. %s", fixHint)
					return false
				}
				return true
			})
		case "card":
			t.Card = p.hash(a, prefixSHA256)
		case "card_name":
			t.CardName = p.str(a)
		case "card_version":
			t.CardVersion = p.str(a)
		case "card_json":
			t.CardJSON = p.str(a)
			if t.CardJSON != "" && !json.Valid([]byte(t.CardJSON)) {
				p.errorf(a.Expr.Range(), "Invalid agent card",
					"card_json is the agent card's canonical JSON; this is not valid JSON. %s", fixHint)
				t.CardJSON = ""
			}
		}
	}
	return t
}

// value evaluates expr without variables or functions; ok is false when
// that failed (the diagnostics are recorded).
func (p *parser) value(expr hcl.Expression) (cty.Value, bool) {
	v, diags := expr.Value(nil)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return cty.NilVal, false
	}
	return v, true
}

// exprString reads expr as a string; what names it in the error.
func (p *parser) exprString(expr hcl.Expression, what string) (string, bool) {
	v, ok := p.value(expr)
	if !ok {
		return "", false
	}
	if v.IsNull() || v.Type() != cty.String {
		p.errorf(expr.Range(), "Incorrect attribute value type", "%s must be a string, not %s. %s", what, typeName(v), fixHint)
		return "", false
	}
	return v.AsString(), true
}

// str reads a string attribute; "" when it is not one (an error is
// recorded).
func (p *parser) str(a *hcl.Attribute) string {
	s, _ := p.exprString(a.Expr, fmt.Sprintf("The %q argument", a.Name))
	return s
}

// hash reads a hash attribute with the given prefix.
func (p *parser) hash(a *hcl.Attribute, prefix string) string {
	s, ok := p.exprString(a.Expr, fmt.Sprintf("The %q argument", a.Name))
	if !ok || !p.checkHash(a.Expr, a.Name, s, prefix) {
		return ""
	}
	return s
}

const (
	prefixH1     = "h1:"
	prefixSHA256 = "sha256:"
)

// checkHash reports whether s is a well-formed hash with prefix, recording
// an error at expr when it is not.
func (p *parser) checkHash(expr hcl.Expression, name, s, prefix string) bool {
	if validHash(s, prefix) {
		return true
	}
	p.errorf(expr.Range(), "Invalid hash", "The %q value must be %s. %s", name, hashForm(prefix), fixHint)
	return false
}

// validHash reports whether s is "h1:<base64 of 32 bytes>" (prefix h1:)
// or "sha256:<64 lowercase hex digits>" (prefix sha256:).
func validHash(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return false
	}
	switch prefix {
	case prefixH1:
		b, err := base64.StdEncoding.Strict().DecodeString(rest)
		return err == nil && len(b) == 32 && base64.StdEncoding.EncodeToString(b) == rest
	case prefixSHA256:
		if len(rest) != 64 {
			return false
		}
		for i := 0; i < len(rest); i++ {
			c := rest[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
		return true
	}
	return false
}

// pair is one key and value expression of an object constructor.
type pair struct {
	key   string
	krng  hcl.Range
	value hcl.Expression
}

// pairs reads an object constructor's keys; ok is false (with an error)
// when expr is not one or a key is not a string. Duplicate keys are
// errors and are dropped.
func (p *parser) pairs(a *hcl.Attribute, what string) ([]pair, bool) {
	kvs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		p.errorf(a.Expr.Range(), "Incorrect attribute value type", "The %q argument must be an object of %s. %s", a.Name, what, fixHint)
		return nil, false
	}
	var out []pair
	seen := map[string]hcl.Range{}
	for _, kv := range kvs {
		k, ok := p.exprString(kv.Key, fmt.Sprintf("A key of %q", a.Name))
		if !ok {
			continue
		}
		krng := kv.Key.Range()
		if first, dup := seen[k]; dup {
			p.errorf(krng, "Duplicate key", "The key %q of %q was already set at line %d. %s", k, a.Name, first.Start.Line, fixHint)
			continue
		}
		seen[k] = krng
		out = append(out, pair{key: k, krng: krng, value: kv.Value})
	}
	return out, true
}

// server reads server = { name = "…", version = "…" }.
func (p *parser) server(a *hcl.Attribute) (name, version string) {
	kvs, ok := p.pairs(a, `the server's name and version, like { name = "github-mcp", version = "1.4.0" }`)
	if !ok {
		return "", ""
	}
	for _, kv := range kvs {
		what := fmt.Sprintf("The server %s", kv.key)
		switch kv.key {
		case "name":
			name, _ = p.exprString(kv.value, what)
		case "version":
			version, _ = p.exprString(kv.value, what)
		default:
			suggest := ""
			if s := nameSuggestion(kv.key, []string{"name", "version"}); s != "" {
				suggest = fmt.Sprintf(" Did you mean %q?", s)
			}
			p.errorf(kv.krng, "Unsupported server field", "The server object has only name and version, not %q.%s %s", kv.key, suggest, fixHint)
		}
	}
	return name, version
}

// hashedFields reads a list of distinct non-empty strings, sorted.
func (p *parser) hashedFields(a *hcl.Attribute) []string {
	exprs, diags := hcl.ExprList(a.Expr)
	if diags.HasErrors() {
		p.errorf(a.Expr.Range(), "Incorrect attribute value type", `The "hashed_fields" argument must be a list of field names, like ["description", "inputSchema", "name"]. %s`, fixHint)
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range exprs {
		s, ok := p.exprString(e, `An element of "hashed_fields"`)
		if !ok {
			continue
		}
		switch {
		case s == "":
			p.errorf(e.Range(), "Invalid hashed field", "A hashed field name cannot be empty. %s", fixHint)
		case seen[s]:
			p.errorf(e.Range(), "Duplicate hashed field", "The field %q is listed twice. %s", s, fixHint)
		default:
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// stringMap reads an object of strings keyed by served tool name; check
// validates each value. The result is nil when empty.
func (p *parser) stringMap(a *hcl.Attribute, what string, check func(hcl.Expression, string) bool) map[string]string {
	kvs, ok := p.pairs(a, what+"s keyed by served tool name")
	if !ok {
		return nil
	}
	var out map[string]string
	for _, kv := range kvs {
		if kv.key == "" {
			p.errorf(kv.krng, "Invalid served tool name", "A served tool name cannot be empty. %s", fixHint)
			continue
		}
		v, ok := p.exprString(kv.value, fmt.Sprintf("The %s of %q", what, kv.key))
		if !ok || !check(kv.value, v) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[kv.key] = v
	}
	return out
}

func typeName(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	return v.Type().FriendlyName()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// nameSuggestion returns the candidate closest to given, or "" when none
// is close.
func nameSuggestion(given string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(given, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// checkNesting rejects sources nested deeper than maxNesting before they
// reach the recursive-descent parser. It tracks brackets, braces,
// parentheses, quoted strings and template interpolations outside
// comments, and counts runs of unary operators and conditional operators
// (each of which the parser may nest).
func checkNesting(name string, src []byte) *hcl.Diagnostic {
	// st holds the open constructs: '(', '[', '{', '"' (a quoted string)
	// and '$' (a template interpolation inside one).
	var st []byte
	unary, conds := 0, 0
	i := 0
	fail := func() *hcl.Diagnostic {
		pos := manifest.BytePos(src, i)
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Lockfile nested too deeply",
			Detail:   fmt.Sprintf("This file nests expressions more than %d levels deep; a lockfile never does. %s", maxNesting, fixHint),
			Subject:  &hcl.Range{Filename: name, Start: pos, End: pos},
		}
	}
	push := func(c byte) bool {
		st = append(st, c)
		return len(st) <= maxNesting
	}
	for ; i < len(src); i++ {
		c := src[i]
		if len(st) > 0 && st[len(st)-1] == '"' {
			switch {
			case c == '\\':
				i++
			case c == '"' || c == '\n':
				// The end of the string; at a newline it is unterminated
				// and the parser reports it.
				st = st[:len(st)-1]
			case (c == '$' || c == '%') && i+2 < len(src) && src[i+1] == c && src[i+2] == '{':
				i += 2 // "$${" is a literal "${"
			case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
				i++
				if !push('$') {
					return fail()
				}
			}
			continue
		}
		switch c {
		case '"':
			unary = 0
			if !push('"') {
				return fail()
			}
		case '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case '/':
			if i+1 < len(src) && src[i+1] == '/' {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			} else if i+1 < len(src) && src[i+1] == '*' {
				end := bytes.Index(src[i+2:], []byte("*/"))
				if end < 0 {
					return nil // an unterminated comment: the parser reports it
				}
				i += 2 + end + 1
			}
		case '(', '[', '{':
			unary = 0
			if !push(c) {
				return fail()
			}
		case ')', ']', '}':
			unary = 0
			if len(st) > 0 {
				st = st[:len(st)-1]
			}
		case '!', '-':
			unary++
			if unary > maxNesting {
				return fail()
			}
		case '?':
			conds++
			if conds > maxNesting {
				return fail()
			}
		case ' ', '\t', '\r', '\n':
		default:
			unary = 0
		}
	}
	return nil
}
