package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"
)

// jsStaticScript is module as jsScript would give it for an export clause
// exporting tool (and, when other is set, other as well).
func jsStaticScript(module string, other bool) string {
	pairs := `"tool", function () { return tool; }`
	if other {
		pairs += `, "other", function () { return other; }`
	}
	return "H([" + pairs + "]); " + module
}

// jsStaticCompare reads export from script statically and, when that
// applies, by evaluation too; it fails t when the two differ. It reports
// whether the static read applied.
func jsStaticCompare(t testing.TB, script, export string) bool {
	t.Helper()
	prog, err := jsParse([]byte(script))
	if err != nil {
		return false
	}
	got, ok := jsStaticRead(prog, "H", export)
	if !ok {
		return false
	}
	if _, err := jsCompile(prog); err != nil {
		// jsReadScript declines too: evaluation reports the early error.
		return false
	}
	evalProg, err := jsParse([]byte(script))
	if err != nil {
		t.Fatalf("parsing again: %v", err)
	}
	raw, err := jsEvaluateProgram(context.Background(), evalProg, "H", export, 5*time.Second)
	if err != nil {
		t.Fatalf("read statically, but evaluating fails: %v\n%s", err, script)
	}
	var want jsRead
	if err := json.Unmarshal([]byte(raw), &want); err != nil {
		t.Fatal(err)
	}
	// The schema's JSON is compared as jsParameters compares it: in
	// canonical form.
	canon := func(r *jsRead) {
		if r.Parameters != nil && r.Parameters.JSON != nil {
			c, err := jsCanonicalJSON([]byte(*r.Parameters.JSON))
			if err != nil {
				t.Fatalf("canonical JSON of %s: %v", *r.Parameters.JSON, err)
			}
			s := string(c)
			r.Parameters.JSON = &s
		}
	}
	canon(&got)
	canon(&want)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("static read differs from evaluation\nscript: %s\ngot:  %s\nwant: %s", script, g, w)
	}
	return true
}

// jsStaticGen writes random modules of the shapes the static reader
// takes, and some it must decline.
type jsStaticGen struct {
	r      *rand.Rand
	consts []string
	b      strings.Builder
}

var jsStaticStrings = []string{
	`"x"`, `""`, `'single'`, `"line\nbreak"`, `"tab\there"`, `"quote\"d"`, `"back\\slash"`,
	`"é"`, `"\u00e9"`, `"😀"`, `"\ud83d\ude00"`, `"\u2028"`, `"<a&b>"`, `"\x41"`, `"\0"`,
	"`template`", "`multi\nline`", `"__proto__"`, `"toString"`, `"ctrl\u0001"`, `"\uD800"`,
}

var jsStaticNumbers = []string{
	"0", "-0", "1", "-1", "1.5", "-2.25", "1e21", "1e20", "1e-7", "0.000001", "123456789012345678901234",
	"0x1F", "1_000", ".5", "5.", "0b101", "0o17", "5e-324", "1.7976931348623157e308", "1e400", "-1e400",
	"9007199254740993", "9007199254740992", "0.1", "100", "+3", "- -4", "010", "1n",
}

var jsStaticKeys = []string{
	"a", "b", "type", "name", `"quoted key"`, `"1"`, "1", "1.5", "0x10", "1e3", "-0x0", `""`, "default", "if",
	"constructor", "valueOf", "toJSON", "__proto__", `"__proto__"`, "1e400", "1e21", "0.1", "5e-324",
}

func (g *jsStaticGen) value(depth int) string {
	n := g.r.IntN(20)
	if depth > 3 && n > 11 {
		n = g.r.IntN(12)
	}
	switch n {
	case 0, 1, 2:
		return jsStaticStrings[g.r.IntN(len(jsStaticStrings))]
	case 3, 4:
		return jsStaticNumbers[g.r.IntN(len(jsStaticNumbers))]
	case 5:
		return []string{"true", "false", "null", "void 0", "!0", "!1", `!""`, "!null"}[g.r.IntN(8)]
	case 6:
		return []string{"/a+/g", "/\\s+/", "() => 1", "function () { return 1; }", "async function named() {}", "function* gen() {}"}[g.r.IntN(6)]
	case 7:
		if len(g.consts) > 0 {
			return g.consts[g.r.IntN(len(g.consts))]
		}
		return "1"
	case 8:
		// What must decline, now and then.
		return []string{"undefined", "NaN", "Math.PI", "f()", "[...[1]]", "`a${1}b`", "typeof 1", "1 + 1", "new Date()", "later", "class {}",
			`-"1"`, "+true", "-null", "-[]", "-{}", "~1", `+""`, "-void 0"}[g.r.IntN(19)]
	case 9, 10, 11:
		return []string{`"string"`, `"object"`, `"integer"`, `"number"`, `"boolean"`, `"array"`}[g.r.IntN(6)]
	case 12, 13, 14, 15:
		return g.object(depth + 1)
	default:
		return g.array(depth + 1)
	}
}

func (g *jsStaticGen) object(depth int) string {
	var parts []string
	for range g.r.IntN(5) {
		key := jsStaticKeys[g.r.IntN(len(jsStaticKeys))]
		switch g.r.IntN(12) {
		case 0:
			parts = append(parts, key+"() { return 1; }")
		case 1:
			if len(g.consts) > 0 {
				parts = append(parts, g.consts[g.r.IntN(len(g.consts))])
				continue
			}
			parts = append(parts, key+": 1")
		case 2:
			parts = append(parts, []string{"get " + key + "() { return 1; }", "[" + key + "]: 1", "...{}"}[g.r.IntN(3)])
		default:
			parts = append(parts, key+": "+g.value(depth))
		}
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func (g *jsStaticGen) array(depth int) string {
	var parts []string
	for range g.r.IntN(4) {
		if g.r.IntN(8) == 0 {
			parts = append(parts, "")
			continue
		}
		parts = append(parts, g.value(depth))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// module is a module that declares a few bindings and a tool.
func (g *jsStaticGen) module() string {
	g.consts = g.consts[:0]
	g.b.Reset()
	for i := range g.r.IntN(4) {
		name := fmt.Sprintf("c%d", i)
		kind := []string{"var", "let", "const"}[g.r.IntN(3)]
		fmt.Fprintf(&g.b, "%s %s = %s;\n", kind, name, g.value(1))
		g.consts = append(g.consts, name)
	}
	if g.r.IntN(3) == 0 {
		g.b.WriteString("function helper(x) { return x + 1; }\n")
		g.consts = append(g.consts, "helper")
	}
	name := `"tool"`
	if g.r.IntN(6) == 0 {
		name = g.value(1)
	}
	description := `"Does a thing."`
	if g.r.IntN(4) == 0 {
		description = g.value(1)
	}
	params := `{ type: "object", properties: ` + g.object(1) + ` }`
	if g.r.IntN(5) == 0 {
		params = g.value(0)
	}
	props := []string{"name: " + name, "description: " + description, "parameters: " + params, "async execute({ args }) { return { output: helper2(args) }; }"}
	g.r.Shuffle(len(props), func(i, j int) { props[i], props[j] = props[j], props[i] })
	fmt.Fprintf(&g.b, "var tool = { %s };\n", strings.Join(props, ",\n  "))
	if g.r.IntN(4) == 0 {
		g.b.WriteString("function helper2(a) { return String(a); }\n")
	}
	return g.b.String()
}

// TestJSStaticReadMatchesEvaluation reads generated modules both ways:
// whatever the static reader takes, evaluation must report the same.
func TestJSStaticReadMatchesEvaluation(t *testing.T) {
	g := &jsStaticGen{r: rand.New(rand.NewPCG(1, 2))}
	static := 0
	const n = 1500
	for range n {
		if jsStaticCompare(t, jsStaticScript(g.module(), false), "tool") {
			static++
		}
	}
	// The generator must exercise the static reader, not only its refusals.
	if static < n/3 {
		t.Fatalf("only %d of %d generated modules were read statically", static, n)
	}
	t.Logf("%d of %d generated modules read statically", static, n)
}

// TestJSStaticReadTakes pins modules the static reader must take (the
// tools most packages hold), with what it reads.
func TestJSStaticReadTakes(t *testing.T) {
	tests := []struct{ name, module, export string }{
		{"bench tool", "var SEPARATOR = /\\s+/;\nfunction words(t) { return t.split(SEPARATOR); }\nvar tool = {\n  name: \"tool\",\n  description: \"Counts.\",\n  parameters: { type: \"object\", properties: { text: { type: \"string\", minimum: 1 } }, required: [\"text\"] },\n  async execute({ args }) { return { output: words(args.text).length }; }\n};\n", "tool"},
		{"description from a constant", "const DESCRIPTION = `Adds two numbers.`;\nconst schema = { type: \"object\" };\nvar tool = { name: \"adder\", description: DESCRIPTION, parameters: schema, execute: (a) => a };\n", "tool"},
		{"second export", "var tool = { name: \"a\", parameters: { type: \"object\" } };\nvar other = { name: \"b\", parameters: { type: \"object\", properties: { x: { enum: [1, -0, 1e21, \"é\"] } } } };\n", "other"},
		{"no description", "let tool = { name: \"a\", parameters: { type: \"object\" } };\n", "tool"},
		{"invalid parameters", "var tool = { name: \"a\", parameters: [1] };\n", "tool"},
		{"function parameters", "var tool = { name: \"a\", parameters() {} };\n", "tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !jsStaticCompare(t, jsStaticScript(tt.module, true), tt.export) {
				t.Fatalf("not read statically:\n%s", tt.module)
			}
		})
	}
}

// TestJSStaticReadDeclines pins what the static reader must leave to
// evaluation: code that runs, may fail, or reads differently than it
// looks.
func TestJSStaticReadDeclines(t *testing.T) {
	tool := "var tool = { name: \"a\", parameters: { type: \"object\" } };\n"
	tests := []struct{ name, module string }{
		{"a call", tool + "helper();\nfunction helper() {}\n"},
		{"an expression statement", tool + "tool.name = \"b\";\n"},
		{"a class", "class Tool {}\n" + tool},
		{"a loop", tool + "for (;;) {}\n"},
		{"a global", "var tool = { name: String(1), parameters: { type: \"object\" } };\n"},
		{"undefined by name", "var tool = { name: \"a\", description: undefined, parameters: { type: \"object\" } };\n"},
		{"a binding not yet initialised", "var tool = { name: NAME, parameters: { type: \"object\" } };\nconst NAME = \"a\";\n"},
		{"a var not yet assigned", "var tool = { name: NAME, parameters: { type: \"object\" } };\nvar NAME = \"a\";\n"},
		{"a getter", "var tool = { get name() { return \"a\"; }, parameters: { type: \"object\" } };\n"},
		{"a spread", "var base = { name: \"a\" };\nvar tool = { ...base, parameters: { type: \"object\" } };\n"},
		{"a computed key", "var tool = { [\"name\"]: \"a\", parameters: { type: \"object\" } };\n"},
		{"__proto__", "var tool = { __proto__: { name: \"a\" }, parameters: { type: \"object\" } };\n"},
		{"toJSON in the schema", "var tool = { name: \"a\", parameters: { type: \"object\", toJSON() { return {}; } } };\n"},
		{"a BigInt", "var tool = { name: \"a\", parameters: { type: \"object\", maximum: 1n } };\n"},
		{"an unpaired surrogate", "var tool = { name: \"a\", parameters: { type: \"object\", description: \"\\ud800\" } };\n"},
		{"a declared global", "var undefined = 1;\n" + tool},
		{"a lexical global", "let NaN = 1;\n" + tool},
		{"the prelude's console", "var console = 1;\n" + tool},
		{"a name declared twice", "var a = 1;\nvar a = 2;\n" + tool},
		{"a function and a var", "function a() {}\nvar a = 2;\n" + tool},
		{"a destructuring", "var { a } = { a: 1 };\n" + tool},
		{"a template with a substitution", "var tool = { name: `a${1}`, parameters: { type: \"object\" } };\n"},
		{"a tagged template", "function tag() {}\nvar tool = { name: tag`a`, parameters: { type: \"object\" } };\n"},
		{"a function export", "function tool() {}\n"},
		{"an undefined export", "var tool;\n"},
		{"a regexp export", "var tool = /a/;\n"},
		{"a missing export", "var other = { name: \"a\" };\n"},
		{"an operator", "var tool = { name: \"a\" + \"b\", parameters: { type: \"object\" } };\n"},
		{"minus a string", "var tool = { name: \"a\", parameters: { type: \"object\", minimum: -\"1\" } };\n"},
		{"plus a boolean", "var tool = { name: \"a\", parameters: { type: \"object\", minimum: +true } };\n"},
		{"the helper's name", "var H = \"x\";\nvar tool = { name: H, parameters: { type: \"object\" } };\n"},
		{"the helper's name as a function", "function H() {}\n" + tool},
	}
	// Pairs jsScript never writes, which evaluation reads otherwise.
	helperCalls := []struct{ name, call string }{
		{"an export named __esModule", `H(["__esModule", function () { return tool; }]); `},
		{"an export named twice", `H(["tool", function () { return tool; }, "tool", function () { return tool; }]); `},
		{"an async getter", `H(["tool", async function () { return tool; }]); `},
		{"a generator getter", `H(["tool", function* () { return tool; }]); `},
		{"a getter with a parameter", `H(["tool", function (tool) { return tool; }]); `},
		{"a getter with a rest parameter", `H(["tool", function (...tool) { return tool; }]); `},
		{"an arrow getter", `H(["tool", () => { return tool; }]); `},
		{"two arguments", `H(["tool", function () { return tool; }], 1); `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := jsStaticScript(tt.module, false)
			prog, err := jsParse([]byte(script))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if r, ok := jsStaticRead(prog, "H", "tool"); ok {
				t.Fatalf("read statically: %+v\n%s", r, tt.module)
			}
		})
	}
	for _, tt := range helperCalls {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := jsParse([]byte(tt.call + tool))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			for _, export := range []string{"tool", "__esModule"} {
				if r, ok := jsStaticRead(prog, "H", export); ok {
					t.Fatalf("read %s statically: %+v", export, r)
				}
			}
		})
	}
	// The helper call must be jsScript's, with the helper's name.
	prog, err := jsParse([]byte("G([\"tool\", function () { return tool; }]); " + tool))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := jsStaticRead(prog, "H", "tool"); ok {
		t.Fatal("read statically behind another helper's name")
	}
}

// FuzzJSStaticRead holds the static reader to evaluation on any module:
// whatever it reads, evaluation must report the same.
func FuzzJSStaticRead(f *testing.F) {
	g := &jsStaticGen{r: rand.New(rand.NewPCG(3, 4))}
	for range 20 {
		f.Add(g.module())
	}
	f.Add("var tool = { name: \"a\", parameters: { type: \"object\", x: 1e21, y: -0, z: [, 1] } };\n")
	f.Fuzz(func(t *testing.T, module string) {
		jsStaticCompare(t, jsStaticScript(module, true), "tool")
	})
}

// BenchmarkJSReadDefinition reads the definition of a typical tool's bundle
// (the benchmark harness's) from its syntax tree, as plan does, and by
// evaluating it, as plan does for any other bundle; each includes parsing,
// compiling and checking the schema.
func BenchmarkJSReadDefinition(b *testing.B) {
	module := "var SEPARATOR = /\\s+/;\nfunction words(text) {\n  const parts = text.trim().split(SEPARATOR);\n  return parts[0] === \"\" ? [] : parts;\n}\n" +
		"var tool = {\n  name: \"tool\",\n  description: \"Counts the words in a text.\",\n  parameters: {\n    type: \"object\",\n    properties: {\n      text: { type: \"string\", description: \"The text to read.\" },\n      limit: { type: \"integer\", description: \"How many words to list.\", minimum: 1 }\n    },\n    required: [\"text\"]\n  },\n  async execute({ args }) {\n    return { output: String(words(args.text).length) };\n  }\n};\n"
	script := []byte(jsStaticScript(module, false))
	pkg := &jsPackage{rel: "tools/tool"}
	b.Run("syntax-tree", func(b *testing.B) {
		for b.Loop() {
			prog, err := jsParse(script)
			if err != nil {
				b.Fatal(err)
			}
			r, ok := jsStaticRead(prog, "H", "tool")
			if !ok {
				b.Fatal("not read statically")
			}
			if _, err := jsCompile(prog); err != nil {
				b.Fatal(err)
			}
			if _, diags := jsReportRead(&r, pkg, "tool", nil, nil); diags.HasErrors() {
				b.Fatal(diags)
			}
		}
	})
	b.Run("evaluated", func(b *testing.B) {
		for b.Loop() {
			prog, err := jsParse(script)
			if err != nil {
				b.Fatal(err)
			}
			raw, err := jsEvaluateProgram(context.Background(), prog, "H", "tool", 5*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			if _, diags := jsReport(context.Background(), raw, nil, pkg, "tool", 5*time.Second, nil, nil); diags.HasErrors() {
				b.Fatal(diags)
			}
		}
	})
}

// jsMainCases are package layouts without an index file, what "main"
// names, and jsMainEntry's answer (want, or an error holding err). esbuild
// bundles want, or the file named by esbuild when that differs; none
// when it fails.
var jsMainCases = []struct {
	name    string
	files   []string
	main    string
	want    string
	err     string
	esbuild string
}{
	{"a file", []string{"src/tool.ts"}, "src/tool.ts", "src/tool.ts", "", ""},
	{"an extension added", []string{"src/tool.ts"}, "./src/tool", "src/tool.ts", "", ""},
	{".tsx before .ts", []string{"src/tool.ts", "src/tool.tsx"}, "src/tool", "src/tool.tsx", "", ""},
	{".ts before .js", []string{"src/tool.js", "src/tool.ts"}, "src/tool", "src/tool.ts", "", ""},
	{".jsx before .js", []string{"src/tool.js", "src/tool.jsx"}, "src/tool", "src/tool.jsx", "", ""},
	{"a script before .json", []string{"src/tool.js", "src/tool.json"}, "src/tool", "src/tool.js", "", ""},
	{"a file without an extension", []string{"bin/tool"}, "bin/tool", "bin/tool", "", ""},
	{".js found as .ts", []string{"src/tool.ts"}, "src/tool.js", "src/tool.ts", "", ""},
	{".js found as .tsx", []string{"src/tool.tsx"}, "src/tool.js", "src/tool.tsx", "", ""},
	{".jsx found as .ts before .tsx", []string{"src/tool.ts", "src/tool.tsx"}, "src/tool.jsx", "src/tool.ts", "", ""},
	{".jsx found as .tsx", []string{"src/tool.tsx"}, "src/tool.jsx", "src/tool.tsx", "", ""},
	{".mjs found as .mts", []string{"src/tool.mts"}, "src/tool.mjs", "src/tool.mts", "", ""},
	{".cjs found as .cts", []string{"src/tool.cts"}, "src/tool.cjs", "src/tool.cts", "", ""},
	{"the file before a rewrite", []string{"src/tool.js", "src/tool.ts"}, "src/tool.js", "src/tool.js", "", ""},
	{"an extension added before a rewrite", []string{"src/tool.js.ts", "src/tool.ts"}, "src/tool.js", "src/tool.js.ts", "", ""},
	{"javascript before a directory", []string{"lib.js", "lib/index.ts"}, "lib", "lib.js", "", ""},
	{"a directory's index", []string{"lib/index.ts"}, "lib", "lib/index.ts", "", ""},
	{"a directory's index.tsx before index.ts", []string{"lib/index.ts", "lib/index.tsx"}, "lib", "lib/index.tsx", "", ""},
	{"a directory's index.js", []string{"lib/index.js", "lib/other.ts"}, "lib/", "lib/index.js", "", ""},
	{"a directory without an index", []string{"lib/other.ts"}, "lib", "", `names the directory "lib", which has none of index.tsx, index.ts, index.jsx, index.js.`, ""},
	{"the package directory", []string{"other.ts"}, ".", "", `names the directory ".", which has none of`, ""},
	{"nothing", []string{"other.ts"}, "src/tool", "", `names "src/tool", which is not a file (nor is it with .tsx, .ts, .jsx, .js added) nor a directory with an index file.`, ""},
	{"nothing after a rewrite", []string{"other.ts"}, "src/tool.js", "", `names "src/tool.js", which is not a file (nor is it with .tsx, .ts, .jsx, .js added, nor src/tool.ts or src/tool.tsx) nor`, ""},
	{"a .json file", []string{"data.json"}, "data.json", "", `names "data.json", which is not a script. A tool's entry point is a JavaScript or TypeScript file (.ts, .tsx, .mts, .cts, .js, .jsx, .mjs, .cjs) that exports the tool.`, "data.json"},
	{"a .json file by an added extension", []string{"src/tool.json"}, "src/tool", "", `names "src/tool", which esbuild resolves to src/tool.json, not a script.`, "src/tool.json"},
	{"a directory's index.json", []string{"lib/index.json"}, "lib", "", `names "lib", which esbuild resolves to lib/index.json, not a script.`, "lib/index.json"},
	{"a .css file", []string{"style.css"}, "style.css", "", "not a script", "style.css"},
	{"a .txt file", []string{"notes.txt"}, "notes.txt", "", "not a script", "notes.txt"},
	{"a file esbuild has no loader for", []string{"README.md"}, "README.md", "", "not a script", ""},
	{"outside", []string{"../x.ts"}, "../x", "", `names "../x", which is outside the package.`, "../x.ts"},
}

// jsMainWrite lays a case's files out in a package directory: dir/pkg,
// with a package.json whose "main" is main.
func jsMainWrite(t *testing.T, files []string, main string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg")
	contents := map[string]string{".json": "{}\n", ".css": "a {}\n", ".txt": "text\n", ".md": "# Tool\n"}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content, ok := contents[filepath.Ext(f)]
		if !ok {
			content = "export {};\n"
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest, _ := json.Marshal(map[string]string{"name": "pkg", "main": main})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestJSMainEntry: "main" is read as esbuild reads it: the file, the
// name with each of esbuild's extensions added (.tsx before .ts, .jsx
// before .js), TypeScript's rewrite of .js, .jsx, .mjs and .cjs, then a
// directory's index file; a file that is not a script is refused.
func TestJSMainEntry(t *testing.T) {
	for _, tc := range jsMainCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := jsMainWrite(t, tc.files, tc.main)
			main, _ := json.Marshal(tc.main)
			got, diags := jsMainEntry(&jsPackage{dir: dir, rel: "tools/pkg"}, main, nil)
			if tc.err != "" {
				if !diags.HasErrors() || diags[0].Summary != "No entry point" || !strings.Contains(diags[0].Detail, tc.err) {
					t.Errorf("got: %q, %v\nwant: a \"No entry point\" error holding %q", got, diags, tc.err)
				}
				return
			}
			if diags.HasErrors() || got != tc.want {
				t.Errorf("got: %q, %v\nwant: %q", got, diags, tc.want)
			}
		})
	}
}

// TestJSMainEntryAsEsbuild checks jsMainEntry against esbuild itself:
// esbuild, given the package directory as its entry point (so that it
// applies "main") and the options agentform bundles with, bundles the
// file jsMainEntry answers, or the one it refuses.
func TestJSMainEntryAsEsbuild(t *testing.T) {
	for _, tc := range jsMainCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := jsMainWrite(t, tc.files, tc.main)
			opts := jsBaseOptions(dir)
			opts.EntryPoints = []string{dir}
			opts.TsconfigRaw = "{}"
			opts.Metafile = true
			result := api.Build(opts)
			want := tc.want
			if tc.esbuild != "" {
				want = tc.esbuild
			}
			if want == "" {
				if len(result.Errors) == 0 {
					t.Errorf("esbuild bundled the package; the case says it fails")
				}
				return
			}
			if len(result.Errors) > 0 {
				t.Fatalf("esbuild: %v", result.Errors)
			}
			var meta struct {
				Inputs map[string]json.RawMessage `json:"inputs"`
			}
			if err := json.Unmarshal([]byte(result.Metafile), &meta); err != nil {
				t.Fatal(err)
			}
			var inputs []string
			for in := range meta.Inputs {
				inputs = append(inputs, in)
			}
			if len(inputs) != 1 || inputs[0] != want {
				t.Errorf("esbuild bundled %q; want %q", inputs, want)
			}
		})
	}
}
