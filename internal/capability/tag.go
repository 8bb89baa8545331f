package capability

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Separator separates the namespace segments of a capability tag.
const Separator = "::"

// ErrInvalidTag is wrapped by every error that ValidateTag returns, so callers
// can test for it with errors.Is.
var ErrInvalidTag = errors.New("invalid capability tag")

// ValidateTag reports whether tag is a well-formed capability tag.
//
// It returns a non-nil error wrapping ErrInvalidTag when the tag is empty,
// is not valid UTF-8, holds a character that prints as nothing or changes
// how the text around it shows (Hidden), has leading or trailing
// whitespace, or has a malformed segment: an empty
// segment ("math::", "::add", "a::::b"), a segment with leading or trailing
// whitespace ("math:: add"), or a segment that begins or ends with a stray
// ':' ("a:::b", "math:"), which would make the segment split ambiguous.
//
// For a valid tag it returns a non-empty warning when the tag or one of its
// segments is "*": the asterisk is a literal, not a wildcard, so such a tag
// is compared like any other (it satisfies itself and the tags under it).
func ValidateTag(tag string) (warning string, err error) {
	if tag == "" {
		return "", fmt.Errorf("%w: tag is empty", ErrInvalidTag)
	}
	if !utf8.ValidString(tag) {
		return "", fmt.Errorf("%w %q: not valid UTF-8", ErrInvalidTag, tag)
	}
	if r, ok := Hidden(tag); ok {
		return "", fmt.Errorf("%w %q: it holds %U, a control or invisible character", ErrInvalidTag, tag, r)
	}
	if strings.TrimSpace(tag) != tag {
		return "", fmt.Errorf("%w %q: leading or trailing whitespace", ErrInvalidTag, tag)
	}
	star := false
	i := 0
	for seg := range strings.SplitSeq(tag, Separator) {
		i++
		switch {
		case seg == "":
			return "", fmt.Errorf("%w %q: segment %d is empty", ErrInvalidTag, tag, i)
		case strings.TrimSpace(seg) != seg:
			return "", fmt.Errorf("%w %q: segment %d has leading or trailing whitespace", ErrInvalidTag, tag, i)
		case seg[0] == ':' || seg[len(seg)-1] == ':':
			return "", fmt.Errorf("%w %q: segment %d begins or ends with a stray ':'", ErrInvalidTag, tag, i)
		case seg == "*":
			star = true
		}
	}
	if star {
		if tag == "*" {
			return `capability tag "*" is not a wildcard: it is compared like any other tag, so it grants only "*" and the tags under it ("*::…")`, nil
		}
		return fmt.Sprintf("capability tag %q is not a wildcard: \"*\" is a literal segment; hold the parent namespace to cover every tag below it", tag), nil
	}
	return "", nil
}

// Hidden returns the first character of tag that a terminal shows as
// nothing, or as a space that is not one, or that changes how the text
// around it shows. A tag holding one could read as another tag
// ("fs::re\u200dad" as "fs::read"), or forge lines of a plan that prints
// it. It reports false when there is none. Hidden are:
//
//   - a control character (a newline, an escape that starts a terminal
//     sequence), a line or paragraph separator, a space other than U+0020;
//   - a format character (Unicode Cf: a bidirectional control, a
//     zero-width space, word joiner or byte order mark, a soft hyphen),
//     but for the Arabic number signs U+0600–U+0605 and U+06DD, which
//     show, and the joiners and tag characters below;
//   - a blank filler (the combining grapheme joiner U+034F, the Hangul
//     fillers U+115F, U+1160, U+3164, U+FFA0, the braille blank U+2800),
//     a Khmer inherent vowel U+17B4–U+17B5, a Mongolian free variation
//     selector or the vowel separator U+180B–U+180F;
//   - a variation selector (U+FE00–U+FE0F, U+E0100–U+E01EF), but for
//     U+FE0E or U+FE0F right after an emoji or another non-ASCII symbol
//     (Unicode So or Sm: ▶️, Ⓜ️, ⤴️), or right after an ASCII digit,
//     '#' or '*' and before the keycap U+20E3 ("1\ufe0f\u20e3");
//   - the zero-width joiner U+200D, but right after a virama (a mark of
//     canonical combining class 9 on a non-ASCII letter, as in a Malayalam
//     chillu, also at a segment's end), right before a virama after a
//     non-ASCII letter (a Bengali ra-phala, a Sinhala touching letter), or
//     between two emoji, the first of which may end in U+FE0F or a
//     skin-tone modifier ("👩\u200d💻");
//   - the zero-width non-joiner U+200C, but right after a virama (as
//     above) or between two letters of a joining script (the marks on the
//     first, an Arabic vowel sign, skipped): Arabic (U+0600–U+06FF,
//     U+0750–U+077F, U+08A0–U+08FF, U+FB50–U+FDFF, U+FE70–U+FEFF),
//     Syriac (U+0700–U+074F), N'Ko (U+07C0–U+07FF) or Mongolian
//     (U+1800–U+18AF), as in Persian words;
//   - a tag character (U+E0001, U+E0020–U+E007F), but in an emoji flag:
//     U+1F3F4, then one or more of U+E0020–U+E007E, then U+E007F.
//
// An emoji here is a character in U+1F000–U+1FAFF, U+2190–U+21FF,
// U+2300–U+23FF, U+2600–U+27BF or U+2B00–U+2BFF, or one of U+00A9,
// U+00AE, U+203C, U+2049, U+2122, U+2139, U+3030, U+303D, U+3297, U+3299
// (ranges that approximate Extended_Pictographic).
func Hidden(tag string) (rune, bool) {
	rs := []rune(tag)
	for i := 0; i < len(rs); i++ {
		if end := flagTagEnd(rs, i); end > i {
			i = end
			continue
		}
		if hiddenAt(rs, i) {
			return rs[i], true
		}
	}
	return 0, false
}

// hiddenAt reports whether rs[i] is one of Hidden's characters where it
// stands. A tag character that ends a flag is not seen here: Hidden skips
// the flag (flagTagEnd).
func hiddenAt(rs []rune, i int) bool {
	r := rs[i]
	var prev, next rune = -1, -1
	if i > 0 {
		prev = rs[i-1]
	}
	if i+1 < len(rs) {
		next = rs[i+1]
	}
	switch {
	case r == zwj:
		return !afterVirama(rs, i) && !beforeVirama(rs, i) && !((isEmoji(prev) || prev == '\ufe0f') && isEmoji(next))
	case r == zwnj:
		return !afterVirama(rs, i) && !(joiningLetter(baseBefore(rs, i)) && joiningLetter(next))
	case r == '\ufe0e' || r == '\ufe0f':
		return !isEmoji(prev) && !isSymbol(prev) && !(isKeycapBase(prev) && next == '\u20e3')
	}
	return hiddenRune(r)
}

const (
	zwnj = '\u200c'
	zwj  = '\u200d'
)

// hiddenRune reports whether r is hidden wherever it stands: Hidden's
// characters but for the joiners, the variation selectors U+FE0E and
// U+FE0F, and the tag characters of a flag.
func hiddenRune(r rune) bool {
	switch {
	case r >= '\u0600' && r <= '\u0605', r == '\u06dd':
		return false
	case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.In(r, unicode.Zl, unicode.Zp):
		return true
	case unicode.Is(unicode.Zs, r) && r != ' ':
		return true
	case r == '\u034f', r == '\u115f', r == '\u1160', r == '\u3164', r == '\uffa0', r == '\u2800':
		return true
	case r >= '\u17b4' && r <= '\u17b5', r >= '\u180b' && r <= '\u180f':
		return true
	case r >= '\ufe00' && r <= '\ufe0f', r >= '\U000e0100' && r <= '\U000e01ef':
		return true
	}
	return false
}

// flagTagEnd returns the index of the cancel tag U+E007F that ends an
// emoji flag starting at rs[i] (U+1F3F4, one or more tag characters
// U+E0020–U+E007E, U+E007F), or i when no such flag starts there.
func flagTagEnd(rs []rune, i int) int {
	if rs[i] != '\U0001f3f4' {
		return i
	}
	j := i + 1
	for j < len(rs) && rs[j] >= '\U000e0020' && rs[j] <= '\U000e007e' {
		j++
	}
	if j == i+1 || j == len(rs) || rs[j] != '\U000e007f' {
		return i
	}
	return j
}

// afterVirama reports whether rs[i] follows a virama (canonical combining
// class 9) on a non-ASCII letter, other marks between them allowed.
func afterVirama(rs []rune, i int) bool {
	if i == 0 || norm.NFC.PropertiesString(string(rs[i-1])).CCC() != 9 {
		return false
	}
	j := i - 2
	for j >= 0 && unicode.In(rs[j], unicode.Mn, unicode.Mc) {
		j--
	}
	return j >= 0 && rs[j] >= utf8.RuneSelf && unicode.IsLetter(rs[j])
}

// isEmoji reports whether r is an emoji, approximated by ranges of
// Extended_Pictographic (skin-tone modifiers and regional indicators
// included).
func isEmoji(r rune) bool {
	switch {
	case r >= 0x1f000 && r <= 0x1faff,
		r >= 0x2600 && r <= 0x27bf,
		r >= 0x2300 && r <= 0x23ff,
		r >= 0x2b00 && r <= 0x2bff,
		r >= 0x2190 && r <= 0x21ff:
		return true
	}
	switch r {
	case 0xa9, 0xae, 0x203c, 0x2049, 0x2122, 0x2139, 0x3030, 0x303d, 0x3297, 0x3299:
		return true
	}
	return false
}

// isKeycapBase reports whether r can start a keycap sequence: an ASCII
// digit, '#' or '*'.
func isKeycapBase(r rune) bool {
	return r >= '0' && r <= '9' || r == '#' || r == '*'
}

// beforeVirama reports whether rs[i] stands between a non-ASCII letter
// and a virama, as the zero-width joiner of a Bengali ra-phala or a
// Sinhala touching letter does.
func beforeVirama(rs []rune, i int) bool {
	return i > 0 && i+1 < len(rs) && rs[i-1] >= utf8.RuneSelf && unicode.IsLetter(rs[i-1]) &&
		norm.NFC.PropertiesString(string(rs[i+1])).CCC() == 9
}

// baseBefore returns the character before rs[i], past any combining marks
// on it (an Arabic vowel mark), or -1.
func baseBefore(rs []rune, i int) rune {
	j := i - 1
	for j >= 0 && unicode.In(rs[j], unicode.Mn, unicode.Mc) {
		j--
	}
	if j < 0 {
		return -1
	}
	return rs[j]
}

// isSymbol reports whether r is a non-ASCII symbol (Unicode So or Sm), many
// of which are emoji when U+FE0F follows (▶️, Ⓜ️, ⤴️) beyond isEmoji's
// ranges.
func isSymbol(r rune) bool {
	return r >= utf8.RuneSelf && unicode.In(r, unicode.So, unicode.Sm)
}

// joiningLetter reports whether r is a letter of a script whose letters
// join (Arabic, Syriac, N'Ko, Mongolian), between two of which the
// zero-width non-joiner changes how they show.
func joiningLetter(r rune) bool {
	if !unicode.IsLetter(r) {
		return false
	}
	switch {
	case r >= 0x0600 && r <= 0x06ff, r >= 0x0750 && r <= 0x077f, r >= 0x08a0 && r <= 0x08ff,
		r >= 0xfb50 && r <= 0xfdff, r >= 0xfe70 && r <= 0xfeff,
		r >= 0x0700 && r <= 0x074f, r >= 0x07c0 && r <= 0x07ff, r >= 0x1800 && r <= 0x18af:
		return true
	}
	return false
}

// Satisfies reports whether the held tag satisfies the required tag, that is
// whether required == held or required starts with held + "::".
//
// Thus "math" satisfies "math::add" and "math::add::fast" but not
// "mathematics", and "math::add" does not satisfy "math". Satisfies does not
// validate its arguments.
func Satisfies(held, required string) bool {
	n := len(held)
	if len(required) == n {
		return required == held
	}
	return len(required) >= n+len(Separator) &&
		required[n] == ':' && required[n+1] == ':' &&
		required[:n] == held
}

// prefixesOf calls yield with every string p such that Satisfies(p, tag) is
// true: tag itself and tag[:i] for every index i at which "::" occurs
// (overlapping occurrences included, so the result is exact even for tags
// that ValidateTag rejects).
func prefixesOf(tag string, yield func(p string)) {
	yield(tag)
	for i := 0; i+len(Separator) <= len(tag); i++ {
		if tag[i] == ':' && tag[i+1] == ':' {
			yield(tag[:i])
		}
	}
}
