package render

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// RedactMark stands, in output, for text that holds a credential.
const RedactMark = "(redacted)"

// MinScrubLen is the length in bytes below which a credential value is not
// scrubbed from text: replacing every "a" or "eu-1" of a message would hide
// the message, not the credential. Such values are still masked in source
// snippets, where their place is known.
const MinScrubLen = 6

// Redaction is what output must not show of a manifest: the source ranges
// that hold credential material, masked in source snippets, and the
// credential values themselves, scrubbed from any text (a check's
// error_message or a waiver's reason can interpolate a local that holds a
// token). The zero value and nil hide nothing. Make one with NewRedaction.
type Redaction struct {
	ranges []hcl.Range
	// subs replaces the values scrubbed wherever they occur, longest
	// first; nil when there are none.
	subs *strings.Replacer
	// words are the values scrubbed as whole words only (see WholeWord).
	words map[string]bool
	// anywhere are the values scrubbed wherever they occur, longest
	// first (subs replaces them).
	anywhere []string
	// values are the values it was made with (With).
	values []string
}

// NewRedaction returns the redaction of ranges and values. Each value,
// trimmed of spaces, is scrubbed from text when it is at least MinScrubLen
// bytes long: as a whole word when it is a plain lower-case word (see
// WholeWord), wherever it occurs otherwise, longest first, so that a
// value that contains another is replaced whole.
func NewRedaction(ranges []hcl.Range, values []string) *Redaction {
	r := &Redaction{ranges: slices.Clone(ranges), values: slices.Clone(values)}
	var subs []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		switch {
		case len(v) < MinScrubLen:
		case WholeWord(v):
			// The mark's own word is not scrubbed again.
			if v != "redacted" {
				if r.words == nil {
					r.words = map[string]bool{}
				}
				r.words[v] = true
			}
		default:
			subs = append(subs, v)
		}
	}
	slices.SortFunc(subs, func(x, y string) int { return cmp.Or(cmp.Compare(len(y), len(x)), strings.Compare(x, y)) })
	subs = slices.Compact(subs)
	r.anywhere = subs
	if len(subs) > 0 {
		pairs := make([]string, 0, 2*len(subs))
		for _, v := range subs {
			pairs = append(pairs, v, RedactMark)
		}
		r.subs = strings.NewReplacer(pairs...)
	}
	return r
}

// Values returns the values r was made with; r may be nil.
func (r *Redaction) Values() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.values)
}

// WholeWord reports whether the credential value v is scrubbed from text
// as a whole word only: when it is made of lower-case ASCII letters alone
// ("openai", "assistant", "letmein"), a word a message can use for reasons
// of its own. Every other value is scrubbed wherever it occurs, inside
// longer words too (Xk9SEKRETadj in sess_Xk9SEKRETadj, 482913).
func WholeWord(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 'a' || v[i] > 'z' {
			return false
		}
	}
	return v != ""
}

// Ranges returns the source ranges to mask.
func (r *Redaction) Ranges() []hcl.Range {
	if r == nil {
		return nil
	}
	return r.ranges
}

// Scrub returns s with every credential value replaced by RedactMark: a
// plain lower-case value where it is a whole word (not preceded or
// followed by a letter, digit or underscore), any other wherever it
// occurs. It makes one pass over s for each kind, whatever the number of
// values.
func (r *Redaction) Scrub(s string) string {
	if r == nil {
		return s
	}
	if r.subs != nil {
		s = r.subs.Replace(s)
	}
	if len(r.words) > 0 {
		s = r.scrubWords(s)
	}
	return s
}

// scrubWords replaces the words of s that are values of r.words.
func (r *Redaction) scrubWords(s string) string {
	var b strings.Builder
	at := 0
	r.eachWord(s, func(start, end int) {
		b.WriteString(s[at:start])
		b.WriteString(RedactMark)
		at = end
	})
	if at == 0 {
		return s
	}
	b.WriteString(s[at:])
	return b.String()
}

// eachWord calls f with the byte offsets of every whole word of s that is
// a value of r.words, in order.
func (r *Redaction) eachWord(s string, f func(start, end int)) {
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if !wordRune(c) {
			i += size
			continue
		}
		start := i
		plain := true
		for i < len(s) {
			c, size = utf8.DecodeRuneInString(s[i:])
			if !wordRune(c) {
				break
			}
			plain = plain && c >= 'a' && c <= 'z'
			i += size
		}
		if plain && i-start >= MinScrubLen && r.words[s[start:i]] {
			f(start, i)
		}
	}
}

func wordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// Span is the bytes [Start, End) of a file.
type Span struct{ Start, End int }

// Spans returns the byte spans of the ranges of file name, sorted, with
// overlapping and adjacent spans merged. offset converts a position to a
// byte offset of the file.
func (r *Redaction) Spans(name string, offset func(hcl.Pos) int) []Span {
	return mergeSpans(r.rangeSpans(name, offset))
}

// SourceSpans returns the spans Spans returns and those of src (the
// bytes of file name) that hold a value Scrub replaces, sorted and
// merged: what a quoted source line must not show. A value is a
// secret's default or a credential, and the same text written anywhere
// else in the file (a check's error_message, a comment) is masked too,
// as one mark that a window cutting the line shows whole.
func (r *Redaction) SourceSpans(name string, src []byte, offset func(hcl.Pos) int) []Span {
	return mergeSpans(append(r.rangeSpans(name, offset), r.valueSpans(src)...))
}

// rangeSpans returns the byte spans of r's ranges of file name.
func (r *Redaction) rangeSpans(name string, offset func(hcl.Pos) int) []Span {
	var out []Span
	for _, rng := range r.Ranges() {
		if rng.Filename != name {
			continue
		}
		if sp := (Span{offset(rng.Start), offset(rng.End)}); sp.End > sp.Start {
			out = append(out, sp)
		}
	}
	return out
}

// valueSpans returns the spans of src where Scrub would replace a value:
// every occurrence of a value scrubbed anywhere (overlapping ones too),
// and every whole word that is a value scrubbed as a word.
func (r *Redaction) valueSpans(src []byte) []Span {
	if r == nil {
		return nil
	}
	var out []Span
	for _, v := range r.anywhere {
		for at := 0; at < len(src); {
			i := bytes.Index(src[at:], []byte(v))
			if i < 0 {
				break
			}
			out = append(out, Span{at + i, at + i + len(v)})
			at += i + 1
		}
	}
	if len(r.words) > 0 {
		r.eachWord(string(src), func(start, end int) { out = append(out, Span{start, end}) })
	}
	return out
}

// mergeSpans sorts spans and merges those that overlap or touch.
func mergeSpans(out []Span) []Span {
	slices.SortFunc(out, func(x, y Span) int { return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.End, y.End)) })
	merged := out[:0]
	for _, sp := range out {
		if n := len(merged); n > 0 && sp.Start <= merged[n-1].End {
			merged[n-1].End = max(merged[n-1].End, sp.End)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// ExcerptWidth is about how many characters of a source line a snippet
// shows: a minified JSON manifest is one line of many kilobytes, and
// every snippet quoting it whole would repeat the whole file.
const ExcerptWidth = 120

// Ellipsis marks where an excerpt cuts a line.
const Ellipsis = "…"

// Excerpt returns the text to show of the line src[start:end]: the masks
// (sorted, disjoint spans of src) replaced by RedactMark, and, when the
// line is longer than ExcerptWidth characters, only a window of about
// that many around the highlighted bytes [hlStart, hlEnd), cut with
// Ellipsis. lead and width are the byte offset and length in text of
// what is shown of the highlight; a highlight that starts or ends inside
// a mask covers the whole mark. The text is a copy; it is not sanitised
// (see SanitizeLine).
func Excerpt(src []byte, start, end int, masks []Span, hlStart, hlEnd int) (text string, lead, width int) {
	hlStart = min(max(hlStart, start), end)
	hlEnd = min(max(hlEnd, hlStart), end)
	ws, we := start, end
	if !fits(src, start, end, masks) {
		hlRunes := utf8.RuneCount(src[hlStart:hlEnd])
		margin := max(0, ExcerptWidth-hlRunes) / 2
		ws = backRunes(src, start, hlStart, margin)
		we = fwdRunes(src, hlStart, end, min(hlRunes, ExcerptWidth)+margin)
		// Spend what one side could not use on the other.
		if used := utf8.RuneCount(src[ws:we]); used < ExcerptWidth {
			if ws == start {
				we = fwdRunes(src, we, end, ExcerptWidth-used)
			} else {
				ws = backRunes(src, start, ws, ExcerptWidth-used)
			}
		}
	}
	// A mask cut by the window is shown whole: it is one mark.
	i, _ := slices.BinarySearchFunc(masks, ws, func(sp Span, off int) int { return cmp.Compare(sp.End, off+1) })
	if i < len(masks) && masks[i].Start < ws {
		ws = max(masks[i].Start, start)
	}
	type piece struct {
		src, disp Span
		masked    bool
	}
	var pieces []piece
	var b strings.Builder
	if ws > start {
		b.WriteString(Ellipsis)
	}
	add := func(s, e int, masked bool) {
		p := piece{src: Span{s, e}, disp: Span{Start: b.Len()}, masked: masked}
		if masked {
			b.WriteString(RedactMark)
		} else {
			b.Write(src[s:e])
		}
		p.disp.End = b.Len()
		pieces = append(pieces, p)
	}
	at := ws
	for ; i < len(masks) && masks[i].Start < we; i++ {
		ms, me := max(masks[i].Start, start), min(masks[i].End, end)
		if ms > at {
			add(at, ms, false)
		}
		add(ms, me, true)
		at = max(at, me)
	}
	if at < we || len(pieces) == 0 {
		add(at, max(at, we), false)
	}
	last := pieces[len(pieces)-1].disp.End
	if we < end {
		b.WriteString(Ellipsis)
	}
	lead, stop := last, last
	for _, p := range pieces {
		if hlStart < p.src.End {
			lead = p.disp.Start
			if !p.masked {
				lead += max(0, hlStart-p.src.Start)
			}
			break
		}
	}
	for _, p := range pieces {
		if hlEnd <= p.src.End {
			switch {
			case hlEnd <= p.src.Start:
				stop = p.disp.Start
			case p.masked:
				stop = p.disp.End
			default:
				stop = p.disp.Start + hlEnd - p.src.Start
			}
			break
		}
	}
	return b.String(), lead, max(stop, lead) - lead
}

// fits reports whether the line src[start:end] shows in at most
// ExcerptWidth characters once masked; it reads no more of a long line
// than it needs.
func fits(src []byte, start, end int, masks []Span) bool {
	if end-start <= ExcerptWidth {
		return true
	}
	i, _ := slices.BinarySearchFunc(masks, start, func(sp Span, off int) int { return cmp.Compare(sp.End, off+1) })
	n, at := 0, start
	count := func(s, e int) {
		for at = s; at < e && n <= ExcerptWidth; n++ {
			_, size := utf8.DecodeRune(src[at:e])
			at += size
		}
	}
	for ; i < len(masks) && masks[i].Start < end && n <= ExcerptWidth; i++ {
		count(at, max(at, masks[i].Start))
		n += utf8.RuneCountInString(RedactMark)
		at = max(at, min(masks[i].End, end))
	}
	if n <= ExcerptWidth {
		count(at, end)
	}
	return n <= ExcerptWidth
}

// backRunes returns the offset n runes before off, not before floor.
func backRunes(src []byte, floor, off, n int) int {
	for ; n > 0 && off > floor; n-- {
		_, size := utf8.DecodeLastRune(src[floor:off])
		off -= size
	}
	return off
}

// fwdRunes returns the offset n runes after off, not after ceil.
func fwdRunes(src []byte, off, ceil, n int) int {
	for ; n > 0 && off < ceil; n-- {
		_, size := utf8.DecodeRune(src[off:ceil])
		off += size
	}
	return off
}

// MaskText returns src with each of masks (sorted, disjoint spans of src,
// as Redaction.Spans gives them) replaced by RedactMark and the line
// breaks the span held, so that lines keep their numbers: a whole file
// shown with its credentials hidden (fmt -diff).
func MaskText(src []byte, masks []Span) string {
	var b strings.Builder
	at := 0
	for _, sp := range masks {
		s, e := min(max(sp.Start, at), len(src)), min(max(sp.End, at), len(src))
		if e <= s {
			continue
		}
		b.Write(src[at:s])
		b.WriteString(RedactMark)
		b.WriteString(strings.Repeat("\n", bytes.Count(src[s:e], []byte("\n"))))
		at = e
	}
	b.Write(src[at:])
	return b.String()
}
