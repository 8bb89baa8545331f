package audit

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// overBroadManifest has agents agents that all hold the root namespace of
// tools bash tools, one block each: every agent can call every tool, and
// each gets an AF105 finding whose message names every block. Waivers
// accept the findings of the first waived agents.
func overBroadManifest(agents, tools, waived int) string {
	var b strings.Builder
	for i := range agents {
		fmt.Fprintf(&b, "agent \"agent_%03d\" {\n  capabilities = [\"grp\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n\n", i)
	}
	for i := range tools {
		fmt.Fprintf(&b, "tool \"tool_%03d\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"grp::t%03d\"]\n}\n\n", i, i)
	}
	for i := range waived {
		fmt.Fprintf(&b, "waiver \"AF105\" {\n  target = \"agent.agent_%03d\"\n  reason = %q\n}\n\n", i, strings.Repeat("The whole group is reviewed by the platform team. ", 20))
	}
	return b.String()
}

// TestMarkdownBudget renders a large real workspace as markdown, with
// waived findings and a gate against an empty baseline (each of the
// 18,000 allowed cells granted): the report stays within a pull-request
// comment, lists are cut with a count of what is left out, long messages
// are cut, and the gate names each grant once.
func TestMarkdownBudget(t *testing.T) {
	r, opts := workspaceReport(t, writeWorkspace(t, overBroadManifest(150, 120, 40)))
	CompareBaseline(r, &Report{}, "baseline.json")
	if len(r.Findings) < 110 || len(r.Waived) < 40 || len(r.Gate.Granted) != 150*120 {
		t.Fatalf("workspace\ngot:  %d findings, %d waived, %d granted\nwant: 110 or more, 40 or more, %d", len(r.Findings), len(r.Waived), len(r.Gate.Granted), 150*120)
	}
	out := string(writeReport(t, r, FormatMarkdown, opts))
	if len(out) > mdBudget || utf8.RuneCountInString(out) > 65536 {
		t.Errorf("report size\ngot:  %d bytes, %d characters\nwant: at most %d bytes", len(out), utf8.RuneCountInString(out), mdBudget)
	}
	for _, s := range []string{
		"**Granted since** (18000):",
		"- …and 17950 more\n",
		"150 agents × 120 tools: too large for a grid, counted per agent.",
		"…and 50 more agents, not listed here.",
		"not listed here: run `agentform audit` for all",
		"not listed here: run `agentform audit -show-waived` for all",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q\ngot:\n%s", s, out)
		}
	}
	// AF105 messages name all 120 blocks: they are cut, with an ellipsis.
	cut := regexp.MustCompile(`(?m)^\| 🟡 warning \| \[AF105\]\(.*\) \| ` + "`agent.agent_0[0-9]+` \\| `agent.acl:[0-9]+` \\| Agent .{400,520}… \\|$")
	if !cut.MatchString(out) {
		t.Errorf("output lacks an AF105 row whose message is cut\ngot:\n%s", out)
	}
	// agent_000's finding is waived, so no new finding names it either.
	gate, _, _ := strings.Cut(out, "### Capability matrix")
	n := 0
	for _, line := range strings.Split(gate, "\n") {
		if strings.Contains(strings.ReplaceAll(line, `\_`, "_"), "agent_000") && strings.Contains(strings.ReplaceAll(line, `\_`, "_"), "tool_000") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("lines of the gate naming agent_000 → tool_000\ngot:  %d\nwant: 1\n%s", n, gate)
	}
	checkMarkdownTables(t, out)
}

// TestMarkdownBudgetLongNames: names and texts of any length (an MCP
// server chooses its tools' names) in every part of the report still
// leave it within the budget, with tables intact.
func TestMarkdownBudgetLongNames(t *testing.T) {
	long := func(prefix string, i int) string {
		return fmt.Sprintf("%s%03d_%s", prefix, i, strings.Repeat("x|`*", 2500))
	}
	r := &Report{Gate: &Gate{Against: long("baseline", 0)}}
	for i := range mdMaxMatrixAgents {
		row := MatrixRow{Agent: long("agent", i), Policy: long("policy", i)}
		for j := range mdMaxMatrixTools {
			row.Cells = append(row.Cells, Cell{Tool: long("tool", j), Allowed: j%2 == 0})
		}
		r.Matrix = append(r.Matrix, row)
	}
	for i := range 300 {
		f := Finding{RuleID: long("AF", i), Severity: SeverityWarning, Target: long("agent.", i), Message: long("message", i),
			Range: rng(long("file", i), i+1, 1, i+1, 2)}
		r.Findings = append(r.Findings, f)
		f.Waiver = &Waiver{Reason: long("reason", i), Expires: long("expires", i)}
		r.Waived = append(r.Waived, f)
		r.Gate.Granted = append(r.Gate.Granted, Access{Agent: long("agent", i), Tool: long("tool", i)})
		r.Gate.Revoked = append(r.Gate.Revoked, Access{Agent: long("agent", i), Tool: long("tool", i)})
		r.Gate.NewFindings = append(r.Gate.NewFindings, long("new", i))
		r.Gate.Reasons = append(r.Gate.Reasons, long("reason", i))
	}
	out := string(writeReport(t, r, FormatMarkdown, WriteOptions{ShowWaived: true}))
	if len(out) > mdBudget {
		t.Errorf("report size\ngot:  %d bytes\nwant: at most %d", len(out), mdBudget)
	}
	// The gate and the matrix above them leave the findings room.
	_, findings, _ := strings.Cut(out, "### Findings")
	if rows := strings.Count(findings, "\n| ⚠") + strings.Count(findings, "\n| 🟡"); rows == 0 {
		t.Errorf("no finding listed: the sections above took the budget\ngot:\n%s", out)
	}
	checkMarkdownTables(t, out)
}

// TestMarkdownInertText: text from the manifest and from servers cannot
// mention anyone, link anywhere or typeset math in a pull-request
// comment, in plain text (a check message, a waiver reason, the gate) as
// in table cells.
func TestMarkdownInertText(t *testing.T) {
	r, opts := workspaceReport(t, filepath.Join("testdata", t.Name()))
	CompareBaseline(r, &Report{}, "baseline@octocat.json")
	out := string(writeReport(t, r, FormatMarkdown, opts))
	// Code spans are inert, and rule help links are agentform's own:
	// look at the rest.
	text := regexp.MustCompile("`[^`]*`").ReplaceAllString(out, "")
	text = strings.ReplaceAll(text, "]("+HelpBase, "](")
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`@[A-Za-z0-9]`), // a mention or an email address
		regexp.MustCompile(`(?i)https?:/`), // a URL
		regexp.MustCompile(`(?i)www\.`),    // a www. link
		regexp.MustCompile(`(^|[^\\])\$`),  // math
		regexp.MustCompile(`#[0-9]`),       // an issue reference
		regexp.MustCompile(`(?i)gh-[0-9]`), // and its other form
	} {
		if m := bad.FindString(text); m != "" {
			t.Errorf("output has %q, which GitHub acts on\ngot:\n%s", m, out)
		}
	}
	for _, s := range []string{
		`Ask @<!-- -->octocat and @<!-- -->acme/security, see https<!-- -->://evil.example/x or WWW<!-- -->.evil.example, \$x^2\$ costs \$\$5. Fixes \#<!-- -->12, GH-<!-- -->3, gh-<!-- -->4 and acme/infra\#<!-- -->7; not \#x or GH-x.`,
		`Cleared by @<!-- -->octocat (mailto:bob@<!-- -->example.com), details at http<!-- -->://evil.example and www<!-- -->.evil.example.`,
		"`github__ping_@octocat_https://evil.example_$x$`",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q\ngot:\n%s", s, out)
		}
	}
	checkMarkdownTables(t, out)
}
