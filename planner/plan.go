// Package planner turns a loaded manifest into a Plan: the registered tools,
// every agent's effective capabilities, the capability matrix with its
// denials, the results of check blocks, and the resource changes.
//
// A Plan is a plain value; nothing after the planner re-reads the manifest.
package planner

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/version"
	"github.com/agentform/agentform/lockfile"
)

// FormatVersion is the version of the Plan and JSON plan document format.
const FormatVersion = "1.0"

// Plan is the result of planning a workspace.
type Plan struct {
	FormatVersion    string
	AgentformVersion string
	// Applyable is false when the plan has errors, or simulates a session
	// override (Session): apply builds the configuration as written.
	Applyable       bool
	ResourceChanges []ResourceChange
	// Tools lists every registered tool, sorted by name, including
	// disabled ones (which are not matrix columns).
	Tools []RegisteredTool
	// Agents are the agents' effective capabilities: with a simulated
	// session override (Session), what that session would hold.
	Agents []AgentRow
	// CapabilityChanges are the accesses applying the configuration as
	// written would grant or revoke, compared with the last apply. A
	// simulated session override never counts: its changes are
	// Session.Changes.
	CapabilityChanges []CapabilityChange
	// Session describes the session override the plan simulates
	// (Options.Override); nil for a plan of the configuration as written.
	// The matrix, denials and checks of such a plan are the session's.
	Session     *Session
	Checks      []CheckResult
	Diagnostics hcl.Diagnostics
	// Lock is the lockfile this plan's resolution implies; LockChanges is
	// how it differs from the lockfile on disk.
	Lock        *lockfile.File
	LockChanges []lockfile.Change
	// Leftovers are artifact files an interrupted apply wrote, or meant to
	// remove, that no resource in state owns and this plan does not write
	// (LeftoverArtifacts): apply removes them. Like LockChanges, they are
	// something apply does without a resource change.
	Leftovers []string
	// Addresses are every planned address with its fingerprint and
	// attributes, sorted; apply records them in state.
	Addresses []Address
	// Applied is the state the plan was made against (zero without state).
	Applied *Applied

	// Drift holds the errors about remote definitions (mcp tools, a2a
	// cards) that changed since the lock; they are in Diagnostics too.
	// "agentform lock -upgrade" accepts exactly these.
	Drift hcl.Diagnostics

	matrix *capability.Matrix
	// cfg and resolution are what artifacts are built from (ArtifactFiles);
	// they are not part of the serialised plan.
	cfg        *manifest.Config
	resolution *resolve.Workspace
	outDir     string
	// lockRead is the lockfile as read (Options.Lock, or an empty one),
	// whose digest Save records: computed there, as only a saved plan
	// needs it.
	lockRead *lockfile.File

	// lockBytes and lockDigest memoise Lock.Bytes() and Lock.Digest() for
	// the artifacts, which all carry the digest, and apply, which writes
	// the bytes; lockOf is the Lock they were computed for.
	lockMu     sync.Mutex
	lockBytes  []byte
	lockDigest string
	lockOf     *lockfile.File

	// entries are the agent.json entries ArtifactFiles encodes once and
	// shares between agents (artifactEntries).
	entriesMu sync.Mutex
	entries   *entryMemo

	// owners maps tools to their blocks for the artifacts, once per plan
	// (toolOwners).
	ownersOnce sync.Once
	owners     *toolOwners
}

// LockDigest returns p.Lock.Digest(), computed once per lockfile: every
// artifact carries it, and encoding a large lockfile is not free. Safe for
// concurrent use.
func (p *Plan) LockDigest() string {
	_, digest := p.lockEncoding()
	return digest
}

// LockBytes returns p.Lock.Bytes(), the lockfile apply writes, encoded
// once per lockfile (LockDigest). The caller must not modify it.
func (p *Plan) LockBytes() []byte {
	b, _ := p.lockEncoding()
	return b
}

func (p *Plan) lockEncoding() ([]byte, string) {
	p.lockMu.Lock()
	defer p.lockMu.Unlock()
	if p.Lock == nil {
		return nil, ""
	}
	if p.lockOf != p.Lock {
		p.lockBytes = p.Lock.Bytes()
		p.lockDigest, p.lockOf = lockfile.DigestOf(p.lockBytes), p.Lock
	}
	return p.lockBytes, p.lockDigest
}

// Matrix returns the capability matrix over the enabled registered tools;
// nil when the manifest did not load.
func (p *Plan) Matrix() *capability.Matrix { return p.matrix }

// HasChanges reports whether applying the plan would change anything:
// resources or capabilities.
func (p *Plan) HasChanges() bool {
	for _, rc := range p.ResourceChanges {
		if !slices.Equal(rc.Actions, []string{ActionNoOp}) {
			return true
		}
	}
	return len(p.CapabilityChanges) > 0
}

// Resource actions.
const (
	ActionCreate = "create"
	ActionUpdate = "update"
	ActionDelete = "delete"
	ActionNoOp   = "no-op"
)

// ResourceChange is the action planned for one address (agent.x, tool.y,
// skill.z).
type ResourceChange struct {
	Address string
	Type    string
	Name    string
	Kind    string
	Actions []string
	Reasons []string
	// ChangedAttributes names the attributes that differ from the applied
	// state, sorted ("commands", "definitions", "tools"); empty but for an
	// update of the configuration (an update for drift alone changes no
	// attribute).
	ChangedAttributes []string
	// AttributeChanges says how each of ChangedAttributes changed, in the
	// same order.
	AttributeChanges []AttributeChange
}

// RegisteredTool is one name a model sees: a column of the matrix.
type RegisteredTool struct {
	Name string
	// Block is the address of the block that registered it ("tool.adder"),
	// or "skills" for the built-in skill tools.
	Block    string
	Kind     string
	Requires []string
	// Enabled is false for enabled = false blocks; such tools are not
	// matrix columns.
	Enabled bool
	// RuntimeEnabled marks enabled = runtime(...): registered, but whether
	// it is on is decided when the agent starts.
	RuntimeEnabled bool
	// Resolved is false when the tool's definition could not be resolved
	// (an mcp server not yet listed).
	Resolved bool
	// FromLock is set when an mcp server could not be reached and its
	// served tools come from agentform.lock.hcl.
	FromLock    bool
	Description string
}

// AgentRow is an agent's effective capability set.
type AgentRow struct {
	Name   string
	Policy string
	Holds  []string
	// RuntimeDependent is set when capabilities or policy come from
	// runtime(): the row is computed from the default.
	RuntimeDependent bool
}

// Denial is a denied cell with the tags that are missing.
type Denial struct {
	Agent   string
	Tool    string
	Missing []string
}

// CapabilityChange is an access granted or revoked since the last apply.
type CapabilityChange struct {
	Agent  string
	Tool   string
	Change string // "granted" or "revoked"
}

// Session is a simulated session override: what one session that sends it
// would hold. A plan that simulates one is not applyable.
type Session struct {
	// Override is the override in its command-line form ("replace:read").
	Override string
	// Honoured are the agents whose capability_policy is "extensible", for
	// which the override counts; Ignored are the others (locked), which
	// keep their configured capabilities. Both in the order of Agents.
	Honoured, Ignored []string
	// Changes are the accesses the session would gain ("granted") or lose
	// ("revoked") compared with the agents as configured, sorted by agent
	// then tool.
	Changes []CapabilityChange
}

// Check statuses.
const (
	CheckPass = "pass"
	CheckFail = "fail"
	// CheckError is a check whose condition could not be evaluated.
	CheckError = "error"
)

// CheckResult is the outcome of one check block.
type CheckResult struct {
	Name    string
	Status  string
	Message string
	// Range is the condition of the assertion that failed or could not
	// be evaluated; nil for a check that passed.
	Range *hcl.Range
	// Diagnostics are the errors the check added to the plan's.
	Diagnostics hcl.Diagnostics
}

// Options change how a plan is made.
type Options struct {
	// Override simulates one session's capability override.
	Override *capability.Override
	// Resolution holds the resolved tools and skills (resolve.Run). Without
	// it the plan registers tools from the manifest alone: one column per
	// mcp block, unresolved.
	Resolution *resolve.Workspace
	// Lock is the lockfile on disk; nil means none.
	Lock *lockfile.File
	// LockReadonly makes any difference between Lock and what was resolved
	// an error (-lockfile=readonly, for CI).
	LockReadonly bool
	// Applied is the state the plan diffs against; nil means no state.
	Applied *Applied
	// OutDir is where artifacts go (-out-dir), relative to the workspace
	// unless absolute. "" keeps each agent's artifact where it was applied
	// (new agents beside the others, else DefaultOutDir); a directory
	// given moves artifacts that live elsewhere. A directory the source
	// of a tool or skill holds, so that its hash would take the artifacts
	// in, is an error (SummaryOutDirInSource), and so is one state has
	// the artifacts in when OutDir is "".
	OutDir string
	// OutDirName is how the caller's user sets OutDir, for messages:
	// DefaultOutDirName (the CLI's -out-dir) when empty.
	OutDirName string
	// EncodeLock encodes the lockfile (LockBytes, LockDigest) in the
	// background as soon as it is known, while the rest of the plan is
	// computed: apply writes it, and every artifact waits for its digest.
	EncodeLock bool
}

// New plans the workspace described by cfg.
func New(ctx context.Context, cfg *manifest.Config, opts Options) *Plan {
	p := &Plan{FormatVersion: FormatVersion, AgentformVersion: version.Version, cfg: cfg, resolution: opts.Resolution, outDir: opts.OutDir}
	p.Tools = p.registerTools(cfg, opts.Resolution)
	if opts.Resolution != nil {
		p.compareLock(cfg, opts)
		if opts.EncodeLock && p.Lock != nil {
			go p.lockEncoding()
		}
	}
	var configured []AgentRow
	p.Agents, configured = p.effectiveAgents(cfg, opts.Override)
	p.matrix = matrixOf(p.Agents, p.Tools)
	// What apply would change is the configuration's matrix against the
	// applied one; a simulated override's matrix is compared with the
	// configuration's instead, as what the session gains or loses.
	asConfigured := reachableByAgent(p.Agents, p.matrix)
	if opts.Override != nil {
		asConfigured = reachableByAgent(configured, matrixOf(configured, p.Tools))
		p.Session = &Session{Override: opts.Override.String(), Honoured: []string{}, Ignored: []string{}}
		for _, a := range p.Agents {
			if a.Policy == manifest.PolicyExtensible {
				p.Session.Honoured = append(p.Session.Honoured, a.Name)
			} else {
				p.Session.Ignored = append(p.Session.Ignored, a.Name)
			}
		}
		p.Session.Changes = capabilityChanges(asConfigured, reachableByAgent(p.Agents, p.matrix))
	}
	p.diffState(cfg, opts.Resolution, opts.Applied, asConfigured)
	p.checkOutDirs(cfg, opts.OutDirName)
	p.Checks = p.evaluateChecks(cfg)
	p.Applyable = !p.Diagnostics.HasErrors() && p.Session == nil
	return p
}

func (p *Plan) registerTools(cfg *manifest.Config, ws *resolve.Workspace) []RegisteredTool {
	var tools []RegisteredTool
	type owner struct {
		at hcl.Range
		// static is set for names that follow from the manifest alone
		// (manifest.StaticToolNames, the skill tools).
		static bool
	}
	owners := map[string]owner{}
	add := func(rt RegisteredTool, at hcl.Range, static bool) {
		if prev, dup := owners[rt.Name]; dup {
			// Two static names are manifest.Load's to report, and a
			// manifest with errors is never planned: only a name an mcp
			// block adds is this plan's.
			if !prev.static || !static {
				p.Diagnostics = append(p.Diagnostics, manifest.DuplicateToolDiagnostic(rt.Name, prev.at, at))
			}
			return
		}
		owners[rt.Name] = owner{at: at, static: static}
		tools = append(tools, rt)
	}
	for _, t := range cfg.Tools {
		static := t.Kind != manifest.KindMCP
		if t.Enabled.Known() && !t.Enabled.Value {
			for _, rt := range staticTools(t) {
				rt.Enabled = false
				add(rt, t.DeclRange, static)
			}
			continue
		}
		for _, rt := range resolvedTools(t, ws) {
			rt.Enabled = true
			rt.RuntimeEnabled = !t.Enabled.Known()
			add(rt, t.DeclRange, static)
		}
	}
	if len(cfg.Skills) > 0 {
		for _, st := range manifest.SkillTools {
			add(RegisteredTool{Name: st.Name, Block: "skills", Kind: "skill", Requires: []string{st.Requires}, Enabled: true, Resolved: true}, cfg.Skills[0].DeclRange, true)
		}
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools
}

// resolvedTools returns a tool block's registered tools: what resolution
// found, or, without a resolution, what the manifest alone says (one
// column per mcp block, unresolved).
func resolvedTools(t *manifest.Tool, ws *resolve.Workspace) []RegisteredTool {
	var res *resolve.Resolved
	if ws != nil {
		res = ws.Tools[t.Name]
	}
	if res == nil || res.Unresolved {
		return staticTools(t)
	}
	if len(res.Tools) == 0 {
		if t.Kind == manifest.KindMCP {
			// A server that was listed and serves nothing (or nothing
			// expose keeps) registers nothing: no column to grant.
			return nil
		}
		return staticTools(t)
	}
	out := make([]RegisteredTool, 0, len(res.Tools))
	for _, rt := range res.Tools {
		desc := rt.Description
		if desc == "" {
			desc = t.Description.Value
		}
		out = append(out, RegisteredTool{
			Name: rt.Name, Block: "tool." + t.Name, Kind: t.Kind,
			Requires: normTags(append(slices.Clone(t.Capabilities.Values), rt.Requires...)),
			Resolved: true, FromLock: res.FromLock, Description: desc,
		})
	}
	return out
}

// A2AOperations are the four registered tools of an a2a block, in order.
var A2AOperations = manifest.A2AOperations

// staticTools returns a tool block's registered tools from the manifest
// alone (manifest.StaticToolNames): an mcp block is one column named after
// it, unresolved.
func staticTools(t *manifest.Tool) []RegisteredTool {
	base := RegisteredTool{Name: t.Name, Block: "tool." + t.Name, Kind: t.Kind, Requires: normTags(t.Capabilities.Values), Resolved: true, Description: t.Description.Value}
	if t.Kind == manifest.KindMCP {
		base.Resolved = false
		return []RegisteredTool{base}
	}
	names := manifest.StaticToolNames(t)
	out := make([]RegisteredTool, len(names))
	for i, name := range names {
		out[i] = base
		out[i].Name = name
	}
	return out
}

func normTags(tags []string) []string {
	out := slices.Clone(tags)
	sort.Strings(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}

func (p *Plan) warn(rng *hcl.Range, summary, detail string) {
	p.Diagnostics = append(p.Diagnostics, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: rng})
}

// effectiveAgents returns the agents' rows with the session override
// applied and, when there is one, the rows as configured (without it).
func (p *Plan) effectiveAgents(cfg *manifest.Config, override *capability.Override) (rows, configured []AgentRow) {
	rows = make([]AgentRow, 0, len(cfg.Agents))
	if override != nil {
		configured = make([]AgentRow, 0, len(cfg.Agents))
	}
	for _, a := range cfg.Agents {
		row := AgentRow{Name: a.Name}
		holds := a.Capabilities.Values
		if !a.Capabilities.Known() {
			row.RuntimeDependent = true
			what := "its default"
			switch {
			case !a.Capabilities.Runtime.HasDefault():
				what, holds = "no capabilities (the reference has no default)", nil
			case a.Capabilities.Runtime.Secret:
				what, holds = "no capabilities (a secret's default is not used in plans)", nil
			}
			p.warn(a.Capabilities.Range.Ptr(), "Capabilities known at runtime",
				fmt.Sprintf("Agent %q takes its capabilities from runtime(%q); this plan uses %s. The agent may hold other tags when it starts.", a.Name, a.Capabilities.Runtime.Env, what))
		}
		policy := a.CapabilityPolicy.Value
		if !a.CapabilityPolicy.Known() {
			row.RuntimeDependent = true
			if a.CapabilityPolicy.Runtime.Secret || !a.CapabilityPolicy.Runtime.HasDefault() {
				policy = manifest.PolicyLocked
			}
			p.warn(a.CapabilityPolicy.Range.Ptr(), "Capability policy known at runtime",
				fmt.Sprintf("Agent %q takes its capability_policy from runtime(%q); this plan assumes %q.", a.Name, a.CapabilityPolicy.Runtime.Env, policy))
		}
		row.Policy = policy
		eff, warning := capability.Effective(holds, capability.Policy(policy), override)
		if warning != "" {
			// An agent without capability_policy is locked by default:
			// the warning points at the agent then.
			at := a.DeclRange.Ptr()
			if a.CapabilityPolicy.Set {
				at = a.CapabilityPolicy.Range.Ptr()
			}
			p.warn(at, "Capability override ignored", fmt.Sprintf("Agent %q: %s.", a.Name, warning))
		}
		if eff == nil {
			eff = []string{}
		}
		if override != nil {
			conf := row
			conf.Holds, _ = capability.Effective(holds, capability.Policy(policy), nil)
			configured = append(configured, conf)
		}
		row.Holds = eff
		rows = append(rows, row)
	}
	return rows, configured
}

// matrixOf computes the capability matrix of agents over the enabled tools.
func matrixOf(rows []AgentRow, registered []RegisteredTool) *capability.Matrix {
	agents := make([]capability.Agent, len(rows))
	for i, a := range rows {
		agents[i] = capability.Agent{Name: a.Name, Policy: capability.Policy(a.Policy), Holds: a.Holds}
	}
	var tools []capability.Tool
	for _, t := range registered {
		if t.Enabled {
			tools = append(tools, capability.Tool{Name: t.Name, Requires: t.Requires})
		}
	}
	return capability.Compute(agents, tools)
}

// reachableByAgent returns, for each agent, the tools m lets it call
// (sorted), as state records the applied matrix.
func reachableByAgent(rows []AgentRow, m *capability.Matrix) map[string][]string {
	out := make(map[string][]string, len(rows))
	for ai, a := range rows {
		out[a.Name] = m.Reachable(ai)
	}
	return out
}

// DenialCount returns the number of denied cells.
func (p *Plan) DenialCount() int {
	if p.matrix == nil {
		return 0
	}
	n, total := 0, len(p.matrix.Tools())
	for ai := range p.Agents {
		n += total - p.matrix.AllowedCount(ai)
	}
	return n
}

// EachDenial calls f for every denied cell with its missing tags, sorted
// by agent then tool, until f returns false. Denials are explained on
// demand: a large workspace can have millions.
func (p *Plan) EachDenial(f func(Denial) bool) {
	if p.matrix == nil {
		return
	}
	for ai := range p.Agents {
		for _, ti := range p.matrix.Denied(ai) {
			c := p.matrix.Cell(ai, ti)
			if !f(Denial{Agent: c.Agent, Tool: c.Tool, Missing: c.Missing}) {
				return
			}
		}
	}
}

// Denials returns every denied cell (see EachDenial).
func (p *Plan) Denials() []Denial {
	var out []Denial
	p.EachDenial(func(d Denial) bool {
		out = append(out, d)
		return true
	})
	return out
}

// literalString returns the string value of a cty value, for messages.
func literalString(v cty.Value) string {
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// Config returns the configuration the plan was made from, for consumers
// that report locations (audit). It is the loaded manifest, not re-read.
func (p *Plan) Config() *manifest.Config { return p.cfg }

// Resolution returns what resolving the workspace produced (served MCP
// tools with their annotations, skills with their allowed tools); nil when
// the plan was made from the manifest alone.
func (p *Plan) Resolution() *resolve.Workspace { return p.resolution }
