package resolve

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"golang.org/x/mod/modfile"

	"github.com/agentform/agentform/internal/manifest"
)

// jsFixtures is where the javascript fixtures live.
const jsFixtures = "testdata/javascript"

// jsTestAgent is the agent block every test workspace needs.
const jsTestAgent = `agent "assistant" {
  graph {
    type = "react"
  }

  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`

// jsWorkspace is a test workspace holding one javascript tool block.
type jsWorkspace struct {
	dir string
	req Request
	// sourceLine and exportLine are the manifest lines of the block's
	// source and export arguments (exportLine 0 when not written).
	sourceLine, exportLine int
}

// newJSWorkspace copies the fixture (relative to testdata/javascript) to
// dir/tools/<block> and writes an agent.acl declaring the block, with
// extra lines added to its body; it loads the manifest with manifest.Load
// so that ranges are real.
func newJSWorkspace(t testing.TB, dir, fixture, block, extra string) *jsWorkspace {
	t.Helper()
	if fixture != "" {
		jsCopyDir(t, filepath.Join(jsFixtures, filepath.FromSlash(fixture)), filepath.Join(dir, "tools", block))
	}
	acl := jsTestAgent + fmt.Sprintf("\ntool %q {\n  kind   = \"javascript\"\n  source = \"./tools/%s\"\n%s}\n", block, block, extra)
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(acl), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatalf("loading the test manifest: %s", diags.Error())
	}
	w := &jsWorkspace{dir: dir, req: Request{Config: cfg, Tool: cfg.Tool(block), Dir: dir, Root: ProjectRoot(dir)}}
	for i, line := range strings.Split(acl, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "source ="):
			w.sourceLine = i + 1
		case strings.HasPrefix(strings.TrimSpace(line), "export"):
			w.exportLine = i + 1
		}
	}
	return w
}

// jsCopyDir copies a directory tree, node_modules included.
func jsCopyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying fixture %s: %v", from, err)
	}
}

// requireInstalled fails the test when a fixture's dependencies are not
// installed.
func requireInstalled(t testing.TB, fixture, module string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(jsFixtures, fixture, "node_modules", module, "package.json")); err != nil {
		t.Fatalf("the fixture %s/%s has no node_modules/%s: run \"npm ci\" in internal/resolve/testdata/javascript/%s (make test does)", jsFixtures, fixture, module, fixture)
	}
}

func TestResolveJavaScript(t *testing.T) {
	requireInstalled(t, "ts-tool", "is-number")
	tests := []struct {
		name, fixture, block, extra string
		wantDesc, wantSchema        string
		lock                        string // lock file whose sha256 is Deps
		wantInBundle                []string
		// run is a node ESM snippet calling the bundle (imported as t)
		// and its expected output; empty when the bundle needs agentc.
		run, wantRun string
	}{
		{
			name: "typescript with a dependency", fixture: "ts-tool", block: "adder",
			wantDesc:   "Adds two numbers.",
			wantSchema: `{"additionalProperties":false,"properties":{"a":{"description":"The first addend.","type":"number"},"b":{"description":"The second addend.","type":"number"}},"required":["a","b"],"type":"object"}`,
			lock:       "package-lock.json",
			wantInBundle: []string{
				"// tools/adder/node_modules/is-number/index.js",
				"// tools/adder/lib/format.ts",
				"// tools/adder/index.ts",
				"export {\n  adder\n};",
			},
			run:     `console.log((await t.adder.execute({ args: { a: 2, b: 3 } })).output)`,
			wantRun: "2 + 3 = 5",
		},
		{
			name: "plain javascript through package.json main", fixture: "js-tool", block: "echo",
			wantDesc:   "Echoes its input back.",
			wantSchema: `{"properties":{"text":{"type":"string"},"times":{"maximum":3,"minimum":1,"type":"integer"}},"required":["text"],"type":"object"}`,
			wantInBundle: []string{
				`import { fetch } from "agentc:http";`,
				`import * as fs from "agentc:fs";`,
				"// tools/echo/src/tool.js",
			},
		},
		{
			name: "explicit export and the manifest's description", fixture: "js-tool", block: "other",
			extra:      "  export      = \"quiet\"\n  description = \"Says nothing.\"\n",
			wantDesc:   "Says nothing.",
			wantSchema: `{"type":"object"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newJSWorkspace(t, t.TempDir(), tt.fixture, tt.block, tt.extra)
			res, diags := ResolveJavaScript(context.Background(), w.req)
			if diags.HasErrors() {
				t.Fatalf("unexpected diagnostics:\n%s", diags.Error())
			}
			if len(res.Tools) != 1 {
				t.Fatalf("got %d tools\nwant: 1", len(res.Tools))
			}
			got := res.Tools[0]
			if got.Name != tt.block || got.Description != tt.wantDesc || string(got.InputSchema) != tt.wantSchema {
				t.Errorf("tool:\ngot:  %q %q %s\nwant: %q %q %s", got.Name, got.Description, got.InputSchema, tt.block, tt.wantDesc, tt.wantSchema)
			}

			pkgDir := filepath.Join(w.dir, "tools", tt.block)
			wantSource, err := HashPackage(pkgDir)
			if err != nil {
				t.Fatal(err)
			}
			wantDeps := ""
			if tt.lock != "" {
				if wantDeps, err = SHA256File(filepath.Join(pkgDir, tt.lock)); err != nil {
					t.Fatal(err)
				}
			}
			bundle := res.Outputs["bundle.js"]
			if len(res.Outputs) != 1 || len(bundle) == 0 {
				t.Fatalf("outputs:\ngot:  %v\nwant: one non-empty bundle.js", reflect.ValueOf(res.Outputs).MapKeys())
			}
			pin := res.Pin
			if pin.Kind != "javascript" || pin.Source != wantSource || pin.Deps != wantDeps || pin.Bundle != SHA256(bundle) || pin.Bundler != JavaScriptBundler {
				t.Errorf("pin:\ngot:  %+v\nwant: kind javascript, source %s, deps %q, bundle %s, bundler %s", *pin, wantSource, wantDeps, SHA256(bundle), JavaScriptBundler)
			}
			for _, want := range tt.wantInBundle {
				if !bytes.Contains(bundle, []byte(want)) {
					t.Errorf("bundle lacks %q\ngot:\n%s", want, bundle)
				}
			}
			if bytes.Contains(bundle, []byte(w.dir)) {
				t.Errorf("bundle holds the workspace's absolute path %s:\n%s", w.dir, bundle)
			}
			if tt.run != "" {
				jsRunNode(t, bundle, tt.run, tt.wantRun)
			}
		})
	}
}

// jsRunNode imports the ESM bundle in node and runs a snippet against it,
// proving the bundle is a working module.
func jsRunNode(t *testing.T, bundle []byte, snippet, want string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to run the bundle (it comes with npm, which make test uses): %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bundle.mjs"), bundle, 0o644); err != nil {
		t.Fatal(err)
	}
	main := "import * as t from \"./bundle.mjs\";\n" + snippet + "\n"
	if err := os.WriteFile(filepath.Join(dir, "main.mjs"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "main.mjs")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("node running the bundle (err %v):\ngot:  %s\nwant: %s", err, out, want)
	}
}

func TestResolveJavaScriptDeterministic(t *testing.T) {
	requireInstalled(t, "ts-tool", "is-number")
	for fixture, block := range map[string]string{"ts-tool": "adder", "js-tool": "echo"} {
		t.Run(fixture, func(t *testing.T) {
			// Two workspaces at different depths: absolute paths differ in
			// length and content, the layout inside is the same.
			a := newJSWorkspace(t, t.TempDir(), fixture, block, "")
			deep := filepath.Join(t.TempDir(), "some", "deeper", "place")
			if err := os.MkdirAll(deep, 0o755); err != nil {
				t.Fatal(err)
			}
			b := newJSWorkspace(t, deep, fixture, block, "")
			var first *Resolved
			for i, w := range []*jsWorkspace{a, a, b, b} {
				res, diags := ResolveJavaScript(context.Background(), w.req)
				if diags.HasErrors() {
					t.Fatalf("run %d: %s", i, diags.Error())
				}
				if first == nil {
					first = res
					continue
				}
				if got, want := res.Outputs["bundle.js"], first.Outputs["bundle.js"]; !bytes.Equal(got, want) {
					t.Fatalf("run %d: bundle differs\ngot:\n%s\nwant:\n%s", i, got, want)
				}
				if !reflect.DeepEqual(res, first) {
					t.Fatalf("run %d: result differs\ngot:  %+v %+v\nwant: %+v %+v", i, res.Tools, *res.Pin, first.Tools, *first.Pin)
				}
			}
		})
	}
}

func TestResolveJavaScriptCache(t *testing.T) {
	w := newJSWorkspace(t, t.TempDir(), "js-tool", "echo", "")
	w.req.Cache = NewCache(w.dir)

	resolve := func(step string) (*Resolved, int64) {
		t.Helper()
		before := jsBundles.Load()
		res, diags := ResolveJavaScript(context.Background(), w.req)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", step, diags.Error())
		}
		return res, jsBundles.Load() - before
	}

	cold, builds := resolve("cold")
	if builds != 1 {
		t.Errorf("cold run esbuild builds:\ngot:  %d\nwant: 1", builds)
	}
	// Entries reach the database at Flush (Run flushes); the warm run
	// reads them back from it.
	if err := w.req.Cache.Flush(); err != nil {
		t.Fatal(err)
	}
	entries, err := CacheEntries(w.dir, "javascript")
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache entries after the cold run:\ngot:  %d (%v)\nwant: 1", len(entries), err)
	}

	warm, builds := resolve("warm")
	if builds != 0 {
		t.Errorf("warm run esbuild builds:\ngot:  %d\nwant: 0", builds)
	}
	if !reflect.DeepEqual(warm, cold) {
		t.Errorf("cached result:\ngot:  %+v %+v\nwant: %+v %+v", warm.Tools, *warm.Pin, cold.Tools, *cold.Pin)
	}

	// The manifest's description is applied on a hit, not cached.
	w.req.Tool.Description = manifest.String{Value: "ignored: the export has one", Set: true}
	if hit, builds := resolve("description"); builds != 0 || hit.Tools[0].Description != "Echoes its input back." {
		t.Errorf("hit with a manifest description:\ngot:  %d builds, %q\nwant: 0 builds, %q", builds, hit.Tools[0].Description, "Echoes its input back.")
	}

	// Changing the package is a miss.
	src := filepath.Join(w.dir, "tools", "echo", "src", "tool.js")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("Echoes its input back."), []byte("Echoes its input."), 1)
	if err := os.WriteFile(src, b, 0o644); err != nil {
		t.Fatal(err)
	}
	changed, builds := resolve("changed")
	if builds != 1 || changed.Tools[0].Description != "Echoes its input." || changed.Pin.Source == cold.Pin.Source {
		t.Errorf("after a change:\ngot:  %d builds, %q, source %s\nwant: 1 build, %q, a new source hash", builds, changed.Tools[0].Description, changed.Pin.Source, "Echoes its input.")
	}

	// A failed resolution writes nothing.
	bad := newJSWorkspace(t, t.TempDir(), "broken/throws", "tool", "")
	bad.req.Cache = NewCache(bad.dir)
	if _, diags := ResolveJavaScript(context.Background(), bad.req); !diags.HasErrors() {
		t.Fatal("broken/throws resolved without errors")
	}
	if err := bad.req.Cache.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bad.dir, ".agentform", "cache")); !os.IsNotExist(err) {
		t.Errorf("cache after a failure:\ngot:  %v\nwant: no cache directory", err)
	}
}

func TestResolveJavaScriptErrors(t *testing.T) {
	tests := []struct {
		name, fixture, block, extra string
		// setup prepares the workspace after the fixture is copied.
		setup       func(t *testing.T, dir string)
		wantSummary string
		wantDetail  []string
		atExport    bool
	}{
		{
			name: "source not found", block: "tool",
			wantSummary: "Source not found",
			wantDetail:  []string{`"./tools/tool"`},
		},
		{
			name: "no package.json", block: "tool",
			setup: func(t *testing.T, dir string) {
				if err := os.MkdirAll(filepath.Join(dir, "tools", "tool"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			wantSummary: "Invalid javascript package",
			wantDetail:  []string{"tools/tool has no package.json", "npm init -y"},
		},
		{
			name: "no entry point", fixture: "broken/no-entry", block: "tool",
			wantSummary: "No entry point",
			wantDetail:  []string{"index.ts, index.js, index.tsx, index.jsx", `no "main"`},
		},
		{
			name: "missing dependency", fixture: "broken/missing-dep", block: "tool",
			wantSummary: "Missing JavaScript dependency",
			wantDetail:  []string{`tools/tool/index.ts:2:21: could not resolve "left-pad"`, `run "npm ci" in tools/tool`},
		},
		{
			name: "dependency only in a parent node_modules", fixture: "ts-tool", block: "tool",
			setup: func(t *testing.T, dir string) {
				requireInstalled(t, "ts-tool", "is-number")
				if err := os.RemoveAll(filepath.Join(dir, "tools", "tool", "node_modules")); err != nil {
					t.Fatal(err)
				}
				jsCopyDir(t, filepath.Join(jsFixtures, "ts-tool", "node_modules"), filepath.Join(dir, "node_modules"))
			},
			wantSummary: "Import outside the package",
			wantDetail:  []string{`tools/tool/index.ts:1:22: "is-number" resolves to node_modules/is-number/index.js, outside the package`, `add it to tools/tool/package.json and run "npm ci" in tools/tool`},
		},
		{
			name: "relative import leaving the package", fixture: "broken/escapes", block: "tool",
			setup: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, "tools", "shared.ts"), []byte("export const greeting = \"hi\";\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantSummary: "Import outside the package",
			wantDetail:  []string{`tools/tool/index.ts:2:26: "../shared" resolves to tools/shared.ts, outside the package`, "move the file into tools/tool"},
		},
		{
			name: "typescript syntax error", fixture: "broken/syntax-error", block: "tool",
			wantSummary: "JavaScript build failed",
			wantDetail:  []string{`tools/tool/index.ts:8:13: Unexpected "*"`},
		},
		{
			name: "missing export", fixture: "broken/missing-export", block: "adder",
			wantSummary: "Tool export not found",
			wantDetail:  []string{`tools/adder has no export named "adder"; it exports "first" and "second"`},
		},
		{
			name: "missing explicit export", fixture: "broken/missing-export", block: "adder",
			extra:       "  export = \"third\"\n",
			wantSummary: "Tool export not found",
			wantDetail:  []string{`no export named "third"`},
			atExport:    true,
		},
		{
			name: "parameters not an object", fixture: "broken/params-not-object", block: "tool",
			wantSummary: "Invalid tool schema",
			wantDetail:  []string{`The parameters of the export "tool" of tools/tool are a string`},
		},
		{
			name: "parameters not an object schema", fixture: "broken/params-not-object-schema", block: "tool",
			wantSummary: "Invalid tool schema",
			wantDetail:  []string{`its "type" is "string"`, `set "type" to "object"`},
		},
		{
			name: "invalid schema", fixture: "broken/invalid-schema", block: "tool",
			wantSummary: "Invalid tool schema",
			wantDetail:  []string{"is not a valid JSON Schema", "/properties/a/type"},
		},
		{
			name: "missing name", fixture: "broken/missing-name", block: "tool",
			wantSummary: "Invalid tool definition",
			wantDetail:  []string{`The export "tool" of tools/tool has no name`},
		},
		{
			name: "no description anywhere", fixture: "js-tool", block: "tool",
			extra:       "  export = \"quiet\"\n",
			wantSummary: "Invalid tool definition",
			wantDetail:  []string{"has no description"},
		},
		{
			name: "export without parameters", fixture: "js-tool", block: "tool",
			extra:       "  export = \"helper\"\n",
			wantSummary: "Invalid tool schema",
			wantDetail:  []string{`The parameters of the export "helper" of tools/tool are undefined`},
		},
		{
			name: "top-level code throws", fixture: "broken/throws", block: "tool",
			wantSummary: "Invalid tool definition",
			wantDetail:  []string{"tools/tool/index.ts:7: Error: configuration file missing"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w := newJSWorkspace(t, dir, tt.fixture, tt.block, tt.extra)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			res, diags := ResolveJavaScript(context.Background(), w.req)
			if res != nil {
				t.Errorf("result:\ngot:  %+v\nwant: nil", res)
			}
			line := w.sourceLine
			if tt.atExport {
				line = w.exportLine
			}
			jsWantDiag(t, diags, tt.wantSummary, line, tt.wantDetail...)
		})
	}
}

func TestResolveJavaScriptTimeout(t *testing.T) {
	t.Run("time limit", func(t *testing.T) {
		w := newJSWorkspace(t, t.TempDir(), "broken/loop-forever", "tool", "")
		w.req.Timeout = 200 * time.Millisecond
		done := make(chan hcl.Diagnostics, 1)
		go func() {
			_, diags := ResolveJavaScript(context.Background(), w.req)
			done <- diags
		}()
		select {
		case diags := <-done:
			jsWantDiag(t, diags, "Tool definition timed out", w.sourceLine, "did not finish within 200ms", "move long-running work into execute")
		case <-time.After(DefaultTimeout):
			t.Fatalf("resolution still running after %s\nwant: stopped by the 200ms time limit", DefaultTimeout)
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		w := newJSWorkspace(t, t.TempDir(), "broken/loop-forever", "tool", "")
		w.req.Timeout = time.Hour
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		done := make(chan hcl.Diagnostics, 1)
		go func() {
			_, diags := ResolveJavaScript(ctx, w.req)
			done <- diags
		}()
		select {
		case diags := <-done:
			jsWantDiag(t, diags, "Resolution cancelled", w.sourceLine, "was cancelled: context deadline exceeded")
		case <-time.After(DefaultTimeout):
			t.Fatalf("resolution still running after %s\nwant: stopped by the cancelled context", DefaultTimeout)
		}
	})
}

// TestJavaScriptBundlerMatchesGoMod keeps the pinned bundler version in
// step with the esbuild module agentform is built with.
func TestJavaScriptBundlerMatchesGoMod(t *testing.T) {
	path := filepath.Join("..", "..", "go.mod")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax(path, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, r := range f.Require {
		if r.Mod.Path == "github.com/evanw/esbuild" {
			got = "esbuild " + strings.TrimPrefix(r.Mod.Version, "v")
		}
	}
	if got != JavaScriptBundler {
		t.Errorf("esbuild in go.mod:\ngot:  %q\nwant: %q (update JavaScriptBundler with the module)", got, JavaScriptBundler)
	}
}

func TestJSCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":{"d":[3,2],"c":1.50}}`, `{"a":{"c":1.50,"d":[3,2]},"b":1}`},
		{`{"x":"<&>"}`, `{"x":"<&>"}`},
		{` { "n" : 12345678901234567890 } `, `{"n":12345678901234567890}`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := jsCanonicalJSON([]byte(tt.in))
			if err != nil || string(got) != tt.want {
				t.Errorf("jsCanonicalJSON(%s):\ngot:  %s (%v)\nwant: %s", tt.in, got, err, tt.want)
			}
		})
	}
}

// jsWantDiag checks that diags is exactly one error with the summary,
// located on the given manifest line, whose detail holds every part.
func jsWantDiag(t *testing.T, diags hcl.Diagnostics, summary string, line int, parts ...string) {
	t.Helper()
	if len(diags) != 1 || diags[0].Severity != hcl.DiagError {
		t.Fatalf("diagnostics:\ngot:  %s\nwant: one error %q", diags.Error(), summary)
	}
	d := diags[0]
	t.Logf("%s: %s", d.Summary, d.Detail)
	if d.Summary != summary {
		t.Errorf("summary:\ngot:  %q (%s)\nwant: %q", d.Summary, d.Detail, summary)
	}
	if d.Subject == nil || d.Subject.Filename != "agent.acl" || d.Subject.Start.Line != line {
		t.Errorf("subject:\ngot:  %v\nwant: agent.acl line %d", d.Subject, line)
	}
	for _, p := range parts {
		if !strings.Contains(d.Detail, p) {
			t.Errorf("detail:\ngot:  %s\nwant: it to contain %q", d.Detail, p)
		}
	}
}

// BenchmarkResolveJavaScript resolves 200 small TypeScript tool packages
// sequentially: cold with an empty cache (bundling every package), warm
// with every package cached.
func BenchmarkResolveJavaScript(b *testing.B) {
	const n = 200
	dir := b.TempDir()
	var acl strings.Builder
	acl.WriteString(jsTestAgent)
	for i := range n {
		name := fmt.Sprintf("t%03d", i)
		pkg := filepath.Join(dir, "tools", name)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			b.Fatal(err)
		}
		src := fmt.Sprintf(`interface Args { text: string }
const scale = (s: string): string => s.repeat(%d);
export const %s = {
  name: %q,
  description: "Tool number %d.",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute({ args }: { args: Args }) { return { output: scale(args.text) }; },
};
`, i%5+1, name, name, i)
		files := map[string]string{
			"package.json": fmt.Sprintf("{\n  \"name\": %q,\n  \"version\": \"1.0.0\",\n  \"private\": true\n}\n", name),
			"index.ts":     src,
		}
		for f, content := range files {
			if err := os.WriteFile(filepath.Join(pkg, f), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		fmt.Fprintf(&acl, "\ntool %q {\n  kind   = \"javascript\"\n  source = \"./tools/%s\"\n}\n", name, name)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(acl.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	root := ProjectRoot(dir)
	resolveAll := func(b *testing.B, cache *Cache) {
		for _, tool := range cfg.Tools {
			_, diags := ResolveJavaScript(context.Background(), Request{Config: cfg, Tool: tool, Dir: dir, Root: root, Cache: cache})
			if diags.HasErrors() {
				b.Fatal(diags.Error())
			}
		}
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			cache := NewCache(b.TempDir())
			b.StartTimer()
			resolveAll(b, cache)
		}
	})
	b.Run("warm", func(b *testing.B) {
		cache := NewCache(dir)
		resolveAll(b, cache)
		if err := cache.Flush(); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			resolveAll(b, cache)
		}
	})
}

// jsFixtureBlock is a javascript tool block of jsFixtureWorkspace: its
// name, the fixture its package copies, and extra attributes.
type jsFixtureBlock struct{ name, fixture, extra string }

// jsFixtureWorkspace writes a workspace in dir with jsTestAgent and a
// block for each of blocks, its package a copy of its fixture, and loads
// it.
func jsFixtureWorkspace(t *testing.T, dir string, blocks []jsFixtureBlock) *manifest.Config {
	t.Helper()
	acl := jsTestAgent
	for _, b := range blocks {
		jsCopyDir(t, filepath.Join(jsFixtures, filepath.FromSlash(b.fixture)), filepath.Join(dir, "tools", b.name))
		acl += fmt.Sprintf("\ntool %q {\n  kind   = \"javascript\"\n  source = \"./tools/%s\"\n%s}\n", b.name, b.name, b.extra)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(acl), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return cfg
}

// TestRunJavaScriptBatch resolves several javascript packages through Run,
// which bundles them with one esbuild build, and checks every result and
// every diagnostic against resolving the block alone: sharing a build must
// change nothing, broken packages included (their errors make the shared
// build fall back to one build per package).
func TestRunJavaScriptBatch(t *testing.T) {
	dir := t.TempDir()
	blocks := []jsFixtureBlock{
		{"echo", "js-tool", ""},
		{"echo_again", "js-tool", "  export = \"echo\"\n"},
		{"adder", "ts-tool", ""},
		{"throws", "broken/throws", ""},
		{"syntax", "broken/syntax-error", ""},
		{"escapes", "broken/escapes", ""},
		{"missing_dep", "broken/missing-dep", ""},
		{"missing_export", "broken/missing-export", ""},
		{"dynamic_import", "broken/dynamic-import", "  export = \"tool\"\n"},
	}
	cfg := jsFixtureWorkspace(t, dir, blocks)
	ws, runDiags := Run(context.Background(), cfg, Options{})
	first, firstDiags := ws, runDiags

	real, _ := filepath.EvalSymlinks(dir)
	for _, b := range blocks {
		alone, aloneDiags := ResolveJavaScript(context.Background(), Request{Config: cfg, Tool: cfg.Tool(b.name), Dir: real, Root: ProjectRoot(real)})
		got := ws.Tools[b.name]
		if (got == nil) != (alone == nil) || got != nil && !reflect.DeepEqual(got, alone) {
			t.Errorf("%s: result from the shared build differs from its own build", b.name)
		}
		for _, d := range aloneDiags {
			found := false
			for _, rd := range runDiags {
				if rd.Summary == d.Summary && rd.Detail == d.Detail && reflect.DeepEqual(rd.Subject, d.Subject) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: diagnostic of its own build missing from Run's:\n%s: %s", b.name, d.Summary, d.Detail)
			}
		}
		if b.name == "echo" || b.name == "adder" {
			if got == nil {
				t.Errorf("%s did not resolve: %s", b.name, runDiags.Error())
			}
		} else if b.name != "echo_again" && len(aloneDiags) == 0 {
			t.Errorf("%s: the broken fixture resolved without errors", b.name)
		}
	}
	if len(runDiags) != 6 {
		t.Errorf("Run diagnostics:\ngot:  %d\nwant: 6 (one per broken package)\n%s", len(runDiags), runDiags.Error())
	}

	// Without broken packages the shared build is the only one.
	okCfg := *cfg
	okCfg.Tools = nil
	for _, name := range []string{"echo", "echo_again", "adder"} {
		okCfg.Tools = append(okCfg.Tools, cfg.Tool(name))
	}
	before, beforeStrict := jsBundles.Load(), jsStrictBundles.Load()
	ws, diags := Run(context.Background(), &okCfg, Options{})
	if diags.HasErrors() || len(ws.Tools) != 3 {
		t.Fatalf("resolving three good blocks: %d tools, %s", len(ws.Tools), diags.Error())
	}
	if n := jsBundles.Load() - before; n != 1 {
		t.Errorf("esbuild builds for three packages:\ngot:  %d\nwant: 1", n)
	}
	// adder imports a dependency from its node_modules: the imports are
	// checked without a resolver per import.
	if n := jsStrictBundles.Load() - beforeStrict; n != 0 {
		t.Errorf("builds checking each import as it resolves:\ngot:  %d\nwant: 0", n)
	}

	// At most jsBatchSize packages a build, with the same results.
	defer func(n int) { jsBatchSize = n }(jsBatchSize)
	jsBatchSize = 2
	before = jsBundles.Load()
	small, diags := Run(context.Background(), &okCfg, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if n := jsBundles.Load() - before; n != 2 {
		t.Errorf("esbuild builds for three packages, two a build:\ngot:  %d\nwant: 2", n)
	}
	if !reflect.DeepEqual(small.Tools, ws.Tools) {
		t.Errorf("results differ when the packages are built two a build")
	}

	// With the broken packages too: a failing chunk falls back package by
	// package, and every result and diagnostic is what one build gave.
	before = jsBundles.Load()
	all, allDiags := Run(context.Background(), cfg, Options{})
	if !reflect.DeepEqual(all.Tools, first.Tools) || allDiags.Error() != firstDiags.Error() {
		t.Errorf("two a build, broken packages included\ngot:  %d tools, %s\nwant: %d tools, %s", len(all.Tools), allDiags.Error(), len(first.Tools), firstDiags.Error())
	}
	if n := jsBundles.Load() - before; n <= 4 {
		t.Errorf("esbuild builds for eight packages, two a build, four broken:\ngot:  %d\nwant: more than the four shared builds", n)
	}
}

// jsWriteFiles writes files (path relative to dir → content), creating
// directories.
func jsWriteFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// jsToolSource is a tool definition named name, after prefix.
func jsToolSource(prefix, name string) string {
	return prefix + "\nexport const " + name + " = {\n  name: \"" + name + "\",\n  description: \"A tool.\",\n  parameters: { type: \"object\" },\n  async execute() {\n    return { output: \"ok\" };\n  },\n};\n"
}

// jsRunTools resolves a workspace whose tools are the packages tools/<name>
// and returns Run's result and diagnostics, and each tool resolved alone.
func jsRunTools(t *testing.T, dir string, names ...string) (*Workspace, hcl.Diagnostics, map[string]hcl.Diagnostics) {
	t.Helper()
	acl := jsTestAgent
	for _, n := range names {
		acl += fmt.Sprintf("\ntool %q {\n  kind   = \"javascript\"\n  source = \"./tools/%s\"\n}\n", n, n)
	}
	jsWriteFiles(t, dir, map[string]string{"agent.acl": acl})
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	ws, runDiags := Run(context.Background(), cfg, Options{})
	real, _ := filepath.EvalSymlinks(dir)
	alone := map[string]hcl.Diagnostics{}
	for _, n := range names {
		_, alone[n] = ResolveJavaScript(context.Background(), Request{Config: cfg, Tool: cfg.Tool(n), Dir: real, Root: ProjectRoot(real)})
	}
	return ws, runDiags, alone
}

// TestRunJavaScriptImportSuffix: an import whose ?query climbs back into
// the importer's package does not let another package's file into a
// shared bundle (the metafile names the file with the suffix).
func TestRunJavaScriptImportSuffix(t *testing.T) {
	dir := t.TempDir()
	jsWriteFiles(t, dir, map[string]string{
		"tools/a/package.json": `{"name": "a", "private": true}`,
		"tools/a/index.ts":     jsToolSource(`import "../b/secret.js?/../../a/nothing";`, "a"),
		"tools/b/package.json": `{"name": "b", "private": true}`,
		"tools/b/index.ts":     jsToolSource("", "b"),
		"tools/b/secret.js":    "console.log(\"b's secret\");\n",
	})
	ws, runDiags, alone := jsRunTools(t, dir, "a", "b")
	if ws.Tools["a"] != nil {
		t.Fatalf("a resolved, its bundle:\n%s", ws.Tools["a"].Outputs["bundle.js"])
	}
	if ws.Tools["b"] == nil {
		t.Errorf("b did not resolve: %s", runDiags.Error())
	}
	if len(alone["a"]) != 1 || alone["a"][0].Summary != "Import outside the package" {
		t.Fatalf("a alone\ngot:  %v\nwant: its import refused", alone["a"])
	}
	if len(runDiags) != 1 || runDiags[0].Detail != alone["a"][0].Detail {
		t.Errorf("Run's diagnostics\ngot:  %v\nwant: %v", runDiags, alone["a"])
	}
}

// TestResolveJavaScriptLoadsOnlyItsFiles: what esbuild loads without
// asking a resolve plugin (a glob import) cannot bring a file from
// outside the package either. (An entry point linked out of the package
// is refused before, by hashing.)
func TestResolveJavaScriptLoadsOnlyItsFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"glob import", func(t *testing.T, dir string) {
			jsWriteFiles(t, dir, map[string]string{
				"tools/tool/package.json": `{"name": "tool", "private": true}`,
				"tools/tool/index.ts":     jsToolSource("export function load(name: string) {\n  return import(`../outside/${name}.js`);\n}\n", "tool"),
				"tools/outside/x.js":      "export const x = 1;\n",
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			ws, runDiags, alone := jsRunTools(t, dir, "tool")
			if ws.Tools["tool"] != nil {
				t.Fatalf("the tool resolved, its bundle:\n%s", ws.Tools["tool"].Outputs["bundle.js"])
			}
			if len(alone["tool"]) == 0 || !strings.Contains(alone["tool"][0].Detail, "is outside the package") || alone["tool"][0].Summary != "Import outside the package" {
				t.Errorf("diagnostics\ngot:  %v\nwant: the file outside the package refused", alone["tool"])
			}
			if runDiags.Error() != alone["tool"].Error() {
				t.Errorf("Run's diagnostics\ngot:  %v\nwant: %v", runDiags, alone["tool"])
			}
		})
	}
}

// TestResolveJavaScriptUnhashedFiles: files the package's hash leaves out
// (a dist/ directory) cannot reach the bundle, whether as the entry point
// or imported; the lockfile would not notice them change.
func TestResolveJavaScriptUnhashedFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		where string
	}{
		{"entry point in dist", map[string]string{
			"tools/tool/package.json":  `{"name": "tool", "private": true, "main": "dist/index.js"}`,
			"tools/tool/dist/index.js": jsToolSource("", "tool"),
		}, "tools/tool/dist/index.js is in dist/"},
		{"import from dist", map[string]string{
			"tools/tool/package.json":   `{"name": "tool", "private": true}`,
			"tools/tool/index.ts":       jsToolSource(`import { x } from "./dist/helper.js";`+"\nconsole.log(x);", "tool"),
			"tools/tool/dist/helper.js": "export const x = 1;\n",
		}, "tools/tool/dist/helper.js is in dist/"},
		// A package at the workspace's root holds the lockfile, which its
		// hash leaves out (it records that hash).
		{"import of the lockfile", map[string]string{
			"tools/tool/package.json":       `{"name": "tool", "private": true}`,
			"tools/tool/index.ts":           jsToolSource(`import lock from "./agentform.lock.hcl" with { type: "text" };`+"\nconsole.log(lock);", "tool"),
			"tools/tool/agentform.lock.hcl": "# pinned\n",
		}, "tools/tool/agentform.lock.hcl is the workspace's lockfile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			jsWriteFiles(t, dir, tc.files)
			ws, runDiags, alone := jsRunTools(t, dir, "tool")
			if ws.Tools["tool"] != nil {
				t.Fatalf("the tool resolved, its bundle:\n%s", ws.Tools["tool"].Outputs["bundle.js"])
			}
			d := alone["tool"]
			if len(d) != 1 || d[0].Summary != "Import of an unpinned file" || !strings.Contains(d[0].Detail, tc.where) {
				t.Errorf("diagnostics\ngot:  %v\nwant: %q refused", d, tc.where)
			}
			if runDiags.Error() != d.Error() {
				t.Errorf("Run's diagnostics\ngot:  %v\nwant: %v", runDiags, d)
			}
		})
	}
}

// TestRunJavaScriptDisabledModule: a dependency whose package.json
// "browser" field disables a module (common in npm packages) still
// shares the build.
func TestRunJavaScriptDisabledModule(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for _, n := range []string{"a", "b"} {
		files["tools/"+n+"/package.json"] = `{"name": "` + n + `", "private": true, "dependencies": {"dep": "1.0.0"}}`
		files["tools/"+n+"/index.ts"] = jsToolSource(`import { x } from "dep";`+"\nconsole.log(x);", n)
		files["tools/"+n+"/node_modules/dep/package.json"] = `{"name": "dep", "version": "1.0.0", "main": "index.js", "browser": {"fs": false}}`
		files["tools/"+n+"/node_modules/dep/index.js"] = "const fs = require(\"fs\");\nexports.x = typeof fs;\n"
	}
	jsWriteFiles(t, dir, files)
	before, beforeStrict := jsBundles.Load(), jsStrictBundles.Load()
	ws, runDiags, _ := jsRunTools(t, dir, "a", "b")
	if runDiags.HasErrors() || ws.Tools["a"] == nil || ws.Tools["b"] == nil {
		t.Fatalf("resolving: %s", runDiags.Error())
	}
	// Run's one shared build, then each resolved alone.
	if n := jsBundles.Load() - before; n != 3 {
		t.Errorf("esbuild builds\ngot:  %d\nwant: 3 (one shared, one for each alone)", n)
	}
	if n := jsStrictBundles.Load() - beforeStrict; n != 0 {
		t.Errorf("strict builds\ngot:  %d\nwant: 0", n)
	}
}

// TestRunJavaScriptCrossPackage: in a shared build, a package importing a
// file of another package of the same build is refused as it is alone,
// though the file is inside a package being built; the other package
// resolves.
func TestRunJavaScriptCrossPackage(t *testing.T) {
	dir := t.TempDir()
	// escapes imports "../shared", here the directory of the package
	// "shared": tools/shared/index.ts.
	jsCopyDir(t, filepath.Join(jsFixtures, "broken", "escapes"), filepath.Join(dir, "tools", "escapes"))
	jsWriteFiles(t, dir, map[string]string{
		"tools/shared/package.json": `{"name": "shared", "version": "0.1.0", "private": true}` + "\n",
		"tools/shared/index.ts":     jsToolSource(`export const greeting = "hi";`, "shared"),
	})
	ws, runDiags, alone := jsRunTools(t, dir, "shared", "escapes")
	if ws.Tools["shared"] == nil {
		t.Errorf("shared did not resolve: %s", runDiags.Error())
	}
	if ws.Tools["escapes"] != nil {
		t.Errorf("the package importing another package's file resolved")
	}
	want := alone["escapes"]
	if len(want) != 1 || want[0].Summary != "Import outside the package" || !strings.Contains(want[0].Detail, `"../shared" resolves to tools/shared/index.ts, outside the package`) {
		t.Fatalf("the package alone\ngot:  %v\nwant: the import of ../shared refused", want)
	}
	if len(runDiags) != 1 || runDiags[0].Detail != want[0].Detail || !reflect.DeepEqual(runDiags[0].Subject, want[0].Subject) {
		t.Errorf("Run's diagnostics\ngot:  %v\nwant: %v", runDiags, want)
	}
}

// TestRunInterruptedOnce checks that an interrupted resolution says so
// once, not once more for every tool it stopped.
func TestRunInterruptedOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := jsFixtureWorkspace(t, dir, []jsFixtureBlock{
		{"echo", "js-tool", ""},
		{"adder", "ts-tool", ""},
		{"echo_again", "js-tool", "  export = \"echo\"\n"},
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, diags := Run(ctx, cfg, Options{})
	var summaries []string
	for _, d := range diags {
		summaries = append(summaries, d.Summary)
	}
	if !slices.Equal(summaries, []string{"Resolution interrupted"}) {
		t.Fatalf("diagnostics\ngot:  %q\nwant: one, Resolution interrupted", summaries)
	}
	// In words, not Go's "context canceled".
	if d := diags[0].Detail; strings.Contains(d, "context canceled") || !strings.Contains(d, "it was interrupted") {
		t.Errorf("detail\ngot:  %s\nwant: it says the resolution was interrupted, in words", d)
	}
}
