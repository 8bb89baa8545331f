package artifact

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// MaxPathLength is the longest entry path, in bytes, Build writes and Read
// accepts.
const MaxPathLength = 4096

// SumsName is the name of the checksum entry Build adds to every artifact.
const SumsName = "SHA256SUMS"

// AgentName is the name of the resolved agent's entry.
const AgentName = "agent.json"

// CheckPath returns why p is not a safe, canonical entry path, or "" when
// it is one. A safe path is relative, uses forward slashes, and names a
// file strictly inside the archive root once extracted anywhere; being
// clean as well makes it the one spelling of that file, so that two
// spellings cannot name the same file. It contains no control character,
// so a SHA256SUMS line holds exactly one path.
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

// conflicts returns a path of sorted that is also a directory of another
// path ("a" beside "a/b"), or "" when there is none; sorted order makes the
// answer deterministic. A file's descendants are not necessarily adjacent
// to it in byte order ("a", "a-b", "a/c"), so every prefix is looked up.
func conflicts(sorted []string) string {
	files := make(map[string]bool, len(sorted))
	for _, p := range sorted {
		files[p] = true
	}
	for _, p := range sorted {
		for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
			if files[p[:i]] {
				return p[:i]
			}
		}
	}
	return ""
}
