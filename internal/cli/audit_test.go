package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, tc.args...)...)
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
