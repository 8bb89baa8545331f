package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/audit"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
)

func appendManifest(t *testing.T, dir, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "agent.acl"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(text)
	must(t, err)
	must(t, f.Close())
}

func TestAuditExitCodesAndWaivers(t *testing.T) {
	dir := copyTree(t, quickstart)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"default fails on errors only", []string{"audit", "-no-color"}, ExitOK, "0 errors, 3 warnings, 5 notes"},
		{"fail on warnings", []string{"audit", "-fail-on=warning", "-no-color"}, ExitError, "[AF107] warning"},
		{"none never fails", []string{"audit", "-fail-on=none", "-format=json"}, ExitOK, `"rule_id": "AF201"`},
		{"bad level is a usage error", []string{"audit", "-fail-on=fatal"}, exitUsage, ""},
		{"bad format is a usage error", []string{"audit", "-format=pdf"}, exitUsage, ""},
		{"both gates is a usage error", []string{"audit", "-against=state", "-baseline=x.json"}, exitUsage, ""},
		{"missing baseline is a usage error", []string{"audit", "-baseline=nowhere.json"}, exitUsage, ""},
		{"unwritable -out", []string{"audit", "-format=json", "-out=nodir/x.json"}, ExitError, ""},
		// These give their own -chdir (no other is added).
		{"a -chdir with no directory is a usage error", []string{"-chdir=" + filepath.Join(dir, "nowhere"), "audit"}, exitUsage, ""},
		{"a second -chdir is a usage error", []string{"-chdir=" + dir, "-chdir=" + dir, "audit"}, exitUsage, ""},
		{"a second -chdir among the options is a usage error", []string{"-chdir=" + dir, "audit", "-chdir=" + dir}, exitUsage, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if !strings.HasPrefix(args[0], "-chdir=") {
				args = append([]string{"-chdir=" + dir}, args...)
			}
			code, stdout, stderr := run(t, "", args...)
			if code != tc.code || !strings.Contains(stdout, tc.out) {
				t.Errorf("got: exit %d\n%s%s\nwant: exit %d with %q", code, stdout, stderr, tc.code, tc.out)
			}
			// Errors name the file and the reason once, and never a
			// temporary file.
			for _, bad := range []string{".tmp", "writing nodir/x.json: writing", "Error: open "} {
				if strings.Contains(stderr, bad) {
					t.Errorf("stderr %q contains %q", stderr, bad)
				}
			}
		})
	}

	if _, _, stderr := run(t, "", "-chdir="+dir, "audit", "-baseline=nowhere.json"); !strings.Contains(stderr, "reading the baseline "+filepath.Join(dir, "nowhere.json")+": no such file or directory") {
		t.Errorf("missing baseline got:\n%s\nwant: which file and why", stderr)
	}
	if _, _, stderr := run(t, "", "-chdir="+dir, "audit", "-format=json", "-out=nodir/x.json"); !strings.Contains(stderr, "cannot create a file in "+filepath.Join(dir, "nodir")) {
		t.Errorf("unwritable -out got:\n%s\nwant: which directory and why", stderr)
	}

	// A waiver moves the AF201 finding to the waived list.
	appendManifest(t, dir, "\nwaiver \"AF201\" {\n  target = \"tool.research\"\n  reason = \"the research service is pinned by its own release process\"\n}\n")
	code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-no-color", "-show-waived")
	if code != ExitOK || !strings.Contains(stdout, "0 errors, 2 warnings, 5 notes (1 waived)") || !strings.Contains(stdout, "pinned by its own release process") {
		t.Errorf("with a waiver got: exit %d\n%s\nwant: the finding waived with its reason", code, stdout)
	}
	// SARIF carries it as a suppression with the justification.
	_, stdout, _ = run(t, "", "-chdir="+dir, "audit", "-format=sarif")
	if !strings.Contains(stdout, `"justification": "the research service is pinned by its own release process"`) {
		t.Errorf("SARIF got:\n%s\nwant: a suppression with the justification", stdout)
	}

	// An expired waiver stops applying and is itself reported.
	appendManifest(t, dir, "\nwaiver \"AF107\" {\n  target  = \"skill.research\"\n  reason  = \"accepted for the pilot\"\n  expires = \"2020-01-31\"\n}\n")
	code, stdout, _ = run(t, "", "-chdir="+dir, "audit", "-no-color", "-fail-on=warning")
	if code != ExitError || !strings.Contains(stdout, "[AF401] warning") || !strings.Contains(stdout, "[AF107] warning") {
		t.Errorf("expired waiver got: exit %d\n%s\nwant: AF401 and the AF107 findings back", code, stdout)
	}
}

// TestAuditNeverGreenerThanPlan: a failed check is an AF110 finding in
// every format, and an error no finding reports (a tool whose source is
// missing) fails the audit whatever -fail-on says, with the report still
// written and the errors on standard error.
func TestAuditNeverGreenerThanPlan(t *testing.T) {
	dir := copyTree(t, quickstart)
	src, _ := os.ReadFile(filepath.Join(dir, "agent.acl"))
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(strings.Replace(string(src), `capabilities      = ["text", "skills"]`, `capabilities      = ["text", "skills", "shell"]`, 1)), 0o644))
	for _, format := range []string{"json", "sarif", "junit"} {
		code, stdout, stderr := run(t, "", "-chdir="+dir, "audit", "-format="+format)
		if code != ExitError || !strings.Contains(stdout, "AF110") || !strings.Contains(stdout, "assistant must never reach the shell") ||
			!strings.Contains(stderr, "Check failed") || strings.Contains(stderr, "incomplete") {
			t.Errorf("%s with a failed check got: exit %d\n%s\n%s\nwant: exit 1, an AF110 finding, the check's error on stderr", format, code, stdout, stderr)
		}
	}

	dir = copyTree(t, quickstart)
	must(t, os.RemoveAll(filepath.Join(dir, "tools", "word_count")))
	code, stdout, stderr := run(t, "", "-chdir="+dir, "audit", "-format=json", "-fail-on=none")
	var doc struct {
		Counts map[string]int `json:"counts"`
	}
	if code != ExitError || json.Unmarshal([]byte(stdout), &doc) != nil || doc.Counts["warning"] == 0 ||
		!strings.Contains(stderr, "Source not found") || !strings.Contains(stderr, "the audit is incomplete: an error above") {
		t.Errorf("with a missing tool source got: exit %d\n%s\n%s\nwant: exit 1, the JSON report, the error and \"incomplete\" on stderr", code, stdout, stderr)
	}
}

// TestAuditSARIFRepoPaths: SARIF locations are relative to the root of the
// repository holding the workspace, where code scanning looks for files.
func TestAuditSARIFRepoPaths(t *testing.T) {
	repo := t.TempDir()
	must(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
	ws := filepath.Join(repo, "teams", "support")
	must(t, os.MkdirAll(filepath.Dir(ws), 0o755))
	must(t, os.Rename(copyTree(t, quickstart), ws))
	_, stdout, stderr := run(t, "", "-chdir="+ws, "audit", "-format=sarif")
	if !strings.Contains(stdout, `"uri": "teams/support/agent.acl",`+"\n"+`                  "uriBaseId": "%SRCROOT%"`) {
		t.Errorf("got:\n%s%s\nwant: locations relative to the repository root", stdout, stderr)
	}
	// The table keeps paths relative to the workspace.
	if _, stdout, _ := run(t, "", "-chdir="+ws, "audit", "-no-color"); strings.Contains(stdout, "teams/support") {
		t.Errorf("table got:\n%s\nwant: workspace-relative paths", stdout)
	}
}

func TestAuditNoNewAccessGates(t *testing.T) {
	dir := copyTree(t, quickstart)
	base := filepath.Join(t.TempDir(), "base.json")
	if code, _, stderr := run(t, "", "-chdir="+dir, "audit", "-format=json", "-out="+base); code != ExitOK {
		t.Fatalf("baseline: exit %d\n%s", code, stderr)
	}
	if code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-no-color", "-baseline="+base); code != ExitOK || !strings.Contains(stdout, "PASS") {
		t.Errorf("unchanged against the baseline got: exit %d\n%s\nwant: PASS", code, stdout)
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}

	// Grant the assistant the shell.
	src, _ := os.ReadFile(filepath.Join(dir, "agent.acl"))
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(strings.Replace(string(src), `capabilities      = ["text", "skills"]`, `capabilities      = ["text", "skills", "shell::read"]`, 1)), 0o644))
	// The check block now fails the plan, which audit still reports on.
	for _, gate := range [][]string{{"-baseline=" + base}, {"-against=state"}} {
		code, stdout, _ := run(t, "", append([]string{"-chdir=" + dir, "audit", "-no-color", "-fail-on=none"}, gate...)...)
		if code != ExitError || !strings.Contains(stdout, "FAIL") || !strings.Contains(stdout, "+ assistant → grep") {
			t.Errorf("%v got: exit %d\n%s\nwant: FAIL naming assistant → grep", gate, code, stdout)
		}
	}
	_, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-format=json", "-against=state", "-fail-on=none")
	var doc struct {
		Gate struct {
			Pass    bool `json:"pass"`
			Granted []struct{ Agent, Tool string }
		} `json:"gate"`
	}
	must(t, json.Unmarshal([]byte(stdout), &doc))
	if doc.Gate.Pass || len(doc.Gate.Granted) != 1 || doc.Gate.Granted[0].Tool != "grep" {
		t.Errorf("JSON gate got: %+v\nwant: failed, granted assistant → grep", doc.Gate)
	}

	// SARIF and JUnit, which have no gate section, say why too: an AF111
	// result at the assistant's capabilities, a failing AF111 case.
	code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-format=sarif", "-against=state", "-fail-on=none")
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	must(t, json.Unmarshal([]byte(stdout), &log))
	var gate []string
	for _, res := range log.Runs[0].Results {
		if res.RuleID == "AF111" && len(res.Locations) == 1 {
			pl := res.Locations[0].PhysicalLocation
			gate = append(gate, fmt.Sprintf("%s:%d %s", pl.ArtifactLocation.URI, pl.Region.StartLine, res.Message.Text))
		}
	}
	if code != ExitError || len(gate) != 1 || !strings.HasPrefix(gate[0], `agent.acl:29 Agent "assistant" can call "grep", which it could not call in the last apply`) {
		t.Errorf("SARIF gate got: exit %d, AF111 results %q\nwant: exit 1, one for assistant → grep at agent.acl:29", code, gate)
	}
	code, stdout, _ = run(t, "", "-chdir="+dir, "audit", "-format=junit", "-against=state", "-fail-on=none")
	if code != ExitError || !strings.Contains(stdout, `<testcase classname="AF111" name="agent.assistant">`+"\n"+`      <failure type="error"`) {
		t.Errorf("JUnit gate got: exit %d\n%s\nwant: a failing AF111 case for agent.assistant", code, stdout)
	}
}

// TestAuditGateRuntimeSinceApply: an agent whose capabilities come from
// runtime() since the last apply holds what its environment says when it
// starts, so the "no new access" gate fails with every tool it could not
// call then, against the state and against a baseline report; once
// applied so, it passes.
func TestAuditGateRuntimeSinceApply(t *testing.T) {
	dir := copyTree(t, quickstart)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	baseline := filepath.Join(t.TempDir(), "base.json")
	if code, _, stderr := run(t, "", "-chdir="+dir, "audit", "-format=json", "-fail-on=none", "-out="+baseline); code != ExitOK {
		t.Fatalf("audit: exit %d\n%s", code, stderr)
	}
	path := filepath.Join(dir, "agent.acl")
	src, _ := os.ReadFile(path)
	const from = `capabilities      = ["text", "skills"]`
	if !strings.Contains(string(src), from) {
		t.Fatalf("agent.acl has no %q", from)
	}
	must(t, os.WriteFile(path, []byte(strings.Replace(string(src), from, `capabilities      = runtime("ASSISTANT_CAPS", ["text", "skills"])`, 1)), 0o644))
	for _, gate := range []string{"-against=state", "-baseline=" + baseline} {
		code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-no-color", "-fail-on=none", gate)
		if code != ExitError || !strings.Contains(stdout, "FAIL") || !strings.Contains(stdout, "+ assistant → grep (by runtime capabilities)") ||
			!strings.Contains(stdout, `agent "assistant" takes its capabilities or capability_policy from runtime() now but did not in`) {
			t.Errorf("%s, capabilities moved to runtime(): exit %d\n%s\nwant: FAIL with assistant → grep by runtime capabilities", gate, code, stdout)
		}
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	if code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-no-color", "-fail-on=none", "-against=state"); code != ExitOK || !strings.Contains(stdout, "PASS") {
		t.Errorf("runtime capabilities at the apply: exit %d\n%s\nwant: PASS", code, stdout)
	}
}

// TestAuditGateExtensibleSinceApply: an agent made extensible since the
// last apply can be given any tool by a session override, so the "no new
// access" gate fails with each tool it is denied; one whose policy was
// already extensible at the apply (written so or as a runtime default)
// passes.
func TestAuditGateExtensibleSinceApply(t *testing.T) {
	dir := copyTree(t, quickstart)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	src, _ := os.ReadFile(filepath.Join(dir, "agent.acl"))
	edit := func(from, to string) {
		t.Helper()
		if !strings.Contains(string(src), from) {
			t.Fatalf("agent.acl has no %q", from)
		}
		src = []byte(strings.Replace(string(src), from, to, 1))
		must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), src, 0o644))
	}
	edit(`capability_policy = "locked"`, `capability_policy = "extensible"`)
	code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-no-color", "-fail-on=none", "-against=state")
	if code != ExitError || !strings.Contains(stdout, "FAIL") || !strings.Contains(stdout, "+ assistant → grep (by session override)") ||
		!strings.Contains(stdout, `agent "assistant" is extensible now but was not in state`) {
		t.Errorf("assistant made extensible got: exit %d\n%s\nwant: FAIL with assistant → grep by session override", code, stdout)
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	if code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-no-color", "-fail-on=none", "-against=state"); code != ExitOK || !strings.Contains(stdout, "PASS") {
		t.Errorf("extensible at the apply got: exit %d\n%s\nwant: PASS", code, stdout)
	}
	edit(`capability_policy = "extensible"`, `capability_policy = runtime("ASSISTANT_POLICY", "extensible")`)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	if code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-no-color", "-fail-on=none", "-against=state"); code != ExitOK || !strings.Contains(stdout, "PASS") {
		t.Errorf("extensible by a runtime default at the apply got: exit %d\n%s\nwant: PASS", code, stdout)
	}
	// A tool added since: the agent, extensible at the apply, could not
	// reach it then.
	src = append(src, []byte(`
tool "rm" {
  kind         = "bash"
  description  = "Removes files."
  commands     = ["rm"]
  capabilities = ["danger::delete"]
}
`)...)
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), src, 0o644))
	code, stdout, _ = run(t, "", "-chdir="+dir, "audit", "-no-color", "-fail-on=none", "-against=state")
	if code != ExitError || !strings.Contains(stdout, "+ assistant → rm (by session override)") || strings.Contains(stdout, "assistant → grep") ||
		!strings.Contains(stdout, `agent "assistant" is extensible: a session override can reach 1 tool added since state`) {
		t.Errorf("a tool added since the apply got: exit %d\n%s\nwant: FAIL with assistant → rm by session override, and only it", code, stdout)
	}
}

func TestGraph(t *testing.T) {
	dir := copyTree(t, quickstart)
	code, stdout, stderr := run(t, "", "-chdir="+dir, "graph")
	if code != ExitOK {
		t.Fatalf("got: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"digraph agentform {",
		`"agent.assistant" -> "tool.word_count" [color="#16a34a"];`,
		`"agent.assistant" -> "tool.grep" [style=dashed, color="#dc2626"];`,
		`"agent.researcher" -> "tool.grep" [color="#16a34a"];`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("got:\n%s\nwant a line: %s", stdout, want)
		}
	}
	_, stdout, _ = run(t, "", "-chdir="+dir, "graph", "-denied=false")
	if strings.Contains(stdout, "style=dashed") {
		t.Errorf("-denied=false still draws denied edges")
	}
}

// TestGraphExitCode: graph draws from a plan with errors and exits 1, as
// plan does, with or without -lockfile=readonly; warnings alone exit 0
// and are shown; a bad flag value or an argument is refused before
// anything runs.
func TestGraphExitCode(t *testing.T) {
	dir := copyTree(t, quickstart)
	manifestPath := filepath.Join(dir, "agent.acl")
	src, err := os.ReadFile(manifestPath)
	must(t, err)
	for _, args := range [][]string{{"graph"}, {"graph", "-lockfile=readonly"}, {"graph", "-lock-timeout=1s"}} {
		// The quickstart's research agent has a URL known only at
		// runtime: a warning, shown on standard error.
		code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
		if code != ExitOK || !strings.Contains(stdout, "digraph") || !strings.Contains(stderr, "Warning: A2A agent URL known only at runtime") {
			t.Errorf("%v with warnings only got: exit %d\n%s\nwant: exit 0, the graph, the warning", args, code, stderr)
		}
	}
	must(t, os.WriteFile(manifestPath, append(append([]byte(nil), src...), "\ncheck \"never\" {\n  assert {\n    condition     = !can_call(\"assistant\", \"word_count\")\n    error_message = \"assistant must not count words\"\n  }\n}\n"...), 0o644))
	for _, args := range [][]string{{"graph"}, {"graph", "-lockfile=readonly"}} {
		code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
		if code != ExitError || !strings.Contains(stdout, "digraph") || !strings.Contains(stderr, "assistant must not count words") {
			t.Errorf("%v with a failed check got: exit %d\n%s%s\nwant: exit 1, the graph drawn, the error shown", args, code, stdout, stderr)
		}
	}
	for _, flag := range []string{"-lockfile=read-only", "-resolve-timeout=0s", "./elsewhere"} {
		code, stdout, stderr := run(t, "", "-chdir="+dir, "graph", flag)
		if code != ExitError || stdout != "" || !strings.HasPrefix(stderr, "Error: ") {
			t.Errorf("graph %s got: exit %d\n%s%s\nwant: refused before planning", flag, code, stdout, stderr)
		}
	}
}

// incompleteManifest has an MCP server that fails before answering and
// prints, on its standard error, the literal credential the manifest
// gives it in config: the audit cannot plan tool.h.
const incompleteManifest = `agent "a1" {
  version      = "0.1.0"
  capabilities = ["m"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude"
  }
}

tool "h" {
  kind         = "mcp"
  transport    = "stdio"
  command      = "/bin/sh"
  args         = ["-c", "printf 'boom tok-0123456789abcdef \\033[2J\\n' >&2; exit 1"]
  config       = { API_TOKEN = "tok-0123456789abcdef" }
  capabilities = ["m"]
}
`

// auditToFile runs audit in dir with -format=format -out=report.FORMAT
// and checks that it exits 1, says stderrWant on standard error, and
// writes a report that holds what auditReportMarks says for title and
// loc, and errText; it returns the report and what audit printed.
func auditToFile(t *testing.T, dir, format, stderrWant, title, loc, errText string, flags ...string) (report, printed string) {
	t.Helper()
	out := filepath.Join(dir, "report."+format)
	code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir, "audit", "-no-color", "-format=" + format, "-out=" + out}, flags...)...)
	b, err := os.ReadFile(out)
	must(t, err)
	report = string(b)
	if code != ExitError || !strings.Contains(stderr, stderrWant) {
		t.Errorf("%s got: exit %d\n%s\nwant: exit 1, %q on standard error", format, code, stderr, stderrWant)
	}
	for _, want := range append(auditReportMarks(format, title, loc), errText) {
		if !strings.Contains(report, want) {
			t.Errorf("%s report lacks %q\ngot:\n%s", format, want, report)
		}
	}
	return report, stdout + stderr
}

// auditReportMarks are what each format of an incomplete or failed
// report must hold: the verdict and the error's location.
func auditReportMarks(format, title, loc string) []string {
	return map[string][]string{
		"table":    {title + " (1 error)", "  " + loc + "  "},
		"json":     {`"incomplete": {`, `"filename": "agent.acl"`},
		"sarif":    {`"executionSuccessful": false`, `"toolExecutionNotifications": [`, `"uri": "agent.acl"`},
		"markdown": {"❌ **" + title + "**", "| `" + loc + "` |"},
		"html":     {`id="incomplete"`, "<h2>" + title + "</h2>", "<code>" + loc + "</code>"},
		"junit":    {`errors="1"`, `<error type=`, "[error] " + loc + ": "},
	}[format]
}

// TestAuditIncompleteReport: an audit that cannot plan the whole
// workspace (an MCP server that fails, a lockfile -lockfile=readonly
// refuses) says so inside every format, with each error located and
// scrubbed of credentials, and exits 1.
func TestAuditIncompleteReport(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(incompleteManifest), 0o644))
	for _, format := range auditFormats {
		report, printed := auditToFile(t, dir, format, "the audit is incomplete", "Audit incomplete", "agent.acl:16", "MCP server exited before answering")
		if strings.Contains(printed+report, "tok-0123456789abcdef") || strings.Contains(report, "\x1b") {
			t.Errorf("%s prints the credential or a terminal escape\ngot:\n%s%s", format, printed, report)
		}
	}

	dir = copyTree(t, quickstart)
	skill := filepath.Join(dir, "skills", "research", "SKILL.md")
	src, err := os.ReadFile(skill)
	must(t, err)
	must(t, os.WriteFile(skill, append(src, "Cite every source.\n"...), 0o644))
	code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-lockfile=readonly", "-format=sarif")
	if code != ExitError || !strings.Contains(stdout, `"executionSuccessful": false`) || !strings.Contains(stdout, "Lockfile out of date: -lockfile=readonly: skill.research differs") {
		t.Errorf("-lockfile=readonly got: exit %d\n%s\nwant: exit 1, an unsuccessful run naming the lockfile error", code, stdout)
	}
}

// TestAuditLockedSchemaOutOfBounds: a lock entry holding a schema the JSON
// Schema library crashed on (multipleOf 1e-100000000) is an error of the
// plan (-refresh=false builds from the lock), and the audit writes its
// incomplete report in every format.
func TestAuditLockedSchemaOutOfBounds(t *testing.T) {
	def := `{"description":"d","inputSchema":{"properties":{"n":{"multipleOf":1e-100000000,"type":"number"}},"type":"object"},"name":"t"}`
	_, digest, err := resolve.MCPToolDigest(json.RawMessage(def))
	must(t, err)
	// The server of incompleteManifest fails; -refresh=false does not run
	// it, and builds from the lock entry.
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(incompleteManifest), 0o644))
	quotedDef, _ := json.Marshal(def)
	must(t, os.WriteFile(filepath.Join(dir, "agentform.lock.hcl"), []byte(`tool "h" {
  kind          = "mcp"
  server        = { name = "s", version = "1.0" }
  hashed_fields = ["annotations", "description", "inputSchema", "name", "outputSchema"]
  tools = {
    "t" = "`+digest+`"
  }
  definitions = {
    "t" = `+string(quotedDef)+`
  }
}
`), 0o644))
	want := `at "/properties/n/multipleOf" a number has an exponent beyond ±1000`
	for _, format := range auditFormats {
		// Without quotes, which XML and HTML escape.
		auditToFile(t, dir, format, "the audit is incomplete", "Audit incomplete", "agent.acl:13", "a number has an exponent beyond ±1000", "-refresh=false")
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-refresh=false"); code != ExitError || !strings.Contains(stderr, want) {
		t.Errorf("plan -refresh=false got: exit %d\n%s\nwant: exit 1, %q", code, stderr, want)
	}
}

// TestAuditGateIncomplete: an audit whose MCP server fails is incomplete,
// and its gate against the state neither grants the block's placeholder
// column nor revokes the served tools the last apply recorded: it says it
// left them out.
func TestAuditGateIncomplete(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(incompleteManifest), 0o644))
	db, err := state.Open(dir, state.Options{Operation: "apply", Version: "test"})
	must(t, err)
	_, err = db.Commit(state.Commit{Matrix: map[string][]string{"a1": {"h__search"}}})
	must(t, err)
	must(t, db.Close())
	code, stdout, stderr := run(t, "", "-chdir="+dir, "audit", "-against=state", "-format=json")
	var doc struct {
		Gate struct {
			Granted []audit.Access `json:"granted"`
			Revoked []audit.Access `json:"revoked"`
			Reasons []string       `json:"reasons"`
		} `json:"gate"`
	}
	if code != ExitError || json.Unmarshal([]byte(stdout), &doc) != nil || !strings.Contains(stderr, "the audit is incomplete") {
		t.Fatalf("got: exit %d\n%s\n%s\nwant: exit 1, an incomplete JSON report", code, stdout, stderr)
	}
	if len(doc.Gate.Granted) != 0 || len(doc.Gate.Revoked) != 0 || !slices.Contains(doc.Gate.Reasons, `the audit is incomplete: the tools of "h" could not be listed, so they are left out of the comparison`) {
		t.Errorf("gate\ngot:  %+v\nwant: nothing granted or revoked, and the reason", doc.Gate)
	}
}

// TestAuditFailedReport: when the workspace does not load, audit -out
// replaces a previous report with one that says the audit failed and
// carries the located errors, in every format, so that a CI step that
// uploads it afterwards never uploads a stale report; standard output
// gets the same report without -out.
func TestAuditFailedReport(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(strings.Replace(incompleteManifest, `  version      = "0.1.0"`, "  version      = \"0.1.0\"\n  bogus        = 1", 1)), 0o644))
	for _, format := range auditFormats {
		must(t, os.WriteFile(filepath.Join(dir, "report."+format), []byte("stale report"), 0o644))
		report, _ := auditToFile(t, dir, format, "Unsupported argument", "Audit failed", "agent.acl:3", "Unsupported argument")
		if strings.Contains(report, "stale report") {
			t.Errorf("%s: the previous report is still there", format)
		}
		if code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-no-color", "-format="+format); code != ExitError || !strings.Contains(stdout, "Unsupported argument") {
			t.Errorf("%s on standard output got: exit %d\n%s\nwant: exit 1, the failed report", format, code, stdout)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1+len(auditFormats) {
		t.Errorf("files in the workspace: %v\nwant: the manifest and one report a format, no temporary file", entries)
	}

	// A state that cannot be read fails the audit the same way.
	dir = copyTree(t, quickstart)
	must(t, os.MkdirAll(filepath.Join(dir, ".agentform"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, ".agentform", "state.db"), []byte("not a database"), 0o644))
	code, stdout, _ := run(t, "", "-chdir="+dir, "audit", "-format=json")
	if code != ExitError || !strings.Contains(stdout, `"failed": true`) || !strings.Contains(stdout, "Cannot read the state") {
		t.Errorf("unreadable state got: exit %d\n%s\nwant: exit 1, a failed report naming the state", code, stdout)
	}
}

// TestAuditRefusesIncompleteBaseline: a report of an audit that did not
// complete cannot be a baseline: its matrix lacks what it could not plan.
func TestAuditRefusesIncompleteBaseline(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(incompleteManifest), 0o644))
	base := filepath.Join(dir, "base.json")
	if code, _, _ := run(t, "", "-chdir="+dir, "audit", "-format=json", "-out="+base); code != ExitError {
		t.Fatalf("incomplete baseline: exit %d, want 1", code)
	}
	code, _, stderr := run(t, "", "-chdir="+dir, "audit", "-baseline="+base)
	if code != exitUsage || !strings.Contains(stderr, "is the report of an incomplete audit") {
		t.Errorf("got: exit %d\n%s\nwant: exit 2, the baseline refused as incomplete", code, stderr)
	}
}

// TestAuditUsageErrorReplacesReport: an audit refused for its options (a
// baseline that cannot be read, an unknown -fail-on) exits 2 and, given
// -out in a known format, replaces the previous report there with one
// that says the audit failed and why, as a workspace that does not load
// does: a CI step that uploads the report never uploads a stale one.
func TestAuditUsageErrorReplacesReport(t *testing.T) {
	dir := copyTree(t, quickstart)
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-baseline=" + filepath.Join(dir, "missing.json")}, "reading the baseline"},
		{[]string{"-fail-on=sometimes"}, "-fail-on must be error, warning, note or none"},
	} {
		for _, format := range auditFormats {
			out := filepath.Join(dir, "report."+format)
			must(t, os.WriteFile(out, []byte("stale report"), 0o644))
			code, _, stderr := run(t, "", append([]string{"-chdir=" + dir, "audit", "-no-color", "-format=" + format, "-out=" + out}, tc.flags...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("%v %s: exit %d\n%s\nwant: exit 2, %q", tc.flags, format, code, stderr, tc.want)
			}
			b, err := os.ReadFile(out)
			must(t, err)
			if strings.Contains(string(b), "stale report") || !strings.Contains(string(b), "Audit not run") || !strings.Contains(string(b), tc.want) {
				t.Errorf("%v %s: the report at -out is\n%s\nwant a failed report saying why", tc.flags, format, b)
			}
		}
	}
	// Nor inside the source of a tool or skill, which the report would
	// change: the usage error says so and writes nothing there.
	for _, rel := range []string{"tools/word_count/r.json", "skills/research/r.json"} {
		code, _, stderr := run(t, "", "-chdir="+dir, "audit", "-format=json", "-fail-on=sometimes", "-out="+rel)
		if code != exitUsage || !strings.Contains(stderr, "-fail-on must be") || !strings.Contains(stderr, "No report written: -out="+rel+" would be a file of the source of") {
			t.Errorf("-out=%s: exit %d\n%s\nwant: exit 2, the usage error and no report", rel, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, rel)); !os.IsNotExist(err) {
			t.Errorf("-out=%s: the usage error wrote a report into the source: %v", rel, err)
		}
	}
	// A directory is refused before the workspace is planned.
	if code, _, stderr := run(t, "", "-chdir="+dir, "audit", "-out=tools"); code != exitUsage || !strings.Contains(stderr, "Error: -out=tools is a directory; name a file, like -out="+filepath.Join("tools", "audit.txt")+".") {
		t.Errorf("-out=tools: exit %d\n%s\nwant: exit 2, a directory", code, stderr)
	}
	// Without a format it could be written in, -out is left alone.
	out := filepath.Join(dir, "report.txt")
	must(t, os.WriteFile(out, []byte("stale report"), 0o644))
	if code, _, _ := run(t, "", "-chdir="+dir, "audit", "-format=yaml", "-out="+out); code != exitUsage {
		t.Errorf("-format=yaml: exit %d, want 2", code)
	}
	if b, _ := os.ReadFile(out); string(b) != "stale report" {
		t.Errorf("-format=yaml wrote %q", b)
	}
}

// TestAuditOutKeepsWorkspaceFiles: audit -out (and plan -out) naming one
// of the workspace's own files — the manifest, the lockfile (there or
// not yet), a new *.acl the workspace would load, anything under
// .agentform/ — is refused before anything is written (a usage error
// writes a "not run" report to -out), and the file is left as it was.
func TestAuditOutKeepsWorkspaceFiles(t *testing.T) {
	dir := copyTree(t, quickstart)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	for _, tc := range []struct{ out, want string }{
		{"agent.acl", "Error: -out=agent.acl names the manifest file agent.acl;"},
		{"./agentform.lock.hcl", "Error: -out=./agentform.lock.hcl names the lockfile agentform.lock.hcl;"},
		{"report.acl", "Error: -out=report.acl names a manifest file (report.acl: the workspace would load it);"},
		{"report.acl.json", "Error: -out=report.acl.json names a manifest file (report.acl.json: the workspace would load it);"},
		{".agentform/state.db", "Error: -out=.agentform/state.db names a file of agentform's own in .agentform/"},
		{".agentform/cache/report.txt", "Error: -out=.agentform/cache/report.txt names a file of agentform's own in .agentform/"},
	} {
		path := filepath.Join(dir, tc.out)
		before, _ := os.ReadFile(path)
		for _, args := range [][]string{{"audit", "-out=" + tc.out}, {"audit", "-out=" + tc.out, "-format=pdf"}, {"plan", "-out=" + tc.out}} {
			code, _, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
			want := map[string]int{"audit": exitUsage, "plan": ExitError}[args[0]]
			if code != want || !strings.Contains(stderr, strings.TrimSuffix(tc.want, ";")) {
				t.Errorf("%s\ngot:  exit %d\n%s\nwant: exit %d and %q", args, code, stderr, want, tc.want)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("%s replaced %s:\n%.200s", args, tc.out, after)
			}
		}
	}
	// The lockfile's name while there is none yet.
	must(t, os.Remove(filepath.Join(dir, "agentform.lock.hcl")))
	if code, _, stderr := run(t, "", "-chdir="+dir, "audit", "-out=agentform.lock.hcl"); code != exitUsage || !strings.Contains(stderr, "names the lockfile") {
		t.Errorf("audit -out=agentform.lock.hcl without a lockfile: exit %d\n%s\nwant: refused", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "agentform.lock.hcl")); !os.IsNotExist(err) {
		t.Errorf("the refused audit wrote the lockfile: %v", err)
	}
}

// TestAuditJSONErrorRange: an error of the JSON report that is about no
// place in the files still has its range key, null.
func TestAuditJSONErrorRange(t *testing.T) {
	dir := copyTree(t, quickstart)
	out := filepath.Join(dir, "report.json")
	if code, _, _ := run(t, "", "-chdir="+dir, "audit", "-format=json", "-fail-on=bad", "-out="+out); code != exitUsage {
		t.Fatalf("audit -fail-on=bad: exit %d, want %d", code, exitUsage)
	}
	var doc struct {
		Incomplete struct {
			Errors []map[string]json.RawMessage `json:"errors"`
		} `json:"incomplete"`
	}
	b, err := os.ReadFile(out)
	must(t, err)
	must(t, json.Unmarshal(b, &doc))
	if len(doc.Incomplete.Errors) == 0 {
		t.Fatalf("report:\n%s\nwant: the error listed", b)
	}
	for _, e := range doc.Incomplete.Errors {
		if r, ok := e["range"]; !ok || string(r) != "null" {
			t.Errorf("error %s: range %q (present %v), want null", e["summary"], r, ok)
		}
	}
}
