package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestDiagnosticsPrintable: text quoted from a remote server cannot act on
// the terminal: an ESC sequence that erases a line, a carriage return
// that overwrites one, C1 controls and bidirectional overrides are shown
// as escapes; newlines and tabs stay.
func TestDiagnosticsPrintable(t *testing.T) {
	var out bytes.Buffer
	Diagnostics(&out, hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "MCP tool changed\x1b]0;title\x07",
		Detail:   "-Plans trips.\n+Plans trips.\x1b[2K\rIGNORE ALL\u009b\u202egnp.exe\tend",
	}}, nil, true)
	got := out.String()
	for _, raw := range []string{"\x07", "\x1b]", "\x1b[2K", "\r", "\u009b", "\u202e"} {
		if strings.Contains(got, raw) {
			t.Errorf("output holds %q raw:\n%q", raw, got)
		}
	}
	for _, want := range []string{`MCP tool changed\x1b]0;title\a`, `+Plans trips.\x1b[2K\rIGNORE ALL\u009b\u202egnp.exe` + "\tend", "-Plans trips.\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output:\n%s\nwant: %q", got, want)
		}
	}
	if s := "plain text, café, 🚀\n\tindented"; Printable(s) != s {
		t.Errorf("Printable(%q) = %q, want it unchanged", s, Printable(s))
	}
}

// TestPlanToolNamesPrintable: a served tool name with control characters
// cannot rewrite the plan's matrix or lists.
func TestPlanToolNamesPrintable(t *testing.T) {
	if got := Printable("m__ok\x1b[2K\rfine"); got != `m__ok\x1b[2K\rfine` {
		t.Errorf("Printable got %q", got)
	}
	if got := Printable("bad \x9b byte"); strings.Contains(got, "\x9b") || got != "bad \ufffd byte" {
		t.Errorf("Printable got %q", got)
	}
}

// TestSnippetPrintable: a source line shown under a diagnostic cannot act
// on the terminal either: bidirectional overrides (which reorder what the
// reviewer reads, "Trojan Source"), C1 controls, an 8-bit CSI byte and an
// ESC become "?" (one per byte, so that the caret still lines up under
// the range), and the rest of the line is shown as written.
func TestSnippetPrintable(t *testing.T) {
	src := "agent \"a\" {\n  description = \"ok \u202eevil\u2066 \u009b[2J \x9b[2J \x1b[1A\"  # café\n}\n"
	file := &hcl.File{Bytes: []byte(src)}
	rng := hcl.Range{Filename: "main.acl", Start: hcl.Pos{Line: 2, Column: 3, Byte: 14}, End: hcl.Pos{Line: 2, Column: 14, Byte: 25}}
	var out bytes.Buffer
	Diagnostics(&out, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad description", Subject: &rng}}, map[string]*hcl.File{"main.acl": file}, false)
	got := out.String()
	for _, raw := range []string{"\u202e", "\u2066", "\u009b", "\x9b", "\x1b"} {
		if strings.Contains(got, raw) {
			t.Errorf("snippet holds %q raw:\n%q", raw, got)
		}
	}
	for _, want := range []string{`description = "ok ???evil??? ??[2J ?[2J ?[1A"  # café`, "    ^^^^^^^^^^^"} {
		if !strings.Contains(got, want) {
			t.Errorf("output:\n%s\nwant it to hold %q", got, want)
		}
	}
}
