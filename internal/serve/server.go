// Package serve runs an artifact as a capability-enforcing MCP server
// (agentform serve) and runs single calls (agentform invoke): DESIGN §14.
//
// A Server is opened from a verified artifact. It resolves the runtime
// references the artifact needs from the environment, computes the tags
// the agent holds (with an override only for extensible agents), and
// exposes exactly the registered tools those tags allow. Every call is
// checked again (capabilities, withdrawn tools, the argument schema), run
// by the executor of the tool's kind, its state update applied only under
// /context/, and recorded in .agentform/runtime.db.
package serve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/unicode/norm"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/mcpwire"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/secretparts"
)

// Options configure a Server.
type Options struct {
	// Dir is the workspace directory: the runtime database is
	// Dir/.agentform/runtime.db.
	Dir string
	// Lookup reads environment variables for runtime references
	// (os.LookupEnv); nil reads none.
	Lookup func(string) (string, bool)
	// Override is the -capability-override value ("", "inherit",
	// "extend:a,b" or "replace:a,b"), honoured only for extensible agents.
	Override string
	// Logf writes operator log lines (serve's standard error).
	Logf func(format string, args ...any)
	// OnCall starts each block's executor at the first call of one of its
	// tools, not at Open: for invoke, which makes one call, so that it
	// neither needs nor starts (spawns, connects to) the upstream servers
	// of the agent's other tools.
	OnCall bool
	// Only, when set, is the one tool this server will be asked to call
	// (invoke): the runtime references of the other blocks' tools need
	// not be set, and those tools are listed without being prepared, so
	// that a call of one is refused as any unknown call would be.
	Only string
}

// Server serves one artifact.
type Server struct {
	opts   Options
	agent  *artifact.Agent
	host   *Host
	db     *RuntimeDB
	policy capability.Policy
	// held are the tags the agent holds, with the command-line override
	// (override, as recorded); baseHeld without any override.
	held, baseHeld []string
	override       string
	// tools are the enabled registered tools by name; names is sorted.
	tools   map[string]*artifact.Tool
	names   []string
	schemas map[string]*resolve.Schema

	// lockedWarning makes the ignored-header warning appear once.
	lockedWarning sync.Once
	// scrubber removes resolved runtime values from error texts.
	scrubber *secretparts.Scrubber
	// logPlain writes a line made only of what the operator gave and the
	// artifact's names (the banner, the listen address), unscrubbed: a
	// runtime value such as "http://127.0.0.1:1" turned the banner's
	// address into "(value of URL)8940/mcp".
	logPlain func(format string, args ...any)

	mu        sync.Mutex
	executors map[string]Executor // by block address
	starting  map[string]*sync.Mutex
	withdrawn map[string]string
	// onWithdraw are told of each withdrawn tool (the MCP servers built
	// so far remove it and notify their clients).
	onWithdraw []func(tool string)
}

// OpenError is a startup failure with every problem listed.
type OpenError struct {
	Artifact string
	Problems []string
}

func (e *OpenError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("%s: %s", e.Artifact, e.Problems[0])
	}
	return fmt.Sprintf("%s:\n  - %s", e.Artifact, strings.Join(e.Problems, "\n  - "))
}

// Open reads and verifies the artifact at path and prepares to serve it:
// runtime references resolved (every missing variable in one error), the
// effective capabilities computed, and the executors of the tools the
// agent may call started (an mcp block connects upstream and checks the
// locked digests now).
func Open(ctx context.Context, path string, opts Options) (*Server, error) {
	data, err := artifact.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the artifact: %w", err)
	}
	return OpenData(ctx, path, data, opts)
}

// OpenData is Open of an artifact already read from path, for a caller
// that checked these very bytes first: reading the file again could serve
// another one.
func OpenData(ctx context.Context, path string, data []byte, opts Options) (*Server, error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	arch, err := artifact.Read(bytes.NewReader(data))
	if err != nil {
		return nil, &OpenError{Artifact: path, Problems: []string{err.Error()}}
	}
	if problems := artifact.Verify(arch, nil); len(problems) > 0 {
		oe := &OpenError{Artifact: path}
		for _, p := range problems {
			oe.Problems = append(oe.Problems, "verify: "+p.String())
		}
		return nil, oe
	}
	agent, err := artifact.ParseAgent(arch.Files[artifact.AgentName])
	if err != nil {
		return nil, &OpenError{Artifact: path, Problems: []string{err.Error()}}
	}
	return open(ctx, agent, arch.Files, opts)
}

// open is Open after the artifact was read and verified.
func open(ctx context.Context, agent *artifact.Agent, files map[string][]byte, opts Options) (*Server, error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	env := NewEnv(opts.Lookup)
	// The references serving needs, in two steps: the capabilities and
	// policy first, because they decide which tools can ever be called;
	// then the network block and those tools. The model's and the
	// prompt's references (an API key, a Langfuse secret) are the agent
	// host's business, not serve's.
	if err := env.Check(refsIn(struct {
		Capabilities     artifact.Strings `json:"capabilities"`
		CapabilityPolicy artifact.String  `json:"capability_policy"`
	}{agent.Capabilities, agent.CapabilityPolicy}, agent.Runtime)); err != nil {
		return nil, err
	}
	s := &Server{
		opts:      opts,
		agent:     agent,
		tools:     map[string]*artifact.Tool{},
		schemas:   map[string]*resolve.Schema{},
		executors: map[string]Executor{},
		starting:  map[string]*sync.Mutex{},
		withdrawn: map[string]string{},
	}
	s.scrubber = newScrubber(env, agent.Runtime)
	s.scrubber.Keep(agentNames(agent)...)
	logf := opts.Logf
	s.logPlain = func(format string, args ...any) { logf("%s", fmt.Sprintf(format, args...)) }
	s.opts.Logf = func(format string, args ...any) { logf("%s", s.scrubber.Text(fmt.Sprintf(format, args...))) }
	dir, err := filepath.Abs(cmp.Or(opts.Dir, "."))
	if err != nil {
		return nil, fmt.Errorf("the workspace directory %s: %w", opts.Dir, err)
	}
	s.host = &Host{Agent: agent, Files: files, Env: env, Dir: dir, Logf: s.opts.Logf, Withdraw: s.withdraw}
	var problems []string
	policy, err := env.String(agent.CapabilityPolicy)
	if err != nil {
		problems = append(problems, "capability_policy: "+err.Error())
	}
	switch policy {
	case "", string(capability.Locked):
		s.policy = capability.Locked
	case string(capability.Extensible):
		s.policy = capability.Extensible
	default:
		if agent.CapabilityPolicy.Runtime != nil {
			problems = append(problems, fmt.Sprintf("capability_policy: the environment variable %s must be \"locked\" or \"extensible\"", agent.CapabilityPolicy.Runtime.Env))
		} else {
			problems = append(problems, fmt.Sprintf("capability_policy is %q: want \"locked\" or \"extensible\"", policy))
		}
	}
	held, err := env.Strings(agent.Capabilities)
	if err != nil {
		problems = append(problems, "capabilities: "+err.Error())
	}
	for i, t := range held {
		// Composed as the manifest's tags are (HCL normalises its strings
		// to NFC), also when read from the environment.
		t = norm.NFC.String(t)
		held[i] = t
		if _, err := capability.ValidateTag(t); err != nil {
			if agent.Capabilities.Runtime != nil {
				problems = append(problems, fmt.Sprintf("capabilities: the environment variable %s holds an invalid capability tag", agent.Capabilities.Runtime.Env))
				break
			}
			// Built by an agentform whose tag rules were looser: the
			// artifact verifies, but its tag does not hold now.
			problems = append(problems, "capabilities: "+err.Error()+"; serve checks the artifact's tags as this version of agentform does: fix the tag in the manifest and run agentform apply")
		}
	}
	s.baseHeld = held
	s.held, s.override, err = s.effective(held, opts.Override)
	if err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return nil, &OpenError{Artifact: agent.Name + ".agent.tgz", Problems: problems}
	}
	// A tool can ever be called when it is not disabled outright and the
	// agent holds its tags, or any tool when a session may extend them.
	var callable []artifact.Tool
	isCallable := map[string]bool{}
	for _, t := range agent.Tools {
		if t.Enabled.Runtime == nil && !t.Enabled.Value {
			continue
		}
		if s.policy == capability.Extensible || len(Missing(s.held, &t)) == 0 {
			callable = append(callable, t)
			isCallable[t.Name] = true
		}
	}
	// With Only, the tools of the called tool's block (which one
	// executor serves) are the ones prepared and whose references must
	// be set.
	onlyBlock := ""
	if opts.Only != "" {
		for _, t := range agent.Tools {
			if t.Name == opts.Only {
				onlyBlock = t.Block
			}
		}
		callable = slices.DeleteFunc(callable, func(t artifact.Tool) bool { return t.Block != onlyBlock })
	}
	if err := env.Check(refsIn(struct {
		Network *artifact.Network `json:"network"`
		Tools   []artifact.Tool   `json:"tools"`
	}{agent.Network, callable}, agent.Runtime)); err != nil {
		return nil, err
	}
	for i := range agent.Tools {
		t := &agent.Tools[i]
		if opts.Only != "" && t.Block != onlyBlock {
			// Listed, for the names a mistyped call is offered; never
			// prepared or called.
			if t.Enabled.Runtime != nil || t.Enabled.Value {
				s.tools[t.Name] = t
				s.names = append(s.names, t.Name)
			}
			continue
		}
		if !isCallable[t.Name] {
			// Listed so that a call of it is refused with the tags it
			// lacks, never run.
			if t.Enabled.Runtime != nil || t.Enabled.Value {
				s.tools[t.Name] = t
				s.names = append(s.names, t.Name)
			}
			continue
		}
		enabled, err := env.Bool(t.Enabled)
		if err != nil {
			problems = append(problems, fmt.Sprintf("tool %s: enabled: %s", t.Name, err))
			continue
		}
		if !enabled {
			continue
		}
		sch, err := compileSchema(t.Parameters)
		if err != nil {
			problems = append(problems, fmt.Sprintf("tool %s: its parameters are not a usable JSON Schema: %s", t.Name, err))
			continue
		}
		s.tools[t.Name] = t
		s.names = append(s.names, t.Name)
		s.schemas[t.Name] = sch
	}
	sort.Strings(s.names)
	if len(problems) > 0 {
		return nil, &OpenError{Artifact: agent.Name + ".agent.tgz", Problems: problems}
	}
	db, err := OpenRuntimeDB(opts.Dir)
	if err != nil {
		return nil, err
	}
	// A server records every call: a directory it cannot create fails it
	// now, not at the first call.
	if err := os.MkdirAll(filepath.Dir(db.path), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(db.path), err)
	}
	s.db = db
	// An mcp block whose tools were never listed (the plan could not
	// reach its server and had no lock entry for it, and showed it as one
	// unresolved tool) has nothing checked to serve: it is withdrawn now,
	// without reaching the server.
	for _, name := range s.names {
		if t := s.tools[name]; t.Kind == artifact.KindMCP && t.MCP != nil && t.MCP.Served == "" && t.MCP.Digest == "" {
			s.withdraw(name, fmt.Sprintf("the tools of the MCP server of block %q were never listed: the plan this artifact was built from could not reach the server and found no lock entry for it (it showed the block unresolved); run agentform lock where the server can be reached, then apply again", strings.TrimPrefix(t.Block, "tool.")))
		}
	}
	// Start the executors of every block the agent may call now (an mcp
	// block checks its upstream against the lock). A session of an
	// extensible agent may reach any enabled tool with an override, so
	// all of them start.
	start := s.Allowed(s.held)
	if opts.OnCall {
		start = nil
	} else if s.policy == capability.Extensible {
		start = nil
		for _, name := range s.names {
			if _, gone := s.withdrawn[name]; !gone {
				start = append(start, s.tools[name])
			}
		}
	}
	for _, block := range s.blocksOf(start) {
		if _, err := s.executor(ctx, block); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// refsIn returns the runtime references inside v (marshalled as in
// agent.json), each once; their defaults and secrecy come from the agent's
// runtime list, which all is when v cannot be walked.
func refsIn(v any, all []artifact.RuntimeRef) []artifact.RuntimeRef {
	b, err := json.Marshal(v)
	if err != nil {
		return all
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return all
	}
	used := map[string]*artifact.RuntimeRef{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := asRef(x); ok {
				used[ref.Env] = ref
				return
			}
			for _, val := range x {
				walk(val)
			}
		case []any:
			for _, val := range x {
				walk(val)
			}
		}
	}
	walk(tree)
	var refs []artifact.RuntimeRef
	for _, r := range all {
		if used[r.Env] != nil {
			refs = append(refs, r)
			delete(used, r.Env)
		}
	}
	// A reference missing from the runtime list is checked as written.
	for _, name := range slices.Sorted(maps.Keys(used)) {
		refs = append(refs, *used[name])
	}
	return refs
}

// effective returns the tags held with an override applied, and the
// override as recorded (Grant.Override): refused (error) when malformed,
// ignored with a log line unless the agent is extensible.
func (s *Server) effective(held []string, override string) ([]string, string, error) {
	if override == "" {
		tags, _ := capability.Effective(held, s.policy, nil)
		return tags, "", nil
	}
	o, err := capability.ParseOverride(override)
	if err != nil {
		return nil, "", err
	}
	tags, warning := capability.Effective(held, s.policy, &o)
	if warning != "" {
		s.opts.Logf("Warning: %s", warning)
	}
	if warning == "" {
		// Applied (not ignored): say what a "*" in it grants.
		for _, t := range o.Capabilities {
			if w, _ := capability.ValidateTag(t); w != "" {
				s.opts.Logf("Warning: -capability-override: %s", w)
			}
		}
	}
	return tags, s.applied(o), nil
}

// applied is an override as recorded: "extend:a,b" or "replace:a,b" with
// its tags sorted, or "" when it changes nothing (inherit) or is ignored
// (the agent is not extensible).
func (s *Server) applied(o capability.Override) string {
	if s.policy != capability.Extensible || o.Strategy != capability.Extend && o.Strategy != capability.Replace {
		return ""
	}
	tags := slices.Compact(slices.Sorted(slices.Values(o.Capabilities)))
	return capability.Override{Strategy: o.Strategy, Capabilities: tags}.String()
}

// Grant is what a session may call.
type Grant struct {
	// Held are the tags the session holds, sorted.
	Held []string
	// Override is the capability override that changed them, as
	// "extend:a,b" or "replace:a,b" with the tags sorted; "" when the
	// agent's own tags apply (no override, inherit, or one ignored for a
	// locked agent). Each call records it.
	Override string
}

// Agent returns the served agent.
func (s *Server) Agent() *artifact.Agent { return s.agent }

// Held returns the tags the agent holds with the command-line override.
func (s *Server) Held() []string { return slices.Clone(s.held) }

// Grant returns the server's grant: the agent's tags with the
// command-line override.
func (s *Server) Grant() Grant { return Grant{Held: s.Held(), Override: s.override} }

// Policy returns the agent's capability policy.
func (s *Server) Policy() capability.Policy { return s.policy }

// GrantFor returns the grant of a session that asked for override (the
// HTTP header); "" and "inherit" mean the server's grant. The header is
// honoured only for extensible agents (otherwise it is ignored, with one
// warning), and it is refused when the operator fixed the capabilities
// with -capability-override: a client may not undo the operator's choice.
func (s *Server) GrantFor(override string) (Grant, error) {
	if override == "" {
		return s.Grant(), nil
	}
	o, err := capability.ParseOverride(override)
	if err != nil {
		return Grant{}, err
	}
	if s.policy != capability.Extensible {
		s.lockedWarning.Do(func() {
			s.opts.Logf("Warning: a client sent %s, ignored: agent %q has capability_policy %q", OverrideHeader, s.agent.Name, s.policy)
		})
		return s.Grant(), nil
	}
	if o.Strategy == capability.Inherit {
		// The server's set, -capability-override included: inherit
		// gave the agent's own tags, undoing an operator's replace.
		return s.Grant(), nil
	}
	if s.opts.Override != "" {
		return Grant{}, fmt.Errorf("this server's capabilities were set with -capability-override; a client may not change them")
	}
	tags, _ := capability.Effective(s.baseHeld, s.policy, &o)
	return Grant{Held: tags, Override: s.applied(o)}, nil
}

// Missing returns the tags of tool that held does not satisfy.
func Missing(held []string, tool *artifact.Tool) []string {
	var missing []string
	for _, req := range tool.Requires {
		if !slices.ContainsFunc(held, func(h string) bool { return capability.Satisfies(h, req) }) {
			missing = append(missing, req)
		}
	}
	return missing
}

// Allowed returns the enabled, not withdrawn tools that held allows,
// sorted by name.
func (s *Server) Allowed(held []string) []*artifact.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*artifact.Tool
	for _, name := range s.names {
		t := s.tools[name]
		if _, gone := s.withdrawn[name]; gone {
			continue
		}
		if len(Missing(held, t)) == 0 {
			out = append(out, t)
		}
	}
	return out
}

// blockKey is the executor key of a tool: its block, or "skills".
func blockKey(t *artifact.Tool) string {
	if t.Kind == artifact.KindSkills {
		return "skills"
	}
	return t.Block
}

// blocksOf returns the distinct executor keys of tools, sorted.
func (s *Server) blocksOf(tools []*artifact.Tool) []string {
	var keys []string
	for _, t := range tools {
		keys = append(keys, blockKey(t))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// executor returns the started executor of a block, starting it first.
func (s *Server) executor(ctx context.Context, key string) (Executor, error) {
	s.mu.Lock()
	if ex, ok := s.executors[key]; ok {
		s.mu.Unlock()
		return ex, nil
	}
	start, ok := s.starting[key]
	if !ok {
		start = &sync.Mutex{}
		s.starting[key] = start
	}
	s.mu.Unlock()
	start.Lock()
	defer start.Unlock()
	s.mu.Lock()
	if ex, ok := s.executors[key]; ok {
		s.mu.Unlock()
		return ex, nil
	}
	s.mu.Unlock()

	var tools []*artifact.Tool
	kind := ""
	for _, name := range s.names {
		if t := s.tools[name]; blockKey(t) == key {
			tools = append(tools, t)
			kind = t.Kind
		}
	}
	if len(tools) == 0 {
		return nil, fmt.Errorf("no tools of %s", key)
	}
	factory, ok := factories[kind]
	if !ok {
		return nil, fmt.Errorf("%s: agentform serve cannot run tools of kind %q", key, kind)
	}
	block := strings.TrimPrefix(key, "tool.")
	ex, err := factory(ctx, s.host, block, tools)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", key, err)
	}
	s.mu.Lock()
	s.executors[key] = ex
	s.mu.Unlock()
	return ex, nil
}

// withdraw removes a tool from service (Host.Withdraw).
func (s *Server) withdraw(tool, reason string) {
	s.mu.Lock()
	if _, done := s.withdrawn[tool]; done {
		s.mu.Unlock()
		return
	}
	s.withdrawn[tool] = reason
	hooks := slices.Clone(s.onWithdraw)
	s.mu.Unlock()
	s.opts.Logf("Warning: tool %s withdrawn: %s", tool, reason)
	for _, h := range hooks {
		h(tool)
	}
}

// Withdrawn returns the withdrawn tools and why.
func (s *Server) Withdrawn() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.withdrawn))
	for k, v := range s.withdrawn {
		out[k] = v
	}
	return out
}

// Close stops every executor.
func (s *Server) Close() error {
	s.mu.Lock()
	executors := s.executors
	s.executors = map[string]Executor{}
	s.mu.Unlock()
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(executors)) {
		if err := executors[key].Close(); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

// Request is one call to run.
type Request struct {
	Tool    string
	Args    json.RawMessage
	Session string
	// Via is "stdio", "http" or "invoke" (recorded).
	Via string
	// Held are the tags held in the call's session.
	Held []string
	// Override is the capability override that gave them (Grant.Override),
	// recorded.
	Override string
	// Event and Progress forward notifications; nil drops them.
	Event    func(kind string, data any)
	Progress func(progress, total float64, message string)
}

// Response is the outcome of a call.
type Response struct {
	// Output is the tool's output (JSON); null when it did not run.
	Output json.RawMessage
	// Status is the recorded status.
	Status string
	// Error says why the call failed or was refused.
	Error string
	// State is the session state after the call.
	State json.RawMessage
	// Record is the call record as stored.
	Record Record
}

// Call runs one call with every check, and records it.
func (s *Server) Call(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	if req.Session == "" {
		req.Session = "default"
	}
	if err := CheckSessionID(req.Session); err != nil {
		return nil, err
	}
	rec := &Record{
		Time: start.UTC(), Agent: s.agent.Name, Tool: req.Tool, Session: req.Session, Via: req.Via, CapabilityOverride: req.Override,
		ArgsDigest: argsDigest(req.Args),
	}
	resp := &Response{Output: json.RawMessage("null")}
	// shown, when set, is the error the client is shown in place of the
	// recorded one: it quotes the tool (toolError).
	shown := ""
	// base is the session's state as the call read it, once read.
	var base json.RawMessage
	finish := func(update func(json.RawMessage) (json.RawMessage, error)) (*Response, error) {
		rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		if rec.Status == "" {
			rec.Status = StatusSuccess
		}
		state, err := s.db.Commit(rec, base, update)
		if err != nil {
			return nil, fmt.Errorf("recording the call: %w", err)
		}
		resp.Status, resp.Error, resp.State, resp.Record = rec.Status, rec.Error, state, *rec
		if shown != "" {
			resp.Error = shown
		}
		return resp, nil
	}
	refuse := func(status, format string, args ...any) (*Response, error) {
		rec.Status, rec.Error = status, s.scrubber.Text(fmt.Sprintf(format, args...))
		return finish(nil)
	}

	tool, ok := s.tools[req.Tool]
	if !ok {
		// Any name a client sends: quoted cut, as Commit records it.
		// Suggested among the tools the caller may call only: the others
		// are not the caller's to know of.
		var callable []string
		for _, t := range s.Allowed(req.Held) {
			callable = append(callable, t.Name)
		}
		name, hint := cutText(req.Tool, maxRecordedTool), ""
		if m := manifest.Suggest(name, callable); m != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", m)
		}
		return refuse(StatusBlocked, "agent %q has no enabled tool %q%s", s.agent.Name, name, hint)
	}
	if reason, gone := s.Withdrawn()[req.Tool]; gone {
		return refuse(StatusBlocked, "tool %q was withdrawn: %s", req.Tool, reason)
	}
	if missing := Missing(req.Held, tool); len(missing) > 0 {
		return refuse(StatusBlocked, "agent %q may not call %q: missing capabilities %s", s.agent.Name, req.Tool, strings.Join(missing, ", "))
	}
	args := req.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := validateArgs(s.schemas[req.Tool], args); err != nil {
		return refuse(StatusSkipped, "the arguments do not match the schema of %q: %s", req.Tool, err)
	}
	ex, err := s.executor(ctx, blockKey(tool))
	if err != nil {
		return refuse(StatusError, "%s", err)
	}
	if reason, gone := s.Withdrawn()[req.Tool]; gone {
		// Withdrawn as its executor started (an mcp tool that changed
		// since it was locked, checked at the first call with OnCall).
		return refuse(StatusBlocked, "tool %q was withdrawn: %s", req.Tool, reason)
	}
	state, err := s.db.State(req.Session)
	if err != nil {
		return nil, err
	}
	base = state
	config, err := s.host.Env.Resolve(json.RawMessage(tool.Config))
	if err != nil {
		return refuse(StatusError, "resolving the config of %q: %s", req.Tool, err)
	}
	call := &Call{
		Tool: tool, Args: args, State: state, Config: config, Session: req.Session,
		Event: func(string, any) {}, Progress: req.Progress,
	}
	if forward := req.Event; forward != nil {
		call.Event = func(kind string, data any) {
			if kind == "console" && !s.scrubber.Empty() {
				// A tool's console is its log, printed by invoke and
				// sent to clients: no runtime value leaves in it, as in
				// its errors.
				data = scrubData(s.scrubber, data)
			}
			forward(kind, data)
		}
	}
	if call.Progress == nil {
		call.Progress = func(float64, float64, string) {}
	}
	// A javascript tool bounds itself, at jsCallTimeout and with a message
	// saying so; a deadline set here would stretch that to this one.
	if _, ok := ctx.Deadline(); !ok && tool.Kind != artifact.KindJavaScript {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCallTimeout)
		defer cancel()
	}
	res, err := s.runBounded(ctx, ex, call)
	var quoted *toolError
	if errors.As(err, &quoted) {
		shown = s.scrubber.Text(quoted.text)
		return refuse(StatusError, "%s", quoted.reason)
	}
	if err != nil {
		return refuse(StatusError, "%s", err)
	}
	resp.Output = res.Output
	if len(bytes.TrimSpace(resp.Output)) == 0 {
		resp.Output = json.RawMessage("null")
	}
	switch res.Status {
	case "", StatusSuccess:
		rec.Status = StatusSuccess
	case StatusPartialSuccess, StatusError:
		rec.Status = res.Status
	default:
		rec.Status = StatusError
		rec.Error = fmt.Sprintf("the tool returned the unknown status %q", res.Status)
	}
	if rec.Status == StatusError && rec.Error == "" {
		rec.Error = res.Reason
	}
	if rec.Status == StatusError && rec.Error == "" {
		rec.Error = "the tool reported an error"
	}
	rec.Error = s.scrubber.Text(rec.Error)
	if rec.Status != StatusSuccess {
		// A failed tool's output often quotes what it was given (an
		// exception with a URL): no runtime value leaves in it.
		resp.Output = s.scrubber.JSON(resp.Output)
	}
	if len(bytes.TrimSpace(res.StateUpdate)) == 0 || string(bytes.TrimSpace(res.StateUpdate)) == "null" {
		return finish(nil)
	}
	patch, err := contextPatch(res.StateUpdate)
	if err != nil {
		rec.Status, rec.Error = StatusError, "state update rejected: "+err.Error()
		return finish(nil)
	}
	return finish(func(state json.RawMessage) (json.RawMessage, error) {
		next, err := patch.Apply(state)
		if err != nil {
			return nil, fmt.Errorf("state update rejected: %w", err)
		}
		return next, nil
	})
}

// argsDigest is "sha256:" and the hex digest of the canonical JSON of a
// call's arguments (mcpwire.CanonicalJSON: object keys sorted, no
// insignificant whitespace, strings re-escaped, numbers as sent), so that
// the same arguments sent with other spacing or key order give the same
// digest. No arguments are {}; arguments that are not JSON are digested
// as received.
func argsDigest(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if v, err := mcpwire.DecodeJSON(args); err == nil {
		if canonical, err := mcpwire.CanonicalJSON(v); err == nil {
			args = canonical
		}
	}
	return resolve.SHA256(args)
}

// DefaultCallTimeout bounds a call whose context has no deadline (an MCP
// client's call); a javascript tool stops at 30 s on its own.
const DefaultCallTimeout = 5 * time.Minute

// callStopGrace bounds how long a call waits for its executor once the
// call's deadline has passed (a javascript tool's own 30 s limit when the
// call has none) or its context was cancelled (SIGINT, a client's
// cancellation): an executor that ignores cancellation does not hold the
// call, nor serve's shutdown or invoke, past it. A variable for tests.
var callStopGrace = 5 * time.Second

// runBounded runs the call in the executor and returns its outcome, or,
// when the executor has not returned callStopGrace after the call's
// deadline or cancellation, an error saying so: the call is given up, and
// the executor is left to end in the background (its result, events and
// progress dropped).
func (s *Server) runBounded(ctx context.Context, ex Executor, call *Call) (*Result, error) {
	var givenUp atomic.Bool
	event, progress := call.Event, call.Progress
	call.Event = func(kind string, data any) {
		if !givenUp.Load() {
			event(kind, data)
		}
	}
	call.Progress = func(p, total float64, message string) {
		if !givenUp.Load() {
			progress(p, total, message)
		}
	}
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := runExecutor(ctx, ex, call)
		done <- outcome{res, err}
	}()
	// A javascript tool without a deadline stops itself at jsCallTimeout.
	var limit <-chan time.Time
	_, hasDeadline := ctx.Deadline()
	if !hasDeadline && call.Tool.Kind == artifact.KindJavaScript {
		t := time.NewTimer(jsCallTimeout)
		defer t.Stop()
		limit = t.C
	}
	var o outcome
	select {
	case o = <-done:
		return o.res, o.err
	case <-ctx.Done():
	case <-limit:
	}
	grace := time.NewTimer(callStopGrace)
	defer grace.Stop()
	select {
	case o = <-done:
		return o.res, o.err
	case <-grace.C:
	}
	givenUp.Store(true)
	name := call.Tool.Name
	go func() {
		<-done
		s.opts.Logf("agentform: the tool %s, whose call was given up, has stopped", name)
	}()
	switch {
	case limit != nil && ctx.Err() == nil:
		return nil, fmt.Errorf("the tool %q did not stop within %s of its %s limit: the call was given up, and the tool is left to stop in the background", name, callStopGrace, jsCallTimeout)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("the tool %q did not stop within %s of the call's deadline: the call was given up, and the tool is left to stop in the background", name, callStopGrace)
	}
	return nil, fmt.Errorf("the call of the tool %q was cancelled, and the tool did not stop within %s: the call was given up, and the tool is left to stop in the background", name, callStopGrace)
}

// stoppedError is the error of a call that ctx ended before what ran ("the
// script", "the python tool") finished: the call's deadline passed, or the
// call was cancelled (an interrupt, a client's notifications/cancelled).
// It says which in words, as the javascript executor does, rather than
// Go's "context canceled".
func stoppedError(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s did not finish before the call's deadline and was stopped", what)
	}
	return fmt.Errorf("the call was cancelled, and %s was stopped", what)
}

// runExecutor calls the executor, turning a panic into an error so that
// one broken call cannot take the server down.
func runExecutor(ctx context.Context, ex Executor, call *Call) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("the %s tool stopped unexpectedly (a bug in agentform: %v)", call.Tool.Kind, p)
		}
	}()
	res, err = ex.Call(ctx, call)
	if err == nil && res == nil {
		err = errors.New("the tool returned no result")
	}
	return res, err
}

// contextPatch decodes a state update and checks that every operation
// only touches the session's context: each path (and from, for move and
// copy) must be under /context/.
func contextPatch(raw json.RawMessage) (jsonpatch.Patch, error) {
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("not an RFC 6902 JSON Patch: %w", err)
	}
	for i, op := range patch {
		for _, field := range []string{"path", "from"} {
			p, ok := op[field]
			if !ok {
				continue
			}
			var s string
			if p == nil || json.Unmarshal(*p, &s) != nil {
				return nil, fmt.Errorf("operation %d has no valid %s", i+1, field)
			}
			if !strings.HasPrefix(s, "/context/") {
				return nil, fmt.Errorf("operation %d %s %q is outside /context/: tools may only update the session context", i+1, field, s)
			}
		}
	}
	return patch, nil
}

// compileSchema compiles a tool's parameters; null means any object.
func compileSchema(params artifact.JSON) (*resolve.Schema, error) {
	raw := bytes.TrimSpace(params)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte(`{"type":"object"}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	// As plan compiled it: a $ref to a file or URL must not make serve
	// read it.
	return resolve.CompileSchema(doc)
}

// validateArgs checks arguments against a schema. The error names where
// and which rule failed, never a value: arguments may be secret, and the
// error is recorded and shown.
func validateArgs(sch *resolve.Schema, args json.RawMessage) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return errors.New("the arguments are not JSON")
	}
	if _, ok := inst.(map[string]any); !ok {
		return errors.New("the arguments must be a JSON object")
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	var be *resolve.SchemaBoundError
	var crash *resolve.LibraryCrashError
	var slow *resolve.PatternTimeoutError
	switch {
	case errors.As(err, &be), errors.As(err, &crash), errors.As(err, &slow):
		// A place and a bound, the library's failure, or patterns that
		// took too long: no value.
		return err
	case !errors.As(err, &ve):
		return errors.New("the arguments could not be validated")
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		where := "/" + strings.Join(e.InstanceLocation, "/")
		var what string
		switch k := e.ErrorKind.(type) {
		case *kind.Required, *kind.Type, *kind.AdditionalProperties, *kind.MinProperties, *kind.MaxProperties, *kind.MinItems, *kind.MaxItems:
			// These name properties, types and counts, not values.
			what = k.LocalizedString(printer)
		default:
			what = "does not satisfy \"" + strings.Join(e.ErrorKind.KeywordPath(), "/") + "\""
		}
		msgs = append(msgs, "at "+where+": "+what)
	}
	walk(ve)
	slices.Sort(msgs)
	msgs = slices.Compact(msgs)
	if len(msgs) > 5 {
		msgs = append(msgs[:5], fmt.Sprintf("and %d more", len(msgs)-5))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// printer renders validation messages in English.
var printer = message.NewPrinter(language.English)
