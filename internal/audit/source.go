package audit

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/apparentlymart/go-textseg/v17/textseg"
	"github.com/hashicorp/hcl/v2"
)

// sourceSet serves the manifest text that reports quote: the lines of
// table and HTML snippets. Each file is indexed once, on first use,
// however many findings point into it, and a snippet copies out only the
// lines it shows: a line kept as a substring of the whole file would keep
// the whole file alive, once per finding. Text inside a sensitive range
// (Report.Sensitive) never leaves the set: a snippet shows redactMark in
// its place.
type sourceSet struct {
	src       map[string][]byte
	sensitive map[string][]hcl.Range
	files     map[string]*sourceFile
}

// sourceFile is one file of a sourceSet.
type sourceFile struct {
	src []byte
	// starts holds the byte offset of the start of every line: line n
	// (1-based) starts at starts[n-1]. A file that ends with a line break
	// has an empty last line, as hcl counts lines.
	starts []int
	// masks are the byte spans of the file's sensitive ranges, sorted and
	// merged.
	masks []span
}

// span is the bytes [start, end) of a file.
type span struct{ start, end int }

// newSourceSet serves the files of src (WriteOptions.Source), which it
// reads but never changes, masking the sensitive ranges.
func newSourceSet(src map[string][]byte, sensitive []hcl.Range) *sourceSet {
	s := &sourceSet{src: src, sensitive: map[string][]hcl.Range{}, files: map[string]*sourceFile{}}
	for _, rng := range sensitive {
		s.sensitive[rng.Filename] = append(s.sensitive[rng.Filename], rng)
	}
	return s
}

// file returns the named file, or nil when the set does not hold it or it
// is empty.
func (s *sourceSet) file(name string) *sourceFile {
	if f, ok := s.files[name]; ok {
		return f
	}
	var f *sourceFile
	if src := s.src[name]; len(src) > 0 {
		f = &sourceFile{src: src, starts: []int{0}}
		for i := 0; ; {
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			f.starts = append(f.starts, i)
		}
		f.masks = f.spans(s.sensitive[name])
	}
	s.files[name] = f
	return f
}

// spans returns the byte spans of ranges, sorted, with overlapping and
// adjacent spans merged.
func (f *sourceFile) spans(ranges []hcl.Range) []span {
	var out []span
	for _, rng := range ranges {
		if sp := (span{f.offset(rng.Start), f.offset(rng.End)}); sp.end > sp.start {
			out = append(out, sp)
		}
	}
	slices.SortFunc(out, func(x, y span) int { return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.end, y.end)) })
	merged := out[:0]
	for _, sp := range out {
		if n := len(merged); n > 0 && sp.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// offset returns the byte offset of pos in the file: pos.Byte when it lies
// on pos.Line, else (a position written without its byte offset) the
// offset of pos.Column on that line, counted in grapheme clusters as hcl
// counts columns. A line past the end is the end of the file.
func (f *sourceFile) offset(pos hcl.Pos) int {
	start, end, ok := f.lineBounds(pos.Line)
	if !ok {
		if pos.Line < 1 {
			return 0
		}
		return len(f.src)
	}
	if pos.Byte >= start && pos.Byte <= end && (pos.Byte > 0 || pos.Column <= 1) {
		return pos.Byte
	}
	off := start
	for col := 1; col < pos.Column && off < end; col++ {
		n, _, _ := textseg.ScanGraphemeClusters(f.src[off:end], true)
		if n == 0 {
			break
		}
		off += n
	}
	return off
}

// lineBounds returns the byte offsets of line n (1-based) without its line
// break (LF or CRLF); ok is false when the file has no line n.
func (f *sourceFile) lineBounds(n int) (start, end int, ok bool) {
	if n < 1 || n > len(f.starts) {
		return 0, 0, false
	}
	start, end = f.starts[n-1], len(f.src)
	if n < len(f.starts) {
		end = f.starts[n] - 1
	}
	if end > start && f.src[end-1] == '\r' {
		end--
	}
	return start, end, true
}

// snippet returns the lines of rng, at most max of them, with their
// numbers; none when the set lacks the file or the range is outside it.
// Each line is a copy, not a slice of the file.
func (s *sourceSet) snippet(rng *hcl.Range, max int) (nums []int, lines []string) {
	if rng == nil {
		return nil, nil
	}
	f := s.file(rng.Filename)
	first, last := rng.Start.Line, rng.End.Line
	if f == nil || first < 1 {
		return nil, nil
	}
	if last < first {
		last = first
	}
	if last-first+1 > max {
		last = first + max - 1
	}
	for n := first; n <= last; n++ {
		start, end, ok := f.lineBounds(n)
		if !ok {
			break
		}
		nums = append(nums, n)
		lines = append(lines, f.masked(start, end))
	}
	return nums, lines
}

// masked returns a copy of the bytes [start, end) with every part inside a
// mask replaced by redactMark. An empty line inside a mask is shown as
// redactMark too, so that a multi-line value reads as hidden throughout.
func (f *sourceFile) masked(start, end int) string {
	// The masks are sorted and disjoint: the first that ends after start
	// is the first that can touch the line.
	i, _ := slices.BinarySearchFunc(f.masks, start, func(sp span, off int) int {
		if sp.end <= off {
			return -1
		}
		return 1
	})
	touches := func(sp span) bool { return sp.start < end || sp.start == start }
	if i == len(f.masks) || !touches(f.masks[i]) {
		return string(f.src[start:end])
	}
	var b strings.Builder
	at := start
	for ; i < len(f.masks) && touches(f.masks[i]); i++ {
		b.Write(f.src[at:max(f.masks[i].start, at)])
		b.WriteString(redactMark)
		at = min(f.masks[i].end, end)
	}
	b.Write(f.src[at:end])
	return b.String()
}

// column returns the column of pos counted in code points from the start
// of its line (1-based), as SARIF's columnKind "unicodeCodePoints" wants;
// ok is false when the set lacks the file or the file lacks the line.
func (s *sourceSet) column(file string, pos hcl.Pos) (int, bool) {
	f := s.file(file)
	if f == nil {
		return 0, false
	}
	start, _, ok := f.lineBounds(pos.Line)
	if !ok {
		return 0, false
	}
	return 1 + utf8.RuneCount(f.src[start:f.offset(pos)]), true
}
