package audit

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentform/agentform/internal/render"
)

// testCredential is a credential the manifest knows, which a plan error
// quotes (an MCP server echoing its token to standard error).
const testCredential = "sk-live-0123456789"

// planErrors are what kept the sample audits from the whole workspace: a
// located error quoting a credential and a terminal escape, an error
// without a location, and a warning, which does not count.
func planErrors() hcl.Diagnostics {
	return hcl.Diagnostics{
		{Severity: hcl.DiagWarning, Summary: "Unused local", Detail: "ignored"},
		{Severity: hcl.DiagError, Summary: "MCP server exited before answering",
			Detail:  "Its standard error ended with:\n  token " + testCredential + " \x1b[2J\u202e",
			Subject: rng("agentform.hcl", 17, 1, 17, 13)},
		{Severity: hcl.DiagError, Summary: "Lockfile is read-only", Detail: "tool.search has no entry."},
	}
}

func testRedaction() *render.Redaction {
	return render.NewRedaction([]hcl.Range{*rng("agentform.hcl", 21, 17, 21, 37)}, []string{testCredential})
}

// incompleteReport is the sample report of an audit that planned only
// part of the workspace.
func incompleteReport() *Report {
	r := sampleReport()
	r.Redaction = testRedaction()
	r.MarkIncomplete(planErrors())
	return r
}

// failedReport is the report of an audit whose workspace did not load.
func failedReport() *Report {
	r := Failed(planErrors(), testRedaction())
	r.AgentformVersion = "0.1.0"
	return r
}

// TestIncompleteReport: every format says that an incomplete audit covers
// only part of the workspace, or that a failed one covers none of it, and
// carries each error with its location, scrubbed of credentials and with
// terminal escapes shown escaped.
func TestIncompleteReport(t *testing.T) {
	sch := sarifSchema(t)
	for _, tc := range []struct {
		name   string
		report func() *Report
		failed bool
	}{{"incomplete", incompleteReport, false}, {"failed", failedReport, true}} {
		for _, format := range Formats() {
			t.Run(tc.name+"/"+string(format), func(t *testing.T) {
				out := writeReport(t, tc.report(), format, sampleOptions())
				text := string(out)
				for _, bad := range []string{testCredential, "\x1b", "\u202e", "Unused local"} {
					if strings.Contains(text, bad) {
						t.Errorf("output contains %q\ngot:\n%s", bad, text)
					}
				}
				if !strings.Contains(text, "MCP server exited before answering") || !strings.Contains(text, "Lockfile is read-only") {
					t.Errorf("output lacks the errors\ngot:\n%s", text)
				}
				checkIncompleteFormat(t, format, out, tc.failed, sch)
			})
		}
	}
}

// checkIncompleteFormat checks what format says of an incomplete (or
// failed) audit, and where it locates the first error.
func checkIncompleteFormat(t *testing.T, format Format, out []byte, failed bool, sch *jsonschema.Schema) {
	t.Helper()
	text := string(out)
	title := "Audit incomplete"
	if failed {
		title = "Audit failed"
	}
	want := map[Format][]string{
		FormatTable:    {title + " (2 errors)", "  agentform.hcl:17  MCP server exited before answering: Its standard error ended with:   token (redacted) \\x1b[2J\\u202e", "  -  Lockfile is read-only"},
		FormatMarkdown: {"❌ **" + title + "**", "| `agentform.hcl:17` | MCP server exited before answering:"},
		FormatHTML:     {`<section class="incomplete" id="incomplete">`, "<h2>" + title + "</h2>", "<code>agentform.hcl:17</code> <b>MCP server exited before answering</b>"},
		FormatJUnit:    {`errors="1"`, `<testcase classname="audit" name="the whole workspace is audited">`, "[error] agentform.hcl:17: MCP server exited before answering"},
	}[format]
	if failed && format != FormatJSON && format != FormatSARIF {
		want = append(want, "The audit failed: 2 errors kept agentform from reading the workspace; nothing was audited.")
	} else if format != FormatJSON && format != FormatSARIF {
		want = append(want, "The audit is incomplete: 2 errors kept agentform from planning the whole workspace; the report covers only what it could plan.")
	}
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("output lacks %q\ngot:\n%s", s, text)
		}
	}
	switch format {
	case FormatTable, FormatMarkdown, FormatHTML:
		// A failed audit found nothing: it shows no counts, no empty
		// findings list; an incomplete one still does.
		if got := strings.Contains(text, "errors, "); got == failed {
			t.Errorf("counts shown: %v\ngot:\n%s\nwant: %v", got, text, !failed)
		}
	case FormatJUnit:
		var doc struct {
			Suite struct {
				Tests int `xml:"tests,attr"`
				Cases []struct {
					Error *struct {
						Type string `xml:"type,attr"`
					} `xml:"error"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(out, &doc); err != nil {
			t.Fatalf("not XML: %v", err)
		}
		errs := slices.DeleteFunc(doc.Suite.Cases, func(c struct {
			Error *struct {
				Type string `xml:"type,attr"`
			} `xml:"error"`
		}) bool {
			return c.Error == nil
		})
		wantType := map[bool]string{false: "incomplete", true: "failed"}[failed]
		if len(errs) != 1 || errs[0].Error.Type != wantType {
			t.Errorf("error cases\ngot:  %+v\nwant: one of type %s", errs, wantType)
		}
		// A failed audit checked no rule: no case passes.
		if failed && doc.Suite.Tests != 1 {
			t.Errorf("tests of a failed audit\ngot:  %d\nwant: 1, the error", doc.Suite.Tests)
		}
	case FormatJSON:
		var doc struct {
			Findings   []json.RawMessage `json:"findings"`
			Incomplete *struct {
				Failed bool `json:"failed"`
				Errors []struct {
					Summary, Detail string
					Range           *struct {
						Filename string
						Start    struct{ Line, Column int }
					}
				} `json:"errors"`
			} `json:"incomplete"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		inc := doc.Incomplete
		if inc == nil || inc.Failed != failed || len(inc.Errors) != 2 {
			t.Fatalf("incomplete\ngot:  %+v\nwant: failed %v, 2 errors", inc, failed)
		}
		// Errors without a location come first.
		if e := inc.Errors[1]; e.Range == nil || e.Range.Filename != "agentform.hcl" || e.Range.Start.Line != 17 ||
			e.Detail != "Its standard error ended with:\n  token (redacted) \\x1b[2J\\u202e" {
			t.Errorf("located error\ngot:  %+v\nwant: at agentform.hcl:17, the detail scrubbed and escaped", e)
		}
		if failed && len(doc.Findings) != 0 {
			t.Errorf("findings of a failed audit\ngot:  %d\nwant: 0", len(doc.Findings))
		}
	case FormatSARIF:
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("SARIF does not validate: %v\n%s", err, out)
		}
		var log struct {
			Runs []struct {
				Invocations []struct {
					ExecutionSuccessful *bool `json:"executionSuccessful"`
					Notifications       []struct {
						Level     string
						Message   struct{ Text string }
						Locations []struct {
							PhysicalLocation struct {
								ArtifactLocation struct{ URI string }
								Region           struct{ StartLine int }
							}
						}
					} `json:"toolExecutionNotifications"`
				} `json:"invocations"`
				Results []json.RawMessage `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(out, &log); err != nil {
			t.Fatal(err)
		}
		inv := log.Runs[0].Invocations
		if len(inv) != 1 || inv[0].ExecutionSuccessful == nil || *inv[0].ExecutionSuccessful || len(inv[0].Notifications) != 2 {
			t.Fatalf("invocations\ngot:  %+v\nwant: one unsuccessful, with 2 notifications", inv)
		}
		n := inv[0].Notifications[1]
		if n.Level != "error" || !strings.HasPrefix(n.Message.Text, "MCP server exited before answering: ") || len(n.Locations) != 1 ||
			n.Locations[0].PhysicalLocation.ArtifactLocation.URI != "agentform.hcl" || n.Locations[0].PhysicalLocation.Region.StartLine != 17 {
			t.Errorf("located notification\ngot:  %+v\nwant: an error at agentform.hcl:17", n)
		}
		if failed != (len(log.Runs[0].Results) == 0) {
			t.Errorf("results\ngot:  %d\nwant: none for a failed audit only", len(log.Runs[0].Results))
		}
	}
}

// TestCompleteReportSaysSo: a report of the whole workspace has no
// incompleteness in any format, and its SARIF run was successful.
func TestCompleteReportSaysSo(t *testing.T) {
	for _, format := range Formats() {
		text := string(writeReport(t, sampleReport(), format, sampleOptions()))
		for _, bad := range []string{"Audit incomplete", "audit is incomplete", `id="incomplete"`, `"incomplete"`, "Audit failed", `"executionSuccessful": false`} {
			if strings.Contains(text, bad) {
				t.Errorf("%s: a complete report contains %q\ngot:\n%s", format, bad, text)
			}
		}
	}
	if sarif := string(writeReport(t, sampleReport(), FormatSARIF, sampleOptions())); !strings.Contains(sarif, `"executionSuccessful": true`) {
		t.Errorf("SARIF of a complete audit\ngot:\n%s\nwant: executionSuccessful true", sarif)
	}
	r := sampleReport()
	r.MarkIncomplete(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "only a warning"}})
	if r.Incomplete != nil {
		t.Errorf("MarkIncomplete of warnings alone\ngot:  %+v\nwant: nil", r.Incomplete)
	}
}

// TestIncompleteDeterministic: the errors are written in one order
// whatever the order of the report's list.
func TestIncompleteDeterministic(t *testing.T) {
	for _, format := range Formats() {
		want := writeReport(t, incompleteReport(), format, sampleOptions())
		r := incompleteReport()
		slices.Reverse(r.Incomplete.Errors)
		if got := writeReport(t, r, format, sampleOptions()); !bytes.Equal(got, want) {
			t.Errorf("%s depends on the order of the errors\ngot:\n%s\nwant:\n%s", format, got, want)
		}
	}
}

// TestDiagnosticsOneOrder: a report's errors come in one order, standard
// error's (no place first, then file, line and column) with ties broken by
// text, whether newDiagnostics made them or a renderer orders them again.
func TestDiagnosticsOneOrder(t *testing.T) {
	at := func(file string, line int) *hcl.Range {
		return &hcl.Range{Filename: file, Start: hcl.Pos{Line: line, Column: 1}, End: hcl.Pos{Line: line, Column: 2}}
	}
	ds := newDiagnostics(hcl.Diagnostics{
		{Severity: hcl.DiagWarning, Summary: "W", Subject: at("a.acl", 1)},
		{Severity: hcl.DiagError, Summary: "B", Subject: at("b.acl", 1)},
		{Severity: hcl.DiagError, Summary: "A", Subject: at("b.acl", 1)},
		{Severity: hcl.DiagError, Summary: "Z"},
		{Severity: hcl.DiagError, Summary: "C", Subject: at("a.acl", 5)},
	}, nil)
	var got []string
	for _, d := range ds {
		got = append(got, d.Summary)
	}
	if want := []string{"Z", "C", "A", "B"}; !slices.Equal(got, want) {
		t.Errorf("newDiagnostics order\ngot:  %v\nwant: %v", got, want)
	}
	if again := orderedDiagnostics(ds); !slices.EqualFunc(again, ds, func(x, y Diagnostic) bool { return x.Summary == y.Summary }) {
		t.Errorf("orderedDiagnostics reorders what newDiagnostics ordered: %v", again)
	}
}
