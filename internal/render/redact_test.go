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

// TestRedactionScrub: values are replaced longest first, wherever they
// occur, except plain lower-case words, replaced as whole words only;
// values under MinScrubLen bytes are left alone.
func TestRedactionScrub(t *testing.T) {
	r := NewRedaction(nil, []string{"tok", "SEKRET", "Bearer SEKRET", "openai", "true", "123456", "sk-1234", "Xk9SEKRETadj", "letmein", "correcthorse", "482913", "redacted"})
	for _, tc := range []struct{ in, want string }{
		{"use Bearer SEKRET or SEKRET, tok stays", "use (redacted) or (redacted), tok stays"},
		{"provider openai: TOKEN_REQUIRED is true, 123456 tokens", "provider (redacted): TOKEN_REQUIRED is true, (redacted) tokens"},
		{"SEKRETS, NOTSEKRET, sk-1234, (sk-1234) and sk-12345 go", "(redacted)S, NOT(redacted), (redacted), ((redacted)) and (redacted)5 go"},
		{"session sess_Xk9SEKRETadj", "session sess_(redacted)"},
		{"password letmein, letmeinto, correcthorse; pin 482913 or 4829130", "password (redacted), letmeinto, (redacted); pin (redacted) or (redacted)0"},
		{"openai_key openais openai.", "openai_key openais (redacted)."},
	} {
		if got := r.Scrub(tc.in); got != tc.want {
			t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
		}
	}
	if got := (*Redaction)(nil).Scrub("x"); got != "x" {
		t.Errorf("nil redaction changed the text: %q", got)
	}
}
