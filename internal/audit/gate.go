package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/safefile"
)

// allowedSet lists the allowed cells of a matrix as "agent\x00tool".
func allowedSet(rows []MatrixRow) map[Access]bool {
	out := map[Access]bool{}
	for _, row := range rows {
		for _, c := range row.Cells {
			if c.Allowed {
				out[Access{Agent: row.Agent, Tool: c.Tool}] = true
			}
		}
	}
	return out
}

// CompareState sets the report's gate against the matrix recorded by the
// last apply (agent → tools it could call), the agents that were
// extensible then, those whose capabilities or policy came from runtime()
// then, and the registered tools then (nil when the state does not record
// them): access granted since fails the gate. Call it after
// MarkIncomplete: an incomplete audit leaves out of the comparison what it
// could not resolve (compare).
func CompareState(r *Report, applied map[string][]string, extensible, runtime map[string]bool, tools []string) {
	var rows []MatrixRow
	for agent, tools := range applied {
		row := MatrixRow{Agent: agent}
		for _, t := range tools {
			row.Cells = append(row.Cells, Cell{Tool: t, Allowed: true})
		}
		rows = append(rows, row)
	}
	var existed map[string]bool
	if tools != nil {
		existed = make(map[string]bool, len(tools))
		for _, t := range tools {
			existed[t] = true
		}
	}
	compare(r, "state", allowedSet(rows), extensible, runtime, existed, nil)
}

// CompareBaseline sets the report's gate against a previous report (a
// baseline written by "agentform audit -format=json"): access granted
// since fails the gate; findings the baseline lacks are listed.
func CompareBaseline(r *Report, base *Report, name string) {
	known := map[string]bool{}
	for _, f := range base.Findings {
		known[f.Fingerprint] = true
	}
	for _, f := range base.Waived {
		known[f.Fingerprint] = true
	}
	extensible := map[string]bool{}
	runtime := map[string]bool{}
	existed := map[string]bool{}
	for _, row := range base.Matrix {
		extensible[row.Agent] = row.Policy == string(capability.Extensible) ||
			slices.ContainsFunc(row.Cells, func(c Cell) bool { return c.OverrideReachable })
		runtime[row.Agent] = row.RuntimeDependent
		for _, c := range row.Cells {
			existed[c.Tool] = true
		}
	}
	compare(r, name, allowedSet(base.Matrix), extensible, runtime, existed, known)
}

// compare sets the gate. In an incomplete audit (MarkIncomplete), an mcp
// block whose tools could not be listed has a placeholder column named
// after it in place of its served tools: comparing it would report access
// to the placeholder granted and to every served tool the baseline has
// ("<block>__<tool>") revoked, none of which is a change of access. Both
// are left out, and a reason says so; the audit fails as incomplete
// anyway. A complete audit compares such a column as it is: a block never
// listed grants access no one has reviewed.
//
// An agent that is extensible now and was not in the baseline (extensible
// says which were) can reach every tool it is denied with a session
// override: each such tool it could not call then is access granted since,
// marked ByOverride, with a reason per agent. One that was extensible then
// could reach every tool there was (existed says which; nil when the
// baseline does not say): a tool added since that it can reach only with
// an override is access granted since too.
//
// An agent whose capabilities or policy come from runtime() now and did
// not in the baseline (runtime says which did; a baseline written before
// reports recorded it counts as not) holds, when it starts, whatever its
// environment says: every tool it could not call then is access granted
// since, marked ByRuntime, with a reason per agent. The plan computes its
// row from the default, which no one reviews as the agent's access. One
// that was runtime-dependent then too could be given every tool there
// was (existed): a tool added since that it cannot call with the default
// is access granted since, as for an extensible agent.
func compare(r *Report, against string, before map[Access]bool, extensible, runtime, existed map[string]bool, knownFindings map[string]bool) {
	g := &Gate{Against: against, Granted: []Access{}, Revoked: []Access{}, NewFindings: []string{}, Reasons: []string{}}
	now := allowedSet(r.Matrix)
	left := gateLeftOut(r)
	for a := range now {
		if !before[a] && !left(a.Tool, true) {
			g.Granted = append(g.Granted, a)
		}
	}
	for a := range before {
		if !now[a] && !left(a.Tool, false) {
			g.Revoked = append(g.Revoked, a)
		}
	}
	var overrideReasons []string
	for _, row := range r.Matrix {
		// Two accounts of access no matrix cell shows: a session override
		// of an extensible agent reaches every tool it is denied, and an
		// agent whose capabilities or policy come from runtime() may be
		// given any tool when it starts. Extensible then and now, the
		// override's account is the exact one: runtime() adds nothing.
		byRuntime := row.RuntimeDependent && !(extensible[row.Agent] && row.Policy == string(capability.Extensible))
		was, reachable := extensible[row.Agent], func(c Cell) bool { return c.OverrideReachable }
		if byRuntime {
			was, reachable = runtime[row.Agent], func(Cell) bool { return true }
		}
		// So it was then, which reached every tool there was: only a tool
		// added since is new to it (none, when the baseline does not say).
		if was && existed == nil {
			continue
		}
		n := 0
		for _, c := range row.Cells {
			a := Access{Agent: row.Agent, Tool: c.Tool}
			if c.Allowed || !reachable(c) || before[a] || left(a.Tool, true) || was && existed[c.Tool] {
				continue
			}
			a.ByRuntime, a.ByOverride = byRuntime, !byRuntime
			g.Granted = append(g.Granted, a)
			n++
		}
		switch tools := countNoun(n, "tool"); {
		case n == 0:
		case byRuntime && was:
			overrideReasons = append(overrideReasons, fmt.Sprintf("agent %q takes its capabilities or capability_policy from runtime(): when it starts, its environment may give it %s added since %s", row.Agent, tools, against))
		case byRuntime:
			overrideReasons = append(overrideReasons, fmt.Sprintf("agent %q takes its capabilities or capability_policy from runtime() now but did not in %s: it holds what its environment says when it starts, so %s it could not call then may be reachable", row.Agent, against, tools))
		case was:
			overrideReasons = append(overrideReasons, fmt.Sprintf("agent %q is extensible: a session override can reach %s added since %s", row.Agent, tools, against))
		default:
			overrideReasons = append(overrideReasons, fmt.Sprintf("agent %q is extensible now but was not in %s: a session override can reach %s it could not call then", row.Agent, against, tools))
		}
	}
	sort.Strings(overrideReasons)
	less := func(s []Access) func(i, j int) bool {
		return func(i, j int) bool {
			if s[i].Agent != s[j].Agent {
				return s[i].Agent < s[j].Agent
			}
			return s[i].Tool < s[j].Tool
		}
	}
	sort.Slice(g.Granted, less(g.Granted))
	sort.Slice(g.Revoked, less(g.Revoked))
	if knownFindings != nil {
		for _, f := range r.Findings {
			if !knownFindings[f.Fingerprint] {
				g.NewFindings = append(g.NewFindings, fmt.Sprintf("%s %s %s", f.RuleID, f.Target, f.Message))
			}
		}
		sort.Strings(g.NewFindings)
	}
	g.Pass = len(g.Granted) == 0
	// One reason, not one per grant: Granted lists them, and every format
	// prints that list.
	if g.Pass {
		g.Reasons = append(g.Reasons, fmt.Sprintf("no agent can call anything it could not call in %s", against))
	} else {
		g.Reasons = append(g.Reasons, fmt.Sprintf("%s granted since %s: an agent can call a tool it could not call then",
			countNoun(len(g.Granted), "permission"), against))
	}
	g.Reasons = append(g.Reasons, overrideReasons...)
	if r.Incomplete != nil {
		for _, block := range r.unresolved {
			g.Reasons = append(g.Reasons, fmt.Sprintf("the audit is incomplete: the tools of %q could not be listed, so they are left out of the comparison", block))
		}
	}
	r.Gate = g
}

// gateLeftOut reports whether compare leaves a tool out: in an incomplete
// audit, an unresolved mcp block's placeholder column (now) and the served
// tools of that block the baseline records, which are not columns of
// another block now.
func gateLeftOut(r *Report) func(tool string, now bool) bool {
	if r.Incomplete == nil || len(r.unresolved) == 0 {
		return func(string, bool) bool { return false }
	}
	columns := map[string]bool{}
	for _, row := range r.Matrix {
		for _, c := range row.Cells {
			columns[c.Tool] = true
		}
	}
	return func(tool string, now bool) bool {
		for _, block := range r.unresolved {
			switch {
			case tool == block:
				return true
			case !now && strings.HasPrefix(tool, block+"__") && !columns[tool]:
				return true
			}
		}
		return false
	}
}

// gateFindings are the access the gate found granted as AF111 findings,
// for the formats that report the gate only through results and test
// cases (SARIF, JUnit): one per agent → tool, targeting the agent and
// located at its capabilities, with a fingerprint of the agent and tool
// alone. They are not r.Findings: the gate is not counted, waived or
// judged by -fail-on. None without a gate or when it passes.
func gateFindings(r *Report) []Finding {
	g := r.Gate
	if g == nil || g.Pass {
		return nil
	}
	since := g.Against
	if since == "state" {
		since = "the last apply"
	}
	out := make([]Finding, 0, len(g.Granted))
	for _, a := range g.Granted {
		target := "agent." + a.Agent
		how := ""
		switch {
		case a.ByOverride:
			how = " through a session override (its capability_policy is \"extensible\" now)"
		case a.ByRuntime:
			how = " once it starts with the tags its environment gives it (its capabilities or capability_policy come from runtime() now)"
		}
		out = append(out, Finding{
			RuleID: RuleNewAccess, Severity: SeverityError, Target: target, Agent: a.Agent, Tool: a.Tool,
			Message: fmt.Sprintf("Agent %q can call %q%s, which it could not call in %s, so the no-new-access gate fails. "+
				"Review the grant; to accept it, apply the configuration (-against=state) or write a new baseline.", a.Agent, a.Tool, how, since),
			Range:       r.agentRanges[a.Agent],
			Fingerprint: Fingerprint(RuleNewAccess, target, a.Agent, a.Tool, ""),
		})
	}
	return orderedFindings(out)
}

// reportRules are the rules of r, with NewAccessRule when r has a gate
// (whose failures gateFindings reports under it).
func reportRules(r *Report) []Rule {
	rules := r.Rules
	if r.Gate != nil && !slices.ContainsFunc(rules, func(x Rule) bool { return x.ID == RuleNewAccess }) {
		rules = append(slices.Clone(rules), NewAccessRule())
	}
	return orderedRules(rules)
}

// maxBaselineSize is the largest baseline report ReadBaseline reads: it is
// read and decoded in memory, so the bound is what memory can hold.
const maxBaselineSize = 4 << 30

// ReadBaseline reads a report written by "agentform audit -format=json".
func ReadBaseline(path string) (*Report, error) {
	b, err := safefile.Read(path, maxBaselineSize)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err != nil {
		return nil, fmt.Errorf("reading the baseline %s: %w", path, err)
	}
	var base struct {
		FormatVersion string `json:"format_version"`
		Findings      []struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"findings"`
		Waived []struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"waived"`
		Matrix     []MatrixRow `json:"matrix"`
		Incomplete *struct {
			Failed bool `json:"failed"`
		} `json:"incomplete"`
	}
	if err := json.Unmarshal(b, &base); err != nil {
		return nil, fmt.Errorf("%s is not an agentform audit report (audit -format=json): %w", path, err)
	}
	if base.FormatVersion == "" || base.Matrix == nil {
		return nil, fmt.Errorf("%s is not an agentform audit report (audit -format=json): it has no format_version or matrix", path)
	}
	// A partial matrix would make every tool it lacks look granted since,
	// and a failed audit's empty one every tool.
	if inc := base.Incomplete; inc != nil {
		what := "an incomplete audit, which covers only part of the workspace"
		if inc.Failed {
			what = "a failed audit, which covers nothing"
		}
		return nil, fmt.Errorf("%s is the report of %s: it cannot be a baseline; write one with an audit that completes", path, what)
	}
	out := &Report{FormatVersion: base.FormatVersion, Matrix: base.Matrix}
	for _, f := range base.Findings {
		out.Findings = append(out.Findings, Finding{Fingerprint: f.Fingerprint})
	}
	for _, f := range base.Waived {
		out.Waived = append(out.Waived, Finding{Fingerprint: f.Fingerprint})
	}
	return out, nil
}

// byOverrideNote is what the gate's lists add to access granted only
// through a session override, or by capabilities read at runtime.
func byOverrideNote(a Access) string {
	switch {
	case a.ByOverride:
		return " (by session override)"
	case a.ByRuntime:
		return " (by runtime capabilities)"
	}
	return ""
}
