package manifest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestValidFixtures loads every workspace under testdata/valid (the agentc
// reference examples and agentform's own) and expects no errors.
func TestValidFixtures(t *testing.T) {
	dirs, err := filepath.Glob("testdata/valid/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no valid fixtures: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			cfg, diags := Load(dir)
			if diags.HasErrors() {
				t.Fatalf("unexpected errors:\n%s", diagLines(diags))
			}
			if len(cfg.Agents) == 0 {
				t.Fatalf("got: no agents\nwant: at least one")
			}
		})
	}
}

// want is one expected diagnostic: file, line and summary.
type want struct {
	file    string
	line    int
	summary string
}

func (w want) String() string { return fmt.Sprintf("%s:%d: %s", w.file, w.line, w.summary) }

// readWants parses the "# want: FILE:LINE: SUMMARY" lines of a fixture's
// manifest files.
func readWants(t *testing.T, dir string) []want {
	t.Helper()
	names, err := ManifestFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var wants []want
	for _, name := range names {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(src))
		for sc.Scan() {
			rest, ok := strings.CutPrefix(sc.Text(), "# want: ")
			if !ok {
				rest, ok = strings.CutPrefix(sc.Text(), "// want: ")
			}
			if !ok {
				continue
			}
			parts := strings.SplitN(rest, ":", 3)
			if len(parts) != 3 {
				t.Fatalf("%s: malformed want line %q", name, rest)
			}
			line, err := strconv.Atoi(parts[1])
			if err != nil {
				t.Fatalf("%s: malformed want line %q", name, rest)
			}
			wants = append(wants, want{file: parts[0], line: line, summary: strings.TrimSpace(parts[2])})
		}
	}
	return wants
}

// TestInvalidFixtures loads every workspace under testdata/invalid and
// checks that each expected error is reported with its summary, file and
// line, and that loading leaves the directory unchanged.
func TestInvalidFixtures(t *testing.T) {
	dirs, err := filepath.Glob("testdata/invalid/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no invalid fixtures: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			wants := readWants(t, dir)
			if len(wants) == 0 {
				t.Fatalf("fixture has no \"# want:\" line")
			}
			before := snapshot(t, dir)
			_, diags := Load(dir)
			if !diags.HasErrors() {
				t.Fatalf("got: no errors\nwant: %v", wants)
			}
			for _, w := range wants {
				if !hasDiag(diags, w) {
					t.Errorf("missing diagnostic\ngot:\n%s\nwant: %s", diagLines(diags), w)
				}
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("loading changed the directory")
			}
		})
	}
}

func hasDiag(diags hcl.Diagnostics, w want) bool {
	for _, d := range diags {
		if d.Subject == nil || d.Severity != hcl.DiagError {
			continue
		}
		if d.Subject.Filename == w.file && d.Subject.Start.Line == w.line && d.Summary == w.summary {
			return true
		}
	}
	return false
}

func diagLines(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		loc := "(no location)"
		if d.Subject != nil {
			loc = fmt.Sprintf("%s:%d", d.Subject.Filename, d.Subject.Start.Line)
		}
		fmt.Fprintf(&b, "  %s %s: %s — %s\n", sev, loc, d.Summary, d.Detail)
	}
	return b.String()
}

// snapshot renders every file name, mode and content under dir.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v\n", path, info.Mode())
		if d.Type().IsRegular() {
			content, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b.Write(content)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestWaiverOfCheck: a failed check is not waivable, and a waiver that
// tries says so rather than only that the target is not an address.
func TestWaiverOfCheck(t *testing.T) {
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(`
waiver "AF110" {
  target = "check.assistant_never_shells"
  reason = "Reviewed."
}
`)})
	if len(diags) != 1 || diags[0].Summary != "Invalid waiver target" || !strings.Contains(diags[0].Detail, "(AF110) cannot be waived") ||
		diags[0].Subject == nil || diags[0].Subject.Start.Line != 3 {
		t.Errorf("got:\n%s\nwant: Invalid waiver target at agent.acl:3, saying a failed check cannot be waived", diagLines(diags))
	}
}

// TestSecretDefaultNotQuoted: an invalid default of a secret() is an error
// that does not quote it (a secret's value, even its default, appears in
// no output; the JSON diagnostics carry the detail without the source
// line), where the same default of a plain runtime() is quoted.
func TestSecretDefaultNotQuoted(t *testing.T) {
	const src = `
agent "a" {
  capability_policy = %s
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

http_server {
  port = %s
}
`
	for _, tc := range []struct {
		policy, port string
		quoted       bool
	}{
		{`secret(runtime("POL", "SECRETDEF-policy-0001"))`, `secret(runtime("P", 999999))`, false},
		{`runtime("POL", "SECRETDEF-policy-0001")`, `runtime("P", 999999)`, true},
	} {
		_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(fmt.Sprintf(src, tc.policy, tc.port))})
		var details []string
		for _, d := range diags {
			if d.Severity == hcl.DiagError {
				details = append(details, d.Summary+": "+d.Detail)
			}
		}
		joined := strings.Join(details, "\n")
		if len(details) != 2 || !strings.Contains(joined, `Invalid value for "capability_policy"`) || !strings.Contains(joined, `Invalid value for "port"`) {
			t.Errorf("%s: got\n%s\nwant: two errors, for capability_policy and port", tc.policy, joined)
		}
		if got := strings.Contains(joined, "SECRETDEF-policy-0001") && strings.Contains(joined, "999999"); got != tc.quoted {
			t.Errorf("%s: values quoted: %v, want %v:\n%s", tc.policy, got, tc.quoted, joined)
		}
		if !tc.quoted && (strings.Contains(joined, "SECRETDEF") || strings.Contains(joined, "999999")) {
			t.Errorf("a secret's default is quoted:\n%s", joined)
		}
	}
}

// TestSecretDefaultTagsChecked: a secret(runtime()) capabilities default
// with a malformed tag is an error at the reference, naming the element
// and not the tag; a well-formed one is accepted.
func TestSecretDefaultTagsChecked(t *testing.T) {
	const src = `
agent "a" {
  capabilities = secret(runtime("CAPS", %s))
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(fmt.Sprintf(src, `["calc", "SECRETTAG:: "]`))})
	want := `In "capabilities", element 2 of the default of secret(runtime("CAPS")) is not a well-formed tag (a secret's value is not shown).`
	if len(diags) != 1 || diags[0].Summary != "Invalid capability tag" || !strings.HasPrefix(diags[0].Detail, want) || diags[0].Subject == nil || diags[0].Subject.Start.Line != 3 {
		t.Errorf("got: %v\nwant: one error at line 3: %s", diags, want)
	}
	for _, d := range diags {
		if strings.Contains(d.Summary+d.Detail, "SECRETTAG") {
			t.Errorf("the secret default is quoted: %s", d.Detail)
		}
	}
	if _, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(fmt.Sprintf(src, `["calc", "shell::read"]`))}); diags.HasErrors() {
		t.Errorf("well-formed secret default got: %v\nwant: no error", diags)
	}
}

// TestHoldsStarTag: holds() with a "*" segment written out is a warning at
// the tag: "*" is not a wildcard, so !holds(a, "shell::*") passes for an
// agent holding "shell::exec".
func TestHoldsStarTag(t *testing.T) {
	src := `
agent "a" {
  capabilities = ["shell::exec"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

check "no_shell" {
  assert {
    condition     = !holds("a", "shell::*")
    error_message = "a holds shell"
  }
}
`
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got *hcl.Diagnostic
	for _, d := range diags {
		if d.Summary == `"*" is not a wildcard` {
			got = d
		}
	}
	if got == nil || got.Severity != hcl.DiagWarning || got.Subject == nil || got.Subject.Start.Line != 15 || !strings.Contains(got.Detail, `holds(agent, "shell::*") is true only for an agent holding "shell::*"`) {
		t.Errorf("got: %v\nwant: a warning at line 15 that * is not a wildcard", got)
	}
}

// TestStarTagText: the "*" warning says what a tag with a "*" segment
// grants when held and what satisfies it when required, by the prefix
// rule: a tool requiring "github::*" is reached by agents holding
// "github::*" or "github", not "github::*::read".
func TestStarTagText(t *testing.T) {
	for tag, want := range map[string]string{
		"*":           `a tool requiring it is reached only by agents holding "*".`,
		"github::*":   `a tool requiring it is reached only by agents holding "github::*" or a namespace it starts with, like "github".`,
		"*::read":     `a tool requiring it is reached only by agents holding "*::read" or a namespace it starts with, like "*".`,
		"a::*::write": `an agent holding "a::*::write" is granted only it and the tags under it`,
	} {
		if got := starTagText(tag); !strings.Contains(got, want) {
			t.Errorf("starTagText(%q)\ngot:  %s\nwant: ...%s", tag, got, want)
		}
	}
}

// TestCheckNestingHeredoc: a heredoc's text is a template, not code: its
// dashes and brackets do not count as nesting (a prompt with a line of 300
// dashes is valid), while an interpolation inside it still does.
func TestCheckNestingHeredoc(t *testing.T) {
	dashes := strings.Repeat("-", 3*MaxNesting)
	for _, tc := range []struct {
		name, src string
		deep      bool
	}{
		{"dashes", "x = <<EOT\n" + dashes + "\n" + strings.Repeat("[", 2*MaxNesting) + "\nEOT\ny = 1\n", false},
		{"indented, CRLF", "x = <<-EOT\r\n  " + dashes + "\r\n  EOT\r\ny = !!true\r\n", false},
		{"literal interpolation", "x = <<EOT\n$${" + strings.Repeat("(", 2*MaxNesting) + "\nEOT\n", false},
		{"deep interpolation", "x = <<EOT\n${" + strings.Repeat("(", 2*MaxNesting) + strings.Repeat(")", 2*MaxNesting) + "}\nEOT\n", true},
		{"code after the heredoc", "x = <<EOT\ntext\nEOT\ny = " + strings.Repeat("[", 2*MaxNesting) + strings.Repeat("]", 2*MaxNesting) + "\n", true},
		{"unterminated", "x = <<EOT\n" + dashes + "\n", false},
		{"non-ASCII marker", "x = <<ÉTAPE\n" + dashes + "\nÉTAPE\n", false},
		// What HCL does not read as a heredoc must not hide the code after
		// it: each of these once let deep nesting reach the parser.
		{"opener inside a string", "a = \"<<EOT\n\"\nb = " + strings.Repeat("[", 2*MaxNesting) + strings.Repeat("]", 2*MaxNesting) + "\n", true},
		{"marker starting with a dash", "a = <<--EOT\nfoo\nb = " + strings.Repeat("[", 2*MaxNesting) + strings.Repeat("]", 2*MaxNesting) + "\n", true},
		{"escaped interpolation in a string", "a = \"$${\"\nb = " + strings.Repeat("[", 2*MaxNesting) + strings.Repeat("]", 2*MaxNesting) + "\n", true},
	} {
		if d := CheckNesting("a.acl", []byte(tc.src)); (d != nil) != tc.deep {
			t.Errorf("%s: got %v, want too deep: %v", tc.name, d, tc.deep)
		}
	}
}

// TestCheckNestingTokens: the exact pass over HCL's tokens refuses what the
// quick scan does, and reads strings as the parser does: the inputs that
// once slipped past the quick scan (a heredoc opener in a string, a marker
// starting with a dash, an escaped interpolation) are refused, and a file
// whose strings hold many brackets and dashes, which sends CheckNesting to
// the tokens, is accepted.
func TestCheckNestingTokens(t *testing.T) {
	deep := strings.Repeat("[", 2*MaxNesting) + strings.Repeat("]", 2*MaxNesting)
	for _, src := range []string{
		"a = \"<<EOT\n\"\nb = " + deep + "\n",
		"a = <<--EOT\nfoo\nb = " + deep + "\n",
		"a = \"$${\"\nb = " + deep + "\n",
		"a = " + strings.Repeat("-", 2*MaxNesting) + "1\n",
	} {
		if d := tokenNesting("a.acl", []byte(src)); d == nil || d.Summary != "Manifest nested too deeply" {
			t.Errorf("tokenNesting(%.40q...): got %v, want refused", src, d)
		}
	}
	text := "a = \"" + strings.Repeat("[{(", 100) + "\"\nb = <<EOT\n" + strings.Repeat("-", 500) + "\nEOT\nc = [[1]]\n"
	if _, skipped := scanNesting("a.acl", []byte(text)); !skipped {
		t.Errorf("the quick scan did not note the brackets and dashes it read as text")
	}
	if d := CheckNesting("a.acl", []byte(text)); d != nil {
		t.Errorf("CheckNesting of strings full of brackets and dashes: %v, want accepted", d)
	}
}

// TestCheckNestingChains: what the parser folds into one deep tree, or
// nests across separate brackets, is counted per expression by both
// passes (a comma, or a line break outside brackets, starts a new one):
// conditional chains (a ? b : c ? ...), operator, index and splat chains,
// conditionals whose branches are bracketed, unary runs and conditionals
// across the lines of an interpolation, and %{if}/%{for} directives. Each
// of these, a few hundred thousand long, once ended validate with a fatal
// stack overflow (or, for %{for}, ran for an hour). Long lists, objects
// and many attributes are not chains.
func TestCheckNestingChains(t *testing.T) {
	long := MaxChain + 10
	deep := MaxNesting + 10
	for _, tc := range []struct {
		name, src string
		deep      bool
	}{
		{"conditional chain", "x = " + strings.Repeat("true ? 1 : ", deep) + "1\n", true},
		{"conditional chain across lines in brackets", "x = [\n" + strings.Repeat("true ? 1 :\n", deep) + "1]\n", true},
		{"conditionals in many attributes", "locals {\n" + strings.Repeat("  a = true ? 1 : 2\n", deep) + "}\n", false},
		{"conditionals in many items", "x = [" + strings.Repeat("true ? 1 : 2, ", deep) + "]\n", false},
		{"conditionals in many attributes ending in comments", "locals {\n" + strings.Repeat("  a = b ? \"How?\" : \"Hi?\" // greeting (prod)\n  c = d ? 1 : 2 # longer (prod)\n", deep) + "}\n", false},
		{"operator chain across lines of an object for", "x = {for k in [1] : k => 1" + strings.Repeat("\n+1", long) + "}\n", true},
		{"unary run across lines of an object for", "x = {for k in [1] : k => " + strings.Repeat("-\n", deep) + "1}\n", true},
		{"an object whose key starts with for", "x = {\n" + strings.Repeat("  format = 1 + 2\n", long) + "}\n", false},
		{"splat chain", "x = a" + strings.Repeat("[*]", long) + "\n", true},
		{"index chain", "x = a" + strings.Repeat("[b]", long) + "\n", true},
		{"attribute splat chain", "x = a" + strings.Repeat(".*.b[0]", long) + "\n", true},
		{"operator chain", "x = 1" + strings.Repeat("+1", long) + "\n", true},
		{"conditionals with bracketed branches", "x = " + strings.Repeat("a?(b):", deep) + "c\n", true},
		{"unary run across lines of an interpolation", "x = \"${" + strings.Repeat("!\n", deep) + "true}\"\n", true},
		{"conditionals across lines of an interpolation", "x = <<EOT\n${" + strings.Repeat("a?\n", deep) + "b" + strings.Repeat("\n:c", deep) + "}\nEOT\n", true},
		{"if directives", "x = \"" + strings.Repeat("%{if a}", deep) + strings.Repeat("%{endif}", deep) + "\"\n", true},
		{"for directives", "x = \"" + strings.Repeat("%{ for x in a }", deep) + strings.Repeat("%{ endfor }", deep) + "\"\n", true},
		{"chains nested in brackets", "x = " + strings.Repeat(strings.Repeat("1+", MaxChain/8)+"(", 10) + "1" + strings.Repeat(")", 10) + "\n", true},
		{"a long list", "x = [" + strings.Repeat("1, -2, a[0], ", long) + "]\n", false},
		{"a long object", "x = {\n" + strings.Repeat("  k = 1 + 2\n", long) + "}\n", false},
		{"a long string concatenation", "x = " + strings.Repeat(`"a" + `, 100) + `"b"` + "\n", false},
		{"directives in sequence", "x = \"" + strings.Repeat("%{if a}x%{endif}", long) + "\"\n", false},
	} {
		for _, check := range []struct {
			name string
			f    func(string, []byte) *hcl.Diagnostic
		}{{"scan", func(n string, b []byte) *hcl.Diagnostic { d, _ := scanNesting(n, b); return d }}, {"tokens", tokenNesting}} {
			if d := check.f("a.acl", []byte(tc.src)); (d != nil) != tc.deep {
				t.Errorf("%s, %s: got %v, want too deep: %v", tc.name, check.name, d, tc.deep)
			}
		}
	}
}

// TestCheckNestingJSONTemplates: in an .acl.json file a string is a
// template once its JSON escapes are decoded, so "\u0024{" opens an
// interpolation no scan of the raw bytes sees: each string is counted as
// the template it decodes to, and the error points at it.
func TestCheckNestingJSONTemplates(t *testing.T) {
	for _, tc := range []struct {
		name, str string
		deep      bool
	}{
		{"escaped interpolation, raw parentheses", `\u0024{` + strings.Repeat("(", 2*MaxNesting) + "1" + strings.Repeat(")", 2*MaxNesting) + "}", true},
		{"escaped interpolation and parentheses", `\u0024{` + strings.Repeat(`\u0028`, 2*MaxNesting) + "1" + strings.Repeat(`\u0029`, 2*MaxNesting) + "}", true},
		{"operator chain", `\u0024{1` + strings.Repeat("+1", MaxChain+10) + "}", true},
		{"escaped directives", strings.Repeat(`\u0025{if a}`, 2*MaxNesting) + strings.Repeat(`\u0025{endif}`, 2*MaxNesting), true},
		{"an ordinary template", `${upper("a")} and %{if true}b%{endif}`, false},
	} {
		src := `{"locals": {"ok": "x", "x": "` + tc.str + `"}}`
		d := CheckNesting("main.acl.json", []byte(src))
		if (d != nil) != tc.deep {
			t.Errorf("%s: got %v, want too deep: %v", tc.name, d, tc.deep)
		}
		if d != nil && d.Subject.Start.Byte != strings.Index(src, `"x": "`)+5 {
			t.Errorf("%s: error at byte %d, want %d (the string)", tc.name, d.Subject.Start.Byte, strings.Index(src, `"x": "`)+5)
		}
	}
}

// TestSingleColonTag: a single ":" in a tag is legal (part of a segment)
// and almost always a mistyped "::", so it is a warning at the tag with
// the tag it probably meant; "::" alone is not.
func TestSingleColonTag(t *testing.T) {
	src := `
agent "a" {
  capabilities = ["text:count", "math::add", "urn:x::y:z"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, d := range diags {
		if d.Summary == `Single ":" in a capability tag` {
			if d.Severity != hcl.DiagWarning || d.Subject == nil || d.Subject.Start.Line != 3 {
				t.Errorf("got: %v\nwant: a warning at line 3", d)
			}
			got = append(got, d.Detail)
		}
	}
	want := []string{
		`In "capabilities", the tag "text:count" has a single ":", which is part of a segment: segments are joined by "::". Did you mean "text::count"?`,
		`In "capabilities", the tag "urn:x::y:z" has a single ":", which is part of a segment: segments are joined by "::". Did you mean "urn::x::y::z"?`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:  %q\nwant: %q", got, want)
	}
}

// TestCommaTag: a "," in a tag is legal, but a session override lists
// its tags with commas and cannot name it, so it is a warning at the tag,
// asking about the tags it reads as when there are several.
func TestCommaTag(t *testing.T) {
	src := `
agent "a" {
  capabilities = ["math::add", "fs::read,fs::write", "odd,"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, d := range diags {
		if d.Summary == `Comma in a capability tag` {
			if d.Severity != hcl.DiagWarning || d.Subject == nil || d.Subject.Start.Line != 3 {
				t.Errorf("got: %v\nwant: a warning at line 3", d)
			}
			got = append(got, d.Detail)
		}
	}
	const because = `a session override (-capability-override, the X-Agentform-Capability-Override header) separates its tags with commas, so it cannot name this tag.`
	want := []string{
		`In "capabilities", the tag "fs::read,fs::write" holds a ",": ` + because + ` Did you mean the tags "fs::read" and "fs::write"?`,
		`In "capabilities", the tag "odd," holds a ",": ` + because,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:  %q\nwant: %q", got, want)
	}
}

// TestTypeNamesInMessages: a value of the wrong type is named as the
// manifest writes it ("a list" for ["npx", "-y"]), not by HCL's internal
// type names ("tuple").
func TestTypeNamesInMessages(t *testing.T) {
	src := `
tool "fs" {
  kind         = "mcp"
  transport    = "stdio"
  command      = ["npx", "server"]
  capabilities = "fs::read"
}

tool "api" {
  kind         = "mcp"
  transport    = "http"
  url          = "https://mcp.example.com/mcp"
  headers      = ["X-Team: docs"]
  capabilities = ["api"]
}
`
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	var got []string
	for _, d := range diags {
		if d.Summary == "Incorrect attribute value type" {
			got = append(got, d.Detail)
		}
	}
	want := []string{
		`The "command" argument must be a string, not a list.`,
		`The "capabilities" argument must be a list of strings, not a string.`,
		`The "headers" argument must be an object, like { key = "value" }, not a list.`,
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q\ngot: %q", w, got)
		}
	}
}

// TestCheckWithoutAssert: condition and error_message written in the
// check itself are reported where they are, saying they go in an assert
// block, and the check is not also called empty.
func TestCheckWithoutAssert(t *testing.T) {
	src := `
agent "a" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

check "no_shell" {
  condition     = holds("a", "shell")
  error_message = "a must not hold shell"
}
`
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%d: %s: %s", d.Subject.Start.Line, d.Summary, strings.SplitN(d.Detail, "\n", 2)[0]))
	}
	want := []string{
		`13: Unsupported argument: "condition" goes inside an assert block of the check:`,
		`14: Unsupported argument: "error_message" goes inside an assert block of the check:`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:  %q\nwant: %q", got, want)
	}
}

// TestListElementType: a list with an element that is no string is
// reported at the element, not as "must be a list of strings, not a
// list".
func TestListElementType(t *testing.T) {
	src := `
agent "a" {
  capabilities = ["text", ["skills"]]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%d:%d: %s", d.Subject.Start.Line, d.Subject.Start.Column, d.Detail))
	}
	want := []string{`3:27: Element 2 of "capabilities" must be a string, not a list.`}
	if !slices.Equal(got, want) {
		t.Errorf("got:  %q\nwant: %q", got, want)
	}
}

// TestWaiverReasonThatDoesNotEvaluate: a waiver reason that does not
// evaluate is that error alone, not also an empty reason.
func TestWaiverReasonThatDoesNotEvaluate(t *testing.T) {
	src := `
agent "a" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
waiver "AF105" {
  target = "agent.a"
  reason = "because ${nope}"
}
`
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	var got []string
	for _, d := range diags.Errs() {
		got = append(got, d.Error())
	}
	if len(got) != 1 || !strings.Contains(got[0], "Unknown variable") {
		t.Errorf("got: %q\nwant: one error, Unknown variable", got)
	}
}

// agentHeader is an agent block every test manifest below starts with.
const agentHeader = `
agent "a" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`

// errorsOf loads src as agent.acl and returns its errors as
// "line:column: summary: detail".
func errorsOf(t *testing.T, src string) []string {
	t.Helper()
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(agentHeader + src)})
	var got []string
	for _, d := range diags.Errs() {
		diag := d.(*hcl.Diagnostic)
		got = append(got, fmt.Sprintf("%d:%d: %s: %s", diag.Subject.Start.Line, diag.Subject.Start.Column, diag.Summary, diag.Detail))
	}
	return got
}

// TestRuntimeInsideString: runtime() written inside a string is an error
// that says what to write instead, not only that a string was required.
func TestRuntimeInsideString(t *testing.T) {
	got := errorsOf(t, `
tool "m" {
  kind      = "mcp"
  transport = "http"
  url       = "https://mcp.example.com/mcp"
  headers   = { Authorization = "Bearer ${secret(runtime("TOKEN"))}" }
}
`)
	if len(got) != 1 || !strings.HasPrefix(got[0], "16:43: Runtime value inside a string: ") ||
		!strings.Contains(got[0], `Authorization = secret(runtime("AUTH_HEADER"))`) ||
		!strings.Contains(got[0], "auth_token") {
		t.Errorf("got:  %q\nwant: one error at 16:43, Runtime value inside a string, saying to make the whole header a runtime value or use auth_token", got)
	}
}

// TestRuntimeElementOfBuildTimeList: runtime() as an element of a list
// that accepts no runtime value at all is refused as build-time, not with
// advice to make the whole argument a runtime value.
func TestRuntimeElementOfBuildTimeList(t *testing.T) {
	got := errorsOf(t, `
tool "sh" {
  kind     = "bash"
  commands = ["ls", runtime("EXTRA")]
}
`)
	want := []string{`14:14: Runtime value not allowed: The "commands" argument is read at build time, so it cannot contain runtime() or secret() values. Write the values in the manifest (a local works too).`}
	if !slices.Equal(got, want) {
		t.Errorf("got:  %q\nwant: %q", got, want)
	}
}

// TestCheckUndeclaredLocal: a check naming a local that does not exist
// gets the error every other argument gets, with its suggestion.
func TestCheckUndeclaredLocal(t *testing.T) {
	got := errorsOf(t, `
locals {
  agent = "a"
}
check "c" {
  assert {
    condition     = length(reachable(locals.agnt)) == 0
    error_message = "reaches ${locals.nope}"
  }
}
`)
	want := []string{
		`17:38: Reference to undeclared local value: There is no local named "agnt" in this workspace. Did you mean "agent"? Declare it in a locals block.`,
		`18:32: Reference to undeclared local value: There is no local named "nope" in this workspace. Declare it in a locals block.`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:  %q\nwant: %q", got, want)
	}
}

// TestInlineSkillResourceConflicts: resources of an inline skill that
// would be one file in its artifact (the generated SKILL.md, the same
// path written twice, names differing only in letter case or Unicode
// form) or a file and a directory are errors where they are written,
// found by validate rather than when apply builds the artifact.
func TestInlineSkillResourceConflicts(t *testing.T) {
	tests := []struct {
		resources string
		want      []string // "column: start of detail"
	}{
		{`{ "notes.md" = "a", "ref/b.md" = "b" }`, nil},
		{`{ "SKILL.md" = "a" }`, []string{`19: The resource "SKILL.md" names the skill's SKILL.md, which`}},
		{`{ "skill.md" = "a" }`, []string{`19: The resource "skill.md" names the skill's SKILL.md (file names`}},
		{`{ "A.txt" = "a", "a.txt" = "b" }`, []string{`34: The resources "A.txt" and "a.txt" name the same file`}},
		{`{ "a/./b" = "a", "a/b" = "b" }`, []string{`34: The resources "a/./b" and "a/b" name the same file`}},
		{`{ "a" = "a", "A/b" = "b" }`, []string{`30: The resource "A/b" lies in the directory "a", which`}},
	}
	for _, tt := range tests {
		t.Run(tt.resources, func(t *testing.T) {
			got := errorsOf(t, `
skill "s" {
  description = "d"
  content     = "c"
  resources   = `+tt.resources+`
}
`)
			if len(got) != len(tt.want) {
				t.Fatalf("got:  %q\nwant: %q", got, tt.want)
			}
			for i, w := range tt.want {
				col, detail, _ := strings.Cut(w, ": ")
				if !strings.HasPrefix(got[i], "15:"+col+": Conflicting skill resource: "+detail) {
					t.Errorf("got:  %q\nwant: %q", got[i], "15:"+col+": Conflicting skill resource: "+detail+"…")
				}
			}
		})
	}
}

// TestJSONByteOrderMark: a .acl.json file that starts with a byte order
// mark loads as the native syntax's files do, and an error in it is
// located as the file shows in an editor.
func TestJSONByteOrderMark(t *testing.T) {
	agent := `{"agent": {"a": {"capabilities": [], "graph": {"type": "react"}, "model": {"provider": "anthropic", "name": "claude-haiku-4-5"}}}}`
	cfg, diags := LoadSources("", map[string][]byte{"a.acl.json": []byte("\ufeff" + agent)})
	if diags.HasErrors() || len(cfg.Agents) != 1 {
		t.Fatalf("loading a JSON file with a byte order mark: %s", diags.Error())
	}
	_, diags = LoadSources("", map[string][]byte{"a.acl.json": []byte("\ufeff" + `{"agent": {"a": {"capabilities": [1 2]}}}`)})
	if len(diags) != 1 || diags[0].Subject == nil || diags[0].Subject.Start.Column != 39 {
		t.Errorf("diagnostics: %v, want one, at column 39 of line 1", diags)
	}
}

// TestMCPEmptyCommand: a stdio command that names no program is an error
// at the command, from validate, not advice from plan to install it; an
// empty argument is an argument like any other.
func TestMCPEmptyCommand(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{`""`, `15:15: Empty MCP server command: The "command" argument names the program that runs the MCP server, like "npx" or "./bin/server"; it must not be empty or only white space.`},
		{`"   "`, `15:15: Empty MCP server command: The "command" argument names`},
		{`runtime("CMD", " ")`, `15:15: Empty MCP server command: The "command" argument names the program that runs the MCP server, like "npx" or "./bin/server"; the default of runtime("CMD") is empty or only white space.`},
	} {
		got := errorsOf(t, `
tool "m" {
  kind      = "mcp"
  transport = "stdio"
  command   = `+tc.command+`
}
`)
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("command = %s\ngot:  %q\nwant: one error starting %q", tc.command, got, tc.want)
		}
	}
	for _, command := range []string{`"npx"`, `runtime("CMD")`, `runtime("CMD", "npx")`} {
		if got := errorsOf(t, `
tool "m" {
  kind      = "mcp"
  transport = "stdio"
  command   = `+command+`
  args      = ["", "--flag"]
}
`); len(got) != 0 {
			t.Errorf("command = %s\ngot:  %q\nwant: no error", command, got)
		}
	}
}

// TestInvalidHeaders: a header written in the manifest that no HTTP
// request can carry, by net/http's rules, is an error at its name or
// value from validate (not plan's error at the url), for mcp, a2a and the
// network block, and so is a token or user agent with a line break; no
// value is quoted.
func TestInvalidHeaders(t *testing.T) {
	for _, tc := range []struct {
		name, block string
		want        []string
	}{
		{"a name with a space", `
tool "m" {
  kind      = "mcp"
  transport = "http"
  url       = "https://mcp.example.com/mcp"
  headers   = { "Bad Header" = "x" }
}`, []string{`16:17: Invalid HTTP header name: "Bad Header" is not a valid HTTP header name: a name is letters, digits and !#$%&'*+-.^_` + "`" + `|~, without spaces, a colon or a line break, like "X-Api-Key". Did you mean "Bad-Header"?`}},
		{"a whole header line as the name", `
tool "r" {
  kind    = "a2a"
  url     = "https://agent.example.com"
  headers = { "Authorization: Bearer" = "x" }
}`, []string{`15:15: Invalid HTTP header name: "Authorization: Bearer" is not a valid HTTP header name: a name is letters, digits and !#$%&'*+-.^_` + "`" + `|~, without spaces, a colon or a line break, like "X-Api-Key". Write the name alone as the key and the rest as the value: { "Authorization" = "..." }.`}},
		{"a name with a line break", `
tool "r" {
  kind    = "a2a"
  url     = "https://agent.example.com"
  headers = { "X-A\nX-B" = "x" }
}`, []string{`15:15: Invalid HTTP header name: "X-A\nX-B" is not a valid HTTP header name`}},
		{"values with a line break, a CR, a NUL, in a runtime default", `
tool "m" {
  kind      = "mcp"
  transport = "http"
  url       = "https://mcp.example.com/mcp"
  headers   = {
    X-A = "SENTINEL\nX-Evil: 1"
    X-B = "SENTINEL\r"
    X-C = "SENTINEL\u0000"
    X-D = runtime("X_D", "SENTINEL\n")
    X-E = secret(runtime("X_E", "SENTINEL\n"))
    X-F = runtime("X_F")
    X-G = 42
  }
}`, []string{
			`17:11: Invalid HTTP header value: The value of header "X-A" is not a valid HTTP header value: it holds a line break, a NUL or another control character. Write it as a quoted string on one line (a heredoc ends with a line break).`,
			`18:11: Invalid HTTP header value: The value of header "X-B" is not`,
			`19:11: Invalid HTTP header value: The value of header "X-C" is not`,
			`20:11: Invalid HTTP header value: The default of runtime("X_D") for header "X-D" is not a valid HTTP header value`,
			`21:11: Invalid HTTP header value: The default of runtime("X_E") for header "X-E" is not a valid HTTP header value`,
		}},
		{"a heredoc token", `
tool "r" {
  kind       = "a2a"
  url        = "https://agent.example.com"
  auth_token = <<EOT
SENTINEL
EOT
}`, []string{`15:16: Invalid value for "auth_token": The "auth_token" argument is sent in an HTTP header, but it holds a line break, a NUL or another control character.`}},
		{"network headers and user agent", `
network {
  user_agent = runtime("UA", "SENTINEL\n")
  headers    = { "X Y" = "1", X-Z = "SENTINEL\n" }
}`, []string{
			`13:16: Invalid value for "user_agent": The default of runtime("UA") for "user_agent" is sent in an HTTP header`,
			`14:18: Invalid HTTP header name: "X Y" is not a valid HTTP header name`,
			`14:37: Invalid HTTP header value: The value of header "X-Z" is not`,
		}},
	} {
		got := errorsOf(t, tc.block+"\n")
		if len(got) != len(tc.want) {
			t.Errorf("%s\ngot:  %q\nwant: %q", tc.name, got, tc.want)
			continue
		}
		slices.Sort(got)
		for i, w := range tc.want {
			if !strings.HasPrefix(got[i], w) || strings.Contains(got[i], "SENTINEL") {
				t.Errorf("%s\ngot:  %q\nwant: %q, without the value", tc.name, got[i], w)
			}
		}
	}
	// Header values HTTP can carry, and runtime values, which are checked
	// when they are read.
	if got := errorsOf(t, `
tool "m" {
  kind       = "mcp"
  transport  = "http"
  url        = "https://mcp.example.com/mcp"
  auth_token = secret(runtime("TOKEN"))
  headers    = { "X-Api-Key" = secret(runtime("KEY")), "Accept-Language" = "fr, en;q=0.8", "X_Odd!~" = "tab\tok", X-N = 1 }
}
`); len(got) != 0 {
		t.Errorf("valid headers\ngot:  %q\nwant: no error", got)
	}
}

// TestEmptyExport: export = "" on a javascript or python tool is an error
// at the export, not the tool's name in disguise.
func TestEmptyExport(t *testing.T) {
	for _, kind := range []string{"javascript", "python"} {
		for _, export := range []string{`""`, `"  "`} {
			got := errorsOf(t, `
tool "adder" {
  kind   = "`+kind+`"
  source = "./tools/adder"
  export = `+export+`
}
`)
			want := []string{`15:12: Invalid value for "export": export must name an export; leave it out to use the tool's name ("adder").`}
			if !slices.Equal(got, want) {
				t.Errorf("%s, export = %s\ngot:  %q\nwant: %q", kind, export, got, want)
			}
		}
		if got := errorsOf(t, `
tool "adder" {
  kind   = "`+kind+`"
  source = "./tools/adder"
  export = "add"
}
`); len(got) != 0 {
			t.Errorf("%s, export = \"add\"\ngot:  %q\nwant: no error", kind, got)
		}
	}
}

// TestCheckNull: a check's error_message or condition that is null is an
// error at it from validate: a failing check would otherwise say only that
// it failed (or plan would find the condition is no bool).
func TestCheckNull(t *testing.T) {
	for _, tc := range []struct{ condition, message, want string }{
		{`can_call("a", "x")`, `null`, `15:21: Invalid error message: The error_message must be a string, not null: write what the failed check means, like "assistant must never reach the shell".`},
		{`can_call("a", "x")`, `locals.none`, `15:21: Invalid error message: The error_message must be a string, not null`},
		{`null`, `"x"`, `14:21: Invalid check condition: The condition must be true or false, not null.`},
	} {
		got := errorsOf(t, `
check "c" {
  assert {
    condition     = `+tc.condition+`
    error_message = `+tc.message+`
  }
}
locals {
  none = null
}
`)
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("condition = %s, error_message = %s\ngot:  %q\nwant: one error starting %q", tc.condition, tc.message, got, tc.want)
		}
	}
	// A message null only for some matrices is the plan's to report.
	if got := errorsOf(t, `
check "c" {
  assert {
    condition     = can_call("a", "x")
    error_message = can_call("a", "x") ? null : "a cannot call x"
  }
}
`); len(got) != 0 {
		t.Errorf("a conditional message\ngot:  %q\nwant: no error", got)
	}
}

// TestOneOfCaseSuggestion: a value that differs from an allowed one only
// in case ("get" for "GET") is refused with that value suggested.
func TestOneOfCaseSuggestion(t *testing.T) {
	got := errorsOf(t, `
network {
  policy {
    methods = ["get", "Post"]
  }
}
tool "sh" {
  kind     = "bash"
  commands = ["curl"]
  network {
    enabled         = true
    allowed_methods = ["delete"]
  }
}
tool "m" {
  kind = "MCP"
}
`)
	want := []string{
		`14:16: Invalid value for "methods": "get" is not a valid value for "methods". Valid values: "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE". Did you mean "GET"?`,
		`14:23: Invalid value for "methods": "Post" is not a valid value for "methods". Valid values: "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE". Did you mean "POST"?`,
		`22:24: Invalid value for "allowed_methods": "delete" is not a valid value for "allowed_methods". Valid values: "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE". Did you mean "DELETE"?`,
		`26:10: Invalid value for "kind": "MCP" is not a valid value for "kind". Valid values: "a2a", "bash", "javascript", "mcp", "python". Did you mean "mcp"?`,
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("got:  %q\nwant: %q", got, want)
	}
}

// TestUndeclaredProviderSuggestion: a model provider that is a typo of a
// declared one is suggested.
func TestUndeclaredProviderSuggestion(t *testing.T) {
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(`
providers {
  anthropic {
    models = ["claude-haiku-4-5"]
  }
}
agent "a" {
  capabilities = []
  graph {
    type = "react"
  }
  model {
    provider = "anthropc"
    name     = "claude-haiku-4-5"
  }
}
`)})
	if len(diags) != 1 || diags[0].Summary != "Undeclared model provider" || !strings.Contains(diags[0].Detail, `declares only "anthropic". Did you mean "anthropic"? Declare it`) {
		t.Errorf("diagnostics: %v, want the undeclared provider with a suggestion", diags)
	}
}

// TestUnsupportedListsValid: an unknown argument or block with no close
// name lists what the block takes; one with a close name suggests it
// alone.
func TestUnsupportedListsValid(t *testing.T) {
	src := `
agent "a" {
  foo = 1
  descripton = "x"
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "b" {
  kind         = "bash"
  description  = "Lists."
  commands     = ["ls"]
  script       = "ls"
  capabilities = ["shell"]
}

bogus "x" {}
`
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%d: %s: %s", d.Subject.Start.Line, d.Summary, d.Detail))
	}
	want := []string{
		`3: Unsupported argument: An argument named "foo" is not expected here. Valid here: "capabilities", "capability_policy", "description", "graph", "model", "prompt", "version".`,
		`4: Unsupported argument: An argument named "descripton" is not expected here. Did you mean "description"?`,
		`18: Unsupported argument: An argument named "script" is not expected here. Valid here: "capabilities", "commands", "config", "cwd", "description", "enabled", "env", "fs", "kind", "limits", "network", "shared".`,
		`22: Unsupported block type: Blocks of type "bogus" are not expected here. Valid here: "agent", "block", "build", "check", "filesystem", "http_server", "locals", "network", "provider", "providers", "runtime", "skill", "tool", "waiver".`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFileInLocals: file() works in locals as everywhere else a
// build-time value is written (a prompt kept in a file and used twice),
// with the same rules: a path outside the workspace is a located error.
func TestFileInLocals(t *testing.T) {
	dir := t.TempDir()
	agent := `
agent "a" {
  capabilities = []
  description  = locals.about
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "about.md"), []byte("Answers questions about the handbook.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte("locals {\n  about = file(\"about.md\")\n}\n"+agent), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := Load(dir)
	if diags.HasErrors() {
		t.Fatalf("diagnostics: %s", diagLines(diags))
	}
	if got := cfg.Agents[0].Description.Value; got != "Answers questions about the handbook.\n" {
		t.Errorf("description from a local read with file(): %q", got)
	}

	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte("locals {\n  about = file(\"../outside.md\")\n}\n"+agent), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags = Load(dir)
	if !diags.HasErrors() || diags[0].Subject == nil || diags[0].Subject.Start.Line != 2 || !strings.Contains(diags[0].Detail, "stays inside it") {
		t.Errorf("file() leaving the workspace in a local: %s\nwant: an error at line 2 saying the path must stay inside", diagLines(diags))
	}
}

// TestLocalNotSuggestedToItself: a local referring to a mistyped name is
// not told to refer to itself, which would be a cycle; another local close
// to the name still is.
func TestLocalNotSuggestedToItself(t *testing.T) {
	for _, tc := range []struct{ locals, want string }{
		{"region = locals.regio", "There is no local named \"regio\" in this workspace. Declare it"},
		{"region = locals.regio\n  regions = \"eu\"", "Did you mean \"regions\"?"},
		// A local built from this one would be a cycle too.
		{"region = locals.regio\n  regi = \"${locals.region}-1\"", "There is no local named \"regio\" in this workspace. Declare it"},
	} {
		_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte("locals {\n  " + tc.locals + "\n}\n")})
		if len(diags) == 0 || diags[0].Summary != "Reference to undeclared local value" || !strings.Contains(diags[0].Detail, tc.want) {
			t.Errorf("%s: %v\nwant: the undeclared local, with %q", tc.locals, diags, tc.want)
		}
	}
}

// TestUnknownProviderKind: without a providers block, model.provider is
// a kind, and one agentform does not know (a typo) is a located error
// with the closest kind, rather than an artifact no host can run.
func TestUnknownProviderKind(t *testing.T) {
	agent := func(provider string) []byte {
		return []byte(`
agent "a" {
  capabilities = []
  graph {
    type = "react"
  }
  model {
    provider = ` + provider + `
    name     = "claude-haiku-4-5"
  }
}
`)
	}
	_, diags := LoadSources("", map[string][]byte{"agent.acl": agent(`"anthropc"`)})
	if len(diags) != 1 || diags[0].Summary != "Unknown model provider" || diags[0].Subject == nil || diags[0].Subject.Start.Line != 8 ||
		!strings.Contains(diags[0].Detail, `uses provider "anthropc", which is none of the kinds agentform knows`) || !strings.Contains(diags[0].Detail, `Did you mean "anthropic"?`) {
		t.Errorf("diagnostics: %v\nwant: the unknown kind at line 8, with a suggestion", diags)
	}
	for _, ok := range []string{`"openai"`, `runtime("MODEL_PROVIDER")`} {
		if _, diags := LoadSources("", map[string][]byte{"agent.acl": agent(ok)}); diags.HasErrors() {
			t.Errorf("provider = %s: %v", ok, diags)
		}
	}
	// A provider written but in error has that error alone: the agent
	// names a declared provider, not a kind.
	for _, prov := range []string{"provider \"main\" {\n  models = [\"claude-haiku-4-5\"]\n}\n", "providers {\n  anthropik {\n  }\n}\n"} {
		_, diags := LoadSources("", map[string][]byte{"agent.acl": append([]byte(prov), agent(`"main"`)...)})
		for _, d := range diags {
			if d.Summary == "Unknown model provider" {
				t.Errorf("%s: %v\nwant: the provider's own error alone", prov, diags)
			}
		}
		if !diags.HasErrors() {
			t.Errorf("%s: no error", prov)
		}
	}
}

// TestRuntimeURLDefault: the default of a runtime() url that is no
// secret is checked when the manifest loads, with a warning at the
// runtime() call; a secret's is left to plan, which does not quote it.
func TestRuntimeURLDefault(t *testing.T) {
	tool := func(url string) []byte {
		return []byte("tool \"planner\" {\n  kind = \"a2a\"\n  url  = " + url + "\n  capabilities = []\n}\n" +
			"agent \"a\" {\n  capabilities = []\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n")
	}
	_, diags := LoadSources("", map[string][]byte{"agent.acl": tool(`runtime("PLANNER_URL", "planner.internal:8080")`)})
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "Invalid A2A URL" || diags[0].Subject == nil || diags[0].Subject.Start.Column != 10 ||
		!strings.Contains(diags[0].Detail, `The default of runtime("PLANNER_URL") is used where PLANNER_URL is unset`) {
		t.Errorf("diagnostics: %v\nwant: a warning at the runtime() call", diags)
	}
	for _, ok := range []string{`runtime("PLANNER_URL", "https://planner.internal:8080")`, `secret(runtime("PLANNER_URL", "planner.internal:8080"))`, `runtime("PLANNER_URL")`} {
		if _, diags := LoadSources("", map[string][]byte{"agent.acl": tool(ok)}); len(diags) != 0 {
			t.Errorf("url = %s: %v, want no diagnostics", ok, diags)
		}
	}
}

// TestRuntimeMarkerInLocals: the serialised form of a runtime value is
// refused in locals as runtime() is, at any depth: a local would
// otherwise carry a runtime value where the language says it cannot.
func TestRuntimeMarkerInLocals(t *testing.T) {
	for _, local := range []string{
		`key = { "$runtime" = { env = "API_KEY", secret = true } }`,
		`keys = [{ headers = { "$runtime" = { env = "HDRS" } } }]`,
	} {
		_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte("locals {\n  " + local + "\n}\n")})
		if len(diags) == 0 || diags[0].Summary != "Runtime value in locals" || diags[0].Subject == nil || diags[0].Subject.Start.Line != 2 {
			t.Errorf("%s: %v\nwant: Runtime value in locals at line 2", local, diags)
		}
	}
}

// TestInlineSkillResourceNames: an inline skill's resource named with a
// control character, or a path too long for an artifact, is a located
// error at its key rather than an unlocated apply failure.
func TestInlineSkillResourceNames(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{`a\u0001b.md`, "the path contains a control character"},
		{strings.Repeat("d/", 2100) + "x.md", "the path is longer than 4096 bytes"},
	} {
		got := errorsOf(t, `
skill "s" {
  description = "d"
  content     = "c"
  resources   = { "`+tc.key+`" = "text" }
}
`)
		if len(got) != 1 || !strings.HasPrefix(got[0], "15:19: Invalid resource path: The resource path ") || !strings.Contains(got[0], "cannot be a path of the skill's artifact files: "+tc.want) {
			t.Errorf("%.40s: %q\nwant: an error at the key saying %s", tc.key, got, tc.want)
		}
	}
}

// TestFileLinkOutside: file() refuses a symbolic link in the workspace
// that leads outside it, whether the workspace is given as an absolute
// path or as a relative one (".", as when agentform runs in it).
func TestFileLinkOutside(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	src := "agent \"a\" {\n  prompt = file(\"link.txt\")\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(how, workspace string) {
		t.Helper()
		cfg, diags := Load(workspace)
		if !diags.HasErrors() || !strings.Contains(diags.Error(), `"link.txt" leads outside the workspace (through a symbolic link)`) {
			t.Errorf("%s: %s\nwant: the link refused", how, diagLines(diags))
		}
		if cfg != nil && len(cfg.Agents) > 0 && cfg.Agents[0].Prompt != nil && strings.Contains(fmt.Sprint(cfg.Agents[0].Prompt), "root:x") {
			t.Errorf("%s: the file outside was read into the prompt", how)
		}
	}
	check("absolute", dir)
	t.Chdir(dir)
	check("relative", ".")
}

// TestLocalsScale: locals are evaluated in dependency order with only
// what each refers to in scope, so a long chain loads in linear time,
// and a local that outgrows MaxLocalSize (doubling from one local to
// the next) is a located error instead of exhausting memory.
func TestLocalsScale(t *testing.T) {
	var b strings.Builder
	b.WriteString("locals {\n")
	const n = 20000
	for i := range n - 1 {
		fmt.Fprintf(&b, "  v%05d = \"${locals.v%05d}\"\n", i, i+1)
	}
	fmt.Fprintf(&b, "  v%05d = \"end\"\n}\n", n-1)
	b.WriteString("agent \"a\" {\n  description = locals.v00000\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n")
	cfg, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(b.String())})
	if diags.HasErrors() {
		t.Fatalf("a chain of %d locals: %s", n, diagLines(diags))
	}
	if got := cfg.Agents[0].Description.Value; got != "end" {
		t.Errorf("the description from the chain's first local = %q, want \"end\"", got)
	}

	b.Reset()
	b.WriteString("locals {\n  v00 = \"xx\"\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "  v%02d = \"${locals.v%02d}${locals.v%02d}\"\n", i, i-1, i-1)
	}
	b.WriteString("}\n")
	_, diags = LoadSources("", map[string][]byte{"agent.acl": []byte(b.String())})
	if len(diags) != 1 || diags[0].Summary != "Local value too large" || diags[0].Subject.Start.Line != 25 {
		t.Errorf("doubling locals: %s\nwant: one error, Local value too large at line 25 (v23, 32 MiB)", diagLines(diags))
	}
}

// TestLocalsReadWhole: a local that reads locals as a whole (a for over
// them, a computed key) is evaluated once every other local it can be is,
// so it sees them, whatever their names; and locals that each copy one
// large local are bounded in all (MaxLocalsSize), not only one by one.
func TestLocalsReadWhole(t *testing.T) {
	agent := "agent \"a\" {\n  description = locals.z\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n"
	for src, want := range map[string]string{
		"locals {\n  a = \"x\"\n  b = \"${locals.a}-b\"\n  z = \"%{ for k, v in locals }${k},%{ endfor }\"\n}\n": "a,b,",
		"locals {\n  a = \"x\"\n  b = \"${locals.a}-b\"\n  z = locals[true ? \"b\" : \"a\"]\n}\n":                "x-b",
		// One that others name waits for the rest, and they for it.
		"locals {\n  a = \"x\"\n  m = \"${locals.y}!\"\n  y = \"%{ for k, v in locals }${k},%{ endfor }\"\n  z = \"${locals.m}${locals.a}\"\n}\n": "a,!x",
	} {
		cfg, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src + agent)})
		if diags.HasErrors() {
			t.Errorf("%s: %s", src, diagLines(diags))
			continue
		}
		if got := cfg.Agents[0].Description.Value; got != want {
			t.Errorf("%s\ngot:  %q\nwant: %q", src, got, want)
		}
	}

	var b strings.Builder
	b.WriteString("locals {\n  s00 = \"0123456789abcdef\"\n")
	for i := 1; i < 20; i++ {
		fmt.Fprintf(&b, "  s%02d = \"${locals.s%02d}${locals.s%02d}\"\n", i, i-1, i-1)
	}
	for i := range 40 {
		fmt.Fprintf(&b, "  w%02d = \"${locals.s19}-%d\"\n", i, i)
	}
	b.WriteString("}\n")
	_, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(b.String())})
	if len(diags) != 1 || diags[0].Summary != "Locals too large" {
		t.Errorf("forty copies of an 8 MiB local: %s\nwant: one error, Locals too large", diagLines(diags))
	}
}
