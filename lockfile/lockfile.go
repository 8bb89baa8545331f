// Package lockfile reads and writes agentform.lock.hcl: what agentform
// resolved for each tool and skill, pinned so that a later plan can tell
// ordinary development (a local source changed) from a remote definition
// that changed under the user (an MCP tool's description, an A2A card).
package lockfile

// FileName is the lockfile's name in the workspace directory.
const FileName = "agentform.lock.hcl"

// Header is the comment every lockfile starts with.
const Header = `# This file is maintained automatically by "agentform". Manual edits may be lost.`

// File is the whole lockfile: one entry per tool block and skill that has
// something to pin, keyed by block name.
type File struct {
	Tools  map[string]*Tool
	Skills map[string]*Skill
}

// Tool is the lock entry of one tool block. Which fields are set depends
// on Kind; the others are empty.
type Tool struct {
	Kind string

	// javascript and python: Source is the golang.org/x/mod/sumdb/dirhash
	// Hash1 ("h1:...") of the package without node_modules, dist and
	// other build output.
	Source string
	// javascript: Deps is the sha256 of the package manager lock file
	// (package-lock.json, pnpm-lock.yaml or yarn.lock), when present;
	// Bundle the sha256 of the esbuild output; Bundler "esbuild X.Y.Z".
	Deps    string
	Bundle  string
	Bundler string
	// python: UVLock is the sha256 of uv.lock, when present.
	UVLock      string
	Interpreter string

	// mcp: the server's self-reported identity, the fields each served
	// tool's digest covers, and the digests by served tool name.
	ServerName    string
	ServerVersion string
	HashedFields  []string
	Served        map[string]string
	// Definitions holds each served tool's canonical JSON (the hashed
	// fields), so that a changed tool can be shown old beside new even on
	// a machine that never saw the old server.
	Definitions map[string]string

	// a2a: the agent card's sha256, name and version, and CardJSON the
	// card itself (the canonical JSON Card digests, with non-ASCII
	// characters escaped), so that a changed card can be shown old beside
	// new even on a machine that never saw the old one.
	Card        string
	CardName    string
	CardVersion string
	CardJSON    string
}

// Skill is the lock entry of a skill with a source directory.
type Skill struct {
	// Source is the dirhash Hash1 of the skill directory.
	Source string
}
