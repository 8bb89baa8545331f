package pathfold

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// MaxPathLength is the longest path, in bytes, an artifact holds.
const MaxPathLength = 4096

// CheckPath returns why p is not a safe, canonical artifact entry path,
// or "" when it is one. The artifact builder and reader apply it, and the
// manifest and resolution to the files an artifact will ship, so that a
// name no artifact can hold is reported where it comes from. A safe path
// is relative, uses forward slashes, and names a file strictly inside the
// archive root once extracted anywhere; being clean as well makes it the
// one spelling of that file, so that two spellings cannot name the same
// file. It contains no control character, so a SHA256SUMS line holds
// exactly one path.
func CheckPath(p string) string {
	switch {
	case p == "":
		return "the path is empty"
	case len(p) > MaxPathLength:
		return fmt.Sprintf("the path is longer than %d bytes", MaxPathLength)
	case !utf8.ValidString(p):
		return "the path is not valid UTF-8"
	case strings.HasPrefix(p, "/"):
		return "the path is absolute"
	case strings.ContainsRune(p, '\\'):
		return "the path contains a backslash"
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "the path contains a control character"
		}
	}
	for _, elem := range strings.Split(p, "/") {
		switch elem {
		case "..":
			return `the path contains ".."`
		case ".":
			return `the path contains "."`
		case "":
			return "the path contains an empty element"
		}
	}
	// With no "", "." or ".." element and no leading slash, p is already
	// clean; the check keeps that invariant explicit.
	if c := path.Clean(p); c != p {
		return fmt.Sprintf("the path is not clean (%q)", c)
	}
	return ""
}
