package render

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentform/agentform/planner"
)

// MatrixMode chooses how the capability matrix is printed.
type MatrixMode string

// Matrix modes: auto picks the grid for small workspaces and the summary
// for large ones.
const (
	MatrixAuto    MatrixMode = "auto"
	MatrixFull    MatrixMode = "full"
	MatrixSummary MatrixMode = "summary"
)

// Summary thresholds: more tools or agents than this print the summary.
const (
	gridMaxTools  = 40
	gridMaxAgents = 20
	// listMax bounds the per-agent lists of the summary view.
	listMax = 10
)

// PlanOptions control the human plan text.
type PlanOptions struct {
	// Color uses ANSI colours and the ✔ ✖ ⚠ symbols; otherwise the output
	// is plain ASCII (yes / no / override).
	Color  bool
	Matrix MatrixMode
	// Errors is the number of errors the plan has (its own and the
	// resolution's). A failed plan shows the matrix, denials and checks,
	// which help to understand it, but no resource, lockfile or capability
	// changes, which could not be applied, and its last line says it
	// failed.
	Errors int
	// Redaction (which may be nil) scrubs the manifest's credentials from
	// check messages, whose error_message can interpolate a local that
	// feeds one.
	Redaction *Redaction
}

type style struct {
	color bool
	red   *Redaction
}

func (s style) paint(code, text string) string {
	if !s.color {
		return text
	}
	return code + text + ansiReset
}

func (s style) allow() string {
	if s.color {
		return s.paint(ansiGreen, "✔")
	}
	return "yes"
}

func (s style) deny(overrideReachable bool) string {
	switch {
	case s.color && overrideReachable:
		return s.paint(ansiYellow, "⚠")
	case s.color:
		return s.paint(ansiRed, "✖")
	case overrideReachable:
		return "override"
	}
	return "no"
}

func (s style) arrow() string {
	if s.color {
		return "→"
	}
	return "->"
}

// Plan writes the human plan text in the order of DESIGN §9: resource
// changes, the capability matrix, capability changes, denials, checks and
// the summary line. A plan that simulates a session override
// (p.Session) says so first, shows what the session would gain or lose
// after the capability changes, and says so again in its summary.
func Plan(out io.Writer, p *planner.Plan, opts PlanOptions) {
	// A line at a time would be a write per line to the terminal: a plan
	// of hundreds of resources is written at once.
	w := bufio.NewWriterSize(out, 64<<10)
	defer w.Flush()
	st := style{color: opts.Color, red: opts.Redaction}
	writeSession(w, p, st)
	if opts.Errors == 0 {
		writeResourceChanges(w, p, st)
		writeLockChanges(w, p, st)
		writeLeftovers(w, p, st)
	}
	m := p.Matrix()
	if m == nil {
		return
	}
	large := len(m.Tools()) > gridMaxTools || len(p.Agents) > gridMaxAgents
	summary := opts.Matrix == MatrixSummary || (opts.Matrix != MatrixFull && large)
	if summary {
		writeMatrixSummary(w, p, st)
	} else {
		writeMatrixGrid(w, p, st)
	}
	if opts.Errors == 0 {
		writeCapabilityChanges(w, p, st, summary)
		writeSessionChanges(w, p, st, summary)
	}
	writeDenials(w, p, st, summary)
	writeChecks(w, p, st)
	if opts.Errors > 0 && p.Session != nil {
		fmt.Fprintln(w, sessionLine(p))
	}
	switch {
	case opts.Errors > 0 && p.Session != nil:
		// The checks were the session's: the configuration as written
		// may still apply.
		fmt.Fprintf(w, "Plan failed: %s (below), with the simulated session's capabilities. Plan without -capability-override to see whether the configuration itself applies.\n", countErrors(opts.Errors))
	case opts.Errors == 1:
		fmt.Fprintln(w, "Plan failed: 1 error (below). Nothing can be applied until it is fixed.")
	case opts.Errors > 1:
		fmt.Fprintf(w, "Plan failed: %d errors (below). Nothing can be applied until they are fixed.\n", opts.Errors)
	default:
		fmt.Fprintln(w, SummaryLine(p))
	}
}

// SummaryLine is the plan's last line: resource and capability counts, or
// "No changes." when there is nothing to do. A plan that simulates a
// session override ends with two lines: the session's gains, losses and
// denials, then what apply (which ignores the override) would change.
func SummaryLine(p *planner.Plan) string {
	var add, change, destroy int
	for _, rc := range p.ResourceChanges {
		for _, a := range rc.Actions {
			switch a {
			case planner.ActionCreate:
				add++
			case planner.ActionUpdate:
				change++
			case planner.ActionDelete:
				destroy++
			}
		}
	}
	granted, revoked := countChanges(p.CapabilityChanges)
	if p.Session != nil {
		var applied string
		switch n := len(p.LockChanges); {
		case p.HasChanges():
			applied = fmt.Sprintf("Without the override, apply would: %d to add, %d to change, %d to destroy. Capabilities: %d granted, %d revoked.",
				add, change, destroy, granted, revoked)
		case n == 0:
			applied = "Without the override: no changes. Artifacts match the configuration."
		case n == 1:
			applied = "Without the override: artifacts match the configuration. Lockfile: 1 change to write."
		default:
			applied = fmt.Sprintf("Without the override: artifacts match the configuration. Lockfile: %d changes to write.", n)
		}
		return sessionLine(p) + "\n" + applied + leftoversPhrase(p)
	}
	if !p.HasChanges() {
		line := "Artifacts match the configuration."
		switch n := len(p.LockChanges); n {
		case 0:
			if len(p.Leftovers) == 0 {
				return "No changes. Artifacts match the configuration."
			}
		case 1:
			line += " Lockfile: 1 change to write."
		default:
			line += fmt.Sprintf(" Lockfile: %d changes to write.", n)
		}
		return line + leftoversPhrase(p)
	}
	return fmt.Sprintf("Plan: %d to add, %d to change, %d to destroy. Capabilities: %d granted, %d revoked, %d denials.",
		add, change, destroy, granted, revoked, p.DenialCount()) + leftoversPhrase(p)
}

// leftoversPhrase ends a summary line with the leftovers of an
// interrupted apply that apply removes, if any.
func leftoversPhrase(p *planner.Plan) string {
	switch n := len(p.Leftovers); n {
	case 0:
		return ""
	case 1:
		return " Leftovers: 1 file of an interrupted apply to remove."
	default:
		return fmt.Sprintf(" Leftovers: %d files of an interrupted apply to remove.", n)
	}
}

// sessionLine sums up a simulated session override: for how many agents
// it counts, what they would gain or lose, and the session's denials.
func sessionLine(p *planner.Plan) string {
	gained, lost := countChanges(p.Session.Changes)
	return fmt.Sprintf("Simulated session (capability override %s, honoured for %d of %d agents): would gain %d and lose %d tools, %d denials. Not applyable.",
		p.Session.Override, len(p.Session.Honoured), len(p.Agents), gained, lost, p.DenialCount())
}

// countChanges counts the accesses granted and revoked.
func countChanges(changes []planner.CapabilityChange) (granted, revoked int) {
	for _, c := range changes {
		if c.Change == "granted" {
			granted++
		} else {
			revoked++
		}
	}
	return granted, revoked
}

// writeSession says, first, that the plan simulates a session override:
// which agents it counts for, which ignore it, and that apply does not
// make its changes.
func writeSession(w io.Writer, p *planner.Plan, st style) {
	s := p.Session
	if s == nil {
		return
	}
	fmt.Fprintf(w, "%s capability override %s\n\n", st.paint(ansiBold+ansiYellow, "Simulated session:"), st.paint(ansiBold, s.Override))
	fmt.Fprintln(w, "  This plan shows what one client session that sends this override would")
	fmt.Fprintln(w, "  be allowed to call. Apply ignores the override and builds the")
	fmt.Fprintln(w, "  configuration as written: this plan cannot be applied, and what the")
	fmt.Fprintln(w, "  session would gain or lose is not a change apply would make.")
	fmt.Fprintln(w)
	if len(s.Honoured) > 0 {
		fmt.Fprintf(w, "  Honoured for: %s (capability_policy = \"extensible\")\n", nameList(s.Honoured))
	} else {
		fmt.Fprintln(w, "  Honoured for: no agent (none has capability_policy = \"extensible\")")
	}
	if len(s.Ignored) > 0 {
		fmt.Fprintf(w, "  Ignored for:  %s (capability_policy = \"locked\": configured capabilities kept)\n", nameList(s.Ignored))
	}
	fmt.Fprintln(w)
}

// nameList joins agent names, the first listMax of them.
func nameList(names []string) string {
	if len(names) <= listMax {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:listMax], ", "), len(names)-listMax)
}

// writeSessionChanges lists what the simulated session would gain or lose
// compared with the agents as configured.
func writeSessionChanges(w io.Writer, p *planner.Plan, st style, summary bool) {
	s := p.Session
	if s == nil {
		return
	}
	fmt.Fprintln(w, "Simulated session capabilities (gained or lost compared with the configuration; apply makes none of these changes):")
	fmt.Fprintln(w)
	if len(s.Changes) == 0 {
		fmt.Fprintln(w, "  (none: every agent may call the same tools as configured)")
		fmt.Fprintln(w)
		return
	}
	if summary {
		order, counts := changeCounts(s.Changes)
		for _, a := range order {
			fmt.Fprintf(w, "  %s: would gain %d, would lose %d\n", a, counts[a][0], counts[a][1])
		}
		fmt.Fprintln(w)
		return
	}
	for _, c := range s.Changes {
		sym, code, verb := "+", ansiGreen, "would gain"
		if c.Change != "granted" {
			sym, code, verb = "-", ansiRed, "would lose"
		}
		fmt.Fprintf(w, "  %s %s %s %s  %s\n", st.paint(code, sym), PrintableName(c.Agent), st.arrow(), PrintableName(c.Tool), verb)
	}
	fmt.Fprintln(w)
}

func writeResourceChanges(w io.Writer, p *planner.Plan, st style) {
	// Only actions are listed: the header never stands over nothing (a
	// plan whose changes are the lockfile's or capabilities' alone).
	if !slices.ContainsFunc(p.ResourceChanges, func(rc planner.ResourceChange) bool {
		return len(rc.Actions) > 0 && slices.Contains([]string{planner.ActionCreate, planner.ActionUpdate, planner.ActionDelete}, rc.Actions[0])
	}) {
		return
	}
	if p.Session != nil {
		fmt.Fprintln(w, "Without the override, apply would perform the following actions:")
	} else {
		fmt.Fprintln(w, "agentform will perform the following actions:")
	}
	fmt.Fprintln(w)
	notes := toolNotes(p)
	for _, rc := range p.ResourceChanges {
		sym, code := "", ""
		switch rc.Actions[0] {
		case planner.ActionCreate:
			sym, code = "+", ansiGreen
		case planner.ActionUpdate:
			sym, code = "~", ansiYellow
		case planner.ActionDelete:
			sym, code = "-", ansiRed
		default:
			continue
		}
		kind := ""
		if rc.Type == "tool" {
			kind = " (" + PrintableName(rc.Kind) + notes[rc.Address] + ")"
		}
		verb := map[string]string{planner.ActionCreate: "created", planner.ActionUpdate: "updated in place", planner.ActionDelete: "destroyed"}[rc.Actions[0]]
		fmt.Fprintf(w, "  %s %s%s will be %s\n", st.paint(code, sym), st.paint(ansiBold, PrintableName(rc.Address)), kind, verb)
		for _, reason := range rc.Reasons {
			if reason != "new" && reason != "configuration changed" {
				fmt.Fprintf(w, "      # (%s)\n", PrintableName(reason))
			}
		}
		// The file a destroyed agent's apply removes (if it still holds
		// the bytes state recorded): state says where, and state can be
		// edited, so the plan shows it.
		if rc.Type == "agent" && rc.Actions[0] == planner.ActionDelete && p.Applied != nil {
			if old := p.Applied.Resources[rc.Address].Artifact; old != nil && old.Path != "" {
				fmt.Fprintf(w, "      # (removes %s)\n", PrintableName(old.Path))
			}
		}
		for _, c := range rc.AttributeChanges {
			for _, line := range c.Shown(st.red.Scrub).Lines() {
				fmt.Fprintf(w, "      %s\n", Printable(line))
			}
		}
	}
	fmt.Fprintln(w)
}

// matrixTitle names the matrix: a simulated session's is not the
// configuration's.
func matrixTitle(p *planner.Plan) string {
	if p.Session != nil {
		return "Capability matrix of the simulated session"
	}
	return "Capability matrix"
}

func writeMatrixGrid(w io.Writer, p *planner.Plan, st style) {
	m := p.Matrix()
	tools := m.Tools()
	legend := "yes = may call, no = denied, override = denied but reachable by a session override"
	if st.color {
		legend = "✔ may call, ✖ denied, ⚠ denied but reachable by a session override"
	}
	fmt.Fprintf(w, "%s (%s):\n\n", matrixTitle(p), legend)
	if len(tools) == 0 || len(p.Agents) == 0 {
		switch {
		case len(p.Agents) == 0 && len(tools) == 0:
			fmt.Fprintln(w, "  (no agents, no enabled tools)")
		case len(p.Agents) == 0:
			fmt.Fprintln(w, "  (no agents)")
		default:
			fmt.Fprintln(w, "  (no enabled tools)")
		}
		fmt.Fprintln(w)
		return
	}
	toolW := len("TOOL")
	for _, t := range tools {
		toolW = max(toolW, len(PrintableName(t.Name)))
	}
	colW := make([]int, len(p.Agents))
	fmt.Fprintf(w, "  %-*s", toolW, "TOOL")
	for i, a := range p.Agents {
		colW[i] = max(len(a.Name), len("override"))
		fmt.Fprintf(w, "  %-*s", colW[i], a.Name)
	}
	fmt.Fprintln(w)
	for ti, t := range tools {
		// Served mcp tool names come from the server: shown as escapes,
		// a control character cannot hide a row.
		line := fmt.Sprintf("  %-*s", toolW, PrintableName(t.Name))
		for ai := range p.Agents {
			var mark string
			var width int
			if m.Allowed(ai, ti) {
				mark, width = st.allow(), len("yes")
			} else {
				reach := p.Agents[ai].Policy == "extensible"
				mark = st.deny(reach)
				width = len("no")
				if reach {
					width = len("override")
				}
			}
			if st.color {
				width = 1
			}
			line += "  " + mark + strings.Repeat(" ", colW[ai]-width)
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(w)
	notes := false
	for _, a := range p.Agents {
		if a.RuntimeDependent {
			fmt.Fprintf(w, "  %s: capabilities or policy are known at runtime; its cells use the defaults.\n", a.Name)
			notes = true
		}
	}
	for _, t := range p.Tools {
		if t.RuntimeEnabled {
			fmt.Fprintf(w, "  %s: whether it is enabled is known at runtime; its cells assume it is.\n", PrintableName(t.Name))
			notes = true
		}
	}
	if notes {
		fmt.Fprintln(w)
	}
}

// runtimeEnabledNote says how many matrix columns are tools whose enabled
// is a runtime() value, naming the first few.
func runtimeEnabledNote(p *planner.Plan) string {
	const shown = 5
	var names []string
	n := 0
	for _, t := range p.Tools {
		if !t.RuntimeEnabled {
			continue
		}
		if n++; n <= shown {
			names = append(names, PrintableName(t.Name))
		}
	}
	if n == 0 {
		return ""
	}
	list := strings.Join(names, ", ")
	if n > shown {
		list += fmt.Sprintf(" and %d more", n-shown)
	}
	if n == 1 {
		return fmt.Sprintf("  1 tool is enabled or not at runtime (%s); the counts assume it is.\n", list)
	}
	return fmt.Sprintf("  %d tools are enabled or not at runtime (%s); the counts assume they are.\n", n, list)
}

func writeMatrixSummary(w io.Writer, p *planner.Plan, st style) {
	m := p.Matrix()
	total := len(m.Tools())
	fmt.Fprintf(w, "%s (%s × %s; agentform plan -matrix=full shows the grid):\n\n", matrixTitle(p), count(len(p.Agents), "agent", "agents"), count(total, "tool", "tools"))
	nameW := 0
	for _, a := range p.Agents {
		nameW = max(nameW, len(a.Name))
	}
	for ai, a := range p.Agents {
		allowed := m.AllowedCount(ai)
		extra := ""
		if a.Policy == "extensible" && allowed < total {
			extra = fmt.Sprintf(", %d reachable by override", total-allowed)
		}
		if a.RuntimeDependent {
			extra += ", known at runtime"
		}
		fmt.Fprintf(w, "  %-*s  %s may call %d of %d tools, %d denied (%s%s)\n", nameW, a.Name, st.arrow(), allowed, total, total-allowed, a.Policy, extra)
	}
	fmt.Fprintln(w)
	if note := runtimeEnabledNote(p); note != "" {
		fmt.Fprint(w, note)
		fmt.Fprintln(w)
	}
}

func writeCapabilityChanges(w io.Writer, p *planner.Plan, st style, summary bool) {
	if len(p.CapabilityChanges) == 0 {
		return
	}
	if p.Session != nil {
		fmt.Fprintln(w, "Capability changes (without the override, apply would make them):")
	} else {
		fmt.Fprintln(w, "Capability changes:")
	}
	fmt.Fprintln(w)
	if summary {
		order, counts := changeCounts(p.CapabilityChanges)
		for _, a := range order {
			fmt.Fprintf(w, "  %s: %d granted, %d revoked\n", a, counts[a][0], counts[a][1])
		}
		fmt.Fprintln(w)
		return
	}
	for _, c := range p.CapabilityChanges {
		sym, code := "+", ansiGreen
		if c.Change != "granted" {
			sym, code = "-", ansiRed
		}
		fmt.Fprintf(w, "  %s %s %s %s  %s\n", st.paint(code, sym), PrintableName(c.Agent), st.arrow(), PrintableName(c.Tool), c.Change)
	}
	fmt.Fprintln(w)
}

func writeDenials(w io.Writer, p *planner.Plan, st style, summary bool) {
	if p.DenialCount() == 0 {
		return
	}
	if p.Session != nil {
		fmt.Fprintln(w, "Denials in the simulated session:")
	} else {
		fmt.Fprintln(w, "Denials:")
	}
	fmt.Fprintln(w)
	mark := "-"
	if st.color {
		mark = st.deny(false)
	}
	m := p.Matrix()
	for ai, a := range p.Agents {
		denied := m.Denied(ai)
		shown := denied
		if summary && len(shown) > listMax {
			shown = shown[:listMax]
		}
		for _, ti := range shown {
			c := m.Cell(ai, ti)
			missing := make([]string, len(c.Missing))
			for i, tag := range c.Missing {
				// The loader refuses tags that hold control characters;
				// a tag from anywhere else still cannot forge a line.
				missing[i] = PrintableName(tag)
			}
			fmt.Fprintf(w, "  %s %s %s %s: missing %s\n", mark, a.Name, st.arrow(), PrintableName(c.Tool), strings.Join(missing, ", "))
		}
		if len(denied) > len(shown) {
			fmt.Fprintf(w, "  ... and %d more for %s (agentform plan -json lists every denial)\n", len(denied)-len(shown), a.Name)
		}
	}
	fmt.Fprintln(w)
}

func writeChecks(w io.Writer, p *planner.Plan, st style) {
	if len(p.Checks) == 0 {
		return
	}
	fmt.Fprintln(w, "Checks:")
	fmt.Fprintln(w)
	for _, c := range p.Checks {
		pass, fail := "pass", "FAIL"
		if st.color {
			pass, fail = st.allow(), st.deny(false)
		}
		if c.Status == planner.CheckPass {
			fmt.Fprintf(w, "  %s %s\n", pass, c.Name)
			continue
		}
		fmt.Fprintf(w, "  %s %s: %s\n", fail, c.Name, st.red.Scrub(c.Message))
	}
	fmt.Fprintln(w)
}

// toolNotes says, per tool block, how its registered tools were found
// when that is not the plain case: served tools taken from the lock, or
// unresolved, or how many a block registers.
func toolNotes(p *planner.Plan) map[string]string {
	type info struct {
		n                    int
		fromLock, unresolved bool
	}
	blocks := map[string]*info{}
	for _, t := range p.Tools {
		b := blocks[t.Block]
		if b == nil {
			b = &info{}
			blocks[t.Block] = b
		}
		b.n++
		b.fromLock = b.fromLock || t.FromLock
		b.unresolved = b.unresolved || !t.Resolved
	}
	notes := map[string]string{}
	for block, b := range blocks {
		switch {
		case b.unresolved:
			notes[block] = ", unresolved"
		case b.fromLock:
			notes[block] = fmt.Sprintf(", %d tools from lock", b.n)
		case b.n > 1:
			notes[block] = fmt.Sprintf(", %d tools", b.n)
		}
	}
	return notes
}

// writeLeftovers lists the artifact files an interrupted apply left that
// no resource in state owns: apply removes them.
func writeLeftovers(w io.Writer, p *planner.Plan, st style) {
	if len(p.Leftovers) == 0 {
		return
	}
	fmt.Fprintln(w, "Leftovers of an interrupted apply (no resource in state owns them; apply removes them):")
	fmt.Fprintln(w)
	for _, path := range p.Leftovers {
		fmt.Fprintf(w, "  %s %s\n", st.paint(ansiRed, "-"), Printable(path))
	}
	fmt.Fprintln(w)
}

func writeLockChanges(w io.Writer, p *planner.Plan, st style) {
	if len(p.LockChanges) == 0 {
		return
	}
	fmt.Fprintln(w, "Lockfile changes (agentform lock or apply writes them):")
	fmt.Fprintln(w)
	for _, c := range p.LockChanges {
		sym, code := map[string]string{"add": "+", "remove": "-", "update": "~"}[c.Action], map[string]string{"add": ansiGreen, "remove": ansiRed, "update": ansiYellow}[c.Action]
		line := fmt.Sprintf("  %s %s", st.paint(code, sym), PrintableName(c.Address))
		if c.Action == "update" && len(c.Attributes) > 0 {
			line += ": " + strings.Join(c.Attributes, ", ")
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
}

// countErrors is "1 error" or "N errors".
func countErrors(n int) string { return count(n, "error", "errors") }

// count is "1 <one>" or "N <many>".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// changeCounts counts changes by agent, in the order the agents first
// appear: granted, then revoked.
func changeCounts(changes []planner.CapabilityChange) (order []string, counts map[string][2]int) {
	counts = map[string][2]int{}
	for _, c := range changes {
		n, seen := counts[c.Agent]
		if !seen {
			order = append(order, c.Agent)
		}
		if c.Change == "granted" {
			n[0]++
		} else {
			n[1]++
		}
		counts[c.Agent] = n
	}
	return order, counts
}
