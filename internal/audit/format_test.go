package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentform/agentform/internal/render"
)

// The -update flag rewrites the golden files. It is registered only if
// another test file of the package has not registered it already.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files in testdata")
	}
}

func updatingGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// testManifest is the source the sample report's ranges point into.
const testManifest = `agent "assistant" {
  model              = "claude-sonnet"
  capability_policy  = "extensible"
  holds              = ["fs.*", "net.fetch", "search"]
}

agent "reviewer" {
  model = "claude-haiku"
  holds = ["fs.read", "search"]
}

agent "triage" {
  model = "claude-haiku"
  holds = ["net.fetch", "search"]
}

tool "fetch" {
  source   = "npm:@acme/fetch-tool"
  requires = ["net.fetch"]
  env = {
    API_TOKEN = "sk-live-0123456789"
  }
}

tool "shell" {
  source   = "./tools/shell.sh"
  requires = ["exec"]
}

waiver "AF301" {
  target  = "tool.shell"
  reason  = "shell is sandboxed by the CI runner"
  expires = "2026-12-31"
}
`

func rng(file string, l1, c1, l2, c2 int) *hcl.Range {
	return &hcl.Range{
		Filename: file,
		Start:    hcl.Pos{Line: l1, Column: c1},
		End:      hcl.Pos{Line: l2, Column: c2},
	}
}

func testRule(id, name string, sev Severity, short string) Rule {
	return Rule{
		ID: id, Name: name, Severity: sev, Short: short,
		Full:    short + " It matters because agents act on what they can reach.",
		HelpURI: HelpBase + id + ".md",
	}
}

func testCell(tool string, allowed, override bool, missing ...string) Cell {
	if missing == nil {
		missing = []string{}
	}
	return Cell{Tool: tool, Allowed: allowed, OverrideReachable: override, Missing: missing}
}

// sampleReport is the representative report of the golden files: findings
// of every severity (one without a range, one with Markdown and HTML
// metacharacters), one waived, a failing gate and a 3×5 matrix with
// allowed, denied and override-reachable cells.
func sampleReport() *Report {
	const f = "agentform.hcl"
	return &Report{
		FormatVersion:    FormatVersion,
		AgentformVersion: "0.1.0",
		Findings: []Finding{
			{RuleID: "AF201", Severity: SeverityError, Target: "tool.search", Tool: "search",
				Message:     "remote tool search is not resolved in the lock file",
				Fingerprint: "fp-af201-search"},
			{RuleID: "AF202", Severity: SeverityError, Target: "tool.fetch", Tool: "fetch",
				Message: `the lock entry for tool "fetch" does not match its source; run "agentform lock"`,
				Range:   rng(f, 17, 1, 17, 13), Fingerprint: "fp-af202-fetch"},
			{RuleID: "AF306", Severity: SeverityError, Target: "tool.fetch", Tool: "fetch",
				Message: "env.API_TOKEN is a literal credential; use a secret reference",
				Range:   rng(f, 21, 5, 21, 35), Fingerprint: "fp-af306-fetch"},
			{RuleID: "AF102", Severity: SeverityWarning, Target: "agent.assistant", Agent: "assistant", Tool: "shell",
				Message: "assistant is extensible: a session override reaches shell (missing exec)",
				Range:   rng(f, 3, 3, 3, 36), Fingerprint: "fp-af102-assistant-shell"},
			{RuleID: "AF102", Severity: SeverityWarning, Target: "agent.assistant", Agent: "assistant", Tool: "write_file",
				Message: "assistant is extensible: a session override reaches write_file (missing fs.write)",
				Range:   rng(f, 3, 3, 3, 36), Fingerprint: "fp-af102-assistant-write_file"},
			{RuleID: "AF105", Severity: SeverityWarning, Target: "agent.assistant", Agent: "assistant",
				Message: `holds "fs.*" | matches 2 tools: narrow it to <fs.read> & *fs.write*`,
				Range:   rng(f, 4, 3, 4, 58), Fingerprint: "fp-af105-assistant"},
			{RuleID: "AF101", Severity: SeverityNote, Target: "agent.reviewer", Agent: "reviewer", Tool: "shell",
				Message: "reviewer cannot call shell: missing exec",
				Range:   rng(f, 7, 1, 10, 2), Fingerprint: "fp-af101-reviewer-shell"},
			{RuleID: "AF101", Severity: SeverityNote, Target: "agent.triage", Agent: "triage", Tool: "read_file",
				Message: "triage cannot call read_file: missing fs.read",
				Range:   rng(f, 12, 1, 15, 2), Fingerprint: "fp-af101-triage-read_file"},
			{RuleID: "AF103", Severity: SeverityNote, Target: "agent.triage", Agent: "triage",
				Message: `triage holds "search", which no tool requires`,
				Range:   rng(f, 14, 3, 14, 34), Fingerprint: "fp-af103-triage"},
		},
		Waived: []Finding{
			{RuleID: "AF301", Severity: SeverityWarning, Target: "tool.shell", Tool: "shell",
				Message: "shell runs with unrestricted network access",
				Range:   rng(f, 25, 1, 28, 2), Fingerprint: "fp-af301-shell",
				Waiver: &Waiver{Reason: "shell is sandboxed by the CI runner", Expires: "2026-12-31",
					Range: rng(f, 30, 1, 34, 2)}},
		},
		Rules: []Rule{
			testRule("AF101", "DeniedCell", SeverityNote, "An agent cannot call a registered tool."),
			testRule("AF102", "OverrideReachable", SeverityWarning, "An extensible agent can reach tools it is denied through a session override."),
			testRule("AF103", "UnusedHeldTag", SeverityWarning, "An agent holds a tag that satisfies no registered tool."),
			testRule("AF105", "OverBroadGrant", SeverityWarning, "A wildcard tag grants more tools than the agent uses."),
			testRule("AF201", "UnresolvedRemote", SeverityError, "A remote tool is not resolved in the lock file."),
			testRule("AF202", "LockDrift", SeverityError, "A tool's lock entry does not match its source."),
			testRule("AF301", "BashNetworkUnrestricted", SeverityWarning, "A shell tool has unrestricted network access."),
			testRule("AF306", "LiteralCredential", SeverityError, "A credential is written literally in the manifest."),
			testRule("AF402", "UnusedWaiver", SeverityNote, "A waiver accepts no finding."),
		},
		Matrix: []MatrixRow{
			{Agent: "assistant", Policy: "extensible", Holds: []string{"fs.*", "net.fetch", "search"}, Cells: []Cell{
				testCell("fetch", true, false), testCell("read_file", true, false), testCell("search", true, false),
				testCell("shell", false, true, "exec"), testCell("write_file", false, true, "fs.write")}},
			{Agent: "reviewer", Policy: "locked", Holds: []string{"fs.read", "search"}, Cells: []Cell{
				testCell("fetch", false, false, "net.fetch"), testCell("read_file", true, false), testCell("search", true, false),
				testCell("shell", false, false, "exec"), testCell("write_file", false, false, "fs.write")}},
			{Agent: "triage", Policy: "locked", Holds: []string{"net.fetch", "search"}, Cells: []Cell{
				testCell("fetch", true, false), testCell("read_file", false, false, "fs.read"), testCell("search", true, false),
				testCell("shell", false, false, "exec"), testCell("write_file", false, false, "fs.write")}},
		},
		Counts: map[Severity]int{SeverityError: 3, SeverityWarning: 3, SeverityNote: 3},
		// The literal API_TOKEN, as Run would mark it.
		Redaction: render.NewRedaction([]hcl.Range{*rng(f, 21, 17, 21, 37)}, nil),
		// Where each agent's holds are written, as Run records them.
		agentRanges: map[string]*hcl.Range{"assistant": rng(f, 4, 3, 4, 58), "reviewer": rng(f, 9, 3, 9, 34), "triage": rng(f, 14, 3, 14, 34)},
		Gate: &Gate{
			Against:     "baseline.json",
			Pass:        false,
			Granted:     []Access{{Agent: "assistant", Tool: "fetch"}},
			Revoked:     []Access{{Agent: "triage", Tool: "read_file"}},
			NewFindings: []string{`AF202 tool.fetch the lock entry for tool "fetch" does not match its source`},
			Reasons:     []string{"1 permission granted since baseline.json: an agent can call a tool it could not call then"},
		},
	}
}

func sampleOptions() WriteOptions {
	return WriteOptions{ShowWaived: true, Source: map[string][]byte{"agentform.hcl": []byte(testManifest)}}
}

func writeReport(t testing.TB, r *Report, format Format, opts WriteOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, string(format), opts); err != nil {
		t.Fatalf("Write(%s): %v", format, err)
	}
	return buf.Bytes()
}

// TestWriteGolden renders the sample report in every format and compares
// with testdata/golden; -update rewrites the files.
func TestWriteGolden(t *testing.T) {
	plain := sampleOptions()
	color := WriteOptions{Color: true}
	// SARIF locations are relative to the repository root.
	inRepo := sampleOptions()
	inRepo.RepoPath = "teams/support"
	cases := []struct {
		file   string
		format Format
		opts   WriteOptions
	}{
		{"report.txt", FormatTable, plain},
		{"report.color.txt", FormatTable, color},
		{"report.json", FormatJSON, plain},
		{"report.sarif", FormatSARIF, inRepo},
		{"report.md", FormatMarkdown, plain},
		{"report.html", FormatHTML, plain},
		{"report.junit.xml", FormatJUnit, plain},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			got := writeReport(t, sampleReport(), tc.format, tc.opts)
			path := filepath.Join("testdata", "golden", tc.file)
			if updatingGolden() {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden file (run go test -update): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file (run go test -update to accept)\ngot:\n%s\nwant:\n%s", tc.file, got, want)
			}
		})
	}
}

// TestWriteDeterministic checks that every format gives the same bytes
// whatever the order of the report's lists.
func TestWriteDeterministic(t *testing.T) {
	for _, format := range Formats() {
		t.Run(string(format), func(t *testing.T) {
			want := writeReport(t, sampleReport(), format, sampleOptions())
			r := sampleReport()
			slices.Reverse(r.Findings)
			slices.Reverse(r.Rules)
			slices.Reverse(r.Matrix)
			for i := range r.Matrix {
				slices.Reverse(r.Matrix[i].Cells)
			}
			got := writeReport(t, r, format, sampleOptions())
			if !bytes.Equal(got, want) {
				t.Errorf("output depends on input order\ngot:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	cases := []struct {
		in      string
		want    Format
		wantErr error
	}{
		{"", FormatTable, nil},
		{"table", FormatTable, nil},
		{"json", FormatJSON, nil},
		{"sarif", FormatSARIF, nil},
		{"markdown", FormatMarkdown, nil},
		{"html", FormatHTML, nil},
		{"junit", FormatJUnit, nil},
		{"JSON", "", ErrUnknownFormat},
		{"xml", "", ErrUnknownFormat},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseFormat(tc.in)
			if got != tc.want || !errors.Is(err, tc.wantErr) {
				t.Errorf("ParseFormat(%q)\ngot:  %q, %v\nwant: %q, %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sampleReport(), "yaml", WriteOptions{}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown format\ngot:  %v\nwant: %v", err, ErrUnknownFormat)
	}
	if err := Write(&buf, nil, "json", WriteOptions{}); !errors.Is(err, ErrNilReport) {
		t.Errorf("nil report\ngot:  %v\nwant: %v", err, ErrNilReport)
	}
	if buf.Len() != 0 {
		t.Errorf("a failed Write wrote output\ngot:\n%s\nwant: nothing", buf.String())
	}
	if err := Write(failingWriter{}, sampleReport(), "table", WriteOptions{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("a failing writer\ngot:  %v\nwant: an error mentioning disk full", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// emptyReport is what a clean workspace without agents produces.
func emptyReport() *Report {
	return &Report{FormatVersion: FormatVersion, AgentformVersion: "0.1.0"}
}

// oddReport has what a renderer must survive: no ranges, an absolute
// file name, an unknown severity, a rule missing from the catalog, a
// waiver without a range or reason, control characters.
func oddReport() *Report {
	return &Report{
		Findings: []Finding{
			{RuleID: "AF999", Severity: "fatal", Target: "tool.x", Message: "unknown \x1b[31mrule\x1b[0m\nsecond line"},
			{RuleID: "AF101", Severity: SeverityNote, Target: "", Message: "",
				Range: rng("/abs/dir with space/agentform.hcl", 0, 0, 0, 0)},
			{RuleID: "AF101", Severity: SeverityNote, Target: "agent.a|b", Message: "pipe `code` | here",
				Range: rng(`C:\ws\agentform.hcl`, 2, 5, 1, 1)},
		},
		Waived: []Finding{
			{RuleID: "AF101", Severity: SeverityNote, Target: "agent.c", Message: "waived without a waiver"},
			{RuleID: "AF101", Severity: SeverityNote, Target: "agent.d", Message: "waived", Waiver: &Waiver{}},
		},
		Rules: []Rule{{ID: "AF101", Name: "DeniedCell", Severity: SeverityNote, HelpURI: "docs/rules/AF101.md"}},
		Matrix: []MatrixRow{
			{Agent: "a", Cells: []Cell{{Tool: "t1", Allowed: true}}},
			{Agent: "b", Cells: []Cell{{Tool: "t2"}}},
		},
	}
}

// sarifSchema compiles the committed SARIF 2.1.0 schema. The compiler's
// loader fetches nothing: the schema's own meta-schema (draft-04) is
// embedded in the library.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("parsing the SARIF schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no file:, no http:
	c.AssertFormat()
	const loc = "sarif-schema-2.1.0.json"
	if err := c.AddResource(loc, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		t.Fatalf("compiling the SARIF schema: %v", err)
	}
	return sch
}

func TestSARIFValidatesAgainstSchema(t *testing.T) {
	sch := sarifSchema(t)
	for name, r := range map[string]*Report{"sample": sampleReport(), "empty": emptyReport(), "odd": oddReport()} {
		t.Run(name, func(t *testing.T) {
			out := writeReport(t, r, FormatSARIF, WriteOptions{})
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("SARIF output is not JSON: %v\n%s", err, out)
			}
			if err := sch.Validate(doc); err != nil {
				t.Errorf("SARIF output does not validate\ngot:\n%v\nwant: no error\n%s", err, out)
			}
		})
	}
	// The schema must reject what it should, or the test proves nothing.
	bad := []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"level":"fatal"}]}]}`)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err == nil {
		t.Errorf("schema accepted level \"fatal\"\ngot:  nil\nwant: a validation error")
	}
}

// TestSARIFContent checks what code-scanning services rely on: every
// rule declared with its level, results pointing at their rule, waived
// findings suppressed, fingerprints and regions.
func TestSARIFContent(t *testing.T) {
	r := sampleReport()
	var log struct {
		Schema string `json:"$schema"`
		Runs   []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID                   string `json:"id"`
						Name                 string `json:"name"`
						HelpURI              string `json:"helpUri"`
						ShortDescription     struct{ Text string }
						FullDescription      struct{ Text string }
						DefaultConfiguration struct{ Level string }
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex *int   `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine, StartColumn, EndLine, EndColumn int }
					} `json:"physicalLocation"`
				} `json:"locations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
				Suppressions        []struct {
					Kind, Status, Justification string
				} `json:"suppressions"`
			} `json:"results"`
		} `json:"runs"`
	}
	// With the source, as the CLI writes it: columns need the text.
	if err := json.Unmarshal(writeReport(t, r, FormatSARIF, sampleOptions()), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("runs\ngot:  %d\nwant: 1", len(log.Runs))
	}
	run := log.Runs[0]
	rules := run.Tool.Driver.Rules
	if len(rules) != len(r.Rules)+1 {
		t.Errorf("declared rules\ngot:  %d\nwant: %d (every rule of the report, and the gate's)", len(rules), len(r.Rules)+1)
	}
	for _, rule := range rules {
		want := ruleIndex(reportRules(r))[rule.ID]
		if rule.Name != want.Name || rule.HelpURI != want.HelpURI || rule.ShortDescription.Text != want.Short ||
			rule.FullDescription.Text != want.Full || rule.DefaultConfiguration.Level != string(want.Severity) {
			t.Errorf("rule %s\ngot:  %+v\nwant: %+v", rule.ID, rule, want)
		}
	}
	if got, want := len(run.Results), len(r.Findings)+len(r.Gate.Granted)+len(r.Waived); got != want {
		t.Fatalf("results\ngot:  %d\nwant: %d", got, want)
	}
	suppressed := 0
	for _, res := range run.Results {
		if res.RuleIndex == nil || rules[*res.RuleIndex].ID != res.RuleID {
			t.Errorf("result %s: ruleIndex does not point at its rule\ngot:  %v\nwant: the index of %s", res.RuleID, res.RuleIndex, res.RuleID)
		}
		if res.PartialFingerprints[sarifFingerprint] == "" {
			t.Errorf("result %s %q has no %s fingerprint", res.RuleID, res.Message.Text, sarifFingerprint)
		}
		if len(res.Suppressions) > 0 {
			suppressed++
			s := res.Suppressions[0]
			if s.Kind != "inSource" || s.Status != "accepted" || s.Justification != "shell is sandboxed by the CI runner" {
				t.Errorf("suppression\ngot:  %+v\nwant: inSource, accepted, the waiver's reason", s)
			}
		}
	}
	if suppressed != len(r.Waived) {
		t.Errorf("suppressed results\ngot:  %d\nwant: %d", suppressed, len(r.Waived))
	}
	for _, res := range run.Results {
		if res.RuleID != "AF202" {
			continue
		}
		if len(res.Locations) != 1 || res.Locations[0].PhysicalLocation == nil {
			t.Fatalf("AF202 has no physical location: %+v", res)
		}
		pl := res.Locations[0].PhysicalLocation
		if pl.ArtifactLocation.URI != "agentform.hcl" || pl.Region.StartLine != 17 || pl.Region.StartColumn != 1 ||
			pl.Region.EndLine != 17 || pl.Region.EndColumn != 13 {
			t.Errorf("AF202 location\ngot:  %+v\nwant: agentform.hcl 17:1-17:13", *pl)
		}
	}
}

func TestSARIFURI(t *testing.T) {
	cases := map[string]string{
		"agentform.hcl":            "agentform.hcl",
		"sub dir/a.hcl":            "sub%20dir/a.hcl",
		"/abs/a b.hcl":             "file:///abs/a%20b.hcl",
		"c:colon.hcl":              "./c:colon.hcl",
		"agents/assistant/a.hcl":   "agents/assistant/a.hcl",
		"weird#name?.hcl":          "weird%23name%3F.hcl",
		"../outside/agentform.hcl": "../outside/agentform.hcl",
	}
	for in, want := range cases {
		if got := sarifURI(in); got != want {
			t.Errorf("sarifURI(%q)\ngot:  %q\nwant: %q", in, got, want)
		}
	}
}

// TestJSONReport checks the document's shape: the report's own field
// names, ranges as {filename, start, end}, empty lists as [], and a
// version.
func TestJSONReport(t *testing.T) {
	r := sampleReport()
	out := writeReport(t, r, FormatJSON, WriteOptions{})
	var doc struct {
		Report
		Findings []struct {
			Finding
			Range *struct {
				Filename   string
				Start, End struct{ Line, Column int }
			} `json:"range"`
		} `json:"findings"`
		Waived []struct {
			Finding
			Waiver *struct {
				Reason, Expires string
				Range           *struct{ Filename string } `json:"range"`
			} `json:"waiver"`
		} `json:"waived"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if doc.FormatVersion != FormatVersion || doc.AgentformVersion != "0.1.0" {
		t.Errorf("versions\ngot:  %q %q\nwant: %q %q", doc.FormatVersion, doc.AgentformVersion, FormatVersion, "0.1.0")
	}
	if len(doc.Findings) != len(r.Findings) || len(doc.Waived) != 1 || len(doc.Rules) != len(r.Rules) || len(doc.Matrix) != 3 {
		t.Fatalf("lengths\ngot:  %d findings, %d waived, %d rules, %d rows\nwant: %d, 1, %d, 3",
			len(doc.Findings), len(doc.Waived), len(doc.Rules), len(doc.Matrix), len(r.Findings), len(r.Rules))
	}
	ordered := orderedFindings(r.Findings)
	for i, f := range doc.Findings {
		want := ordered[i]
		if f.RuleID != want.RuleID || f.Target != want.Target || f.Fingerprint != want.Fingerprint || f.Message != want.Message {
			t.Errorf("finding %d\ngot:  %+v\nwant: %+v", i, f.Finding, want)
		}
		switch {
		case want.Range == nil && f.Range != nil:
			t.Errorf("finding %d: range\ngot:  %+v\nwant: none", i, f.Range)
		case want.Range != nil && (f.Range == nil || f.Range.Filename != want.Range.Filename ||
			f.Range.Start.Line != want.Range.Start.Line || f.Range.Start.Column != want.Range.Start.Column ||
			f.Range.End.Line != want.Range.End.Line || f.Range.End.Column != want.Range.End.Column):
			t.Errorf("finding %d: range\ngot:  %+v\nwant: %+v", i, f.Range, want.Range)
		}
	}
	w := doc.Waived[0].Waiver
	if w == nil || w.Reason == "" || w.Expires != "2026-12-31" || w.Range == nil || w.Range.Filename != "agentform.hcl" {
		t.Errorf("waiver\ngot:  %+v\nwant: reason, expiry and range", w)
	}
	if doc.Gate == nil || doc.Gate.Pass || len(doc.Gate.Granted) != 1 {
		t.Errorf("gate\ngot:  %+v\nwant: a failing gate with one grant", doc.Gate)
	}

	// Empty lists are [], so that consumers (and ReadBaseline) need no
	// null checks.
	empty := string(writeReport(t, emptyReport(), FormatJSON, WriteOptions{}))
	for _, key := range []string{`"findings": []`, `"waived": []`, `"rules": []`, `"matrix": []`,
		`"counts": {`, `"error": 0`, `"format_version": "1.0"`} {
		if !strings.Contains(empty, key) {
			t.Errorf("empty report lacks %s\ngot:\n%s", key, empty)
		}
	}
	if strings.Contains(empty, `"gate"`) {
		t.Errorf("empty report has a gate\ngot:\n%s\nwant: no gate key", empty)
	}
}

func TestTable(t *testing.T) {
	cases := []struct {
		name     string
		r        *Report
		opts     WriteOptions
		want     []string
		wantNot  []string
		wantLast string
	}{
		{
			name:     "sample",
			r:        sampleReport(),
			opts:     WriteOptions{},
			want:     []string{"Errors (3)", "Warnings (3)", "Notes (3)", "[AF105] warning  agent.assistant  agentform.hcl:4", "No new access (against baseline.json): FAIL", "+ assistant → fetch", "- triage → read_file"},
			wantNot:  []string{"\x1b[", "Waived (", "sandboxed", "21 |", "sk-live"},
			wantLast: "3 errors, 3 warnings, 3 notes (1 waived)",
		},
		{
			name:     "show waived with source",
			r:        sampleReport(),
			opts:     sampleOptions(),
			want:     []string{"Waived (1)", "waived: shell is sandboxed by the CI runner; expires 2026-12-31", "21 |     API_TOKEN = (redacted)"},
			wantNot:  []string{"sk-live"},
			wantLast: "3 errors, 3 warnings, 3 notes (1 waived)",
		},
		{
			name:     "color",
			r:        sampleReport(),
			opts:     WriteOptions{Color: true},
			want:     []string{tableRed + "[AF202]", tableYellow + "[AF102]", tableCyan + "[AF101]", tableBold + tableRed + "FAIL"},
			wantLast: tableBold + "3 errors, 3 warnings, 3 notes (1 waived)" + tableReset,
		},
		{
			name:     "empty",
			r:        emptyReport(),
			want:     []string{"No findings."},
			wantNot:  []string{"Errors", "No new access"},
			wantLast: "0 errors, 0 warnings, 0 notes",
		},
		{
			name:     "odd",
			r:        oddReport(),
			opts:     WriteOptions{ShowWaived: true},
			want:     []string{"Other (1)", `unknown \x1b[31mrule\x1b[0m second line`, "waived (no reason given)"},
			wantNot:  []string{"\x1b"},
			wantLast: "0 errors, 0 warnings, 2 notes (2 waived)",
		},
		{
			name:     "singular",
			r:        &Report{Counts: map[Severity]int{SeverityError: 1, SeverityWarning: 1, SeverityNote: 1}, Waived: []Finding{{}}},
			wantLast: "1 error, 1 warning, 1 note (1 waived)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := string(writeReport(t, tc.r, FormatTable, tc.opts))
			for _, s := range tc.want {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q\ngot:\n%s", s, out)
				}
			}
			for _, s := range tc.wantNot {
				if strings.Contains(out, s) {
					t.Errorf("output has %q\ngot:\n%s", s, out)
				}
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if got := lines[len(lines)-1]; got != tc.wantLast {
				t.Errorf("summary line\ngot:  %q\nwant: %q", got, tc.wantLast)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	t.Run("sample", func(t *testing.T) {
		out := string(writeReport(t, sampleReport(), FormatMarkdown, WriteOptions{}))
		for _, s := range []string{
			"❌ **No new access: FAIL** · **3 errors, 3 warnings, 3 notes (1 waived)**",
			"| Tool | `assistant` | `reviewer` | `triage` |",
			"| `shell` | ⚠️ | ❌ | ❌ |",
			"| `fetch` | ✅ | ❌ | ✅ |",
			`holds "fs.\*" \| matches 2 tools: narrow it to \<fs.read\> \& \*fs.write\*`,
			"[AF105](" + HelpBase + "AF105.md)",
			"1 finding waived (not listed).",
		} {
			if !strings.Contains(out, s) {
				t.Errorf("output lacks %q\ngot:\n%s", s, out)
			}
		}
		// Every table row has as many cells as its header.
		checkMarkdownTables(t, out)
	})
	t.Run("pass", func(t *testing.T) {
		r := sampleReport()
		r.Gate.Pass = true
		out := string(writeReport(t, r, FormatMarkdown, WriteOptions{}))
		if !strings.Contains(out, "✅ **No new access: PASS**") {
			t.Errorf("output lacks the passing gate\ngot:\n%s", out)
		}
	})
	t.Run("large matrix", func(t *testing.T) {
		r := emptyReport()
		for i := range 21 {
			r.Matrix = append(r.Matrix, MatrixRow{Agent: fmt.Sprintf("agent%02d", i), Policy: "locked", RuntimeDependent: i == 19,
				Cells: []Cell{{Tool: "a", Allowed: true}, {Tool: "b"}, {Tool: "c", OverrideReachable: true}}})
		}
		out := string(writeReport(t, r, FormatMarkdown, WriteOptions{}))
		if !strings.Contains(out, "| `agent20` | locked | 1 | 2 | 1 |") || strings.Contains(out, "| Tool |") {
			t.Errorf("a 21-agent matrix is not counted per agent\ngot:\n%s", out)
		}
		if !strings.Contains(out, "| `agent19` | locked (runtime default) | 1 | 2 | 1 |") {
			t.Errorf("a row computed from runtime() defaults is not marked\ngot:\n%s", out)
		}
		checkMarkdownTables(t, out)
	})
	t.Run("many findings", func(t *testing.T) {
		r := emptyReport()
		for i := range mdMaxFindings + 5 {
			r.Findings = append(r.Findings, Finding{RuleID: "AF101", Severity: SeverityNote, Target: fmt.Sprintf("agent.a%03d", i)})
		}
		out := string(writeReport(t, r, FormatMarkdown, WriteOptions{}))
		if n := strings.Count(out, "| 🔵 note |"); n != mdMaxFindings {
			t.Errorf("listed findings\ngot:  %d\nwant: %d", n, mdMaxFindings)
		}
		if !strings.Contains(out, "…and 5 more, not listed here: run `agentform audit` for all 105 findings.") {
			t.Errorf("output does not count the findings left out\ngot:\n%s", out)
		}
	})
	t.Run("odd", func(t *testing.T) {
		out := string(writeReport(t, oddReport(), FormatMarkdown, WriteOptions{ShowWaived: true}))
		for _, s := range []string{"pipe \\`code\\` \\| here", "`agent.a\\|b`", "### Waived (2)"} {
			if !strings.Contains(out, s) {
				t.Errorf("output lacks %q\ngot:\n%s", s, out)
			}
		}
		if strings.Contains(out, "\x1b") {
			t.Errorf("output has a raw escape character\ngot:\n%q", out)
		}
		checkMarkdownTables(t, out)
	})
}

// checkMarkdownTables checks that every row of every table has its
// header's number of cells, counting unescaped pipes.
func checkMarkdownTables(t *testing.T, out string) {
	t.Helper()
	cells := func(line string) int {
		return len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1)) - 1
	}
	header := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			header = 0
			continue
		}
		if header == 0 {
			header = cells(line)
			continue
		}
		if got := cells(line); got != header {
			t.Errorf("table row has the wrong number of cells\ngot:  %d in %s\nwant: %d", got, line, header)
		}
	}
}

// helpLink matches the only URLs an HTML report may contain: rule help
// links in an href.
var helpLink = regexp.MustCompile(`<a href="https://github\.com/agentform/agentform/blob/main/docs/rules/AF\d{3}\.md"`)

func TestHTMLSelfContained(t *testing.T) {
	for name, r := range map[string]*Report{"sample": sampleReport(), "empty": emptyReport(), "odd": oddReport()} {
		t.Run(name, func(t *testing.T) {
			out := string(writeReport(t, r, FormatHTML, sampleOptions()))
			rest := helpLink.ReplaceAllString(out, "")
			for _, s := range []string{"http://", "https://", "<link", "<script src", "src=", "@import", "url("} {
				if strings.Contains(rest, s) {
					t.Errorf("output has %q outside rule help links\ngot:\n%s", s, out)
				}
			}
		})
	}
	out := string(writeReport(t, sampleReport(), FormatHTML, sampleOptions()))
	if n := len(helpLink.FindAllString(out, -1)); n != len(sampleReport().Findings)+len(sampleReport().Waived) {
		t.Errorf("help links\ngot:  %d\nwant: one per finding", n)
	}
	// A row computed from runtime() defaults says so beside the agent.
	rt := sampleReport()
	rt.Matrix[1].RuntimeDependent = true
	if h := string(writeReport(t, rt, FormatHTML, sampleOptions())); !strings.Contains(h, "reviewer<small>locked (runtime default)</small>") ||
		!strings.Contains(h, "capabilities or policy known at runtime: this row uses the defaults") {
		t.Errorf("HTML does not mark the runtime-dependent row\ngot:\n%s", h)
	}
	for _, s := range []string{
		`<table class="matrix" id="matrix">`,
		`&lt;fs.read&gt; &amp; *fs.write*`, // escaped, not markup
		`<td class="cell override" title="assistant → shell: denied, reachable by a session override (missing exec)">⚠</td>`,
		`data-filter="waived" checked`,
		`API_TOKEN = (redacted)`,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q\ngot:\n%s", s, out)
		}
	}
	if got, want := matrixCells(out), 15; got != want {
		t.Errorf("matrix cells\ngot:  %d\nwant: %d", got, want)
	}
	// The odd report's relative help URI is not linked, and its markup is
	// escaped.
	odd := string(writeReport(t, oddReport(), FormatHTML, WriteOptions{}))
	if strings.Contains(odd, `href="docs/`) {
		t.Errorf("odd report links a relative help URI\ngot:\n%s", odd)
	}
}

// matrixCells counts the cells of the table with id="matrix".
func matrixCells(html string) int {
	start := strings.Index(html, `id="matrix"`)
	if start < 0 {
		return -1
	}
	end := strings.Index(html[start:], "</table>")
	if end < 0 {
		return -1
	}
	return len(regexp.MustCompile(`<td[^>]*class="cell (allow|deny|override|none)"`).FindAllString(html[start:start+end], -1))
}

func TestJUnit(t *testing.T) {
	type testcase struct {
		Classname string `xml:"classname,attr"`
		Name      string `xml:"name,attr"`
		Failure   *struct {
			Type    string `xml:"type,attr"`
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"failure"`
		Skipped *struct {
			Message string `xml:"message,attr"`
		} `xml:"skipped"`
	}
	type suite struct {
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Skipped  int      `xml:"skipped,attr"`
		Suites   []suite  `xml:"testsuite"`
	}
	out := writeReport(t, sampleReport(), FormatJUnit, WriteOptions{})
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("output is not XML: %v\n%s", err, out)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("suites\ngot:  %d\nwant: 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	// Pairs: AF202/tool.fetch, AF306/tool.fetch, AF201/tool.search,
	// AF102/agent.assistant (two findings), AF105/agent.assistant,
	// AF101/agent.reviewer, AF101/agent.triage, AF103/agent.triage, and
	// the failing gate's AF111/agent.assistant: 9 failures;
	// AF301/tool.shell waived: 1 skipped; AF402 has no finding: 1 passing
	// case; the audit saw the whole workspace: 1 passing case.
	got := [4]int{s.Tests, s.Failures, s.Skipped, s.Errors}
	if want := [4]int{12, 9, 1, 0}; got != want {
		t.Errorf("suite tests, failures, skipped, errors\ngot:  %v\nwant: %v", got, want)
	}
	if doc.Tests != s.Tests || doc.Failures != s.Failures || doc.Skipped != s.Skipped {
		t.Errorf("testsuites totals\ngot:  %d %d %d\nwant: %d %d %d", doc.Tests, doc.Failures, doc.Skipped, s.Tests, s.Failures, s.Skipped)
	}
	var failures, skipped int
	for _, c := range s.Cases {
		if c.Failure != nil {
			failures++
		}
		if c.Skipped != nil {
			skipped++
		}
		switch c.Classname + " " + c.Name {
		case "AF102 agent.assistant":
			if c.Failure == nil || c.Failure.Type != "warning" || !strings.HasPrefix(c.Failure.Message, "2 findings: ") ||
				strings.Count(c.Failure.Text, "[AF102]") != 2 {
				t.Errorf("AF102 agent.assistant\ngot:  %+v\nwant: a warning failure listing 2 findings", c.Failure)
			}
		case "AF301 tool.shell":
			if c.Skipped == nil || c.Skipped.Message != "waived: shell is sandboxed by the CI runner" {
				t.Errorf("AF301 tool.shell\ngot:  %+v\nwant: skipped with the waiver's reason", c)
			}
		case "AF402 all targets", junitAuditClass + " " + junitAuditName:
			if c.Failure != nil || c.Skipped != nil {
				t.Errorf("%s %s\ngot:  %+v\nwant: a passing case", c.Classname, c.Name, c)
			}
		case "AF202 tool.fetch":
			if c.Failure == nil || c.Failure.Type != "error" {
				t.Errorf("AF202 tool.fetch\ngot:  %+v\nwant: an error failure", c.Failure)
			}
		}
	}
	if failures != s.Failures || skipped != s.Skipped || len(s.Cases) != s.Tests {
		t.Errorf("counted cases\ngot:  %d cases, %d failures, %d skipped\nwant: %d, %d, %d", len(s.Cases), failures, skipped, s.Tests, s.Failures, s.Skipped)
	}

	// Control characters that XML cannot carry do not break the document.
	if err := xml.Unmarshal(writeReport(t, oddReport(), FormatJUnit, WriteOptions{}), new(struct{})); err != nil {
		t.Errorf("odd report: output is not XML: %v", err)
	}
}

// FuzzWrite renders reports built from arbitrary strings in every format:
// no format may fail or panic, JSON and SARIF must parse as JSON, JUnit
// as XML, and the HTML must load nothing.
func FuzzWrite(f *testing.F) {
	f.Add("AF101", "note", "agent.a", "msg | <b>&", "file.hcl", "line\nline", "reason", 3)
	f.Add("", "", "", "\x1b[2J\x00\xff", "/abs/x y", "", "", 0)
	f.Fuzz(func(t *testing.T, rule, sev, target, msg, file, src, reason string, line int) {
		r := &Report{
			Findings: []Finding{{RuleID: rule, Severity: Severity(sev), Target: target, Message: msg, Agent: target, Tool: msg,
				Range: rng(file, line, line, line+1, line)}},
			Waived: []Finding{{RuleID: rule, Severity: Severity(sev), Target: msg, Message: target,
				Waiver: &Waiver{Reason: reason, Expires: msg, Range: rng(file, line, 1, line, 2)}}},
			Rules:  []Rule{{ID: rule, Name: msg, Short: msg, Full: reason, Severity: Severity(sev), HelpURI: target}},
			Matrix: []MatrixRow{{Agent: target, Policy: sev, Holds: []string{msg}, Cells: []Cell{{Tool: msg, Missing: []string{reason}}}}},
			Gate:   &Gate{Against: file, Granted: []Access{{Agent: target, Tool: msg}}, Reasons: []string{reason}},
		}
		opts := WriteOptions{Color: true, ShowWaived: true, Source: map[string][]byte{file: []byte(src)}}
		for _, format := range Formats() {
			var buf bytes.Buffer
			if err := Write(&buf, r, string(format), opts); err != nil {
				t.Fatalf("Write(%s): %v", format, err)
			}
			switch format {
			case FormatJSON, FormatSARIF:
				if !json.Valid(buf.Bytes()) {
					t.Fatalf("%s output is not JSON:\n%s", format, buf.Bytes())
				}
			case FormatJUnit:
				if err := xml.Unmarshal(buf.Bytes(), new(struct{})); err != nil {
					t.Fatalf("junit output is not XML: %v\n%s", err, buf.Bytes())
				}
			case FormatHTML:
				if strings.Contains(buf.String(), "<script src") || strings.Contains(buf.String(), "<link") {
					t.Fatalf("html output loads a resource:\n%s", buf.Bytes())
				}
			}
		}
	})
}

// chromiumPath finds Debian's chromium: /usr/bin/chromium or chromium on
// PATH. The HTML tests fail without it: "make test" installs it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed: the HTML report tests need headless Chromium (Debian package %q: apt-get install -y chromium; \"make test\" installs it)", "chromium")
	}
	return p
}

// runChromium runs headless chromium with args after the common flags,
// bounded by 60 seconds, and kills its whole process group when it
// returns, so that no renderer or zygote outlives the test.
func runChromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(),
	}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		t.Fatalf("chromium did not finish in 60s\nstderr:\n%s", stderr.Bytes())
	}
	if err != nil {
		t.Fatalf("chromium: %v\nstderr:\n%s", err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// TestHTMLInChromium loads the report in headless Chromium: the DOM it
// builds has the 3×5 matrix grid, the script ran and applied the
// severity filter of the URL fragment, and the page renders to a
// 1280×900 screenshot.
func TestHTMLInChromium(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, writeReport(t, sampleReport(), FormatHTML, sampleOptions()), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page

	t.Run("dom", func(t *testing.T) {
		dom := string(runChromium(t, "--dump-dom", url+"#severity=error,warning"))
		if got, want := matrixCells(dom), 15; got != want {
			t.Errorf("matrix cells in the DOM\ngot:  %d\nwant: %d\n%s", got, want, dom)
		}
		if !strings.Contains(dom, `data-js="ready"`) {
			t.Errorf("the page's script did not run to its end\ngot:\n%s", dom)
		}
		rows := regexp.MustCompile(`<tr class="finding[^"]*" data-severity="(\w+)"[^>]*>`).FindAllStringSubmatch(dom, -1)
		if len(rows) != 10 {
			t.Fatalf("finding rows\ngot:  %d\nwant: 10", len(rows))
		}
		for _, m := range rows {
			hidden := strings.Contains(m[0], "hidden")
			if want := m[1] == "note"; hidden != want {
				t.Errorf("row visibility under #severity=error,warning\ngot:  hidden=%v for %s\nwant: hidden=%v", hidden, m[0], want)
			}
		}
		if !strings.Contains(dom, "showing 7 of 10") {
			t.Errorf("shown count\ngot:\n%s\nwant: showing 7 of 10", dom)
		}
	})

	// A failed audit's page has no findings table: its script still runs.
	t.Run("failed", func(t *testing.T) {
		failed := filepath.Join(dir, "failed.html")
		if err := os.WriteFile(failed, writeReport(t, failedReport(), FormatHTML, sampleOptions()), 0o644); err != nil {
			t.Fatal(err)
		}
		dom := string(runChromium(t, "--dump-dom", "file://"+failed))
		if !strings.Contains(dom, `data-js="ready"`) || !strings.Contains(dom, "The audit failed") {
			t.Errorf("failed audit's page\ngot:\n%s\nwant: the script run to its end, and the failure", dom)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		shot := filepath.Join(t.TempDir(), "report.png")
		runChromium(t, "--screenshot="+shot, "--window-size=1280,900", "--hide-scrollbars", url)
		f, err := os.Open(shot)
		if err != nil {
			t.Fatalf("no screenshot: %v", err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatalf("screenshot is not a PNG: %v", err)
		}
		if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 900 {
			t.Errorf("screenshot size\ngot:  %dx%d\nwant: 1280x900", b.Dx(), b.Dy())
		}
	})
}

// TestJUnitSARIFMessagesPrintable: the texts CI and code scanning show
// from JUnit's message attributes and SARIF's messages and justifications
// have control characters and bidirectional overrides escaped, as the
// table, Markdown and HTML do ("rm is ‮elbawollasi‬" must not show as
// "rm is isallowable").
func TestJUnitSARIFMessagesPrintable(t *testing.T) {
	hostile := "rm is \u202eelbawollasi\u202c fine \x1b[8m hidden"
	r := &Report{
		Findings: []Finding{{RuleID: "AF110", Severity: SeverityError, Target: "check.c", Message: hostile}},
		Waived: []Finding{{RuleID: "AF104", Severity: SeverityWarning, Target: "tool.rm", Message: "waived",
			Waiver: &Waiver{Reason: "ok \u202eeurt\u202c"}}},
		Rules: []Rule{{ID: "AF110", Name: "CheckFailed", Severity: SeverityError}, {ID: "AF104", Name: "UncallableTool", Severity: SeverityWarning}},
	}
	for _, format := range []Format{FormatJUnit, FormatSARIF} {
		out := string(writeReport(t, r, format, WriteOptions{ShowWaived: true}))
		if strings.ContainsAny(out, "\u202e\u202c\x1b") || strings.Contains(out, `\u001b`) || strings.Contains(out, "\ufffd") {
			t.Errorf("%s has a raw override or control character:\n%s", format, out)
		}
		if !strings.Contains(out, `elbawollasi`) || !strings.Contains(out, `eurt`) {
			t.Errorf("%s lost the text:\n%s", format, out)
		}
	}
}
