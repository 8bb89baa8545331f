package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

// ruleTestNow is the audit date of every fixture: waiver expiry is
// compared with it, never with the clock.
var ruleTestNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// ruleFakes is a fixture's fake.json: what a real run would learn from
// MCP servers and the lockfile, which tests do not start or keep.
type ruleFakes struct {
	// MCP maps an mcp block name to the tools its server serves (served
	// name → MCP annotations, null for none) and, optionally, to the
	// tools agentform.lock.hcl pins for it.
	MCP map[string]struct {
		Served     map[string]json.RawMessage `json:"served"`
		Locked     map[string]json.RawMessage `json:"locked"`
		Unresolved bool                       `json:"unresolved"`
	} `json:"mcp"`
	// A2ALocked lists a2a blocks whose card the lockfile pins.
	A2ALocked []string `json:"a2a_locked"`
}

func ruleDigest(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// fakeMCPPin is the lock entry of an MCP server serving tools with the
// given annotations.
func fakeMCPPin(served map[string]json.RawMessage) *lockfile.Tool {
	pin := &lockfile.Tool{
		Kind: manifest.KindMCP, ServerName: "fake-mcp", ServerVersion: "1.0.0",
		HashedFields: []string{"annotations", "description", "inputSchema", "name", "outputSchema"},
		Served:       map[string]string{}, Definitions: map[string]string{},
	}
	for name, ann := range served {
		// The canonical text and digest a server's answer gets, so that
		// the entry is one agentform builds from without the server.
		var compact bytes.Buffer
		if err := json.Compact(&compact, ann); err != nil {
			panic(fmt.Sprintf("fake.json: %s: %v", name, err))
		}
		quoted, err := json.Marshal(name)
		if err != nil {
			panic(fmt.Sprintf("fake.json: %s: %v", name, err))
		}
		def := fmt.Sprintf(`{"annotations":%s,"inputSchema":{"type":"object"},"name":%s}`, compact.Bytes(), quoted)
		_, digest, err := resolve.MCPToolDigest(json.RawMessage(def))
		if err != nil {
			panic(fmt.Sprintf("fake.json: %s: %v", name, err))
		}
		pin.Served[name] = digest
		pin.Definitions[name] = def
	}
	return pin
}

// ruleFixturePlan loads, resolves (without contacting anything) and plans
// the workspace in dir, standing in fake.json's servers and lock entries.
func ruleFixturePlan(t testing.TB, dir string) *planner.Plan {
	t.Helper()
	ctx := context.Background()
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatalf("loading %s: %s", dir, diags.Error())
	}
	var fakes ruleFakes
	if b, err := os.ReadFile(filepath.Join(dir, "fake.json")); err == nil {
		if err := json.Unmarshal(b, &fakes); err != nil {
			t.Fatalf("reading fake.json: %v", err)
		}
	}
	lock := lockfile.New()
	for _, name := range fakes.A2ALocked {
		lock.Tools[name] = &lockfile.Tool{Kind: manifest.KindA2A, Card: ruleDigest(name), CardName: name, CardVersion: "1.0.0"}
	}
	for name, m := range fakes.MCP {
		if m.Locked != nil {
			lock.Tools[name] = fakeMCPPin(m.Locked)
		}
	}
	ws, diags := resolve.Run(ctx, cfg, resolve.Options{Refresh: false, Lock: lock})
	if diags.HasErrors() {
		t.Fatalf("resolving %s: %s", dir, diags.Error())
	}
	for name, m := range fakes.MCP {
		decl := cfg.Tool(name)
		if decl == nil || decl.MCP == nil {
			t.Fatalf("fake.json names %q, which is not an mcp tool of %s", name, dir)
		}
		if m.Unresolved {
			ws.Tools[name] = &resolve.Resolved{Unresolved: true}
			continue
		}
		res := &resolve.Resolved{Pin: fakeMCPPin(m.Served)}
		for served, ann := range m.Served {
			st := resolve.Tool{Name: name + "__" + served, Served: served}
			if string(ann) != "null" {
				st.Annotations = ann
			}
			if caps, ok := decl.MCP.ToolCapabilities[served]; ok {
				st.Requires = caps.Values
			}
			res.Tools = append(res.Tools, st)
		}
		sort.Slice(res.Tools, func(i, j int) bool { return res.Tools[i].Name < res.Tools[j].Name })
		ws.Tools[name] = res
	}
	return planner.New(ctx, cfg, planner.Options{Resolution: ws, Lock: lock})
}

func ruleFixtureReport(t testing.TB, dir string) *Report {
	t.Helper()
	return Run(ruleFixturePlan(t, dir), Options{Now: ruleTestNow})
}

// ruleWant is one finding a hit fixture announces with a comment at the
// end of the line its range starts on:
//
//	"gihub", # want: AF103 agent.assistant [TOOL]; AF... (more)
type ruleWant struct {
	rule, target, tool string
	line               int
}

var ruleWantComment = regexp.MustCompile(`#\s*want:\s*(.*)$`)

func readRuleWants(t *testing.T, path string) []ruleWant {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ruleWant
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		m := ruleWantComment.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		for _, spec := range strings.Split(m[1], ";") {
			fields := strings.Fields(spec)
			if len(fields) < 2 || len(fields) > 3 {
				t.Fatalf("%s:%d: malformed want %q", path, line, spec)
			}
			w := ruleWant{rule: fields[0], target: fields[1], line: line}
			if len(fields) == 3 {
				w.tool = fields[2]
			}
			out = append(out, w)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Specific wants first, so a want without a tool cannot take the
	// finding a specific one needs.
	sort.SliceStable(out, func(i, j int) bool { return out[i].tool != "" && out[j].tool == "" })
	return out
}

func ruleFindingsOf(fs []Finding, rule string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.RuleID == rule {
			out = append(out, f)
		}
	}
	return out
}

func describeRuleFindings(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		line := 0
		if f.Range != nil {
			line = f.Range.Start.Line
		}
		fmt.Fprintf(&b, "\n  %s %s %s agent=%q tool=%q line %d: %s", f.RuleID, f.Severity, f.Target, f.Agent, f.Tool, line, f.Message)
	}
	if b.Len() == 0 {
		return " (none)"
	}
	return b.String()
}

// ruleSeverities is the contract of each rule's severity.
var ruleSeverities = map[string]Severity{
	"AF101": SeverityNote, "AF102": SeverityWarning, "AF103": SeverityWarning, "AF104": SeverityNote,
	"AF105": SeverityWarning, "AF106": SeverityWarning, "AF107": SeverityWarning, "AF108": SeverityWarning,
	"AF109": SeverityWarning, "AF110": SeverityError,
	"AF201": SeverityWarning, "AF202": SeverityError, "AF203": SeverityWarning, "AF204": SeverityWarning,
	"AF301": SeverityWarning, "AF302": SeverityWarning, "AF303": SeverityWarning, "AF304": SeverityWarning,
	"AF305": SeverityError, "AF306": SeverityError, "AF307": SeverityWarning,
	"AF401": SeverityWarning, "AF402": SeverityNote,
}

// TestRules runs every rule's hit fixture, which must produce exactly the
// findings its want comments announce (rule, severity, target, tool and
// line), and its near-miss fixture, which must produce none of the rule.
func TestRules(t *testing.T) {
	for _, rule := range Rules() {
		t.Run(rule.ID, func(t *testing.T) {
			if got, want := rule.Severity, ruleSeverities[rule.ID]; got != want {
				t.Errorf("severity\ngot:  %s\nwant: %s", got, want)
			}
			dir := filepath.Join("testdata", "rules", rule.ID)
			t.Run("hit", func(t *testing.T) {
				wants := readRuleWants(t, filepath.Join(dir, "hit", "agent.acl"))
				if len(wants) == 0 {
					t.Fatal("the hit fixture announces no finding")
				}
				got := ruleFindingsOf(ruleFixtureReport(t, filepath.Join(dir, "hit")).Findings, rule.ID)
				left := slices.Clone(got)
				for _, w := range wants {
					if w.rule != rule.ID {
						t.Fatalf("the %s fixture wants a %s finding", rule.ID, w.rule)
					}
					i := slices.IndexFunc(left, func(f Finding) bool {
						return f.Target == w.target && (w.tool == "" || f.Tool == w.tool) && f.Severity == rule.Severity &&
							f.Range != nil && f.Range.Filename == "agent.acl" && f.Range.Start.Line == w.line && f.Fingerprint != ""
					})
					if i < 0 {
						t.Errorf("missing finding\ngot:%s\nwant: %s %s %s tool=%q at agent.acl line %d", describeRuleFindings(got), w.rule, rule.Severity, w.target, w.tool, w.line)
						continue
					}
					left = slices.Delete(left, i, i+1)
				}
				if len(left) > 0 {
					t.Errorf("unexpected findings\ngot:%s\nwant: none beyond the want comments", describeRuleFindings(left))
				}
			})
			t.Run("miss", func(t *testing.T) {
				r := ruleFixtureReport(t, filepath.Join(dir, "miss"))
				if got := append(ruleFindingsOf(r.Findings, rule.ID), ruleFindingsOf(r.Waived, rule.ID)...); len(got) > 0 {
					t.Errorf("the near miss triggers the rule\ngot:%s\nwant: (none)", describeRuleFindings(got))
				}
			})
		})
	}
}

// TestRuleMessages pins the parts of messages that carry information a
// user acts on.
func TestRuleMessages(t *testing.T) {
	for _, tc := range []struct {
		fixture, rule string
		contains      []string
		absent        []string
	}{
		{"AF101/hit", "AF101", []string{`"shell"`, `"shell::exec"`}, nil},
		{"AF103/hit", "AF103", []string{`"gihub"`, `Did you mean "github"?`}, nil},
		{"AF105/hit", "AF105", []string{"12 registered tools", "3 tool blocks", `"github::issues"`}, nil},
		{"AF109/hit", "AF109", []string{`"assistant"`, `"planner"`, `"shell"`, "a2a_planner_link_send"}, nil},
		{"AF110/hit", "AF110", []string{`Check "assistant_never_shells" failed: The assistant must never reach the shell.`,
			`Check "typo" cannot be evaluated`, `no registered tool named "shel"`}, nil},
		{"AF202/hit", "AF202", []string{"MCP tool changed since lock", `"create_issue"`, "lock -upgrade"}, nil},
		{"AF203/hit", "AF203", []string{"destructiveHint: true", "no annotations", `"github" satisfies "github::repo"`}, nil},
		{"AF307/hit", "AF307", []string{`Skill "research" ships 1 Python script ("scripts/fetch.py")`, `which agent "assistant" can run through run_skill_script`}, nil},
		{"AF305/hit", "AF305", []string{`secret(runtime("GITHUB_TOKEN"))`, `header "Authorization"`, `The password in the url of mcp tool "search" comes from runtime("SEARCH_URL")`},
			[]string{"default-url_pw"}},
		// A literal credential's value never appears in the report.
		{"AF306/hit", "AF306", []string{"literal", `The password in the url of mcp tool "search"`, `The query parameter "api_key" in the url of mcp tool "search"`,
			`The user information in the url of a2a tool "delegate"`, `The query parameter "X-Amz-Signature" in the url of a2a tool "delegate"`},
			[]string{"literal-github_token", "literal-anthropic_api_key", "literal-url_password", "literal-url_key", "literal-url_user", "literal-url_sig"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			r := ruleFixtureReport(t, filepath.Join("testdata", "rules", tc.fixture))
			var all strings.Builder
			for _, f := range ruleFindingsOf(r.Findings, tc.rule) {
				all.WriteString(f.Message + "\n")
			}
			for _, s := range tc.contains {
				if !strings.Contains(all.String(), s) {
					t.Errorf("messages lack %q\ngot:  %s\nwant: a message containing it", s, all.String())
				}
			}
			js, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.absent {
				if bytes.Contains(js, []byte(s)) {
					t.Errorf("the report contains %q\ngot:  %s\nwant: no trace of it", s, js)
				}
			}
		})
	}
}

// copyRuleFixture copies a fixture directory into a temporary one, with
// prefix written before agent.acl's text.
func copyRuleFixture(t *testing.T, src, prefix string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == "agent.acl" {
			b = append([]byte(prefix), b...)
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func countRuleFindings(fs []Finding, rule, target string) int {
	n := 0
	for _, f := range fs {
		if f.RuleID == rule && f.Target == target {
			n++
		}
	}
	return n
}

// TestWaivers checks that a waiver moves its findings to Waived (with the
// waiver recorded) and out of the counts, that an expired one stops
// applying and is reported, and that an unused one is reported.
func TestWaivers(t *testing.T) {
	base := filepath.Join("testdata", "rules", "AF204", "hit")
	plain := ruleFixtureReport(t, base)
	if countRuleFindings(plain.Findings, "AF204", "tool.shell") != 1 {
		t.Fatalf("the AF204 fixture has no finding to waive:%s", describeRuleFindings(plain.Findings))
	}

	t.Run("applies", func(t *testing.T) {
		dir := copyRuleFixture(t, base, "")
		waiver := "\nwaiver \"AF204\" {\n  target  = \"tool.shell\"\n  reason  = \"Lists files only.\"\n  expires = \"2026-12-31\"\n}\n"
		if err := os.WriteFile(filepath.Join(dir, "waiver.acl"), []byte(waiver), 0o644); err != nil {
			t.Fatal(err)
		}
		r := ruleFixtureReport(t, dir)
		if got := countRuleFindings(r.Findings, "AF204", "tool.shell"); got != 0 {
			t.Errorf("waived finding still reported\ngot:  %d\nwant: 0", got)
		}
		waived := ruleFindingsOf(r.Waived, "AF204")
		if len(waived) != 1 || waived[0].Target != "tool.shell" || waived[0].Waiver == nil {
			t.Fatalf("waived\ngot:%s\nwant: the AF204 finding of tool.shell", describeRuleFindings(waived))
		}
		w := waived[0].Waiver
		if w.Reason != "Lists files only." || w.Expires != "2026-12-31" || w.Range == nil || w.Range.Filename != "waiver.acl" || w.Range.Start.Line != 2 {
			t.Errorf("waiver\ngot:  %+v (range %v)\nwant: the reason, expiry and range of waiver.acl line 2", w, w.Range)
		}
		if got, want := r.Counts[SeverityWarning], plain.Counts[SeverityWarning]-1; got != want {
			t.Errorf("warning count\ngot:  %d\nwant: %d", got, want)
		}
		if len(ruleFindingsOf(r.Findings, "AF401"))+len(ruleFindingsOf(r.Findings, "AF402")) > 0 {
			t.Errorf("waiver hygiene findings for a used, current waiver\ngot:%s", describeRuleFindings(r.Findings))
		}
	})

	t.Run("expired", func(t *testing.T) {
		r := ruleFixtureReport(t, filepath.Join("testdata", "rules", "AF401", "hit"))
		if got := countRuleFindings(r.Findings, "AF204", "tool.shell"); got != 1 {
			t.Errorf("finding of an expired waiver\ngot:  %d reported\nwant: 1", got)
		}
		if got := countRuleFindings(r.Waived, "AF204", "tool.shell"); got != 0 {
			t.Errorf("expired waiver still applies\ngot:  %d waived\nwant: 0", got)
		}
		// The day of expiry is still covered.
		r = ruleFixtureReport(t, filepath.Join("testdata", "rules", "AF401", "miss"))
		if got := countRuleFindings(r.Waived, "AF204", "tool.shell"); got != 1 {
			t.Errorf("waiver on its expiry day\ngot:  %d waived\nwant: 1", got)
		}
	})

	t.Run("unused", func(t *testing.T) {
		r := ruleFixtureReport(t, filepath.Join("testdata", "rules", "AF402", "hit"))
		if got := countRuleFindings(r.Waived, "AF204", "tool.shell"); got != 1 {
			t.Errorf("the used waiver\ngot:  %d waived\nwant: 1", got)
		}
		unused := ruleFindingsOf(r.Findings, "AF402")
		if len(unused) != 1 || !strings.Contains(unused[0].Message, "tool.gone") {
			t.Errorf("unused waiver\ngot:%s\nwant: one AF402 naming tool.gone", describeRuleFindings(unused))
		}
	})
}

// TestFingerprintsStable checks that every hit fixture's fingerprints are
// unique and survive a line shift (blank lines inserted at the top).
func TestFingerprintsStable(t *testing.T) {
	for _, rule := range Rules() {
		t.Run(rule.ID, func(t *testing.T) {
			src := filepath.Join("testdata", "rules", rule.ID, "hit")
			before := ruleFixtureReport(t, copyRuleFixture(t, src, ""))
			after := ruleFixtureReport(t, copyRuleFixture(t, src, "\n\n"))
			prints := func(r *Report) ([]string, []int) {
				var fps []string
				var lines []int
				for _, f := range append(slices.Clone(r.Findings), r.Waived...) {
					fps = append(fps, f.Fingerprint)
					if f.Range != nil && f.Range.Filename == "agent.acl" {
						lines = append(lines, f.Range.Start.Line)
					}
				}
				slices.Sort(fps)
				slices.Sort(lines)
				return fps, lines
			}
			fb, lb := prints(before)
			fa, la := prints(after)
			if !slices.Equal(fb, fa) {
				t.Errorf("fingerprints changed with line numbers\ngot:  %v\nwant: %v", fa, fb)
			}
			if len(lb) == 0 || len(la) != len(lb) || la[0] != lb[0]+2 {
				t.Errorf("lines did not shift\ngot:  %v\nwant: %v shifted by 2", la, lb)
			}
			if len(slices.Compact(slices.Clone(fb))) != len(fb) {
				t.Errorf("duplicate fingerprints\ngot:%s", describeRuleFindings(before.Findings))
			}
		})
	}
}

// TestReportShape checks the report's fixed parts and its determinism.
func TestReportShape(t *testing.T) {
	dir := filepath.Join("testdata", "rules", "AF305", "hit")
	r := ruleFixtureReport(t, dir)
	if r.FormatVersion != FormatVersion || r.AgentformVersion == "" {
		t.Errorf("versions\ngot:  %q %q\nwant: %q and the agentform version", r.FormatVersion, r.AgentformVersion, FormatVersion)
	}
	var ids []string
	for _, rule := range r.Rules {
		ids = append(ids, rule.ID)
		if rule.HelpURI != HelpBase+rule.ID+".md" || rule.Name == "" || rule.Short == "" || rule.Full == "" {
			t.Errorf("rule %s is incomplete: %+v", rule.ID, rule)
		}
	}
	var want []string
	for id := range ruleSeverities {
		want = append(want, id)
	}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("rules\ngot:  %v\nwant: %v", ids, want)
	}
	for _, s := range []Severity{SeverityError, SeverityWarning, SeverityNote} {
		if _, ok := r.Counts[s]; !ok {
			t.Errorf("counts lack %s\ngot:  %v", s, r.Counts)
		}
	}
	if r.Counts[SeverityError] != len(ruleFindingsOf(r.Findings, "AF305")) {
		t.Errorf("error count\ngot:  %d\nwant: %d", r.Counts[SeverityError], len(ruleFindingsOf(r.Findings, "AF305")))
	}
	if !slices.IsSortedFunc(r.Findings, func(x, y Finding) int {
		if c := y.Severity.Rank() - x.Severity.Rank(); c != 0 {
			return c
		}
		return strings.Compare(x.RuleID+"\x00"+x.Target, y.RuleID+"\x00"+y.Target)
	}) {
		t.Errorf("findings are not sorted:%s", describeRuleFindings(r.Findings))
	}
	if len(r.Matrix) != 1 || r.Matrix[0].Agent != "assistant" || len(r.Matrix[0].Cells) == 0 || r.Matrix[0].Holds == nil {
		t.Errorf("matrix\ngot:  %+v\nwant: the assistant's row", r.Matrix)
	}
	first, _ := json.Marshal(r)
	second, _ := json.Marshal(ruleFixtureReport(t, dir))
	if !bytes.Equal(first, second) {
		t.Errorf("two audits of one workspace differ\ngot:  %s\nwant: %s", second, first)
	}

	empty := Run(nil, Options{})
	if len(empty.Rules) != len(want) || empty.Findings == nil || empty.Waived == nil || len(empty.Counts) != 3 {
		t.Errorf("report of no plan\ngot:  %+v\nwant: every rule, empty findings, three counts", empty)
	}
}

// TestRuleDocs checks that every rule has a help page that shows how to
// waive it, and that the index lists it.
func TestRuleDocs(t *testing.T) {
	docs := filepath.Join("..", "..", "docs", "rules")
	index, err := os.ReadFile(filepath.Join(docs, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range append(Rules(), NewAccessRule()) {
		page, err := os.ReadFile(filepath.Join(docs, rule.ID+".md"))
		if err != nil {
			t.Errorf("%s has no help page: %v", rule.ID, err)
			continue
		}
		waive := "waiver \"" + rule.ID + "\""
		if rule.ID == RuleCheckFailed || rule.ID == RuleNewAccess {
			waive = rule.ID + " cannot be waived"
		}
		for _, s := range []string{"# " + rule.ID, rule.Name, "```hcl", waive} {
			if !bytes.Contains(page, []byte(s)) {
				t.Errorf("%s.md lacks %q", rule.ID, s)
			}
		}
		if !bytes.Contains(index, []byte("("+rule.ID+".md)")) {
			t.Errorf("README.md does not link %s.md", rule.ID)
		}
	}
}

func TestCommandName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"python3", "python"}, {"python3.12", "python"}, {"/usr/bin/env", "env"}, {"bash -c", "bash"},
		{"LUA5.4", "lua"}, {`C:\tools\node.exe`, "node"}, {"shasum", "shasum"}, {"", ""}, {"ls", "ls"},
	} {
		if got := commandName(tc.in); got != tc.want {
			t.Errorf("commandName(%q)\ngot:  %q\nwant: %q", tc.in, got, tc.want)
		}
	}
}

func TestRiskyAnnotations(t *testing.T) {
	for _, tc := range []struct {
		in    string
		risky bool
	}{
		{"", true}, {"null", true}, {"{}", true}, {`{"title":"x"}`, true},
		{`{"destructiveHint":true}`, true}, {`{"readOnlyHint":true,"openWorldHint":true}`, true},
		{`{"destructiveHint":false}`, false}, {`{"readOnlyHint":true}`, false},
		{`{"readOnlyHint":false}`, true}, {`not json`, true},
	} {
		if got := riskyAnnotations(json.RawMessage(tc.in)) != ""; got != tc.risky {
			t.Errorf("riskyAnnotations(%s)\ngot:  %v\nwant: %v", tc.in, got, tc.risky)
		}
	}
}

func TestClosestTag(t *testing.T) {
	candidates := []string{"fs", "github", "github::read", "math", "math::add", "shell::exec"}
	for _, tc := range []struct{ in, want string }{
		{"gihub", "github"}, {"github::raed", "github::read"}, {"mth", "math"}, {"kubernetes", ""}, {"shell::exce", "shell::exec"},
		// Short tags: at most half may change ("db" is no typo of "fs").
		{"db", ""}, {"zz", ""}, {"f", ""}, {"fx", "fs"}, {"mat", "math"}, {"mxyz", ""},
	} {
		if got := closestTag(tc.in, candidates); got != tc.want {
			t.Errorf("closestTag(%q)\ngot:  %q\nwant: %q", tc.in, got, tc.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	a := Fingerprint("AF101", "agent.a", "a", "t", "")
	if a != Fingerprint("AF101", "agent.a", "a", "t", "") || len(a) != 64 {
		t.Fatalf("fingerprint is not a stable sha256 hex digest: %q", a)
	}
	// Moving text between parts changes the digest.
	if a == Fingerprint("AF101", "agent.a", "", "at", "") || a == Fingerprint("AF101", "agent.aa", "", "t", "") {
		t.Errorf("fingerprints of different parts collide")
	}
}

// BenchmarkAuditRun audits 100 agents × 1,000 bash tools in ten
// namespaces: about 80,000 denied cells, each an AF101 finding.
func BenchmarkAuditRun(b *testing.B) {
	var src strings.Builder
	for i := range 100 {
		fmt.Fprintf(&src, "agent \"a%d\" {\n  capabilities = [\"ns%d\", \"ns%d::x\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"m\"\n  }\n}\n", i, i%10, (i+1)%10)
	}
	for i := range 1000 {
		fmt.Fprintf(&src, "tool \"t%d\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"ns%d::x::y%d\"]\n}\n", i, i%10, i)
	}
	cfg, diags := manifest.LoadSources(b.TempDir(), map[string][]byte{"agent.acl": []byte(src.String())})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	p := planner.New(context.Background(), cfg, planner.Options{})
	b.ResetTimer()
	for range b.N {
		r := Run(p, Options{Now: ruleTestNow})
		b.ReportMetric(float64(len(r.Findings)), "findings/op")
	}
}

// BenchmarkRedaction finds the credentials of 2,000 bash tools, each with a
// secret() in its config: what every command that prints a diagnostic or
// a plan computes. It grows with the manifest (a lookup per credential
// once walked the whole file: 35 s for this workspace).
func BenchmarkRedaction(b *testing.B) {
	var src strings.Builder
	src.WriteString("agent \"a\" {\n  capabilities = [\"ns0\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"m\"\n  }\n}\n")
	for i := range 2000 {
		fmt.Fprintf(&src, "tool \"t%d\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"ns%d::x\"]\n  config       = { API_TOKEN = secret(runtime(\"T%d\", \"default-token-%05d\")), REGION = \"eu\" }\n}\n", i, i%10, i, i)
	}
	cfg, diags := manifest.LoadSources(b.TempDir(), map[string][]byte{"agent.acl": []byte(src.String())})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	b.ResetTimer()
	for range b.N {
		if r := Redaction(cfg); len(r.Ranges()) < 2000 {
			b.Fatalf("got %d ranges, want one for each of the 2,000 credentials", len(r.Ranges()))
		}
	}
}

// sourceReport audits the manifest src, planned without resolving.
func sourceReport(t *testing.T, src string) *Report {
	t.Helper()
	cfg, diags := manifest.LoadSources(t.TempDir(), map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return Run(planner.New(context.Background(), cfg, planner.Options{}), Options{Now: ruleTestNow})
}

// TestCheckFailedFingerprint: a check keeps its AF110 fingerprint when it
// goes from failing to not evaluating, so that code scanning and baselines
// see the same finding, not one closed and another opened.
func TestCheckFailedFingerprint(t *testing.T) {
	const manifestText = `agent "a1" {
  capabilities = ["fs"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude"
  }
}
tool "t" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["fs"]
}
check "c" {
  assert {
    condition     = !can_call("a1", "TOOL")
    error_message = "no"
  }
}
`
	fingerprint := func(tool string) (string, string) {
		t.Helper()
		r := sourceReport(t, strings.Replace(manifestText, "TOOL", tool, 1))
		found := ruleFindingsOf(r.Findings, RuleCheckFailed)
		if len(found) != 1 {
			t.Fatalf("can_call(%q) got:%s\nwant: one AF110 finding", tool, describeRuleFindings(found))
		}
		return found[0].Fingerprint, found[0].Message
	}
	failed, failedMsg := fingerprint("t")
	broken, brokenMsg := fingerprint("tt")
	if !strings.Contains(failedMsg, "failed") || !strings.Contains(brokenMsg, "cannot be evaluated") {
		t.Fatalf("messages\ngot:  %q, %q\nwant: a failed check, then one that cannot be evaluated", failedMsg, brokenMsg)
	}
	if failed != broken {
		t.Errorf("fingerprint of check.c\ngot:  %s once it cannot be evaluated\nwant: %s, as when it failed", broken, failed)
	}
}

// TestWaiverHygieneFingerprints: two waivers with one rule and target
// (two reasons, two expiry dates) give hygiene findings with fingerprints
// of their own, since SARIF consumers merge results that share one; the
// first keeps the fingerprint of a waiver alone.
func TestWaiverHygieneFingerprints(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	w := func(target, reason, expires string) *manifest.Waiver {
		return &manifest.Waiver{RuleID: "AF104", Target: manifest.String{Value: target, Set: true},
			Reason: manifest.String{Value: reason, Set: true}, Expires: manifest.String{Value: expires, Set: expires != ""}}
	}
	for _, tc := range []struct {
		name     string
		waivers  []*manifest.Waiver
		hygienic string
	}{
		{"expired", []*manifest.Waiver{w("tool.rm", "one", "2025-01-31"), w("tool.rm", "two", "2025-06-30")}, RuleExpiredWaiver},
		{"unused", []*manifest.Waiver{w("tool.rm", "one", ""), w("tool.rm", "two", "")}, RuleUnusedWaiver},
	} {
		_, _, hygiene := applyWaivers(nil, tc.waivers, now)
		_, _, alone := applyWaivers(nil, tc.waivers[:1], now)
		if len(hygiene) != 2 || hygiene[0].RuleID != tc.hygienic || hygiene[1].RuleID != tc.hygienic {
			t.Fatalf("%s: got %+v, want two %s findings", tc.name, hygiene, tc.hygienic)
		}
		if hygiene[0].Fingerprint == hygiene[1].Fingerprint {
			t.Errorf("%s: both findings have the fingerprint %s", tc.name, hygiene[0].Fingerprint)
		}
		if hygiene[0].Fingerprint != alone[0].Fingerprint {
			t.Errorf("%s: the first waiver's fingerprint changed with a second beside it", tc.name)
		}
	}
}
