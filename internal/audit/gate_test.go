package audit

import (
	"encoding/json"
	"encoding/xml"
	"slices"
	"strings"
	"testing"
)

// TestGateInSARIFAndJUnit: the formats without a gate section of their own
// report a failing "no new access" gate too: SARIF as one AF111 result per
// access granted since the baseline, located at the agent's capabilities,
// and JUnit as a failing AF111 case per agent; a passing gate is a
// passing case and no result; no gate, no AF111 at all.
func TestGateInSARIFAndJUnit(t *testing.T) {
	failing := sampleReport()
	failing.Gate.Granted = append(failing.Gate.Granted, Access{Agent: "triage", Tool: "search"}, Access{Agent: "assistant", Tool: "shell"})
	passing := sampleReport()
	passing.Gate = &Gate{Against: "state", Pass: true}
	none := sampleReport()
	none.Gate = nil

	type result struct {
		RuleID  string `json:"ruleId"`
		Level   string `json:"level"`
		Message struct{ Text string }
		Locs    []struct {
			Physical *struct {
				ArtifactLocation struct{ URI string }
				Region           struct{ StartLine int }
			} `json:"physicalLocation"`
			Logical []struct {
				FullyQualifiedName string `json:"fullyQualifiedName"`
			} `json:"logicalLocations"`
		} `json:"locations"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
	}
	sarif := func(r *Report) (declared bool, results []result) {
		t.Helper()
		var log struct {
			Runs []struct {
				Tool struct {
					Driver struct {
						Rules []struct{ ID string } `json:"rules"`
					} `json:"driver"`
				} `json:"tool"`
				Results []result `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(writeReport(t, r, FormatSARIF, sampleOptions()), &log); err != nil {
			t.Fatal(err)
		}
		for _, rule := range log.Runs[0].Tool.Driver.Rules {
			declared = declared || rule.ID == RuleNewAccess
		}
		for _, res := range log.Runs[0].Results {
			if res.RuleID == RuleNewAccess {
				results = append(results, res)
			}
		}
		return declared, results
	}
	type junitCase struct {
		Classname string `xml:"classname,attr"`
		Name      string `xml:"name,attr"`
		Failure   *struct {
			Text string `xml:",chardata"`
		} `xml:"failure"`
	}
	junit := func(r *Report) []junitCase {
		t.Helper()
		var doc struct {
			Suite struct {
				Cases []junitCase `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(writeReport(t, r, FormatJUnit, sampleOptions()), &doc); err != nil {
			t.Fatal(err)
		}
		var out []junitCase
		for _, c := range doc.Suite.Cases {
			if c.Classname == RuleNewAccess {
				out = append(out, c)
			}
		}
		return out
	}

	declared, results := sarif(failing)
	if !declared || len(results) != 3 {
		t.Fatalf("SARIF of a failing gate\ngot:  declared %v, %d AF111 results\nwant: declared, 3 results", declared, len(results))
	}
	first := results[0]
	if first.Level != "error" || !strings.Contains(first.Message.Text, `Agent "assistant" can call "fetch", which it could not call in baseline.json`) ||
		len(first.Locs) != 1 || first.Locs[0].Physical == nil || first.Locs[0].Physical.ArtifactLocation.URI != "agentform.hcl" ||
		first.Locs[0].Physical.Region.StartLine != 4 || len(first.Locs[0].Logical) != 1 || first.Locs[0].Logical[0].FullyQualifiedName != "agent.assistant" ||
		first.PartialFingerprints[sarifFingerprint] != Fingerprint(RuleNewAccess, "agent.assistant", "assistant", "fetch", "") {
		t.Errorf("first AF111 result\ngot:  %+v\nwant: an error for assistant → fetch at agentform.hcl:4 (the assistant's holds), fingerprinted by agent and tool", first)
	}
	if results[1].PartialFingerprints[sarifFingerprint] == first.PartialFingerprints[sarifFingerprint] {
		t.Errorf("two granted accesses share a fingerprint: %+v", results[:2])
	}
	cases := junit(failing)
	if len(cases) != 2 || cases[0].Name != "agent.assistant" || cases[0].Failure == nil || strings.Count(cases[0].Failure.Text, "[AF111]") != 2 ||
		cases[1].Name != "agent.triage" || cases[1].Failure == nil {
		t.Errorf("JUnit of a failing gate\ngot:  %+v\nwant: failing AF111 cases for agent.assistant (2 tools) and agent.triage", cases)
	}

	if declared, results := sarif(passing); !declared || len(results) != 0 {
		t.Errorf("SARIF of a passing gate\ngot:  declared %v, %d results\nwant: declared, none", declared, len(results))
	}
	if cases := junit(passing); len(cases) != 1 || cases[0].Name != "all targets" || cases[0].Failure != nil {
		t.Errorf("JUnit of a passing gate\ngot:  %+v\nwant: one passing AF111 case", cases)
	}

	if declared, results := sarif(none); declared || len(results) != 0 {
		t.Errorf("SARIF without a gate\ngot:  declared %v, %d results\nwant: no AF111", declared, len(results))
	}
	if cases := junit(none); len(cases) != 0 {
		t.Errorf("JUnit without a gate\ngot:  %+v\nwant: no AF111 case", cases)
	}
}

// TestNewAccessWaiver: a waiver of AF111 accepts nothing, and says why.
func TestNewAccessWaiver(t *testing.T) {
	src := `agent "a1" {
  capabilities = ["fs"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude"
  }
}
waiver "AF111" {
  target = "agent.a1"
  reason = "reviewed"
}
`
	unused := ruleFindingsOf(sourceReport(t, src).Findings, RuleUnusedWaiver)
	if len(unused) != 1 || !strings.Contains(unused[0].Message, "AF111, the no-new-access gate, cannot be waived") {
		t.Errorf("got:%s\nwant: one AF402 saying AF111 cannot be waived", describeRuleFindings(unused))
	}
}

// TestGateLeavesOutUnresolvedOnIncomplete: in an incomplete audit, an mcp
// block whose tools could not be listed is one placeholder column named
// after it; the gate neither grants it nor revokes the block's served
// tools the baseline records, and says so. A tool that is a column of
// another block now is compared as ever; a complete audit compares all.
func TestGateLeavesOutUnresolvedOnIncomplete(t *testing.T) {
	report := func(incomplete bool) *Report {
		r := newReport()
		r.Matrix = []MatrixRow{{Agent: "a", Cells: []Cell{
			{Tool: "m", Allowed: true}, {Tool: "m__other", Allowed: false}, {Tool: "sh", Allowed: true}, {Tool: "web", Allowed: true},
		}}}
		r.unresolved = []string{"m"}
		if incomplete {
			r.Incomplete = &Incomplete{Errors: []Diagnostic{{Summary: "Invalid MCP tool schema"}}}
		}
		return r
	}
	applied := map[string][]string{"a": {"m__t", "m__u", "m__other", "sh"}}

	r := report(true)
	CompareState(r, applied, nil, nil, nil)
	g := r.Gate
	wantGranted := []Access{{Agent: "a", Tool: "web"}}
	wantRevoked := []Access{{Agent: "a", Tool: "m__other"}}
	if !slices.Equal(g.Granted, wantGranted) || !slices.Equal(g.Revoked, wantRevoked) {
		t.Errorf("incomplete audit\ngot:  granted %v, revoked %v\nwant: granted %v, revoked %v", g.Granted, g.Revoked, wantGranted, wantRevoked)
	}
	if want := `the audit is incomplete: the tools of "m" could not be listed, so they are left out of the comparison`; !slices.Contains(g.Reasons, want) {
		t.Errorf("reasons\ngot:  %q\nwant: %q among them", g.Reasons, want)
	}
	for _, f := range gateFindings(r) {
		if f.Tool == "m" {
			t.Errorf("an AF111 result for the placeholder: %s", f.Message)
		}
	}

	r = report(false)
	CompareState(r, applied, nil, nil, nil)
	wantGranted = []Access{{Agent: "a", Tool: "m"}, {Agent: "a", Tool: "web"}}
	wantRevoked = []Access{{Agent: "a", Tool: "m__other"}, {Agent: "a", Tool: "m__t"}, {Agent: "a", Tool: "m__u"}}
	if !slices.Equal(r.Gate.Granted, wantGranted) || !slices.Equal(r.Gate.Revoked, wantRevoked) || len(r.Gate.Reasons) != 1 {
		t.Errorf("complete audit\ngot:  granted %v, revoked %v, reasons %q\nwant: granted %v, revoked %v, one reason", r.Gate.Granted, r.Gate.Revoked, r.Gate.Reasons, wantGranted, wantRevoked)
	}
}

// TestGateExtensibleSinceBaseline: an agent made extensible since the
// baseline can reach every tool it is denied with a session override, so
// each one it could not call then is access granted (marked by_override),
// against the state and against a baseline report alike; an agent that
// was extensible then, or a locked one, adds nothing.
func TestGateExtensibleSinceBaseline(t *testing.T) {
	report := func() *Report {
		r := newReport()
		r.Matrix = []MatrixRow{
			{Agent: "made", Policy: "extensible", Cells: []Cell{
				{Tool: "read", Allowed: true}, {Tool: "shell", OverrideReachable: true}, {Tool: "web", OverrideReachable: true},
			}},
			{Agent: "was", Policy: "extensible", Cells: []Cell{
				{Tool: "read", Allowed: true}, {Tool: "shell", OverrideReachable: true}, {Tool: "web", OverrideReachable: true},
			}},
			{Agent: "locked", Policy: "locked", Cells: []Cell{
				{Tool: "read", Allowed: true}, {Tool: "shell"}, {Tool: "web"},
			}},
		}
		return r
	}
	want := []Access{{Agent: "made", Tool: "shell", ByOverride: true}, {Agent: "made", Tool: "web", ByOverride: true}}
	wantReason := `agent "made" is extensible now but was not in state: a session override can reach 2 tools it could not call then`

	r := report()
	CompareState(r, map[string][]string{"made": {"read", "web"}, "was": {"read"}, "locked": {"read"}}, map[string]bool{"was": true}, nil, nil)
	// web was callable then: not granted since.
	if got := r.Gate.Granted; r.Gate.Pass || !slices.Equal(got, want[:1]) {
		t.Errorf("against state\ngot:  pass %v, granted %v\nwant: fail, granted %v", r.Gate.Pass, got, want[:1])
	}
	r = report()
	CompareState(r, map[string][]string{"made": {"read"}, "was": {"read"}, "locked": {"read"}}, map[string]bool{"was": true}, nil, nil)
	if got := r.Gate.Granted; r.Gate.Pass || !slices.Equal(got, want) || !slices.Contains(r.Gate.Reasons, wantReason) {
		t.Errorf("against state\ngot:  pass %v, granted %v, reasons %q\nwant: fail, granted %v, reason %q", r.Gate.Pass, got, r.Gate.Reasons, want, wantReason)
	}
	found := gateFindings(r)
	if len(found) != 2 || !strings.Contains(found[0].Message, `can call "shell" through a session override`) {
		t.Errorf("AF111 results got: %+v\nwant: two, saying the access is through a session override", found)
	}
	if out := string(writeReport(t, r, FormatTable, sampleOptions())); !strings.Contains(out, "+ made → shell (by session override)") {
		t.Errorf("table got:\n%s\nwant: the grant marked as by session override", out)
	}

	// A baseline report says which agents were extensible by their policy.
	base := report()
	base.Matrix[0].Policy = "locked"
	base.Matrix[0].Cells[1].OverrideReachable, base.Matrix[0].Cells[2].OverrideReachable = false, false
	r = report()
	CompareBaseline(r, base, "base.json")
	if got := r.Gate.Granted; r.Gate.Pass || !slices.Equal(got, want) {
		t.Errorf("against a baseline\ngot:  pass %v, granted %v\nwant: fail, granted %v", r.Gate.Pass, got, want)
	}
	r = report()
	CompareBaseline(r, report(), "base.json")
	if !r.Gate.Pass {
		t.Errorf("unchanged against a baseline got: granted %v\nwant: pass", r.Gate.Granted)
	}
}

// TestGateToolAddedForExtensibleAgent: an agent extensible in the
// baseline could reach every tool there was with a session override, but
// not a tool added since: that one is access granted (by_override), against
// the state (which records the tools as applied) and a baseline report
// alike. A state that does not record its tools adds nothing.
func TestGateToolAddedForExtensibleAgent(t *testing.T) {
	report := func() *Report {
		r := newReport()
		r.Matrix = []MatrixRow{
			{Agent: "was", Policy: "extensible", Cells: []Cell{
				{Tool: "read", Allowed: true}, {Tool: "rm", OverrideReachable: true}, {Tool: "shell", OverrideReachable: true},
			}},
			{Agent: "locked", Policy: "locked", Cells: []Cell{
				{Tool: "read", Allowed: true}, {Tool: "rm"}, {Tool: "shell"},
			}},
		}
		return r
	}
	applied := map[string][]string{"was": {"read"}, "locked": {"read"}}
	ext := map[string]bool{"was": true}
	want := []Access{{Agent: "was", Tool: "rm", ByOverride: true}}
	wantReason := `agent "was" is extensible: a session override can reach 1 tool added since state`

	r := report()
	CompareState(r, applied, ext, nil, []string{"read", "shell"})
	if got := r.Gate.Granted; r.Gate.Pass || !slices.Equal(got, want) || !slices.Contains(r.Gate.Reasons, wantReason) {
		t.Errorf("against state\ngot:  pass %v, granted %v, reasons %q\nwant: fail, granted %v, reason %q", r.Gate.Pass, got, r.Gate.Reasons, want, wantReason)
	}
	r = report()
	CompareState(r, applied, ext, nil, []string{"read", "rm", "shell"})
	if !r.Gate.Pass {
		t.Errorf("no tool added: granted %v, want pass", r.Gate.Granted)
	}
	r = report()
	CompareState(r, applied, ext, nil, nil)
	if !r.Gate.Pass {
		t.Errorf("a state without its tools: granted %v, want pass", r.Gate.Granted)
	}

	base := report()
	for i := range base.Matrix {
		base.Matrix[i].Cells = slices.DeleteFunc(base.Matrix[i].Cells, func(c Cell) bool { return c.Tool == "rm" })
	}
	r = report()
	CompareBaseline(r, base, "base.json")
	if got := r.Gate.Granted; r.Gate.Pass || !slices.Equal(got, want) {
		t.Errorf("against a baseline\ngot:  pass %v, granted %v\nwant: fail, granted %v", r.Gate.Pass, got, want)
	}
}

// TestGateSwitchToRuntimeCapabilities: an agent whose capabilities (or
// policy) come from runtime() now and did not in the baseline holds
// whatever its environment says when it starts: every tool it could not
// call then is access granted (by_runtime), with a reason, against the
// state and a baseline report alike. One that was runtime-dependent then
// is compared as before.
func TestGateSwitchToRuntimeCapabilities(t *testing.T) {
	report := func(runtime bool) *Report {
		r := newReport()
		r.Matrix = []MatrixRow{
			{Agent: "moved", Policy: "locked", RuntimeDependent: runtime, Cells: []Cell{
				{Tool: "read", Allowed: true}, {Tool: "rm"}, {Tool: "shell"},
			}},
			{Agent: "stays", Policy: "locked", Cells: []Cell{
				{Tool: "read", Allowed: true}, {Tool: "rm"}, {Tool: "shell"},
			}},
		}
		return r
	}
	applied := map[string][]string{"moved": {"read"}, "stays": {"read"}}
	want := []Access{{Agent: "moved", Tool: "rm", ByRuntime: true}, {Agent: "moved", Tool: "shell", ByRuntime: true}}
	wantReason := `agent "moved" takes its capabilities or capability_policy from runtime() now but did not in state: it holds what its environment says when it starts, so 2 tools it could not call then may be reachable`

	r := report(true)
	CompareState(r, applied, nil, map[string]bool{"moved": false}, nil)
	if got := r.Gate.Granted; r.Gate.Pass || !slices.Equal(got, want) || !slices.Contains(r.Gate.Reasons, wantReason) {
		t.Errorf("against state\ngot:  pass %v, granted %v, reasons %q\nwant: fail, granted %v, reason %q", r.Gate.Pass, got, r.Gate.Reasons, want, wantReason)
	}
	found := gateFindings(r)
	if len(found) != 2 || !strings.Contains(found[0].Message, "once it starts with the tags its environment gives it") {
		t.Errorf("AF111 results got: %+v\nwant: two, saying the access comes from runtime capabilities", found)
	}
	if out := string(writeReport(t, r, FormatTable, sampleOptions())); !strings.Contains(out, "+ moved → rm (by runtime capabilities)") {
		t.Errorf("table got:\n%s\nwant: the grant marked as by runtime capabilities", out)
	}
	r = report(true)
	CompareState(r, applied, nil, map[string]bool{"moved": true}, nil)
	if !r.Gate.Pass {
		t.Errorf("runtime-dependent then and now: granted %v, want pass", r.Gate.Granted)
	}

	r = report(true)
	CompareBaseline(r, report(false), "base.json")
	if got := r.Gate.Granted; r.Gate.Pass || !slices.Equal(got, want) {
		t.Errorf("against a baseline\ngot:  pass %v, granted %v\nwant: fail, granted %v", r.Gate.Pass, got, want)
	}
	r = report(true)
	CompareBaseline(r, report(true), "base.json")
	if !r.Gate.Pass {
		t.Errorf("against a runtime-dependent baseline: granted %v, want pass", r.Gate.Granted)
	}
	// Runtime-dependent then too: only a tool added since is new to it.
	r = report(true)
	CompareState(r, applied, nil, map[string]bool{"moved": true}, []string{"read", "shell"})
	wantAdded := []Access{{Agent: "moved", Tool: "rm", ByRuntime: true}}
	if got := r.Gate.Granted; r.Gate.Pass || !slices.Equal(got, wantAdded) ||
		!slices.Contains(r.Gate.Reasons, `agent "moved" takes its capabilities or capability_policy from runtime(): when it starts, its environment may give it 1 tool added since state`) {
		t.Errorf("a tool added since\ngot:  pass %v, granted %v, reasons %q\nwant: fail, granted %v", r.Gate.Pass, got, r.Gate.Reasons, wantAdded)
	}
	base := report(true)
	for i := range base.Matrix {
		base.Matrix[i].Cells = slices.DeleteFunc(base.Matrix[i].Cells, func(c Cell) bool { return c.Tool == "rm" })
	}
	r = report(true)
	CompareBaseline(r, base, "base.json")
	if got := r.Gate.Granted; r.Gate.Pass || !slices.Equal(got, wantAdded) {
		t.Errorf("a tool added since a baseline\ngot:  pass %v, granted %v\nwant: fail, granted %v", r.Gate.Pass, got, wantAdded)
	}
	// Nothing it could not call then: no grant, and no reason about it.
	r = report(true)
	CompareState(r, map[string][]string{"moved": {"read", "rm", "shell"}, "stays": {"read"}}, nil, nil, nil)
	if !r.Gate.Pass || slices.ContainsFunc(r.Gate.Reasons, func(s string) bool { return strings.Contains(s, "runtime()") }) {
		t.Errorf("every tool callable then\ngot:  pass %v, reasons %q\nwant: pass, no runtime reason", r.Gate.Pass, r.Gate.Reasons)
	}
}
