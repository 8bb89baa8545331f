package capability

import (
	"strings"
	"testing"
)

func FuzzSatisfies(f *testing.F) {
	seeds := [][2]string{
		{"math", "math"},
		{"math", "math::add"},
		{"math", "mathematics"},
		{"math::add", "math"},
		{"a:", "a:::b"},
		{"a", "a:::b"},
		{"*", "*"},
		{"", "::x"},
		{"", ""},
		{" math", "math:: add"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, held, required string) {
		want := required == held || strings.HasPrefix(required, held+"::")
		if got := Satisfies(held, required); got != want {
			t.Fatalf("Satisfies(%q, %q)\ngot:  %v\nwant: %v", held, required, got, want)
		}

		// The indexed matrix must agree with Satisfies for arbitrary strings.
		m := Compute([]Agent{{Name: "a", Holds: []string{held}}}, []Tool{{Name: "t", Requires: []string{required}}})
		if got := m.Allowed(0, 0); got != want {
			t.Fatalf("Compute with held %q, required %q: Allowed\ngot:  %v\nwant: %v", held, required, got, want)
		}

		for _, tag := range []string{held, required} {
			warning, err := ValidateTag(tag)
			if err != nil {
				if warning != "" {
					t.Fatalf("ValidateTag(%q) returned both an error and a warning\ngot:  %q, %v\nwant: no warning with an error", tag, warning, err)
				}
				continue
			}
			// A valid tag is non-empty, trimmed, and has non-empty segments.
			if tag == "" || strings.TrimSpace(tag) != tag || strings.Contains(tag, ":::") ||
				strings.HasPrefix(tag, "::") || strings.HasSuffix(tag, "::") || strings.Contains(tag, "::::") {
				t.Fatalf("ValidateTag(%q)\ngot:  valid\nwant: an error", tag)
			}
		}
	})
}
