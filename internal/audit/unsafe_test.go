package audit

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// unsafeRune reports whether r would act on a terminal or reorder the
// text around it: a control character but line feed and tab, DEL, a C1
// control, a bidirectional override, isolate or mark, or the replacement
// for invalid UTF-8.
func unsafeRune(r rune) bool {
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

// checkSafeText fails when out holds invalid UTF-8 or an unsafe rune.
func checkSafeText(t *testing.T, out string) {
	t.Helper()
	for i, r := range out {
		if r == utf8.RuneError && !strings.HasPrefix(out[i:], "\uFFFD") || unsafeRune(r) {
			t.Errorf("output holds %q at byte %d\ngot:  …%q…\nwant: only printable text", r, i, out[max(0, i-60):min(len(out), i+20)])
			return
		}
	}
}

// unsafeTextReport audits testdata/TestUnsafeText, whose manifest and
// served tool names hold escape sequences, C1 controls, bidirectional
// overrides and an invalid byte, with a gate against an empty baseline so
// that every access is listed as granted.
func unsafeTextReport(t *testing.T) (*Report, WriteOptions) {
	t.Helper()
	r, opts := workspaceReport(t, filepath.Join("testdata", "TestUnsafeText"))
	CompareBaseline(r, &Report{}, "baseline\u202e.json")
	return r, opts
}

// TestTableUnsafeText: the terminal table shows every piece of text
// (names, messages, waiver reasons, check messages, the gate, source
// lines) with what could act on the terminal escaped.
func TestTableUnsafeText(t *testing.T) {
	r, opts := unsafeTextReport(t)
	// A lone 0x9b byte is an 8-bit CSI to some terminals.
	r.Findings = append(r.Findings, Finding{RuleID: "AF101", Severity: SeverityNote, Target: "agent.x\x9b", Message: "a lone \x9b[2J byte"})
	out := string(writeReport(t, r, FormatTable, opts))
	checkSafeText(t, out)
	for _, s := range []string{
		"agent.x\uFFFD", "a lone \uFFFD[2J byte",
		`+ assistant → github__push\x1b[2J\u202enur\u202c\u009b31m`,
		`Never \u202etsil\u202c list \x1b[2J \u009b31m.`,
		`waived: Accepted \u202eylno tset\u202c \x1b[31m \u009b31m.`,
		`(against baseline\u202e.json)`,
		// Source lines keep their length: each unsafe byte is a "?".
		`5 |   capabilities = ["remote"] # ???denetsil??? ???isolate??? ??next ?2J`,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q\ngot:\n%s", s, out)
		}
	}
}

// TestHTMLUnsafeText: the HTML report shows the same text escaped, in
// element text and attributes alike (html/template escapes markup, not
// control characters).
func TestHTMLUnsafeText(t *testing.T) {
	r, opts := unsafeTextReport(t)
	out := string(writeReport(t, r, FormatHTML, opts))
	checkSafeText(t, out)
	for _, s := range []string{
		`<th class="tool">github__push\x1b[2J\u202enur\u202c\u009b31m</th>`,
		`title="assistant → github__push\x1b[2J\u202enur\u202c\u009b31m: allowed"`,
		`<code>github__push\x1b[2J\u202enur\u202c\u009b31m</code>`,
		`Never \u202etsil\u202c list \x1b[2J \u009b31m.`,
		`waived: Accepted \u202eylno tset\u202c \x1b[31m \u009b31m.`,
		`Compared with <code>baseline\u202e.json</code>`,
		`</span>  capabilities = [&#34;remote&#34;] # ???denetsil??? ???isolate??? ??next ?2J`,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q\ngot:\n%s", s, out)
		}
	}
}
