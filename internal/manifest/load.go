package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/agentform/agentform/internal/safefile"
)

// MaxFileSize is the largest manifest file the loader reads. Manifests are
// small; anything larger is almost certainly not a manifest.
const MaxFileSize = 8 << 20

// MaxNesting is the deepest bracket, brace, parenthesis or template nesting
// the loader accepts. It keeps the recursive-descent parser far away from
// stack exhaustion on hostile input.
const MaxNesting = 256

// Manifest file suffixes.
const (
	SuffixNative = ".acl"
	SuffixJSON   = ".acl.json"
)

// ManifestFiles lists the manifest files of a workspace directory, sorted.
func ManifestFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		if strings.HasSuffix(name, SuffixNative) || strings.HasSuffix(name, SuffixJSON) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Load reads every manifest file of the workspace directory dir and returns
// the merged configuration. The Config is returned even when there are
// errors, holding whatever could be decoded, so callers can still print
// diagnostics with source lines (Config.Files).
func Load(dir string) (*Config, hcl.Diagnostics) {
	cfg := &Config{Dir: dir, Files: map[string]*hcl.File{}, Locals: map[string]*Local{}, Providers: map[string]*Provider{}}
	names, err := ManifestFiles(dir)
	if err != nil {
		return cfg, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read workspace directory",
			Detail:   fmt.Sprintf("agentform could not list the manifest files of %s: %s.", dir, err),
		}}
	}
	if len(names) == 0 {
		return cfg, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "No manifest files",
			Detail:   fmt.Sprintf("The directory %s has no *.acl or *.acl.json files. Run agentform in a workspace directory, pass -chdir=DIR, or create one with \"agentform init\".", dir),
		}}
	}
	sources := map[string][]byte{}
	var diags hcl.Diagnostics
	for _, name := range names {
		src, d := readManifestFile(filepath.Join(dir, name), name)
		diags = append(diags, d...)
		if src != nil {
			sources[name] = src
		}
	}
	c, d := LoadSources(dir, sources)
	return c, append(diags, d...)
}

func readManifestFile(path, name string) ([]byte, hcl.Diagnostics) {
	fileRange := &hcl.Range{Filename: name, Start: hcl.InitialPos, End: hcl.InitialPos}
	src, err := safefile.Read(path, MaxFileSize)
	var refused *safefile.ReadError
	switch {
	case errors.Is(err, safefile.ErrTooLarge) && errors.As(err, &refused):
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Manifest file too large",
			Detail:  fmt.Sprintf("%s %s; manifest files may be at most %d bytes.", name, refused.Reason, MaxFileSize),
			Subject: fileRange}}
	case errors.As(err, &refused):
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read manifest file",
			Detail: fmt.Sprintf("%s %s.", name, refused.Reason), Subject: fileRange}}
	case err != nil:
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read manifest file",
			Detail: fmt.Sprintf("Reading %s: %s.", name, err), Subject: fileRange}}
	}
	return src, nil
}

// LoadSources decodes manifest files given by name (which decides the
// syntax: *.acl.json is HCL JSON, anything else HCL native) and content.
// dir is the workspace directory that file("path") reads from; with dir ""
// nothing is read from disk and file() is an error.
func LoadSources(dir string, sources map[string][]byte) (*Config, hcl.Diagnostics) {
	cfg := &Config{Dir: dir, Files: map[string]*hcl.File{}, Locals: map[string]*Local{}, Providers: map[string]*Provider{}}
	parser := hclparse.NewParser()
	var diags hcl.Diagnostics
	var bodies []hcl.Body
	for _, name := range sortedKeys(sources) {
		src := sources[name]
		if d := CheckNesting(name, src); d != nil {
			diags = append(diags, d)
			// Keep the bytes so the diagnostic can show the source line.
			cfg.Files[name] = &hcl.File{Bytes: src}
			cfg.markUnparsed(name)
			continue
		}
		var f *hcl.File
		var d hcl.Diagnostics
		if strings.HasSuffix(name, SuffixJSON) {
			// A byte order mark, which the native syntax skips, is no
			// JSON value: left out, as editors show the file.
			f, d = parser.ParseJSON(bytes.TrimPrefix(src, []byte("\ufeff")), name)
		} else {
			f, d = parser.ParseHCL(src, name)
		}
		diags = append(diags, d...)
		if f != nil {
			cfg.Files[name] = f
		}
		if f != nil && !d.HasErrors() {
			bodies = append(bodies, f.Body)
		}
		if d.HasErrors() {
			if f == nil {
				cfg.Files[name] = &hcl.File{Bytes: src}
			}
			cfg.markUnparsed(name)
		}
	}
	if diags.HasErrors() {
		return cfg, diags
	}
	dec := &decoder{dir: dir}
	dec.decodeWorkspace(cfg, bodies)
	return cfg, append(diags, dec.diags...)
}

// markUnparsed records that the file name did not parse.
func (c *Config) markUnparsed(name string) {
	if c.Unparsed == nil {
		c.Unparsed = map[string]bool{}
	}
	c.Unparsed[name] = true
}

var topSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "locals"},
		{Type: "build"},
		{Type: "runtime"},
		{Type: "providers"},
		{Type: "provider", LabelNames: []string{"name"}},
		{Type: "agent", LabelNames: []string{"name"}},
		{Type: "tool", LabelNames: []string{"name"}},
		{Type: "skill", LabelNames: []string{"name"}},
		{Type: "http_server"},
		{Type: "network"},
		{Type: "filesystem"},
		{Type: "check", LabelNames: []string{"name"}},
		{Type: "waiver", LabelNames: []string{"rule"}},
		{Type: "block", LabelNames: []string{"name"}},
	},
}

func (d *decoder) decodeWorkspace(cfg *Config, bodies []hcl.Body) {
	var blocks hcl.Blocks
	for _, body := range bodies {
		content, diags := d.content(body, topSchema)
		d.add(diags)
		if content != nil {
			blocks = append(blocks, content.Blocks...)
		}
	}

	locals := d.decodeLocals(cfg, blocks)
	d.ctx = &hcl.EvalContext{
		Variables: map[string]cty.Value{"locals": locals},
		Functions: map[string]function.Function{"runtime": runtimeFunc, "secret": secretFunc, "file": d.fileFunc()},
	}
	cfg.localValues = locals

	seen := map[string]map[string]hcl.Range{}
	// Agent, tool and skill names become file names (dist/<agent>.agent.tgz,
	// tools/<tool>/, skills/<skill>/ in an artifact), which two names
	// differing only in letter case share on macOS and Windows.
	folded := map[string]map[string]*hcl.Block{}
	unique := func(b *hcl.Block) bool {
		if len(b.Labels) == 0 {
			return true
		}
		name := b.Labels[0]
		if b.Type != "waiver" && !d.validName(b) {
			return false
		}
		if b.Type == "waiver" || b.Type == "provider" {
			return true
		}
		if seen[b.Type] == nil {
			seen[b.Type] = map[string]hcl.Range{}
		}
		if prev, dup := seen[b.Type][name]; dup {
			d.errorf(b.LabelRanges[0], fmt.Sprintf("Duplicate %s %q", b.Type, name),
				"The %s name %q is already used by the block at %s. Each %s needs a unique name.", b.Type, name, prev, b.Type)
			return false
		}
		seen[b.Type][name] = b.DefRange
		if b.Type == "agent" || b.Type == "tool" || b.Type == "skill" {
			if folded[b.Type] == nil {
				folded[b.Type] = map[string]*hcl.Block{}
			}
			key := strings.ToLower(name)
			if prev, twin := folded[b.Type][key]; twin {
				d.errorf(b.LabelRanges[0], fmt.Sprintf("%s%s names differ only in letter case", strings.ToUpper(b.Type[:1]), b.Type[1:]),
					"The %s name %q differs only in letter case from %q, the block at %s. Agent, tool and skill names become file names (dist/<agent>.agent.tgz, and tools/<tool>/ and skills/<skill>/ inside artifacts), which the two would share on macOS and Windows. Rename one.", b.Type, name, prev.Labels[0], prev.DefRange)
				return false
			}
			folded[b.Type][key] = b
		}
		return true
	}

	for _, typ := range []string{"build", "runtime", "providers", "http_server", "network", "filesystem"} {
		b := d.singleBlock(blocks, typ)
		if b == nil {
			continue
		}
		switch typ {
		case "build":
			cfg.Build = d.decodeBuild(b)
		case "runtime":
			cfg.Runtime = d.decodeRuntime(b)
		case "providers":
			d.providersWritten = true
			d.decodeProviders(b, cfg.Providers)
		case "http_server":
			cfg.HTTPServer = d.decodeHTTPServer(b)
		case "network":
			cfg.Network = d.decodeNetwork(b)
		case "filesystem":
			cfg.Filesystem = d.decodeFilesystem(b)
		}
	}
	for _, b := range blocks {
		if !unique(b) {
			continue
		}
		switch b.Type {
		case "agent":
			cfg.Agents = append(cfg.Agents, d.decodeAgent(b))
		case "tool":
			if t := d.decodeTool(b); t != nil {
				cfg.Tools = append(cfg.Tools, t)
			}
		case "skill":
			cfg.Skills = append(cfg.Skills, d.decodeSkill(b))
		case "provider":
			d.providersWritten = true
			d.decodeLabeledProvider(b, cfg.Providers)
		case "check":
			cfg.Checks = append(cfg.Checks, d.decodeCheck(b))
		case "waiver":
			cfg.Waivers = append(cfg.Waivers, d.decodeWaiver(b))
		case "block":
			cfg.Blocks = append(cfg.Blocks, d.decodeCodegenBlock(b))
		}
	}
	sort.Slice(cfg.Agents, func(i, j int) bool { return cfg.Agents[i].Name < cfg.Agents[j].Name })
	sort.Slice(cfg.Tools, func(i, j int) bool { return cfg.Tools[i].Name < cfg.Tools[j].Name })
	sort.Slice(cfg.Skills, func(i, j int) bool { return cfg.Skills[i].Name < cfg.Skills[j].Name })
	sort.Slice(cfg.Checks, func(i, j int) bool { return cfg.Checks[i].Name < cfg.Checks[j].Name })
	sort.Slice(cfg.Blocks, func(i, j int) bool { return cfg.Blocks[i].Name < cfg.Blocks[j].Name })
	sort.SliceStable(cfg.Waivers, func(i, j int) bool {
		if cfg.Waivers[i].RuleID != cfg.Waivers[j].RuleID {
			return cfg.Waivers[i].RuleID < cfg.Waivers[j].RuleID
		}
		return cfg.Waivers[i].Target.Value < cfg.Waivers[j].Target.Value
	})
	d.validateWorkspace(cfg)
}

// validName checks that a block label is usable as a name: registered tool
// names, file names and addresses are built from it.
func (d *decoder) validName(b *hcl.Block) bool {
	name := b.Labels[0]
	ok := IsName(name)
	if !ok {
		d.errorf(b.LabelRanges[0], fmt.Sprintf("Invalid %s name", b.Type),
			"%q is not a valid %s name. A name starts with an ASCII letter or underscore and contains only ASCII letters, digits, underscores and dashes (at most 64 characters).", name, b.Type)
	}
	return ok
}

// IsName reports whether name is a valid block name: it starts with an
// ASCII letter or underscore and holds only ASCII letters, digits,
// underscores and dashes, at most 64 characters. The lockfile holds its
// entries' names to the same rule.
func IsName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i, r := range name {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && (r == '-' || r >= '0' && r <= '9'))) {
			return false
		}
	}
	return true
}

// CheckNesting rejects sources nested deeper than MaxNesting before they
// reach the recursive-descent parsers (and the walks over what they
// build), which recurse once per level and would exhaust the stack (a
// fatal error, not a panic). Per expression (a list item, an attribute:
// a comma, or a line break outside brackets and interpolations, starts a
// new one) it counts the depth of brackets, template interpolations and
// %{if}/%{for} directives, runs of unary operators, chains of
// conditionals, and the chain of operators, indexes and splats the
// parser folds into one deep tree (1+1+1..., a[*][*]..., a ? (b) : ...).
// That quick scan reads strings and heredocs as HCL does in every
// manifest we know of; where it read much as text that could nest, the
// file is counted again over HCL's own tokens, so that no difference in
// how the two read a string lets a deep expression through.
func CheckNesting(name string, src []byte) *hcl.Diagnostic {
	d, skipped := scanNesting(name, src)
	if d == nil && skipped {
		d = tokenNesting(name, src)
	}
	if d == nil && strings.HasSuffix(name, SuffixJSON) {
		d = jsonTemplateNesting(name, src)
	}
	return d
}

// jsonTemplateNesting counts, in an .acl.json file, each string (key or
// value) as the template HCL parses it as once its JSON escapes are
// decoded: "\u0024{" is an interpolation there, which no scan of the raw
// bytes sees. The JSON structure itself is counted by the scan.
func jsonTemplateNesting(name string, src []byte) *hcl.Diagnostic {
	dec := json.NewDecoder(bytes.NewReader(src))
	for {
		at := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			// The end, or a syntax error the JSON parser reports.
			return nil
		}
		str, ok := tok.(string)
		if !ok || !strings.ContainsAny(str, "$%") {
			continue
		}
		// The offset is where the previous token ended: the string's
		// opening quote is past the separators.
		for at < len(src) && strings.IndexByte(" \t\r\n:,", src[at]) >= 0 {
			at++
		}
		tokens, _ := hclsyntax.LexTemplate([]byte(str), name, hcl.InitialPos)
		if _, ok := countNesting(tokens); !ok {
			return nestingError(name, src, at)
		}
	}
}

// MaxChain bounds the operators, indexes and splats of one expression:
// each is a level of the tree the parser builds. Real expressions have a
// few dozen at most; the stack gives out past a few hundred thousand.
const MaxChain = 16 * MaxNesting

// nestingError is CheckNesting's diagnostic, at byte at of src.
func nestingError(name string, src []byte, at int) *hcl.Diagnostic {
	pos := BytePos(src, at)
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Manifest nested too deeply",
		Detail:   fmt.Sprintf("This file nests expressions more than %d levels deep, or chains more than %d operators in one expression. Real manifests never do; flatten the expression.", MaxNesting, MaxChain),
		Subject:  &hcl.Range{Filename: name, Start: pos, End: pos},
	}
}

// BytePos is the position of byte at of src (clamped to src), for a
// diagnostic about a file that is not parsed.
func BytePos(src []byte, at int) hcl.Pos {
	at = min(max(at, 0), len(src))
	line := 1 + bytes.Count(src[:at], []byte("\n"))
	col := at - bytes.LastIndexByte(src[:at], '\n')
	return hcl.Pos{Line: line, Column: col, Byte: at}
}

// skippedLimit is how much that could nest scanNesting may read as text
// before CheckNesting counts the file over HCL's tokens.
const skippedLimit = 64

// nestCounter is the count both passes keep: a level per bracket,
// interpolation or directive body, each with the counts of the
// expression being read in it.
type nestCounter struct {
	levels     []nestLevel
	directives int
	// chain is the sum of the levels' chains: a chain inside a bracket
	// inside a chain is one path down the tree.
	chain int
}

type nestLevel struct {
	// spans reports whether a line break continues the expression (inside
	// brackets, parentheses and interpolations) rather than ending it.
	spans               bool
	unary, conds, chain int
}

func (n *nestCounter) top() *nestLevel { return &n.levels[len(n.levels)-1] }

// push opens a level; an index or splat ("[") is also one more link of
// the expression it indexes.
func (n *nestCounter) push(spans, index bool) bool {
	if index {
		n.top().chain++
		n.chain++
		if !n.ok() {
			return false
		}
	}
	n.levels = append(n.levels, nestLevel{spans: spans})
	return n.ok()
}

func (n *nestCounter) pop() {
	if len(n.levels) > 1 {
		n.chain -= n.top().chain
		n.levels = n.levels[:len(n.levels)-1]
	}
	n.top().unary = 0
}

// op counts an operator: unary ones ("-", "!") also extend a run.
func (n *nestCounter) op(unary, cond bool) bool {
	l := n.top()
	l.chain++
	n.chain++
	if unary {
		l.unary++
	} else {
		l.unary = 0
	}
	if cond {
		l.conds++
	}
	return n.ok()
}

// operand ends a run of unary operators.
func (n *nestCounter) operand() { n.top().unary = 0 }

// next starts a new expression at a comma, or at a line break that ends
// one.
func (n *nestCounter) next(lineBreak bool) {
	if l := n.top(); !lineBreak || !l.spans {
		n.chain -= l.chain
		l.unary, l.conds, l.chain = 0, 0, 0
	}
}

func (n *nestCounter) ok() bool {
	l := n.top()
	return len(n.levels) <= MaxNesting+1 && n.directives <= MaxNesting &&
		l.unary <= MaxNesting && l.conds <= MaxNesting && n.chain <= MaxChain
}

// directive counts a template directive by its keyword.
func (n *nestCounter) directive(keyword string) bool {
	switch keyword {
	case "if", "for":
		n.directives++
	case "endif", "endfor":
		n.directives--
	}
	return n.ok()
}

// scanNesting is CheckNesting's quick scan. skipped reports that it read
// more than skippedLimit openers or "?" as text, or a run of more than
// skippedLimit unary operators.
func scanNesting(name string, src []byte) (d *hcl.Diagnostic, skipped bool) {
	n := &nestCounter{levels: []nestLevel{{}}}
	// stack of contexts: 'c' code, '"' string literal, 'h' heredoc (whose
	// closing marker is the last of markers).
	ctx := []byte{'c'}
	var markers []string
	textOpen, textRun := 0, 0
	text := func(c byte) {
		switch c {
		case '[', '(', '{', '?', '%':
			textOpen++
			textRun = 0
		case '-', '!':
			textRun++
		case ' ', '\t', '\r', '\n':
		default:
			textRun = 0
		}
		if textOpen > skippedLimit || textRun > skippedLimit {
			skipped = true
		}
	}
	var i int
	fail := func() (*hcl.Diagnostic, bool) { return nestingError(name, src, i), skipped }
	// template reads c in a string or heredoc: "${" and "%{" open code
	// (a directive's keyword counted), "$${" and "%%{" are text.
	template := func(c byte) bool {
		switch {
		case (c == '$' || c == '%') && i+2 < len(src) && src[i+1] == c && src[i+2] == '{':
			i += 2
		case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
			if c == '%' {
				k := i + 2
				for k < len(src) && (src[k] == ' ' || src[k] == '~' || src[k] == '\t') {
					k++
				}
				e := k
				for e < len(src) && src[e] >= 'a' && src[e] <= 'z' {
					e++
				}
				if !n.directive(string(src[k:e])) {
					return false
				}
			}
			i++
			ctx = append(ctx, 'c')
			return n.push(true, false)
		default:
			text(c)
		}
		return true
	}
	for i = 0; i < len(src); i++ {
		c := src[i]
		top := ctx[len(ctx)-1]
		switch {
		case top == 'h':
			if i == 0 || src[i-1] == '\n' {
				line := src[i:]
				if end := bytes.IndexByte(line, '\n'); end >= 0 {
					line = line[:end]
				}
				if strings.TrimSpace(string(line)) == markers[len(markers)-1] {
					ctx, markers = ctx[:len(ctx)-1], markers[:len(markers)-1]
					i += len(line) - 1
					continue
				}
			}
			if !template(c) {
				return fail()
			}
		case top == 'c' && c == '<' && i+1 < len(src) && src[i+1] == '<' && heredocStart(src[i+2:]) > 0:
			// The text up to the marker line is a template, not code:
			// only its interpolations and directives nest.
			j := i + 2
			if src[j] == '-' {
				j++
			}
			k := j
			for k < len(src) && src[k] != '\n' && src[k] != '\r' {
				k++
			}
			markers = append(markers, string(src[j:k]))
			ctx = append(ctx, 'h')
			n.operand()
			i = k
			if i < len(src) && src[i] == '\r' {
				i++
			}
		case top == '"':
			switch c {
			case '\\':
				i++
			case '"':
				ctx = ctx[:len(ctx)-1]
			default:
				if !template(c) {
					return fail()
				}
			}
		case c == '"':
			ctx = append(ctx, '"')
			n.operand()
		case c == '#' || (c == '/' && i+1 < len(src) && src[i+1] == '/'):
			for i < len(src) && src[i] != '\n' {
				text(src[i])
				i++
			}
			i--
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				end = len(src) - i - 2
			}
			for _, b := range src[i+2 : i+2+end] {
				text(b)
			}
			i += end + 3
		case c == '(' || c == '[' || c == '{':
			ctx = append(ctx, 'c')
			// Inside {for ...} line breaks do not end the expression.
			if !n.push(c != '{' || forExpr(src[i+1:]), c == '[') {
				return fail()
			}
		case c == ')' || c == ']' || c == '}':
			if len(ctx) > 1 {
				ctx = ctx[:len(ctx)-1]
			}
			n.pop()
		case c == '=' && i+1 < len(src) && src[i+1] == '=', c == '+', c == '*', c == '/', c == '%', c == '<', c == '>', c == '&', c == '|':
			if !n.op(false, false) {
				return fail()
			}
		case c == '!' || c == '-':
			if !n.op(true, false) {
				return fail()
			}
		case c == '?':
			// Each conditional of a chain (a ? b : c ? d : ...) is parsed
			// inside the one before it.
			if !n.op(false, true) {
				return fail()
			}
		case c == ',':
			n.next(false)
		case c == '\n':
			n.next(true)
		case c == ' ' || c == '\t' || c == '\r':
		default:
			n.operand()
		}
		if len(ctx) > MaxNesting*2 {
			return fail()
		}
	}
	return nil, skipped
}

// tokenNesting is CheckNesting's count over HCL's own tokens (the lexer
// does not recurse), with strings, heredocs and comments read exactly as
// the parser will read them.
func tokenNesting(name string, src []byte) *hcl.Diagnostic {
	tokens, _ := hclsyntax.LexConfig(src, name, hcl.InitialPos)
	if at, ok := countNesting(tokens); !ok {
		return nestingError(name, src, at)
	}
	return nil
}

// countNesting is the count over tokens; when it is exceeded, ok is false
// and at is the byte offset of the token that exceeded it.
func countNesting(tokens hclsyntax.Tokens) (at int, ok bool) {
	n := &nestCounter{levels: []nestLevel{{}}}
	quotes := 0
	for k, t := range tokens {
		ok := true
		switch t.Type {
		case hclsyntax.TokenOBrace:
			// Inside {for ...} line breaks do not end the expression.
			j := k + 1
			for j < len(tokens) && tokens[j].Type == hclsyntax.TokenNewline {
				j++
			}
			ok = n.push(j < len(tokens) && tokens[j].Type == hclsyntax.TokenIdent && string(tokens[j].Bytes) == "for", false)
		case hclsyntax.TokenOBrack:
			ok = n.push(true, true)
		case hclsyntax.TokenOParen, hclsyntax.TokenTemplateInterp:
			ok = n.push(true, false)
		case hclsyntax.TokenTemplateControl:
			if j := k + 1; j < len(tokens) && tokens[j].Type == hclsyntax.TokenIdent {
				ok = n.directive(string(tokens[j].Bytes))
			}
			ok = ok && n.push(true, false)
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd:
			n.pop()
		case hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			quotes++
			n.operand()
		case hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			quotes--
		case hclsyntax.TokenMinus, hclsyntax.TokenBang:
			ok = n.op(true, false)
		case hclsyntax.TokenQuestion:
			ok = n.op(false, true)
		case hclsyntax.TokenPlus, hclsyntax.TokenStar, hclsyntax.TokenSlash, hclsyntax.TokenPercent,
			hclsyntax.TokenLessThan, hclsyntax.TokenGreaterThan, hclsyntax.TokenLessThanEq, hclsyntax.TokenGreaterThanEq,
			hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenAnd, hclsyntax.TokenOr:
			ok = n.op(false, false)
		case hclsyntax.TokenComma:
			n.next(false)
		case hclsyntax.TokenNewline:
			n.next(true)
		case hclsyntax.TokenComment:
			// A "#" or "//" comment's token holds the line break that
			// ends it.
			if bytes.HasSuffix(t.Bytes, []byte("\n")) {
				n.next(true)
			}
		default:
			n.operand()
		}
		if !ok || len(n.levels)+quotes > MaxNesting*2 {
			return t.Range.Start.Byte, false
		}
	}
	return 0, true
}

// forExpr reports whether rest, the text after a "{", starts a for
// expression: "for" after blanks and line breaks, then no more of a name.
func forExpr(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	if !bytes.HasPrefix(rest, []byte("for")) {
		return false
	}
	if len(rest) == 3 {
		return true
	}
	r, _ := utf8.DecodeRune(rest[3:])
	return !(r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))
}

// heredocStart returns the length of a heredoc's opening after "<<" in
// rest ("EOT\n", "-EOT\r\n"): an optional "-", an identifier as HCL
// reads one (a letter or "_", then letters, digits, "_" and "-") and a
// line end; 0 when rest does not open one.
func heredocStart(rest []byte) int {
	j := 0
	if j < len(rest) && rest[j] == '-' {
		j++
	}
	k := j
	for k < len(rest) {
		r, size := utf8.DecodeRune(rest[k:])
		ok := r == '_' || unicode.IsLetter(r)
		if k > j {
			ok = ok || r == '-' || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
		}
		if !ok || r == utf8.RuneError {
			break
		}
		k += size
	}
	if k == j {
		return 0
	}
	switch {
	case k < len(rest) && rest[k] == '\n':
		return k + 1
	case k+1 < len(rest) && rest[k] == '\r' && rest[k+1] == '\n':
		return k + 2
	}
	return 0
}
