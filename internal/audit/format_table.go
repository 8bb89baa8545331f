package audit

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentform/agentform/internal/render"
)

// ANSI escape sequences of the table format when colour is on.
const (
	tableReset  = "\x1b[0m"
	tableBold   = "\x1b[1m"
	tableDim    = "\x1b[2m"
	tableRed    = "\x1b[31m"
	tableGreen  = "\x1b[32m"
	tableYellow = "\x1b[33m"
	tableCyan   = "\x1b[36m"
)

// tableSnippetLines is how many source lines a finding shows at most.
const tableSnippetLines = 3

// tableWriter renders the terminal table: findings grouped by severity,
// one line each with aligned columns, optional source snippets, waived
// findings, the gate and a summary line.
type tableWriter struct {
	w       *bufio.Writer
	opts    WriteOptions
	src     *sourceSet
	widths  [3]int // rule ID in brackets, target, location
	written bool   // whether a line was written
}

func writeTable(w io.Writer, r *Report, opts WriteOptions) error {
	t := &tableWriter{w: bufio.NewWriter(w), opts: opts, src: newSourceSet(opts.Source, r.Redaction)}
	findings, waived := orderedFindings(r.Findings), orderedFindings(r.Waived)
	t.measure(findings)
	if opts.ShowWaived {
		t.measure(waived)
	}

	failed := r.Incomplete != nil && r.Incomplete.Failed
	if len(findings) == 0 && !failed {
		t.line("No findings.")
	}
	for _, sev := range severities {
		t.section(sectionTitle(sev), filterSeverity(findings, sev, true))
	}
	// Findings of a severity this version does not know still print.
	t.section("Other", filterSeverity(findings, "", false))
	if opts.ShowWaived && len(waived) > 0 {
		t.section("Waived", waived)
	}
	if r.Gate != nil {
		t.gate(r.Gate)
	}
	if r.Incomplete != nil {
		t.incomplete(r.Incomplete)
	}
	t.line("")
	if !failed {
		t.line(t.paint(tableBold, summaryLine(r)))
	}
	if line := incompleteLine(r.Incomplete); line != "" {
		t.line(t.paint(tableBold+tableRed, line))
	}
	return t.w.Flush()
}

// incomplete lists the errors that kept the audit from the whole
// workspace, one line each: `  agent.acl:15  Summary: detail`.
func (t *tableWriter) incomplete(inc *Incomplete) {
	t.gap()
	t.line(t.paint(tableBold+tableRed, fmt.Sprintf("%s (%s)", incompleteTitle(inc), countNoun(len(inc.Errors), "error"))))
	for _, d := range orderedDiagnostics(inc.Errors) {
		loc := rangeLocation(d.Range)
		if loc == "" {
			loc = "-"
		}
		t.line("  " + t.paint(tableDim, oneLine(loc)) + "  " + oneLine(diagnosticText(d)))
	}
}

func sectionTitle(s Severity) string {
	switch s {
	case SeverityError:
		return "Errors"
	case SeverityWarning:
		return "Warnings"
	}
	return "Notes"
}

// filterSeverity returns the findings of severity s (known true), or those
// of no known severity (known false).
func filterSeverity(fs []Finding, s Severity, known bool) []Finding {
	var out []Finding
	for _, f := range fs {
		if known && f.Severity == s || !known && f.Severity.Rank() == 0 {
			out = append(out, f)
		}
	}
	return out
}

func (t *tableWriter) measure(fs []Finding) {
	for _, f := range fs {
		for i, s := range []string{"[" + f.RuleID + "]", tableTarget(f), tableLocation(f)} {
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(oneLine(s)))
		}
	}
}

func tableTarget(f Finding) string {
	if f.Target == "" {
		return "-"
	}
	return f.Target
}

func tableLocation(f Finding) string {
	if loc := findingLocation(f); loc != "" {
		return loc
	}
	return "-"
}

func (t *tableWriter) section(title string, fs []Finding) {
	if len(fs) == 0 {
		return
	}
	t.gap()
	t.line(t.paint(tableBold, fmt.Sprintf("%s (%d)", title, len(fs))))
	for _, f := range fs {
		t.finding(f)
	}
}

// finding prints `  [AF105] warning  agent.assistant  agent.acl:12  message`,
// then the source snippet and, for a waived finding, the waiver.
func (t *tableWriter) finding(f Finding) {
	color := severityColor(f.Severity)
	sev := oneLine(string(f.Severity))
	cols := []string{
		t.paint(color, pad("["+oneLine(f.RuleID)+"]", t.widths[0])+" "+pad(sev, len("warning"))),
		pad(oneLine(tableTarget(f)), t.widths[1]),
		t.paint(tableDim, pad(oneLine(tableLocation(f)), t.widths[2])),
		oneLine(f.Message),
	}
	t.line("  " + strings.Join(cols, "  "))
	t.snippet(f)
	if f.Waiver != nil {
		w := "waived: " + oneLine(f.Waiver.Reason)
		if f.Waiver.Reason == "" {
			w = "waived (no reason given)"
		}
		if f.Waiver.Expires != "" {
			w += "; expires " + oneLine(f.Waiver.Expires)
		}
		t.line("      " + t.paint(tableDim, w))
	}
}

func (t *tableWriter) snippet(f Finding) {
	nums, lines := t.src.snippet(f.Range, tableSnippetLines)
	width := 0
	for _, n := range nums {
		width = max(width, len(strconv.Itoa(n)))
	}
	for i, n := range nums {
		gutter := fmt.Sprintf("%*d |", width, n)
		// SanitizeLine, not oneLine: a source line keeps its length.
		t.line("      " + t.paint(tableDim, gutter) + " " + render.SanitizeLine([]byte(expandTabs(lines[i]))))
	}
}

// gate prints the "No new access" section.
func (t *tableWriter) gate(g *Gate) {
	t.gap()
	verdict := t.paint(tableBold+tableRed, "FAIL")
	if g.Pass {
		verdict = t.paint(tableBold+tableGreen, "PASS")
	}
	against := ""
	if g.Against != "" {
		against = " (against " + oneLine(g.Against) + ")"
	}
	t.line(t.paint(tableBold, "No new access"+against+": ") + verdict)
	t.accessList("Granted since", "+", tableRed, g.Granted)
	t.accessList("Revoked since", "-", tableGreen, g.Revoked)
	if len(g.NewFindings) > 0 {
		t.line(fmt.Sprintf("  New findings (%d):", len(g.NewFindings)))
		for _, s := range g.NewFindings {
			t.line("    " + oneLine(s))
		}
	}
	for _, s := range g.Reasons {
		t.line("  " + oneLine(s))
	}
}

func (t *tableWriter) accessList(title, mark, color string, as []Access) {
	if len(as) == 0 {
		return
	}
	t.line(fmt.Sprintf("  %s (%d):", title, len(as)))
	for _, a := range as {
		t.line("    " + t.paint(color, mark) + " " + oneLine(a.Agent) + " → " + oneLine(a.Tool) + byOverrideNote(a))
	}
}

func severityColor(s Severity) string {
	switch s {
	case SeverityError:
		return tableRed
	case SeverityWarning:
		return tableYellow
	case SeverityNote:
		return tableCyan
	}
	return ""
}

// paint wraps s in an ANSI colour when colour is on.
func (t *tableWriter) paint(code, s string) string {
	if !t.opts.Color || code == "" {
		return s
	}
	return code + s + tableReset
}

// gap separates a block from the one before it.
func (t *tableWriter) gap() {
	if t.written {
		t.line("")
	}
}

func (t *tableWriter) line(s string) {
	t.written = true
	// A trailing pad is noise in a terminal and in golden files.
	t.w.WriteString(strings.TrimRight(s, " "))
	t.w.WriteByte('\n')
}

// pad right-pads s with spaces to width runes.
func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// expandTabs replaces tabs with two spaces, so snippet lines stay
// aligned under their gutter.
func expandTabs(s string) string {
	return strings.ReplaceAll(s, "\t", "  ")
}
