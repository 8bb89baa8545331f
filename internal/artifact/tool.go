package artifact

// Tool kinds a registered tool can have: a tool block's kind, or
// KindSkills for the built-in skill tools.
const (
	KindJavaScript = "javascript"
	KindPython     = "python"
	KindBash       = "bash"
	KindMCP        = "mcp"
	KindA2A        = "a2a"
	KindSkills     = "skills"
)

// Tool is one registered tool: a name the model sees.
type Tool struct {
	Name string `json:"name"`
	// Block is the address of the tool block that registered it
	// ("tool.adder"), or "skills" for the built-in skill tools.
	Block       string `json:"block"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the tool's arguments; null when it
	// could not be read.
	Parameters JSON `json:"parameters"`
	// Requires lists the capability tags the tool requires.
	Requires []string `json:"requires"`
	// Enabled is false for an enabled = false block (such a tool is listed
	// but is no matrix cell), true otherwise, or the runtime reference of
	// enabled = runtime(...).
	Enabled Bool `json:"enabled"`
	// RuntimeEnabled is true when Enabled is a runtime reference;
	// MarshalAgent derives it.
	RuntimeEnabled bool `json:"runtime_enabled"`
	// File is the tool's code in the archive: "tools/<block>/bundle.js"
	// (javascript), "tools/<block>/src/" (python; a directory, with the
	// trailing slash), "tools/<block>/agent-card.json" (a2a), or "" for
	// kinds with no files (bash, mcp, skills).
	File string `json:"file"`
	// Export is the name under which the bundle exports the tool object
	// (javascript), or the function or class of the package that is the
	// tool (python, found by the rules resolve reads its schema with); the
	// block's export argument, its name by default. Empty for other kinds.
	Export string `json:"export,omitempty"`
	// Entry is where a python tool is in its package, as plan found it
	// when it read the tool's schema: serve imports exactly that. Absent
	// for other kinds, and when the package could not be read.
	Entry *Entry `json:"entry,omitempty"`
	// Config is the block's config value (for mcp over stdio, the server's
	// environment), with runtime references as reference objects; null
	// when unset.
	Config JSON `json:"config,omitempty"`

	// Exactly one of the following is set for its kind; the others are
	// omitted.
	MCP  *MCP  `json:"mcp,omitempty"`
	A2A  *A2A  `json:"a2a,omitempty"`
	Bash *Bash `json:"bash,omitempty"`
}

// MCP is how to reach the MCP server behind an mcp tool, and what was
// pinned of the served tool.
type MCP struct {
	// Transport is "stdio" or "http".
	Transport string `json:"transport"`
	// Command and Args start a stdio server.
	Command *String  `json:"command,omitempty"`
	Args    *Strings `json:"args,omitempty"`
	// URL, AuthToken and Headers reach an http server. Headers is an
	// object of strings and reference objects, or one reference.
	URL       *String `json:"url,omitempty"`
	AuthToken *String `json:"auth_token,omitempty"`
	Headers   JSON    `json:"headers,omitempty"`
	// Served is the tool's name on the server.
	Served string `json:"served"`
	// OutputSchema and Annotations are as the server listed them (and the
	// lock pins them); omitted when absent. The tool's title is not here:
	// the lock does not pin it, so a build from the lock (-refresh=false)
	// could not reproduce it.
	OutputSchema JSON `json:"output_schema,omitempty"`
	Annotations  JSON `json:"annotations,omitempty"`
	// Digest is the locked digest of the served tool's definition
	// ("sha256:<hex>"), the lock entry's tools[Served].
	Digest string `json:"digest"`
}

// A2A operations: the four tools an a2a block registers.
const (
	A2ASend       = "send"
	A2AStream     = "stream"
	A2AGetTask    = "get_task"
	A2ACancelTask = "cancel_task"
)

// A2A is how to reach the remote agent behind an a2a tool.
type A2A struct {
	// Operation is which of the four tools this is: send, stream,
	// get_task or cancel_task.
	Operation string  `json:"operation"`
	URL       String  `json:"url"`
	AuthToken *String `json:"auth_token,omitempty"`
	// Headers is an object of strings and reference objects, or one
	// reference; null when unset.
	Headers                    JSON     `json:"headers,omitempty"`
	Tenant                     *Tenant  `json:"tenant,omitempty"`
	TimeoutSecs                *Int     `json:"timeout_secs,omitempty"`
	DefaultAcceptedOutputModes []string `json:"default_accepted_output_modes,omitempty"`
	// TargetAgent names the workspace agent behind URL, when the manifest
	// says.
	TargetAgent string `json:"target_agent,omitempty"`
	// CardDigest is the sha256 of the agent card in File
	// ("sha256:<hex>"), the lock entry's card.
	CardDigest string `json:"card_digest"`
}

// Tenant is an a2a tool's tenant policy.
type Tenant struct {
	// Policy is inherit, fixed or none.
	Policy string `json:"policy"`
	// ID is the tenant for the fixed policy.
	ID *String `json:"id,omitempty"`
}

// Bash is a bash tool's sandbox, copied from the manifest; unset parts
// are omitted.
type Bash struct {
	// Commands are the only external commands the tool may run.
	Commands []string     `json:"commands"`
	Cwd      string       `json:"cwd,omitempty"`
	Shared   bool         `json:"shared,omitempty"`
	FS       *BashFS      `json:"fs,omitempty"`
	Env      *BashEnv     `json:"env,omitempty"`
	Limits   *BashLimits  `json:"limits,omitempty"`
	Network  *BashNetwork `json:"network,omitempty"`
}

// BashFS is the bash tool's filesystem.
type BashFS struct {
	// Kind is in_memory, overlay or read_write.
	Kind string `json:"kind"`
	Path string `json:"path,omitempty"`
	Cwd  string `json:"cwd,omitempty"`
}

// BashEnv is the bash tool's environment policy.
type BashEnv struct {
	// Kind is empty, inherit, allow or deny.
	Kind string   `json:"kind"`
	Vars []string `json:"vars,omitempty"`
}

// BashLimits bounds a bash tool's execution; nil fields are unset.
type BashLimits struct {
	MaxExecutionTimeSecs *int64 `json:"max_execution_time_secs,omitempty"`
	MaxOutputSize        *int64 `json:"max_output_size,omitempty"`
	MaxCommandCount      *int64 `json:"max_command_count,omitempty"`
	MaxLoopIterations    *int64 `json:"max_loop_iterations,omitempty"`
}

// BashNetwork is the bash tool's network policy; nil fields are unset.
type BashNetwork struct {
	Enabled            bool     `json:"enabled"`
	AllowedURLPrefixes []string `json:"allowed_url_prefixes,omitempty"`
	AllowedMethods     []string `json:"allowed_methods,omitempty"`
	MaxRedirects       *int64   `json:"max_redirects,omitempty"`
	MaxResponseSize    *int64   `json:"max_response_size,omitempty"`
	NetworkTimeoutSecs *int64   `json:"network_timeout_secs,omitempty"`
}

// Block is one tool block behind the registered tools, with what the
// lockfile pins for it.
type Block struct {
	// Name is the block's name: the "adder" of tool "adder" and of the
	// tools' block "tool.adder".
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Lock is the block's lockfile entry; nil (null) when the block pins
	// nothing (bash).
	Lock *Lock `json:"lock"`
}

// Skill is one skill the agent can load.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// AllowedTools is SKILL.md's allowed-tools.
	AllowedTools []string `json:"allowed_tools"`
	// Files lists the skill's archive paths ("skills/<name>/SKILL.md").
	Files []string `json:"files"`
	// Lock is the skill's lockfile entry; nil (null) for an inline skill,
	// which the manifest itself pins.
	Lock *SkillLock `json:"lock"`
}

// Matrix decisions.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// Cell is one cell of the agent's matrix row.
type Cell struct {
	Tool string `json:"tool"`
	// Decision is allow or deny.
	Decision string `json:"decision"`
	// Missing lists the required tags no held tag satisfies; empty for
	// allow.
	Missing []string `json:"missing"`
}

// Entry locates a python tool in its package.
type Entry struct {
	// File is the module's file, relative to the package directory
	// (tools/<block>/src/), slash-separated.
	File string `json:"file"`
	// Attr is the module-level class or function in File that is the
	// tool.
	Attr string `json:"attr"`
}
