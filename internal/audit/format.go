package audit

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/render"
)

// Format names an output format of "agentform audit -format=...".
type Format string

// The output formats. Every renderer reads the report only: none of them
// changes it, and each writes the same bytes for the same report and
// options.
const (
	// FormatTable is the terminal table, the default.
	FormatTable Format = "table"
	// FormatJSON is the report as a versioned JSON document; a later
	// run reads it back as a baseline.
	FormatJSON Format = "json"
	// FormatSARIF is a SARIF 2.1.0 log for code-scanning services.
	FormatSARIF Format = "sarif"
	// FormatMarkdown fits a pull-request comment.
	FormatMarkdown Format = "markdown"
	// FormatHTML is one self-contained page: no external resources.
	FormatHTML Format = "html"
	// FormatJUnit is JUnit XML for CI test dashboards.
	FormatJUnit Format = "junit"
)

// Formats lists every format, the default first.
func Formats() []Format {
	return []Format{FormatTable, FormatJSON, FormatSARIF, FormatMarkdown, FormatHTML, FormatJUnit}
}

// Errors returned by Write and ParseFormat.
var (
	// ErrUnknownFormat is returned for a format name that is not one of
	// Formats.
	ErrUnknownFormat = errors.New("unknown audit format")
	// ErrNilReport is returned by Write when the report is nil.
	ErrNilReport = errors.New("no audit report to write")
)

// ParseFormat returns the format named s; the empty string is the default,
// FormatTable. Names are matched exactly (they are lowercase).
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return FormatTable, nil
	}
	if slices.Contains(Formats(), Format(s)) {
		return Format(s), nil
	}
	names := make([]string, 0, len(Formats()))
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("%w %q (want one of %s)", ErrUnknownFormat, s, strings.Join(names, ", "))
}

// WriteOptions tunes the renderers. The zero value is plain output without
// waived findings or source snippets.
type WriteOptions struct {
	// Color turns on ANSI colours in the table format; set it when the
	// output is a terminal. Other formats ignore it.
	Color bool
	// ShowWaived lists waived findings with their reason and expiry
	// (table, markdown), or shows them by default (html). JSON, SARIF and
	// JUnit always include them, marked as waived.
	ShowWaived bool
	// Source maps a file name, as in Finding.Range.Filename, to its
	// content, for source snippets in the table and HTML formats and for
	// SARIF columns, which count code points in it. It is optional: a
	// missing file prints the location alone, and SARIF regions of such a
	// file give lines only.
	Source map[string][]byte
	// RepoPath is the workspace's path from the repository root
	// ("examples/quickstart"; "" for the root itself). SARIF locations are
	// relative to the repository root, where code-scanning services look
	// for files; other formats keep paths relative to the workspace.
	RepoPath string
}

// Write renders r in the named format ("" is the table) to w. It returns
// ErrUnknownFormat for an unknown name, ErrNilReport for a nil report, and
// otherwise only errors from w. The output depends on r and opts alone.
func Write(w io.Writer, r *Report, format string, opts WriteOptions) error {
	f, err := ParseFormat(format)
	if err != nil {
		return err
	}
	if r == nil {
		return ErrNilReport
	}
	switch f {
	case FormatJSON:
		err = writeJSON(w, r)
	case FormatSARIF:
		err = writeSARIF(w, r, opts)
	case FormatMarkdown:
		err = writeMarkdown(w, r, opts)
	case FormatHTML:
		err = writeHTML(w, r, opts)
	case FormatJUnit:
		err = writeJUnit(w, r)
	default:
		err = writeTable(w, r, opts)
	}
	if err != nil {
		return fmt.Errorf("writing %s audit report: %w", f, err)
	}
	return nil
}

// severities lists the known severities, most severe first.
var severities = []Severity{SeverityError, SeverityWarning, SeverityNote}

// orderedFindings returns a sorted copy of fs in the order Report
// promises (most severe first, then rule ID, target, agent and tool), with
// message, location and fingerprint breaking ties, so that renderers are
// deterministic even for a hand-built report that is not sorted.
func orderedFindings(fs []Finding) []Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, compareFindings)
	return out
}

// compareFindings is the order of orderedFindings.
func compareFindings(x, y Finding) int {
	if c := y.Severity.Rank() - x.Severity.Rank(); c != 0 {
		return c
	}
	for _, pair := range [][2]string{
		{x.RuleID, y.RuleID}, {x.Target, y.Target}, {x.Agent, y.Agent}, {x.Tool, y.Tool},
		{string(x.Severity), string(y.Severity)}, {x.Message, y.Message},
		{findingLocation(x), findingLocation(y)}, {x.Fingerprint, y.Fingerprint},
	} {
		if c := strings.Compare(pair[0], pair[1]); c != 0 {
			return c
		}
	}
	return 0
}

// reportCounts returns the unwaived findings per known severity: r.Counts
// when the report carries them, else counted from r.Findings.
func reportCounts(r *Report) map[Severity]int {
	out := map[Severity]int{SeverityError: 0, SeverityWarning: 0, SeverityNote: 0}
	if r.Counts != nil {
		for s, n := range r.Counts {
			out[s] = n
		}
		return out
	}
	for _, f := range r.Findings {
		out[f.Severity]++
	}
	return out
}

// summaryLine is "3 errors, 5 warnings, 12 notes", followed by " (2
// waived)" when findings were waived.
func summaryLine(r *Report) string {
	c := reportCounts(r)
	s := fmt.Sprintf("%s, %s, %s",
		countNoun(c[SeverityError], "error"), countNoun(c[SeverityWarning], "warning"), countNoun(c[SeverityNote], "note"))
	if len(r.Waived) > 0 {
		s += fmt.Sprintf(" (%d waived)", len(r.Waived))
	}
	return s
}

// countNoun renders "1 error", "3 errors".
func countNoun(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// findingLocation is "file:line" for a finding's range, "" without one.
func findingLocation(f Finding) string { return rangeLocation(f.Range) }

// rangeLocation is "file:line" for a range, "" without one.
func rangeLocation(rng *hcl.Range) string {
	if rng == nil || rng.Filename == "" {
		return ""
	}
	if rng.Start.Line < 1 {
		return rng.Filename
	}
	return rng.Filename + ":" + strconv.Itoa(rng.Start.Line)
}

// ruleIndex maps rule IDs to their rule, for help links and names.
func ruleIndex(rules []Rule) map[string]Rule {
	out := make(map[string]Rule, len(rules))
	for _, r := range rules {
		if _, dup := out[r.ID]; !dup {
			out[r.ID] = r
		}
	}
	return out
}

// oneLine makes s safe to print on one line of a terminal or a table
// cell: line breaks and tabs become spaces, and everything
// render.Printable escapes (control characters, C1 controls,
// bidirectional overrides and isolates, invalid UTF-8), which could move
// the cursor, recolour the terminal or reorder what the reader sees, is
// shown escaped.
func oneLine(s string) string {
	return render.Printable(lineBreaks.Replace(s))
}

// lineBreaks turns line breaks and tabs into spaces.
var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ")

// matrixTools is the sorted union of the tools of every row.
func matrixTools(rows []MatrixRow) []string {
	seen := map[string]bool{}
	var out []string
	for _, row := range rows {
		for _, c := range row.Cells {
			if !seen[c.Tool] {
				seen[c.Tool] = true
				out = append(out, c.Tool)
			}
		}
	}
	slices.Sort(out)
	return out
}

// orderedMatrix returns the rows sorted by agent, for stable output.
func orderedMatrix(rows []MatrixRow) []MatrixRow {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(x, y MatrixRow) int { return strings.Compare(x.Agent, y.Agent) })
	return out
}

// cellState classifies a matrix cell.
type cellState int

const (
	cellNone     cellState = iota // the agent has no cell for the tool
	cellAllow                     // the agent may call the tool
	cellDeny                      // denied, and no override reaches it
	cellOverride                  // denied, but a session override reaches it
)

// lookupCell returns the state of row's cell for tool, and the cell.
func lookupCell(row MatrixRow, tool string) (cellState, Cell) {
	for _, c := range row.Cells {
		if c.Tool != tool {
			continue
		}
		switch {
		case c.Allowed:
			return cellAllow, c
		case c.OverrideReachable:
			return cellOverride, c
		default:
			return cellDeny, c
		}
	}
	return cellNone, Cell{Tool: tool}
}
