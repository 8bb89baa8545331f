package render

import (
	"cmp"
	"slices"
	"strconv"
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
	// values are scrubbed longest first.
	values []string
}

// NewRedaction returns the redaction of ranges and values. Values that
// could not tell a credential from ordinary words are dropped (see
// Scrubbable); the rest are scrubbed longest first, so a value that
// contains another is replaced whole.
func NewRedaction(ranges []hcl.Range, values []string) *Redaction {
	r := &Redaction{ranges: slices.Clone(ranges)}
	for _, v := range values {
		if Scrubbable(v) {
			r.values = append(r.values, v)
		}
	}
	slices.SortFunc(r.values, func(x, y string) int { return cmp.Or(cmp.Compare(len(y), len(x)), strings.Compare(x, y)) })
	r.values = slices.Compact(r.values)
	return r
}

// Scrubbable reports whether v is scrubbed from text: not when it is
// shorter than MinScrubLen, a number, or a single lower-case word of at
// most 12 letters ("openai", "assistant", "enabled"), which a message
// mentions for reasons of its own. Every value stays masked in source snippets.
func Scrubbable(v string) bool {
	t := strings.TrimSpace(v)
	if len(t) < MinScrubLen {
		return false
	}
	if _, err := strconv.ParseFloat(t, 64); err == nil {
		return false
	}
	if len(t) <= 12 && strings.IndexFunc(t, func(r rune) bool { return !unicode.IsLower(r) }) < 0 {
		return false
	}
	return true
}

// Ranges returns the source ranges to mask.
func (r *Redaction) Ranges() []hcl.Range {
	if r == nil {
		return nil
	}
	return r.ranges
}

// Scrub returns s with every whole-word occurrence of a credential value
// replaced by RedactMark: one not preceded or followed by a letter, digit
// or underscore where the value itself begins or ends with one, so that
// a value does not eat part of a longer word.
func (r *Redaction) Scrub(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		s = scrubWord(s, v)
	}
	return s
}

// scrubWord replaces the whole-word occurrences of v in s.
func scrubWord(s, v string) string {
	var b strings.Builder
	at := 0
	for from := 0; ; {
		i := strings.Index(s[from:], v)
		if i < 0 {
			break
		}
		i += from
		end := i + len(v)
		if boundary(s, i, v, true) && boundary(s, end, v, false) {
			b.WriteString(s[at:i])
			b.WriteString(RedactMark)
			at = end
			from = end
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		from = i + size
	}
	if at == 0 {
		return s
	}
	b.WriteString(s[at:])
	return b.String()
}

// boundary reports whether offset off of s, the start (start) or end of
// an occurrence of v, is a word boundary: v's edge there is not a word
// character, or the character beyond it is not.
func boundary(s string, off int, v string, start bool) bool {
	var edge, beyond rune
	if start {
		edge, _ = utf8.DecodeRuneInString(v)
		if off == 0 {
			return true
		}
		beyond, _ = utf8.DecodeLastRuneInString(s[:off])
	} else {
		edge, _ = utf8.DecodeLastRuneInString(v)
		if off == len(s) {
			return true
		}
		beyond, _ = utf8.DecodeRuneInString(s[off:])
	}
	return !wordRune(edge) || !wordRune(beyond)
}

func wordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// Span is the bytes [Start, End) of a file.
type Span struct{ Start, End int }

// Spans returns the byte spans of the ranges of file name, sorted, with
// overlapping and adjacent spans merged. offset converts a position to a
// byte offset of the file.
func (r *Redaction) Spans(name string, offset func(hcl.Pos) int) []Span {
	var out []Span
	for _, rng := range r.Ranges() {
		if rng.Filename != name {
			continue
		}
		if sp := (Span{offset(rng.Start), offset(rng.End)}); sp.End > sp.Start {
			out = append(out, sp)
		}
	}
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
