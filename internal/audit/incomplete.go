package audit

import (
	"cmp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/render"
)

// MarkIncomplete records that the errors of errs (its warnings are
// ignored), which no finding reports, kept the audit from planning the
// whole workspace: the report covers only what could be planned. Their
// text is scrubbed with r.Redaction, as findings are. It does nothing
// when errs has no error.
func (r *Report) MarkIncomplete(errs hcl.Diagnostics) {
	if ds := newDiagnostics(errs, r.Redaction); len(ds) > 0 {
		r.Incomplete = &Incomplete{Errors: ds}
	}
}

// Failed returns the report of an audit that could not run at all because
// the workspace could not be read: no findings and no matrix, the rule
// catalog, and the errors of errs (scrubbed with red, which may be nil:
// the redaction of the manifest as far as it loaded). Written in any
// format, it says that the audit failed, so that a report a CI step
// uploads afterwards is never a stale one or one that looks clean.
func Failed(errs hcl.Diagnostics, red *render.Redaction) *Report {
	r := newReport()
	r.Incomplete = &Incomplete{Failed: true, Errors: newDiagnostics(errs, red)}
	r.Redaction = red
	return r
}

// newDiagnostics returns the errors of diags as report diagnostics, with
// the text standard error shows: scrubbed with red, and with what could act
// on a terminal or reorder text escaped (render.Printable; a detail can
// quote an MCP server's standard error), in the report's order
// (orderedDiagnostics). Never nil.
func newDiagnostics(diags hcl.Diagnostics, red *render.Redaction) []Diagnostic {
	out := []Diagnostic{}
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		out = append(out, Diagnostic{
			Summary: render.Printable(red.Scrub(d.Summary)),
			Detail:  render.Printable(red.Scrub(d.Detail)),
			Range:   d.Subject,
		})
	}
	return orderedDiagnostics(out)
}

// orderedDiagnostics returns a sorted copy of ds in the one order a report
// lists errors in: standard error's (render.CompareDiagnostics: those
// without a place first, then by file, line and column), then by the text
// as the report shows it, so that renderers are deterministic for any
// report, one built by hand included.
func orderedDiagnostics(ds []Diagnostic) []Diagnostic {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(x, y Diagnostic) int {
		return cmp.Or(
			render.CompareDiagnostics(&hcl.Diagnostic{Severity: hcl.DiagError, Subject: x.Range}, &hcl.Diagnostic{Severity: hcl.DiagError, Subject: y.Range}),
			strings.Compare(x.Summary, y.Summary),
			strings.Compare(x.Detail, y.Detail),
		)
	})
	return out
}

// incompleteLine says what an incomplete report covers: that the audit
// failed, or that it covers only what could be planned; "" for a report
// of the whole workspace.
func incompleteLine(inc *Incomplete) string {
	if inc == nil {
		return ""
	}
	n := countNoun(len(inc.Errors), "error")
	if inc.Failed {
		return "The audit failed: " + n + " kept agentform from reading the workspace; nothing was audited."
	}
	return "The audit is incomplete: " + n + " kept agentform from planning the whole workspace; the report covers only what it could plan."
}

// incompleteTitle is "Audit failed" or "Audit incomplete".
func incompleteTitle(inc *Incomplete) string {
	if inc.Failed {
		return "Audit failed"
	}
	return "Audit incomplete"
}

// diagnosticText is a diagnostic's summary and detail: "Summary: detail".
func diagnosticText(d Diagnostic) string {
	if d.Detail == "" {
		return d.Summary
	}
	return d.Summary + ": " + d.Detail
}
