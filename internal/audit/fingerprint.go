package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Fingerprint returns the identity of a finding across runs: the
// lowercase hex SHA-256 of its rule ID, target, agent, tool and a
// rule-specific key (the held tag, the command, the drifted served tool,
// the credential field). Line numbers and messages are deliberately left
// out, so moving a block or rewording a message keeps the fingerprint; a
// rule whose findings are not told apart by target, agent and tool must
// pass a key that does tell them apart, or two findings share one
// fingerprint.
//
// Each part is length-prefixed, so no choice of strings makes two
// different part lists hash the same bytes.
func Fingerprint(ruleID, target, agent, tool, key string) string {
	var stack [256]byte
	buf := stack[:0]
	for _, part := range [...]string{ruleID, target, agent, tool, key} {
		buf = strconv.AppendInt(buf, int64(len(part)), 10)
		buf = append(buf, ':')
		buf = append(buf, part...)
		buf = append(buf, '\n')
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}
