package secretparts

import (
	"strings"
	"testing"
)

// FuzzParts: no value or text makes the parts panic, every part is at
// least as long as the bound for its kind, no form is empty, and
// ReplacePart replaces a part that stands on its own.
func FuzzParts(f *testing.F) {
	for _, seed := range []string{
		"https://user:pass%40word@host.example:8443/hooks/T0K3N?api_key=abc%2F123&fmt=json",
		"postgres://app:Xk9%40pL2@db:5432/app",
		"Bearer tok-12345678",
		"Basic c3ZjOnBhc3N3MHJk",
		"http://[::1]:80/%zz",
		"\"quoted\" / and %",
	} {
		f.Add(seed, "error: "+seed, true)
	}
	f.Fuzz(func(t *testing.T, value, text string, secret bool) {
		for _, p := range Credentials(value, secret) {
			if len(p) < minPassword {
				t.Fatalf("credential %q shorter than %d", p, minPassword)
			}
		}
		for _, p := range URLParts(value, secret) {
			if len(p) < minURLPart {
				t.Fatalf("URL part %q shorter than %d", p, minURLPart)
			}
			for _, form := range Forms(p) {
				if form == "" {
					t.Fatalf("an empty form of %q", p)
				}
				alone := text + " " + form + " "
				if out := ReplacePart(alone, form, "(part)"); !strings.HasSuffix(out, " (part) ") {
					t.Fatalf("ReplacePart(%q, %q) left it: %q", alone, form, out)
				}
			}
		}
	})
}

// FuzzScrubber: no value or text makes the scrubber panic, and a secret
// of MinWhole bytes or more quoted in a text is gone from what Text
// returns (unless the text the scrubber writes itself holds it).
func FuzzScrubber(f *testing.F) {
	for _, seed := range []string{"tok-12345678", "https://h.example/hook/T0K3N?sig=abcdefgh", "caf\u00e9-secret", "line one\nline two two"} {
		f.Add(seed, "error: ", " end", "plain value")
	}
	f.Fuzz(func(t *testing.T, value, before, after, plain string) {
		s := &Scrubber{}
		s.Add(plain, "PLAIN", false)
		s.Add(value, "SECRET", true)
		out := s.Text(before + value + after)
		_ = s.JSON([]byte(before + value + after))
		if len(value) < MinWhole || strings.EqualFold(value, "true") || strings.EqualFold(value, "false") || strings.EqualFold(value, "null") {
			return
		}
		if strings.Contains(out, value) && !strings.Contains(before+after, value) && !strings.Contains("(value of SECRET)(part of SECRET)(value of PLAIN)(part of PLAIN)", value) {
			t.Fatalf("Text(%q) = %q: the secret %q is still there", before+value+after, out, value)
		}
	})
}
