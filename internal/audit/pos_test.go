package audit

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/apparentlymart/go-textseg/v17/textseg"
	"github.com/hashicorp/hcl/v2"
)

// slowPosAt counts from the start of src for each offset: what posIndex
// must agree with.
func slowPosAt(src []byte, off int) hcl.Pos {
	lineStart := bytes.LastIndexByte(src[:off], '\n') + 1
	pos := hcl.Pos{Line: bytes.Count(src[:off], []byte{'\n'}) + 1, Column: 1, Byte: off}
	for rest := src[lineStart:off]; len(rest) > 0; pos.Column++ {
		n, _, _ := textseg.ScanGraphemeClusters(rest, true)
		if n == 0 {
			break
		}
		rest = rest[n:]
	}
	return pos
}

// TestPosIndex: the position of every offset that starts a character (as
// every span's ends do: they are token and quote boundaries) of files with
// CRLF, combining marks, flags and invalid bytes is the one counting from
// the start gives, whatever the order offsets are asked in.
func TestPosIndex(t *testing.T) {
	for _, src := range []string{
		"",
		"a",
		"\n\n",
		"tool \"a\" {\r\n  auth_token = \"x\"\r\n}\r\n",
		"e\u0301t\u00e9 \U0001F1FA\U0001F1F8\U0001F1FA\U0001F1F8 x\n\u4e2d\u6587 \xff\xfe end",
		`{"tool": {"a": {"auth_token": "S", "headers": {"Authorization": "Bearer x"}}}}`,
	} {
		b := []byte(src)
		p := newPosIndex(b)
		for _, order := range []int{1, -1} {
			for i := range len(b) + 1 {
				off := i
				if order < 0 {
					off = len(b) - i
				}
				if off < len(b) && !utf8.RuneStart(b[off]) {
					continue
				}
				if got, want := p.at(off), slowPosAt(b, off); got != want {
					t.Errorf("%q at %d\ngot:  %+v\nwant: %+v", src, off, got, want)
				}
			}
		}
	}
}
