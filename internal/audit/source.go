package audit

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
)

// sourceSet serves the manifest text that reports quote: the lines of
// table and HTML snippets. Each file is indexed once, on first use,
// however many findings point into it, and a snippet copies out only the
// lines it shows: a line kept as a substring of the whole file would keep
// the whole file alive, once per finding.
type sourceSet struct {
	src   map[string][]byte
	files map[string]*sourceFile
}

// sourceFile is one file of a sourceSet.
type sourceFile struct {
	src []byte
	// starts holds the byte offset of the start of every line: line n
	// (1-based) starts at starts[n-1]. A file that ends with a line break
	// has an empty last line, as hcl counts lines.
	starts []int
}

// newSourceSet serves the files of src (WriteOptions.Source), which it
// reads but never changes.
func newSourceSet(src map[string][]byte) *sourceSet {
	return &sourceSet{src: src, files: map[string]*sourceFile{}}
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
	}
	s.files[name] = f
	return f
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
		lines = append(lines, string(f.src[start:end]))
	}
	return nums, lines
}
