package capability

import (
	"errors"
	"testing"
)

func TestSatisfies(t *testing.T) {
	tests := []struct {
		name     string
		held     string
		required string
		want     bool
	}{
		{"identical single segment", "math", "math", true},
		{"identical two segments", "math::add", "math::add", true},
		{"identical three segments", "math::add::fast", "math::add::fast", true},
		{"root covers child", "math", "math::add", true},
		{"root covers grandchild", "math", "math::add::fast", true},
		{"child covers grandchild", "math::add", "math::add::fast", true},
		{"child covers four segments", "math::add", "math::add::fast::v2", true},
		{"string prefix is not a namespace prefix", "math", "mathematics", false},
		{"underscore suffix is not a namespace prefix", "math", "math_x", false},
		{"string prefix of child", "math", "mathematics::add", false},
		{"specific does not cover root", "math::add", "math", false},
		{"grandchild does not cover child", "math::add::fast", "math::add", false},
		{"sibling", "math::add", "math::sub", false},
		{"partial segment", "math::ad", "math::add", false},
		{"partial segment of grandchild", "math::add", "math::addition::fast", false},
		{"single colon is not a separator", "math", "math:add", false},
		{"different roots", "net", "math::add", false},
		{"star matches star", "*", "*", true},
		{"star is not a wildcard", "*", "math", false},
		{"star is not a wildcard for children", "*", "math::add", false},
		{"star namespace covers its children", "*", "*::add", true},
		{"tag does not satisfy star", "math", "*", false},
		{"segment star is literal", "math::*", "math::add", false},
		{"empty held", "", "math", false},
		{"empty required", "math", "", false},
		{"both empty", "", "", true},
		{"case sensitive", "Math", "math::add", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Satisfies(tt.held, tt.required); got != tt.want {
				t.Errorf("Satisfies(%q, %q)\ngot:  %v\nwant: %v", tt.held, tt.required, got, tt.want)
			}
		})
	}
}

func TestValidateTag(t *testing.T) {
	tests := []struct {
		name        string
		tag         string
		wantErr     bool
		wantWarning bool
	}{
		{"single segment", "math", false, false},
		{"two segments", "math::add", false, false},
		{"three segments", "math::add::fast", false, false},
		{"digits underscores dashes dots", "k8s_admin::roll-out::v1.2", false, false},
		{"single colon inside segment", "a:b::c", false, false},
		{"unicode", "données::lire", false, false},
		{"star", "*", false, true},
		{"star segment", "math::*", false, true},
		{"star inside segment is fine", "math::a*b", false, false},
		{"empty", "", true, false},
		{"leading space", " math", true, false},
		{"trailing space", "math ", true, false},
		{"trailing newline", "math\n", true, false},
		{"leading tab", "\tmath::add", true, false},
		{"only whitespace", "   ", true, false},
		{"trailing separator", "math::", true, false},
		{"leading separator", "::add", true, false},
		{"double separator", "a::::b", true, false},
		{"only separator", "::", true, false},
		{"space around separator", "math:: add", true, false},
		{"space before separator", "math ::add", true, false},
		{"whitespace segment", "math:: ::add", true, false},
		{"triple colon", "a:::b", true, false},
		{"trailing single colon", "math:", true, false},
		{"leading single colon", ":math", true, false},
		{"newline inside", "x\n\nPlan: 0 to add", true, false},
		{"escape sequence", "x\x1b[8m", true, false},
		{"carriage return", "fs::read\rfs::write", true, false},
		{"zero-width space", "shell\u200b", true, false},
		{"zero-width joiner inside", "fs::re\u200dad", true, false},
		{"bidirectional override", "fs::\u202edaer", true, false},
		{"byte order mark", "\ufefffs", true, false},
		{"C1 control", "fs::\u009bread", true, false},
		{"invalid UTF-8", "fs::\xffread", true, false},
		{"space inside a segment", "net::raw socket", false, false},
		{"Bengali ra-phala, a joiner before the virama", "bn::\u09b0\u200d\u09cd\u09af\u09be\u09ac", false, false},
		{"Sinhala touching letters", "si::\u0d9a\u200d\u0dca\u0dc0", false, false},
		{"a joiner before a virama on an ASCII letter", "x::a\u200d\u094d", true, false},
		{"play button emoji", "media::\u25b6\ufe0f", false, false},
		{"circled M emoji", "m::\u24c2\ufe0f", false, false},
		{"arrow emoji", "up::\u2934\ufe0f", false, false},
		{"variation selector after a letter", "fs::re\ufe0fad", true, false},
		{"non-joiner after an Arabic vowel mark", "ar::\u0628\u064e\u200c\u0627", false, false},
		{"zero-width non-joiner in a Persian word", "fa::\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", false, false},
		{"zero-width joiner in an emoji sequence", "team::\U0001f469\u200d\U0001f4bb", false, false},
		{"zero-width joiner between ASCII letters", "fs::re\u200dad", true, false},
		{"zero-width non-joiner at a segment's end", "fs::read\u200c", true, false},
		{"two zero-width joiners", "team::\U0001f469\u200d\u200d\U0001f4bb", true, false},
		{"line separator", "fs::read\u2028fs::write", true, false},
		{"no-break space inside", "net::raw\u00a0socket", true, false},
		{"ideographic space", "net::raw\u3000socket", true, false},
		{"Hangul filler", "fs::\u3164", true, false},
		{"braille blank", "fs::read\u2800", true, false},
		{"combining grapheme joiner", "fs::re\u034fad", true, false},
		{"tag character", "fs::read\U000e0041", true, false},
		{"soft hyphen", "fs::re\u00adad", true, false},
		// Variation selectors show as nothing but after an emoji or in a keycap.
		{"variation selector inside a word", "fs::re\ufe0fad", true, false},
		{"variation selector at a segment's end", "fs::read\ufe0f", true, false},
		{"text variation selector after a letter", "fs::read\ufe0e", true, false},
		{"variation selector 1", "fs::re\ufe00ad", true, false},
		{"ideographic variation selector", "fs::read\U000e0100", true, false},
		{"last variation selector supplement", "fs::read\U000e01ef", true, false},
		{"variation selector after a digit without keycap", "v::1\ufe0f", true, false},
		{"two variation selectors after an emoji", "love::\u2764\ufe0f\ufe0f", true, false},
		{"Mongolian free variation selector", "fs::re\u180bad", true, false},
		{"Mongolian vowel separator", "fs::re\u180ead", true, false},
		{"Mongolian free variation selector four", "fs::re\u180fad", true, false},
		{"Khmer inherent vowel aq", "fs::re\u17b4ad", true, false},
		{"Khmer inherent vowel aa", "fs::read\u17b5", true, false},
		// Joiners where they change nothing.
		{"zero-width joiner between CJK", "ja::\u65e5\u200d\u672c", true, false},
		{"zero-width non-joiner between Cyrillic", "ru::\u0436\u200c\u0436", true, false},
		{"zero-width joiner between accented letters", "fr::\u00e9\u200d\u00e9", true, false},
		{"zero-width joiner between combining marks on ASCII", "x::a\u0308\u200d\u0308b", true, false},
		{"zero-width joiner after an emoji at the end", "team::\U0001f469\u200d", true, false},
		{"zero-width joiner from an emoji to a letter", "team::\U0001f469\u200d\u00e9", true, false},
		{"zero-width non-joiner between emoji", "team::\U0001f469\u200c\U0001f4bb", true, false},
		{"zero-width joiner after a virama on an ASCII letter", "x::a\u094d\u200d", true, false},
		{"zero-width joiner after a virama alone", "x::\u094d\u200d", true, false},
		{"two zero-width joiners after a virama", "ml::\u0d28\u0d4d\u200d\u200d", true, false},
		{"zero-width non-joiner from Arabic to Latin", "fa::\u0645\u200cx", true, false},
		// Tag characters outside an emoji flag, and broken flags.
		{"tag characters without a cancel tag", "flag::\U0001f3f4\U000e0067\U000e0062", true, false},
		{"cancel tag alone after a black flag", "flag::\U0001f3f4\U000e007f", true, false},
		{"tag characters after another emoji", "flag::\U0001f3f3\U000e0067\U000e007f", true, false},
		{"language tag", "flag::\U0001f3f4\U000e0001\U000e0067\U000e007f", true, false},
		{"text after a flag's cancel tag", "flag::\U0001f3f4\U000e0067\U000e007f\U000e007f", true, false},
		{"Arabic letter mark", "ar::\u0627\u061c", true, false},
		// Writing that must keep passing.
		{"Devanagari", "hi::\u0939\u093f\u0928\u094d\u0926\u0940", false, false},
		{"Persian zero-width non-joiner", "fa::\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", false, false},
		{"Hebrew with points", "he::\u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd", false, false},
		{"Arabic", "ar::\u0642\u0631\u0627\u0621\u0629", false, false},
		{"CJK", "ja::\u65e5\u672c\u8a9e::\u8aad\u3080", false, false},
		{"Malayalam chillu at a segment's end", "ml::\u0d28\u0d4d\u200d", false, false},
		{"Malayalam chillu inside a word", "ml::\u0d05\u0d35\u0d7b\u0d28\u0d4d\u200d\u0d31\u0d46", false, false},
		{"Devanagari half form", "hi::\u0915\u094d\u200d\u0937", false, false},
		{"Devanagari explicit virama", "hi::\u0915\u094d\u200c\u0937", false, false},
		{"virama after a nukta", "hi::\u0915\u093c\u094d\u200d", false, false},
		{"Syriac zero-width non-joiner", "syr::\u0710\u0712\u200c\u0713", false, false},
		{"emoji zero-width joiner sequence", "team::\U0001f469\u200d\U0001f4bb", false, false},
		{"rainbow flag", "flag::\U0001f3f3\ufe0f\u200d\U0001f308", false, false},
		{"skin tone", "ok::\U0001f44d\U0001f3fd", false, false},
		{"skin tone in a zero-width joiner sequence", "team::\U0001f469\U0001f3fd\u200d\U0001f4bb", false, false},
		{"couple with heart", "team::\U0001f469\u200d\u2764\ufe0f\u200d\U0001f468", false, false},
		{"regional indicator flag", "flag::\U0001f1eb\U0001f1f7", false, false},
		{"keycap", "key::1\ufe0f\u20e3", false, false},
		{"keycap number sign", "key::#\ufe0f\u20e3", false, false},
		{"emoji presentation", "love::\u2764\ufe0f", false, false},
		{"text presentation", "love::\u2764\ufe0e", false, false},
		{"England flag", "flag::\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f", false, false},
		{"England flag inside a segment", "flag::\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f::x", false, false},
		{"black flag", "flag::\U0001f3f4", false, false},
		{"Arabic number sign", "ar::\u0600\u0661\u0662", false, false},
		{"Arabic end of ayah", "ar::\u06dd\u0661", false, false},
		{"Arabic footnote marker", "ar::\u0605\u0661", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warning, err := ValidateTag(tt.tag)
			if gotErr := err != nil; gotErr != tt.wantErr {
				t.Fatalf("ValidateTag(%q) error\ngot:  %v\nwant: error=%v", tt.tag, err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidTag) {
				t.Errorf("ValidateTag(%q) error does not wrap ErrInvalidTag\ngot:  %v\nwant: %v", tt.tag, err, ErrInvalidTag)
			}
			if gotWarning := warning != ""; gotWarning != tt.wantWarning {
				t.Errorf("ValidateTag(%q) warning\ngot:  %q\nwant: warning=%v", tt.tag, warning, tt.wantWarning)
			}
		})
	}
}

func TestPrefixesOf(t *testing.T) {
	// prefixesOf must yield exactly the strings that satisfy the tag.
	tests := []struct {
		tag  string
		want []string
	}{
		{"math", []string{"math"}},
		{"math::add", []string{"math::add", "math"}},
		{"math::add::fast", []string{"math::add::fast", "math", "math::add"}},
		{"a:::b", []string{"a:::b", "a", "a:"}},
		{"::add", []string{"::add", ""}},
		{"", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			var got []string
			prefixesOf(tt.tag, func(p string) { got = append(got, p) })
			if !equalStrings(got, tt.want) {
				t.Errorf("prefixesOf(%q)\ngot:  %q\nwant: %q", tt.tag, got, tt.want)
			}
			for _, p := range got {
				if !Satisfies(p, tt.tag) {
					t.Errorf("Satisfies(%q, %q)\ngot:  false\nwant: true", p, tt.tag)
				}
			}
		})
	}
}

// equalStrings reports whether a and b hold the same strings in the same
// order, treating nil and empty as equal.
func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
