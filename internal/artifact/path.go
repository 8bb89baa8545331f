package artifact

import (
	"strings"

	"github.com/agentform/agentform/internal/pathfold"
)

// MaxPathLength is the longest entry path, in bytes, Build writes and Read
// accepts.
const MaxPathLength = pathfold.MaxPathLength

// SumsName is the name of the checksum entry Build adds to every artifact.
const SumsName = "SHA256SUMS"

// AgentName is the name of the resolved agent's entry.
const AgentName = "agent.json"

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
