// Package render produces agentform's human output and JSON documents:
// diagnostics, the plan text and the JSON plan document.
package render

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// ANSI escape sequences used when colour is on.
const (
	ansiReset     = "\x1b[0m"
	ansiBold      = "\x1b[1m"
	ansiRed       = "\x1b[31m"
	ansiYellow    = "\x1b[33m"
	ansiGreen     = "\x1b[32m"
	ansiUnderline = "\x1b[4m"
)

// Diagnostics writes diagnostics the way Terraform prints them: severity
// and summary, the file and line with the enclosing block, the source line
// with the offending span marked (underlined in colour, with carets
// otherwise), then the detail. files maps file names to parsed files, for
// the source lines; a missing file prints the location alone. red (which
// may be nil) hides the manifest's credentials: its ranges are masked in
// source lines and its values scrubbed from summaries and details. A
// source line longer than ExcerptWidth characters is cut to a window
// around the range.
func Diagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File, red *Redaction, color bool) {
	masks := map[string][]Span{}
	for _, diag := range SortDiagnostics(diags) {
		writeDiagnostic(w, diag, files, red, masks, color)
	}
}

// SortDiagnostics orders diagnostics errors first, then by file, line and
// column (CompareDiagnostics), so output is stable whatever order they were
// found in; diagnostics at one place keep their order.
func SortDiagnostics(diags hcl.Diagnostics) hcl.Diagnostics {
	out := append(hcl.Diagnostics(nil), diags...)
	slices.SortStableFunc(out, CompareDiagnostics)
	return out
}

// CompareDiagnostics is the order diagnostics are shown in: errors first,
// then those without a place, then by file, line and column. It is 0 for
// two at one place; the audit's report breaks such ties by text.
func CompareDiagnostics(a, b *hcl.Diagnostic) int {
	if a.Severity != b.Severity {
		if a.Severity == hcl.DiagError {
			return -1
		}
		if b.Severity == hcl.DiagError {
			return 1
		}
	}
	if (a.Subject == nil) != (b.Subject == nil) {
		if a.Subject == nil {
			return -1
		}
		return 1
	}
	if a.Subject == nil {
		return 0
	}
	return cmp.Or(
		strings.Compare(a.Subject.Filename, b.Subject.Filename),
		cmp.Compare(a.Subject.Start.Line, b.Subject.Start.Line),
		cmp.Compare(a.Subject.Start.Column, b.Subject.Start.Column),
	)
}

func writeDiagnostic(w io.Writer, diag *hcl.Diagnostic, files map[string]*hcl.File, red *Redaction, masks map[string][]Span, color bool) {
	sev, code := "Error", ansiRed
	if diag.Severity == hcl.DiagWarning {
		sev, code = "Warning", ansiYellow
	}
	summary := Printable(red.Scrub(diag.Summary))
	if color {
		fmt.Fprintf(w, "%s%s%s:%s %s%s%s\n", ansiBold, code, sev, ansiReset, ansiBold, summary, ansiReset)
	} else {
		fmt.Fprintf(w, "%s: %s\n", sev, summary)
	}
	if diag.Subject != nil {
		file := files[diag.Subject.Filename]
		spans, ok := masks[diag.Subject.Filename]
		if !ok && file != nil {
			spans = red.SourceSpans(diag.Subject.Filename, file.Bytes, func(p hcl.Pos) int { return min(max(p.Byte, 0), len(file.Bytes)) })
			masks[diag.Subject.Filename] = spans
		}
		writeSnippet(w, diag.Subject, file, spans, color)
	}
	if diag.Detail != "" {
		fmt.Fprintf(w, "\n%s\n", Printable(red.Scrub(diag.Detail)))
	}
	fmt.Fprintln(w)
}

func writeSnippet(w io.Writer, rng *hcl.Range, file *hcl.File, masks []Span, color bool) {
	if file == nil || file.Bytes == nil {
		fmt.Fprintf(w, "\n  on %s line %d:\n", PrintableName(rng.Filename), rng.Start.Line)
		return
	}
	ctx := ""
	if nav, ok := file.Nav.(interface{ ContextString(int) string }); ok {
		if s := nav.ContextString(rng.Start.Byte); s != "" {
			ctx = ", in " + s
		}
	}
	// A file name or a block label can hold a control character: the
	// header cannot start a terminal sequence or a line of its own.
	fmt.Fprintf(w, "\n  on %s line %d%s:\n", PrintableName(rng.Filename), rng.Start.Line, PrintableName(ctx))
	writeLines(w, rng, file, masks, color)
}

// SourceLines returns the lines of file that rng covers as a diagnostic
// quotes them (at most three, each "  12: text" with a line of carets
// under the range), with red's ranges masked and long lines cut to a
// window around the range; "" when file has no text. It is the snippet
// of Diagnostics without its "on FILE line N:" header, for output that
// names the file its own way (the Terraform provider).
func SourceLines(rng *hcl.Range, file *hcl.File, red *Redaction) string {
	if rng == nil || file == nil || file.Bytes == nil {
		return ""
	}
	var b strings.Builder
	writeLines(&b, rng, file, red.SourceSpans(rng.Filename, file.Bytes, func(p hcl.Pos) int { return min(max(p.Byte, 0), len(file.Bytes)) }), false)
	return b.String()
}

// writeLines writes the lines of file that rng covers, masked and
// windowed, with the range underlined (color) or marked with carets.
func writeLines(w io.Writer, rng *hcl.Range, file *hcl.File, masks []Span, color bool) {
	hl := *rng
	if hl.Empty() {
		hl.End.Byte++
		hl.End.Column++
	}
	sc := hcl.NewRangeScanner(file.Bytes, rng.Filename, bufio.ScanLines)
	shown := 0
	for sc.Scan() {
		line := sc.Range()
		if !line.Overlaps(hl) {
			continue
		}
		shown++
		if shown > 3 {
			fmt.Fprintf(w, "  %4s  ...\n", "")
			break
		}
		start := line.Start.Byte
		raw, lead, width := Excerpt(file.Bytes, start, start+len(sc.Bytes()), masks, hl.Start.Byte, hl.End.Byte)
		text := SanitizeLine([]byte(raw))
		if color {
			fmt.Fprintf(w, "  %4d: %s%s%s%s%s\n", line.Start.Line, text[:lead], ansiUnderline, text[lead:lead+width], ansiReset, text[lead+width:])
			continue
		}
		fmt.Fprintf(w, "  %4d: %s\n", line.Start.Line, text)
		if width > 0 {
			pad := utf8.RuneCount([]byte(text[:lead]))
			n := utf8.RuneCount([]byte(text[lead : lead+width]))
			fmt.Fprintf(w, "  %4s  %s%s\n", "", strings.Repeat(" ", pad), strings.Repeat("^", n))
		}
	}
}

// Printable returns s with every character that could act on a terminal
// instead of being shown written as a Go escape: control characters but
// newline and tab (an ESC could rewrite the line above, a CR overwrite
// this one), DEL, the C1 controls, and the bidirectional overrides and
// isolates that reorder what is displayed. Diagnostics quote text from
// remote servers (an MCP tool's description, an agent card), and the
// reviewer must see what it says.
func Printable(s string) string {
	i := strings.IndexFunc(s, unprintable)
	if !utf8.ValidString(s) {
		// An invalid byte (0x9b is an 8-bit CSI) becomes U+FFFD below.
		i = 0
	}
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case !unprintable(r):
			b.WriteRune(r)
		case r < 0x80:
			q := strconv.QuoteRune(r) // '\x1b', '\r'
			b.WriteString(q[1 : len(q)-1])
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// PrintableName is Printable for a name printed as a row or a cell of a
// table or list (a tool's name, which an MCP server chooses): a newline
// or a tab there would forge a row or a column, so they are escaped too.
func PrintableName(s string) string {
	s = Printable(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
}

func unprintable(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	}
	return false
}

// SanitizeLine makes a source line safe to print: tabs become spaces (so
// carets line up), and every character Printable would escape (control
// characters, C1 controls, bidirectional overrides and isolates) and
// invalid UTF-8 become as many "?" as they had bytes, so that byte
// offsets into the line still match.
func SanitizeLine(b []byte) string {
	var buf bytes.Buffer
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == '\t':
			buf.WriteByte(' ')
		case r == utf8.RuneError && size <= 1, r == '\n', unprintable(r):
			buf.WriteString(strings.Repeat("?", size))
		default:
			buf.Write(b[:size])
		}
		b = b[size:]
	}
	return buf.String()
}

// JSONDiagnostic is the diagnostic shape of every agentform JSON document.
type JSONDiagnostic struct {
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail"`
	Range    *JSONRange `json:"range,omitempty"`
}

// JSONRange is a source range: a file and start and end positions.
type JSONRange struct {
	Filename string  `json:"filename"`
	Start    JSONPos `json:"start"`
	End      JSONPos `json:"end"`
}

// JSONPos is a line and column (both 1-based) and byte offset (0-based).
type JSONPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// JSONDiagnostics converts diagnostics to their JSON shape, sorted like the
// human output. It never returns nil.
func JSONDiagnostics(diags hcl.Diagnostics) []JSONDiagnostic {
	out := []JSONDiagnostic{}
	for _, d := range SortDiagnostics(diags) {
		jd := JSONDiagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
		}
		if d.Subject != nil {
			jd.Range = &JSONRange{
				Filename: d.Subject.Filename,
				Start:    JSONPos{Line: d.Subject.Start.Line, Column: d.Subject.Start.Column, Byte: d.Subject.Start.Byte},
				End:      JSONPos{Line: d.Subject.End.Line, Column: d.Subject.End.Column, Byte: d.Subject.End.Byte},
			}
		}
		out = append(out, jd)
	}
	return out
}
