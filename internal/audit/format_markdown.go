package audit

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Limits of the markdown format, which must fit a pull-request comment:
// GitHub rejects a comment over 65,536 characters.
const (
	// mdBudget is the most bytes the report takes. A character is at
	// least one byte, so a report within it is within GitHub's limit.
	mdBudget = 65536
	// mdReserve is kept free while lists are written: room for every
	// heading and "…and N more" line still to come. Those are short and
	// bounded (names in them are cut at mdMaxName), about 1.5 KB at most.
	mdReserve = 4096
	// A matrix with more agents or tools than these is summarised as
	// per-agent counts instead of a grid, and the counts of at most
	// mdMaxMatrixRows agents are listed.
	mdMaxMatrixAgents = 20
	mdMaxMatrixTools  = 40
	mdMaxMatrixRows   = 100
	// Findings (and waived findings) past this many are counted, not
	// listed; so are items of a gate list, and errors of an incomplete
	// audit, past mdMaxList.
	mdMaxFindings = 100
	mdMaxList     = 50
	// Texts (messages, reasons) longer than mdMaxText bytes and names
	// (targets, locations, agents, tools) longer than mdMaxName are cut,
	// ending with "…".
	mdMaxText = 500
	mdMaxName = 120
	// mdMaxGateText cuts the gate's new findings, which the findings
	// table lists in full.
	mdMaxGateText = 200
)

// Markdown symbols of matrix cells and the gate.
const (
	mdAllow    = "✅"
	mdDeny     = "❌"
	mdOverride = "⚠️"
	mdPass     = "✅"
	mdFail     = "❌"
)

// mdWriter builds the report within mdBudget: headings and fixed lines
// are always written, list items only while they leave mdReserve free.
type mdWriter struct {
	b strings.Builder
	// limit, when not 0, is where list items stop instead of
	// mdBudget-mdReserve: the gate and the matrix come before the
	// findings and may not take the room the findings need.
	limit int
}

func (w *mdWriter) printf(format string, a ...any) { fmt.Fprintf(&w.b, format, a...) }

// room is the length list items may bring the report to.
func (w *mdWriter) room() int {
	if w.limit > 0 {
		return min(w.limit, mdBudget-mdReserve)
	}
	return mdBudget - mdReserve
}

// list writes row(0), row(1)… (each a whole line or table row) while
// there are at most max of them and each fits the budget; when rows are
// left out, it writes more(the number left out).
func (w *mdWriter) list(n, max int, row func(i int) string, more func(left int) string) {
	i := 0
	for ; i < n && i < max; i++ {
		r := row(i)
		if w.b.Len()+len(r) > w.room() {
			break
		}
		w.b.WriteString(r)
	}
	if i < n {
		w.b.WriteString(more(n - i))
	}
}

func writeMarkdown(w io.Writer, r *Report, opts WriteOptions) error {
	var m mdWriter
	rules := ruleIndex(r.Rules)

	m.printf("## agentform audit\n\n")
	summary := "**" + summaryLine(r) + "**"
	if g := r.Gate; g != nil {
		summary = mdGateVerdict(g) + " · " + summary
	}
	switch inc := r.Incomplete; {
	case inc != nil && inc.Failed:
		// No counts: nothing was audited.
		summary = mdFail + " **" + incompleteTitle(inc) + "**"
	case inc != nil:
		summary = mdFail + " **" + incompleteTitle(inc) + "** · " + summary
	}
	m.printf("%s\n", summary)

	// The errors, the gate and the matrix, above the findings, stop at
	// half the budget, so that findings are always listed.
	m.limit = mdBudget / 2
	if inc := r.Incomplete; inc != nil {
		mdIncomplete(&m, inc)
		if inc.Failed {
			_, err := io.WriteString(w, m.b.String())
			return err
		}
	}
	if r.Gate != nil {
		mdGate(&m, r.Gate)
	}
	if len(r.Matrix) > 0 {
		mdMatrix(&m, r.Matrix)
	}
	m.limit = 0

	findings := orderedFindings(r.Findings)
	m.printf("\n### Findings\n\n")
	if len(findings) == 0 {
		m.printf("No findings.\n")
	} else {
		m.printf("| Severity | Rule | Target | Location | Message |\n| --- | --- | --- | --- | --- |\n")
		m.list(len(findings), mdMaxFindings, func(i int) string {
			f := findings[i]
			return fmt.Sprintf("| %s | %s | %s | %s | %s |\n",
				mdSeverity(f.Severity), mdRule(f.RuleID, rules), mdCode(f.Target), mdCode(findingLocation(f)), mdText(f.Message))
		}, func(left int) string {
			return fmt.Sprintf("\n…and %d more, not listed here: run `agentform audit` for all %d findings.\n", left, len(findings))
		})
	}

	if len(r.Waived) > 0 {
		m.printf("\n")
		if opts.ShowWaived {
			mdWaived(&m, orderedFindings(r.Waived), rules)
		} else {
			m.printf("%s waived (not listed).\n", countNoun(len(r.Waived), "finding"))
		}
	}
	_, err := io.WriteString(w, m.b.String())
	return err
}

// mdIncomplete says what the report does not cover and lists the errors
// that kept the audit from it.
func mdIncomplete(m *mdWriter, inc *Incomplete) {
	m.printf("\n### %s\n\n%s\n", incompleteTitle(inc), mdText(incompleteLine(inc)))
	ds := orderedDiagnostics(inc.Errors)
	if len(ds) == 0 {
		return
	}
	m.printf("\n| Location | Error |\n| --- | --- |\n")
	m.list(len(ds), mdMaxList, func(i int) string {
		return fmt.Sprintf("| %s | %s |\n", mdCode(rangeLocation(ds[i].Range)), mdText(diagnosticText(ds[i])))
	}, func(left int) string {
		return fmt.Sprintf("\n…and %d more, not listed here: run `agentform audit` for all %d errors.\n", left, len(ds))
	})
}

func mdGateVerdict(g *Gate) string {
	if g.Pass {
		return mdPass + " **No new access: PASS**"
	}
	return mdFail + " **No new access: FAIL**"
}

func mdGate(m *mdWriter, g *Gate) {
	verdict := mdFail + " FAIL"
	if g.Pass {
		verdict = mdPass + " PASS"
	}
	m.printf("\n### No new access: %s\n", verdict)
	if g.Against != "" {
		m.printf("\nCompared with %s.\n", mdInline(g.Against))
	}
	moreItems := func(left int) string { return fmt.Sprintf("- …and %d more\n", left) }
	if len(g.Reasons) > 0 {
		m.printf("\n")
		m.list(len(g.Reasons), mdMaxList, func(i int) string { return "- " + mdText(g.Reasons[i]) + "\n" }, moreItems)
	}
	for _, list := range []struct {
		title string
		as    []Access
	}{{"Granted since", g.Granted}, {"Revoked since", g.Revoked}} {
		if len(list.as) == 0 {
			continue
		}
		m.printf("\n**%s** (%d):\n\n", list.title, len(list.as))
		m.list(len(list.as), mdMaxList, func(i int) string {
			return fmt.Sprintf("- %s → %s%s\n", mdInline(list.as[i].Agent), mdInline(list.as[i].Tool), byOverrideNote(list.as[i]))
		}, moreItems)
	}
	if len(g.NewFindings) > 0 {
		m.printf("\n**New findings** (%d):\n\n", len(g.NewFindings))
		// The findings table below has the whole message.
		m.list(len(g.NewFindings), mdMaxList, func(i int) string { return "- " + mdTextCut(g.NewFindings[i], mdMaxGateText) + "\n" }, moreItems)
	}
}

// mdMatrix writes the matrix with tools as rows and agents as columns, or
// per-agent counts when the grid would be too wide or too long.
func mdMatrix(m *mdWriter, rows []MatrixRow) {
	rows = orderedMatrix(rows)
	tools := matrixTools(rows)
	m.printf("\n### Capability matrix\n\n")
	grid := len(rows) <= mdMaxMatrixAgents && len(tools) <= mdMaxMatrixTools
	head, rule := "| Tool |", "| --- |"
	if grid {
		for _, row := range rows {
			head += " " + mdCode(row.Agent) + " |"
			rule += " :---: |"
		}
		// When the header alone does not fit, count instead.
		grid = m.b.Len()+len(head)+len(rule) <= m.room()
	}
	if !grid {
		m.printf("%d agents × %d tools: too large for a grid, counted per agent.\n\n", len(rows), len(tools))
		m.printf("| Agent | Policy | Allowed | Denied | Reachable by override |\n| --- | --- | ---: | ---: | ---: |\n")
		m.list(len(rows), mdMaxMatrixRows, func(i int) string {
			var n [4]int
			for _, t := range tools {
				st, _ := lookupCell(rows[i], t)
				n[st]++
			}
			return fmt.Sprintf("| %s | %s | %d | %d | %d |\n",
				mdCode(rows[i].Agent), mdText(policyLabel(rows[i])), n[cellAllow], n[cellDeny]+n[cellOverride], n[cellOverride])
		}, func(left int) string { return fmt.Sprintf("\n…and %d more agents, not listed here.\n", left) })
		return
	}
	m.printf("%s allowed · %s denied · %s denied, reachable by a session override\n\n", mdAllow, mdDeny, mdOverride)
	m.printf("%s\n%s\n", head, rule)
	m.list(len(tools), len(tools), func(i int) string {
		line := "| " + mdCode(tools[i]) + " |"
		for _, row := range rows {
			st, _ := lookupCell(row, tools[i])
			line += " " + mdCellSymbol(st) + " |"
		}
		return line + "\n"
	}, func(left int) string { return fmt.Sprintf("\n…and %d more tools, not listed here.\n", left) })
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

func mdWaived(m *mdWriter, waived []Finding, rules map[string]Rule) {
	m.printf("### Waived (%d)\n\n", len(waived))
	m.printf("| Severity | Rule | Target | Location | Message | Reason | Expires |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	m.list(len(waived), mdMaxFindings, func(i int) string {
		f := waived[i]
		var reason, expires string
		if f.Waiver != nil {
			reason, expires = f.Waiver.Reason, f.Waiver.Expires
		}
		return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |\n",
			mdSeverity(f.Severity), mdRule(f.RuleID, rules), mdCode(f.Target), mdCode(findingLocation(f)),
			mdText(f.Message), mdText(reason), mdText(expires))
	}, func(left int) string {
		return fmt.Sprintf("\n…and %d more waived, not listed here: run `agentform audit -show-waived` for all %d.\n", left, len(waived))
	})
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
// markup, inline HTML, an entity, a table column break or the start of
// GitHub's math ("$x$").
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "~", `\~`, "&", `\&`, "#", `\#`, "$", `\$`,
)

// mdText makes s plain text in Markdown, on one line, cut at mdMaxText
// bytes: no markup, math, mention or link.
func mdText(s string) string { return mdTextCut(s, mdMaxText) }

// mdTextCut is mdText cut at n bytes.
func mdTextCut(s string, n int) string {
	return mdInert(mdEscaper.Replace(cutText(oneLine(s), n)))
}

// mdBreak is an empty HTML comment: it shows nothing, but it splits the
// text around it into separate nodes, which neither GitHub's autolinks nor
// its mentions join again (a backslash escape would not do for mentions:
// GitHub finds them in the rendered text, after escapes are gone).
const mdBreak = "<!-- -->"

// mdInert breaks in escaped text what GitHub would act on: a mention
// ("@user", "@org/team", which notifies them) and an email address get a
// break after the "@"; an issue reference ("#12", "owner/repo#12", which
// links the issue and notes the mention in it) one after the "#", and
// its other form ("GH-12") one after the "-"; a URL
// ("https://…") and a "www." link get one before "://" and the dot. Text
// without them is returned as is.
func mdInert(s string) string {
	if !strings.ContainsAny(s, "@#:wWgG") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '@':
			b.WriteString("@" + mdBreak)
			i++
		case s[i] == '#' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			b.WriteString("#" + mdBreak)
			i++
		case len(s)-i >= 4 && strings.EqualFold(s[i:i+3], "gh-") && s[i+3] >= '0' && s[i+3] <= '9':
			b.WriteString(s[i:i+3] + mdBreak)
			i += 3
		case strings.HasPrefix(s[i:], "://"):
			b.WriteString(mdBreak + "://")
			i += 3
		case len(s)-i >= 4 && strings.EqualFold(s[i:i+4], "www."):
			b.WriteString(s[i:i+3] + mdBreak + ".")
			i += 4
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// cutText returns s when it has at most n bytes, else its longest prefix
// of whole characters that leaves room for "…", followed by "…".
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// mdCode writes s as a code span for a table cell: see mdSpan.
func mdCode(s string) string { return mdSpan(s, true) }

// mdInline writes s as a code span outside tables: see mdSpan.
func mdInline(s string) string { return mdSpan(s, false) }

// mdSpan writes s, cut at mdMaxName bytes, as a code span on one line
// ("" for the empty string) whose fence is longer than any run of backticks inside. In a table,
// pipes are escaped, which GitHub requires even inside code spans (and
// where the backslash does not show).
func mdSpan(s string, inTable bool) string {
	s = cutText(oneLine(s), mdMaxName)
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
