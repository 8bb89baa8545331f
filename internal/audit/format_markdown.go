package audit

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// Limits of the markdown format, which must fit a pull-request comment
// (GitHub rejects comments over 65,536 characters).
const (
	// A matrix with more agents or tools than these is summarised as
	// per-agent counts instead of a grid.
	mdMaxMatrixAgents = 20
	mdMaxMatrixTools  = 40
	// Findings past this many are counted, not listed.
	mdMaxFindings = 100
)

// Markdown symbols of matrix cells and the gate.
const (
	mdAllow    = "✅"
	mdDeny     = "❌"
	mdOverride = "⚠️"
	mdPass     = "✅"
	mdFail     = "❌"
)

func writeMarkdown(w io.Writer, r *Report, opts WriteOptions) error {
	b := bufio.NewWriter(w)
	rules := ruleIndex(r.Rules)

	fmt.Fprintln(b, "## agentform audit")
	fmt.Fprintln(b)
	summary := "**" + summaryLine(r) + "**"
	if g := r.Gate; g != nil {
		summary = mdGateVerdict(g) + " · " + summary
	}
	fmt.Fprintln(b, summary)

	if r.Gate != nil {
		mdGate(b, r.Gate)
	}
	if len(r.Matrix) > 0 {
		mdMatrix(b, r.Matrix)
	}

	findings := orderedFindings(r.Findings)
	fmt.Fprintln(b)
	fmt.Fprintln(b, "### Findings")
	fmt.Fprintln(b)
	if len(findings) == 0 {
		fmt.Fprintln(b, "No findings.")
	} else {
		fmt.Fprintln(b, "| Severity | Rule | Target | Location | Message |")
		fmt.Fprintln(b, "| --- | --- | --- | --- | --- |")
		for i, f := range findings {
			if i == mdMaxFindings {
				break
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n",
				mdSeverity(f.Severity), mdRule(f.RuleID, rules), mdCode(f.Target), mdCode(findingLocation(f)), mdText(f.Message))
		}
		if n := len(findings) - mdMaxFindings; n > 0 {
			fmt.Fprintf(b, "\n…and %d more, not listed here: run `agentform audit` for all %d findings.\n", n, len(findings))
		}
	}

	if len(r.Waived) > 0 {
		fmt.Fprintln(b)
		if opts.ShowWaived {
			mdWaived(b, orderedFindings(r.Waived), rules)
		} else {
			fmt.Fprintf(b, "%s waived (not listed).\n", countNoun(len(r.Waived), "finding"))
		}
	}
	return b.Flush()
}

func mdGateVerdict(g *Gate) string {
	if g.Pass {
		return mdPass + " **No new access: PASS**"
	}
	return mdFail + " **No new access: FAIL**"
}

func mdGate(b *bufio.Writer, g *Gate) {
	verdict := mdFail + " FAIL"
	if g.Pass {
		verdict = mdPass + " PASS"
	}
	fmt.Fprintln(b)
	fmt.Fprintf(b, "### No new access: %s\n", verdict)
	if g.Against != "" {
		fmt.Fprintf(b, "\nCompared with %s.\n", mdInline(g.Against))
	}
	if len(g.Reasons) > 0 {
		fmt.Fprintln(b)
		for _, s := range g.Reasons {
			fmt.Fprintf(b, "- %s\n", mdText(s))
		}
	}
	for _, list := range []struct {
		title string
		as    []Access
	}{{"Granted since", g.Granted}, {"Revoked since", g.Revoked}} {
		if len(list.as) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n**%s** (%d):\n\n", list.title, len(list.as))
		for _, a := range list.as {
			fmt.Fprintf(b, "- %s → %s\n", mdInline(a.Agent), mdInline(a.Tool))
		}
	}
	if len(g.NewFindings) > 0 {
		fmt.Fprintf(b, "\n**New findings** (%d):\n\n", len(g.NewFindings))
		for _, s := range g.NewFindings {
			fmt.Fprintf(b, "- %s\n", mdText(s))
		}
	}
}

// mdMatrix writes the matrix with tools as rows and agents as columns, or
// per-agent counts when the grid would be too wide or too long.
func mdMatrix(b *bufio.Writer, rows []MatrixRow) {
	rows = orderedMatrix(rows)
	tools := matrixTools(rows)
	fmt.Fprintln(b)
	fmt.Fprintln(b, "### Capability matrix")
	fmt.Fprintln(b)
	if len(rows) > mdMaxMatrixAgents || len(tools) > mdMaxMatrixTools {
		fmt.Fprintf(b, "%d agents × %d tools: too large for a grid, counted per agent.\n\n", len(rows), len(tools))
		fmt.Fprintln(b, "| Agent | Policy | Allowed | Denied | Reachable by override |")
		fmt.Fprintln(b, "| --- | --- | ---: | ---: | ---: |")
		for _, row := range rows {
			var n [4]int
			for _, t := range tools {
				st, _ := lookupCell(row, t)
				n[st]++
			}
			fmt.Fprintf(b, "| %s | %s | %d | %d | %d |\n",
				mdCode(row.Agent), mdText(row.Policy), n[cellAllow], n[cellDeny]+n[cellOverride], n[cellOverride])
		}
		return
	}
	fmt.Fprintf(b, "%s allowed · %s denied · %s denied, reachable by a session override\n\n", mdAllow, mdDeny, mdOverride)
	head, rule := "| Tool |", "| --- |"
	for _, row := range rows {
		head += " " + mdCode(row.Agent) + " |"
		rule += " :---: |"
	}
	fmt.Fprintln(b, head)
	fmt.Fprintln(b, rule)
	for _, t := range tools {
		line := "| " + mdCode(t) + " |"
		for _, row := range rows {
			st, _ := lookupCell(row, t)
			line += " " + mdCellSymbol(st) + " |"
		}
		fmt.Fprintln(b, line)
	}
}

func mdCellSymbol(st cellState) string {
	switch st {
	case cellAllow:
		return mdAllow
	case cellDeny:
		return mdDeny
	case cellOverride:
		return mdOverride
	}
	return ""
}

func mdWaived(b *bufio.Writer, waived []Finding, rules map[string]Rule) {
	fmt.Fprintf(b, "### Waived (%d)\n\n", len(waived))
	fmt.Fprintln(b, "| Severity | Rule | Target | Location | Message | Reason | Expires |")
	fmt.Fprintln(b, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, f := range waived {
		var reason, expires string
		if f.Waiver != nil {
			reason, expires = f.Waiver.Reason, f.Waiver.Expires
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n",
			mdSeverity(f.Severity), mdRule(f.RuleID, rules), mdCode(f.Target), mdCode(findingLocation(f)),
			mdText(f.Message), mdText(reason), mdText(expires))
	}
}

func mdSeverity(s Severity) string {
	icon := ""
	switch s {
	case SeverityError:
		icon = "🔴 "
	case SeverityWarning:
		icon = "🟡 "
	case SeverityNote:
		icon = "🔵 "
	}
	return icon + mdText(string(s))
}

// mdRule is the rule ID linked to its help page, when the rule is known
// and its help URI is absolute.
func mdRule(id string, rules map[string]Rule) string {
	rule, ok := rules[id]
	if !ok || sarifHelpURI(rule.HelpURI) == "" {
		return mdText(id)
	}
	return "[" + mdText(id) + "](" + mdURL(rule.HelpURI) + ")"
}

// mdURL escapes the characters that would end a link destination or a
// table cell.
func mdURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return strings.NewReplacer("(", "%28", ")", "%29", "|", "%7C", " ", "%20", "<", "%3C", ">", "%3E").Replace(u.String())
}

// mdEscaper backslash-escapes the characters that Markdown would read as
// markup, inline HTML, an entity or a table column break.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "~", `\~`, "&", `\&`, "#", `\#`,
)

// mdText makes s plain text in Markdown, on one line.
func mdText(s string) string {
	return mdEscaper.Replace(oneLine(s))
}

// mdCode writes s as a code span for a table cell: see mdSpan.
func mdCode(s string) string { return mdSpan(s, true) }

// mdInline writes s as a code span outside tables: see mdSpan.
func mdInline(s string) string { return mdSpan(s, false) }

// mdSpan writes s as a code span on one line ("" for the empty string)
// whose fence is longer than any run of backticks inside. In a table,
// pipes are escaped, which GitHub requires even inside code spans (and
// where the backslash does not show).
func mdSpan(s string, inTable bool) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if inTable {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
