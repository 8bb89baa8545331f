package audit

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

// Rule IDs. An ID is stable forever: a rule that is retired keeps its ID
// unused, and a new rule takes a new ID.
const (
	RuleDeniedCell           = "AF101"
	RuleOverrideReachable    = "AF102"
	RuleUnusedHeldTag        = "AF103"
	RuleUncallableTool       = "AF104"
	RuleOverBroadGrant       = "AF105"
	RuleSkillsNotHeld        = "AF106"
	RuleSkillToolUnreachable = "AF107"
	RuleRuntimeCapabilities  = "AF108"
	RuleTransitiveDelegation = "AF109"
	RuleCheckFailed          = "AF110"
	// RuleNewAccess is the "no new access" gate's (NewAccessRule), not a
	// rule of the catalog: Run never reports it.
	RuleNewAccess = "AF111"

	RuleUnresolvedRemote       = "AF201"
	RuleLockDrift              = "AF202"
	RuleDestructiveViaBroadTag = "AF203"
	RuleUntaggedRemoteOrShell  = "AF204"

	RuleBashNetworkUnrestricted = "AF301"
	RuleBashEnvInherit          = "AF302"
	RuleBashArbitraryCode       = "AF303"
	RuleHostWriteAccess         = "AF304"
	RuleCredentialNotSecret     = "AF305"
	RuleLiteralCredential       = "AF306"
	RuleSkillPythonScript       = "AF307"

	RuleExpiredWaiver = "AF401"
	RuleUnusedWaiver  = "AF402"
)

// catalog is every rule, in ID order, without HelpURI (derived from the
// ID). The checks that produce each rule's findings follow, one method of
// auditor per rule, called by runChecks; they are not fields of this table
// because every check looks its severity up here, which would make the
// table's initialization depend on itself.
var catalog = []Rule{
	{
		ID: RuleDeniedCell, Name: "DeniedCell", Severity: SeverityNote,
		Short: "An agent cannot call a registered tool.",
		Full:  "Every agent registers every enabled tool of the workspace, and its capability tags decide which it may call. A denied cell is usually intended; listing each one, with the tags that are missing, makes the boundary reviewable.",
	},
	{
		ID: RuleOverrideReachable, Name: "OverrideReachable", Severity: SeverityWarning,
		Short: "An extensible agent can reach tools it is denied through a session override.",
		Full:  "Under capability_policy = \"extensible\" a session's capability_override can add or replace tags, so every denied cell of the agent is one override away. The matrix then understates what the agent can do.",
	},
	{
		ID: RuleUnusedHeldTag, Name: "UnusedHeldTag", Severity: SeverityWarning,
		Short: "An agent holds a tag that satisfies no registered tool.",
		Full:  "A held tag that no enabled tool requires grants nothing today and is often a typo of the tag that was meant, which silently denies the intended tool. It also grants whatever tool starts requiring it later.",
	},
	{
		ID: RuleUncallableTool, Name: "UncallableTool", Severity: SeverityNote,
		Short: "No agent can call an enabled tool.",
		Full:  "An enabled tool that no agent's tags satisfy is built, resolved and shipped in every artifact but never used: either an agent lacks a grant it needs, or the tool can be disabled.",
	},
	{
		ID: RuleOverBroadGrant, Name: "OverBroadGrant", Severity: SeverityWarning,
		Short: "An agent holds a root namespace that grants many tools across several blocks.",
		Full:  "A tag without \"::\" (or \"*\") satisfies every tag below it, so one grant can cover ten or more tools from several tool blocks, including tools added later. Narrower tags keep each agent's access to what it needs.",
	},
	{
		ID: RuleSkillsNotHeld, Name: "SkillsNotHeld", Severity: SeverityWarning,
		Short: "The workspace declares skills but an agent cannot list them.",
		Full:  "Skills reach a model through the built-in skill tools, which require the \"skills\" tag. An agent without it cannot call list_skills, so the workspace's skills are invisible to it.",
	},
	{
		ID: RuleSkillToolUnreachable, Name: "SkillToolUnreachable", Severity: SeverityWarning,
		Short: "A skill's allowed-tools names a tool that an agent using the skill cannot call, or no tool at all.",
		Full:  "A skill's SKILL.md lists the tools its instructions rely on in allowed-tools. An agent that can read the skill but cannot call one of those tools will follow instructions it cannot carry out; an entry that names no registered tool grants nothing in this workspace.",
	},
	{
		ID: RuleRuntimeCapabilities, Name: "RuntimeCapabilities", Severity: SeverityWarning,
		Short: "An agent's capabilities or capability_policy come from runtime().",
		Full:  "When the tags or the policy are read from the environment when the agent starts, the plan and the audit can only use the default; a deployment can grant anything. Access that is decided at runtime cannot be reviewed before it ships.",
	},
	{
		ID: RuleTransitiveDelegation, Name: "TransitiveDelegation", Severity: SeverityWarning,
		Short: "An agent can make another workspace agent call a tool it cannot call itself.",
		Full:  "An a2a tool with target_agent names the workspace agent behind its URL. An agent that can send to it can ask that agent to call its own tools, so its effective access includes every tool the target can call.",
	},
	{
		ID: RuleCheckFailed, Name: "CheckFailed", Severity: SeverityError,
		Short: "A check block's assertion is false, or cannot be evaluated, for the plan's capability matrix.",
		Full:  "A check states what the workspace's access must be, for example that an agent can never call a shell. A failed check makes the plan fail; the audit reports it too, so that a report or a code-scanning upload is never greener than the plan. It cannot be waived: change the configuration or the check.",
	},
	{
		ID: RuleUnresolvedRemote, Name: "UnresolvedRemote", Severity: SeverityWarning,
		Short: "A remote tool's definition is neither resolved nor pinned.",
		Full:  "An MCP server whose tools could not be listed, with no lock entry, is one opaque column: nobody has seen what it serves. An A2A agent without a pinned card cannot be checked for a changed card. Both defeat trust on first use.",
	},
	{
		ID: RuleLockDrift, Name: "LockDrift", Severity: SeverityError,
		Short: "A remote tool definition changed since it was locked.",
		Full:  "MCP tool lists and A2A cards are trusted on first use and pinned in agentform.lock.hcl. A definition that changes afterwards may be a tool-poisoning \"rug pull\": the description a model reads or the schema it fills changed without review.",
	},
	{
		ID: RuleDestructiveViaBroadTag, Name: "DestructiveViaBroadTag", Severity: SeverityWarning,
		Short: "An agent reaches a destructive or open-world MCP tool only through a broad tag.",
		Full:  "An MCP tool annotated destructive or open-world, or not annotated as safe (the MCP specification says to assume destructive), deserves a deliberate grant. When every tag it requires is satisfied only by a shorter, broader held tag, the agent got it by accident of namespace.",
	},
	{
		ID: RuleUntaggedRemoteOrShell, Name: "UntaggedRemoteOrShell", Severity: SeverityWarning,
		Short: "An mcp, a2a or bash tool block has no capabilities, so every agent can call it.",
		Full:  "A tool that requires no tag is callable by every agent of the workspace, including agents added later. Remote tools and shells are where an injected prompt does the most damage; gate them with a tag.",
	},
	{
		ID: RuleBashNetworkUnrestricted, Name: "BashNetworkUnrestricted", Severity: SeverityWarning,
		Short: "A bash tool has the network enabled without allowed_url_prefixes.",
		Full:  "Commands of a bash tool with an unrestricted network can reach any host: a prompt-injected agent can send what it reads anywhere. allowed_url_prefixes limits egress to the services the tool needs.",
	},
	{
		ID: RuleBashEnvInherit, Name: "BashEnvInherit", Severity: SeverityWarning,
		Short: "A bash tool inherits the agent's whole environment, or all of it but a deny list that leaves a secret out.",
		Full:  "env.kind = \"inherit\" passes every environment variable of the agent process to the tool's commands, including API keys and tokens the agent was started with; env.kind = \"deny\" does the same but for the variables it lists, and is reported when it leaves out one the workspace reads with secret(runtime(...)). List what the commands need with kind = \"allow\".",
	},
	{
		ID: RuleBashArbitraryCode, Name: "BashArbitraryCode", Severity: SeverityWarning,
		Short: "A bash tool allows a shell, an interpreter or a command runner.",
		Full:  "A bash tool's commands list is an allow-list. A shell (sh, bash), an interpreter (python, node, awk) or a command runner (env, xargs, busybox) runs arbitrary code, so allowing one allows everything.",
	},
	{
		ID: RuleHostWriteAccess, Name: "HostWriteAccess", Severity: SeverityWarning,
		Short: "A tool can write to a host directory.",
		Full:  "A bash fs of kind \"read_write\", or a filesystem mount whose host backend is not wrapped in read_only, lets tools change or delete files on the machine the agent runs on. Overlays keep writes in memory.",
	},
	{
		ID: RuleCredentialNotSecret, Name: "CredentialNotSecret", Severity: SeverityError,
		Short: "A credential is read with runtime() but not marked secret().",
		Full:  "A value read with runtime() alone is an ordinary value: its default can be written into plans, artifacts and output. Credentials (auth tokens, API keys, authorization headers, secret config) must be wrapped in secret(runtime(...)).",
	},
	{
		ID: RuleLiteralCredential, Name: "LiteralCredential", Severity: SeverityError,
		Short: "A credential is written in the manifest as a literal.",
		Full:  "A token, API key or authorization header written in an .acl file is readable by everyone with the workspace and stays in version-control history. Rotate it and read it when the agent starts with secret(runtime(\"ENV\")).",
	},
	{
		ID: RuleSkillPythonScript, Name: "SkillPythonScript", Severity: SeverityWarning,
		Short: "A skill ships Python scripts that an agent can run with the host access of serve's user.",
		Full:  "run_skill_script runs a skill's .sh script with shell builtins only, confined to a copy of the skill, but a .py script runs in python3 with the file and network access of the user running agentform serve. An agent that can call run_skill_script (skills::execute) can run every such script of every skill, with arguments the model chooses.",
	},
	{
		ID: RuleExpiredWaiver, Name: "ExpiredWaiver", Severity: SeverityWarning,
		Short: "A waiver has expired.",
		Full:  "A waiver's expires date forces the accepted risk to be reviewed again. Once it passes, the waiver stops applying and the findings it accepted are reported again.",
	},
	{
		ID: RuleUnusedWaiver, Name: "UnusedWaiver", Severity: SeverityNote,
		Short: "A waiver matches no finding.",
		Full:  "A waiver that accepts nothing is stale (the finding was fixed) or wrong (a typo in its rule ID or target). Stale waivers hide the next finding that happens to match them.",
	},
}

// Rules returns the whole rule catalog, sorted by ID. The slice is a
// copy: callers may modify it.
func Rules() []Rule {
	out := slices.Clone(catalog)
	for i := range out {
		out[i].HelpURI = HelpBase + out[i].ID + ".md"
	}
	slices.SortFunc(out, func(x, y Rule) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// NewAccessRule is the rule of the "no new access" gate (CompareState,
// CompareBaseline): an agent can call a tool it could not call in the
// baseline. It is not in the catalog, since Run does not check it and a
// waiver cannot accept it; SARIF and JUnit, which have no place for the
// gate of their own, report each access it finds granted under it.
func NewAccessRule() Rule {
	return Rule{
		ID: RuleNewAccess, Name: "NewAccess", Severity: SeverityError,
		Short:   "An agent can call a tool it could not call in the baseline.",
		Full:    "With -against=state or -baseline=FILE, the audit is a \"no new access\" gate: every agent → tool permission granted since the last apply, or since the baseline report, fails it, whatever -fail-on says. Each one is a change of what an agent can do that someone should review before it ships.",
		HelpURI: HelpBase + RuleNewAccess + ".md",
	}
}

// RuleByID returns the catalog entry of a rule ID, and whether there is
// one.
func RuleByID(id string) (Rule, bool) {
	for _, r := range catalog {
		if r.ID == id {
			r.HelpURI = HelpBase + r.ID + ".md"
			return r, true
		}
	}
	return Rule{}, false
}

// runChecks applies every rule's check. The order does not matter:
// findings are sorted afterwards.
func (a *auditor) runChecks() {
	for _, check := range []func(){
		a.checkDeniedCells, a.checkOverrideReachable, a.checkUnusedHeldTags,
		a.checkUncallableTools, a.checkOverBroadGrants, a.checkSkillsNotHeld,
		a.checkSkillTools, a.checkRuntimeCapabilities, a.checkTransitiveDelegation,
		a.checkFailedChecks,
		a.checkUnresolvedRemotes, a.checkLockDrift, a.checkDestructiveViaBroadTag,
		a.checkUntaggedRemoteOrShell,
		a.checkBashNetwork, a.checkBashEnv, a.checkBashCommands, a.checkHostWrites,
		a.checkCredentials, a.checkSkillPythonScripts,
	} {
		check()
	}
}

// ---------------------------------------------------------------------------
// AF1xx capability

// checkDeniedCells reports every denied cell (AF101).
func (a *auditor) checkDeniedCells() {
	for ai, ag := range a.m.Agents() {
		decl := a.cfg.Agent(ag.Name)
		if decl == nil {
			continue
		}
		rng := capsRange(decl)
		for _, ti := range a.m.Denied(ai) {
			c := a.m.Cell(ai, ti)
			a.add(RuleDeniedCell, Finding{
				Message: fmt.Sprintf("Agent %q cannot call %q: it holds no tag satisfying %s.", ag.Name, c.Tool, quoteNames(c.Missing, 0)),
				Target:  "agent." + ag.Name, Agent: ag.Name, Tool: c.Tool, Range: rng,
			}, "")
		}
	}
}

// checkOverrideReachable reports every extensible agent that is denied
// something (AF102).
func (a *auditor) checkOverrideReachable() {
	tools := a.m.Tools()
	for ai, ag := range a.m.Agents() {
		decl := a.cfg.Agent(ag.Name)
		if decl == nil || ag.Policy != capability.Extensible {
			continue
		}
		denied := a.m.Denied(ai)
		if len(denied) == 0 {
			continue
		}
		names := make([]string, len(denied))
		for i, ti := range denied {
			names[i] = tools[ti].Name
		}
		rng := capsRange(decl)
		if decl.CapabilityPolicy.Set {
			rng = decl.CapabilityPolicy.Range.Ptr()
		}
		a.add(RuleOverrideReachable, Finding{
			Message: fmt.Sprintf("Agent %q has capability_policy = \"extensible\", so a session override can reach %s it is otherwise denied: %s. Use \"locked\" unless sessions must widen access, and assert what must stay out of reach with check blocks.",
				ag.Name, auditPlural(len(names), "tool"), quoteNames(names, 5)),
			Target: "agent." + ag.Name, Agent: ag.Name, Range: rng,
		}, "")
	}
}

// tagNamespaces returns tag and each of its "::"-prefixes: every held tag
// that would satisfy it.
func tagNamespaces(tag string) []string {
	out := []string{tag}
	for i := 0; i+len(capability.Separator) <= len(tag); i++ {
		if strings.HasPrefix(tag[i:], capability.Separator) && i > 0 {
			out = append(out, tag[:i])
		}
	}
	return out
}

// enabledTools returns the matrix columns: enabled registered tools.
func (a *auditor) enabledTools() []planner.RegisteredTool {
	var out []planner.RegisteredTool
	for _, t := range a.p.Tools {
		if t.Enabled {
			out = append(out, t)
		}
	}
	return out
}

// checkUnusedHeldTags reports every held tag that satisfies no required
// tag of an enabled tool (AF103), with the closest tag or namespace that
// a tool does require.
func (a *auditor) checkUnusedHeldTags() {
	useful := map[string]bool{}
	for _, t := range a.enabledTools() {
		for _, r := range t.Requires {
			for _, ns := range tagNamespaces(r) {
				useful[ns] = true
			}
		}
	}
	var candidates []string
	for tag := range useful {
		candidates = append(candidates, tag)
	}
	slices.Sort(candidates)
	for _, decl := range a.cfg.Agents {
		seen := map[string]bool{}
		for i, held := range decl.Capabilities.Values {
			if held == "" || seen[held] || useful[held] {
				seen[held] = true
				continue
			}
			seen[held] = true
			msg := fmt.Sprintf("Agent %q holds %q, which satisfies no registered tool: it grants nothing.", decl.Name, held)
			if s := closestTag(held, candidates); s != "" {
				msg += fmt.Sprintf(" Did you mean %q?", s)
			} else {
				msg += " Remove it, or correct it to a tag a tool requires."
			}
			a.add(RuleUnusedHeldTag, Finding{
				Message: msg, Target: "agent." + decl.Name, Agent: decl.Name,
				Range: elemRange(decl.Capabilities, i, decl.DeclRange),
			}, held)
		}
	}
}

// closestTag returns the candidate nearest to given by edit distance, when
// it is near enough to be a likely typo; ties go to the first in order.
// At most half of given may change: "db" is no typo of "fs", and the
// suggestion, a tag to hold, could grant what was never meant.
func closestTag(given string, candidates []string) string {
	limit := min(max(3, len(given)/3+1), len(given)/2+1) // a distance below limit is a suggestion
	if limit < 1 {
		return ""
	}
	best, bestDist := "", limit
	params := levenshtein.NewParams()
	for _, c := range candidates {
		// MaxCost lets Distance stop early once c cannot beat the best.
		if d := levenshtein.Distance(given, c, params.MaxCost(bestDist)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// checkUncallableTools reports every tool block with enabled tools that no
// agent can call (AF104). The built-in skill tools are left out: whether
// agents use skills is AF106's concern, and an unused run_skill_script is
// the safe default.
func (a *auditor) checkUncallableTools() {
	agents := len(a.m.Agents())
	decls := make(map[string]*manifest.Tool, len(a.cfg.Tools))
	for _, t := range a.cfg.Tools {
		if decls[t.Name] == nil {
			decls[t.Name] = t
		}
	}
	for _, block := range sortedMapKeys(a.blockTools) {
		name, isTool := strings.CutPrefix(block, "tool.")
		decl := decls[name]
		if !isTool || decl == nil {
			continue
		}
		tools := a.blockTools[block]
		var uncallable []string
		for _, t := range tools {
			ti, ok := a.m.ToolIndex(t.Name)
			if !ok {
				continue
			}
			callable := false
			for ai := 0; ai < agents && !callable; ai++ {
				callable = a.m.Allowed(ai, ti)
			}
			if !callable {
				uncallable = append(uncallable, t.Name)
			}
		}
		if len(uncallable) == 0 {
			continue
		}
		f := Finding{Target: block, Range: decl.DeclRange.Ptr()}
		if len(tools) == 1 {
			f.Tool = tools[0].Name
			f.Message = fmt.Sprintf("No agent can call %q: no agent holds tags satisfying %s. Grant the tags to the agent that needs it, or disable the tool (enabled = false).",
				tools[0].Name, quoteNames(tools[0].Requires, 0))
		} else {
			f.Message = fmt.Sprintf("No agent can call %d of the %d tools that tool %q registers: %s. Grant the tags to the agents that need them, or disable the tool (enabled = false) or leave them out of expose.",
				len(uncallable), len(tools), name, quoteNames(uncallable, 5))
		}
		a.add(RuleUncallableTool, f, "")
	}
}

// Thresholds of AF105.
const (
	overBroadTools  = 10
	overBroadBlocks = 2
)

// checkOverBroadGrants reports every held root namespace (or "*") that
// satisfies overBroadTools or more enabled tools from overBroadBlocks or
// more blocks (AF105).
func (a *auditor) checkOverBroadGrants() {
	type root struct {
		tools, blocks, narrower map[string]bool
	}
	roots := map[string]*root{}
	for _, t := range a.enabledTools() {
		for _, r := range t.Requires {
			first, rest, nested := strings.Cut(r, capability.Separator)
			e := roots[first]
			if e == nil {
				e = &root{tools: map[string]bool{}, blocks: map[string]bool{}, narrower: map[string]bool{}}
				roots[first] = e
			}
			e.tools[t.Name], e.blocks[t.Block] = true, true
			if nested {
				second, _, _ := strings.Cut(rest, capability.Separator)
				e.narrower[first+capability.Separator+second] = true
			}
		}
	}
	for _, decl := range a.cfg.Agents {
		seen := map[string]bool{}
		for i, held := range decl.Capabilities.Values {
			if seen[held] || strings.Contains(held, capability.Separator) {
				continue
			}
			seen[held] = true
			e := roots[held]
			if e == nil || len(e.tools) < overBroadTools || len(e.blocks) < overBroadBlocks {
				continue
			}
			advice := fmt.Sprintf("Give the tools narrower requirements (like %q) and hold only those the agent needs.", held+capability.Separator+"read")
			if len(e.narrower) > 0 {
				advice = fmt.Sprintf("Hold narrower tags for what the agent needs, such as %s.", quoteNames(sortedMapKeys(e.narrower), 5))
			}
			a.add(RuleOverBroadGrant, Finding{
				Message: fmt.Sprintf("Agent %q holds the root namespace %q, which satisfies %d registered tools across %d tool blocks (%s), and any tool added under it later. %s",
					decl.Name, held, len(e.tools), len(e.blocks), strings.Join(sortedMapKeys(e.blocks), ", "), advice),
				Target: "agent." + decl.Name, Agent: decl.Name,
				Range: elemRange(decl.Capabilities, i, decl.DeclRange),
			}, held)
		}
	}
}

// checkSkillsNotHeld reports every agent that cannot call list_skills in
// a workspace with skills (AF106).
func (a *auditor) checkSkillsNotHeld() {
	if len(a.cfg.Skills) == 0 {
		return
	}
	ti, ok := a.m.ToolIndex("list_skills")
	if !ok {
		return
	}
	for ai, ag := range a.m.Agents() {
		decl := a.cfg.Agent(ag.Name)
		if decl == nil || a.m.Allowed(ai, ti) {
			continue
		}
		a.add(RuleSkillsNotHeld, Finding{
			Message: fmt.Sprintf("The workspace declares %s, but agent %q cannot call list_skills (it holds no tag satisfying %s), so no skill reaches it. Grant it \"skills\" if it should use them.",
				auditPlural(len(a.cfg.Skills), "skill"), ag.Name, quoteNames(a.m.Cell(ai, ti).Missing, 0)),
			Target: "agent." + ag.Name, Agent: ag.Name, Tool: "list_skills", Range: capsRange(decl),
		}, "")
	}
}

// checkSkillTools reports every allowed-tools entry of a skill that names
// no registered tool, and every one that an agent able to read the skill
// (it can call get_skill) cannot call (AF107). Entries with parentheses
// ("Bash(git:*)") are host permission patterns, not tool names, and are
// left alone.
func (a *auditor) checkSkillTools() {
	if a.ws == nil {
		return
	}
	readers := []int{}
	if gi, ok := a.m.ToolIndex("get_skill"); ok {
		for ai := range a.m.Agents() {
			if a.m.Allowed(ai, gi) {
				readers = append(readers, ai)
			}
		}
	}
	agents := a.m.Agents()
	for _, name := range sortedMapKeys(a.ws.Skills) {
		skill := a.ws.Skills[name]
		decl := a.skill(name)
		if skill == nil || decl == nil {
			continue
		}
		rng := strRange(decl.Source, decl.DeclRange)
		target := "skill." + name
		for _, entry := range skill.AllowedTools {
			if strings.ContainsAny(entry, "()") {
				continue
			}
			rt, known := a.tools[entry]
			if !known {
				a.add(RuleSkillToolUnreachable, Finding{
					Message: fmt.Sprintf("Skill %q lists %q in allowed-tools, which names no registered tool of this workspace, so the entry grants nothing here. Correct the name, or remove the entry.", name, entry),
					Target:  target, Range: rng,
				}, entry)
				continue
			}
			for _, ai := range readers {
				if a.callable(ai, entry) {
					continue
				}
				why := "the tool is disabled"
				if ti, ok := a.m.ToolIndex(entry); ok && rt.Enabled {
					why = "it holds no tag satisfying " + quoteNames(a.m.Cell(ai, ti).Missing, 0)
				}
				ag := agents[ai].Name
				a.add(RuleSkillToolUnreachable, Finding{
					Message: fmt.Sprintf("Agent %q can read skill %q, whose allowed-tools lists %q, but cannot call that tool (%s): the skill's instructions will fail for it. Grant the agent the tool's tags, or remove the entry.", ag, name, entry, why),
					Target:  target, Agent: ag, Tool: entry, Range: rng,
				}, "")
			}
		}
	}
}

// skill returns the skill block with the given name, or nil.
func (a *auditor) skill(name string) *manifest.Skill {
	for _, s := range a.cfg.Skills {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// checkRuntimeCapabilities reports capabilities and capability_policy
// read with runtime() (AF108).
func (a *auditor) checkRuntimeCapabilities() {
	for _, decl := range a.cfg.Agents {
		if ref := decl.Capabilities.Runtime; ref != nil {
			used := "its default"
			if !ref.HasDefault() || ref.Secret {
				used = "no tags (the reference has no usable default)"
			}
			a.add(RuleRuntimeCapabilities, Finding{
				Message: fmt.Sprintf("Agent %q takes its capabilities from runtime(%q): this audit uses %s, but the agent holds whatever the environment says when it starts, so its access cannot be reviewed here. Write the tags in the manifest.", decl.Name, ref.Env, used),
				Target:  "agent." + decl.Name, Agent: decl.Name, Range: decl.Capabilities.Range.Ptr(),
			}, "capabilities")
		}
		if ref := decl.CapabilityPolicy.Runtime; ref != nil {
			a.add(RuleRuntimeCapabilities, Finding{
				Message: fmt.Sprintf("Agent %q takes its capability_policy from runtime(%q): a deployment can make it extensible, letting session overrides widen its access beyond this report. Write the policy in the manifest.", decl.Name, ref.Env),
				Target:  "agent." + decl.Name, Agent: decl.Name, Range: decl.CapabilityPolicy.Range.Ptr(),
			}, "capability_policy")
		}
	}
}

// checkTransitiveDelegation reports every tool an agent cannot call but
// can make a workspace agent call through an a2a tool whose target_agent
// is that agent (AF109). One hop is followed: a longer chain shows up as
// the first hop's agent reaching the next a2a tool.
func (a *auditor) checkTransitiveDelegation() {
	agents := a.m.Agents()
	type pair struct{ agent, tool string }
	via := map[pair][]string{}
	for _, t := range a.cfg.Tools {
		if t.A2A == nil || !t.A2A.TargetAgent.Set || t.A2A.TargetAgent.Value == "" {
			continue
		}
		target := t.A2A.TargetAgent.Value
		yi, ok := a.agentIndex(target)
		if !ok {
			continue
		}
		send := "a2a_" + t.Name + "_send"
		si, ok := a.m.ToolIndex(send)
		if !ok {
			continue
		}
		reach := a.m.Reachable(yi)
		for xi, x := range agents {
			if xi == yi || !a.m.Allowed(xi, si) {
				continue
			}
			for _, tool := range reach {
				if !a.callable(xi, tool) {
					k := pair{x.Name, tool}
					via[k] = append(via[k], fmt.Sprintf("agent %q (through %s)", target, send))
				}
			}
		}
	}
	for k, routes := range via {
		decl := a.cfg.Agent(k.agent)
		if decl == nil {
			continue
		}
		slices.Sort(routes)
		a.add(RuleTransitiveDelegation, Finding{
			Message: fmt.Sprintf("Agent %q cannot call %q, but it can make %s call it. Make sure the target may act on its behalf, or stop %q from delegating.", k.agent, k.tool, strings.Join(routes, " or "), k.agent),
			Target:  "agent." + k.agent, Agent: k.agent, Tool: k.tool, Range: capsRange(decl),
		}, "")
	}
}

// checkFailedChecks reports every check that failed or could not be
// evaluated (AF110). Its target, check.NAME, is not an address a waiver
// can name: a check is the workspace's own assertion.
func (a *auditor) checkFailedChecks() {
	for _, c := range a.p.Checks {
		if c.Status == planner.CheckPass {
			continue
		}
		msg := fmt.Sprintf("Check %q failed: %s", c.Name, c.Message)
		if c.Status == planner.CheckError {
			// The finding is located already: the diagnostic's own
			// text, without the position Error() starts with.
			why := c.Message
			if errs := c.Diagnostics.Errs(); len(errs) > 0 {
				if d, ok := errs[0].(*hcl.Diagnostic); ok {
					why = d.Summary + ": " + d.Detail
				}
			}
			msg = fmt.Sprintf("Check %q cannot be evaluated: %s", c.Name, why)
		}
		if !strings.HasSuffix(msg, ".") {
			msg += "."
		}
		// The check is the finding, not its status: one that goes from
		// failing to not evaluating (a tool renamed) keeps its identity,
		// so code scanning keeps one alert open rather than closing it
		// and opening another.
		a.add(RuleCheckFailed, Finding{Target: "check." + c.Name, Range: c.Range, Message: msg}, "")
	}
}

// ---------------------------------------------------------------------------
// AF2xx supply chain and lock

// locked reports whether the lockfile the plan implies pins a tool block.
func (a *auditor) locked(block string) bool {
	return a.p.Lock != nil && a.p.Lock.Tools[block] != nil
}

// toolDisabled reports whether a tool block is switched off at build time.
func toolDisabled(t *manifest.Tool) bool { return t.Enabled.Known() && !t.Enabled.Value }

// checkUnresolvedRemotes reports mcp blocks whose tools are unknown and
// a2a blocks whose card is not pinned (AF201).
func (a *auditor) checkUnresolvedRemotes() {
	for _, t := range a.cfg.Tools {
		if toolDisabled(t) || a.locked(t.Name) {
			continue
		}
		var res *resolve.Resolved
		if a.ws != nil {
			res = a.ws.Tools[t.Name]
		}
		switch t.Kind {
		case manifest.KindMCP:
			unresolved := res == nil || res.Unresolved
			if a.ws == nil {
				unresolved = false
				for _, rt := range a.blockTools["tool."+t.Name] {
					unresolved = unresolved || !rt.Resolved
				}
			}
			if !unresolved {
				continue
			}
			a.add(RuleUnresolvedRemote, Finding{
				Message: fmt.Sprintf("MCP tool %q is unresolved: its server could not be listed and %s has no entry for it, so nobody has reviewed which tools it serves or what they say. Run agentform lock where the server is reachable (with its runtime values set), review the tools it pins, and commit the lockfile.", t.Name, lockfile.FileName),
				Target:  "tool." + t.Name, Range: t.DeclRange.Ptr(),
			}, "")
		case manifest.KindA2A:
			if res != nil && res.Pin != nil {
				continue
			}
			a.add(RuleUnresolvedRemote, Finding{
				Message: fmt.Sprintf("A2A tool %q has no pinned agent card: neither this plan nor %s holds one, so a card that changes cannot be detected. Run agentform lock where the agent is reachable (with its runtime URL set), review the card it pins, and commit the lockfile.", t.Name, lockfile.FileName),
				Target:  "tool." + t.Name, Range: t.DeclRange.Ptr(),
			}, "")
		}
	}
}

// checkLockDrift reports every lock drift error of the plan (AF202).
func (a *auditor) checkLockDrift() {
	for _, d := range a.p.Drift {
		f := Finding{Message: d.Summary + ".", Range: d.Subject}
		key := d.Summary
		detail, ok := d.Extra.(resolve.DriftDetail)
		if !ok {
			key += "\x00" + d.Detail
		} else {
			f.Target = "tool." + detail.Block
			f.Message = fmt.Sprintf("%s: tool %q.", d.Summary, detail.Block)
			if detail.Served != "" {
				key += "\x00" + detail.Served
				f.Tool = detail.Block + "__" + detail.Served
				f.Message = fmt.Sprintf("%s: %q of tool %q.", d.Summary, detail.Served, detail.Block)
			}
		}
		if detail, ok := d.Extra.(resolve.DriftDetail); ok && detail.SinceApply {
			// Against the last apply: the plan shows the change beside
			// what state recorded (the new text alone where state holds
			// only digests).
			f.Message += " Review the change (agentform plan shows it against the last apply), then run agentform lock -upgrade to accept it."
		} else {
			f.Message += " Review the change (agentform plan shows old beside new), then run agentform lock -upgrade to accept it."
		}
		a.add(RuleLockDrift, f, key)
	}
}

// mcpHints are the behaviour hints of MCP tool annotations.
type mcpHints struct {
	ReadOnly    *bool `json:"readOnlyHint"`
	Destructive *bool `json:"destructiveHint"`
	OpenWorld   *bool `json:"openWorldHint"`
}

// riskyAnnotations says why a served tool must be treated as destructive
// or open-world, or returns "" when its annotations say it is safe. The
// MCP specification's defaults apply: a tool without destructiveHint is
// destructive unless it is read-only.
func riskyAnnotations(raw json.RawMessage) string {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" || trimmed == "{}" {
		return "has no annotations (MCP says to assume a tool is destructive)"
	}
	var h mcpHints
	if err := json.Unmarshal(raw, &h); err != nil {
		return "has annotations agentform cannot read"
	}
	switch {
	case h.Destructive != nil && *h.Destructive:
		return "is annotated destructiveHint: true"
	case h.OpenWorld != nil && *h.OpenWorld:
		return "is annotated openWorldHint: true"
	case h.Destructive == nil && (h.ReadOnly == nil || !*h.ReadOnly):
		return "is neither read-only nor annotated destructiveHint: false (MCP says to assume a tool is destructive)"
	}
	return ""
}

// tagSegments counts a tag's namespace segments.
func tagSegments(tag string) int { return strings.Count(tag, capability.Separator) + 1 }

// checkDestructiveViaBroadTag reports every (agent, served MCP tool) where
// the tool is destructive or open-world and every tag it requires is
// satisfied only by a shorter held tag (AF203).
func (a *auditor) checkDestructiveViaBroadTag() {
	if a.ws == nil {
		return
	}
	agents := a.m.Agents()
	for _, t := range a.enabledTools() {
		if t.Kind != manifest.KindMCP || len(t.Requires) == 0 {
			continue
		}
		served, ok := a.servedTool(t)
		if !ok {
			continue
		}
		why := riskyAnnotations(served.Annotations)
		ti, inMatrix := a.m.ToolIndex(t.Name)
		if why == "" || !inMatrix {
			continue
		}
		for ai, ag := range agents {
			if !a.m.Allowed(ai, ti) {
				continue
			}
			c := a.m.Cell(ai, ti)
			broad := true
			var grants []string
			for _, r := range c.Requires {
				held := c.Matched[r]
				broad = broad && tagSegments(held) < tagSegments(r)
				grants = append(grants, fmt.Sprintf("%q satisfies %q", held, r))
			}
			decl := a.cfg.Agent(ag.Name)
			if !broad || decl == nil {
				continue
			}
			rng := capsRange(decl)
			if i := slices.Index(decl.Capabilities.Values, c.Matched[c.Requires[0]]); i >= 0 {
				rng = elemRange(decl.Capabilities, i, decl.DeclRange)
			}
			a.add(RuleDestructiveViaBroadTag, Finding{
				Message: fmt.Sprintf("Agent %q can call %q, which %s, only through broad tags (%s). Grant %s deliberately, or narrow the agent's tags.",
					ag.Name, t.Name, why, strings.Join(grants, "; "), quoteNames(c.Requires, 0)),
				Target: "agent." + ag.Name, Agent: ag.Name, Tool: t.Name, Range: rng,
			}, "")
		}
	}
}

// servedTool returns the resolved definition of a registered mcp tool.
func (a *auditor) servedTool(t planner.RegisteredTool) (resolve.Tool, bool) {
	res := a.ws.Tools[strings.TrimPrefix(t.Block, "tool.")]
	if res == nil || res.Unresolved {
		return resolve.Tool{}, false
	}
	for _, st := range res.Tools {
		if st.Name == t.Name {
			return st, true
		}
	}
	return resolve.Tool{}, false
}

// checkUntaggedRemoteOrShell reports enabled mcp, a2a and bash blocks with
// no capabilities whose tools every agent can call (AF204).
func (a *auditor) checkUntaggedRemoteOrShell() {
	for _, t := range a.cfg.Tools {
		switch t.Kind {
		case manifest.KindMCP, manifest.KindA2A, manifest.KindBash:
		default:
			continue
		}
		if toolDisabled(t) || len(t.Capabilities.Values) > 0 {
			continue
		}
		var open []string
		for _, rt := range a.blockTools["tool."+t.Name] {
			if len(rt.Requires) == 0 {
				open = append(open, rt.Name)
			}
		}
		if len(open) == 0 {
			continue
		}
		what := "it"
		if len(open) > 1 || open[0] != t.Name {
			what = quoteNames(open, 5)
		}
		rng := t.DeclRange.Ptr()
		if t.Capabilities.Set {
			rng = t.Capabilities.Range.Ptr()
		}
		a.add(RuleUntaggedRemoteOrShell, Finding{
			Message: fmt.Sprintf("The %s tool %q has no capabilities, so every agent of the workspace (and every agent added later) can call %s. Add capabilities = [\"...\"] and grant the tag only to the agents that need it.", t.Kind, t.Name, what),
			Target:  "tool." + t.Name, Range: rng,
		}, "")
	}
}

// ---------------------------------------------------------------------------
// AF3xx sandbox and secrets

// enabledBash returns the bash tool blocks that are not switched off.
func (a *auditor) enabledBash() []*manifest.Tool {
	var out []*manifest.Tool
	for _, t := range a.cfg.Tools {
		if t.Bash != nil && !toolDisabled(t) {
			out = append(out, t)
		}
	}
	return out
}

// checkBashNetwork reports bash tools with an unrestricted network (AF301).
func (a *auditor) checkBashNetwork() {
	for _, t := range a.enabledBash() {
		n := t.Bash.Network
		if n == nil || !n.Enabled.Value || len(n.AllowedURLPrefixes.Values) > 0 {
			continue
		}
		a.add(RuleBashNetworkUnrestricted, Finding{
			Message: fmt.Sprintf("Bash tool %q enables the network without allowed_url_prefixes, so its commands can reach any host: an injected prompt can send what the agent reads anywhere. List the URL prefixes the tool needs.", t.Name),
			Target:  "tool." + t.Name, Range: boolRange(n.Enabled, n.DeclRange),
		}, "network")
	}
}

// boolRange is where a bool argument is written, or fallback.
func boolRange(b manifest.Bool, fallback hcl.Range) *hcl.Range {
	if b.Set && b.Range.Filename != "" {
		return b.Range.Ptr()
	}
	return fallback.Ptr()
}

// checkBashEnv reports bash tools that inherit the environment (AF302),
// and those that inherit it but a deny list that leaves out a variable
// the workspace reads with secret(runtime(...)).
func (a *auditor) checkBashEnv() {
	secrets := sync.OnceValue(func() []string { return planner.SecretEnv(a.cfg) })
	for _, t := range a.enabledBash() {
		e := t.Bash.Env
		if e == nil {
			continue
		}
		if e.Kind.Value == "deny" && e.Vars.Known() && len(e.Vars.ElemRuntime) == 0 {
			var passed []string
			for _, env := range secrets() {
				if !slices.Contains(e.Vars.Values, env) {
					passed = append(passed, env)
				}
			}
			if len(passed) > 0 {
				them := "them"
				if len(passed) == 1 {
					them = "it"
				}
				a.add(RuleBashEnvInherit, Finding{
					Message: fmt.Sprintf("Bash tool %q passes on the agent's whole environment but the variables env.vars lists (env.kind = \"deny\"), and the list leaves out %s, which the workspace reads with secret(runtime(...)): the tool's commands can read %s. Add %s to vars, or better, use kind = \"allow\" with the variables the commands need.",
						t.Name, quoteNames(passed, 5), them, them),
					Target: "tool." + t.Name, Range: strRange(e.Kind, e.DeclRange),
				}, "env")
			}
			continue
		}
		if e.Kind.Value != "inherit" {
			continue
		}
		a.add(RuleBashEnvInherit, Finding{
			Message: fmt.Sprintf("Bash tool %q inherits the agent's whole environment (env.kind = \"inherit\"), including any API keys and tokens the agent was started with. Use kind = \"allow\" with the variables its commands need.", t.Name),
			Target:  "tool." + t.Name, Range: strRange(e.Kind, e.DeclRange),
		}, "env")
	}
}

// arbitraryCode classifies the commands that run arbitrary code, by
// normalised name (see commandName). The list is documented in
// docs/rules/AF303.md; keep the two in step.
var arbitraryCode = func() map[string]string {
	out := map[string]string{}
	for class, names := range map[string][]string{
		"a shell":          {"ash", "bash", "csh", "dash", "fish", "ksh", "mksh", "pwsh", "sh", "tcsh", "zsh"},
		"an interpreter":   {"awk", "bun", "deno", "gawk", "irb", "lua", "luajit", "mawk", "nawk", "node", "nodejs", "perl", "php", "pypy", "python", "ruby", "tclsh"},
		"a command runner": {"busybox", "doas", "env", "eval", "exec", "nice", "nohup", "parallel", "stdbuf", "su", "sudo", "time", "timeout", "watch", "xargs"},
	} {
		for _, n := range names {
			out[n] = class
		}
	}
	return out
}()

// commandName normalises a commands entry to what arbitraryCode is keyed
// by: the first word, its base name, lower case, without ".exe" and
// without a trailing version ("python3.12" → "python", "lua5.4" → "lua").
func commandName(cmd string) string {
	fields := strings.Fields(cmd)
	if len(fields) == 0 {
		return ""
	}
	name := strings.ToLower(fields[0])
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSuffix(name, ".exe")
	return strings.TrimRight(name, "0123456789.-")
}

// checkBashCommands reports every allowed command that runs arbitrary
// code (AF303).
func (a *auditor) checkBashCommands() {
	for _, t := range a.enabledBash() {
		cmds := t.Bash.Commands
		for i, cmd := range cmds.Values {
			class, ok := arbitraryCode[commandName(cmd)]
			if !ok {
				continue
			}
			a.add(RuleBashArbitraryCode, Finding{
				Message: fmt.Sprintf("Bash tool %q allows %q, %s: it runs arbitrary code, so allowing it allows every command. Remove it, and give the task it serves a dedicated tool.", t.Name, cmd, class),
				Target:  "tool." + t.Name, Range: elemRange(cmds, i, t.DeclRange),
			}, cmd)
		}
	}
}

// writableHost returns the host directory a backend lets tools write, or
// "": a host backend at the top or as an overlay's upper layer is
// writable; anything under read_only, and an overlay's lower layer, is
// not.
func writableHost(b *manifest.Backend) string {
	if b == nil {
		return ""
	}
	switch b.Kind {
	case "host":
		return b.Root
	case "overlay":
		return writableHost(b.Upper)
	}
	return ""
}

// checkHostWrites reports bash fs read_write and writable host mounts of
// the filesystem block (AF304).
func (a *auditor) checkHostWrites() {
	for _, t := range a.enabledBash() {
		fs := t.Bash.FS
		if fs == nil || fs.Kind.Value != "read_write" {
			continue
		}
		a.add(RuleHostWriteAccess, Finding{
			Message: fmt.Sprintf("Bash tool %q mounts the host directory %q read-write (fs.kind = \"read_write\"): its commands can change or delete files on the host. Use kind = \"overlay\", which keeps writes in memory.", t.Name, fs.Path.Value),
			Target:  "tool." + t.Name, Range: strRange(fs.Kind, fs.DeclRange),
		}, "fs")
	}
	if a.cfg.Filesystem == nil {
		return
	}
	for _, m := range a.cfg.Filesystem.Mounts {
		root := writableHost(m.Backend)
		if root == "" {
			continue
		}
		a.add(RuleHostWriteAccess, Finding{
			Message: fmt.Sprintf("The filesystem mount at %q exposes the host directory %q writable: tools can change or delete files on the host. Wrap the backend in { kind = \"read_only\", inner = ... }, or use an overlay whose upper layer is memory.", m.Path, root),
			Target:  "filesystem", Range: a.mountRange(a.cfg.Filesystem.DeclRange, m.Path),
		}, m.Path)
	}
}

// mountRange locates the mount with the given path in a filesystem block,
// or returns the block.
func (a *auditor) mountRange(block hcl.Range, path string) *hcl.Range {
	blk := a.findBlock(block)
	if blk == nil {
		return block.Ptr()
	}
	attr, ok := blk.Body.Attributes["mounts"]
	if !ok {
		return block.Ptr()
	}
	list, ok := attr.Expr.(*hclsyntax.TupleConsExpr)
	if !ok {
		return attr.Expr.Range().Ptr()
	}
	for _, e := range list.Exprs {
		obj, ok := e.(*hclsyntax.ObjectConsExpr)
		if !ok {
			continue
		}
		for _, item := range obj.Items {
			if exprKey(item.KeyExpr) == "path" && exprKey(item.ValueExpr) == path {
				return e.Range().Ptr()
			}
		}
	}
	return attr.Expr.Range().Ptr()
}

// credentialHeaders are the header names (lower case) that carry
// credentials.
var credentialHeaders = []string{"api-key", "authorization", "cookie", "private-token", "proxy-authorization", "x-api-key", "x-auth-token"}

// credential is one credential-like field of the manifest.
type credential struct {
	target string
	// key identifies the field within the target, for the fingerprint.
	key string
	// what names the field in messages ("auth_token of mcp tool \"x\"").
	what string
	rng  *hcl.Range
	// ref is the runtime reference the field is read from, if any;
	// literal is set when a non-empty literal is written instead.
	ref     *manifest.RuntimeRef
	literal bool
	// value is the literal's value.
	value cty.Value
	// undecoded is set when the field's object did not decode: the
	// credential is known from the text alone, to be hidden, not
	// reported.
	undecoded bool
	// scrubOnly marks a value to scrub from messages that is no field
	// of its own: a url's credential as its text writes it
	// (percent-encoded), or one in a runtime() url's default (whose
	// whole default the field's entry hides).
	scrubOnly bool
}

// checkSkillPythonScripts reports every skill with .py files while some
// agent can call run_skill_script (AF307): unlike a .sh script, a Python
// script is not confined to the skill's copy.
func (a *auditor) checkSkillPythonScripts() {
	ri, ok := a.m.ToolIndex("run_skill_script")
	if a.ws == nil || !ok {
		return
	}
	var runners []string
	for ai, ag := range a.m.Agents() {
		if a.m.Allowed(ai, ri) {
			runners = append(runners, ag.Name)
		}
	}
	if len(runners) == 0 {
		return
	}
	for _, name := range sortedMapKeys(a.ws.Skills) {
		skill, decl := a.ws.Skills[name], a.skill(name)
		if skill == nil || decl == nil {
			continue
		}
		var scripts []string
		for p := range skill.Files {
			if path.Ext(p) == ".py" {
				scripts = append(scripts, p)
			}
		}
		if len(scripts) == 0 {
			continue
		}
		slices.Sort(scripts)
		noun := "agent"
		if len(runners) > 1 {
			noun = "agents"
		}
		a.add(RuleSkillPythonScript, Finding{
			Message: fmt.Sprintf("Skill %q ships %s (%s), which %s %s can run through run_skill_script with the file and network access of serve's user: unlike a .sh script, a .py script is not confined to the skill's copy.",
				name, auditPlural(len(scripts), "Python script"), quoteNames(scripts, 5), noun, quoteNames(runners, 5)),
			Target: "skill." + name, Range: strRange(decl.Source, decl.DeclRange),
		}, "")
	}
}

// checkCredentials reports credential-like fields read with runtime() but
// not secret() (AF305) and written as literals (AF306). Disabled tools
// are included: a literal credential leaks from the manifest whether or
// not the tool runs.
func (a *auditor) checkCredentials() {
	for _, c := range a.credentials() {
		switch {
		case c.undecoded, c.scrubOnly:
		case c.ref != nil && !c.ref.Secret:
			a.add(RuleCredentialNotSecret, Finding{
				Message: fmt.Sprintf("The %s comes from runtime(%q) without secret(): it is treated as an ordinary value, so its default can be written into plans and artifacts and shown in output. Wrap it: secret(runtime(%q)).", c.what, c.ref.Env, c.ref.Env),
				Target:  c.target, Range: c.rng,
			}, c.key)
		case c.literal:
			a.add(RuleLiteralCredential, Finding{
				Message: fmt.Sprintf("The %s is written in the manifest as a literal: everyone who can read the workspace, or its version-control history, has the credential. Rotate it, and read it when the agent starts with secret(runtime(\"ENV\")).", c.what),
				Target:  c.target, Range: c.rng,
			}, c.key)
		}
	}
}

// credentials lists every credential-like field of the manifest. The
// list is made once: AF305, AF306 and the report's sensitive ranges read it.
func (a *auditor) credentials() []credential {
	if a.creds == nil {
		a.creds = a.findCredentials()
	}
	return a.creds
}

func (a *auditor) findCredentials() []credential {
	out := []credential{}
	fromString := func(target, key, what string, s manifest.String, fallback hcl.Range) {
		c := credential{target: target, key: key, what: what, rng: strRange(s, fallback), ref: s.Runtime}
		c.literal = s.Runtime == nil && s.Set && s.Value != ""
		if c.literal {
			c.value = cty.StringVal(s.Value)
		}
		out = append(out, c)
	}
	fromDynamic := func(target, prefix, what string, d manifest.Dynamic, match func(string) bool) {
		v := d.Value
		if v == cty.NilVal && d.Set {
			// The value did not decode (a header that is not a string):
			// the manifest is in error, and its diagnostic quotes the
			// line, so the keys are read from the text to be hidden.
			for _, item := range a.objectItems(d.Range) {
				if match(item.key) {
					out = append(out, credential{target: target, key: prefix + item.key, what: fmt.Sprintf(what, item.key), rng: item.rng.Ptr(), literal: true, undecoded: true})
				}
			}
			return
		}
		if v == cty.NilVal || v.IsNull() || !v.IsKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
			return
		}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			name := k.AsString()
			if !match(name) {
				continue
			}
			c := credential{target: target, key: prefix + name, what: fmt.Sprintf(what, name), rng: a.keyValueRange(d.Range, name)}
			if ref, ok := manifest.RuntimeRefOf(ev); ok {
				c.ref = ref
			} else if sv, err := convert.Convert(ev, cty.String); err == nil && !sv.IsNull() && sv.IsKnown() && sv.AsString() != "" {
				c.literal, c.value = true, ev
			}
			out = append(out, c)
		}
	}
	isHeader := func(name string) bool { return slices.Contains(credentialHeaders, strings.ToLower(name)) }
	// fromURL adds what a url carries as a credential
	// (manifest.URLCredentials): its user information (a password, or a
	// user name alone, as tokens are written: https://TOKEN@host) and the
	// values of credential-like query parameters (?api_key=, ?token=,
	// ?sig=), written as a literal (AF306) or as the default of a
	// runtime() url (AF305 unless secret()). Each credential's text as
	// the url writes it (percent-encoded), which HTTP clients' errors
	// quote, is hidden too.
	fromURL := func(target, what string, s manifest.String, fallback hcl.Range) {
		raw, ref := s.Value, s.Runtime
		switch {
		case ref != nil && ref.HasDefault() && ref.Default.IsKnown() && !ref.Default.IsNull() && ref.Default.Type() == cty.String:
			raw = ref.Default.AsString()
		case ref != nil || !s.Set:
			return
		}
		for _, uc := range manifest.URLCredentials(raw) {
			c := credential{target: target, key: "url." + uc.Key, what: fmt.Sprintf("%s in the url of %s", uc.What, what), rng: strRange(s, fallback), ref: ref}
			if ref == nil {
				c.literal, c.value = true, cty.StringVal(uc.Value)
			}
			out = append(out, c)
			for _, v := range []string{uc.Value, uc.Raw} {
				if v != uc.Value || ref != nil {
					out = append(out, credential{target: target, key: c.key, rng: c.rng, scrubOnly: true, value: cty.StringVal(v)})
				}
			}
		}
	}

	for _, t := range a.cfg.Tools {
		target := "tool." + t.Name
		fromDynamic(target, "config.", "config key %q of tool "+strconv.Quote(t.Name), t.Config, manifest.CredentialConfigKey)
		switch {
		case t.MCP != nil:
			fromString(target, "auth_token", fmt.Sprintf("auth_token of mcp tool %q", t.Name), t.MCP.AuthToken, t.DeclRange)
			fromDynamic(target, "headers.", "header %q of mcp tool "+strconv.Quote(t.Name), t.MCP.Headers, isHeader)
			fromURL(target, fmt.Sprintf("mcp tool %q", t.Name), t.MCP.URL, t.DeclRange)
		case t.A2A != nil:
			fromString(target, "auth_token", fmt.Sprintf("auth_token of a2a tool %q", t.Name), t.A2A.AuthToken, t.DeclRange)
			fromDynamic(target, "headers.", "header %q of a2a tool "+strconv.Quote(t.Name), t.A2A.Headers, isHeader)
			fromURL(target, fmt.Sprintf("a2a tool %q", t.Name), t.A2A.URL, t.DeclRange)
		}
	}
	for _, ag := range a.cfg.Agents {
		if ag.Prompt != nil && ag.Prompt.Langfuse != nil {
			fromString("agent."+ag.Name, "prompt.secret_key", fmt.Sprintf("Langfuse secret_key of agent %q", ag.Name), ag.Prompt.Langfuse.SecretKey, ag.Prompt.Range)
		}
	}
	for _, name := range sortedMapKeys(a.cfg.Providers) {
		p := a.cfg.Providers[name]
		fromDynamic("provider."+name, "config.", "config %q of provider "+strconv.Quote(name), p.Config, func(k string) bool { return k == "api_key" })
	}
	if n := a.cfg.Network; n != nil {
		fromDynamic("network", "headers.", "header %q of the network block", n.Headers, isHeader)
	}
	return out
}

// ---------------------------------------------------------------------------
// message helpers

// quoteNames renders items as "a", "b" and "c"; with max > 0, at most max
// items are named and the rest counted.
func quoteNames(items []string, max int) string {
	if len(items) == 0 {
		return "nothing"
	}
	shown := items
	if max > 0 && len(items) > max {
		shown = items[:max]
	}
	q := make([]string, len(shown))
	for i, s := range shown {
		q[i] = strconv.Quote(s)
	}
	if rest := len(items) - len(shown); rest > 0 {
		return strings.Join(q, ", ") + fmt.Sprintf(" and %d more", rest)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// auditPlural renders "1 tool", "3 tools".
func auditPlural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// sortedMapKeys returns a map's keys in ascending order.
func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
