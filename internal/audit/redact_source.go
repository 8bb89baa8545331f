package audit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/render"
)

// SourceRedaction returns what output must not show of manifest files
// known only by their bytes: files that did not parse (Redaction adds
// them), or that fmt reads. It masks what Redaction masks, found in the
// tokens rather than the syntax tree, which a syntax error leaves partial:
//
//   - the arguments of secret() but the variable name of the runtime()
//     it wraps;
//   - the default of a serialised runtime value marked secret;
//   - the value of a field named like a credential (credentialField),
//     but the variable names of the runtime() calls it holds.
//
// Where the tokens cannot tell a value's extent (a line that mentions
// secret( or a credential field inside what an unterminated string
// swallowed), the rest of the line from there is masked. A name ending
// in .acl.json is read as JSON, any other as native syntax.
func SourceRedaction(files map[string][]byte) *render.Redaction {
	var ranges []hcl.Range
	var values []string
	for _, name := range sortedMapKeys(files) {
		r, v := scanSource(name, files[name])
		ranges = append(ranges, r...)
		values = append(values, v...)
	}
	return render.NewRedaction(ranges, values)
}

// scanSource returns the ranges SourceRedaction masks of one file, and
// the strings written in them.
func scanSource(name string, src []byte) ([]hcl.Range, []string) {
	sc := &sourceScan{src: src}
	if strings.HasSuffix(name, manifest.SuffixJSON) {
		sc.scanJSON()
	} else {
		sc.scanNative(name)
		sc.comments, sc.prose = nativeProse(src)
	}
	sc.fallback()
	out := make([]hcl.Range, 0, len(sc.spans))
	pos := newPosIndex(src)
	for _, sp := range sc.spans {
		out = append(out, hcl.Range{Filename: name, Start: pos.at(sp.Start), End: pos.at(sp.End)})
	}
	return out, sc.values
}

// sourceScan collects the byte spans of a file to mask.
type sourceScan struct {
	src    []byte
	spans  []render.Span
	values []string
	// strs are the closed strings of a JSON text, in order: what they
	// hold is read as a string, not as a field or a call.
	strs []render.Span
	// known holds the offsets where the scan saw a name or string start
	// as such: a mention of secret( or of a credential field elsewhere
	// is inside text the scan cannot follow.
	known map[int]bool
	// comments and prose (comments and the text of strings, not their
	// interpolations) of a native file, sorted: what is written there is
	// not code.
	comments, prose []render.Span
}

// inSpans reports whether off is inside one of the sorted spans.
func inSpans(spans []render.Span, off int) bool {
	i, _ := slices.BinarySearchFunc(spans, off, func(sp render.Span, off int) int { return cmp.Compare(sp.End, off+1) })
	return i < len(spans) && spans[i].Start <= off
}

// nativeProse returns the comments of a native-syntax file (# and // to
// the end of the line, /* */) and its prose: the comments and the text of
// its strings and heredocs, but not their ${ } and %{ } interpolations,
// which are code. A string is read to the end of its line at most: one
// left unterminated does not swallow the lines below, as the file's
// author meant them.
func nativeProse(src []byte) (comments, prose []render.Span) {
	add := func(start, end int, comment bool) {
		if end <= start {
			return
		}
		if comment {
			comments = append(comments, render.Span{Start: start, End: end})
		}
		if n := len(prose); n > 0 && prose[n-1].End == start {
			prose[n-1].End = end
			return
		}
		prose = append(prose, render.Span{Start: start, End: end})
	}
	var code func(i int, nested bool) int
	// text reads a string's text from i to its end (stop reports it),
	// and returns the offset past it.
	text := func(i int, stop func(i int) (bool, int)) int {
		start := i
		for i < len(src) {
			if done, n := stop(i); done {
				add(start, i, false)
				return i + n
			}
			switch {
			case src[i] == '\\' && i+1 < len(src) && src[i+1] != '\n':
				i += 2
			case (src[i] == '$' || src[i] == '%') && i+2 < len(src) && src[i+1] == src[i] && src[i+2] == '{':
				// $${ and %%{ are written, not interpolated.
				i += 3
			case (src[i] == '$' || src[i] == '%') && i+1 < len(src) && src[i+1] == '{':
				add(start, i, false)
				i = code(i+2, true)
				start = i
			default:
				i++
			}
		}
		add(start, i, false)
		return i
	}
	// code reads code from i; nested code (an interpolation) ends at its
	// closing brace or at the end of the line.
	code = func(i int, nested bool) int {
		depth := 0
		for i < len(src) {
			c := src[i]
			switch {
			case c == '#' || (c == '/' && i+1 < len(src) && src[i+1] == '/'):
				end := lineEnd(src, i)
				add(i, end, true)
				i = end
			case c == '/' && i+1 < len(src) && src[i+1] == '*':
				end := len(src)
				if j := bytes.Index(src[i+2:], []byte("*/")); j >= 0 {
					end = i + 2 + j + 2
				}
				add(i, end, true)
				i = end
			case c == '"':
				i = text(i+1, func(j int) (bool, int) {
					switch src[j] {
					case '"':
						return true, 1
					case '\n':
						return true, 0
					}
					return false, 0
				})
			case c == '<' && bytes.HasPrefix(src[i:], []byte("<<")) && heredoc.Match(src[i:]):
				m := heredoc.FindSubmatch(src[i:])
				i += len(m[0])
				marker := string(m[1])
				i = text(i, func(j int) (bool, int) {
					if j > 0 && src[j-1] != '\n' {
						return false, 0
					}
					if strings.TrimSpace(string(src[j:lineEnd(src, j)])) == marker {
						return true, 0
					}
					return false, 0
				})
			case c == '{':
				depth++
				i++
			case c == '}':
				i++
				if depth--; nested && depth < 0 {
					return i
				}
			case c == '\n' && nested:
				return i
			default:
				i++
			}
		}
		return i
	}
	code(0, false)
	return comments, prose
}

var heredoc = regexp.MustCompile(`^<<-?([A-Za-z_][A-Za-z0-9_]*)[ \t]*\r?\n`)

func (sc *sourceScan) mask(start, end int) {
	if end > start {
		sc.spans = append(sc.spans, render.Span{Start: start, End: end})
	}
}

// covered reports whether off is inside a masked span or a JSON string.
func (sc *sourceScan) covered(off int) bool {
	if i, _ := slices.BinarySearchFunc(sc.strs, off, func(sp render.Span, off int) int { return cmp.Compare(sp.End, off+1) }); i < len(sc.strs) && sc.strs[i].Start <= off {
		return true
	}
	for _, sp := range sc.spans {
		if sp.Start <= off && off < sp.End {
			return true
		}
	}
	return false
}

var (
	secretCall = regexp.MustCompile(`\bsecret\s*\(`)
	fieldName  = regexp.MustCompile(`"?([A-Za-z_][A-Za-z0-9_.\-]*)"?[ \t]*[=:]`)
)

// anyCredentialField reports whether a field named name holds a
// credential under some parent (the scan cannot tell which).
func anyCredentialField(name string) bool {
	return credentialField("", name) || credentialField("headers", name) || credentialField("config", name)
}

// fallback masks, from where it is written to the end of its line, every
// mention of secret( or of a credential field the scan did not see as
// such. A secret( in a comment or in the text of a string is prose and a
// field name in a comment is not a field: neither is masked. A mask never
// goes beyond the end of the line it starts on, so that an unclosed
// secret( does not hide the rest of the file.
func (sc *sourceScan) fallback() {
	src := sc.src
	for _, m := range secretCall.FindAllIndex(src, -1) {
		if sc.known[m[0]] || sc.covered(m[0]) || inSpans(sc.prose, m[0]) {
			continue
		}
		sc.maskLine(m[0], lineEnd(src, m[0]))
	}
	for _, m := range fieldName.FindAllSubmatchIndex(src, -1) {
		if sc.known[m[0]] || sc.known[m[2]] || sc.covered(m[2]) || inSpans(sc.comments, m[0]) || !anyCredentialField(string(src[m[2]:m[3]])) {
			continue
		}
		start := m[1]
		for start < len(src) && (src[start] == ' ' || src[start] == '\t') {
			start++
		}
		sc.maskLine(start, lineEnd(src, start))
	}
}

var quoted = regexp.MustCompile(`"([^"\\]|\\.)*"`)

// maskLine masks src[start:end], text the scan cannot follow, and
// records the quoted strings in it.
func (sc *sourceScan) maskLine(start, end int) {
	sc.mask(start, end)
	for _, q := range quoted.FindAll(sc.src[start:end], -1) {
		sc.values = append(sc.values, string(bytes.Trim(q, `"`)))
	}
}

// lineEnd returns the offset of the end of the line that holds off.
func lineEnd(src []byte, off int) int {
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(src)
}

// frame is an open brace or bracket: the field it is the value of
// (inherited by the objects of a tuple) and whether it is in locals.
type frame struct {
	name   string
	locals bool
}

// scanNative scans a native-syntax file with hcl's lexer, which reads a
// file its parser rejects.
func (sc *sourceScan) scanNative(name string) {
	all, _ := hclsyntax.LexConfig(sc.src, name, hcl.InitialPos)
	toks := all[:0:0]
	sc.known = map[int]bool{}
	for _, t := range all {
		switch t.Type {
		case hclsyntax.TokenComment:
			if bytes.HasSuffix(t.Bytes, []byte("\n")) {
				t.Type = hclsyntax.TokenNewline
				toks = append(toks, t)
			}
			continue
		case hclsyntax.TokenIdent, hclsyntax.TokenQuotedLit, hclsyntax.TokenOQuote:
			sc.known[t.Range.Start.Byte] = true
		}
		toks = append(toks, t)
	}
	var stack []frame
	top := func() frame {
		if len(stack) == 0 {
			return frame{}
		}
		return stack[len(stack)-1]
	}
	stmtFirst := ""
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.Type {
		case hclsyntax.TokenNewline:
			stmtFirst = ""
		case hclsyntax.TokenIdent:
			if stmtFirst == "" {
				stmtFirst = string(t.Bytes)
			}
			if string(t.Bytes) == "secret" && i+1 < len(toks) && toks[i+1].Type == hclsyntax.TokenOParen {
				sc.nativeSecret(toks, i+1)
			}
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack:
			f := frame{locals: top().locals}
			switch {
			case i > 0 && (toks[i-1].Type == hclsyntax.TokenEqual || toks[i-1].Type == hclsyntax.TokenColon):
				f.name = nativeKey(toks, i-1)
			case len(stack) > 0 && i > 0 && (toks[i-1].Type == hclsyntax.TokenOBrack || toks[i-1].Type == hclsyntax.TokenComma):
				f.name = top().name
			case t.Type == hclsyntax.TokenOBrace:
				f.name = stmtFirst
				f.locals = f.locals || (len(stack) == 0 && stmtFirst == "locals")
			}
			stack = append(stack, f)
			stmtFirst = ""
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case hclsyntax.TokenComma:
			stmtFirst = ""
		case hclsyntax.TokenEqual, hclsyntax.TokenColon:
			key := nativeKey(toks, i)
			if key == runtimeMarker {
				sc.markerDefault(toks, i, false)
				continue
			}
			if key == "" || top().locals || !credentialField(top().name, key) {
				continue
			}
			end := valueEnd(toks, i+1)
			if hasRuntime(toks, i+1, end) {
				for j := i + 1; j < end; j++ {
					if toks[j].Type == hclsyntax.TokenIdent && string(toks[j].Bytes) == "runtime" && j+1 < end && toks[j+1].Type == hclsyntax.TokenOParen {
						sc.runtimeDefaults(toks, j+1)
					}
					if (toks[j].Type == hclsyntax.TokenEqual || toks[j].Type == hclsyntax.TokenColon) && nativeKey(toks, j) == runtimeMarker {
						sc.markerDefault(toks, j, true)
					}
				}
				continue
			}
			sc.maskTokens(toks, i+1, end)
		}
	}
}

// nativeKey returns the name written before the = or : at i (an
// identifier or a quoted string, which the lexer may split), or "".
func nativeKey(toks hclsyntax.Tokens, i int) string {
	switch {
	case i >= 1 && toks[i-1].Type == hclsyntax.TokenIdent:
		return string(toks[i-1].Bytes)
	case i >= 1 && toks[i-1].Type == hclsyntax.TokenCQuote:
		j := i - 2
		for j >= 0 && toks[j].Type == hclsyntax.TokenQuotedLit {
			j--
		}
		if j < 0 || toks[j].Type != hclsyntax.TokenOQuote {
			return ""
		}
		var b strings.Builder
		for _, t := range toks[j+1 : i-1] {
			b.Write(t.Bytes)
		}
		return b.String()
	}
	return ""
}

func opens(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc, hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
		return true
	}
	return false
}

func closes(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
		return true
	}
	return false
}

// valueEnd returns the index past the last token of the expression that
// starts at i: it ends at a newline, a comma or a closing bracket of its
// own level, or at the end of the file.
func valueEnd(toks hclsyntax.Tokens, i int) int { return tokensEnd(toks, i, true) }

// valueEndInCall is valueEnd for an argument: newlines do not end it.
func valueEndInCall(toks hclsyntax.Tokens, i int) int { return tokensEnd(toks, i, false) }

// tokensEnd is valueEnd, with newlines ending the expression only when
// newlineEnds is set.
func tokensEnd(toks hclsyntax.Tokens, i int, newlineEnds bool) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		t := toks[j].Type
		switch {
		case t == hclsyntax.TokenEOF:
			return j
		case opens(t):
			depth++
		case closes(t):
			if depth == 0 {
				return j
			}
			depth--
		case depth == 0 && (t == hclsyntax.TokenComma || newlineEnds && t == hclsyntax.TokenNewline):
			return j
		}
	}
	return len(toks)
}

// closing returns the index of the token that closes the one at open,
// or -1.
func closing(toks hclsyntax.Tokens, open int) int {
	depth := 0
	for j := open; j < len(toks); j++ {
		switch t := toks[j].Type; {
		case opens(t):
			depth++
		case closes(t):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func hasRuntime(toks hclsyntax.Tokens, i, end int) bool {
	for j := i; j < end; j++ {
		if (toks[j].Type == hclsyntax.TokenIdent && string(toks[j].Bytes) == "runtime") || (toks[j].Type == hclsyntax.TokenQuotedLit && string(toks[j].Bytes) == "runtime" && j > 0 && string(toks[j-1].Bytes) == "$") {
			return true
		}
	}
	return false
}

// maskTokens masks the tokens [i, end) and records the strings they hold.
func (sc *sourceScan) maskTokens(toks hclsyntax.Tokens, i, end int) {
	for end > i && (toks[end-1].Type == hclsyntax.TokenNewline || toks[end-1].Type == hclsyntax.TokenEOF) {
		end--
	}
	if end <= i {
		return
	}
	sc.mask(toks[i].Range.Start.Byte, toks[end-1].Range.End.Byte)
	for _, t := range toks[i:end] {
		if t.Type == hclsyntax.TokenQuotedLit || t.Type == hclsyntax.TokenStringLit {
			sc.values = append(sc.values, strings.TrimSpace(string(t.Bytes)))
		}
	}
}

// maskToLine masks from the token at i to the end of its line: where a
// call does not close, the scan cannot tell where its argument ends.
func (sc *sourceScan) maskToLine(toks hclsyntax.Tokens, i int) {
	if i < len(toks) {
		start := toks[i].Range.Start.Byte
		sc.mask(start, lineEnd(sc.src, start))
	}
}

// args returns the top-level arguments of the call whose ( is at open
// as [start, end) token index pairs, and whether the call closes.
func args(toks hclsyntax.Tokens, open int) ([][2]int, bool) {
	var out [][2]int
	start := open + 1
	for j := start; j < len(toks); {
		end := valueEndInCall(toks, j)
		if end > j {
			out = append(out, [2]int{j, end})
		}
		if end >= len(toks) || toks[end].Type == hclsyntax.TokenEOF {
			return out, false
		}
		if toks[end].Type == hclsyntax.TokenCParen {
			return out, true
		}
		if closes(toks[end].Type) {
			return out, false
		}
		j = end + 1
	}
	return out, false
}

// nativeSecret masks the arguments of the secret( at open: the defaults
// of a runtime() it wraps, any other argument whole.
func (sc *sourceScan) nativeSecret(toks hclsyntax.Tokens, open int) {
	as, closed := args(toks, open)
	if !closed {
		sc.maskToLine(toks, open-1)
	}
	sc.known[toks[open-1].Range.Start.Byte] = closed
	for _, a := range as {
		if a[1]-a[0] >= 2 && toks[a[0]].Type == hclsyntax.TokenIdent && string(toks[a[0]].Bytes) == "runtime" && toks[a[0]+1].Type == hclsyntax.TokenOParen {
			sc.runtimeDefaults(toks, a[0]+1)
			continue
		}
		sc.maskTokens(toks, a[0], a[1])
	}
}

// runtimeDefaults masks the arguments after the first of the runtime(
// at open.
func (sc *sourceScan) runtimeDefaults(toks hclsyntax.Tokens, open int) {
	as, closed := args(toks, open)
	if !closed && len(as) > 0 {
		sc.maskToLine(toks, as[0][1])
	}
	for _, a := range as[min(1, len(as)):] {
		sc.maskTokens(toks, a[0], a[1])
	}
}

// markerDefault masks the default of the serialised runtime value whose
// "$runtime" key is written before the = or : at j: when it is marked
// secret, or always when all is set.
func (sc *sourceScan) markerDefault(toks hclsyntax.Tokens, j int, all bool) {
	if j+1 >= len(toks) || toks[j+1].Type != hclsyntax.TokenOBrace {
		return
	}
	open := j + 1
	end := closing(toks, open)
	if end < 0 {
		end = len(toks)
	}
	secret := all
	var def [2]int
	for k := open + 1; k < end; k++ {
		if toks[k].Type != hclsyntax.TokenEqual && toks[k].Type != hclsyntax.TokenColon {
			continue
		}
		switch nativeKey(toks, k) {
		case "default":
			def = [2]int{k + 1, valueEnd(toks, k+1)}
		case "secret":
			v := toks[k+1 : valueEnd(toks, k+1)]
			for _, t := range v {
				if (t.Type == hclsyntax.TokenIdent || t.Type == hclsyntax.TokenQuotedLit) && string(t.Bytes) == "true" {
					secret = true
				}
			}
		}
		if k2 := valueEnd(toks, k+1); k2 > k {
			k = k2 - 1
		}
	}
	if secret && def[1] > def[0] {
		sc.maskTokens(toks, def[0], def[1])
	}
}

// jsonTok is a token of a JSON text: a string, one of {}[]:, or another
// literal.
type jsonTok struct {
	start, end int
	kind       byte // '"' for a string, 'a' for a literal, else the delimiter
	// closed is false for a string that a line break or the end of the
	// text cut.
	closed bool
}

// str returns the text of a string token, decoded when it can be.
func (sc *sourceScan) str(t jsonTok) string {
	var s string
	if t.closed && json.Unmarshal(sc.src[t.start:t.end], &s) == nil {
		return s
	}
	return strings.Trim(string(sc.src[t.start:t.end]), `"`)
}

// lexJSON splits a JSON text into tokens, whatever its errors.
func lexJSON(src []byte) []jsonTok {
	var out []jsonTok
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '"':
			j := i + 1
			closed := false
			for j < len(src) && src[j] != '\n' {
				if src[j] == '\\' {
					j += 2
					continue
				}
				if src[j] == '"' {
					j++
					closed = true
					break
				}
				j++
			}
			j = min(j, len(src))
			out = append(out, jsonTok{start: i, end: j, kind: '"', closed: closed})
			i = j
		case strings.IndexByte("{}[]:,", c) >= 0:
			out = append(out, jsonTok{start: i, end: i + 1, kind: c})
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		default:
			j := i
			for j < len(src) && strings.IndexByte("{}[]:,\" \t\r\n", src[j]) < 0 {
				j++
			}
			out = append(out, jsonTok{start: i, end: j, kind: 'a'})
			i = j
		}
	}
	return out
}

// jsonValueEnd returns the index past the last token of the value that
// starts at i.
func jsonValueEnd(toks []jsonTok, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].kind {
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',', ':':
			if depth == 0 {
				return j
			}
		default:
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(toks)
}

var templateSecret = regexp.MustCompile(`[$%]\{[^}]*\bsecret\s*\(`)

// scanJSON scans a JSON-syntax file token by token, whatever its errors.
func (sc *sourceScan) scanJSON() {
	toks := lexJSON(sc.src)
	sc.known = map[int]bool{}
	var stack []frame
	top := func() frame {
		if len(stack) == 0 {
			return frame{}
		}
		return stack[len(stack)-1]
	}
	maskVal := func(i, end int) {
		if end <= i {
			return
		}
		sc.mask(toks[i].start, toks[end-1].end)
		for _, t := range toks[i:end] {
			if t.kind == '"' {
				sc.values = append(sc.values, sc.str(t))
			}
		}
	}
	for i, t := range toks {
		switch t.kind {
		case '"':
			sc.known[t.start] = true
			if t.closed {
				sc.strs = append(sc.strs, render.Span{Start: t.start, End: t.end})
			}
			s := string(sc.src[t.start:t.end])
			if templateSecret.MatchString(s) || (!t.closed && strings.Contains(s, "secret")) {
				maskVal(i, i+1)
			}
			if i+2 >= len(toks) || toks[i+1].kind != ':' {
				continue
			}
			key := sc.str(t)
			switch {
			case key == runtimeMarker && toks[i+2].kind == '{':
				sc.jsonMarker(toks, i+2, maskVal)
			case !top().locals && credentialField(top().name, key):
				maskVal(i+2, jsonValueEnd(toks, i+2))
			}
		case '{', '[':
			f := frame{locals: top().locals}
			switch {
			case i >= 2 && toks[i-1].kind == ':' && toks[i-2].kind == '"':
				f.name = sc.str(toks[i-2])
				f.locals = f.locals || (len(stack) == 1 && f.name == "locals")
			case len(stack) > 0 && i > 0 && (toks[i-1].kind == '[' || toks[i-1].kind == ','):
				f.name = top().name
			}
			stack = append(stack, f)
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
}

// jsonMarker masks the default of the serialised runtime spec whose { is
// at open when it is marked secret.
func (sc *sourceScan) jsonMarker(toks []jsonTok, open int, maskVal func(i, end int)) {
	end := jsonValueEnd(toks, open)
	secret := false
	var def [2]int
	for k := open + 1; k+2 < end; {
		if toks[k].kind == '"' && toks[k+1].kind == ':' {
			vend := jsonValueEnd(toks, k+2)
			switch sc.str(toks[k]) {
			case "default":
				def = [2]int{k + 2, vend}
			case "secret":
				secret = strings.Trim(string(sc.src[toks[k+2].start:toks[k+2].end]), `"`) == "true"
			}
			k = max(vend, k+1)
			continue
		}
		k++
	}
	if secret {
		maskVal(def[0], def[1])
	}
}
