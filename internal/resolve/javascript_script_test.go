package resolve

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

func TestJSScript(t *testing.T) {
	tests := []struct {
		name, bundle string
		// want is the script's first line; "" when jsScript must decline.
		want string
	}{
		{"one export", "var a = 1;\nexport {\n  a\n};\n",
			`H(["a", function () { return a; }]); var a = 1;`},
		{"renamed and default", "var a = 1, b_default = 2;\nexport {\n  a as tool,\n  b_default as default\n};\n",
			`H(["tool", function () { return a; }, "default", function () { return b_default; }]); var a = 1, b_default = 2;`},
		{"dollar and digits", "var $x1 = 1;\nexport {\n  $x1 as _y2\n};\n",
			`H(["_y2", function () { return $x1; }]); var $x1 = 1;`},
		{"no exports", "var a = 1;\n", ""},
		{"an import", "import { fetch } from \"agentc:http\";\nvar a = fetch;\nexport {\n  a\n};\n", ""},
		// import() is left to goja, which refuses it (TestJSGojaRefusesImport).
		{"dynamic import", "var a = () => import(\"x\");\nexport {\n  a\n};\n",
			`H(["a", function () { return a; }]); var a = () => import("x");`},
		{"import() in a string", "var a = \"call import(x) first\";\nexport {\n  a\n};\n",
			`H(["a", function () { return a; }]); var a = "call import(x) first";`},
		{"import.meta", "var a = import.meta.url;\nexport {\n  a\n};\n", ""},
		{"import.meta across lines", "var a = import\n  .meta.url;\nexport {\n  a\n};\n", ""},
		{"import at the start of a line in a string", "var a = `\nimport x from \"y\"`;\nexport {\n  a\n};\n", ""},
		{"the word elsewhere", "// the importer\nvar import_x = 1, important = \"imports\";\nexport {\n  import_x\n};\n",
			`H(["import_x", function () { return import_x; }]); // the importer`},
		{"string export name", "var a = 1;\nexport {\n  a as \"a-b\"\n};\n", ""},
		{"escaped identifier", "var \\u00e9 = 1;\nexport {\n  \\u00e9\n};\n", ""},
		{"legal comments after", "var a = 1;\nexport {\n  a\n};\n/*! Bundled license information:\n\nx/index.js:\n  (*! x **)\n*/\n",
			`H(["a", function () { return a; }]); var a = 1;`},
		{"code after legal comments", "var a = 1;\nexport {\n  a\n};\n/*! Bundled license information:\n*/\nvar b = 2;\n", ""},
		{"an export clause in a legal comment that looks closed", "var a = 1;\nexport {\n  a\n};\n/*! Bundled license information:\n\nexport {\n  b\n};\n/*! Bundled license information:\n*/\n", ""},
		{"an export clause in a legal comment", "var a = 1;\nexport {\n  a\n};\n/*! Bundled license information:\n\nexport {\n  b\n};\n*/\n", ""},
		{"not at the end", "var a = 1;\nexport {\n  a\n};\nvar b = 2;\n", ""},
		{"export default statement", "export default 1;\n", ""},
		{"re-export", "export * from \"agentc:kv\";\n", ""},
		{"declares module", "var a = 1;\nfunction module() {\n}\nexport {\n  a\n};\n", ""},
		{"declares exports in a list", "var a = 1, exports = 2;\nexport {\n  a\n};\n", ""},
		{"declares require", "const require = 1;\nexport {\n  require as a\n};\n", ""},
		{"uses module in a function", "var a = 1;\nfunction f() {\n  return module;\n}\nexport {\n  a\n};\n",
			`H(["a", function () { return a; }]); var a = 1;`},
		{"empty clause", "var a = 1;\nexport {\n};\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script, ok := jsScript([]byte(tt.bundle), "H")
			if ok != (tt.want != "") {
				t.Fatalf("converted: got %v, want %v\n%s", ok, tt.want != "", script)
			}
			if !ok {
				return
			}
			first, rest, _ := strings.Cut(string(script), "\n")
			if first != tt.want {
				t.Errorf("first line:\ngot:  %s\nwant: %s", first, tt.want)
			}
			// The bundle's lines keep their numbers; the clause is gone.
			_, body, _ := strings.Cut(tt.bundle, "\n")
			body = body[:strings.Index(body, "export {")]
			if rest != body {
				t.Errorf("rest of the script:\ngot:  %q\nwant: %q", rest, body)
			}
		})
	}
}

// jsBenchSource is a tool like those the benchmark workspaces generate
// (internal/bench): TypeScript, no imports, a named export.
const jsBenchSource = `interface Args { text: string; limit?: number }
const SEPARATOR = /\s+/;
function words(text: string): string[] {
  const parts = text.trim().split(SEPARATOR);
  return parts[0] === "" ? [] : parts;
}
export const counter = {
  name: "counter",
  description: "Counts words.",
  parameters: {
    type: "object",
    properties: { text: { type: "string" }, limit: { type: "integer", minimum: 1 } },
    required: ["text"],
  },
  async execute({ args }: { args: Args }) {
    return { output: String(words(args.text).length).slice(0, args.limit ?? 5) };
  },
};
`

// TestJSReadScriptMatchesCommonJS reads every fixture's definition both
// ways: where jsScript applies, the definition and every diagnostic must
// be exactly what the CommonJS conversion gives; where it declines or the
// evaluation fails, the conversion must be what reports.
func TestJSReadScriptMatchesCommonJS(t *testing.T) {
	write := func(t *testing.T, dir string, files map[string]string) {
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	pkgJSON := `{"name": "t", "version": "0.1.0", "private": true, "type": "module", "main": "index.ts"}`
	tests := []struct {
		name, fixture string
		files         map[string]string
		export        string
		// direct: jsScript applies and the evaluation succeeds, so the
		// result comes from it.
		direct  bool
		wantErr string
	}{
		{name: "bench tool", files: map[string]string{"package.json": pkgJSON, "index.ts": jsBenchSource}, export: "counter", direct: true},
		{name: "default export", files: map[string]string{"package.json": pkgJSON, "index.ts": strings.Replace(jsBenchSource, "export const counter =", "export default", 1)}, export: "default", direct: true},
		{name: "exports function", files: map[string]string{"package.json": pkgJSON, "index.ts": "export function counter() {}\ncounter.name2 = 1;\n"}, export: "counter", direct: true, wantErr: "Invalid tool schema"},
		{name: "wrong export", files: map[string]string{"package.json": pkgJSON, "index.ts": jsBenchSource}, export: "other", direct: true, wantErr: `has no export named "other"; it exports "counter"`},
		{name: "imports agentc", fixture: "js-tool", export: "echo"},
		{name: "bundles a dependency", fixture: "ts-tool", export: "adder", direct: true},
		{name: "missing export", fixture: "broken/missing-export", export: "tool", direct: true, wantErr: "Tool export not found"},
		{name: "missing name", fixture: "broken/missing-name", export: "tool", direct: true, wantErr: "has no name"},
		{name: "invalid schema", fixture: "broken/invalid-schema", export: "tool", direct: true, wantErr: "not a valid JSON Schema"},
		{name: "params not object", fixture: "broken/params-not-object", export: "tool", direct: true, wantErr: "Invalid tool schema"},
		// Its JavaScript type is object, its JSON an array: refused, not a
		// panic on the assumption that it is a JSON object.
		{name: "params whose JSON is an array", files: map[string]string{"package.json": pkgJSON, "index.ts": "export const counter = { name: \"counter\", description: \"d\", parameters: { toJSON() { return [1, 2]; } } };\n"}, export: "counter", direct: true, wantErr: "it is an array, not a JSON object"},
		{name: "throws", fixture: "broken/throws", export: "tool", wantErr: "index.ts:"},
		{name: "top-level this", files: map[string]string{"package.json": pkgJSON, "index.ts": "export const counter = { name: String(typeof this) };\n"}, export: "counter", direct: true, wantErr: "Invalid tool schema"},
		{name: "shadows module", files: map[string]string{"package.json": pkgJSON, "index.ts": jsBenchSource + "let module = 1;\nexport const m = module;\n"}, export: "counter"},
		{name: "function named module", files: map[string]string{"package.json": pkgJSON, "index.ts": "function module() { return \"m\"; }\nexport const counter = { name: \"counter\", description: module(), parameters: { type: \"object\" } };\n"}, export: "counter"},
		{name: "names the helper", files: map[string]string{"package.json": pkgJSON, "index.ts": "var __agentform_exports = \"hello\";\nexport const counter = { name: \"counter\", description: String(__agentform_exports), parameters: { type: \"object\" } };\n"}, export: "counter", direct: true},
		{name: "import() in a string", files: map[string]string{"package.json": pkgJSON, "index.ts": strings.Replace(jsBenchSource, `"Counts words."`, `"Counts words; import() is not used."`, 1)}, export: "counter", direct: true},
		// goja refuses import(), in the script and in the conversion (which
		// keeps it) alike: serve could not run such a tool either. (The
		// build refuses import() of agentc:* modules: TestJSDynamicImportRefused.)
		{name: "dynamic import", files: map[string]string{"package.json": pkgJSON, "index.ts": jsBenchSource + "const where = \"./x.js\";\nexport const later = () => import(where);\n"}, export: "counter", wantErr: "Unexpected reserved word"},
		{name: "dynamic import of its own file", files: map[string]string{"package.json": pkgJSON, "index.ts": jsBenchSource + "export const later = () => import(\"./lazy\");\n", "lazy.ts": "export const x = 1;\n"}, export: "counter", direct: true},
		{name: "import.meta", files: map[string]string{"package.json": pkgJSON, "index.ts": jsBenchSource + "export const where = import.meta.url;\n"}, export: "counter"},
		// The static read compiles what it reads: goja's compiler refuses
		// these regular expressions, which esbuild keeps.
		{name: "a regexp goja refuses", files: map[string]string{"package.json": pkgJSON, "index.ts": jsBenchSource + "export const pattern = /a/d;\n"}, export: "counter", wantErr: "Invalid tool definition"},
		{name: "a unicode set goja refuses", files: map[string]string{"package.json": pkgJSON, "index.ts": jsBenchSource + "export const pattern = /[a&&b]/v;\n"}, export: "counter", wantErr: "Invalid tool definition"},
		// The helper defines __esModule itself: exporting the tool under
		// that name fails in the script, and the conversion reports it.
		{name: "exported as __esModule", files: map[string]string{"package.json": pkgJSON, "index.ts": strings.Replace(jsBenchSource, "export const counter =", "const counter =", 1) + "export { counter as __esModule };\n"}, export: "__esModule", wantErr: "is a boolean"},
		{name: "reads exports early", files: map[string]string{"package.json": pkgJSON, "index.ts": jsBenchSource + "if (typeof module !== \"undefined\") { throw new Error(\"module is visible\"); }\n"}, export: "counter", wantErr: "module is visible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			block := tt.export
			if block == "default" || block == "other" || block == "__esModule" {
				block = "counter"
			}
			extra := ""
			if tt.export != block {
				extra = "  export = \"" + tt.export + "\"\n"
			}
			if tt.fixture == "" {
				if err := os.MkdirAll(filepath.Join(dir, "tools", block), 0o755); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "tools", block), tt.files)
			}
			if tt.fixture == "ts-tool" {
				requireInstalled(t, "ts-tool", "is-number")
			}
			w := newJSWorkspace(t, dir, tt.fixture, block, extra)
			j := &jsJob{req: w.req}
			j.prepare(context.Background())
			if j.ended {
				t.Fatalf("prepare ended the job: %s", j.diags.Error())
			}
			jsBundleAll([]*jsJob{j})
			if j.built == nil || len(j.built.errors) > 0 || j.built.failed != "" {
				t.Fatalf("bundling failed: %+v", j.built)
			}
			ctx, timeout := context.Background(), 5*time.Second
			want, wantDiags := j.readCommonJS(ctx, timeout)
			got, gotDiags, read := jsReadScript(ctx, j.built.bundle, j.pkg, j.export, timeout, j.subject, j.exportSubject)
			if read != tt.direct {
				script, ok := jsScript(j.built.bundle, "H")
				t.Fatalf("read through jsScript: got %v, want %v (jsScript applies: %v)\n%s", read, tt.direct, ok, script)
			}
			if read {
				if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotDiags, wantDiags) {
					t.Errorf("jsScript differs from the CommonJS conversion:\ngot:  %+v %v\nwant: %+v %v", got, gotDiags, want, wantDiags)
				}
			}
			// finish takes whichever path applies; the outcome is the
			// conversion's.
			j.finish(ctx)
			if tt.wantErr == "" {
				if j.diags.HasErrors() || j.res == nil {
					t.Fatalf("finish: %s", j.diags.Error())
				}
				if !reflect.DeepEqual([]byte(j.res.Tools[0].InputSchema), []byte(want.parameters)) || j.res.Tools[0].Description != want.description {
					t.Errorf("finish read %+v\nwant: %+v", j.res.Tools[0], want)
				}
			} else if !strings.Contains(j.diags.Error(), tt.wantErr) || !reflect.DeepEqual(j.diags, wantDiags) {
				t.Errorf("finish diagnostics:\ngot:  %s\nwant: %s (containing %q)", j.diags.Error(), wantDiags.Error(), tt.wantErr)
			}
		})
	}
}

// FuzzJSScript checks that jsScript never panics and, when it converts,
// keeps the bundle's code before the export clause unchanged.
// jsScriptWhole is jsScript as it was before it looked near the words
// and matched the export clause from the last "export {" line: the
// expressions run over the whole bundle (the script is built the same
// way). jsScript must never accept what it rejects, and must give the
// same script when both accept.
func jsScriptWhole(bundle []byte, helper string) ([]byte, bool) {
	if jsImportSyntax.Match(bundle) || jsDeclaresGlobals.Match(bundle) {
		return nil, false
	}
	m := jsExportClause.FindSubmatchIndex(bundle)
	if m == nil {
		return nil, false
	}
	return jsScriptFrom(bundle, m, helper), true
}

func FuzzJSScript(f *testing.F) {
	f.Add([]byte("var a = 1;\nexport {\n  a\n};\n/*! Bundled license information:\n\nexport {\n  b\n};\n/*! Bundled license information:\n*/\n"))
	f.Add([]byte("var a = 1;\nexport {\n  a as b,\n  c\n};\n"))
	f.Add([]byte("var a = 1;\nexport {\n  a\n};\n/*! Bundled license information:\n\nx:\n  (*! x *)\n*/\n"))
	f.Add([]byte("import x from \"y\";\nexport {\n  x\n};\n"))
	f.Add([]byte("var a = important.imports;\nvar b = x.import\n\n.meta;\nexport {\n  a\n};\n"))
	f.Add([]byte("var modules = 1;\nfunction* exports2() {}\nconst q = 1, require = 2;\nexport {\n  q\n};\n"))
	f.Fuzz(func(t *testing.T, bundle []byte) {
		// Looking near the words finds what the expressions find.
		if got, want := jsMatchNear(bundle, jsImportSyntax, "import"), jsImportSyntax.Match(bundle); got != want {
			t.Fatalf("import syntax in %q\ngot:  %v\nwant: %v", bundle, got, want)
		}
		if got, want := jsMatchNear(bundle, jsDeclaresGlobals, "module", "exports", "require"), jsDeclaresGlobals.Match(bundle); got != want {
			t.Fatalf("declarations in %q\ngot:  %v\nwant: %v", bundle, got, want)
		}
		script, ok := jsScript(bundle, "H")
		if !ok {
			return
		}
		// Never more than the rules applied to the whole bundle allow, and
		// the same script.
		whole, wholeOK := jsScriptWhole(bundle, "H")
		if !wholeOK || !bytes.Equal(script, whole) {
			t.Fatalf("bundle %q\ngot:  %q\nwant: %q, %v (the rules applied to the whole bundle)", bundle, script, whole, wholeOK)
		}
		_, rest, _ := strings.Cut(string(script), "]); ")
		if !strings.HasPrefix(string(bundle), rest) || !strings.HasPrefix(string(script), "H([") {
			t.Fatalf("script %q does not keep the code of bundle %q", script, bundle)
		}
	})
}

// TestJSGojaRefusesImport pins what jsScript leaves to goja: its parser
// refuses import() in every form esbuild can print it in, and accepts the
// word only as a property name, where the conversion prints it unchanged.
func TestJSGojaRefusesImport(t *testing.T) {
	refused := []string{
		`import("x")`,
		`var a = () => import("x")`,
		"var a = import\n(\"x\")",
		`var a = new (import("x"))`,
		"var a = `${import(\"x\")}`",
		`async function f() { await import("x") }`,
		`function* g() { yield import("x") }`,
		`l: import("x")`,
		`if (0) import("x")`,
		`var a = import.meta`,
		`import x from "y"`,
		`export { x }`,
	}
	for _, src := range refused {
		if _, err := goja.Parse("x.js", src); err == nil {
			t.Errorf("goja parses %q as a script", src)
		}
	}
	accepted := []string{
		`var s = "import(x)"; /* import("y") */ var r = /import\(/; // import.meta`,
		"var t = `import(${1})`",
		`var o = { import: 1, import2() {} }; o.import; o.import(1); o?.import`,
		`var p = { import() {}, get import() { return 1 } }`,
		`class C { import = 1; static import() {} }`,
		`var { import: y } = { import: 1 }`,
		"var q = x.\nimport(1)",
	}
	for _, src := range accepted {
		if _, err := goja.Parse("x.js", src); err != nil {
			t.Errorf("goja refuses %q: %v", src, err)
		}
	}
}

func TestJSNestedDirs(t *testing.T) {
	dirs := []string{"/w/tools/a", "/w/tools/a/inner", "/w/tools/b", "/w/tools/bb", "/w/other/c", "/w/other/c/x/y/deep", "/w/tools/b2", "rel/x", "../up", "."}
	got := jsNestedDirs(dirs, func(d string) string { return d })
	want := map[string]bool{"/w/tools/a": true, "/w/tools/a/inner": true, "/w/other/c": true, "/w/other/c/x/y/deep": true, "rel/x": true, ".": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nested directories:\ngot:  %v\nwant: %v", got, want)
	}
	// The same answer as comparing every pair.
	for _, u := range dirs {
		pair := false
		for _, o := range dirs {
			if o != u && (within(o, u) || within(u, o)) {
				pair = true
			}
		}
		if pair != got[u] {
			t.Errorf("%s: pairwise %v, jsNestedDirs %v", u, pair, got[u])
		}
	}
	if got := jsNestedDirs([]string{"/"}, func(d string) string { return d }); len(got) != 0 {
		t.Errorf("a lone root directory: got %v, want not nested", got)
	}
}

// jsCounterPackage writes the package tools/counter of the workspace dir:
// files (slash-separated paths inside it) and, unless files has one, a
// package.json whose main is index.ts; it returns the workspace of the
// block counter.
func jsCounterPackage(t *testing.T, dir string, files map[string]string) *jsWorkspace {
	t.Helper()
	pkg := filepath.Join(dir, "tools", "counter")
	if _, ok := files["package.json"]; !ok {
		files["package.json"] = `{"name": "t", "version": "0.1.0", "private": true, "type": "module", "main": "index.ts"}`
	}
	for name, content := range files {
		path := filepath.Join(pkg, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return newJSWorkspace(t, dir, "", "counter", "")
}

// TestJSDynamicImportRefused checks that import() of an agentc:* module,
// which a tool run as a CommonJS script cannot do, fails the build,
// located in the tool's source or its dependency's (in a shared build
// too: TestJSDynamicImportShared).
func TestJSDynamicImportRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"in the tool", map[string]string{
			"index.ts": jsBenchSource + "export const later = async () => (await import(\"agentc:kv\")).get;\n",
		}, `tools/counter/index.ts:19:48: import("agentc:kv") cannot load a module: tools run as CommonJS scripts, which have no import(). Import agentc:kv statically`},
		{"in a dependency", map[string]string{
			"index.ts":                          "import { load } from \"lazydep\";\n" + jsBenchSource + "export const later = load;\n",
			"node_modules/lazydep/package.json": `{"name": "lazydep", "version": "1.0.0", "type": "module", "main": "index.js"}`,
			"node_modules/lazydep/index.js":     "export const load = () => import(\"agentc:kv\");\n",
			"package-lock.json":                 `{"name": "t", "lockfileVersion": 3, "packages": {}}`,
		}, `tools/counter/node_modules/lazydep/index.js:1:34: import("agentc:kv") cannot load a module: tools run as CommonJS scripts, which have no import(). The call is in a dependency`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := jsCounterPackage(t, t.TempDir(), tt.files)
			builds, strict := jsBundles.Load(), jsStrictBundles.Load()
			_, diags := ResolveJavaScript(context.Background(), w.req)
			if len(diags) != 1 || diags[0].Summary != "Unsupported dynamic import" || !strings.Contains(diags[0].Detail, tt.want) {
				t.Errorf("diagnostics:\ngot:  %s\nwant: one error, Unsupported dynamic import, %s", diags.Error(), tt.want)
			}
			// The build, and the one that locates the call: no strict build,
			// which would only repeat it.
			if b, s := jsBundles.Load()-builds, jsStrictBundles.Load()-strict; b != 2 || s != 0 {
				t.Errorf("esbuild builds: %d, %d of them strict; want 2, none strict", b, s)
			}
		})
	}
}

// TestJSDynamicImportShared checks that a shared build whose only fault is
// one package's import() of an agentc:* module falls back to a build per
// package, so that the call is located and the other packages resolve.
func TestJSDynamicImportShared(t *testing.T) {
	cfg := jsFixtureWorkspace(t, t.TempDir(), []jsFixtureBlock{
		{"a1", "js-tool", "  export = \"echo\"\n"},
		{"a2", "js-tool", "  export = \"echo\"\n"},
		{"zz_dynamic", "broken/dynamic-import", "  export = \"tool\"\n"},
	})
	ws, diags := Run(context.Background(), cfg, Options{})
	if len(diags) != 1 || diags[0].Summary != "Unsupported dynamic import" || !strings.Contains(diags[0].Detail, "tools/zz_dynamic/index.ts:6:29:") {
		t.Errorf("diagnostics:\ngot:  %s\nwant: one error, Unsupported dynamic import, at tools/zz_dynamic/index.ts:6:29", diags.Error())
	}
	if ws.Tools["a1"] == nil || ws.Tools["a2"] == nil {
		t.Errorf("the other packages did not resolve: %v", ws.Tools)
	}
}

// TestJSDynamicImportDropped checks that an import() of an agentc:*
// module that tree-shaking drops from the bundle, in the package's own
// file or in a dependency, is not refused.
func TestJSDynamicImportDropped(t *testing.T) {
	w := jsCounterPackage(t, t.TempDir(), map[string]string{
		"index.ts":                          "import { used } from \"./lib\";\nimport { dep } from \"lazydep\";\n" + jsBenchSource + "export const x = used + dep;\n",
		"lib.ts":                            "export const used = 1;\nexport const unused = () => import(\"agentc:kv\");\n",
		"node_modules/lazydep/package.json": `{"name": "lazydep", "version": "1.0.0", "type": "module", "main": "index.js"}`,
		"node_modules/lazydep/index.js":     "export const dep = 2;\nexport const load = () => import(\"agentc:kv\");\n",
		"package-lock.json":                 `{"name": "t", "lockfileVersion": 3, "packages": {}}`,
	})
	res, diags := ResolveJavaScript(context.Background(), w.req)
	if diags.HasErrors() || res == nil {
		t.Fatalf("resolving: %s", diags.Error())
	}
	if bytes.Contains(res.Outputs["bundle.js"], []byte("import(")) {
		t.Errorf("the bundle keeps an import():\n%s", res.Outputs["bundle.js"])
	}
}

// TestJSBuildErrorColumn checks that a build error is located in
// characters: after "é✓" on its line (five bytes, two characters).
func TestJSBuildErrorColumn(t *testing.T) {
	w := jsCounterPackage(t, t.TempDir(), map[string]string{"index.ts": "const s = \"\u00e9\u2713\"; const = 1;\n"})
	_, diags := ResolveJavaScript(context.Background(), w.req)
	if want := "tools/counter/index.ts:1:23:"; len(diags) != 1 || !strings.Contains(diags[0].Detail, want) {
		t.Errorf("diagnostics:\ngot:  %s\nwant: one error at %s", diags.Error(), want)
	}
}

// TestJSTopLevelAwaitRefused checks that top-level await, which a tool run
// as CommonJS cannot have, fails the build, located in the tool's source,
// even where it would never run while the definition is read.
func TestJSTopLevelAwaitRefused(t *testing.T) {
	w := jsCounterPackage(t, t.TempDir(), map[string]string{"index.ts": jsBenchSource + "if ((globalThis as any).window) {\n  await (0, 1);\n}\n"})
	_, diags := ResolveJavaScript(context.Background(), w.req)
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Top-level await") || !strings.Contains(diags.Error(), "index.ts") {
		t.Errorf("diagnostics:\ngot:  %s\nwant: top-level await refused in index.ts", diags.Error())
	}
}

// TestJSDefinitionClockAndRandom: a definition that reads the clock or
// Math.random reads the same values on every run and host, so the
// artifact does not depend on when plan ran.
func TestJSDefinitionClockAndRandom(t *testing.T) {
	src := strings.Replace(jsBenchSource, `description: "Counts words.",`,
		`description: "Counts words; built " + new Date().toISOString() + " (" + Date.now() + "), salt " + Math.random().toFixed(6),`, 1)
	var descriptions []string
	for range 2 {
		w := jsCounterPackage(t, t.TempDir(), map[string]string{"index.ts": src})
		res, diags := ResolveJavaScript(context.Background(), w.req)
		if diags.HasErrors() || res == nil || len(res.Tools) != 1 {
			t.Fatalf("resolve: %v", diags.Error())
		}
		descriptions = append(descriptions, res.Tools[0].Description)
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.HasPrefix(descriptions[0], "Counts words; built 1970-01-01T00:00:00.000Z (0), salt 0.") || descriptions[0] != descriptions[1] {
		t.Errorf("descriptions\ngot:  %q\nwant: the epoch, and the same twice", descriptions)
	}
}
