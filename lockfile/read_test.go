package lockfile

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// goodJS is a valid javascript entry, for cases that break one thing.
var goodJS = `tool "adder" {
  kind    = "javascript"
  source  = "` + h1("a") + `"
  bundle  = "` + sha("b") + `"
  bundler = "esbuild 0.28.2"
}
`

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		src     string
		summary string
		line    int
		// detail, when set, must appear in the first error's detail.
		detail string
	}{
		{
			name:    "unknown attribute",
			src:     "tool \"adder\" {\n  kind  = \"javascript\"\n  sorce = \"" + h1("a") + "\"\n}\n",
			summary: "Unsupported argument", line: 3, detail: `Did you mean "source"?`,
		},
		{
			name:    "unknown block",
			src:     goodJS + "\ntols \"x\" {\n}\n",
			summary: "Unsupported block type", line: 8, detail: `Did you mean "tool"?`,
		},
		{
			name:    "attribute at top level",
			src:     "kind = \"mcp\"\n",
			summary: "Unsupported argument", line: 1,
		},
		{
			name:    "block inside an entry",
			src:     "tool \"gh\" {\n  kind = \"mcp\"\n  server {\n    name = \"x\"\n  }\n}\n",
			summary: "Unsupported block type", line: 3, detail: `Did you mean to define argument "server"?`,
		},
		{
			name:    "attribute of another kind",
			src:     "tool \"adder\" {\n  kind = \"javascript\"\n  card = \"" + sha("c") + "\"\n}\n",
			summary: "Unsupported argument", line: 3, detail: `not expected in a javascript tool entry`,
		},
		{
			name:    "bad h1 hash",
			src:     "skill \"s\" {\n  source = \"h1:abc\"\n}\n",
			summary: "Invalid hash", line: 2, detail: `base64 of 32 bytes`,
		},
		{
			name:    "sha256 where h1 belongs",
			src:     "tool \"adder\" {\n  kind   = \"javascript\"\n  source = \"" + sha("a") + "\"\n}\n",
			summary: "Invalid hash", line: 3, detail: `"source" value must be a dirhash "h1:" digest`,
		},
		{
			name:    "uppercase sha256",
			src:     "tool \"adder\" {\n  kind   = \"javascript\"\n  bundle = \"" + strings.ToUpper(sha("a")) + "\"\n}\n",
			summary: "Invalid hash", line: 3, detail: `64 lowercase hexadecimal digits`,
		},
		{
			name:    "short sha256",
			src:     "tool \"p\" {\n  kind = \"a2a\"\n  card = \"sha256:abcd\"\n}\n",
			summary: "Invalid hash", line: 3,
		},
		{
			name:    "bad served tool digest",
			src:     "tool \"gh\" {\n  kind = \"mcp\"\n  tools = {\n    \"a\" = \"" + sha("a") + "\"\n    \"b\" = \"md5:00\"\n  }\n}\n",
			summary: "Invalid hash", line: 5, detail: `"tools" value`,
		},
		{
			name:    "duplicate tool",
			src:     goodJS + "\n" + goodJS,
			summary: "Duplicate tool entry", line: 8, detail: "already declared at line 1",
		},
		{
			name:    "duplicate skill",
			src:     "skill \"s\" {\n  source = \"" + h1("a") + "\"\n}\nskill \"s\" {\n  source = \"" + h1("a") + "\"\n}\n",
			summary: "Duplicate skill entry", line: 4, detail: "already declared at line 1",
		},
		{
			name:    "duplicate key",
			src:     "tool \"gh\" {\n  kind = \"mcp\"\n  tools = {\n    \"a\" = \"" + sha("a") + "\"\n    a = \"" + sha("b") + "\"\n  }\n}\n",
			summary: "Duplicate key", line: 5, detail: "already set at line 4",
		},
		{
			name:    "duplicate attribute",
			src:     "tool \"gh\" {\n  kind = \"mcp\"\n  kind = \"mcp\"\n}\n",
			summary: "Attribute redefined", line: 3,
		},
		{
			name:    "wrong type: number",
			src:     "tool \"p\" {\n  kind         = \"a2a\"\n  card_version = 1\n}\n",
			summary: "Incorrect attribute value type", line: 3, detail: `"card_version" argument must be a string, not number`,
		},
		{
			name:    "wrong type: null",
			src:     "tool \"p\" {\n  kind = null\n}\n",
			summary: "Incorrect attribute value type", line: 2, detail: "not null",
		},
		{
			name:    "wrong type: list for string",
			src:     "skill \"s\" {\n  source = [\"" + h1("a") + "\"]\n}\n",
			summary: "Incorrect attribute value type", line: 2, detail: "not tuple",
		},
		{
			name:    "wrong type: string for map",
			src:     "tool \"gh\" {\n  kind  = \"mcp\"\n  tools = \"" + sha("a") + "\"\n}\n",
			summary: "Incorrect attribute value type", line: 3, detail: `"tools" argument must be an object`,
		},
		{
			name:    "wrong type: string for list",
			src:     "tool \"gh\" {\n  kind          = \"mcp\"\n  hashed_fields = \"name\"\n}\n",
			summary: "Incorrect attribute value type", line: 3, detail: `list of field names`,
		},
		{
			name:    "wrong type: list element",
			src:     "tool \"gh\" {\n  kind          = \"mcp\"\n  hashed_fields = [\"name\",\n    true]\n}\n",
			summary: "Incorrect attribute value type", line: 4, detail: `element of "hashed_fields" must be a string, not bool`,
		},
		{
			name:    "duplicate hashed field",
			src:     "tool \"gh\" {\n  kind          = \"mcp\"\n  hashed_fields = [\"name\", \"name\"]\n}\n",
			summary: "Duplicate hashed field", line: 3,
		},
		{
			name:    "unknown server field",
			src:     "tool \"gh\" {\n  kind   = \"mcp\"\n  server = { name = \"x\", verison = \"1\" }\n}\n",
			summary: "Unsupported server field", line: 3, detail: `Did you mean "version"?`,
		},
		{
			name:    "definition not JSON",
			src:     "tool \"gh\" {\n  kind = \"mcp\"\n  definitions = {\n    \"a\" = \"{not json\"\n  }\n}\n",
			summary: "Invalid tool definition", line: 4,
		},
		{
			name:    "card_json not JSON",
			src:     "tool \"p\" {\n  kind      = \"a2a\"\n  card_json = \"{not json\"\n}\n",
			summary: "Invalid agent card", line: 3,
		},
		{
			name:    "card_json on another kind",
			src:     "tool \"p\" {\n  kind      = \"mcp\"\n  card_json = \"{}\"\n}\n",
			summary: "Unsupported argument", line: 3,
		},
		{
			name:    "empty served tool name",
			src:     "tool \"gh\" {\n  kind = \"mcp\"\n  tools = {\n    \"\" = \"" + sha("a") + "\"\n  }\n}\n",
			summary: "Invalid served tool name", line: 4,
		},
		{
			name:    "invalid kind",
			src:     "tool \"sh\" {\n  kind = \"bash\"\n}\n",
			summary: "Invalid tool kind", line: 2, detail: `bash tools have no lock entry`,
		},
		{
			name:    "misspelt kind",
			src:     "tool \"js\" {\n  kind = \"JavaScript\"\n}\n",
			summary: "Invalid tool kind", line: 2, detail: `got "JavaScript". Did you mean "javascript"?`,
		},
		{
			name:    "missing kind",
			src:     "tool \"sh\" {\n  card = \"" + sha("a") + "\"\n}\n",
			summary: "Missing required argument", line: 1,
		},
		{
			name:    "invalid interpreter",
			src:     "tool \"w\" {\n  kind        = \"python\"\n  interpreter = \"pypy\"\n}\n",
			summary: "Invalid interpreter", line: 3,
		},
		{
			name:    "empty name",
			src:     "skill \"\" {\n  source = \"" + h1("a") + "\"\n}\n",
			summary: "Invalid entry name", line: 1,
		},
		{
			// No block has such a name, and printed as it is it would
			// reach the terminal as escape sequences.
			name:    "name with terminal escapes",
			src:     "\n\ntool \"evil\\u001b]0;pwned\\u0007\\u001b[2Jx\" {\n  kind   = \"javascript\"\n  source = \"" + h1("a") + "\"\n}\n",
			summary: "Invalid entry name", line: 3,
		},
		{
			name:    "name not a block name",
			src:     "skill \"1st\" {\n  source = \"" + h1("a") + "\"\n}\n",
			summary: "Invalid entry name", line: 1,
		},
		{
			name:    "missing name",
			src:     "tool {\n  kind = \"a2a\"\n}\n",
			summary: "Missing name for tool", line: 1,
		},
		{
			name:    "variable reference",
			src:     "tool \"p\" {\n  kind = var.kind\n}\n",
			summary: "Variables not allowed", line: 2,
		},
		{
			name:    "function call",
			src:     "tool \"p\" {\n  kind = lower(\"A2A\")\n}\n",
			summary: "Function calls not allowed", line: 2,
		},
		{
			name:    "syntax error: unclosed block",
			src:     goodJS + "\ntool \"b\" {\n  kind = \"a2a\"\n",
			summary: "Unclosed configuration block", line: 8,
		},
		{
			name:    "syntax error: missing equals",
			src:     "tool \"p\" {\n  kind \"a2a\"\n}\n",
			summary: "Invalid block definition", line: 2,
		},
		{
			name:    "syntax error: unterminated string",
			src:     "tool \"p\" {\n  kind = \"a2a\n}\n",
			summary: "Invalid multi-line string", line: 2,
		},
		{
			name:    "nested too deeply",
			src:     "tool \"p\" {\n  kind = \"a2a\"\n  card_name = " + strings.Repeat("[", 100000) + "\n}\n",
			summary: "Lockfile nested too deeply", line: 3,
		},
		{
			name:    "unary operators too deep",
			src:     "tool \"p\" {\n  kind = \"a2a\"\n\n  card_name = " + strings.Repeat("!", 100000) + "true\n}\n",
			summary: "Lockfile nested too deeply", line: 4,
		},
		{
			// A chain the parser folds into one deep tree: no bracket
			// nests, yet 400,000 of them overflow the stack.
			name:    "splat chain too long",
			src:     "tool \"p\" {\n  kind = \"a2a\"\n  card_name = a" + strings.Repeat("[*]", 400000) + "\n}\n",
			summary: "Lockfile nested too deeply", line: 3,
		},
		{
			name:    "operator chain too long",
			src:     "tool \"p\" {\n  kind = \"a2a\"\n  card_name = 1" + strings.Repeat("+1", 600000) + "\n}\n",
			summary: "Lockfile nested too deeply", line: 3,
		},
		{
			name:    "interpolations too deep",
			src:     "tool \"p\" {\n  card_name = \"" + strings.Repeat("${\"", 50000) + "\n}\n",
			summary: "Lockfile nested too deeply", line: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const file = "agentform.lock.hcl"
			f, diags := Parse([]byte(tc.src), file)
			if f == nil {
				t.Fatal("got: nil File\nwant: a File even on errors")
			}
			if !diags.HasErrors() {
				t.Fatalf("got: no errors\nwant: %s at line %d", tc.summary, tc.line)
			}
			first := diags[0]
			if first.Summary != tc.summary {
				t.Errorf("summary\ngot:  %s\nwant: %s\n(all: %v)", first.Summary, tc.summary, diags)
			}
			if first.Subject == nil {
				t.Fatalf("got: no Subject\nwant: line %d of %s", tc.line, file)
			}
			if first.Subject.Filename != file || first.Subject.Start.Line != tc.line {
				t.Errorf("location\ngot:  %s line %d\nwant: %s line %d\n(%v)", first.Subject.Filename, first.Subject.Start.Line, file, tc.line, first)
			}
			if tc.detail != "" && !strings.Contains(first.Detail, tc.detail) {
				t.Errorf("detail\ngot:  %s\nwant: it to contain %q", first.Detail, tc.detail)
			}
			// Every error says what to do about a file agentform writes.
			for _, d := range diags {
				if d.Severity == hcl.DiagError && !strings.Contains(d.Detail, `run "agentform lock"`) {
					t.Errorf("detail of %q\ngot:  %s\nwant: what to do (restore the file, or agentform lock)", d.Summary, d.Detail)
				}
			}
		})
	}
}

// TestParseReportsAll checks that one parse reports every broken entry,
// not just the first, and keeps the good ones.
func TestParseReportsAll(t *testing.T) {
	src := goodJS + `
tool "a" {
  kind = "a2a"
  card = "sha256:nope"
}

skill "s" {
  source = "h1:nope"
}
`
	f, diags := Parse([]byte(src), FileName)
	var got []int
	for _, d := range diags {
		got = append(got, d.Subject.Start.Line)
	}
	if len(got) != 2 || got[0] != 10 || got[1] != 14 {
		t.Errorf("got: errors at lines %v\nwant: [10 14]\n(%v)", got, diags)
	}
	if f.Tools["adder"] == nil || f.Tools["adder"].Bundler != "esbuild 0.28.2" {
		t.Errorf("got: %#v\nwant: the good entry decoded", f.Tools["adder"])
	}
}

// TestParseAccepts covers valid forms other than the canonical one.
func TestParseAccepts(t *testing.T) {
	src := `# a comment
tool "gh" { kind = "mcp" }
tool "gh2" {
  kind = "mcp"
  server = { name = "only-name" }
  tools = { create_issue = "` + sha("x") + `" }
  hashed_fields = ["name", "description"]
}
`
	f, diags := Parse([]byte(src), FileName)
	if len(diags) > 0 {
		t.Fatalf("got: %v\nwant: no diagnostics", diags)
	}
	want := &Tool{Kind: "mcp", ServerName: "only-name", HashedFields: []string{"description", "name"},
		Served: map[string]string{"create_issue": sha("x")}}
	if got := f.Tools["gh2"]; !got.Equal(want) || got.HashedFields[0] != "description" {
		t.Errorf("got:  %#v\nwant: %#v", got, want)
	}
	if got := f.Tools["gh"]; !got.Equal(&Tool{Kind: "mcp"}) {
		t.Errorf("got:  %#v\nwant: a bare mcp entry", got)
	}
}
