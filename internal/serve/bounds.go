package serve

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// What a call record holds is bounded, whoever fills it: the runtime
// database keys sessions by their id (bbolt refuses keys over 32 KiB),
// and agentform calls prints every field. A client chooses the tool name
// of a call, its session's capability override, and, through the
// arguments' property names, part of a schema error.
const (
	// MaxSessionID is the longest session id, in bytes.
	MaxSessionID = 128
	// maxRecordedTool is the longest tool name recorded as it is; a longer
	// one is never a registered tool.
	maxRecordedTool = 128
	// maxRecordedError is the longest error recorded as it is.
	maxRecordedError = 2048
	// maxRecordedOverride is the longest capability override recorded as
	// it is: an HTTP client chooses it (X-Agentform-Capability-Override),
	// and every call of its session records it.
	maxRecordedOverride = 2048
)

// sessionIDChars are the characters of a session id besides ASCII letters
// and digits.
const sessionIDChars = "._-:@/+="

// CheckSessionID says why id cannot name a session: it is empty, longer
// than MaxSessionID bytes, or has a character other than an ASCII letter,
// a digit or one of . _ - : @ / + =. Ids the server makes itself (a UUID
// for stdio, the MCP session id over HTTP) always pass.
func CheckSessionID(id string) error {
	switch {
	case id == "":
		return errors.New("a session id cannot be empty")
	case len(id) > MaxSessionID:
		return fmt.Errorf("a session id has at most %d bytes, not %d", MaxSessionID, len(id))
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune(sessionIDChars, r)) {
			return fmt.Errorf("a session id may hold ASCII letters, digits and %s only", strings.Join(strings.Split(sessionIDChars, ""), " "))
		}
	}
	return nil
}

// cutText returns s when it has at most max bytes, or its first bytes (up
// to max, whole UTF-8 characters) and a marker saying how many bytes were
// left out: "…[1048448 more bytes]".
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s…[%d more bytes]", s[:n], len(s)-n)
}
