// Package resolve does the real work behind a plan for each tool kind:
// bundling javascript, reading python packages, looking up bash commands,
// listing MCP servers' tools, fetching A2A agent cards, and reading skills.
// Each kind has one resolver behind the Resolver function type; Run
// resolves a workspace's tools in parallel with a cache.
package resolve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/lockfile"
)

// DefaultTimeout bounds each remote operation (an MCP session, an A2A card
// fetch) and each embedded evaluation.
const DefaultTimeout = 10 * time.Second

// DefaultTimeoutName is how a diagnostic's advice names the setting of
// the timeout when Options.TimeoutName is empty: the CLI's flag.
const DefaultTimeoutName = "-resolve-timeout"

// CheckTimeout returns an error, to follow the setting's name ("must be
// positive"), when d cannot be a timeout for resolution: Options.Timeout
// takes 0 for DefaultTimeout, so a setting that means "no time" must be
// refused where it is read, by the CLI's -resolve-timeout and the
// provider's resolve_timeout alike.
func CheckTimeout(d time.Duration) error {
	if d <= 0 {
		return errors.New("must be positive")
	}
	return nil
}

// Request is what a kind resolver gets for one tool block.
type Request struct {
	Config *manifest.Config
	Tool   *manifest.Tool
	// Dir is the absolute workspace directory; Root the project root (the
	// nearest ancestor with .git, else Dir). Sources must stay inside Root.
	Dir  string
	Root string
	// Env reads a runtime() value's environment variable, for discovery
	// only (reaching a server). What it returns must never be written
	// anywhere: not in results, diagnostics, the cache or the lockfile.
	Env func(name string) (string, bool)
	// Timeout bounds each remote operation.
	Timeout time.Duration
	// TimeoutName names the setting of Timeout in advice
	// (Options.TimeoutName).
	TimeoutName string
	// Locked is this block's current lock entry, or nil.
	Locked *lockfile.Tool
	// Refresh is false under -refresh=false: no remote contact; remote
	// kinds answer from Locked.
	Refresh bool
	// LockReadonly is set under -lockfile=readonly (Options.LockReadonly).
	LockReadonly bool
	// Cache stores results by input digest; nil disables caching. What a
	// resolver stores reaches the database only when the caller flushes
	// it (Cache.Flush; Run does).
	Cache *Cache

	// dirsReal says Dir and Root have their symbolic links resolved
	// already (Run does), which spares every tool resolving them again.
	dirsReal bool
}

// raiseTimeout is the advice to give remote operations more time, naming
// the setting (TimeoutName): "raise -resolve-timeout".
func (r Request) raiseTimeout() string {
	if r.TimeoutName == "" {
		return "raise " + DefaultTimeoutName
	}
	return "raise " + r.TimeoutName
}

// Resolved is what resolving one tool block produced.
type Resolved struct {
	// Tools are the registered tools, sorted by name.
	Tools []Tool
	// Pin is the lock entry for the block; nil when nothing is pinned
	// (bash).
	Pin *lockfile.Tool
	// Outputs are build products apply packages, by file name relative to
	// tools/<block>/ in the artifact ("bundle.js").
	Outputs map[string][]byte
	// FromLock is set when a remote kind could not be reached (or
	// -refresh=false) and its tools come from the lock entry.
	FromLock bool
	// Unresolved is set when the tools could not be determined at all:
	// the planner shows the block as one unresolved column.
	Unresolved bool
	// Unpinned is set for a remote block (mcp, a2a) that the lockfile has
	// no entry for and that a run reaching it would pin, its address
	// being known: the lockfile is out of date (an error under
	// -lockfile=readonly, and for agentform lock).
	Unpinned bool
	// Unpinnable are the served tools of an mcp block left out because
	// the lockfile cannot hold their names, by the names it would hold
	// them under (MCPLockedWithout).
	Unpinnable []string
	// LockShown is an mcp block's lock entry as drift may show it beside
	// a live answer: text quoting a runtime value the block gives is left
	// out (the entry itself when none does). Nil without a live answer or
	// an entry.
	LockShown *lockfile.Tool `json:"-"`
	// DescriptionUnused is set when no registered tool's description
	// comes from the block's description argument: each has its own (the
	// exported definition's, the python entry's, the server's, the
	// card's). The block's description is then not part of what the
	// model is told, and a change to it changes no agent.
	DescriptionUnused bool
}

// Tool is one registered tool as resolved.
type Tool struct {
	// Name is the registered name ("adder", "github__create_issue",
	// "a2a_planner_send").
	Name string
	// Served is the name the MCP server uses, for mcp tools.
	Served      string
	Description string
	// InputSchema is the JSON Schema of the arguments (javascript
	// parameters, python schema, MCP inputSchema); nil when unknown.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	// Entry is where a python tool is defined in its package; nil for
	// other kinds, or when the package could not be read.
	Entry *Entry
	// Requires lists tags required on top of the block's capabilities
	// (mcp tool_capabilities).
	Requires []string
}

// Resolver resolves one tool block of a kind.
type Resolver func(ctx context.Context, req Request) (*Resolved, hcl.Diagnostics)

// Entry locates a tool in its package: the file (slash-separated, relative
// to the package directory) and the module-level class or function in it.
type Entry struct {
	File string
	Attr string
}

// descriptionNotUsed warns when a tool block writes a description that
// differs from the one the tool gives itself (own), which is what the
// model is told; from names where own came from ("The tool object
// exported by tools/adder"). The two being equal is only redundant.
func descriptionNotUsed(t *manifest.Tool, own, from string) hcl.Diagnostics {
	d := t.Description
	if !d.Set || !d.Known() || d.Value == own {
		return nil
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagWarning,
		Summary:  "Tool description not used",
		Detail: fmt.Sprintf("%s has a description of its own, which is what the model is told. The description of tool %q is not used, and changing it changes no agent. Remove it here, or remove the tool's own description to use this one.",
			from, t.Name),
		Subject: d.Range.Ptr(),
	}}
}
