package capability

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
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
// around it shows: a control character (a newline, an escape that starts
// a terminal sequence), a bidirectional control, a zero-width space, word
// joiner or byte order mark, a soft hyphen, a line or paragraph separator,
// a space other than U+0020, a blank filler (Hangul, braille), the
// combining grapheme joiner or a tag character. A tag holding one could
// read as another tag, or forge lines of a plan that prints it. The
// zero-width joiner and non-joiner are writing (Persian words, emoji
// sequences) between two characters that are not ASCII, and hidden
// anywhere else ("fs::re\u200dad" reads as "fs::read"). It reports false
// when there is none.
func Hidden(tag string) (rune, bool) {
	rs := []rune(tag)
	for i, r := range rs {
		switch {
		case r == '\u200c' || r == '\u200d':
			if i == 0 || i == len(rs)-1 || !joinable(rs[i-1]) || !joinable(rs[i+1]) {
				return r, true
			}
		case hiddenRune(r):
			return r, true
		}
	}
	return 0, false
}

// joinable reports whether a zero-width joiner or non-joiner next to r is
// writing: r is not ASCII, not a joiner and not hidden.
func joinable(r rune) bool {
	return r >= utf8.RuneSelf && r != '\u200c' && r != '\u200d' && !hiddenRune(r)
}

// hiddenRune reports whether r is one of Hidden's characters, the joiners
// aside.
func hiddenRune(r rune) bool {
	switch {
	case r == '\u200c' || r == '\u200d':
		return false
	case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.In(r, unicode.Zl, unicode.Zp):
		return true
	case unicode.Is(unicode.Zs, r) && r != ' ':
		return true
	case r == '\u034f', r == '\u115f', r == '\u1160', r == '\u3164', r == '\uffa0', r == '\u2800':
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
