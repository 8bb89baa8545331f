package resolve

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/mcpwire"
	"github.com/agentform/agentform/lockfile"
)

// JavaScriptBundler names the bundler and its version as pinned in the
// lockfile (lockfile.Tool.Bundler). It must match the github.com/evanw/esbuild
// version in go.mod: it is part of every javascript cache key, so a stale
// constant would serve bundles built by a different esbuild.
const JavaScriptBundler = "esbuild 0.28.2"

// jsEntryNames are the entry files looked for, in order, before
// package.json "main".
var jsEntryNames = []string{"index.ts", "index.js", "index.tsx", "index.jsx"}

// jsLockFiles are the package manager lock files, in order of preference,
// with the command that installs exactly what each pins.
var jsLockFiles = []struct{ name, install string }{
	{"package-lock.json", "npm ci"},
	{"pnpm-lock.yaml", "pnpm install --frozen-lockfile"},
	{"yarn.lock", "yarn install --frozen-lockfile"},
}

func init() {
	// goja's backtracking regular expressions (regexp2) cannot be
	// interrupted by the evaluation time limit; a match running longer
	// than this fails instead of hanging the plan.
	if regexp2.DefaultMatchTimeout > 2*time.Second {
		regexp2.DefaultMatchTimeout = 2 * time.Second
	}
}

// jsBundles counts esbuild builds, so tests can tell a cache hit (no
// bundling) from a miss.
var jsBundles atomic.Int64

// jsStrictBundles counts the builds among them that checked every import
// as it resolved (jsBuildOnce), which only a failed build needs.
var jsStrictBundles atomic.Int64

// jsMaxErrors caps the build errors reported for one tool; the rest are
// summed up in one line.
const jsMaxErrors = 10

// jsCacheEntry is what the cache keeps for a javascript package: the parts
// of the result that depend only on the cache key's inputs. The block name
// and the manifest's description are applied on every hit.
type jsCacheEntry struct {
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Bundle      []byte          `json:"-"`
}

// jsCacheMagic starts every javascript cache entry; an entry without it
// (such as the JSON documents older versions wrote) is a miss. It is part
// of the entries' keys too. (Entry 3: definitions read with the fixed
// clock and random seed; those of entry 2 read the host's.)
const jsCacheMagic = "agentform javascript cache entry 3\n"

// MarshalBinary encodes e for the resolution cache: jsCacheMagic, the
// length of a JSON header (description and parameters) as a uvarint, the
// header, then the bundle as it is. In a JSON document the bundle was a
// base64 string, and decoding those was nearly all the CPU of a no-op
// plan of tools with npm dependencies (757 KB bundles).
func (e jsCacheEntry) MarshalBinary() ([]byte, error) {
	// Not json.Marshal, which escapes <, > and & in the parameters'
	// strings as \u003c…: the parameters must read back as the bytes
	// they were.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	head := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	out := make([]byte, 0, len(jsCacheMagic)+binary.MaxVarintLen64+len(head)+len(e.Bundle))
	out = append(out, jsCacheMagic...)
	out = binary.AppendUvarint(out, uint64(len(head)))
	out = append(out, head...)
	return append(out, e.Bundle...), nil
}

// UnmarshalBinary decodes what MarshalBinary encoded. It copies the
// bundle: b belongs to the caller.
func (e *jsCacheEntry) UnmarshalBinary(b []byte) error {
	rest, ok := bytes.CutPrefix(b, []byte(jsCacheMagic))
	if !ok {
		return errors.New("not a javascript cache entry of this version")
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)-k) {
		return errors.New("javascript cache entry: bad header length")
	}
	var head jsCacheEntry
	if err := json.Unmarshal(rest[k:k+int(n)], &head); err != nil {
		return fmt.Errorf("javascript cache entry: %w", err)
	}
	head.Bundle = bytes.Clone(rest[k+int(n):])
	*e = head
	return nil
}

// jsPackage is a javascript source directory as found on disk.
type jsPackage struct {
	dir      string // absolute, symbolic links resolved
	work     string // the workspace directory, symbolic links resolved
	rel      string // dir relative to the workspace, slash-separated
	entry    string // entry file relative to dir, slash-separated
	source   string // h1: hash of the package
	deps     string // sha256 of the lock file, or ""
	install  string // the command that installs the dependencies
	tsconfig string // dir/tsconfig.json when present
}

// jsTool is the tool object read from the CommonJS build.
type jsTool struct {
	description string
	parameters  json.RawMessage // canonical JSON
}

// ResolveJavaScript resolves a javascript tool block: it finds the
// package's entry, bundles it in-process with esbuild (ESM, platform
// browser, agentc:* external, dependencies only from the package's own
// node_modules) and reads the exported tool object by evaluating the bundle,
// converted to CommonJS, in goja, with no I/O and bounded by req.Timeout.
// Results are cached by the digest of the package, its lock file, the
// export and the bundler version; a cache hit does no bundling. Every
// problem is a diagnostic located at the block's source argument, except a
// missing export named by a written export argument, which is located
// there. Run resolves many javascript blocks with one esbuild build
// (jsResolveAll); the result is the same.
func ResolveJavaScript(ctx context.Context, req Request) (*Resolved, hcl.Diagnostics) {
	job := &jsJob{req: req}
	jsResolveAll(ctx, []*jsJob{job}, func(n int, f func(int)) {
		for i := range n {
			f(i)
		}
	})
	return job.res, job.diags
}

// jsResult assembles the Resolved value of a javascript block from what
// the package produced and what the manifest says.
func jsResult(req Request, pkg *jsPackage, tool jsTool, bundle []byte, subject *hcl.Range) (*Resolved, hcl.Diagnostics) {
	t := req.Tool
	desc := tool.description
	if desc == "" {
		desc = t.Description.Value
	}
	if desc == "" {
		return nil, jsError(subject, "Invalid tool definition",
			"The tool object exported by %s has no description, and the tool block sets none either. Add a description string to the exported object (or a description argument to the block).", pkg.rel)
	}
	var diags hcl.Diagnostics
	if tool.description != "" {
		diags = descriptionNotUsed(t, tool.description, "The tool object exported by "+pkg.rel)
	}
	return &Resolved{
		Tools: []Tool{{
			Name:        t.Name,
			Description: desc,
			InputSchema: append(json.RawMessage(nil), tool.parameters...),
		}},
		DescriptionUnused: tool.description != "",
		Pin: &lockfile.Tool{
			Kind:    manifest.KindJavaScript,
			Source:  pkg.source,
			Deps:    pkg.deps,
			Bundle:  SHA256(bundle),
			Bundler: JavaScriptBundler,
		},
		Outputs: map[string][]byte{"bundle.js": bundle},
	}, diags
}

// jsFindPackage locates the package directory, its entry file and lock
// file, and hashes it.
func jsFindPackage(req Request, subject *hcl.Range) (*jsPackage, hcl.Diagnostics) {
	src := req.Tool.JavaScript.Source
	dir, diags := sourceDir(req.Dir, req.Root, req.dirsReal, src, "javascript package")
	if diags.HasErrors() {
		return nil, diags
	}
	work := req.Dir
	if !req.dirsReal {
		if real, err := filepath.EvalSymlinks(req.Dir); err == nil {
			work = real
		}
	}
	pkg := &jsPackage{dir: dir, work: work, install: "npm install"}
	pkg.rel = jsRel(work, dir)

	raw, err := readInput(filepath.Join(dir, "package.json"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, jsError(subject, "Invalid javascript package",
				"%s has no package.json. A javascript tool's source is an npm package directory; create one with \"npm init -y\" in %s.", pkg.rel, pkg.rel)
		}
		return nil, jsError(subject, "Invalid javascript package", "Reading %s/package.json: %s.", pkg.rel, err)
	}
	var manifestJSON struct {
		Main json.RawMessage `json:"main"`
	}
	if err := json.Unmarshal(raw, &manifestJSON); err != nil {
		return nil, jsError(subject, "Invalid javascript package", "%s/package.json is not valid JSON: %s.", pkg.rel, err)
	}

	for _, name := range jsEntryNames {
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.Mode().IsRegular() {
			pkg.entry = name
			break
		}
	}
	if pkg.entry == "" {
		entry, diags := jsMainEntry(pkg, manifestJSON.Main, subject)
		if diags.HasErrors() {
			return nil, diags
		}
		pkg.entry = entry
	}

	if pkg.source, err = hashPackage(dir); err != nil {
		return nil, jsError(subject, "Cannot hash javascript package", "Hashing %s for the lockfile: %s.", pkg.rel, err)
	}
	for _, lf := range jsLockFiles {
		p := filepath.Join(dir, lf.name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if pkg.deps, err = SHA256File(p); err != nil {
			return nil, jsError(subject, "Cannot hash javascript package", "Reading %s/%s: %s.", pkg.rel, lf.name, err)
		}
		pkg.install = lf.install
		break
	}
	if info, err := os.Stat(filepath.Join(dir, "tsconfig.json")); err == nil && info.Mode().IsRegular() {
		pkg.tsconfig = filepath.Join(dir, "tsconfig.json")
		if err := jsTsconfigConfined(dir, pkg.tsconfig); err != nil {
			return nil, jsError(subject, "Invalid tsconfig.json", "%s/tsconfig.json: %s.", pkg.rel, err)
		}
	}
	return pkg, nil
}

// jsMainEntry reads package.json "main" as the entry when there is no
// index file. It must name a script inside the package.
func jsMainEntry(pkg *jsPackage, main json.RawMessage, subject *hcl.Range) (string, hcl.Diagnostics) {
	none := func() (string, hcl.Diagnostics) {
		return "", jsError(subject, "No entry point",
			"%s has none of %s and its package.json has no \"main\". Add an index.ts (or set \"main\" to the file that exports the tool).",
			pkg.rel, strings.Join(jsEntryNames, ", "))
	}
	if len(main) == 0 || string(main) == "null" {
		return none()
	}
	var s string
	if err := json.Unmarshal(main, &s); err != nil {
		return "", jsError(subject, "Invalid javascript package", "The \"main\" field of %s/package.json must be a string.", pkg.rel)
	}
	if strings.TrimSpace(s) == "" {
		return none()
	}
	clean := filepath.Clean(filepath.FromSlash(s))
	outside := func() (string, hcl.Diagnostics) {
		return "", jsError(subject, "No entry point", "The \"main\" field of %s/package.json names %q, which is outside the package.", pkg.rel, s)
	}
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return outside()
	}
	// As esbuild reads "main" (its resolver's loadAsFile, then
	// loadAsIndex): the file; the name with each of its resolve extensions
	// added; TypeScript's rewrite of the name's extension; then, for a
	// directory, its index file. "." is the package directory itself,
	// whose own name is no file of the package.
	var candidates []string
	if clean != "." {
		candidates = append(candidates, clean)
		for _, ext := range jsResolveExtensions {
			candidates = append(candidates, clean+ext)
		}
		candidates = append(candidates, jsRewritten(clean)...)
	}
	for _, ext := range jsResolveExtensions {
		candidates = append(candidates, filepath.Join(clean, "index"+ext))
	}
	dir := clean == "."
	for _, c := range candidates {
		real, err := filepath.EvalSymlinks(filepath.Join(pkg.dir, c))
		if err != nil {
			continue
		}
		if !within(pkg.dir, real) {
			return outside()
		}
		info, err := os.Stat(real)
		switch {
		case err != nil:
		case info.Mode().IsRegular():
			entry := filepath.ToSlash(c)
			if !jsScriptFile(entry) {
				what := "which is not a script"
				if c != clean {
					what = fmt.Sprintf("which esbuild resolves to %s, not a script", entry)
				}
				return "", jsError(subject, "No entry point",
					"The \"main\" field of %s/package.json names %q, %s. A tool's entry point is a JavaScript or TypeScript file (%s) that exports the tool.",
					pkg.rel, s, what, strings.Join(jsScriptExtensions, ", "))
			}
			return entry, nil
		case info.IsDir() && c == clean:
			dir = true
		}
	}
	var scripts, indexes []string
	for _, ext := range jsResolveExtensions {
		if jsScriptFile(ext) {
			scripts = append(scripts, ext)
			indexes = append(indexes, "index"+ext)
		}
	}
	if dir {
		return "", jsError(subject, "No entry point", "The \"main\" field of %s/package.json names the directory %q, which has none of %s.", pkg.rel, s, strings.Join(indexes, ", "))
	}
	tried := "with " + strings.Join(scripts, ", ") + " added"
	if alt := jsRewritten(clean); len(alt) > 0 {
		tried += ", nor " + strings.Join(alt, " or ")
	}
	return "", jsError(subject, "No entry point", "The \"main\" field of %s/package.json names %q, which is not a file (nor is it %s) nor a directory with an index file.", pkg.rel, s, tried)
}

// jsResolveExtensions are esbuild's default resolve extensions, in its
// order (agentform sets no ResolveExtensions): tried after the name "main"
// gives, and as a directory's index file.
var jsResolveExtensions = []string{".tsx", ".ts", ".jsx", ".js", ".css", ".json"}

// jsRewrittenExtensions is esbuild's TypeScript rewrite of an extension
// (its resolver's rewrittenFileExtensions), tried after
// jsResolveExtensions: "tool.js" is bundled as tool.ts when only that
// exists.
var jsRewrittenExtensions = map[string][]string{
	".js":  {".ts", ".tsx"},
	".jsx": {".ts", ".tsx"},
	".mjs": {".mts"},
	".cjs": {".cts"},
}

// jsRewritten returns name with its extension rewritten as esbuild's
// TypeScript rewrite does, or nothing.
func jsRewritten(name string) []string {
	ext := filepath.Ext(name)
	var alt []string
	for _, to := range jsRewrittenExtensions[ext] {
		alt = append(alt, filepath.ToSlash(strings.TrimSuffix(name, ext)+to))
	}
	return alt
}

// jsScriptExtensions name the files esbuild's default loaders (agentform
// sets none) read as JavaScript or TypeScript.
var jsScriptExtensions = []string{".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"}

// jsLoaderScript tells, by extension, whether esbuild's default loader
// for it reads a script (.json, .css and .txt files are data).
var jsLoaderScript = func() map[string]bool {
	m := map[string]bool{".css": false, ".module.css": false, ".json": false, ".txt": false}
	for _, ext := range jsScriptExtensions {
		m[ext] = true
	}
	return m
}()

// jsScriptFile reports whether esbuild loads the file name as a script: as
// its LoaderFromFileExtension, the longest extension that has a loader
// decides, and a name without one is JavaScript.
func jsScriptFile(name string) bool {
	base := filepath.Base(name)
	i := strings.IndexByte(base, '.')
	if i < 0 {
		return true
	}
	for i >= 0 {
		if script, ok := jsLoaderScript[base[i:]]; ok {
			return script
		}
		base = base[i+1:]
		i = strings.IndexByte(base, '.')
	}
	return false
}

// jsOutsidePlugin names the plugin that refuses imports from outside the
// package, so that its errors can be told from esbuild's.
const jsOutsidePlugin = "agentform-package-only"

// jsUnhashedPlugin names jsLoadWithin's refusals of files of the package
// that its hash leaves out (BuildOutputDirs other than node_modules).
const jsUnhashedPlugin = "agentform-hashed-only"

// jsDynamicImportPlugin names jsLoadWithin's refusals of import() of an
// agentc:* module.
const jsDynamicImportPlugin = "agentform-static-agentc"

// jsPluginSummaries are the diagnostic summaries of agentform's own
// esbuild plugins' errors, by plugin name.
var jsPluginSummaries = map[string]string{
	jsOutsidePlugin:       "Import outside the package",
	jsUnhashedPlugin:      "Import of an unpinned file",
	jsDynamicImportPlugin: "Unsupported dynamic import",
}

// jsOutsideMarker marks the plugin's own resolve calls so that it does not
// recurse into itself.
type jsOutsideMarker struct{}

// jsPackageOnly is an esbuild plugin that refuses imports resolving
// outside pkg's directory: a dependency found in a parent's node_modules,
// or a relative import that leaves the package. Neither is covered by the
// package hash or its lock file, so neither may reach the bundle. It only
// vetoes; esbuild's own resolution does the rest. Resolving every import
// a second time is slow (a fresh esbuild resolver each), so builds use it
// only to say where a package that failed jsLoadWithin's check went out
// (jsBuildOnce).
func jsPackageOnly(pkg *jsPackage) api.Plugin {
	return api.Plugin{
		Name: jsOutsidePlugin,
		Setup: func(build api.PluginBuild) {
			build.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(args api.OnResolveArgs) (api.OnResolveResult, error) {
				if _, ok := args.PluginData.(jsOutsideMarker); ok || args.Kind == api.ResolveEntryPoint || strings.HasPrefix(args.Path, "agentc:") {
					return api.OnResolveResult{}, nil
				}
				r := build.Resolve(args.Path, api.ResolveOptions{
					Importer:   args.Importer,
					Namespace:  args.Namespace,
					ResolveDir: args.ResolveDir,
					Kind:       args.Kind,
					With:       args.With,
					PluginData: jsOutsideMarker{},
				})
				if len(r.Errors) > 0 || r.External || r.Namespace != "file" || r.Path == "" {
					// esbuild reports unresolvable imports itself, located.
					return api.OnResolveResult{}, nil
				}
				real, err := filepath.EvalSymlinks(r.Path)
				if err != nil {
					real = r.Path
				}
				if within(pkg.dir, real) {
					return api.OnResolveResult{}, nil
				}
				advice := fmt.Sprintf("move the file into %s", pkg.rel)
				if jsBareImport(args.Path) {
					advice = fmt.Sprintf("install the dependency in the package itself: add it to %s/package.json and run %q in %s", pkg.rel, pkg.install, pkg.rel)
				}
				return api.OnResolveResult{Errors: []api.Message{{
					Text: fmt.Sprintf("%q resolves to %s, outside the package. Only the package's own files and its own node_modules go into the bundle, because only they are pinned by the lockfile: %s.",
						args.Path, jsRel(pkg.work, real), advice),
				}}}, nil
			})
		},
	}
}

// jsBareImport reports whether an import path names a package (resolved
// through node_modules) rather than a file.
func jsBareImport(path string) bool {
	return !strings.HasPrefix(path, ".") && !strings.HasPrefix(path, "/") && !filepath.IsAbs(path)
}

// jsBuildDiagnostics turns esbuild's errors into diagnostics located at
// the source argument, each naming the file, line and column it is about.
func jsBuildDiagnostics(pkg *jsPackage, msgs []api.Message, subject *hcl.Range) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for i, m := range msgs {
		if i == jsMaxErrors {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "JavaScript build failed",
				Detail:   fmt.Sprintf("%d more errors building %s are not shown.", len(msgs)-jsMaxErrors, pkg.rel),
				Subject:  subject,
			})
			break
		}
		where := pkg.rel
		if l := m.Location; l != nil && l.File != "" {
			where = fmt.Sprintf("%s:%d:%d", filepath.ToSlash(l.File), l.Line, jsColumn(l)+1)
		}
		switch {
		case jsPluginSummaries[m.PluginName] != "":
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  jsPluginSummaries[m.PluginName],
				Detail:   where + ": " + m.Text,
				Subject:  subject,
			})
		case strings.HasPrefix(m.Text, "Could not resolve"):
			detail := fmt.Sprintf("%s: %s. Dependencies come from the package's own node_modules: run %q in %s",
				where, strings.ToLower(m.Text[:1])+m.Text[1:], pkg.install, pkg.rel)
			if pkg.install == "npm ci" {
				detail += " (or \"npm install\" after adding the dependency to package.json)"
			}
			detail += "."
			for _, n := range m.Notes {
				if strings.Contains(n.Text, "built into node") {
					detail = fmt.Sprintf("%s: %s: it is a Node.js built-in module, and tools do not run on Node.js. Use the agentc:* modules (such as agentc:fs or agentc:http) instead.",
						where, strings.ToLower(m.Text[:1])+m.Text[1:])
					break
				}
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing JavaScript dependency", Detail: detail, Subject: subject})
		default:
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "JavaScript build failed",
				Detail:   fmt.Sprintf("%s: %s. Fix the source in %s and plan again.", where, strings.TrimSuffix(m.Text, "."), pkg.rel),
				Subject:  subject,
			})
		}
	}
	return diags
}

// jsColumn is the 0-based column of l in characters (code points), not
// bytes as esbuild counts it: an error after non-ASCII text on its line
// is located where an editor shows it (one that counts UTF-16 units, as
// VS Code does, shows one more per character outside the BMP).
func jsColumn(l *api.Location) int {
	if l.Column < 0 || l.Column > len(l.LineText) {
		return l.Column
	}
	return utf8.RuneCountInString(l.LineText[:l.Column])
}

// jsPreludeName is the script name of jsPrelude in stack traces.
const jsPreludeName = "agentform-prelude.js"

// jsPrelude defines the environment the CommonJS build is evaluated in:
// require returns inert stubs for agentc:* modules and refuses everything
// else, console does nothing, and __agentform_read reads the tool object
// with built-ins captured before the tool's code can replace them.
const jsPrelude = `(function (global) {
  var create = Object.create, keys = Object.keys, stringify = JSON.stringify, isArray = Array.isArray;
  var P = Proxy, toPrimitive = Symbol.toPrimitive;
  function stub(name) {
    var self;
    var inherited = new P(create(null), {
      get: function (t, key) { return key === "then" || typeof key === "symbol" ? undefined : self; }
    });
    var handler = {
      get: function (t, key) {
        if (key === toPrimitive) { return function () { return "[agentc stub " + name + "]"; }; }
        if (key === "then" || key === "__esModule" || typeof key === "symbol") { return undefined; }
        return self;
      },
      set: function () { return true; },
      apply: function () { return self; },
      construct: function () { return self; },
      getPrototypeOf: function () { return inherited; }
    };
    self = new P(function () {}, handler);
    return self;
  }
  var stubs = {};
  global.require = function (name) {
    name = String(name);
    if (name.slice(0, 7) === "agentc:") {
      if (!stubs[name]) { stubs[name] = stub(name); }
      return stubs[name];
    }
    throw new Error("require(\"" + name + "\") is not available while agentform reads the tool definition: only agentc:* modules are");
  };
  global.module = { exports: {} };
  global.exports = global.module.exports;
  var noop = function () {};
  global.console = { log: noop, info: noop, warn: noop, error: noop, debug: noop, trace: noop };
  var read = function (exported, name) {
    var out = { exportsType: exported === null ? "null" : typeof exported, names: [], found: false };
    if (exported === null || (typeof exported !== "object" && typeof exported !== "function")) { return stringify(out); }
    out.names = keys(exported);
    var tool = exported[name];
    if (tool === undefined) { return stringify(out); }
    out.found = true;
    out.toolType = tool === null ? "null" : typeof tool;
    if (tool === null || (typeof tool !== "object" && typeof tool !== "function")) { return stringify(out); }
    var field = function (v) { return { type: v === null ? "null" : isArray(v) ? "array" : typeof v, value: typeof v === "string" ? v : undefined }; };
    out.name = field(tool.name);
    out.description = field(tool.description);
    var p = tool.parameters;
    out.parameters = field(p);
    if (out.parameters.type === "object") {
      try { out.parameters.json = stringify(p); } catch (e) { out.parameters.error = String(e); }
    }
    return stringify(out);
  };
  return read;
})(this)`

// jsPreludeProgram is jsPrelude compiled once; a goja program can run in
// any number of runtimes.
var jsPreludeProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile(jsPreludeName, jsPrelude, true)
})

// jsRead is what the prelude's reader reports about the export.
type jsRead struct {
	ExportsType string            `json:"exportsType"`
	Names       []string          `json:"names"`
	Found       bool              `json:"found"`
	ToolType    string            `json:"toolType"`
	Name        *jsField          `json:"name"`
	Description *jsField          `json:"description"`
	Parameters  *jsParameterField `json:"parameters"`
}

// jsParameterField is the parameters property: a field, and for an object
// its JSON or why JSON.stringify refused it.
type jsParameterField struct {
	jsField
	JSON  *string `json:"json"`
	Error string  `json:"error"`
}

// jsField is one property of the tool object: its JavaScript type and, for
// strings, its value.
type jsField struct {
	Type  string  `json:"type"`
	Value *string `json:"value"`
}

// jsReadTool evaluates the CommonJS build in a fresh goja runtime and reads
// the exported tool object, interrupting the evaluation after timeout.
//
// The CommonJS build may lack a source map (building one for every package
// costs every plan); mapped, when set, returns one with its source map, and
// a failed evaluation is repeated with it so that the error names the
// tool's own file and line.
func jsReadTool(ctx context.Context, cjs []byte, mapped func() ([]byte, hcl.Diagnostics), pkg *jsPackage, export string, timeout time.Duration, subject, exportSubject *hcl.Range) (jsTool, hcl.Diagnostics) {
	raw, err := jsEvaluate(ctx, cjs, pkg, export, timeout)
	var stopped *jsTimeoutError
	if err != nil && !errors.As(err, &stopped) && mapped != nil {
		withMap, diags := mapped()
		if diags.HasErrors() {
			return jsTool{}, diags
		}
		raw, err = jsEvaluate(ctx, withMap, pkg, export, timeout)
	}
	return jsReport(ctx, raw, err, pkg, export, timeout, subject, exportSubject)
}

// jsReport turns the outcome of jsEvaluate into the tool definition or the
// diagnostics that explain why there is none.
func jsReport(ctx context.Context, raw string, err error, pkg *jsPackage, export string, timeout time.Duration, subject, exportSubject *hcl.Range) (jsTool, hcl.Diagnostics) {
	var stopped *jsTimeoutError
	if err != nil {
		if errors.As(err, &stopped) {
			if stopped.cancelled {
				return jsTool{}, jsError(subject, "Resolution cancelled",
					"Evaluating %s to read the export %q was cancelled: %s.", pkg.rel, export, context.Cause(ctx))
			}
			return jsTool{}, jsError(subject, "Tool definition timed out",
				"Evaluating %s to read the export %q did not finish within %s. A tool's top-level code must only define the tool; move long-running work into execute.", pkg.rel, export, timeout)
		}
		return jsTool{}, jsError(subject, "Invalid tool definition",
			"Evaluating %s to read the export %q failed: %s. A tool's top-level code runs with no I/O, no timers and only agentc:* modules (as inert stubs).", pkg.rel, export, err)
	}
	var r jsRead
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return jsTool{}, jsError(subject, "Invalid tool definition", "Reading the export %q of %s: %s.", export, pkg.rel, err)
	}
	return jsReportRead(&r, pkg, export, subject, exportSubject)
}

// jsReportRead turns what the reader reported about the export into the
// tool definition or the diagnostics that explain why there is none.
func jsReportRead(r *jsRead, pkg *jsPackage, export string, subject, exportSubject *hcl.Range) (jsTool, hcl.Diagnostics) {
	if !r.Found {
		sort.Strings(r.Names)
		found := "it exports nothing"
		if len(r.Names) > 0 {
			found = "it exports " + jsQuoteList(r.Names)
		}
		return jsTool{}, jsError(exportSubject, "Tool export not found",
			"%s has no export named %q; %s. Export the tool object as %q, or set export in the tool block to the name it has.", pkg.rel, export, found, export)
	}
	invalid := func(format string, args ...any) (jsTool, hcl.Diagnostics) {
		return jsTool{}, jsError(subject, "Invalid tool definition", "The export %q of %s %s.", export, pkg.rel, fmt.Sprintf(format, args...))
	}
	if r.ToolType != "object" && r.ToolType != "function" {
		return invalid("is %s, not a tool object with name, description and parameters", jsArticle(r.ToolType))
	}
	if r.Name == nil || r.Name.Type != "string" || r.Name.Value == nil || *r.Name.Value == "" {
		return invalid("has no name: set name to a non-empty string (found %s)", jsFieldType(r.Name))
	}
	var tool jsTool
	if d := r.Description; d != nil && d.Type != "undefined" {
		if d.Type != "string" || d.Value == nil {
			return invalid("has a description that is %s; it must be a string", jsArticle(d.Type))
		}
		tool.description = *d.Value
	}
	params, diags := jsParameters(r, pkg, export, subject)
	if diags.HasErrors() {
		return jsTool{}, diags
	}
	tool.parameters = params
	return tool, nil
}

// jsParameters checks that the tool's parameters are a JSON Schema for an
// object and returns them as canonical JSON.
func jsParameters(r *jsRead, pkg *jsPackage, export string, subject *hcl.Range) (json.RawMessage, hcl.Diagnostics) {
	bad := func(format string, args ...any) (json.RawMessage, hcl.Diagnostics) {
		return nil, jsError(subject, "Invalid tool schema", "The parameters of the export %q of %s %s.", export, pkg.rel, fmt.Sprintf(format, args...))
	}
	p := r.Parameters
	if p == nil || p.Type != "object" {
		t := "undefined"
		if p != nil {
			t = p.Type
		}
		return bad("are %s; they must be a JSON Schema object such as { type: \"object\", properties: { ... } }", jsArticle(t))
	}
	if p.Error != "" || p.JSON == nil {
		return bad("cannot be converted to JSON (%s); use plain objects, arrays, strings, numbers and booleans", p.Error)
	}
	canon, err := jsCanonicalJSON([]byte(*p.JSON))
	if err != nil {
		return bad("are not valid JSON: %s", err)
	}
	// A schema without "type" is taken as an object's, as it always was
	// for javascript tools.
	if err := checkInputSchema(canon, true); err != nil {
		return bad("cannot describe the tool's arguments: %s", err)
	}
	return canon, nil
}

// jsTimeoutError reports an evaluation interrupted by the time limit or,
// when cancelled is set, by the context.
type jsTimeoutError struct{ cancelled bool }

func (e *jsTimeoutError) Error() string {
	if e.cancelled {
		return "evaluation cancelled"
	}
	return "evaluation timed out"
}

// jsExportsFactory makes the function a script from jsScript starts with:
// given pairs of export name and getter, it sets module.exports to what
// esbuild's CommonJS conversion assigns (a getter per export and a
// non-enumerable __esModule). It writes the module object the prelude
// made, whatever the tool's code later binds to the name module.
const jsExportsFactory = `(function (mod) {
  var defineProperty = Object.defineProperty;
  return function (pairs) {
    var out = defineProperty({}, "__esModule", { value: true });
    for (var i = 0; i < pairs.length; i += 2) {
      defineProperty(out, pairs[i], { get: pairs[i + 1], enumerable: true });
    }
    mod.exports = out;
  };
})`

var jsExportsFactoryProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("agentform-exports.js", jsExportsFactory, true)
})

// jsEvaluate runs the prelude and the CommonJS build in a fresh goja
// runtime and returns the reader's JSON report on export.
func jsEvaluate(ctx context.Context, cjs []byte, pkg *jsPackage, export string, timeout time.Duration) (report string, err error) {
	return jsEvaluateWith(ctx, cjs, "", pkg, export, timeout)
}

// jsEvaluateWith is jsEvaluate with, when helper is not "", jsExportsFactory's
// function defined as the global helper (not enumerable, writable or
// configurable) for a script from jsScript.
func jsEvaluateWith(ctx context.Context, cjs []byte, helper string, pkg *jsPackage, export string, timeout time.Duration) (report string, err error) {
	prog, err := jsParse(cjs)
	if err != nil {
		return "", err
	}
	return jsEvaluateProgram(ctx, prog, helper, export, timeout)
}

// jsParse parses a bundle or script for jsEvaluateProgram. Only its inline
// source map is read: a sourceMappingURL naming a file or URL must not make
// a plan read it.
func jsParse(cjs []byte) (prog *ast.Program, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the JavaScript engine stopped: %v", p)
		}
	}()
	return goja.Parse("bundle.js", string(cjs), parser.WithSourceMapLoader(func(string) ([]byte, error) {
		return nil, errors.New("source maps are read only inline")
	}))
}

// jsCompile compiles a program jsParse returned, as a script (not strict
// unless it says so).
func jsCompile(prog *ast.Program) (code *goja.Program, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the JavaScript engine stopped: %v", p)
		}
	}()
	return goja.CompileAST(prog, false)
}

// jsDefinitionNow is the time a definition reads: the Unix epoch, UTC.
func jsDefinitionNow() time.Time { return time.Unix(0, 0).UTC() }

// jsEvaluateProgram is jsEvaluateWith for a parsed program.
func jsEvaluateProgram(ctx context.Context, prog *ast.Program, helper string, export string, timeout time.Duration) (report string, err error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(4096)
	// A definition is read the same on every host and every run: the
	// clock (Date.now(), new Date()) reads the Unix epoch, and Math.random
	// is seeded the same each time, so neither can make the artifact of a
	// description or default depend on when or where plan ran.
	vm.SetTimeSource(jsDefinitionNow)
	vm.SetRandSource(rand.New(rand.NewPCG(0, 0)).Float64)
	timer := time.AfterFunc(timeout, func() { vm.Interrupt(&jsTimeoutError{}) })
	defer timer.Stop()
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(&jsTimeoutError{cancelled: true}) })
	defer stop()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the JavaScript engine stopped: %v", p)
		}
	}()

	reader, err := jsRunFunction(vm, jsPreludeProgram)
	if err != nil {
		return "", err
	}
	module := vm.Get("module").ToObject(vm)
	if helper != "" {
		newHelper, err := jsRunFunction(vm, jsExportsFactoryProgram)
		if err != nil {
			return "", err
		}
		fn, err := newHelper(goja.Undefined(), module)
		if err != nil {
			return "", jsEvalError(err)
		}
		if err := vm.GlobalObject().DefineDataProperty(helper, fn, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return "", err
		}
	}
	code, err := jsCompile(prog)
	if err != nil {
		return "", err
	}
	if _, err := vm.RunProgram(code); err != nil {
		return "", jsEvalError(err)
	}
	out, err := reader(goja.Undefined(), module.Get("exports"), vm.ToValue(export))
	if err != nil {
		return "", jsEvalError(err)
	}
	return out.String(), nil
}

// jsRunFunction runs one of agentform's own compiled programs in vm and
// returns the function it evaluates to.
func jsRunFunction(vm *goja.Runtime, program func() (*goja.Program, error)) (goja.Callable, error) {
	prog, err := program()
	if err != nil {
		return nil, err
	}
	v, err := vm.RunProgram(prog)
	if err != nil {
		return nil, jsEvalError(err)
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, errors.New("an agentform program did not evaluate to a function; this is a bug in agentform")
	}
	return fn, nil
}

// jsEvalError turns a goja error into a plain one: the interrupt value for
// an interrupt, the JavaScript message for an exception.
func jsEvalError(err error) error {
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		if te, ok := interrupted.Value().(*jsTimeoutError); ok {
			return te
		}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		msg := "an exception"
		if v := ex.Value(); v != nil {
			msg = v.String()
		}
		for _, f := range ex.Stack() {
			if p := f.Position(); p.Filename != "" && p.Filename != jsPreludeName {
				// Columns through the source map are approximate; lines
				// are exact.
				return fmt.Errorf("%s:%d: %s", p.Filename, p.Line, msg)
			}
		}
		return errors.New(msg)
	}
	return err
}

// jsCanonicalJSON re-encodes JSON with object keys sorted and no
// insignificant whitespace, keeping numbers as written
// (mcpwire.CanonicalJSON).
func jsCanonicalJSON(b []byte) ([]byte, error) {
	v, err := mcpwire.DecodeJSON(b)
	if err != nil {
		return nil, err
	}
	return mcpwire.CanonicalJSON(v)
}

// jsFieldType names the JavaScript type of a tool field for a message.
func jsFieldType(f *jsField) string {
	if f == nil {
		return "undefined"
	}
	if f.Type == "string" {
		return "an empty string"
	}
	return jsArticle(f.Type)
}

// jsArticle prefixes a JavaScript type name with an article.
func jsArticle(t string) string {
	switch t {
	case "", "undefined":
		return "undefined"
	case "null":
		return "null"
	case "array", "object":
		return "an " + t
	}
	return "a " + t
}

// jsQuoteList renders names as "a", "b" and "c".
func jsQuoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// jsRel names dir relative to the workspace (both with symbolic links
// resolved), slash-separated, for messages and cache keys.
func jsRel(workspace, dir string) string {
	rel, err := filepath.Rel(workspace, dir)
	if err != nil {
		return filepath.ToSlash(dir)
	}
	return filepath.ToSlash(rel)
}

// jsError is one error diagnostic at subject.
func jsError(subject *hcl.Range, summary, format string, args ...any) hcl.Diagnostics {
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: subject}}
}
