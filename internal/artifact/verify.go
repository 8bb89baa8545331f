package artifact

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/mcpwire"
	"github.com/agentform/agentform/lockfile"
)

// Problem is one thing wrong with an artifact.
type Problem struct {
	// Path is the archive path the problem is about: an entry,
	// SHA256SUMS or agent.json.
	Path string
	// Message says what is wrong, as a sentence fragment.
	Message string
}

// String renders the problem as "path: message".
func (p Problem) String() string {
	return p.Path + ": " + p.Message
}

// Verify checks an archive and returns every problem it finds, sorted by
// path then message; none means the archive is intact. It checks:
//
//   - SHA256SUMS: present, well-formed, listing every other entry once
//     with its digest, and nothing else;
//   - agent.json: present and readable, every tool's and skill's file in
//     the archive, and the digests its lock entries record matching the
//     files beside it (a javascript bundle, a python package's source
//     hash and uv.lock, an a2a card, a skill's source hash) and its tools
//     (an mcp tool's digest, an a2a tool's card digest);
//   - with lock non-nil, agent.json against the lockfile: lockfile_digest
//     equal to lock.Digest(), and each block's and skill's lock entry
//     equal to the lockfile's entry for it, one problem per mismatch
//     naming the attributes that differ. Lockfile entries for blocks and
//     skills agent.json does not list are covered by lockfile_digest
//     alone.
//
// Verify reads SHA256SUMS from a.Files, not a.Sums, so that it can report
// malformed lines.
func Verify(a *Archive, lock *lockfile.File) []Problem {
	v := &verifier{}
	if a == nil {
		v.add("", "no archive")
		return v.problems
	}
	v.files = a.Files
	v.paths = a.Paths()
	v.checkSums()
	if agent := v.readAgent(); agent != nil {
		v.checkAgent(agent)
		if lock != nil {
			v.checkLock(agent, lock)
		}
	}
	slices.SortFunc(v.problems, func(x, y Problem) int {
		if c := strings.Compare(x.Path, y.Path); c != 0 {
			return c
		}
		return strings.Compare(x.Message, y.Message)
	})
	return slices.Compact(v.problems)
}

// verifier collects the problems of one archive.
type verifier struct {
	files map[string][]byte
	// paths are files' keys, sorted, to find the entries under a
	// directory without a scan of every entry.
	paths    []string
	problems []Problem
}

func (v *verifier) add(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// checkSums checks SHA256SUMS against the other entries.
func (v *verifier) checkSums() {
	data, ok := v.files[SumsName]
	if !ok {
		v.add(SumsName, "missing: the archive has no %s", SumsName)
		return
	}
	sums, problems := parseSums(data)
	for _, p := range problems {
		v.add(SumsName, "line %d: %s", p.line, p.msg)
	}
	for p, want := range sums {
		if p == SumsName {
			v.add(SumsName, "lists itself")
			continue
		}
		content, ok := v.files[p]
		if !ok {
			v.add(p, "listed in %s but missing from the archive", SumsName)
			continue
		}
		if got := hexSHA256(content); got != want {
			v.add(p, "modified: its sha256 is %s, %s lists %s", got, SumsName, want)
		}
	}
	for p := range v.files {
		if _, ok := sums[p]; !ok && p != SumsName {
			v.add(p, "not listed in %s", SumsName)
		}
	}
}

// readAgent parses agent.json, or reports why it cannot.
func (v *verifier) readAgent() *Agent {
	data, ok := v.files[AgentName]
	if !ok {
		v.add(AgentName, "missing: the archive has no %s", AgentName)
		return nil
	}
	agent, err := ParseAgent(data)
	if err != nil {
		v.add(AgentName, "%s", err)
		return nil
	}
	// agent.json is written in one form (MarshalAgent's), which reading it
	// back and writing it again gives byte for byte. Any other text reads
	// as something other than what a reader of the file sees: a key given
	// twice (the last one counts), a key in other letter case (Go's
	// decoder matches "DESCRIPTION" to description), a field agentform
	// does not know, and the raw JSON of parameters passed on as written.
	if again, err := MarshalAgent(agent); err != nil || !bytes.Equal(again, data) {
		v.add(AgentName, "not in the form agentform writes it (a key repeated, in other letter case or unknown, or the document edited by hand); rebuild the artifact with agentform apply")
	}
	return agent
}

// checkAgent checks agent.json's files and digests against the archive.
func (v *verifier) checkAgent(agent *Agent) {
	blocks := map[string]*Block{}
	for i := range agent.Blocks {
		b := &agent.Blocks[i]
		if _, dup := blocks[b.Name]; dup {
			v.add(AgentName, "tool block %q is listed more than once", b.Name)
		}
		blocks[b.Name] = b
	}
	tools := map[string]bool{}
	callable := callableTools(agent)
	for i := range agent.Tools {
		t := &agent.Tools[i]
		if tools[t.Name] {
			// serve keeps one of them: the other's text would be what a
			// model reads.
			v.add(AgentName, "tool %q is listed more than once", t.Name)
		}
		tools[t.Name] = true
		v.checkTool(t, blocks)
		// Only the code of tools the agent can never call may be left out
		// (a locked agent's denied tools); serve would refuse to start
		// the others.
		if t.File == "" && (t.Kind == KindJavaScript || t.Kind == KindPython) && callable(t) {
			v.add(AgentName, "tool %q can be called, but agent.json names none of its code", t.Name)
		}
	}
	for _, c := range agent.Matrix {
		if !tools[c.Tool] {
			v.add(AgentName, "the matrix has a cell for %q, which is not a registered tool", c.Tool)
		}
	}
	v.checkMatrix(agent)
	for _, s := range agent.Skills {
		v.checkSkill(s)
	}
	v.checkAccounted(agent)
}

// checkAccounted reports every entry agent.json does not account for:
// one that is neither agent.json, SHA256SUMS, a tool's code (a file, or
// under a directory) nor a file a skill lists. Nothing reads such an
// entry, but whoever unpacks the archive gets it.
func (v *verifier) checkAccounted(agent *Agent) {
	files := map[string]bool{AgentName: true, SumsName: true}
	var dirs []string
	for _, t := range agent.Tools {
		switch {
		case t.File == "":
		case strings.HasSuffix(t.File, "/"):
			dirs = append(dirs, t.File)
		default:
			files[t.File] = true
		}
	}
	for _, s := range agent.Skills {
		for _, f := range s.Files {
			files[f] = true
		}
	}
	for _, p := range v.paths {
		if !files[p] && !slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(p, d) }) {
			v.add(p, "not part of any tool or skill %s lists", AgentName)
		}
	}
}

// checkMatrix checks, for an agent whose capabilities are known at plan
// time, that each matrix cell decides what its capabilities decide
// (DESIGN §5: a held tag satisfies a required one by exact match or
// "::"-prefix): serve decides from the capabilities, and which tools'
// code may be left out, from the matrix (callableTools). An extensible
// agent's row is its own capabilities' too (a session's override is not
// in it), so it is checked all the same.
func (v *verifier) checkMatrix(agent *Agent) {
	held, ok := literalCapabilities(agent)
	if !ok {
		return
	}
	requires := map[string][]string{}
	for _, t := range agent.Tools {
		requires[t.Name] = t.Requires
	}
	for _, c := range agent.Matrix {
		req, ok := requires[c.Tool]
		if !ok {
			continue
		}
		want := DecisionAllow
		for _, r := range req {
			if !slices.ContainsFunc(held, func(h string) bool { return capability.Satisfies(h, r) }) {
				want = DecisionDeny
			}
		}
		if c.Decision != want {
			v.add(AgentName, "the matrix cell of tool %q is %s, but the agent's capabilities decide %s", c.Tool, c.Decision, want)
		}
	}
}

// staticCapabilities returns the tags a locked agent holds when all of
// them are known at plan time; false when a session or the environment
// may change them.
func staticCapabilities(agent *Agent) ([]string, bool) {
	if agent.CapabilityPolicy.Runtime != nil || agent.CapabilityPolicy.Value != "locked" {
		return nil, false
	}
	return literalCapabilities(agent)
}

// literalCapabilities returns the tags the agent's manifest gives it when
// all of them are known at plan time; false when the environment gives
// them.
func literalCapabilities(agent *Agent) ([]string, bool) {
	if agent.Capabilities.Runtime != nil {
		return nil, false
	}
	held := make([]string, 0, len(agent.Capabilities.Values))
	for _, c := range agent.Capabilities.Values {
		if c.Runtime != nil {
			return nil, false
		}
		held = append(held, c.Value)
	}
	return held, true
}

// callableTools returns whether the agent may ever call an enabled tool:
// every tool when its capability policy or capabilities are only known at
// start-up or the policy is extensible (a session may be granted any
// tool), else the tools its matrix row allows. A tool disabled in the
// manifest is never called.
func callableTools(agent *Agent) func(*Tool) bool {
	allowed := map[string]bool{}
	for _, c := range agent.Matrix {
		if c.Decision == DecisionAllow {
			allowed[c.Tool] = true
		}
	}
	_, static := staticCapabilities(agent)
	return func(t *Tool) bool {
		if t.Enabled.Runtime == nil && !t.Enabled.Value {
			return false
		}
		return !static || allowed[t.Name]
	}
}

// checkTool checks one registered tool's file and the digests of its
// block's lock entry.
func (v *verifier) checkTool(t *Tool, blocks map[string]*Block) {
	if t.File != "" && !v.exists(t.File) {
		v.add(t.File, "missing from the archive, but tool %q names it", t.Name)
		return
	}
	if t.Kind == KindSkills {
		if !skillTools[t.Name] || t.Block != KindSkills {
			v.add(AgentName, "tool %q is of kind %s, which only the built-in skill tools are", t.Name, t.Kind)
		}
		if t.File != "" {
			v.add(AgentName, "tool %q names %s as its code, but tools of kind %s ship none", t.Name, t.File, t.Kind)
		}
		return
	}
	name, ok := strings.CutPrefix(t.Block, "tool.")
	b := blocks[name]
	if !ok || b == nil {
		v.add(AgentName, "tool %q: its block %q is not listed in blocks", t.Name, t.Block)
		return
	}
	// A tool runs what its block pins, so it must be of its block's kind
	// and name its block's code, and that code must be pinned: otherwise
	// a tool could be pointed at a block of agent.json's own making, with
	// code and a lock entry to match, or none.
	if b.Kind != t.Kind {
		v.add(AgentName, "tool %q is of kind %s, but its block %q is of kind %s", t.Name, t.Kind, name, b.Kind)
		return
	}
	if t.File != "" {
		if want := codePath(t.Kind, name); t.File != want {
			if want == "" {
				v.add(AgentName, "tool %q names %s as its code, but tools of kind %s ship none", t.Name, t.File, t.Kind)
			} else {
				v.add(AgentName, "tool %q names %s as its code, but the code of tool block %q is %s", t.Name, t.File, name, want)
			}
			return
		}
		if what := codePin(t.Kind, b.Lock); what != "" {
			v.add(AgentName, "tool %q ships code, but the lock entry of tool block %q records no %s", t.Name, name, what)
		}
	}
	l := b.Lock
	// An mcp tool that was resolved is served under a name its block's
	// lock entry pins (only a block whose server could not be asked, a
	// runtime url without a default, has none): otherwise its text would
	// be compared with nothing.
	if t.Kind == KindMCP && t.MCP != nil && (t.MCP.Served != "" || t.MCP.Digest != "") && (l == nil || l.Tools[t.MCP.Served] == "") {
		v.add(AgentName, "tool %q is served as %q, but the lock entry of tool block %q pins no such tool", t.Name, t.MCP.Served, name)
		return
	}
	if l == nil {
		return
	}
	switch t.Kind {
	case KindJavaScript:
		if l.Bundle != "" && t.File != "" {
			v.checkDigest(t.File, l.Bundle, fmt.Sprintf("the lock entry of tool block %q records bundle", name))
		}
	case KindPython:
		if e := t.Entry; e != nil && strings.HasSuffix(t.File, "/") {
			if _, ok := v.files[t.File+e.File]; !ok {
				v.add(t.File+e.File, "missing from the archive, but tool %q's entry names it", t.Name)
			}
		}
		if l.Source != "" && strings.HasSuffix(t.File, "/") {
			v.checkDirHash(t.File, l.Source, fmt.Sprintf("the lock entry of tool block %q records source", name))
		}
		if l.UVLock != "" && strings.HasSuffix(t.File, "/") {
			if _, ok := v.files[t.File+"uv.lock"]; !ok {
				v.add(t.File+"uv.lock", "missing from the archive, but the lock entry of tool block %q records uv_lock", name)
			} else {
				v.checkDigest(t.File+"uv.lock", l.UVLock, fmt.Sprintf("the lock entry of tool block %q records uv_lock", name))
			}
		}
	case KindA2A:
		if l.Card != "" && t.File != "" {
			v.checkDigest(t.File, l.Card, fmt.Sprintf("the lock entry of tool block %q records card", name))
		}
		if t.A2A != nil && t.A2A.CardDigest != l.Card {
			v.add(AgentName, "tool %q: card_digest is %s, but the lock entry of tool block %q records card %s", t.Name, t.A2A.CardDigest, name, l.Card)
		}
	case KindMCP:
		if t.MCP != nil && t.MCP.Digest != l.Tools[t.MCP.Served] {
			v.add(AgentName, "tool %q: digest is %s, but the lock entry of tool block %q records %s for served tool %q", t.Name, t.MCP.Digest, name, l.Tools[t.MCP.Served], t.MCP.Served)
		}
		if t.MCP != nil {
			v.checkMCPDefinition(t, l, name)
		}
	}
}

// skillTools are the built-in skill tools, the only tools of kind skills.
var skillTools = map[string]bool{"list_skills": true, "get_skill": true, "describe_skill": true, "read_skill_file": true, "run_skill_script": true}

// codePath is where the code of a tool of kind kind from block is in an
// artifact (DESIGN §8), "" for kinds that ship none.
func codePath(kind, block string) string {
	switch kind {
	case KindJavaScript:
		return "tools/" + block + "/bundle.js"
	case KindPython:
		return "tools/" + block + "/src/"
	case KindA2A:
		return "tools/" + block + "/agent-card.json"
	}
	return ""
}

// codePin names the attribute of a lock entry that pins the code a tool
// of kind kind ships, when l does not record it; "" when it does.
func codePin(kind string, l *Lock) string {
	var got, what string
	switch kind {
	case KindJavaScript:
		what = "bundle"
		if l != nil {
			got = l.Bundle
		}
	case KindPython:
		what = "source"
		if l != nil {
			got = l.Source
		}
	case KindA2A:
		what = "card"
		if l != nil {
			got = l.Card
		}
	default:
		return ""
	}
	if got != "" {
		return ""
	}
	return what
}

// checkMCPDefinition checks that what agent.json says of an mcp tool (the
// name it is served under, its description, parameters, output schema
// and annotations) is the definition its block's lock entry records for
// it, and that the definition is the one the digest covers: serve shows
// a model agent.json's text, and checks only the digest against the live
// server. A description the server did not give (or gave empty) is the
// block's own, from the manifest, which no lock entry records. A lock
// entry without definitions (written before they were kept) is checked
// by its digests alone.
func (v *verifier) checkMCPDefinition(t *Tool, l *Lock, block string) {
	served := t.MCP.Served
	text, ok := l.Definitions[served]
	if !ok {
		return
	}
	what := fmt.Sprintf("the lock entry of tool block %q", block)
	value, err := mcpwire.DecodeJSON([]byte(text))
	def, isObject := value.(map[string]any)
	if err != nil || !isObject {
		v.add(AgentName, "%s records a definition of served tool %q that is not a JSON object", what, served)
		return
	}
	if canon, err := mcpwire.CanonicalJSON(def); err != nil || "sha256:"+hexSHA256(canon) != l.Tools[served] {
		v.add(AgentName, "%s records a definition of served tool %q that its digest %s does not cover", what, served, l.Tools[served])
		return
	}
	if def["name"] != served {
		v.add(AgentName, "tool %q is served as %q, but %s records a definition named %v for it", t.Name, served, what, def["name"])
	}
	if d, ok := def["description"].(string); ok && d != "" && d != t.Description {
		v.add(AgentName, "tool %q: its description differs from the one %s records for served tool %q", t.Name, what, served)
	}
	for _, f := range []struct {
		field, key string
		got        JSON
	}{{"parameters", "inputSchema", t.Parameters}, {"output_schema", "outputSchema", t.MCP.OutputSchema}, {"annotations", "annotations", t.MCP.Annotations}} {
		if !sameJSONField(f.got, def[f.key]) {
			v.add(AgentName, "tool %q: its %s differ from the %s %s records for served tool %q", t.Name, f.field, f.key, what, served)
		}
	}
}

// sameJSONField reports whether an agent.json field (null or absent when
// empty) holds the value want, decoded by mcpwire.DecodeJSON (nil when the
// definition has no such field).
func sameJSONField(got JSON, want any) bool {
	var have any
	if t := bytes.TrimSpace(got); len(t) > 0 {
		var err error
		if have, err = mcpwire.DecodeJSON(t); err != nil {
			return false
		}
	}
	if have == nil || want == nil {
		return have == nil && want == nil
	}
	a, errA := mcpwire.CanonicalJSON(have)
	b, errB := mcpwire.CanonicalJSON(want)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// checkSkill checks a skill's files and its source hash.
func (v *verifier) checkSkill(s Skill) {
	for _, f := range s.Files {
		if _, ok := v.files[f]; !ok {
			v.add(f, "missing from the archive, but skill %q lists it", s.Name)
		}
	}
	if s.Lock != nil && s.Lock.Source != "" {
		v.checkDirHash("skills/"+s.Name+"/", s.Lock.Source, fmt.Sprintf("the lock entry of skill %q records source", s.Name))
	}
}

// exists reports whether file is an entry, or, ending in "/", a directory
// holding at least one entry.
func (v *verifier) exists(file string) bool {
	if !strings.HasSuffix(file, "/") {
		_, ok := v.files[file]
		return ok
	}
	return len(v.under(file)) > 0
}

// under returns the sorted paths of the entries under dir, which ends in
// "/".
func (v *verifier) under(dir string) []string {
	i, _ := slices.BinarySearch(v.paths, dir)
	j := i
	for j < len(v.paths) && strings.HasPrefix(v.paths[j], dir) {
		j++
	}
	return v.paths[i:j]
}

// checkDigest reports when the entry's "sha256:<hex>" differs from want.
func (v *verifier) checkDigest(path, want, what string) {
	data, ok := v.files[path]
	if !ok {
		return
	}
	if got := "sha256:" + hexSHA256(data); got != want {
		v.add(path, "its digest is %s, but %s", got, what+" "+want)
	}
}

// checkDirHash reports when the dirhash Hash1 of the entries under dir
// (named relative to it, as agentform hashes a package directory) differs
// from want.
func (v *verifier) checkDirHash(dir, want, what string) {
	var names []string
	for _, p := range v.under(dir) {
		names = append(names, strings.TrimPrefix(p, dir))
	}
	got, err := dirhash.Hash1(names, func(name string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(v.files[dir+name])), nil
	})
	if err != nil {
		v.add(dir, "cannot hash: %s", err)
		return
	}
	if got != want {
		v.add(dir, "its source hash is %s, but %s", got, what+" "+want)
	}
}

// checkLock checks agent.json's lock entries against the lockfile.
func (v *verifier) checkLock(agent *Agent, lock *lockfile.File) {
	if got, want := agent.LockfileDigest, lock.Digest(); got != want {
		v.add(AgentName, "lockfile_digest is %s, but the lockfile's digest is %s", got, want)
	}
	for _, b := range agent.Blocks {
		locked, pinned := lock.Tools[b.Name], b.Lock.Tool()
		v.compareEntry("tool block", b.Name,
			len(lockfile.ChangedAttributes(nil, locked)) > 0, len(lockfile.ChangedAttributes(nil, pinned)) > 0,
			lockfile.ChangedAttributes(locked, pinned))
	}
	for _, s := range agent.Skills {
		locked, pinned := lock.Skills[s.Name], s.Lock.Skill()
		v.compareEntry("skill", s.Name,
			len(lockfile.ChangedSkillAttributes(nil, locked)) > 0, len(lockfile.ChangedSkillAttributes(nil, pinned)) > 0,
			lockfile.ChangedSkillAttributes(locked, pinned))
	}
}

// compareEntry reports the differences between agent.json's lock entry
// for a block or skill (the changes' New side) and the lockfile's (Old).
// inLock and inAgent tell whether each side has an entry with anything
// set.
func (v *verifier) compareEntry(what, name string, inLock, inAgent bool, changes []lockfile.AttrChange) {
	switch {
	case len(changes) == 0:
	case !inLock:
		v.add(AgentName, "agent.json pins %s %q, but the lockfile has no entry for it", what, name)
	case !inAgent:
		v.add(AgentName, "the lockfile pins %s %q, but agent.json has no lock entry for it", what, name)
	default:
		v.add(AgentName, "the lock entry of %s %q differs from the lockfile: %s", what, name, describeChanges(changes))
	}
}

// describeChanges renders attribute changes as
// "bundle is sha256:a in agent.json, sha256:b in the lockfile".
func describeChanges(changes []lockfile.AttrChange) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = fmt.Sprintf("%s is %s in %s, %s in the lockfile", c.Name, orAbsent(c.New), AgentName, orAbsent(c.Old))
	}
	return strings.Join(parts, "; ")
}

// orAbsent returns s, or "absent" for an attribute that is not set.
func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}
