package render

import (
	"strings"
	"testing"
)

// TestExcerpt: masks become one mark each, wherever the highlight and the
// window fall, and a long line is cut around the highlight.
func TestExcerpt(t *testing.T) {
	long := strings.Repeat("a", 200) + "SECRET" + strings.Repeat("b", 200)
	tests := []struct {
		name         string
		src          string
		masks        []Span
		hlStart, end int
		text, hl     string
	}{
		{"plain", "key = value", nil, 6, 11, "key = value", "value"},
		{"inside mask", `k = "tok"`, []Span{{4, 9}}, 5, 7, `k = (redacted)`, "(redacted)"},
		{"after mask", `k = "tok", x = 1`, []Span{{4, 9}}, 11, 16, `k = (redacted), x = 1`, "x = 1"},
		{"empty highlight", `k = 1`, nil, 5, 5, `k = 1`, ""},
		{"window", long, []Span{{200, 206}}, 200, 206, "…" + strings.Repeat("a", 57) + "(redacted)" + strings.Repeat("b", 57) + "…", "(redacted)"},
		{"mask at window edge", long, []Span{{0, 150}}, 160, 161, "(redacted)" + strings.Repeat("a", 50) + "SECRET" + strings.Repeat("b", 14) + "…", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, lead, width := Excerpt([]byte(tt.src), 0, len(tt.src), tt.masks, tt.hlStart, tt.end)
			if text != tt.text || text[lead:lead+width] != tt.hl {
				t.Errorf("got:\n%q (highlight %q)\nwant:\n%q (highlight %q)", text, text[lead:lead+width], tt.text, tt.hl)
			}
		})
	}
}

// TestRedactionScrub: values are replaced longest first and only as whole
// words; values under MinScrubLen bytes, numbers and plain lower-case
// words are left alone.
func TestRedactionScrub(t *testing.T) {
	r := NewRedaction(nil, []string{"tok", "SEKRET", "Bearer SEKRET", "openai", "true", "123456", "sk-1234"})
	for _, tc := range []struct{ in, want string }{
		{"use Bearer SEKRET or SEKRET, tok stays", "use (redacted) or (redacted), tok stays"},
		{"provider openai: TOKEN_REQUIRED is true, 123456 tokens", "provider openai: TOKEN_REQUIRED is true, 123456 tokens"},
		{"SEKRETS and NOTSEKRET stay, sk-1234 and (sk-1234) go, sk-12345 stays", "SEKRETS and NOTSEKRET stay, (redacted) and ((redacted)) go, sk-12345 stays"},
	} {
		if got := r.Scrub(tc.in); got != tc.want {
			t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
		}
	}
	if got := (*Redaction)(nil).Scrub("x"); got != "x" {
		t.Errorf("nil redaction changed the text: %q", got)
	}
}
