package lockfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"golang.org/x/text/unicode/norm"

	"github.com/agentform/agentform/internal/safefile"
)

// toolAttrOrder is the order attributes are written in within a tool
// block. Each kind's attributes appear in it in that kind's order: kind
// first, then javascript (source, deps, bundle, bundler), python (source,
// uv_lock, interpreter), mcp (server, hashed_fields, tools, definitions)
// and a2a (card, card_name, card_version, card_json).
var toolAttrOrder = []string{
	"kind",
	"source", "deps", "bundle", "bundler",
	"uv_lock", "interpreter",
	"server", "hashed_fields", "tools", "definitions",
	"card", "card_name", "card_version", "card_json",
}

// Bytes returns the canonical encoding of the lockfile: the header, then
// skill blocks and tool blocks, each sorted by name, separated by one
// blank line, with a fixed attribute order per block, empty fields and
// map entries omitted, map keys sorted and a trailing newline. The same
// content always gives the same bytes, whatever the maps' insertion
// order. Nil entries and entries with nothing set are left out. Strings
// are written as HCL reads them back: NFC-normalised valid UTF-8; in the
// JSON values (definitions, card_json) a combining mark that follows an
// escape sequence is escaped first (canonJSON), so that they stay JSON.
//
// Bytes writes what it is given; a File whose entries Parse would reject
// (a tool without a kind, a malformed hash) encodes to bytes that do not
// parse. Write refuses such a File.
func (f *File) Bytes() []byte {
	var skills []entry[*Skill]
	var tools []entry[*Tool]
	if f != nil {
		skills = entries(f.Skills, func(s *Skill) bool { return s.empty() })
		tools = entries(f.Tools, func(t *Tool) bool { return t.empty() })
	}
	// Each block is formatted on its own: formatting aligns equals signs
	// only across consecutive attribute lines, which a block's header and
	// the blank line between blocks interrupt, so the blocks read exactly
	// as they would formatted as one file. Large files are formatted on
	// every core.
	blocks := make([][]byte, len(skills)+len(tools))
	encode := func(i int) {
		if b, ok := plainBlock(skills, tools, i); ok {
			blocks[i] = b
			return
		}
		hf := hclwrite.NewEmptyFile()
		if i < len(skills) {
			e := skills[i]
			setString(hf.Body().AppendNewBlock("skill", []string{e.name}).Body(), "source", e.value.Source)
		} else {
			e := tools[i-len(skills)]
			writeTool(hf.Body().AppendNewBlock("tool", []string{e.name}).Body(), e.value)
		}
		// File.Bytes formats (aligns the equals signs) as it writes.
		blocks[i] = hf.Bytes()
	}
	if workers := min(runtime.GOMAXPROCS(0), len(blocks)); len(blocks) >= parallelBlocks && workers > 1 {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)) - 1; i < len(blocks); i = int(next.Add(1)) - 1 {
					encode(i)
				}
			}()
		}
		wg.Wait()
	} else {
		for i := range blocks {
			encode(i)
		}
	}
	var buf bytes.Buffer
	buf.WriteString(Header)
	buf.WriteString("\n")
	for _, b := range blocks {
		buf.WriteString("\n")
		buf.Write(b)
	}
	return buf.Bytes()
}

// plainBlock writes block i of Bytes (skills, then tools) the way hclwrite
// formats it, when the block is plain: string attributes only (no server,
// hashed_fields, tools or definitions), and a name and values that
// hclwrite quotes verbatim (printable ASCII without quotes, backslashes or
// template sequences). ok is false for any other block, which hclwrite
// writes. Most lock entries are plain, and writing them directly takes a
// fraction of hclwrite's time and memory (BenchmarkBytes); FuzzBytes and
// TestBytesBlockByBlock hold the two to the same bytes.
func plainBlock(skills []entry[*Skill], tools []entry[*Tool], i int) (b []byte, ok bool) {
	// The attributes set, in the order Bytes writes them, with the values
	// it writes (toolAttrs, skillAttrs).
	var typ, name string
	var attrs []attr
	if i < len(skills) {
		typ, name, attrs = "skill", skills[i].name, skillAttrs(skills[i].value)
	} else {
		e := tools[i-len(skills)]
		t := e.value
		if t.ServerName != "" || t.ServerVersion != "" || len(t.HashedFields) > 0 || len(t.Served) > 0 || len(t.Definitions) > 0 {
			return nil, false
		}
		typ, name, attrs = "tool", e.name, toolAttrs(t)
	}
	if !plainString(name) {
		return nil, false
	}
	width := 0
	for _, a := range attrs {
		if !plainString(a.value) {
			return nil, false
		}
		width = max(width, len(a.name))
	}
	buf := make([]byte, 0, 256)
	buf = append(buf, typ...)
	buf = append(buf, ` "`...)
	buf = append(buf, name...)
	buf = append(buf, "\" {\n"...)
	for _, a := range attrs {
		buf = append(buf, "  "...)
		buf = append(buf, a.name...)
		for range width - len(a.name) {
			buf = append(buf, ' ')
		}
		buf = append(buf, ` = "`...)
		buf = append(buf, a.value...)
		buf = append(buf, "\"\n"...)
	}
	buf = append(buf, "}\n"...)
	return buf, true
}

// plainString reports whether hclwrite writes s between quotes as it is,
// and HCL reads it back unchanged: printable ASCII other than a quote or a
// backslash, with no "${" or "%{".
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e || c == '"' || c == '\\':
			return false
		case (c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{':
			return false
		}
	}
	return true
}

// parallelBlocks is the number of blocks from which Bytes formats them
// on every core; below it, starting goroutines costs more than it saves.
const parallelBlocks = 64

func writeTool(b *hclwrite.Body, t *Tool) {
	for _, name := range toolAttrOrder {
		switch name {
		case "kind":
			setString(b, name, t.Kind)
		case "source":
			setString(b, name, t.Source)
		case "deps":
			setString(b, name, t.Deps)
		case "bundle":
			setString(b, name, t.Bundle)
		case "bundler":
			setString(b, name, t.Bundler)
		case "uv_lock":
			setString(b, name, t.UVLock)
		case "interpreter":
			setString(b, name, t.Interpreter)
		case "server":
			if t.ServerName == "" && t.ServerVersion == "" {
				continue
			}
			// One line: { name = "…", version = "…" }.
			toks := hclwrite.Tokens{{Type: hclsyntax.TokenOBrace, Bytes: []byte("{")}}
			for _, kv := range [][2]string{{"name", t.ServerName}, {"version", t.ServerVersion}} {
				if kv[1] == "" {
					continue
				}
				if len(toks) > 1 {
					toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")})
				}
				toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenIdent, Bytes: []byte(kv[0]), SpacesBefore: 1})
				toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte("="), SpacesBefore: 1})
				str := quoted(kv[1])
				str[0].SpacesBefore = 1
				toks = append(toks, str...)
			}
			toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenCBrace, Bytes: []byte("}"), SpacesBefore: 1})
			b.SetAttributeRaw(name, toks)
		case "hashed_fields":
			fields := normalFields(t.HashedFields)
			if len(fields) == 0 {
				continue
			}
			elems := make([]hclwrite.Tokens, len(fields))
			for i, s := range fields {
				elems[i] = quoted(s)
			}
			b.SetAttributeRaw(name, hclwrite.TokensForTuple(elems))
		case "tools", "definitions":
			m := t.Served
			if name == "definitions" {
				m = t.Definitions
			}
			kvs := entries(m, func(s string) bool { return s == "" })
			if len(kvs) == 0 {
				continue
			}
			// Like hclwrite.TokensForObject, which would also format
			// the object; File.Bytes formats everything once.
			toks := hclwrite.Tokens{
				{Type: hclsyntax.TokenOBrace, Bytes: []byte("{")},
				{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")},
			}
			for _, e := range kvs {
				toks = append(toks, quoted(e.name)...)
				toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte("=")})
				value := e.value
				if name == "definitions" {
					value = canonJSON(value)
				}
				toks = append(toks, quoted(value)...)
				toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")})
			}
			toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenCBrace, Bytes: []byte("}")})
			b.SetAttributeRaw(name, toks)
		case "card":
			setString(b, name, t.Card)
		case "card_name":
			setString(b, name, t.CardName)
		case "card_version":
			setString(b, name, t.CardVersion)
		case "card_json":
			setString(b, name, canonJSON(t.CardJSON))
		}
	}
}

func setString(b *hclwrite.Body, name, value string) {
	if value != "" {
		b.SetAttributeValue(name, cty.StringVal(canon(value)))
	}
}

// quoted returns the tokens of a quoted HCL string.
func quoted(s string) hclwrite.Tokens {
	return hclwrite.TokensForValue(cty.StringVal(canon(s)))
}

// canon returns s as HCL reads it back after writing: invalid UTF-8 bytes
// replaced by U+FFFD, then normalised like every cty string (NFC).
func canon(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s // ASCII is valid UTF-8 and already NFC
	}
	return cty.NormalizeString(string([]rune(s)))
}

// canonJSON is canon for a JSON text (a definition, card_json). A
// character that normalisation would join to the escape sequence before it
// ("\u000c" or "\n" followed by a combining mark: "\u000ć" is no JSON) is
// escaped first, so that the text stays JSON, and the same JSON, once
// normalised. Every other character is left as it is.
func canonJSON(s string) string {
	return canon(escapeJoining(s))
}

// escapeJoining escapes, in a JSON text, each character that has no
// boundary before it and follows an escape sequence: the same JSON value,
// which normalisation cannot join to the sequence.
func escapeJoining(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			i++
			continue
		}
		n := min(2, len(s)-i) // \n, \", \\ ...
		if i+6 <= len(s) && s[i+1] == 'u' && isHex4(s[i+2:i+6]) {
			n = 6 // \uXXXX
		}
		b.WriteString(s[i : i+n])
		i += n
		// Characters with no boundary before them, each escaped in turn.
		for i < len(s) && s[i] >= utf8.RuneSelf && !norm.NFC.PropertiesString(s[i:]).BoundaryBefore() {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			i += size
		}
	}
	return b.String()
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// entry is one map entry under its canonical name.
type entry[V any] struct {
	name  string
	value V
}

// entries returns m's entries that are not empty, under their canonical
// names, sorted by name. When two keys have the same canonical form, the
// entry of the byte-wise smallest key wins, so the result never depends
// on map iteration order.
func entries[V any](m map[string]V, empty func(V) bool) []entry[V] {
	type cand struct {
		key   string
		value V
	}
	best := map[string]cand{}
	for k, v := range m {
		if empty(v) {
			continue
		}
		c := canon(k)
		if old, ok := best[c]; ok && old.key < k {
			continue
		}
		best[c] = cand{k, v}
	}
	out := make([]entry[V], 0, len(best))
	for name, c := range best {
		out = append(out, entry[V]{name, c.value})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// normalFields returns hashed field names canonical, distinct, non-empty
// and sorted.
func normalFields(fields []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fields {
		c := canon(f)
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// empty reports whether the tool pins nothing: it is nil or has no field
// set. Such an entry is the same as no entry.
func (t *Tool) empty() bool {
	return t == nil || len(toolAttrs(t)) == 0
}

// empty reports whether the skill pins nothing.
func (s *Skill) empty() bool {
	return s == nil || s.Source == ""
}

// Digest returns "sha256:<hex>" of Bytes(): the lockfile digest that plans
// and artifacts record.
func (f *File) Digest() string {
	return DigestOf(f.Bytes())
}

// Fingerprint returns "sha256:<hex>" of the entries' content, without
// encoding them: files whose Bytes are equal have equal fingerprints, and
// files that differ in any attribute different ones. Plans use it to tell
// that the lockfile artifacts embed changed, at a fraction of Digest's
// cost.
func (f *File) Fingerprint() string {
	h := sha256.New()
	// Each part with its length, so that no two files share a sequence;
	// and the encoding's version, so that a change to Bytes changes it.
	part := func(s string) { fmt.Fprintf(h, "%d:%s", len(s), s) }
	entry := func(kind, name string, attrs []attr) {
		part(kind)
		part(canon(name))
		for _, a := range attrs {
			part(a.name)
			part(a.value)
		}
	}
	part(fingerprintVersion)
	for _, e := range entries(f.Tools, (*Tool).empty) {
		entry("tool", e.name, toolAttrs(e.value))
	}
	for _, e := range entries(f.Skills, (*Skill).empty) {
		entry("skill", e.name, skillAttrs(e.value))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// fingerprintVersion names how Bytes encodes a file: change it with any
// change to the encoding, so that artifacts embedding the digest of the
// old encoding are rebuilt.
const fingerprintVersion = "agentform.lock.hcl 1"

// DigestOf is Digest of an encoding f.Bytes() returned.
func DigestOf(encoded []byte) string {
	sum := sha256.Sum256(encoded)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// WriteDir writes f as the lockfile of the workspace directory dir
// (dir/FileName); see Write.
func WriteDir(dir string, f *File) error {
	return Write(filepath.Join(dir, FileName), f)
}

// Write writes f's canonical encoding to path atomically: into a temporary
// file in the same directory, synced, given the mode of the file it
// replaces (0644, whatever the umask, for a new one), then renamed over
// path, and the directory synced. A crash or an error leaves the old file
// intact and no temporary file behind. A symbolic link at path is
// replaced, not written through: a link planted in a repository must not
// make apply write a file elsewhere. A File whose encoding would not parse
// back (a tool without a kind, a malformed hash; see Validate) is refused
// without touching path.
func Write(path string, f *File) error {
	if err := f.Validate(); err != nil {
		return refusal(path, err)
	}
	return WriteChecked(Checked{path: path, data: f.Bytes()})
}

// Checked is a lockfile encoding CheckEncoded accepted, ready for
// WriteChecked.
type Checked struct {
	path string
	data []byte
}

// CheckEncoded validates f (Validate) as Write does before writing it to
// path, for a caller that has f's encoding, data, already: data must be
// f.Bytes(). It returns the error Write would refuse f with. Splitting the
// check from the write lets a caller refuse a bad lockfile before it does
// other work, and write it only once that work is done.
func CheckEncoded(path string, f *File, data []byte) (Checked, error) {
	if err := f.Validate(); err != nil {
		return Checked{}, refusal(path, err)
	}
	return Checked{path: path, data: data}, nil
}

func refusal(path string, err error) error {
	return fmt.Errorf("refusing to write %s: the lock entries are invalid: %w", path, err)
}

// WriteChecked writes what CheckEncoded accepted to its path, atomically,
// as Write does. The zero Checked is refused.
func WriteChecked(c Checked) error {
	if c.path == "" {
		return errors.New("writing a lockfile: nothing was checked")
	}
	perm := fs.FileMode(0o644)
	if info, err := os.Lstat(c.path); err == nil && info.Mode().IsRegular() {
		perm = info.Mode().Perm()
	}
	return safefile.Write(c.path, c.data, perm)
}
