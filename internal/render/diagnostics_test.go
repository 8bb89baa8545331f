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
	}}, nil, nil, true)
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
	Diagnostics(&out, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad description", Subject: &rng}}, map[string]*hcl.File{"main.acl": file}, nil, false)
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

// TestDiagnosticsRedacted: a diagnostic on a credential's line shows the
// line with the credential masked, the caret still under the range, and
// the credential scrubbed from summary and detail.
func TestDiagnosticsRedacted(t *testing.T) {
	src := "tool \"a\" {\n  headers = { Authorization = \"Bearer SEKRET90\", X-Retry = [\"1\"] }\n}\n"
	file := &hcl.File{Bytes: []byte(src)}
	at := func(s string) int { return strings.Index(src, s) }
	pos := func(off int) hcl.Pos { return hcl.Pos{Line: 2, Column: off - at("  headers") + 1, Byte: off} }
	secret := hcl.Range{Filename: "main.acl", Start: pos(at(`"Bearer`)), End: pos(at(`, X-Retry`))}
	subject := hcl.Range{Filename: "main.acl", Start: pos(at(`["1"]`)), End: pos(at(`["1"]`) + 5)}
	red := NewRedaction([]hcl.Range{secret}, []string{"Bearer SEKRET90", "abc"})
	for _, color := range []bool{false, true} {
		var out bytes.Buffer
		Diagnostics(&out, hcl.Diagnostics{{
			Severity: hcl.DiagError, Summary: "Bad header Bearer SEKRET90", Detail: "Header value Bearer SEKRET90 is not a string; abc stays.", Subject: &subject,
		}}, map[string]*hcl.File{"main.acl": file}, red, color)
		got := out.String()
		if strings.Contains(got, "SEKRET90") {
			t.Fatalf("output holds the credential:\n%s", got)
		}
		want := []string{"Bad header (redacted)", "Header value (redacted) is not a string; abc stays."}
		if color {
			want = append(want, `Authorization = (redacted), X-Retry = `+ansiUnderline+`["1"]`+ansiReset)
		} else {
			want = append(want,
				`     2:   headers = { Authorization = (redacted), X-Retry = ["1"] }`+"\n"+
					"  "+strings.Repeat(" ", 4+2+len(`  headers = { Authorization = (redacted), X-Retry = `))+"^^^^^\n")
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("color %v: output:\n%s\nwant it to hold:\n%s", color, got, w)
			}
		}
	}
}

// TestDiagnosticsValueElsewhere: a secret's value written again outside
// its masked range (a check's error_message, a word in a comment) is
// masked in the quoted line as well, whole even where the window cuts
// the line, with the carets still under the range.
func TestDiagnosticsValueElsewhere(t *testing.T) {
	for _, tc := range []struct{ name, src, subject, value string }{
		{"anywhere", `{"check": {"c": {"assert": {"condition": "${x}", "error_message": "JSONHDRDEFAULT88"}}}}`, `"${x}"`, "JSONHDRDEFAULT88"},
		{"word", "  condition = true # hunterhunter\n", "true", "hunterhunter"},
		{"window", `{"a": "` + strings.Repeat("x", 200) + `", "bad": 1, "msg": "` + strings.Repeat("y", 40) + `JSONAPIKEYLITERAL12345", "z": "` + strings.Repeat("z", 200) + `"}`, `"bad"`, "JSONAPIKEYLITERAL12345"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			off := strings.Index(src, tc.subject)
			rng := hcl.Range{Filename: "m.acl.json", Start: hcl.Pos{Line: 1, Column: off + 1, Byte: off}, End: hcl.Pos{Line: 1, Column: off + 1 + len(tc.subject), Byte: off + len(tc.subject)}}
			red := NewRedaction(nil, []string{tc.value})
			var out bytes.Buffer
			Diagnostics(&out, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad", Subject: &rng}}, map[string]*hcl.File{"m.acl.json": {Bytes: []byte(src)}}, red, false)
			got := out.String()
			for n := 6; n <= len(tc.value); n++ {
				if strings.Contains(got, tc.value[:n]) {
					t.Fatalf("output holds %q of the value:\n%s", tc.value[:n], got)
				}
			}
			if !strings.Contains(got, RedactMark) {
				t.Errorf("output has no mark:\n%s", got)
			}
			lines := strings.Split(got, "\n")
			for i, l := range lines {
				if strings.HasPrefix(l, "     1: ") {
					col := strings.Index(lines[i+1], "^")
					if col < 0 || !strings.HasPrefix(string([]rune(l)[col:]), tc.subject) {
						t.Errorf("caret does not line up:\n%s\n%s", l, lines[i+1])
					}
				}
			}
			if got := SourceLines(&rng, &hcl.File{Bytes: []byte(src)}, red); strings.Contains(got, tc.value[:6]) {
				t.Errorf("SourceLines holds the value:\n%s", got)
			}
		})
	}
}

// TestDiagnosticsLongLine: a minified manifest is one long line; the
// snippet shows a window of it around the range, marked with ellipses,
// with the caret under the range.
func TestDiagnosticsLongLine(t *testing.T) {
	src := `{"a": "` + strings.Repeat("x", 5000) + `", "bad": 1, "b": "` + strings.Repeat("y", 5000) + `"}`
	off := strings.Index(src, `"bad"`)
	rng := hcl.Range{Filename: "m.acl.json", Start: hcl.Pos{Line: 1, Column: off + 1, Byte: off}, End: hcl.Pos{Line: 1, Column: off + 6, Byte: off + 5}}
	var out bytes.Buffer
	Diagnostics(&out, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad", Subject: &rng}}, map[string]*hcl.File{"m.acl.json": {Bytes: []byte(src)}}, nil, false)
	got := out.String()
	if len(got) > 600 {
		t.Fatalf("output is %d bytes:\n%s", len(got), got)
	}
	lines := strings.Split(got, "\n")
	var text, caret string
	for i, l := range lines {
		if strings.HasPrefix(l, "     1: ") {
			text, caret = l, lines[i+1]
		}
	}
	if !strings.HasPrefix(text, "     1: …xxx") || !strings.HasSuffix(text, "yyy…") || !strings.Contains(text, `", "bad": 1, "b": "`) {
		t.Fatalf("snippet line:\n%s", text)
	}
	col := strings.Index(caret, "^")
	if col < 0 || !strings.HasPrefix(string([]rune(text)[col:]), `"bad"`) || strings.Count(caret, "^") != 5 {
		t.Errorf("caret does not line up:\n%s\n%s", text, caret)
	}
}

// TestSnippetHeaderPrintable: a file name or block label with a control
// character is escaped in the "on FILE line N, in BLOCK:" header, as the
// line under it is.
func TestSnippetHeaderPrintable(t *testing.T) {
	name := "\x1b]0;PWN\x07e\nvil.acl"
	rng := hcl.Range{Filename: name, Start: hcl.Pos{Line: 1, Column: 1, Byte: 0}, End: hcl.Pos{Line: 1, Column: 6, Byte: 5}}
	for _, files := range []map[string]*hcl.File{nil, {name: {Bytes: []byte("bogus {}\n")}}} {
		var out bytes.Buffer
		Diagnostics(&out, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unsupported block type", Subject: &rng}}, files, nil, false)
		got := out.String()
		if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `on \x1b]0;PWN\ae\nvil.acl line 1`) {
			t.Errorf("got:\n%q\nwant: the file name escaped in the header", got)
		}
	}
}
