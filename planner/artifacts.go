package planner

import (
	"encoding/json"
	"fmt"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
)

// ArtifactFiles returns the files of an agent's artifact: agent.json, each
// tool block's build outputs under tools/<block>/, and each skill under
// skills/<name>/. It is computed on demand from the plan (apply calls it
// for the agents it rebuilds), never from the manifest files.
func (p *Plan) ArtifactFiles(agent string) ([]artifact.File, error) {
	if p.cfg == nil {
		return nil, fmt.Errorf("the plan has no configuration to build artifacts from")
	}
	ag := p.cfg.Agent(agent)
	if ag == nil {
		return nil, fmt.Errorf("no agent %q in the plan", agent)
	}
	ai, ok := p.matrix.AgentIndex(agent)
	if !ok {
		return nil, fmt.Errorf("no agent %q in the matrix", agent)
	}
	doc := &artifact.Agent{
		Name:             ag.Name,
		Version:          ag.Version.Value,
		Description:      ag.Description.Value,
		Graph:            artGraph(ag.Graph),
		Model:            artifact.Model{Provider: artString(ag.Model.Provider), Name: artString(ag.Model.Name)},
		Prompt:           artPrompt(ag.Prompt),
		Capabilities:     artStrings(ag.Capabilities),
		CapabilityPolicy: artString(ag.CapabilityPolicy),
		Skills:           []artifact.Skill{},
		Matrix:           []artifact.Cell{},
	}
	if p.Lock != nil {
		doc.LockfileDigest = p.LockDigest()
	}
	files := []artifact.File{}
	refs := newRefSet()
	refs.agent(ag)
	shipped := p.shippedBlocks(ag, ai)

	// Tools and blocks are encoded once per plan (entries) and shared by
	// every agent's document: they are most of each, and a tool entry
	// differs between agents only in whether the block is shipped.
	entries := p.artifactEntries()
	blockEntries := make([]artifact.Encoded, 0, len(p.cfg.Tools))
	for i, t := range p.cfg.Tools {
		res := p.resolved(t.Name)
		e, err := entries.get(entryKey{block: true, index: i}, func() (artifact.Encoded, error) { return p.blockEntry(t) })
		if err != nil {
			return nil, fmt.Errorf("encoding the block of tool %q: %w", t.Name, err)
		}
		blockEntries = append(blockEntries, e)
		if res != nil && shipped(t.Name) {
			for _, name := range sortedOutputNames(res.Outputs) {
				files = append(files, artifact.File{Path: path.Join("tools", t.Name, name), Data: res.Outputs[name]})
			}
		}
		if t.Enabled.Known() && !t.Enabled.Value {
			// Disabled tools are listed but carry no references the agent needs.
		} else {
			refs.tool(t)
		}
	}
	tools := p.matrix.Tools()
	owners := p.toolOwners()
	toolEntries := make([]artifact.Encoded, 0, len(p.Tools))
	for i, rt := range p.Tools {
		t := owners.block[i]
		ship := t != nil && shipped(t.Name)
		e, err := entries.get(entryKey{index: i, shipped: ship}, func() (artifact.Encoded, error) {
			return artifact.EncodeTool(p.artifactTool(rt, t, ship))
		})
		if err != nil {
			return nil, fmt.Errorf("encoding tool %q: %w", rt.Name, err)
		}
		toolEntries = append(toolEntries, e)
	}
	for ti, t := range tools {
		c := p.matrix.Cell(ai, ti)
		cell := artifact.Cell{Tool: t.Name, Decision: artifact.DecisionDeny, Missing: c.Missing}
		if c.Allowed {
			cell.Decision = artifact.DecisionAllow
		}
		doc.Matrix = append(doc.Matrix, cell)
	}
	for _, s := range p.cfg.Skills {
		rs := p.resolvedSkill(s.Name)
		sk := artifact.Skill{Name: s.Name, Description: s.Description.Value, AllowedTools: []string{}, Files: []string{}}
		if rs != nil {
			sk.Description, sk.AllowedTools = rs.Description, rs.AllowedTools
			names := make([]string, 0, len(rs.Files))
			for name := range rs.Files {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				full := path.Join("skills", s.Name, name)
				sk.Files = append(sk.Files, full)
				files = append(files, artifact.File{Path: full, Data: rs.Files[name]})
			}
			if rs.Pin != nil {
				sk.Lock = artifact.NewSkillLock(rs.Pin)
			}
		}
		doc.Skills = append(doc.Skills, sk)
	}
	refs.workspace(p.cfg, ag)
	if n := p.cfg.Network; n != nil {
		doc.Network = artNetwork(n)
		refs.network(n)
	}
	doc.Runtime = refs.list()
	data, err := artifact.MarshalAgentEncoded(doc, toolEntries, blockEntries)
	if err != nil {
		return nil, err
	}
	files = append(files, artifact.File{Path: artifact.AgentName, Data: data})
	return files, nil
}

// toolOwners is how artifacts find a registered tool's block.
type toolOwners struct {
	// block is the block of each registered tool (p.Tools[i]): the
	// first tool block of its name, nil for the built-in skill tools.
	block []*manifest.Tool
	// matrixBlock is the block name of each tool of the matrix, in the
	// matrix's order.
	matrixBlock []string
}

// toolOwners returns the plan's toolOwners, computed on first use. Looked
// up by name, not by searching cfg.Tools for each registered tool (that
// made the artifacts of 1,000 agents × 1,000 tools spend 3.5 s comparing
// names), and once per plan, not once per agent.
func (p *Plan) toolOwners() *toolOwners {
	p.ownersOnce.Do(func() {
		blocks := make(map[string]*manifest.Tool, len(p.cfg.Tools))
		for _, t := range p.cfg.Tools {
			if blocks[t.Name] == nil {
				blocks[t.Name] = t
			}
		}
		o := &toolOwners{block: make([]*manifest.Tool, len(p.Tools))}
		byName := make(map[string]string, len(p.Tools)) // registered name → block
		for i, rt := range p.Tools {
			o.block[i] = blocks[blockName(rt.Block)]
			byName[rt.Name] = blockName(rt.Block)
		}
		if p.matrix != nil {
			for _, t := range p.matrix.Tools() {
				o.matrixBlock = append(o.matrixBlock, byName[t.Name])
			}
		}
		p.owners = o
	})
	return p.owners
}

// blockEntry encodes the agent.json "blocks" entry of the tool block t.
func (p *Plan) blockEntry(t *manifest.Tool) (artifact.Encoded, error) {
	block := artifact.Block{Name: t.Name, Kind: t.Kind}
	if p.Lock != nil && p.Lock.Tools[t.Name] != nil {
		block.Lock = artifact.NewLock(p.Lock.Tools[t.Name])
	}
	return artifact.EncodeBlock(block)
}

// EncodeArtifactEntries encodes the agent.json entries the artifacts of
// agents share (see ArtifactFiles) on every core, once each, so that the
// artifacts, built side by side, find them encoded instead of each
// encoding all of them at the same moment. ArtifactFiles works without
// it; an entry that fails to encode is left for ArtifactFiles to report.
func (p *Plan) EncodeArtifactEntries(agents []string) {
	if p.cfg == nil || p.matrix == nil || len(agents) == 0 {
		return
	}
	entries := p.artifactEntries()
	type job struct {
		key    entryKey
		encode func() (artifact.Encoded, error)
	}
	var jobs []job
	for i, t := range p.cfg.Tools {
		jobs = append(jobs, job{entryKey{block: true, index: i}, func() (artifact.Encoded, error) { return p.blockEntry(t) }})
	}
	// Each registered tool's entry as the agents need it: with its block
	// shipped, without, or both. Working that out is a pass over each
	// agent's matrix row, done on every core.
	owner := p.toolOwners().block
	var mu sync.Mutex
	need := [2][]bool{make([]bool, len(p.Tools)), make([]bool, len(p.Tools))} // [unshipped, shipped]
	onEveryCore(len(agents), func(next func() (int, bool)) {
		local := [2][]bool{make([]bool, len(p.Tools)), make([]bool, len(p.Tools))}
		for a, ok := next(); ok; a, ok = next() {
			ag := p.cfg.Agent(agents[a])
			ai, found := p.matrix.AgentIndex(agents[a])
			if ag == nil || !found {
				continue
			}
			shipped := p.shippedBlocks(ag, ai)
			for i, t := range owner {
				if t != nil && shipped(t.Name) {
					local[1][i] = true
				} else {
					local[0][i] = true
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for v := range need {
			for i, n := range local[v] {
				need[v][i] = need[v][i] || n
			}
		}
	})
	for i, rt := range p.Tools {
		t := owner[i]
		for v, ship := range []bool{false, true} {
			if need[v][i] {
				jobs = append(jobs, job{entryKey{index: i, shipped: ship}, func() (artifact.Encoded, error) {
					return artifact.EncodeTool(p.artifactTool(rt, t, ship))
				}})
			}
		}
	}
	onEveryCore(len(jobs), func(next func() (int, bool)) {
		for i, ok := next(); ok; i, ok = next() {
			// A failure is ArtifactFiles' to report.
			_, _ = entries.get(jobs[i].key, jobs[i].encode)
		}
	})
}

// onEveryCore runs work on GOMAXPROCS goroutines (at most n) and waits
// for them; next hands out the indexes 0 to n-1, each once, until it
// returns false.
func onEveryCore(n int, work func(next func() (int, bool))) {
	var counter atomic.Int64
	next := func() (int, bool) {
		i := int(counter.Add(1)) - 1
		return i, i < n
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() { work(next) })
	}
	wg.Wait()
}

// artifactTool is the agent.json entry of the registered tool rt, whose
// block is t (nil for the built-in skill tools); shipped is whether the
// artifact carries the block's code.
func (p *Plan) artifactTool(rt RegisteredTool, t *manifest.Tool, shipped bool) artifact.Tool {
	at := artifact.Tool{Name: rt.Name, Block: rt.Block, Kind: rt.Kind, Description: rt.Description, Requires: rt.Requires,
		Enabled: artifact.Bool{Value: rt.Enabled}}
	if t == nil {
		at.Kind = artifact.KindSkills
		at.Parameters = skillToolSchema(rt.Name)
		return at
	}
	at.Enabled = artBool(t.Enabled)
	if !rt.Enabled {
		at.Enabled = artifact.Bool{Value: false}
	}
	at.Config = dynJSON(t.Config)
	p.fillTool(&at, t, rt, shipped)
	return at
}

// entryKey names an encoded agent.json entry of a plan: the block of
// cfg.Tools[index], or the registered tool p.Tools[index] with its block
// shipped or not.
type entryKey struct {
	block, shipped bool
	index          int
}

// entryMemo holds a plan's encoded agent.json entries. They depend on the
// plan's lockfile (digests), so a plan given another Lock starts afresh.
// Safe for concurrent use; two agents may encode the same entry at once,
// and either result is kept.
type entryMemo struct {
	mu     sync.Mutex
	lockOf *lockfile.File
	m      map[entryKey]artifact.Encoded
}

func (p *Plan) artifactEntries() *entryMemo {
	p.entriesMu.Lock()
	defer p.entriesMu.Unlock()
	if p.entries == nil || p.entries.lockOf != p.Lock {
		p.entries = &entryMemo{lockOf: p.Lock, m: map[entryKey]artifact.Encoded{}}
	}
	return p.entries
}

// get returns the entry k, encoding it with encode the first time.
func (m *entryMemo) get(k entryKey, encode func() (artifact.Encoded, error)) (artifact.Encoded, error) {
	m.mu.Lock()
	e, ok := m.m[k]
	m.mu.Unlock()
	if ok {
		return e, nil
	}
	e, err := encode()
	if err != nil {
		return e, err
	}
	m.mu.Lock()
	m.m[k] = e
	m.mu.Unlock()
	return e, nil
}

func sortedOutputNames(m map[string][]byte) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func blockName(block string) string {
	if len(block) > 5 && block[:5] == "tool." {
		return block[5:]
	}
	return ""
}

func (p *Plan) resolved(block string) *resolve.Resolved {
	if p.resolution == nil {
		return nil
	}
	return p.resolution.Tools[block]
}

func (p *Plan) resolvedSkill(name string) *resolve.ResolvedSkill {
	if p.resolution == nil {
		return nil
	}
	return p.resolution.Skills[name]
}

// fillTool sets the kind-specific parts of a registered tool's agent.json
// entry: its schema, file and transport.
// shippedBlocks returns whether the artifact of agent (index ai in the
// matrix) carries the code of a tool block (bundle, package, agent card).
// A locked agent whose capabilities are all known at plan time can only
// ever call the tools its matrix row allows, so its artifact carries those
// blocks' code and no other: what the agent cannot run is not shipped. An
// extensible agent, or one whose policy or capabilities are runtime values,
// may be granted any tool when it is served, so its artifact carries every
// block.
func (p *Plan) shippedBlocks(ag *manifest.Agent, ai int) func(block string) bool {
	policy := ag.CapabilityPolicy
	caps := ag.Capabilities
	if policy.Runtime != nil || policy.Value != manifest.PolicyLocked || caps.Runtime != nil || slices.ContainsFunc(caps.ElemRuntime, func(r *manifest.RuntimeRef) bool { return r != nil }) {
		return func(string) bool { return true }
	}
	allowed := map[string]bool{}
	for ti, block := range p.toolOwners().matrixBlock {
		if p.matrix.Allowed(ai, ti) {
			allowed[block] = true
		}
	}
	return func(block string) bool { return allowed[block] }
}

// fillTool sets the kind-specific fields of at; shipped says whether the
// artifact carries the block's code (shippedBlocks), which file names.
func (p *Plan) fillTool(at *artifact.Tool, t *manifest.Tool, rt RegisteredTool, shipped bool) {
	res := p.resolved(t.Name)
	var resolvedTool *resolve.Tool
	if res != nil {
		for i := range res.Tools {
			if res.Tools[i].Name == rt.Name {
				resolvedTool = &res.Tools[i]
			}
		}
	}
	if resolvedTool != nil && len(resolvedTool.InputSchema) > 0 {
		at.Parameters = artifact.JSON(resolvedTool.InputSchema)
	}
	if resolvedTool != nil && resolvedTool.Entry != nil {
		at.Entry = &artifact.Entry{File: resolvedTool.Entry.File, Attr: resolvedTool.Entry.Attr}
	}
	switch t.Kind {
	case manifest.KindJavaScript:
		if shipped && res != nil && res.Outputs["bundle.js"] != nil {
			at.File = path.Join("tools", t.Name, "bundle.js")
		}
		at.Export = t.Name
		if js := t.JavaScript; js != nil && js.Export.Value != "" {
			at.Export = js.Export.Value
		}
	case manifest.KindPython:
		// Only a package that was read ships (a disabled block is never
		// resolved): its files are what File names.
		if shipped && res != nil && hasOutputUnder(res.Outputs, "src/") {
			at.File = path.Join("tools", t.Name, "src") + "/"
		}
		at.Export = t.Name
		if py := t.Python; py != nil && py.Export.Value != "" {
			at.Export = py.Export.Value
		}
	case manifest.KindBash:
		b := t.Bash
		at.Parameters = artifact.JSON(`{"properties":{"script":{"description":"The shell script to run with the allowed commands.","type":"string"}},"required":["script"],"type":"object"}`)
		ab := &artifact.Bash{Commands: b.Commands.Values, Cwd: b.Cwd.Value, Shared: b.Shared.Value}
		if b.FS != nil {
			ab.FS = &artifact.BashFS{Kind: b.FS.Kind.Value, Path: b.FS.Path.Value, Cwd: b.FS.Cwd.Value}
		}
		if b.Env != nil {
			ab.Env = &artifact.BashEnv{Kind: b.Env.Kind.Value, Vars: b.Env.Vars.Values}
		}
		if l := b.Limits; l != nil {
			ab.Limits = &artifact.BashLimits{MaxExecutionTimeSecs: optInt(l.MaxExecutionTimeSecs), MaxOutputSize: optInt(l.MaxOutputSize),
				MaxCommandCount: optInt(l.MaxCommandCount), MaxLoopIterations: optInt(l.MaxLoopIterations)}
		}
		if n := b.Network; n != nil {
			ab.Network = &artifact.BashNetwork{Enabled: n.Enabled.Value, AllowedURLPrefixes: n.AllowedURLPrefixes.Values, AllowedMethods: n.AllowedMethods.Values,
				MaxRedirects: optInt(n.MaxRedirects), MaxResponseSize: optInt(n.MaxResponseSize), NetworkTimeoutSecs: optInt(n.NetworkTimeoutSecs)}
		}
		at.Bash = ab
	case manifest.KindMCP:
		m := t.MCP
		am := &artifact.MCP{Transport: m.Transport.Value}
		if m.Command.Set {
			s := artString(m.Command)
			am.Command = &s
		}
		if m.Args.Set {
			s := artStrings(m.Args)
			am.Args = &s
		}
		if m.URL.Set {
			s := artString(m.URL)
			am.URL = &s
		}
		if m.AuthToken.Set {
			s := artString(m.AuthToken)
			am.AuthToken = &s
		}
		am.Headers = dynJSON(m.Headers)
		if resolvedTool != nil {
			am.Served = resolvedTool.Served
			am.OutputSchema, am.Annotations = artifact.JSON(resolvedTool.OutputSchema), artifact.JSON(resolvedTool.Annotations)
			if p.Lock != nil && p.Lock.Tools[t.Name] != nil {
				am.Digest = p.Lock.Tools[t.Name].Served[resolvedTool.Served]
			}
		}
		at.MCP = am
	case manifest.KindA2A:
		x := t.A2A
		aa := &artifact.A2A{Operation: a2aOperation(t.Name, rt.Name), URL: artString(x.URL), Headers: dynJSON(x.Headers),
			DefaultAcceptedOutputModes: x.DefaultAcceptedOutputModes.Values, TargetAgent: x.TargetAgent.Value}
		if x.AuthToken.Set {
			s := artString(x.AuthToken)
			aa.AuthToken = &s
		}
		if x.TimeoutSecs.Set {
			i := artInt(x.TimeoutSecs)
			aa.TimeoutSecs = &i
		}
		if x.Tenant != nil {
			aa.Tenant = &artifact.Tenant{Policy: x.Tenant.Policy.Value}
			if x.Tenant.ID.Set {
				s := artString(x.Tenant.ID)
				aa.Tenant.ID = &s
			}
		}
		if p.Lock != nil && p.Lock.Tools[t.Name] != nil {
			aa.CardDigest = p.Lock.Tools[t.Name].Card
		}
		if shipped && res != nil && res.Outputs[resolve.A2ACardOutput] != nil {
			at.File = path.Join("tools", t.Name, resolve.A2ACardOutput)
		}
		at.A2A = aa
	}
}

func a2aOperation(block, name string) string {
	for _, op := range A2AOperations {
		if name == manifest.A2AToolName(block, op) {
			return op
		}
	}
	return ""
}

func optInt(i manifest.Int) *int64 {
	if !i.Set {
		return nil
	}
	v := i.Value
	return &v
}

// skillToolSchema is the input schema of the built-in skill tools.
func skillToolSchema(name string) artifact.JSON {
	switch name {
	case "list_skills":
		return artifact.JSON(`{"properties":{},"type":"object"}`)
	case "read_skill_file":
		return artifact.JSON(`{"properties":{"path":{"type":"string"},"skill":{"type":"string"}},"required":["skill","path"],"type":"object"}`)
	case "run_skill_script":
		return artifact.JSON(`{"properties":{"args":{"items":{"type":"string"},"type":"array"},"script":{"type":"string"},"skill":{"type":"string"}},"required":["skill","script"],"type":"object"}`)
	}
	return artifact.JSON(`{"properties":{"skill":{"type":"string"}},"required":["skill"],"type":"object"}`)
}

func artRef(r *manifest.RuntimeRef) *artifact.RuntimeRef {
	if r == nil {
		return nil
	}
	out := &artifact.RuntimeRef{Env: r.Env, Secret: r.Secret, HasDefault: r.HasDefault()}
	if r.HasDefault() && !r.Secret {
		if b, err := ctyjson.Marshal(r.Default, r.Default.Type()); err == nil {
			out.Default = artifact.JSON(b)
		}
	}
	return out
}

func artString(s manifest.String) artifact.String {
	return artifact.String{Value: s.Value, Runtime: artRef(s.Runtime)}
}

func artInt(i manifest.Int) artifact.Int {
	return artifact.Int{Value: i.Value, Runtime: artRef(i.Runtime)}
}

func artBool(b manifest.Bool) artifact.Bool {
	return artifact.Bool{Value: b.Value, Runtime: artRef(b.Runtime)}
}

func artStrings(l manifest.StringList) artifact.Strings {
	if l.Runtime != nil {
		return artifact.Strings{Runtime: artRef(l.Runtime)}
	}
	out := artifact.Strings{Values: []artifact.String{}}
	for i, v := range l.Values {
		s := artifact.String{Value: v}
		if i < len(l.ElemRuntime) && l.ElemRuntime[i] != nil {
			s = artifact.String{Runtime: artRef(l.ElemRuntime[i])}
		}
		out.Values = append(out.Values, s)
	}
	return out
}

func dynJSON(d manifest.Dynamic) artifact.JSON {
	if !d.Set || d.Value == cty.NilVal {
		return nil
	}
	b, err := json.Marshal(d.JSON())
	if err != nil {
		return nil
	}
	return artifact.JSON(b)
}

func artGraph(g manifest.Graph) artifact.Graph {
	out := artifact.Graph{Type: g.Type.Value}
	if g.Model != nil {
		mp := &artifact.ModelPolicy{}
		if g.Model.Timeout.Set {
			i := artInt(g.Model.Timeout)
			mp.Timeout = &i
		}
		if r := g.Model.Retry; r != nil {
			mp.Retry = &artifact.Retry{MaxAttempts: artInt(r.MaxAttempts), InitialBackoff: artInt(r.InitialBackoff), MaxBackoff: artInt(r.MaxBackoff)}
		}
		out.Model = mp
	}
	return out
}

func artPrompt(p *manifest.Prompt) *artifact.Prompt {
	if p == nil {
		return nil
	}
	switch p.Kind {
	case manifest.PromptText:
		return &artifact.Prompt{Kind: artifact.PromptText, Text: p.Text}
	case manifest.PromptMessages:
		out := &artifact.Prompt{Kind: artifact.PromptMessages}
		for _, m := range p.Messages {
			out.Messages = append(out.Messages, artifact.Message{Role: m.Role, Content: m.Content})
		}
		return out
	case manifest.PromptLangfuse:
		lf := p.Langfuse
		opt := func(s manifest.String) *artifact.String {
			if !s.Set {
				return nil
			}
			v := artString(s)
			return &v
		}
		optI := func(i manifest.Int) *artifact.Int {
			if !i.Set {
				return nil
			}
			v := artInt(i)
			return &v
		}
		return &artifact.Prompt{Kind: artifact.PromptLangfuse, Langfuse: &artifact.Langfuse{
			PromptName: artString(lf.PromptName), PublicKey: opt(lf.PublicKey), SecretKey: opt(lf.SecretKey), BaseURL: opt(lf.BaseURL),
			Label: opt(lf.Label), Version: optI(lf.Version), CacheTTLSeconds: optI(lf.CacheTTLSeconds),
			FetchTimeoutSeconds: optI(lf.FetchTimeoutSeconds), MaxRetries: optI(lf.MaxRetries)}}
	}
	return nil
}

// SecretEnv lists, sorted and once each, the environment variables the
// workspace reads with secret(runtime(...)): in its agents, tools,
// providers, network, http_server and runtime blocks.
func SecretEnv(cfg *manifest.Config) []string {
	s := newRefSet()
	for _, ag := range cfg.Agents {
		s.agent(ag)
		s.workspace(cfg, ag)
	}
	for _, t := range cfg.Tools {
		s.tool(t)
	}
	for _, p := range cfg.Providers {
		s.dynamic(p.Config)
		s.dynamic(p.Params)
	}
	if cfg.Network != nil {
		s.network(cfg.Network)
	}
	var out []string
	for _, r := range s.refs {
		if r.Secret {
			out = append(out, r.Env)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// refSet collects the runtime references an agent needs when it starts.
type refSet struct{ refs []artifact.RuntimeRef }

func newRefSet() *refSet { return &refSet{} }

func (s *refSet) add(r *manifest.RuntimeRef) {
	if r != nil {
		s.refs = append(s.refs, *artRef(r))
	}
}

func (s *refSet) str(v manifest.String)   { s.add(v.Runtime) }
func (s *refSet) integer(v manifest.Int)  { s.add(v.Runtime) }
func (s *refSet) boolean(v manifest.Bool) { s.add(v.Runtime) }
func (s *refSet) dynamic(d manifest.Dynamic) {
	for _, r := range d.Refs() {
		s.add(r)
	}
}

func (s *refSet) strings(l manifest.StringList) {
	s.add(l.Runtime)
	for _, r := range l.ElemRuntime {
		s.add(r)
	}
}

func (s *refSet) agent(a *manifest.Agent) {
	s.strings(a.Capabilities)
	s.str(a.CapabilityPolicy)
	s.str(a.Model.Provider)
	s.str(a.Model.Name)
	if m := a.Graph.Model; m != nil {
		s.integer(m.Timeout)
		if r := m.Retry; r != nil {
			s.integer(r.MaxAttempts)
			s.integer(r.InitialBackoff)
			s.integer(r.MaxBackoff)
		}
	}
	if p := a.Prompt; p != nil && p.Langfuse != nil {
		lf := p.Langfuse
		for _, v := range []manifest.String{lf.PromptName, lf.PublicKey, lf.SecretKey, lf.BaseURL, lf.Label} {
			s.str(v)
		}
		for _, v := range []manifest.Int{lf.Version, lf.CacheTTLSeconds, lf.FetchTimeoutSeconds, lf.MaxRetries} {
			s.integer(v)
		}
	}
}

func (s *refSet) tool(t *manifest.Tool) {
	s.boolean(t.Enabled)
	s.dynamic(t.Config)
	if m := t.MCP; m != nil {
		s.str(m.Command)
		s.strings(m.Args)
		s.str(m.URL)
		s.str(m.AuthToken)
		s.dynamic(m.Headers)
	}
	if x := t.A2A; x != nil {
		s.str(x.URL)
		s.str(x.AuthToken)
		s.dynamic(x.Headers)
		s.integer(x.TimeoutSecs)
		if x.Tenant != nil {
			s.str(x.Tenant.ID)
		}
	}
}

// workspace adds the references ag takes from the workspace's own
// blocks: its model's providers entry, http_server and runtime.
func (s *refSet) workspace(cfg *manifest.Config, ag *manifest.Agent) {
	if prov, ok := cfg.Providers[ag.Model.Provider.Value]; ok && ag.Model.Provider.Known() {
		s.dynamic(prov.Config)
		s.dynamic(prov.Params)
	}
	if h := cfg.HTTPServer; h != nil {
		s.str(h.Host)
		s.integer(h.Port)
		s.integer(h.MaxRequestSize)
	}
	if r := cfg.Runtime; r != nil {
		s.str(r.DefaultTenantID)
	}
}

// network adds the references of the workspace's network block.
func (s *refSet) network(n *manifest.Network) {
	s.str(n.UserAgent)
	s.dynamic(n.Headers)
	if l := n.Limits; l != nil {
		for _, v := range []manifest.Int{l.ConnectTimeoutMS, l.ReadTimeoutMS, l.RequestTimeoutMS, l.MaxRedirects, l.MaxResponseBytes, l.ConcurrencyLimit} {
			s.integer(v)
		}
	}
	if p := n.Policy; p != nil {
		s.strings(p.Methods)
		s.boolean(p.AllowLoopback)
		s.boolean(p.AllowPrivate)
		s.boolean(p.AllowLinkLocal)
	}
}

// artNetwork converts the workspace's network block for agent.json,
// keeping runtime values as references; unset parts are nil.
func artNetwork(n *manifest.Network) *artifact.Network {
	out := &artifact.Network{Headers: dynJSON(n.Headers)}
	if n.UserAgent.Set {
		s := artString(n.UserAgent)
		out.UserAgent = &s
	}
	optI := func(i manifest.Int) *artifact.Int {
		if !i.Set {
			return nil
		}
		v := artInt(i)
		return &v
	}
	if l := n.Limits; l != nil {
		out.Limits = &artifact.NetworkLimits{ConnectTimeoutMS: optI(l.ConnectTimeoutMS), ReadTimeoutMS: optI(l.ReadTimeoutMS),
			RequestTimeoutMS: optI(l.RequestTimeoutMS), MaxRedirects: optI(l.MaxRedirects), MaxResponseBytes: optI(l.MaxResponseBytes),
			ConcurrencyLimit: optI(l.ConcurrencyLimit)}
	}
	if p := n.Policy; p != nil {
		ap := &artifact.NetworkPolicy{Allow: []artifact.URLPattern{}, AllowSet: p.AllowSet, Addresses: artifact.NetworkAddresses{
			AllowLoopback: artBool(p.AllowLoopback), AllowPrivate: artBool(p.AllowPrivate), AllowLinkLocal: artBool(p.AllowLinkLocal)}}
		if p.Methods.Set {
			m := artStrings(p.Methods)
			ap.Methods = &m
		}
		for _, a := range p.Allow {
			ap.Allow = append(ap.Allow, artifact.URLPattern{Protocol: a.Protocol, Hostname: a.Hostname, Port: a.Port, Pathname: a.Pathname})
		}
		out.Policy = ap
	}
	return out
}

func (s *refSet) list() []artifact.RuntimeRef {
	if s.refs == nil {
		return []artifact.RuntimeRef{}
	}
	return s.refs
}

// hasOutputUnder reports whether a block's outputs hold a file under dir
// ("src/").
func hasOutputUnder(outputs map[string][]byte, dir string) bool {
	for name := range outputs {
		if strings.HasPrefix(name, dir) {
			return true
		}
	}
	return false
}
