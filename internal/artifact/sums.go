package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/agentform/agentform/internal/pathfold"
)

// sumsLine formats one SHA256SUMS line as sha256sum prints it in text
// mode: the lowercase hex digest, two spaces, the path, a newline.
func sumsLine(b *bytes.Buffer, p string, data []byte) {
	sum := sha256.Sum256(data)
	b.WriteString(hex.EncodeToString(sum[:]))
	b.WriteString("  ")
	b.WriteString(p)
	b.WriteByte('\n')
}

// sumsProblem is one malformed or repeated SHA256SUMS line.
type sumsProblem struct {
	line int
	msg  string
}

// parseSums reads SHA256SUMS: one "<64 lowercase hex>  <path>" line per
// entry, each ending in a newline. It returns the well-formed lines by
// path, and a problem for each line that is malformed, names an unsafe
// path, or repeats a path (the first line for a path wins).
func parseSums(data []byte) (map[string]string, []sumsProblem) {
	sums := map[string]string{}
	var problems []sumsProblem
	text := string(data)
	if text == "" {
		return sums, nil
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
		problems = append(problems, sumsProblem{strings.Count(text, "\n"), "the last line does not end in a newline"})
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, line := range lines {
		n := i + 1
		digest, p, ok := strings.Cut(line, "  ")
		if !ok || !isHexDigest(digest) {
			problems = append(problems, sumsProblem{n, `malformed line: want "<64 lowercase hex digits>  <path>"`})
			continue
		}
		if why := pathfold.CheckPath(p); why != "" {
			problems = append(problems, sumsProblem{n, fmt.Sprintf("unsafe path %q: %s", p, why)})
			continue
		}
		if _, dup := sums[p]; dup {
			problems = append(problems, sumsProblem{n, fmt.Sprintf("%s is listed more than once", p)})
			continue
		}
		sums[p] = digest
	}
	return sums, problems
}

// isHexDigest reports whether s is a sha256 digest in lowercase hex.
func isHexDigest(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// hexSHA256 returns the lowercase hex sha256 of data.
func hexSHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
