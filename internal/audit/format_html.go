package audit

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
	"sync"
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

func writeHTML(w io.Writer, r *Report, opts WriteOptions) error {
	counts := reportCounts(r)
	d := htmlData{
		Version:     r.AgentformVersion,
		Summary:     summaryLine(r),
		Errors:      counts[SeverityError],
		Warnings:    counts[SeverityWarning],
		Notes:       counts[SeverityNote],
		WaivedCount: len(r.Waived),
		ShowWaived:  opts.ShowWaived,
		Gate:        r.Gate,
		Waived:      len(r.Waived) > 0,
	}
	rows := orderedMatrix(r.Matrix)
	d.Tools = matrixTools(rows)
	for _, row := range rows {
		hr := htmlRow{Agent: row.Agent, Policy: row.Policy, Title: htmlAgentTitle(row)}
		for _, t := range d.Tools {
			hr.Cells = append(hr.Cells, newHTMLCell(row.Agent, t, row))
		}
		d.Rows = append(d.Rows, hr)
	}
	rules := ruleIndex(r.Rules)
	src := newSourceSet(opts.Source, r.Sensitive)
	for _, f := range orderedFindings(r.Findings) {
		d.Findings = append(d.Findings, newHTMLFinding(f, rules, src, opts, false))
	}
	for _, f := range orderedFindings(r.Waived) {
		d.Findings = append(d.Findings, newHTMLFinding(f, rules, src, opts, true))
	}
	return htmlTemplate().Execute(w, d)
}

func htmlAgentTitle(row MatrixRow) string {
	var parts []string
	if row.Policy != "" {
		parts = append(parts, "policy: "+row.Policy)
	}
	if len(row.Holds) > 0 {
		parts = append(parts, "holds: "+strings.Join(row.Holds, ", "))
	}
	return strings.Join(parts, "; ")
}

func newHTMLCell(agent, tool string, row MatrixRow) htmlCell {
	st, c := lookupCell(row, tool)
	title := agent + " → " + tool + ": "
	missing := ""
	if len(c.Missing) > 0 {
		missing = " (missing " + strings.Join(c.Missing, ", ") + ")"
	}
	switch st {
	case cellAllow:
		return htmlCell{Class: "allow", Symbol: "✔", Title: title + "allowed"}
	case cellDeny:
		return htmlCell{Class: "deny", Symbol: "✖", Title: title + "denied" + missing}
	case cellOverride:
		return htmlCell{Class: "override", Symbol: "⚠", Title: title + "denied, reachable by a session override" + missing}
	}
	return htmlCell{Class: "none", Title: title + "not in the matrix"}
}

func newHTMLFinding(f Finding, rules map[string]Rule, src *sourceSet, opts WriteOptions, waived bool) htmlFinding {
	hf := htmlFinding{
		Severity: string(f.Severity),
		RuleID:   f.RuleID,
		Target:   f.Target,
		Location: findingLocation(f),
		Message:  f.Message,
		Waived:   waived,
		// Without JavaScript the page still honours ShowWaived.
		Hidden: waived && !opts.ShowWaived,
	}
	if rule, ok := rules[f.RuleID]; ok {
		hf.RuleName = rule.Name
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
	}
	nums, lines := src.snippet(f.Range, htmlSnippetLines)
	for i, n := range nums {
		hf.Snippet = append(hf.Snippet, htmlLine{Num: n, Text: lines[i]})
	}
	return hf
}
