package audit

import (
	"bytes"
	"unicode/utf8"

	"github.com/apparentlymart/go-textseg/v17/textseg"
	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/render"
)

// sourceSet serves the manifest text that reports quote: the lines of
// table and HTML snippets. Each file is indexed once, on first use,
// however many findings point into it, and a snippet copies out only the
// lines it shows: a line kept as a substring of the whole file would keep
// the whole file alive, once per finding. Text inside a range of the
// report's redaction (Report.Redaction) never leaves the set: a snippet
// shows render.RedactMark in its place. A long line (a minified JSON
// manifest is one line) is shown as a window around the finding's range.
type sourceSet struct {
	src   map[string][]byte
	red   *render.Redaction
	files map[string]*sourceFile
}

// sourceFile is one file of a sourceSet.
type sourceFile struct {
	src []byte
	// starts holds the byte offset of the start of every line: line n
	// (1-based) starts at starts[n-1]. A file that ends with a line break
	// has an empty last line, as hcl counts lines.
	starts []int
	// masks are the byte spans of the file's redacted ranges, sorted and
	// merged.
	masks []render.Span
}

// newSourceSet serves the files of src (WriteOptions.Source), which it
// reads but never changes, masking the ranges of red (which may be nil).
func newSourceSet(src map[string][]byte, red *render.Redaction) *sourceSet {
	return &sourceSet{src: src, red: red, files: map[string]*sourceFile{}}
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
		f.masks = s.red.SourceSpans(name, src, f.offset)
	}
	s.files[name] = f
	return f
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

// snippet returns the lines of rng, at most maxLines of them, with their
// numbers; none when the set lacks the file or the range is outside it.
// Each line is a copy, not a slice of the file, cut to a window around
// the range when long (render.Excerpt).
func (s *sourceSet) snippet(rng *hcl.Range, maxLines int) (nums []int, lines []string) {
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
	if last-first+1 > maxLines {
		last = first + maxLines - 1
	}
	hlStart, hlEnd := f.offset(rng.Start), f.offset(rng.End)
	for n := first; n <= last; n++ {
		start, end, ok := f.lineBounds(n)
		if !ok {
			break
		}
		text, _, _ := render.Excerpt(f.src, start, end, f.masks, max(hlStart, start), min(max(hlEnd, hlStart), end))
		nums = append(nums, n)
		lines = append(lines, text)
	}
	return nums, lines
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
