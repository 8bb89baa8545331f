package manifest

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Config is a workspace's whole manifest, merged from every manifest file.
// Slices of named blocks are sorted by name.
type Config struct {
	// Dir is the workspace directory the manifest was loaded from.
	Dir string
	// Files maps each manifest file name (relative to Dir) to its parsed
	// file, for printing diagnostics with source lines.
	Files map[string]*hcl.File
	// Unparsed names the files of Files that did not parse (a syntax
	// error, or nesting too deep): their syntax tree is partial or
	// missing, and only their bytes tell where their credentials are.
	Unparsed map[string]bool

	Locals     map[string]*Local
	Build      *Build
	Runtime    *RuntimeBlock
	Providers  map[string]*Provider
	Agents     []*Agent
	Tools      []*Tool
	Skills     []*Skill
	HTTPServer *HTTPServer
	Network    *Network
	Filesystem *Filesystem
	Checks     []*Check
	Waivers    []*Waiver
	// Blocks are agentc's custom code generation blocks.
	Blocks []*CodegenBlock

	localValues cty.Value
}

// Agent returns the agent with the given name, or nil.
func (c *Config) Agent(name string) *Agent {
	for _, a := range c.Agents {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Tool returns the tool block with the given name, or nil.
func (c *Config) Tool(name string) *Tool {
	for _, t := range c.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Local is one named value of a locals block, evaluated at load time.
type Local struct {
	Name  string
	Range hcl.Range
}

// Build is the build block: how the agent binary is produced.
type Build struct {
	Archetype String
	OS        String
	Arch      String
	DeclRange hcl.Range
}

// RuntimeBlock is the runtime block: defaults for the running agent.
type RuntimeBlock struct {
	DefaultTenantID String
	DeclRange       hcl.Range
}

// Provider is one model provider inside the providers block.
type Provider struct {
	// Name is what agent model blocks refer to: the kind in the providers
	// block form, the label in the provider "label" form.
	Name string
	// Kind is one of ProviderNames.
	Kind string
	// Models, when set, is an allow-list for agent model names.
	Models StringList
	// ModelParams holds per-model inference parameters from
	// { name, params } entries of models.
	ModelParams map[string]Dynamic
	Config      Dynamic
	Params      Dynamic
	DeclRange   hcl.Range
}

// Agent is an agent block.
type Agent struct {
	Name             string
	Version          String
	Description      String
	Prompt           *Prompt
	Capabilities     StringList
	CapabilityPolicy String
	Graph            Graph
	Model            ModelRef
	DeclRange        hcl.Range
}

// Graph is the agent's execution graph.
type Graph struct {
	Type      String
	Model     *ModelPolicy
	DeclRange hcl.Range
}

// ModelPolicy is the graph's model call policy: timeout and retries.
type ModelPolicy struct {
	Timeout   Int
	Retry     *Retry
	DeclRange hcl.Range
}

// Retry is the retry policy for model calls.
type Retry struct {
	MaxAttempts    Int
	InitialBackoff Int
	MaxBackoff     Int
	DeclRange      hcl.Range
}

// ModelRef names the model an agent uses.
type ModelRef struct {
	Provider  String
	Name      String
	DeclRange hcl.Range
}

// PromptKind tells which of the three prompt forms an agent uses.
type PromptKind string

// The prompt forms.
const (
	PromptText     PromptKind = "text"
	PromptMessages PromptKind = "messages"
	PromptLangfuse PromptKind = "langfuse"
)

// Prompt is an agent's prompt: a string, a list of messages, or a Langfuse
// source object.
type Prompt struct {
	Kind     PromptKind
	Text     string
	Messages []PromptMessage
	Langfuse *LangfusePrompt
	Range    hcl.Range
}

// PromptMessage is one {role, content} entry of a multi-turn prompt.
type PromptMessage struct {
	Role    string
	Content string
}

// LangfusePrompt fetches the prompt from Langfuse when the agent starts.
type LangfusePrompt struct {
	PromptName          String
	PublicKey           String
	SecretKey           String
	BaseURL             String
	Label               String
	Version             Int
	CacheTTLSeconds     Int
	FetchTimeoutSeconds Int
	MaxRetries          Int
}

// Tool kinds.
const (
	KindJavaScript = "javascript"
	KindPython     = "python"
	KindBash       = "bash"
	KindMCP        = "mcp"
	KindA2A        = "a2a"
)

// ToolKinds lists every tool kind in a stable order.
var ToolKinds = []string{KindA2A, KindBash, KindJavaScript, KindMCP, KindPython}

// KindWithArticle is a tool kind with its indefinite article, as the kind
// is read aloud: "a bash", "an mcp", "an a2a".
func KindWithArticle(kind string) string {
	if kind == KindMCP || kind == KindA2A {
		return "an " + kind
	}
	return "a " + kind
}

// Tool is a tool block. Exactly one of the kind-specific fields is set,
// matching Kind.
type Tool struct {
	Name         string
	Kind         string
	Description  String
	Capabilities StringList
	Enabled      Bool
	Config       Dynamic

	JavaScript *JavaScriptTool
	Python     *PythonTool
	Bash       *BashTool
	MCP        *MCPTool
	A2A        *A2ATool

	KindRange hcl.Range
	DeclRange hcl.Range
}

// JavaScriptTool holds the fields of a javascript tool.
type JavaScriptTool struct {
	// Source is the package directory (with package.json), relative to the
	// workspace.
	Source String
	// Export is the exported tool object's name; the block name by default.
	Export String
}

// PythonTool holds the fields of a python tool.
type PythonTool struct {
	Source      String
	Export      String
	Interpreter String // "embedded" (default) or "static"
}

// BashTool holds the fields of a bash tool.
type BashTool struct {
	Commands StringList
	// Cwd and Shared are agentc's current tool-level fields; FS and Network
	// are its earlier nested blocks, still accepted.
	Cwd     String
	Shared  Bool
	FS      *BashFS
	Env     *BashEnv
	Limits  *BashLimits
	Network *BashNetwork
}

// BashFS is the bash tool's filesystem.
type BashFS struct {
	Kind      String // in_memory (default), overlay, read_write
	Path      String
	Cwd       String
	DeclRange hcl.Range
}

// BashEnv is the bash tool's environment policy.
type BashEnv struct {
	Kind      String // empty (default), inherit, allow, deny
	Vars      StringList
	DeclRange hcl.Range
}

// BashLimits bounds a bash tool's execution.
type BashLimits struct {
	MaxExecutionTimeSecs Int
	MaxOutputSize        Int
	MaxCommandCount      Int
	MaxLoopIterations    Int
	DeclRange            hcl.Range
}

// BashNetwork is the bash tool's network policy.
type BashNetwork struct {
	Enabled            Bool
	AllowedURLPrefixes StringList
	AllowedMethods     StringList
	MaxRedirects       Int
	MaxResponseSize    Int
	NetworkTimeoutSecs Int
	DeclRange          hcl.Range
}

// MCP transports.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// MCPTool holds the fields of an mcp tool.
type MCPTool struct {
	Transport String
	// stdio
	Command String
	Args    StringList
	// http
	URL       String
	AuthToken String
	Headers   Dynamic
	// Expose, when set, is the allow-list of served tool names (agentform
	// extension).
	Expose StringList
	// ToolCapabilities adds requirements per served tool (agentform
	// extension), keyed by served tool name.
	ToolCapabilities map[string]StringList
}

// A2ATool holds the fields of an a2a tool.
type A2ATool struct {
	URL                        String
	AuthToken                  String
	Headers                    Dynamic
	Tenant                     *A2ATenant
	TimeoutSecs                Int
	DefaultAcceptedOutputModes StringList
	// TargetAgent names the workspace agent behind URL (agentform
	// extension).
	TargetAgent String
}

// A2ATenant is the tenant policy of an a2a tool.
type A2ATenant struct {
	Policy String // inherit (default), fixed, none
	ID     String
	Range  hcl.Range
}

// Skill is a skill block: either a source directory with SKILL.md or an
// inline skill.
type Skill struct {
	Name        string
	Source      String
	Description String
	Content     String
	// Resources maps a resource path to its text, for inline skills.
	Resources map[string]string
	DeclRange hcl.Range
}

// Inline reports whether the skill is written inline rather than read from
// a source directory.
func (s *Skill) Inline() bool { return !s.Source.Set }

// HTTPServer is the http_server block.
type HTTPServer struct {
	Host           String
	Port           Int
	MaxRequestSize Int
	// AGUI and A2A are set when the protocol is enabled.
	AGUI      *Protocol
	A2A       *Protocol
	DeclRange hcl.Range
}

// Protocol is one protocol served by the http_server.
type Protocol struct {
	Path      String
	DeclRange hcl.Range
}

// Check is a check block (agentform extension): assertions evaluated by the
// planner over the capability matrix.
type Check struct {
	Name      string
	Asserts   []*Assert
	DeclRange hcl.Range
}

// Assert is one assert block of a check.
type Assert struct {
	// Condition is evaluated by the planner with can_call, holds and
	// reachable.
	Condition    hcl.Expression
	ErrorMessage hcl.Expression
	DeclRange    hcl.Range
}

// Waiver is a waiver block (agentform extension): an accepted audit
// finding.
type Waiver struct {
	RuleID    string
	Target    String
	Reason    String
	Expires   String // YYYY-MM-DD, optional
	DeclRange hcl.Range
}

// CodegenBlock is agentc's block "name" { ... }: custom code generation
// templates. agentform records it and checks its shape; the templates
// themselves are agentc's business.
type CodegenBlock struct {
	Name         string
	Description  String
	Generates    map[string]string
	Contributes  map[string]string
	Dependencies map[string]string
	DeclRange    hcl.Range
}
