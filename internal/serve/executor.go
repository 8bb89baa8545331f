package serve

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentform/agentform/internal/artifact"
)

// Host is what an executor gets from the server that runs it: the verified
// artifact, the environment runtime references resolve from, and where to
// report. A Host is shared by all executors and safe for concurrent use.
type Host struct {
	// Agent is the artifact's agent.json.
	Agent *artifact.Agent
	// Files holds every entry of the artifact by path (never extracted
	// unless an executor needs files on disk, e.g. a subprocess).
	Files map[string][]byte
	// Env resolves runtime references (runtime() and secret() values).
	Env *Env
	// Dir is the workspace directory (serve's -chdir, or the directory it
	// runs in), absolute: relative paths of the manifest (a bash tool's
	// fs path and commands) are taken from there, as plan takes them from
	// the workspace.
	Dir string
	// Logf writes one operator log line (standard error of serve). Never
	// pass it a secret, a runtime value or raw arguments.
	Logf func(format string, args ...any)
	// Withdraw removes a registered tool from the served set at once
	// (tools/list no longer shows it and calls to it are refused), with
	// the reason logged and sent to clients. An mcp executor calls it for
	// an upstream tool whose definition no longer matches the lock.
	Withdraw func(tool, reason string)

	// commands are the programs the agent's tools run, with the tool
	// that lists each (agentCommands); looked up once.
	commandsOnce  sync.Once
	commands      *commandSet
	commandOwners map[string]string
}

// Call is one call of one registered tool, after the server has checked
// that the agent may call it and that the arguments match its schema.
type Call struct {
	// Tool is the registered tool from agent.json.
	Tool *artifact.Tool
	// Args are the call's arguments (a JSON object).
	Args json.RawMessage
	// State is the session state before the call, a JSON object
	// {"context": {...}, "messages": [...]}; tools read it and may return
	// a state update.
	State json.RawMessage
	// Config is the tool's config with runtime references resolved; null
	// when the block has none.
	Config json.RawMessage
	// Session is the session id.
	Session string
	// Event forwards an activity event (stateless, never persisted) to
	// the client as an MCP notification. Never nil.
	Event func(kind string, data any)
	// Progress reports progress (a2a stream, long runs) as MCP progress
	// notifications when the client asked for them. Never nil.
	Progress func(progress, total float64, message string)
}

// Result is what a tool returned.
type Result struct {
	// Output is the tool's output: a JSON value (a string for text).
	Output json.RawMessage
	// StateUpdate is the RFC 6902 JSON Patch the tool returned
	// (state_update), or nil. The server applies it only when every path
	// is under /context/.
	StateUpdate json.RawMessage
	// Status is "success" (also when empty), "partial_success" or
	// "error" (the tool ran and reported a failure; Output says why).
	Status string
	// Reason is agentform's own account of an error status, recorded as
	// the call's error: a command the sandbox refused, the exit status, a
	// JSON-RPC error's code. Never text the tool, an upstream server or a
	// remote agent wrote (Output carries that), which can quote the
	// call's arguments. "" records "the tool reported an error".
	Reason string
}

// toolError is an executor's error whose text quotes what the tool, its
// upstream server or its remote agent wrote: a thrown exception's
// message, a JSON-RPC error's message. The client is shown all of it; the
// call record keeps only reason, agentform's own words, as the quoted
// text can repeat the call's arguments.
type toolError struct {
	reason, text string
}

func (e *toolError) Error() string { return e.text }

// jsonRPCCodes name the error codes JSON-RPC 2.0 reserves.
var jsonRPCCodes = map[int]string{
	-32700: "parse error",
	-32600: "invalid request",
	-32601: "method not found",
	-32602: "invalid params",
	-32603: "internal error",
}

// rpcCode is " (name)" of a JSON-RPC error code from names, or from the
// codes JSON-RPC reserves; "" for another code. Only the code, a number
// the remote chose from its protocol's list, is agentform's to record.
func rpcCode(code int, names map[int]string) string {
	name, ok := names[code]
	if !ok {
		name, ok = jsonRPCCodes[code]
	}
	if !ok {
		return ""
	}
	return " (" + name + ")"
}

// Status values of a call record.
const (
	StatusSuccess        = "success"
	StatusPartialSuccess = "partial_success"
	StatusError          = "error"
	StatusBlocked        = "blocked"
	StatusSkipped        = "skipped"
)

// Executor runs the registered tools of one tool block (or the skills
// tools). Call returns an error when the tool could not run at all (a
// refused command, a timeout, an unreachable upstream); the error text is
// shown to the client and recorded, so it must not contain secrets.
type Executor interface {
	Call(ctx context.Context, call *Call) (*Result, error)
	// Close releases what the executor holds (subprocesses, connections,
	// temporary directories).
	Close() error
}

// Factory starts the executor of one block. tools are the block's
// registered tools that the agent may call (never empty); block is the
// block's name (its lock entry is in h.Agent.Blocks). A factory may check
// things at startup (an mcp executor connects upstream and compares the
// served tools with the locked digests) and fails startup only when the
// block cannot serve at all.
type Factory func(ctx context.Context, h *Host, block string, tools []*artifact.Tool) (Executor, error)

// factories maps a tool kind to its executor factory; each kind's file
// registers itself in an init function.
var factories = map[string]Factory{}

// register adds the factory of a kind.
func register(kind string, f Factory) { factories[kind] = f }
