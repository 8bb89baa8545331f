package planner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
)

func planDir(t testing.TB, dir string, opts Options) *Plan {
	t.Helper()
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatalf("loading %s: %v", dir, diags)
	}
	return New(context.Background(), cfg, opts)
}

func toolByName(p *Plan, name string) (RegisteredTool, bool) {
	for _, t := range p.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return RegisteredTool{}, false
}

func cell(t *testing.T, p *Plan, agent, tool string) capability.Cell {
	t.Helper()
	m := p.Matrix()
	ai, ok := m.AgentIndex(agent)
	if !ok {
		t.Fatalf("no agent %q", agent)
	}
	ti, ok := m.ToolIndex(tool)
	if !ok {
		t.Fatalf("no matrix column %q", tool)
	}
	return m.Cell(ai, ti)
}

func TestRegisteredTools(t *testing.T) {
	p := planDir(t, "testdata/matrix", Options{})
	var names []string
	for _, rt := range p.Tools {
		names = append(names, rt.Name)
	}
	want := []string{
		"a2a_planner_cancel_task", "a2a_planner_get_task", "a2a_planner_send", "a2a_planner_stream",
		"adder", "describe_skill", "get_skill", "github", "list_skills", "maybe", "old",
		"read_skill_file", "run_skill_script", "shell",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("got:  %v\nwant: %v", names, want)
	}
	for _, tc := range []struct {
		name                              string
		enabled, runtimeEnabled, resolved bool
		requires                          []string
		block, kind                       string
	}{
		{"adder", true, false, true, []string{"math::add"}, "tool.adder", "javascript"},
		{"old", false, false, true, []string{"shell::exec"}, "tool.old", "bash"},
		{"maybe", true, true, true, []string{}, "tool.maybe", "python"},
		{"github", true, false, false, []string{"github"}, "tool.github", "mcp"},
		{"a2a_planner_send", true, false, true, []string{"a2a::planner"}, "tool.planner", "a2a"},
		{"run_skill_script", true, false, true, []string{"skills::execute"}, "skills", "skill"},
		{"list_skills", true, false, true, []string{"skills"}, "skills", "skill"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, _ := toolByName(p, tc.name)
			if rt.Enabled != tc.enabled || rt.RuntimeEnabled != tc.runtimeEnabled || rt.Resolved != tc.resolved ||
				!slices.Equal(rt.Requires, tc.requires) || rt.Block != tc.block || rt.Kind != tc.kind {
				t.Errorf("got:  %+v\nwant: %+v", rt, tc)
			}
		})
	}
	// Disabled tools are not matrix columns.
	if _, ok := p.Matrix().ToolIndex("old"); ok {
		t.Errorf("got: disabled tool \"old\" in the matrix\nwant: not a column")
	}
}

func TestMatrixAndDenials(t *testing.T) {
	p := planDir(t, "testdata/matrix", Options{})
	if !p.Applyable {
		t.Fatalf("plan not applyable: %v", p.Diagnostics)
	}
	c := cell(t, p, "assistant", "adder")
	if !c.Allowed || c.Reason != "granted" || c.Matched["math::add"] != "math" {
		t.Errorf("assistant→adder got: %+v\nwant: allowed, math::add matched by math", c)
	}
	c = cell(t, p, "assistant", "maybe")
	if !c.Allowed || c.Reason != "untagged" {
		t.Errorf("assistant→maybe got: %+v\nwant: allowed, untagged", c)
	}
	c = cell(t, p, "assistant", "shell")
	if c.Allowed || !slices.Equal(c.Missing, []string{"shell::exec"}) || c.OverrideReachable {
		t.Errorf("assistant→shell got: %+v\nwant: denied, missing shell::exec, not reachable (locked)", c)
	}
	c = cell(t, p, "ops", "adder")
	if c.Allowed || !c.OverrideReachable {
		t.Errorf("ops→adder got: %+v\nwant: denied but override-reachable (extensible)", c)
	}
	// ops' capabilities come from runtime() and use the default.
	ops := p.Agents[1]
	if ops.Name != "ops" || !ops.RuntimeDependent || !slices.Equal(ops.Holds, []string{"a2a::planner", "shell::exec"}) || ops.Policy != "extensible" {
		t.Errorf("got: %+v\nwant: ops, runtime-dependent, holds the default", ops)
	}
	if !hasDiag(p.Diagnostics, hcl.DiagWarning, "Capabilities known at runtime") {
		t.Errorf("got: %v\nwant: a warning about runtime capabilities", p.Diagnostics)
	}
	denials := p.Denials()
	if len(denials) != 13 || p.DenialCount() != 13 {
		t.Errorf("got: %d denials (count %d)\nwant: 13", len(denials), p.DenialCount())
	}
	first := denials[0]
	if first.Agent != "assistant" || first.Tool != "a2a_planner_cancel_task" || !slices.Equal(first.Missing, []string{"a2a::planner"}) {
		t.Errorf("got: %+v\nwant: the first denial sorted by agent then tool", first)
	}
	if len(p.Checks) != 1 || p.Checks[0].Status != CheckPass {
		t.Errorf("got: %+v\nwant: one passing check", p.Checks)
	}
	if len(p.ResourceChanges) != 9 || p.ResourceChanges[0].Address != "agent.assistant" || p.ResourceChanges[0].Actions[0] != ActionCreate {
		t.Errorf("got: %+v\nwant: 9 creates, sorted by address", p.ResourceChanges)
	}
	if !p.HasChanges() {
		t.Errorf("got: no changes\nwant: changes (nothing applied yet)")
	}
}

func TestCapabilityOverride(t *testing.T) {
	for _, tc := range []struct {
		override    string
		agent, tool string
		allowed     bool
		ignoredWarn bool
	}{
		{"extend:math", "ops", "adder", true, true},
		{"replace:math", "ops", "shell", false, true},
		{"replace:math", "ops", "adder", true, true},
		{"extend:shell", "assistant", "shell", false, true},
	} {
		t.Run(tc.override+"/"+tc.agent+"/"+tc.tool, func(t *testing.T) {
			o, err := capability.ParseOverride(tc.override)
			if err != nil {
				t.Fatal(err)
			}
			p := planDir(t, "testdata/matrix", Options{Override: &o})
			if got := cell(t, p, tc.agent, tc.tool).Allowed; got != tc.allowed {
				t.Errorf("got: allowed=%v\nwant: %v", got, tc.allowed)
			}
			// The locked assistant ignores every override, with a warning.
			if got := hasDiag(p.Diagnostics, hcl.DiagWarning, "Capability override ignored"); got != tc.ignoredWarn {
				t.Errorf("got: ignored-warning=%v\nwant: %v", got, tc.ignoredWarn)
			}
			// The assistant has no capability_policy line: the warning
			// points at its block.
			for _, d := range p.Diagnostics {
				if d.Summary == "Capability override ignored" && (d.Subject == nil || d.Subject.Filename == "" || d.Subject.Start.Line != 1) {
					t.Errorf("got: %q at %v\nwant: at the assistant block, line 1", d.Summary, d.Subject)
				}
			}
		})
	}
}

func TestFailingAndBrokenChecks(t *testing.T) {
	p := planDir(t, "testdata/failing_check", Options{})
	if p.Applyable {
		t.Fatal("got: applyable\nwant: a failed check makes the plan not applyable")
	}
	if c := p.Checks[0]; c.Name != "assistant_never_shells" || c.Status != CheckFail || c.Message != "assistant must never reach the shell" ||
		c.Range == nil || c.Range.Start.Line != 21 || len(c.Diagnostics) != 1 || c.Diagnostics[0].Summary != "Check failed" {
		t.Errorf("got:  %+v\nwant: assistant_never_shells failed at line 21 with its message and diagnostic", c)
	}
	if c := p.Checks[1]; c.Status != CheckError || c.Range == nil || c.Range.Start.Line != 28 || !c.Diagnostics.HasErrors() {
		t.Errorf("got: %+v\nwant: an error for the unknown tool at line 28, with its diagnostic", c)
	}
	var failed, unknown *hcl.Diagnostic
	for _, d := range p.Diagnostics {
		switch {
		case d.Summary == "Check failed":
			failed = d
		case strings.Contains(d.Detail, `no registered tool named "shel"`):
			unknown = d
		}
	}
	if failed == nil || failed.Subject.Start.Line != 21 || !strings.Contains(failed.Detail, "assistant must never reach the shell") {
		t.Errorf("got: %v\nwant: Check failed at agent.acl:21 with the error_message", failed)
	}
	if unknown == nil || unknown.Subject == nil || unknown.Subject.Start.Line != 28 {
		t.Errorf("got: %v\nwant: a located error naming the unknown tool at line 28", unknown)
	}
}

const duplicateAgent = `
agent "a" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`

// TestDuplicateRegisteredName: a name an mcp block registers is the
// plan's to check, unresolved (one column named after the block) or
// resolved (<block>__<served>).
func TestDuplicateRegisteredName(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		ws   *resolve.Workspace
		line int
	}{
		"unresolved mcp block": {src: `
tool "list_skills" {
  kind      = "mcp"
  transport = "http"
  url       = "http://127.0.0.1:1/mcp"
}
skill "s" {
  description = "d"
  content     = "c"
}
`, line: 18},
		"served tool": {src: `
tool "m" {
  kind      = "mcp"
  transport = "http"
  url       = "http://127.0.0.1:1/mcp"
}
tool "m__t" {
  kind     = "bash"
  commands = ["ls"]
}
`, ws: &resolve.Workspace{Tools: map[string]*resolve.Resolved{"m": {Tools: []resolve.Tool{{Name: "m__t", Served: "t"}}}}}, line: 18},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(duplicateAgent + tc.src)})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			p := New(context.Background(), cfg, Options{Resolution: tc.ws})
			var dups []*hcl.Diagnostic
			for _, d := range p.Diagnostics {
				if d.Summary == "Duplicate registered tool" {
					dups = append(dups, d)
				}
			}
			if p.Applyable || len(dups) != 1 || dups[0].Severity != hcl.DiagError || dups[0].Subject == nil || dups[0].Subject.Start.Line != tc.line {
				t.Fatalf("got: %v\nwant: one Duplicate registered tool at line %d", p.Diagnostics, tc.line)
			}
		})
	}
}

// TestStaticDuplicatesReportedOnce: names that follow from the manifest
// alone are manifest.Load's to report; a plan of such a configuration
// does not report them a second time.
func TestStaticDuplicatesReportedOnce(t *testing.T) {
	cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(duplicateAgent + `
tool "list_skills" {
  kind     = "bash"
  commands = ["ls"]
}
tool "a2a_r_send" {
  kind     = "bash"
  commands = ["ls"]
}
tool "r" {
  kind = "a2a"
  url  = "http://127.0.0.1:1"
}
skill "s" {
  description = "d"
  content     = "c"
}
`)})
	count := func(diags hcl.Diagnostics) int {
		n := 0
		for _, d := range diags {
			if d.Summary == "Duplicate registered tool" {
				n++
			}
		}
		return n
	}
	if got := count(diags); got != 2 {
		t.Fatalf("got: %d from loading\n%v\nwant: 2", got, diags)
	}
	if got := count(New(context.Background(), cfg, Options{}).Diagnostics); got != 0 {
		t.Errorf("got: %d more from planning\nwant: none", got)
	}
}

// TestUnknownAgentWordingAgrees: an agent name only the matrix gives (here
// a tool name reachable returns) is the plan's to report, in the words
// manifest.Load reports one written out.
func TestUnknownAgentWordingAgrees(t *testing.T) {
	const tools = `
tool "shell" {
  kind     = "bash"
  commands = ["ls"]
}
check "c" {
  assert {
    condition     = %s
    error_message = "x"
  }
}
`
	cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(duplicateAgent + fmt.Sprintf(tools, `can_call(reachable("a")[0], "shell")`))})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var planned *hcl.Diagnostic
	for _, d := range New(context.Background(), cfg, Options{}).Diagnostics {
		if d.Severity == hcl.DiagError {
			planned = d
		}
	}
	_, diags = manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(duplicateAgent + fmt.Sprintf(tools, `can_call("shell", "shell")`))})
	if len(diags.Errs()) != 1 || planned == nil {
		t.Fatalf("got: %v from loading, %v from planning\nwant: one error each", diags, planned)
	}
	loaded := diags.Errs()[0].(*hcl.Diagnostic)
	if planned.Summary != loaded.Summary || planned.Detail != loaded.Detail || !strings.Contains(loaded.Detail, `no agent named "shell"`) {
		t.Errorf("got: %s: %s (plan) and %s: %s (load)\nwant: the same error", planned.Summary, planned.Detail, loaded.Summary, loaded.Detail)
	}
}

// TestTagRulesAgree holds the loader's tag syntax and the capability
// engine's to the same answers.
func TestTagRulesAgree(t *testing.T) {
	for _, tag := range []string{
		"", " ", "math", "math::add", "math::add::fast", "math::", "::add", "a::::b", "a:::b", "math:",
		":math", " math", "math ", "math:: add", "*", "math::*", "a::b::c::d", "a:b", "ü::ß",
		"x\nPlan:", "x\x1b[8m", "shell\u200b", "fs::\u202edaer", "fs::\xffread", "net::raw socket",
		"fs::re\ufe0fad", "fs::read\ufe0f", "fs::re\u180bad", "fs::re\u17b4ad", "ja::\u65e5\u200d\u672c",
		"ru::\u0436\u200c\u0436", "x::a\u0308\u200d\u0308b", "ml::\u0d28\u0d4d\u200d", "hi::\u0915\u094d\u200c\u0937",
		"flag::\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f", "flag::\U0001f3f4\U000e0067",
		"ar::\u0600\u0661", "key::1\ufe0f\u20e3", "flag::\U0001f3f3\ufe0f\u200d\U0001f308",
	} {
		_, capErr := capability.ValidateTag(tag)
		manErr := manifest.ValidateTag(tag)
		if (capErr == nil) != (manErr == nil) {
			t.Errorf("tag %q: capability says %v, manifest says %v", tag, capErr, manErr)
		}
	}
}

func hasDiag(diags hcl.Diagnostics, sev hcl.DiagnosticSeverity, summary string) bool {
	for _, d := range diags {
		if d.Severity == sev && d.Summary == summary {
			return true
		}
	}
	return false
}

// writeWorkspace generates a workspace of n bash tools and m agents with
// realistic tags, for benchmarks.
func writeWorkspace(tb testing.TB, n, m int) string {
	tb.Helper()
	dir := tb.TempDir()
	var b strings.Builder
	for i := 0; i < m; i++ {
		fmt.Fprintf(&b, "agent \"agent%d\" {\n  capabilities = [\"ns%d\", \"ns%d::op%d\", \"skills\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n", i, i%50, (i+7)%50, i%40)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "tool \"tool%d\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"ns%d::op%d\"]\n}\n", i, i%50, i%40)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// BenchmarkPlan loads and plans a generated 1,000-tool, 10-agent
// workspace end to end.
func BenchmarkPlan(b *testing.B) {
	dir := writeWorkspace(b, 1000, 10)
	b.ReportAllocs()
	for b.Loop() {
		cfg, diags := manifest.Load(dir)
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		p := New(context.Background(), cfg, Options{})
		if !p.Applyable {
			b.Fatal(p.Diagnostics)
		}
	}
}

// TestHoldsMalformedTag: holds() refuses a malformed tag with an error at
// the check, instead of reporting it held by no one, which would make a
// check like !holds("a", "shell ") pass whatever the agent holds. (A tag
// written out in the call is refused when the manifest loads:
// testdata/invalid/check_holds_malformed_tag in internal/manifest.)
func TestHoldsMalformedTag(t *testing.T) {
	for _, tc := range []struct {
		tag    string
		status string
	}{
		{`"shell "`, CheckError},
		{`""`, CheckError},
		{`"net::"`, CheckError},
		{`"::http"`, CheckError},
		{`"shell::"`, CheckError},
		{`"a:::b"`, CheckError},
		{`"shell::exec"`, CheckFail}, // held: "shell" grants it
		{`"net"`, CheckPass},
	} {
		t.Run(tc.tag, func(t *testing.T) {
			// Through a local, so that it is the plan, not the load,
			// that evaluates the tag (the load refuses one written out).
			p := planSrc(t, stateBase+`
locals {
  tag = `+tc.tag+`
}

check "c" {
  assert {
    condition     = !holds("a", locals.tag)
    error_message = "a holds it"
  }
}
`, nil)
			if len(p.Checks) != 1 || p.Checks[0].Status != tc.status {
				t.Fatalf("got: %+v\nwant: one check, %s", p.Checks, tc.status)
			}
			if tc.status != CheckError {
				return
			}
			var d *hcl.Diagnostic
			for _, x := range p.Diagnostics {
				if x.Severity == hcl.DiagError && strings.Contains(x.Detail, "invalid capability tag") {
					d = x
				}
			}
			if d == nil || d.Subject == nil || d.Subject.Start.Line != strings.Count(stateBase, "\n")+8 {
				t.Errorf("got: %v\nwant: an invalid capability tag error at the condition's line", p.Diagnostics)
			}
		})
	}
}

// TestRuntimeCapabilitiesWarning: the warning for capabilities known only
// at runtime says why the plan uses none: no default, or a secret's
// default, which plans never use (it is not "no default").
func TestRuntimeCapabilitiesWarning(t *testing.T) {
	for _, tc := range []struct{ caps, want string }{
		{`runtime("CAPS")`, "this plan uses no capabilities (the reference has no default)"},
		{`secret(runtime("CAPS", ["shell"]))`, "this plan uses no capabilities (a secret's default is not used in plans)"},
		{`runtime("CAPS", ["shell"])`, "this plan uses its default"},
	} {
		p := planSrc(t, strings.Replace(stateBase, `capabilities = ["shell"]`, "capabilities = "+tc.caps, 1), nil)
		var got string
		for _, d := range p.Diagnostics {
			if d.Summary == "Capabilities known at runtime" {
				got = d.Detail
			}
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q\nwant: %q", tc.caps, got, tc.want)
		}
	}
}

// TestCheckOverRuntimeCapabilities: a check that asks about an agent whose
// capabilities are only known at runtime is evaluated with what the plan
// assumes, and says so in a warning at its condition: a passing security
// assertion over such an agent proves nothing about the one that starts.
func TestCheckOverRuntimeCapabilities(t *testing.T) {
	check := `
check "never_shell" {
  assert {
    condition     = !holds("a", "shell")
    error_message = "a holds shell"
  }
}
`
	for _, tc := range []struct {
		caps string
		warn bool
	}{
		{`runtime("CAPS")`, true},
		{`["net"]`, false},
	} {
		src := strings.Replace(stateBase, `capabilities = ["shell"]`, "capabilities = "+tc.caps, 1) + check
		p := planSrc(t, src, nil)
		if len(p.Checks) != 1 || p.Checks[0].Status != CheckPass {
			t.Fatalf("%s: checks %+v, want one pass", tc.caps, p.Checks)
		}
		var got *hcl.Diagnostic
		for _, d := range p.Diagnostics {
			if d.Summary == "Check depends on runtime capabilities" {
				got = d
			}
		}
		if (got != nil) != tc.warn {
			t.Fatalf("%s: warning %v, want %v", tc.caps, got, tc.warn)
		}
		if got != nil && (got.Severity != hcl.DiagWarning || got.Subject == nil || got.Subject.Start.Line != strings.Count(strings.Replace(stateBase, `capabilities = ["shell"]`, "capabilities = "+tc.caps, 1), "\n")+4 || !strings.Contains(got.Detail, `agent "a"`)) {
			t.Errorf("%s: warning %+v, want one at the condition naming agent \"a\"", tc.caps, got)
		}
	}
}

// TestHoldsStarTagComputed: a "*" tag that reaches holds() through locals
// (the manifest warns only about one written out) is warned about at the
// check's condition.
func TestHoldsStarTagComputed(t *testing.T) {
	p := planSrc(t, stateBase+`
locals {
  tag = "shell::*"
}

check "c" {
  assert {
    condition     = !holds("a", locals.tag)
    error_message = "a holds it"
  }
}
`, nil)
	n := 0
	for _, d := range p.Diagnostics {
		if d.Summary == `"*" is not a wildcard` && strings.Contains(d.Detail, `holds(agent, "shell::*")`) && d.Subject != nil && d.Subject.Start.Line == strings.Count(stateBase, "\n")+8 {
			n++
		}
	}
	if n != 1 {
		t.Errorf("got %d warnings in %v\nwant: one at the condition", n, p.Diagnostics)
	}
}

// TestContainsReachableNames: contains over reachable's list with a NAME
// no tool is registered by is an error located at the name, as can_call's
// is; a typo must not make a safety check pass. Lists built from
// reachable's with other elements are not checked: they may hold
// anything.
func TestContainsReachableNames(t *testing.T) {
	const head = `
agent "b" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
tool "shell" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
}
tool "off" {
  kind     = "bash"
  commands = ["ls"]
  enabled  = false
}
`
	for _, tc := range []struct {
		condition string
		status    string
		detail    string
	}{
		{`!contains(reachable("b"), "shel")`, CheckError, `there is no registered tool named "shel"`},
		{`contains(reachable("b"), "shell")`, CheckPass, ""},
		{`!contains(reachable("b"), "off")`, CheckPass, ""},
		{`length(reachable("b")) == 1`, CheckPass, ""},
		{`length([for t in reachable("b") : t if t == "shell"]) == 1`, CheckPass, ""},
		{`!contains(["shel"], "shell")`, CheckPass, ""},
		// Written as contains(reachable(...), NAME), in parentheses too, a
		// name no tool has is an error; in a list taken from reachable's
		// any other way, a warning (TestContainsTakenFromReachable); in a
		// list built from it with other elements, nothing.
		{`!contains((reachable("b")), "shel")`, CheckError, `there is no registered tool named "shel"`},
		{`!contains(true ? reachable("b") : [], "shel")`, CheckPass, ""},
		{`length([for n in ["shel"] : n if contains(reachable("b"), n)]) == 0`, CheckPass, ""},
		{`!contains([for t in reachable("b") : t], "shel")`, CheckPass, ""},
		{`!contains([for t in reachable("b") : t if can_call("b", t)], "shel")`, CheckPass, ""},
		{`!contains([for t in reachable("b") : can_call("b", t) ? "ok" : "leak"], "leak")`, CheckPass, ""},
		{`contains([length(reachable("b")) > 0 ? "yes" : "no"], "yes")`, CheckPass, ""},
		{`contains([for t in reachable("b") : "${t}_x"], "shell_x")`, CheckPass, ""},
		{`!contains(reachable("b"), "shell")`, CheckFail, ""},
	} {
		t.Run(tc.condition, func(t *testing.T) {
			src := head + "check \"c\" {\n  assert {\n    condition     = " + tc.condition + "\n    error_message = \"b: ${length(reachable(\"b\"))}\"\n  }\n}\n"
			p := planSrc(t, src, nil)
			if len(p.Checks) != 1 {
				t.Fatalf("got: %+v\nwant: one check result", p.Checks)
			}
			c := p.Checks[0]
			if c.Status != tc.status {
				t.Fatalf("got: %s (%s)\nwant: %s", c.Status, c.Message, tc.status)
			}
			if c.Status == CheckFail && c.Message != "b: 1" {
				t.Errorf("got: message %q\nwant: \"b: 1\"", c.Message)
			}
			if tc.detail != "" {
				d := c.Diagnostics[0]
				if !strings.Contains(d.Detail, tc.detail) || d.Subject == nil || d.Subject.Start.Line != 24 || d.Subject.Start.Column < 45 {
					t.Errorf("got: %s at %v\nwant: %q located at the name on line 24", d.Detail, d.Subject, tc.detail)
				}
			}
		})
	}
}

// TestContainsReachableNamesJSON: in a check in JSON syntax, whose calls
// are not told apart, a name no tool has in reachable's list is a
// warning.
func TestContainsReachableNamesJSON(t *testing.T) {
	cfg, diags := manifest.LoadSources("", map[string][]byte{
		"agent.acl": []byte(`
agent "b" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
tool "shell" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
}
`),
		"checks.acl.json": []byte(`{"check": {"c": {"assert": [{"condition": "${!contains(reachable(\"b\"), \"shel\")}", "error_message": "b reaches shel"}]}}}`),
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{})
	p := New(context.Background(), cfg, Options{Resolution: ws})
	if len(p.Checks) != 1 || p.Checks[0].Status != CheckPass || !hasDiag(p.Diagnostics, hcl.DiagWarning, "Check looks for a name no tool has") {
		t.Errorf("got: %+v %v\nwant: a warning for the name no tool has (JSON syntax has no call to tell apart)", p.Checks, p.Diagnostics)
	}
}

// TestHoldsBadTagJSON: holds() with a malformed tag in a check written in
// JSON syntax (which the manifest cannot check before the plan) is an
// error saying what a tag is, in one sentence each.
func TestHoldsBadTagJSON(t *testing.T) {
	cfg, diags := manifest.LoadSources("", map[string][]byte{
		"agent.acl": []byte(`
agent "b" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`),
		"checks.acl.json": []byte(`{"check": {"c": {"assert": [{"condition": "${!holds(\"b\", \"shell \")}", "error_message": "b holds shell"}]}}}`),
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{})
	p := New(context.Background(), cfg, Options{Resolution: ws})
	var detail string
	for _, d := range p.Diagnostics {
		if d.Severity == hcl.DiagError {
			detail = d.Detail
		}
	}
	if !strings.Contains(detail, "a held tag grants every tag it prefixes") || strings.Contains(detail, "..") {
		t.Errorf("error detail: %q, want what a tag is, ending in one full stop", detail)
	}
}

// TestContainsTakenFromReachable: a name no tool has, looked for in a list
// filtered from reachable's, is a warning, not an error: the list may be a
// sentinel check's, whose constants are tool names exactly when it holds;
// a null element leaves the list alone.
func TestContainsTakenFromReachable(t *testing.T) {
	const src = `
agent "b" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
tool "git" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
}
tool "git_push" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
}
locals {
  denied = "DENIED"
}
`
	for _, tc := range []struct {
		condition string
		status    string
		warn      bool
	}{
		// A sentinel the check writes into its list itself: no warning,
		// whether the filter drops a tool or not.
		{`!contains([for t in reachable("b") : can_call("b", t) ? t : "DENIED" if t != "git"], "DENIED")`, CheckPass, false},
		{`!contains([for t in reachable("b") : can_call("b", t) ? t : "DENIED"], "DENIED")`, CheckPass, false},
		{`!contains([for t in reachable("b") : can_call("b", t) ? t : locals.denied], locals.denied)`, CheckPass, false},
		{`!contains([for t in reachable("b") : t if can_call("b", t)], "gti")`, CheckPass, true},
		// A typo written twice is no sentinel: the name is not in the
		// lists' own expressions.
		{`!contains([for t in reachable("b") : t if can_call("b", t)], "gti") && !contains([for t in reachable("b") : t if t != "x"], "gti")`, CheckPass, true},
		{`!contains([for t in reachable("b") : t if t != "git"], "gitt")`, CheckPass, true},
		{`!contains([for t in reachable("b") : t == "git_push" ? "git" : t], "deploy")`, CheckPass, true},
		{`!contains([for t in reachable("b") : t == "git" ? null : t], "gti")`, CheckPass, true},
		{`!contains(reachable("b"), "gitt")`, CheckError, false},
	} {
		t.Run(tc.condition, func(t *testing.T) {
			p := planSrc(t, src+"check \"c\" {\n  assert {\n    condition     = "+tc.condition+"\n    error_message = \"x\"\n  }\n}\n", nil)
			if len(p.Checks) != 1 || p.Checks[0].Status != tc.status {
				t.Fatalf("got: %+v\nwant: %s", p.Checks, tc.status)
			}
			if got := hasDiag(p.Diagnostics, hcl.DiagWarning, "Check looks for a name no tool has"); got != tc.warn {
				t.Errorf("got: warning %v\nwant: %v (%v)", got, tc.warn, p.Diagnostics)
			}
		})
	}
}

// TestCheckToolOfUnresolvedServer: a check that names a tool of an mcp
// block whose server was not listed (and that no lockfile pins) is an
// error that says why the tool is not known, not that there is no such
// tool; a name no block could serve still gets the list of tools.
func TestCheckToolOfUnresolvedServer(t *testing.T) {
	const head = `
agent "b" {
  capabilities = ["srv"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
tool "srv" {
  kind         = "mcp"
  transport    = "stdio"
  command      = "/nonexistent/agentform-test-server"
  capabilities = ["srv"]
}
`
	for _, tc := range []struct{ condition, detail string }{
		{`can_call("b", "srv__search")`, `tool.srv did not resolve, so the tools it serves are not known and "srv__search" may be one of them`},
		{`contains(reachable("b"), "srv__search")`, `tool.srv did not resolve, so the tools it serves are not known and "srv__search" may be one of them`},
		{`can_call("b", "other__search")`, `there is no registered tool named "other__search" (tools: "srv")`},
	} {
		t.Run(tc.condition, func(t *testing.T) {
			src := head + "check \"c\" {\n  assert {\n    condition     = " + tc.condition + "\n    error_message = \"no\"\n  }\n}\n"
			p := planSrc(t, src, nil)
			if len(p.Checks) != 1 || p.Checks[0].Status != CheckError {
				t.Fatalf("got: %+v\nwant: one check in error", p.Checks)
			}
			if d := p.Checks[0].Diagnostics; len(d) == 0 || !strings.Contains(d[0].Detail, tc.detail) {
				t.Errorf("got: %v\nwant a detail with %q", d, tc.detail)
			}
		})
	}
}

// TestCheckErrorMessageThatDoesNotEvaluate: a failing check whose
// error_message does not evaluate (a list interpolated) reports why,
// rather than showing the part before the error as the message.
func TestCheckErrorMessageThatDoesNotEvaluate(t *testing.T) {
	cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(duplicateAgent + `
check "c" {
  assert {
    condition     = length(reachable("a")) > 0
    error_message = "a reaches ${reachable("a")}"
  }
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := New(context.Background(), cfg, Options{})
	if c := p.Checks[0]; c.Status != CheckFail || c.Message != `check "c" failed` {
		t.Errorf("got: %+v\nwant: failed with the default message, not %q", c, "a reaches ")
	}
	var found bool
	for _, d := range p.Diagnostics {
		if d.Severity == hcl.DiagError && d.Summary == "Invalid template interpolation value" && d.Subject != nil && d.Subject.Start.Line == 16 {
			found = true
		}
	}
	if !found {
		t.Errorf("got: %v\nwant: the error_message's own error, at line 16", p.Diagnostics)
	}
}

// TestCheckErrorMessageNull: a failing check whose error_message is null
// for this matrix (the manifest refuses one that is always null) reports
// it at the error_message, rather than leaving the check without a word.
func TestCheckErrorMessageNull(t *testing.T) {
	cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(duplicateAgent + `
check "c" {
  assert {
    condition     = length(reachable("a")) > 0
    error_message = length(reachable("a")) == 0 ? null : "a reaches a tool"
  }
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := New(context.Background(), cfg, Options{})
	if c := p.Checks[0]; c.Status != CheckFail || c.Message != `check "c" failed` {
		t.Errorf("got: %+v\nwant: failed with the default message", c)
	}
	var found bool
	for _, d := range p.Diagnostics {
		if d.Severity == hcl.DiagError && d.Summary == "Invalid error message" && d.Subject != nil && d.Subject.Start.Line == 16 &&
			strings.Contains(d.Detail, `The error_message of check "c" is null`) {
			found = true
		}
	}
	if !found {
		t.Errorf("got: %v\nwant: Invalid error message, at line 16", p.Diagnostics)
	}
}

// TestCheckReportsEveryAssert: a check evaluates every assert, as
// Terraform does: each failing one is reported at its condition, and
// the check's result is the first failure, with the diagnostics of all.
func TestCheckReportsEveryAssert(t *testing.T) {
	p := planSrc(t, duplicateAgent+`
tool "sh" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell"]
}

check "a_is_confined" {
  assert {
    condition     = !contains(reachable("a"), "sh")
    error_message = "a must not reach sh"
  }
  assert {
    condition     = true
    error_message = "never"
  }
  assert {
    condition     = length(reachable("a")) == 0
    error_message = "a must reach nothing"
  }
}
`, nil)
	c := p.Checks[0]
	if c.Status != CheckFail || c.Message != "a must not reach sh" || len(c.Diagnostics) != 2 {
		t.Fatalf("got:  %+v\nwant: failed with the first message and two diagnostics", c)
	}
	var lines []int
	for _, d := range p.Diagnostics {
		if d.Summary == "Check failed" {
			lines = append(lines, d.Subject.Start.Line)
		}
	}
	if want := []int{21, 29}; !slices.Equal(lines, want) {
		t.Errorf("Check failed at lines %v, want %v", lines, want)
	}
}
