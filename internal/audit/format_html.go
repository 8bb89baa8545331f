package audit

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/agentform/agentform/internal/render"
)

// htmlSource is the page: inline CSS and JavaScript only, so the file is
// self-contained, and a Content-Security-Policy that forbids loading
// anything, so it stays so whatever a manifest puts in a message.
//
//go:embed html.tmpl
var htmlSource string

// htmlTemplate is parsed on first use (only the HTML report needs it, and
// parsing it at start-up cost every command 3 ms); parsing a constant
// cannot fail at run time unless the template itself is broken, which the
// tests catch.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("html.tmpl").Parse(htmlSource))
})

// htmlSnippetLines is how many source lines a finding shows at most.
const htmlSnippetLines = 5

// htmlData is what html.tmpl renders. html/template escapes every value
// for its context and drops help links whose scheme is not safe.
type htmlData struct {
	Version     string
	Summary     string
	Errors      int
	Warnings    int
	Notes       int
	WaivedCount int
	ShowWaived  bool
	Gate        *Gate
	Tools       []string
	Rows        []htmlRow
	Findings    []htmlFinding
	Waived      bool
	// Incomplete is set when the audit did not see the whole workspace;
	// Failed when it saw none of it (the page then shows only that).
	Incomplete *htmlIncomplete
	Failed     bool
}

type htmlIncomplete struct {
	Title  string
	Line   string
	Errors []htmlDiagnostic
}

type htmlDiagnostic struct {
	Location string
	Summary  string
	Detail   string
}

type htmlRow struct {
	Agent  string
	Policy string
	Title  string
	Cells  []htmlCell
}

type htmlCell struct {
	Class  string
	Symbol string
	Title  string
}

type htmlFinding struct {
	Severity   string
	RuleID     string
	RuleName   string
	HelpURI    string
	Target     string
	Location   string
	Message    string
	Waived     bool
	WaiverText string
	Hidden     bool
	Snippet    []htmlLine
}

type htmlLine struct {
	Num  int
	Text string
}

// writeHTML renders the page. html/template escapes markup; every text
// also goes through render.Printable (source lines through
// render.SanitizeLine) first, so that control characters, C1 controls,
// bidirectional overrides and invalid UTF-8 from a manifest or a server
// show escaped rather than reorder or hide what the page says.
func writeHTML(w io.Writer, r *Report, opts WriteOptions) error {
	counts := reportCounts(r)
	d := htmlData{
		Version:     render.Printable(r.AgentformVersion),
		Summary:     summaryLine(r),
		Errors:      counts[SeverityError],
		Warnings:    counts[SeverityWarning],
		Notes:       counts[SeverityNote],
		WaivedCount: len(r.Waived),
		ShowWaived:  opts.ShowWaived,
		Gate:        htmlGate(r.Gate),
		Waived:      len(r.Waived) > 0,
	}
	if inc := r.Incomplete; inc != nil {
		d.Incomplete = newHTMLIncomplete(inc)
		d.Failed = inc.Failed
		d.Summary = incompleteTitle(inc)
		if !inc.Failed {
			d.Summary = summaryLine(r) + " · " + d.Summary
		}
	}
	rows := orderedMatrix(r.Matrix)
	tools := matrixTools(rows)
	for _, t := range tools {
		d.Tools = append(d.Tools, render.Printable(t))
	}
	for _, row := range rows {
		hr := htmlRow{Agent: render.Printable(row.Agent), Policy: render.Printable(policyLabel(row)), Title: render.Printable(htmlAgentTitle(row))}
		for _, t := range tools {
			hr.Cells = append(hr.Cells, newHTMLCell(row.Agent, t, row))
		}
		d.Rows = append(d.Rows, hr)
	}
	rules := ruleIndex(r.Rules)
	src := newSourceSet(opts.Source, r.Redaction)
	for _, f := range orderedFindings(r.Findings) {
		d.Findings = append(d.Findings, newHTMLFinding(f, rules, src, opts, false))
	}
	for _, f := range orderedFindings(r.Waived) {
		d.Findings = append(d.Findings, newHTMLFinding(f, rules, src, opts, true))
	}
	return htmlTemplate().Execute(w, d)
}

// newHTMLIncomplete makes the errors of an incomplete audit printable.
func newHTMLIncomplete(inc *Incomplete) *htmlIncomplete {
	out := &htmlIncomplete{Title: incompleteTitle(inc), Line: incompleteLine(inc)}
	for _, d := range orderedDiagnostics(inc.Errors) {
		out.Errors = append(out.Errors, htmlDiagnostic{
			Location: render.Printable(rangeLocation(d.Range)),
			Summary:  render.Printable(d.Summary),
			Detail:   render.Printable(d.Detail),
		})
	}
	return out
}

func htmlAgentTitle(row MatrixRow) string {
	var parts []string
	if row.Policy != "" {
		parts = append(parts, "policy: "+row.Policy)
	}
	if len(row.Holds) > 0 {
		parts = append(parts, "holds: "+strings.Join(row.Holds, ", "))
	}
	if row.RuntimeDependent {
		parts = append(parts, "capabilities or policy known at runtime: this row uses the defaults")
	}
	return strings.Join(parts, "; ")
}

// policyLabel is the policy a matrix shows beside an agent, marked when
// the row is computed from runtime() defaults.
func policyLabel(row MatrixRow) string {
	if row.RuntimeDependent {
		return row.Policy + " (runtime default)"
	}
	return row.Policy
}

func newHTMLCell(agent, tool string, row MatrixRow) htmlCell {
	st, c := lookupCell(row, tool)
	title := agent + " → " + tool + ": "
	missing := ""
	if len(c.Missing) > 0 {
		missing = " (missing " + strings.Join(c.Missing, ", ") + ")"
	}
	var hc htmlCell
	switch st {
	case cellAllow:
		hc = htmlCell{Class: "allow", Symbol: "✔", Title: title + "allowed"}
	case cellDeny:
		hc = htmlCell{Class: "deny", Symbol: "✖", Title: title + "denied" + missing}
	case cellOverride:
		hc = htmlCell{Class: "override", Symbol: "⚠", Title: title + "denied, reachable by a session override" + missing}
	default:
		hc = htmlCell{Class: "none", Title: title + "not in the matrix"}
	}
	hc.Title = render.Printable(hc.Title)
	return hc
}

// htmlGate returns a copy of g whose texts are printable.
func htmlGate(g *Gate) *Gate {
	if g == nil {
		return nil
	}
	out := &Gate{Against: render.Printable(g.Against), Pass: g.Pass}
	for _, a := range g.Granted {
		out.Granted = append(out.Granted, Access{Agent: render.Printable(a.Agent), Tool: render.Printable(a.Tool), ByOverride: a.ByOverride})
	}
	for _, a := range g.Revoked {
		out.Revoked = append(out.Revoked, Access{Agent: render.Printable(a.Agent), Tool: render.Printable(a.Tool)})
	}
	for _, s := range g.NewFindings {
		out.NewFindings = append(out.NewFindings, render.Printable(s))
	}
	for _, s := range g.Reasons {
		out.Reasons = append(out.Reasons, render.Printable(s))
	}
	return out
}

func newHTMLFinding(f Finding, rules map[string]Rule, src *sourceSet, opts WriteOptions, waived bool) htmlFinding {
	hf := htmlFinding{
		Severity: render.Printable(string(f.Severity)),
		RuleID:   render.Printable(f.RuleID),
		Target:   render.Printable(f.Target),
		Location: render.Printable(findingLocation(f)),
		Message:  render.Printable(f.Message),
		Waived:   waived,
		// Without JavaScript the page still honours ShowWaived.
		Hidden: waived && !opts.ShowWaived,
	}
	if rule, ok := rules[f.RuleID]; ok {
		hf.RuleName = render.Printable(rule.Name)
		hf.HelpURI = sarifHelpURI(rule.HelpURI)
	}
	if waived {
		hf.WaiverText = "waived"
		if f.Waiver != nil && f.Waiver.Reason != "" {
			hf.WaiverText += ": " + f.Waiver.Reason
		}
		if f.Waiver != nil && f.Waiver.Expires != "" {
			hf.WaiverText += " (expires " + f.Waiver.Expires + ")"
		}
		hf.WaiverText = render.Printable(hf.WaiverText)
	}
	nums, lines := src.snippet(f.Range, htmlSnippetLines)
	for i, n := range nums {
		hf.Snippet = append(hf.Snippet, htmlLine{Num: n, Text: render.SanitizeLine([]byte(expandTabs(lines[i])))})
	}
	return hf
}
