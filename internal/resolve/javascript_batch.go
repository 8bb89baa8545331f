package resolve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/hashicorp/hcl/v2"
)

// jsJob is one javascript tool block on its way through jsResolveAll.
type jsJob struct {
	req Request
	// start and done, when set, are called as the job starts and ends
	// (progress lines).
	start, done func()

	pkg           *jsPackage
	key           string
	subject       *hcl.Range
	exportSubject *hcl.Range
	export        string
	built         *jsBuilt

	res   *Resolved
	diags hcl.Diagnostics
	ended bool
	// put is the cache entry to store after a successful build.
	put *jsCacheEntry
}

// jsBuilt is the output of bundling one package: the ESM bundle (what the
// artifact ships) and its source map (only used to locate evaluation
// errors), or the build's errors.
type jsBuilt struct {
	bundle    []byte
	sourceMap []byte
	errors    []api.Message
	// failed, when set, is a complete diagnostic (not an esbuild message).
	failed string
}

// jsResolveAll resolves javascript blocks in three steps: find and hash
// each package and look it up in the cache (in parallel through each);
// bundle every package that missed with as few esbuild builds as possible
// (one, normally: esbuild parses, links and prints the entry points in
// parallel, and a second build per package was most of the cost of a cold
// plan); then read each tool's definition from its bundle and store the
// result: one reader starts on a build's packages as soon as it is done,
// while the next build runs (most definitions are read without running
// anything now, and a build leaves a core idle part of the time), and
// every worker takes what is left once bundling ends. each(n, f) must
// call f(i) for every i in [0, n) and return when all have returned.
func jsResolveAll(ctx context.Context, jobs []*jsJob, each func(n int, f func(int))) {
	each(len(jobs), func(i int) { jobs[i].prepare(ctx) })
	// Every lookup is done: let other agentform processes write the cache.
	for _, j := range jobs {
		j.req.Cache.Release()
	}
	var misses []*jsJob
	for _, j := range jobs {
		if !j.ended {
			misses = append(misses, j)
		}
	}
	if len(misses) == 0 {
		return
	}
	if err := ctx.Err(); err != nil {
		for _, j := range misses {
			j.end(nil, jsError(j.subject, "Resolution cancelled", "Resolving tool %q stopped before bundling: %s.", j.req.Tool.Name, err))
		}
		return
	}
	finish := func(j *jsJob) {
		j.finish(ctx)
		if j.put != nil {
			// A cache that cannot be written only costs the next plan a
			// rebuild.
			_ = j.req.Cache.Put("javascript", j.key, j.put)
		}
	}
	// Definitions are read while later builds run: one reader takes the
	// jobs of each build as it completes, and once bundling is done every
	// worker takes what is left.
	var (
		mu      sync.Mutex
		queue   []*jsJob
		queued  = map[*jsJob]bool{}
		next    int
		more    = make(chan struct{}, 1)
		bundled atomic.Bool
	)
	add := func(js []*jsJob) {
		mu.Lock()
		for _, j := range js {
			if !queued[j] {
				queued[j] = true
				queue = append(queue, j)
			}
		}
		mu.Unlock()
		select {
		case more <- struct{}{}:
		default:
		}
	}
	claim := func() *jsJob {
		mu.Lock()
		defer mu.Unlock()
		if next < len(queue) {
			next++
			return queue[next-1]
		}
		return nil
	}
	readerDone := make(chan struct{})
	// The reader holds no slot of Run's, as the builds it runs beside do
	// not: it adds one definition read at a time to them. It stops when
	// the resolution is cancelled, as the workers do.
	go func() {
		defer close(readerDone)
		for !bundled.Load() && ctx.Err() == nil {
			if j := claim(); j != nil {
				finish(j)
				continue
			}
			select {
			case <-more:
			case <-ctx.Done():
			}
		}
	}()
	jsBundleAll(misses, add)
	bundled.Store(true)
	add(misses)
	each(len(misses), func(int) {
		for j := claim(); j != nil; j = claim() {
			finish(j)
		}
	})
	<-readerDone
}

// end records the job's outcome once.
func (j *jsJob) end(res *Resolved, diags hcl.Diagnostics) {
	j.res, j.diags, j.ended = res, diags, true
	if j.done != nil {
		j.done()
	}
}

// prepare validates the block, finds and hashes its package and serves
// the result from the cache when it can.
func (j *jsJob) prepare(ctx context.Context) {
	if j.start != nil {
		j.start()
	}
	t := j.req.Tool
	if t == nil || t.JavaScript == nil {
		var subject *hcl.Range
		if t != nil {
			subject = t.DeclRange.Ptr()
		}
		j.end(nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Not a javascript tool",
			Detail:   "The javascript resolver was given a tool block of another kind; this is a bug in agentform.",
			Subject:  subject,
		}})
		return
	}
	js := t.JavaScript
	j.subject = js.Source.Range.Ptr()
	j.export = js.Export.Value
	if j.export == "" {
		j.export = t.Name
	}
	j.exportSubject = j.subject
	if js.Export.Set {
		j.exportSubject = js.Export.Range.Ptr()
	}
	pkg, diags := jsFindPackage(j.req, j.subject)
	if diags.HasErrors() {
		j.end(nil, diags)
		return
	}
	j.pkg = pkg
	// The entry's layout is part of the key, so that agentform versions
	// that store entries differently sharing a workspace keep an entry each
	// instead of rebuilding each other's.
	j.key = Key("javascript", jsCacheMagic, pkg.source, pkg.deps, j.export, JavaScriptBundler, pkg.entry, pkg.rel)
	var cached jsCacheEntry
	if j.req.Cache.Get("javascript", j.key, &cached) && len(cached.Bundle) > 0 && json.Valid(cached.Parameters) {
		j.end(jsResult(j.req, pkg, jsTool{description: cached.Description, parameters: cached.Parameters}, cached.Bundle, j.subject))
		return
	}
	if err := ctx.Err(); err != nil {
		j.end(nil, jsError(j.subject, "Resolution cancelled", "Resolving tool %q stopped before bundling: %s.", t.Name, err))
	}
}

// finish reads the tool definition from the bundle, assembles the result
// and caches it.
func (j *jsJob) finish(ctx context.Context) {
	b := j.built
	switch {
	case b == nil:
		j.end(nil, jsError(j.subject, "JavaScript build failed", "%s was not bundled; this is a bug in agentform.", j.pkg.rel))
		return
	case b.failed != "":
		j.end(nil, jsError(j.subject, "JavaScript build failed", "%s", b.failed))
		return
	case len(b.errors) > 0:
		j.end(nil, jsBuildDiagnostics(j.pkg, b.errors, j.subject))
		return
	}
	timeout := j.req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tool, diags, read := jsReadScript(ctx, b.bundle, j.pkg, j.export, timeout, j.subject, j.exportSubject)
	if !read {
		tool, diags = j.readCommonJS(ctx, timeout)
	}
	if diags.HasErrors() {
		j.end(nil, diags)
		return
	}
	res, more := jsResult(j.req, j.pkg, tool, b.bundle, j.subject)
	diags = append(diags, more...)
	if !diags.HasErrors() {
		j.put = &jsCacheEntry{Description: tool.description, Parameters: tool.parameters, Bundle: b.bundle}
	}
	j.end(res, diags)
}

// readCommonJS reads the tool definition from the bundle converted to
// CommonJS by esbuild, which handles every bundle, and locates an
// exception in top-level code through a source map.
func (j *jsJob) readCommonJS(ctx context.Context, timeout time.Duration) (jsTool, hcl.Diagnostics) {
	b := j.built
	cjs, diags := jsCommonJS(j.pkg, b, j.subject)
	if diags.HasErrors() {
		return jsTool{}, diags
	}
	// The shared build has no source maps; a package whose top-level code
	// throws is built again, alone, with one.
	mapped := func() ([]byte, hcl.Diagnostics) {
		built, _ := jsBuild([]*jsPackage{j.pkg}, true)
		if built[0].failed != "" || len(built[0].errors) > 0 || !bytes.Equal(built[0].bundle, b.bundle) {
			return nil, jsError(j.subject, "JavaScript build failed", "Building %s again to locate an error did not give the same bundle; this is a bug in agentform.", j.pkg.rel)
		}
		return jsCommonJS(j.pkg, built[0], j.subject)
	}
	return jsReadTool(ctx, cjs, mapped, j.pkg, j.export, timeout, j.subject, j.exportSubject)
}

// jsExportClause is the statement that ends an ESM bundle esbuild prints
// with exports: "export {\n  local as exported,\n  name\n};\n", followed
// only by the legal comments of bundled dependencies, if any. Only ASCII
// identifiers (the build escapes anything else) match.
var jsExportClause = regexp.MustCompile(`\nexport \{\n((?:  [A-Za-z_$][A-Za-z0-9_$]*(?: as [A-Za-z_$][A-Za-z0-9_$]*)?,?\n)+)\};\n(?:/\*! Bundled license information:\n(?:[^*]|\*+[^*/])*\*+/\n)?$`)

// jsImportSyntax finds what could be an import statement in an ESM bundle
// (esbuild prints top-level statements at the start of a line) or
// import.meta, which the conversion replaces; text like them in a string
// or comment only costs that bundle the conversion. import() is left to
// goja, whose parser refuses the word import wherever it is syntax in a
// script, and only there (TestJSGojaRefusesImport): text such as
// "import()" in a comment or string, which many bundles hold (zod's does),
// keeps the script, and a real import() fails in both paths alike (the
// conversion keeps it).
var jsImportSyntax = regexp.MustCompile(`(?m)^import\b|\bimport\s*\.`)

// jsDeclaresGlobals finds a top-level declaration (esbuild prints them at
// the start of a line) that mentions module, exports or require: the
// CommonJS conversion renames such a binding, while a script would rebind
// the global the conversion's code refers to.
var jsDeclaresGlobals = regexp.MustCompile(`(?m)^(?:var|let|const|class|(?:async )?function\*?)\b[^\n]*\b(?:module|exports|require)\b`)

// jsScript turns an ESM bundle into the script jsEvaluateWith runs without
// esbuild's CommonJS conversion (a Transform per tool, most of the cost of
// reading 200 definitions, and about 90 ms for a bundle with zod), when
// that is exact: the bundle has no import statement or import.meta
// (jsImportSyntax) and ends with esbuild's export clause; any other module
// syntax fails to compile as a script, and jsReadScript then takes the
// conversion. A bundle that declares module, exports or require
// at top level (jsDeclaresGlobals) takes the conversion too. The script
// first calls helper (jsExportsFactory), which assigns module.exports as
// the conversion does, with a getter per export, then runs the bundle's
// code unchanged. Top-level await cannot reach it: jsBuild refuses it, as
// the conversion would.
func jsScript(bundle []byte, helper string) ([]byte, bool) {
	if jsMatchNear(bundle, jsImportSyntax, "import") || jsMatchNear(bundle, jsDeclaresGlobals, "module", "exports", "require") {
		return nil, false
	}
	// The clause is the bundle's last "export {" line; matching from there
	// spares trying every earlier line. A line like it inside a legal
	// comment (after an unclosed "/*") is not the clause: such a bundle
	// takes the conversion.
	at := bytes.LastIndex(bundle, []byte("\nexport {\n"))
	if at < 0 {
		return nil, false
	}
	if open := bytes.LastIndex(bundle[:at], []byte("/*")); open >= 0 && !bytes.Contains(bundle[open:at], []byte("*/")) {
		return nil, false
	}
	m := jsExportClause.FindSubmatchIndex(bundle[at:])
	if m == nil || m[0] != 0 {
		return nil, false
	}
	for i := range m {
		m[i] += at
	}
	return jsScriptFrom(bundle, m, helper), true
}

// jsScriptFrom is jsScript's script for bundle, whose export clause
// jsExportClause matched at m.
func jsScriptFrom(bundle []byte, m []int, helper string) []byte {
	var s bytes.Buffer
	s.Grow(len(bundle) + 128)
	s.WriteString(helper)
	s.WriteString("([")
	for i, line := range strings.Split(strings.TrimSpace(string(bundle[m[2]:m[3]])), "\n") {
		local, exported, as := strings.Cut(strings.TrimSuffix(strings.TrimSpace(line), ","), " as ")
		if !as {
			exported = local
		}
		if i > 0 {
			s.WriteString(", ")
		}
		fmt.Fprintf(&s, "%q, function () { return %s; }", exported, local)
	}
	// On the first line, so that the bundle's own lines keep their numbers.
	s.WriteString("]); ")
	s.Write(bundle[:m[0]+1])
	return s.Bytes()
}

// jsMatchNear reports whether re matches bundle, for an expression whose
// every match contains one of words and lies on the lines of that word
// up to the first character after it that is not white space (both of
// jsScript's do). It runs re only on those stretches: over the whole of
// a bundle with npm dependencies (hundreds of KB) an expression costs
// tens of milliseconds, while most bundles hold the words a few times
// or not at all.
//
// The stretches of a word's occurrences on one line all start at the
// line's start, each holding those before it, so only the last
// occurrence on each line is tried: a long line (an embedded source
// file in a string) costs one match, not one per occurrence.
func jsMatchNear(bundle []byte, re *regexp.Regexp, words ...string) bool {
	for _, w := range words {
		for from := 0; ; {
			i := bytes.Index(bundle[from:], []byte(w))
			if i < 0 {
				break
			}
			i += from
			lineEnd := len(bundle)
			if nl := bytes.IndexByte(bundle[i:], '\n'); nl >= 0 {
				lineEnd = i + nl
			}
			i += bytes.LastIndex(bundle[i:lineEnd], []byte(w))
			start := bytes.LastIndexByte(bundle[:i], '\n') + 1
			end := i + len(w)
			for end < len(bundle) && jsSpace(bundle[end]) {
				end++
			}
			if re.Match(bundle[start:min(end+1, len(bundle))]) {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// jsSpace reports whether c is white space to a regular expression's \s.
func jsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// jsReadScript reads the tool definition through jsScript. read is false
// when the bundle needs the CommonJS conversion, or when evaluating it
// failed other than by the time limit: readCommonJS then evaluates it
// again, so every error a tool's code raises is reported exactly as the
// conversion reports it, located through a source map.
func jsReadScript(ctx context.Context, bundle []byte, pkg *jsPackage, export string, timeout time.Duration, subject, exportSubject *hcl.Range) (tool jsTool, diags hcl.Diagnostics, read bool) {
	// The helper's name is new for every evaluation, so no tool's code can
	// name it (and the CommonJS path never defines it).
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return jsTool{}, nil, false
	}
	helper := "__agentform_exports_" + hex.EncodeToString(nonce[:])
	script, ok := jsScript(bundle, helper)
	if !ok {
		return jsTool{}, nil, false
	}
	prog, err := jsParse(script)
	if err != nil {
		return jsTool{}, nil, false
	}
	if r, ok := jsStaticRead(prog, helper, export); ok {
		// Compiling raises goja's early errors, as evaluating would.
		if _, err := jsCompile(prog); err != nil {
			return jsTool{}, nil, false
		}
		tool, diags = jsReportRead(&r, pkg, export, subject, exportSubject)
		return tool, diags, true
	}
	raw, err := jsEvaluateProgram(ctx, prog, helper, export, timeout)
	var stopped *jsTimeoutError
	if err != nil && !errors.As(err, &stopped) {
		return jsTool{}, nil, false
	}
	tool, diags = jsReport(ctx, raw, err, pkg, export, timeout, subject, exportSubject)
	return tool, diags, true
}

// jsBundleAll bundles the packages of jobs. Packages that can share a
// build do, up to jsBatchSize a build: same workspace, no tsconfig.json of
// their own (a build has one tsconfig), and none inside another (the
// import confinement decides by the importer's package). A shared build
// that reports any error is repeated package by package, so that each
// error is reported for the package it belongs to exactly as a build of
// its own would.
//
// Each shared build that succeeds passes its jobs to every onBuilt
// function as soon as it is done.
func jsBundleAll(jobs []*jsJob, onBuilt ...func([]*jsJob)) {
	type unit struct {
		pkg  *jsPackage
		jobs []*jsJob
	}
	units := map[string]*unit{}
	var order []*unit
	for _, j := range jobs {
		id := j.pkg.work + "\x00" + j.pkg.dir + "\x00" + j.pkg.entry
		u := units[id]
		if u == nil {
			u = &unit{pkg: j.pkg}
			units[id] = u
			order = append(order, u)
		}
		u.jobs = append(u.jobs, j)
	}
	set := func(u *unit, b *jsBuilt) {
		for _, j := range u.jobs {
			j.built = b
		}
	}
	shared := map[string][]*unit{}
	var sharedOrder []string
	var alone []*unit
	for _, u := range order {
		if u.pkg.tsconfig != "" {
			alone = append(alone, u)
			continue
		}
		if _, ok := shared[u.pkg.work]; !ok {
			sharedOrder = append(sharedOrder, u.pkg.work)
		}
		shared[u.pkg.work] = append(shared[u.pkg.work], u)
	}
	for _, work := range sharedOrder {
		group := shared[work]
		nested := jsNestedDirs(group, func(u *unit) string { return u.pkg.dir })
		var batch []*unit
		for _, u := range group {
			if nested[u.pkg.dir] {
				alone = append(alone, u)
			} else {
				batch = append(batch, u)
			}
		}
		if len(batch) < 2 {
			alone = append(alone, batch...)
			continue
		}
		for chunk := range slices.Chunk(batch, jsBatchSize) {
			if len(chunk) == 1 {
				// Built below, once: a failed build alone is not repeated.
				alone = append(alone, chunk...)
				continue
			}
			pkgs := make([]*jsPackage, len(chunk))
			for i, u := range chunk {
				pkgs[i] = u.pkg
			}
			built, ok := jsBuild(pkgs, false)
			if !ok {
				alone = append(alone, chunk...)
				continue
			}
			var done []*jsJob
			for i, u := range chunk {
				set(u, built[i])
				done = append(done, u.jobs...)
			}
			for _, f := range onBuilt {
				f(done)
			}
		}
	}
	for _, u := range alone {
		built, _ := jsBuild([]*jsPackage{u.pkg}, false)
		set(u, built[0])
	}
}

// jsBatchSize is the most packages one shared build takes. esbuild holds
// every file it parsed until its build ends: 200 tools importing zod in
// one build peaked at 7 GB of RSS and took 52 s, much of it collecting
// garbage and faulting in fresh pages; in builds of 32 they took 1.5 GB
// and 38 s. A variable for tests.
var jsBatchSize = 32

// jsNestedDirs returns the directories of items (dir gives each one's
// absolute, clean path) that contain, or are inside, the directory of
// another item. It walks each directory's parents instead of comparing
// every pair: a workspace of 200 packages made 80,000 comparisons.
func jsNestedDirs[T any](items []T, dir func(T) string) map[string]bool {
	abs := make(map[string]string, len(items)) // absolute → as given
	for _, it := range items {
		d := dir(it)
		a, err := filepath.Abs(d)
		if err != nil {
			a = filepath.Clean(d)
		}
		abs[a] = d
	}
	nested := map[string]bool{}
	for a, d := range abs {
		for p := filepath.Dir(a); p != a; a, p = p, filepath.Dir(p) {
			if o, ok := abs[p]; ok {
				nested[d], nested[o] = true, true
			}
		}
	}
	return nested
}

// jsBuild bundles the entries of pkgs (all of one workspace) with one
// esbuild build: ESM, one self-contained bundle per entry, and with
// sourceMaps an external source map beside each (the bundle's bytes are
// the same either way). Paths in the output are relative to the
// workspace, so that a bundle does not depend on where the workspace
// lives, and a bundle is the same bytes whichever packages share the
// build. ok is false when the build did not produce exactly one bundle and
// map per package; for a single package the reason is then in its
// jsBuilt.
func jsBuild(pkgs []*jsPackage, sourceMaps bool) (built []*jsBuilt, ok bool) {
	if built, ok = jsBuildOnce(pkgs, sourceMaps, false); ok || len(pkgs) > 1 {
		return built, ok
	}
	if jsOnlyRefusals(built) {
		// Located already; a strict build would only repeat them.
		return built, ok
	}
	// A package alone that failed is built again with jsPackageOnly, so
	// that an import leaving the package is reported where it is, and
	// every other error exactly as before.
	return jsBuildOnce(pkgs, sourceMaps, true)
}

// jsBaseOptions are the esbuild options every build of packages starts
// from: how esbuild resolves and bundles, in work. jsMainEntry's tests
// build with them to compare its reading of "main" with esbuild's.
func jsBaseOptions(work string) api.BuildOptions {
	return api.BuildOptions{
		AbsWorkingDir: work,
		// Nothing is written: the output directory only names the
		// outputs, and the source maps' paths are relative to it.
		Outdir:   work,
		Bundle:   true,
		Platform: api.PlatformBrowser,
		Format:   api.FormatESModule,
		External: []string{"agentc:*"},
		Write:    false,
		LogLevel: api.LogLevelSilent,
	}
}

// jsOnlyRefusals reports whether the one package of built failed only
// for import() calls of agentc:* modules (jsLoadWithin with refuse).
func jsOnlyRefusals(built []*jsBuilt) bool {
	if len(built) != 1 || len(built[0].errors) == 0 {
		return false
	}
	for _, m := range built[0].errors {
		if m.PluginName != jsDynamicImportPlugin {
			return false
		}
	}
	return true
}

// jsBuildOnce is one esbuild build of pkgs. Imports must stay inside the
// importing package; strict checks each import as it resolves
// (jsPackageOnly), which locates the offending import but costs a fresh
// esbuild resolver per import: for packages with npm dependencies most of
// the build. Otherwise only files inside one of pkgs are loaded
// (jsLoadWithin) and, for several packages, the build's metafile shows
// that no file imports another package's file; a build that breaks
// either rule fails without saying where (jsBuild then builds strictly).
//
// strict builds take one package.
func jsBuildOnce(pkgs []*jsPackage, sourceMaps, strict bool) (built []*jsBuilt, ok bool) {
	return jsBuildWith(pkgs, sourceMaps, strict, false)
}

// jsBuildWith is jsBuildOnce; refuse makes every import() of an agentc:*
// module an error at the call (jsLoadWithin), for a package whose bundle
// keeps one.
func jsBuildWith(pkgs []*jsPackage, sourceMaps, strict, refuse bool) (built []*jsBuilt, ok bool) {
	jsBundles.Add(1)
	if strict {
		jsStrictBundles.Add(1)
	}
	work := pkgs[0].work
	entries := make([]api.EntryPoint, len(pkgs))
	for i, p := range pkgs {
		entries[i] = api.EntryPoint{
			InputPath:  filepath.Join(p.dir, filepath.FromSlash(p.entry)),
			OutputPath: fmt.Sprintf("agentform-bundle-%d", i),
		}
	}
	opts := jsBaseOptions(work)
	opts.EntryPointsAdvanced = entries
	opts.Sourcemap = api.SourceMapNone
	opts.SourcesContent = api.SourcesContentExclude
	opts.Charset = api.CharsetASCII
	// Tools are run as CommonJS (serve converts each bundle), which has
	// no top-level await: refused here, located in the tool's source,
	// rather than when the definition is read or served.
	opts.Supported = map[string]bool{"top-level-await": false}
	owners := newJSOwners(pkgs)
	// jsLoadWithin also in the strict build: esbuild resolves glob imports
	// (import(`../x/${name}.js`)) without calling any plugin, and an entry
	// point that is a link out of the package is not an import.
	opts.Plugins = []api.Plugin{jsLoadWithin(work, owners, refuse)}
	if strict {
		opts.Plugins = append([]api.Plugin{jsPackageOnly(pkgs[0])}, opts.Plugins...)
	}
	// The metafile shows imports that crossed packages, and the import()
	// calls of agentc:* modules that are still in a bundle.
	opts.Metafile = true
	perEntry := 1
	if sourceMaps {
		opts.Sourcemap = api.SourceMapExternal
		perEntry = 2
	}
	// Only the package's own tsconfig.json counts: one in a parent
	// directory is not part of the package's hash and must not change the
	// bundle. Packages with their own build alone.
	if len(pkgs) == 1 && pkgs[0].tsconfig != "" {
		opts.Tsconfig = pkgs[0].tsconfig
	} else {
		opts.TsconfigRaw = "{}"
	}
	result := api.Build(opts)
	if len(result.Errors) > 0 {
		if len(pkgs) == 1 {
			return []*jsBuilt{{errors: result.Errors}}, false
		}
		return nil, false
	}
	meta, err := jsParseMetafile(result.Metafile)
	if err != nil {
		if len(pkgs) == 1 {
			return []*jsBuilt{{failed: fmt.Sprintf("esbuild's metafile for %s cannot be read: %s; this is a bug in agentform.", pkgs[0].rel, err)}}, false
		}
		return nil, false
	}
	if !strict && len(pkgs) > 1 && !jsImportsStayHome(meta, owners) {
		return nil, false
	}
	if !refuse {
		for i := range pkgs {
			if !jsKeepsDynamicAgentc(meta, entries[i].OutputPath+".js") {
				continue
			}
			if len(pkgs) > 1 {
				return nil, false
			}
			// Built again to locate the call; a build that refuses every
			// such import() fails.
			return jsBuildWith(pkgs, sourceMaps, strict, true)
		}
	}
	byPath := make(map[string][]byte, len(result.OutputFiles))
	for _, f := range result.OutputFiles {
		byPath[f.Path] = f.Contents
	}
	built = make([]*jsBuilt, len(pkgs))
	complete := len(result.OutputFiles) == perEntry*len(pkgs)
	for i := range pkgs {
		base := filepath.Join(work, entries[i].OutputPath)
		bundle, okJS := byPath[base+".js"]
		sourceMap, okMap := byPath[base+".js.map"]
		complete = complete && okJS && okMap == sourceMaps
		built[i] = &jsBuilt{bundle: bundle, sourceMap: sourceMap}
	}
	if !complete {
		if len(pkgs) == 1 {
			return []*jsBuilt{{failed: fmt.Sprintf("esbuild produced %d output files for %s; expected one bundle. Tools are single JavaScript bundles: imports of CSS or other assets are not supported.",
				len(result.OutputFiles), pkgs[0].rel)}}, false
		}
		return nil, false
	}
	return built, true
}

// jsCommonJS converts a bundle to CommonJS for evaluation in goja, which
// runs scripts, not modules. A source map of the bundle is chained in, so
// that an exception in the tool's top-level code is reported at its own
// file and line.
func jsCommonJS(pkg *jsPackage, b *jsBuilt, subject *hcl.Range) ([]byte, hcl.Diagnostics) {
	var src strings.Builder
	src.Grow(len(b.bundle) + len(b.sourceMap)*4/3 + 64)
	src.Write(b.bundle)
	sourcemap := api.SourceMapNone
	if b.sourceMap != nil {
		src.WriteString("\n//# sourceMappingURL=data:application/json;base64,")
		src.WriteString(base64.StdEncoding.EncodeToString(b.sourceMap))
		src.WriteString("\n")
		sourcemap = api.SourceMapInline
	}
	res := api.Transform(src.String(), api.TransformOptions{
		Loader:         api.LoaderJS,
		Format:         api.FormatCommonJS,
		Platform:       api.PlatformBrowser,
		Sourcefile:     "bundle.js",
		Sourcemap:      sourcemap,
		SourcesContent: api.SourcesContentExclude,
		Charset:        api.CharsetASCII,
		LogLevel:       api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		return nil, jsBuildDiagnostics(pkg, res.Errors, subject)
	}
	return res.Code, nil
}

// jsOwners finds the package of a file among the packages of one build
// (none inside another), by the file's real path, and remembers the
// package of every file the build loaded under the name the build's
// metafile gives it.
type jsOwners struct {
	dirs   map[string]*jsPackage // real directory → package
	reals  RealPaths
	loaded sync.Map // metafile name → *jsPackage
}

func newJSOwners(pkgs []*jsPackage) *jsOwners {
	o := &jsOwners{dirs: make(map[string]*jsPackage, len(pkgs))}
	for _, p := range pkgs {
		o.dirs[p.dir] = p
		// A package's directory is a real path already (locate compares
		// real paths with it): its entry point needs no look-up.
		o.reals.Known(p.dir)
	}
	return o
}

// locate returns path's real path (symbolic links followed; path itself
// when that fails) and the package whose directory holds it, or nil; info
// is the file's Lstat when path is no symbolic link, else nil. Safe for
// concurrent use.
func (o *jsOwners) locate(path string) (string, os.FileInfo, *jsPackage) {
	real, info, err := o.reals.Real(path)
	if err != nil {
		real, info = path, nil
	}
	for d := real; ; {
		if p := o.dirs[d]; p != nil {
			return real, info, p
		}
		parent := filepath.Dir(d)
		if parent == d {
			return real, info, nil
		}
		d = parent
	}
}

// jsLoadWithin is an esbuild plugin that refuses to load a file outside
// every package of the build (work is its working directory), and a file
// of a package inside a directory the package's hash leaves out
// (BuildOutputDirs: dist, .git, __pycache__, ...; node_modules is pinned
// by the package's lock file instead), which neither the lockfile nor the
// resolution cache would notice change. A refused file is not read. It
// records the package of every file it lets load under the file's name in
// the metafile: its path relative to work, with the suffix (?query,
// #hash) the import carried.
func jsLoadWithin(work string, owners *jsOwners, refuse bool) api.Plugin {
	return api.Plugin{
		Name: jsOutsidePlugin,
		Setup: func(build api.PluginBuild) {
			// An agentc:* module stays external, so import() of one that
			// stays in the bundle would reach goja, which has no import()
			// in scripts. A bundle that keeps one (jsKeepsDynamicAgentc)
			// is built again with refuse, which locates the call in the
			// tool's source. (Every such call is refused then, even one
			// tree-shaking would drop: only resolving sees its location.)
			build.OnResolve(api.OnResolveOptions{Filter: `^agentc:`}, func(args api.OnResolveArgs) (api.OnResolveResult, error) {
				if !refuse || args.Kind != api.ResolveJSDynamicImport {
					return api.OnResolveResult{}, nil
				}
				advice := fmt.Sprintf("Import %s statically at the top of the file: import { ... } from %q.", args.Path, args.Path)
				if slices.Contains(strings.Split(filepath.ToSlash(args.Importer), "/"), "node_modules") {
					advice = "The call is in a dependency: use a part of it that does not load the module this way, or another package."
				}
				return api.OnResolveResult{Errors: []api.Message{{
					PluginName: jsDynamicImportPlugin,
					Text:       fmt.Sprintf("import(%q) cannot load a module: tools run as CommonJS scripts, which have no import(). %s", args.Path, advice),
				}}}, nil
			})
			build.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: "file"}, func(args api.OnLoadArgs) (api.OnLoadResult, error) {
				real, info, pkg := owners.locate(args.Path)
				if pkg == nil {
					return api.OnLoadResult{Errors: []api.Message{{
						Text: fmt.Sprintf("%s is outside the package. Only the package's own files and its own node_modules go into the bundle, because only they are pinned by the lockfile.",
							jsRel(work, real)),
					}}}, nil
				}
				if rel, err := filepath.Rel(pkg.dir, real); err == nil && (unhashedTopFile(rel) || terraformFile(filepath.Base(rel))) {
					what := "the workspace's lockfile"
					switch {
					case terraformFile(filepath.Base(rel)):
						what = "one of Terraform's files (a state, its backup or lock, or the dependency lock)"
					case lockfileTemp(rel):
						what = "a temporary file of the workspace's lockfile"
					}
					return api.OnLoadResult{Errors: []api.Message{{
						PluginName: jsUnhashedPlugin,
						Text: fmt.Sprintf("%s is %s, which the package's hash leaves out (the lockfile records that hash), so the lockfile would not pin it.",
							jsRel(work, real), what),
					}}}, nil
				}
				if d := jsUnhashedDir(pkg.dir, real); d != "" {
					return api.OnLoadResult{Errors: []api.Message{{
						PluginName: jsUnhashedPlugin,
						Text: fmt.Sprintf("%s is in %s/, which the package's hash leaves out as build output, so the lockfile would not pin it. Bundle the sources instead: point package.json \"main\" and the imports at them, and agentform compiles them.",
							jsRel(work, real), d),
					}}}, nil
				}
				if info == nil {
					// A link: what it leads to.
					info, _ = os.Stat(real)
				}
				if info != nil && !info.Mode().IsRegular() {
					// esbuild would wait on a named pipe for good, or read
					// a device without end.
					return api.OnLoadResult{Errors: []api.Message{{
						Text: fmt.Sprintf("%s is not a regular file (a named pipe, a socket or a device); a package's files must be regular files.", jsRel(work, real)),
					}}}, nil
				}
				if rel, err := filepath.Rel(work, args.Path); err == nil {
					owners.loaded.Store(filepath.ToSlash(rel)+args.Suffix, pkg)
				}
				return api.OnLoadResult{}, nil
			})
		},
	}
}

// jsUnhashedDir returns the first directory between dir and the file real
// inside it that the package hash leaves out (BuildOutputDirs), or "" when
// there is none or the file is under node_modules, which the package's
// lock file pins whatever it holds.
func jsUnhashedDir(dir, real string) string {
	rel, err := filepath.Rel(dir, real)
	if err != nil {
		return ""
	}
	for _, d := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
		if d == "node_modules" {
			return ""
		}
		if slices.Contains(BuildOutputDirs, d) {
			return d
		}
	}
	return ""
}

// jsMetafile is what agentform reads of an esbuild metafile: the imports
// of every input file and of every output.
type jsMetafile struct {
	Inputs  map[string]struct{ Imports []jsMetaImport } `json:"inputs"`
	Outputs map[string]struct{ Imports []jsMetaImport } `json:"outputs"`
}

type jsMetaImport struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	External bool   `json:"external"`
}

func jsParseMetafile(metafile string) (*jsMetafile, error) {
	var meta jsMetafile
	if err := json.Unmarshal([]byte(metafile), &meta); err != nil {
		return nil, err
	}
	return &meta, nil
}

// jsKeepsDynamicAgentc reports whether the output named output (relative
// to the build's working directory) keeps an import() of an agentc:*
// module: one tree-shaking dropped is not listed.
func jsKeepsDynamicAgentc(meta *jsMetafile, output string) bool {
	for _, imp := range meta.Outputs[output].Imports {
		if imp.Kind == "dynamic-import" && strings.HasPrefix(imp.Path, "agentc:") {
			return true
		}
	}
	return false
}

// jsImportsStayHome reports whether, in the metafile of a build whose
// loads jsLoadWithin recorded in owners, every file imports only files of
// its own package. A file imported under a name jsLoadWithin did not
// record (another namespace, import attributes) fails the check, which
// only costs the packages a build each; modules a package.json "browser"
// field disabled are not files and pass.
func jsImportsStayHome(meta *jsMetafile, owners *jsOwners) bool {
	owner := func(name string) (*jsPackage, bool) {
		p, ok := owners.loaded.Load(name)
		if !ok {
			return nil, false
		}
		return p.(*jsPackage), true
	}
	for name, in := range meta.Inputs {
		home, ok := owner(name)
		for _, imp := range in.Imports {
			if _, loaded := meta.Inputs[imp.Path]; imp.External || !loaded || strings.HasPrefix(imp.Path, "(disabled):") {
				continue
			}
			if !ok {
				// Something that is not a recorded file imports a file.
				return false
			}
			if p, known := owner(imp.Path); !known || p != home {
				return false
			}
		}
	}
	return true
}
