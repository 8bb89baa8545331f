package resolve

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/lockfile"
)

// pythonReaderScript reads a tool's name, description and schema with
// Python's ast module; see the script's docstring for what it understands.
//
//go:embed python_reader.py
var pythonReaderScript string

// pythonReaderHash is part of every python cache key, so that a change to
// the reader invalidates what an older reader produced.
var pythonReaderHash = SHA256([]byte(pythonReaderScript))

// pythonSkipDirs are directories whose Python files are not searched for the
// tool (they are still hashed and packaged): tests and virtual environments
// or build trees that BuildOutputDirs does not already leave out.
var pythonSkipDirs = map[string]bool{"tests": true, "test": true, "venv": true, "build": true, "site-packages": true}

// pythonCacheEntry is what the cache keeps for a python tool: the reader's
// answer, without the package files (those are read again from disk). The
// schema is kept as a string so that it comes back byte for byte (a
// json.RawMessage would be re-escaped on the way in).
type pythonCacheEntry struct {
	Description string   `json:"description"`
	InputSchema string   `json:"input_schema,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	// File and Attr say where the tool is: the package file and the
	// module-level class or function in it.
	File string `json:"file,omitempty"`
	Attr string `json:"attr,omitempty"`
}

// ResolvePython resolves a python tool block: it checks the package's
// pyproject.toml, hashes the package, checks uv.lock's dependencies against
// the interpreter, and reads the tool's description and input schema from
// the source with python3's ast module (the package's code is never run).
// Without python3 on PATH the schema is unknown and a warning says so; the
// package is still pinned. The description is the one the code declares,
// else the block's description. Outputs hold the package files under
// "src/", as on disk.
func ResolvePython(ctx context.Context, req Request) (*Resolved, hcl.Diagnostics) {
	t := req.Tool
	if t == nil || t.Python == nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Not a python tool",
			Detail: "ResolvePython was given a tool block without python settings; this is a bug in agentform."}}
	}
	py := t.Python
	srcRange := py.Source.Range.Ptr()
	dir, diags := sourceDir(req.Dir, req.Root, req.dirsReal, py.Source, "python package")
	if diags.HasErrors() {
		return nil, diags
	}

	project, d := readPyproject(dir, py.Source)
	diags = append(diags, d...)
	if d.HasErrors() {
		return nil, diags
	}
	sourceHash, err := hashPackage(dir)
	if err != nil {
		return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot hash python package",
			Detail: fmt.Sprintf("Hashing the package at %q: %s. Fix the package so that every file can be read, then plan again.", py.Source.Value, err), Subject: srcRange})
	}
	files, err := packageFiles(dir)
	if err != nil {
		return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read python package",
			Detail: fmt.Sprintf("Listing the package at %q: %s.", py.Source.Value, err), Subject: srcRange})
	}
	if d := shippedFiles(files, py.Source, srcRange, "python package", "tools/"+t.Name+"/src/"); d.HasErrors() {
		return nil, append(diags, d...)
	}
	diags = append(diags, envFileWarnings(files, py.Source, srcRange, "python package")...)

	interpreter := py.Interpreter.Value
	if interpreter == "" {
		interpreter = "embedded"
	}
	uvLockHash := ""
	if data, err := readInput(filepath.Join(dir, "uv.lock")); err == nil {
		uvLockHash = SHA256(data)
		diags = append(diags, checkUVLock(data, project, interpreter, py)...)
	} else if !errors.Is(err, os.ErrNotExist) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read uv.lock",
			Detail: fmt.Sprintf("Reading uv.lock in %q: %s.", py.Source.Value, err), Subject: srcRange})
	}

	export := py.Export.Value
	if export == "" {
		export = t.Name
	}
	var pyFiles []string
	for _, f := range files {
		if isPythonToolFile(f) {
			pyFiles = append(pyFiles, f)
		}
	}
	key := Key(sourceHash, uvLockHash, export, interpreter, pythonReaderHash, strings.Join(pyFiles, "\n"))
	entry, d := readPythonTool(ctx, req, dir, pyFiles, export, key)
	diags = append(diags, d...)
	if diags.HasErrors() {
		return nil, diags
	}

	outputs := make(map[string][]byte, len(files))
	for _, f := range files {
		data, err := readInput(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read python package",
				Detail: fmt.Sprintf("Reading %s in %q: %s.", f, py.Source.Value, err), Subject: srcRange})
		}
		outputs["src/"+f] = data
	}

	description := entry.Description
	if description == "" && t.Description.Known() {
		description = t.Description.Value
	}
	if entry.Description != "" {
		diags = append(diags, descriptionNotUsed(t, entry.Description, fmt.Sprintf("The tool in %q", py.Source.Value))...)
	}
	var schema json.RawMessage
	if entry.InputSchema != "" {
		schema = json.RawMessage(entry.InputSchema)
	}
	var at *Entry
	if entry.File != "" && entry.Attr != "" {
		at = &Entry{File: entry.File, Attr: entry.Attr}
	}
	return &Resolved{
		Tools:             []Tool{{Name: t.Name, Description: description, InputSchema: schema, Entry: at}},
		DescriptionUnused: entry.Description != "",
		Pin: &lockfile.Tool{
			Kind:        manifest.KindPython,
			Source:      sourceHash,
			UVLock:      uvLockHash,
			Interpreter: interpreter,
		},
		Outputs: outputs,
	}, diags
}

// pyproject is the part of pyproject.toml agentform reads.
type pyproject struct {
	Project struct {
		Name string `toml:"name"`
	} `toml:"project"`
}

// readPyproject checks that the package has a readable pyproject.toml and
// returns its normalized project name ("" when it has none).
func readPyproject(dir string, src manifest.String) (string, hcl.Diagnostics) {
	fail := func(summary, format string, args ...any) (string, hcl.Diagnostics) {
		return "", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: src.Range.Ptr()}}
	}
	data, err := readInput(filepath.Join(dir, "pyproject.toml"))
	if errors.Is(err, os.ErrNotExist) {
		return fail("Missing pyproject.toml",
			"There is no pyproject.toml in %q. A python tool's source is a Python package directory with a pyproject.toml; create one (for example with uv init --package) or point source at the package.", src.Value)
	}
	if err != nil {
		return fail("Cannot read pyproject.toml", "Reading pyproject.toml in %q: %s.", src.Value, err)
	}
	var p pyproject
	err = tomlNesting(data)
	if err == nil {
		err = toml.Unmarshal(data, &p)
	}
	if err != nil {
		return fail("Invalid pyproject.toml", "pyproject.toml in %q is not valid TOML: %s. Fix the file, then plan again.", src.Value, err)
	}
	return normalizePythonName(p.Project.Name), nil
}

var pythonNameSeparators = regexp.MustCompile(`[-_.]+`)

// normalizePythonName normalizes a distribution name as PEP 503 does (and
// as uv.lock writes it): lower case, runs of "-", "_" and "." become "-".
func normalizePythonName(name string) string {
	return pythonNameSeparators.ReplaceAllString(strings.ToLower(strings.TrimSpace(name)), "-")
}

// readPythonTool returns the tool's description and schema: from the cache
// when its key is there, else by running the reader script.
func readPythonTool(ctx context.Context, req Request, dir string, pyFiles []string, export, key string) (pythonCacheEntry, hcl.Diagnostics) {
	py := req.Tool.Python
	at := py.Source.Range.Ptr()
	if py.Export.Set {
		at = py.Export.Range.Ptr()
	}
	var entry pythonCacheEntry
	hit := req.Cache.Get(manifest.KindPython, key, &entry)
	// Reading the package may take seconds: let other agentform processes
	// write the cache meanwhile.
	req.Cache.Release()
	if !hit {
		fresh, cacheable, diags := runPythonReader(ctx, req, dir, pyFiles, export, at)
		if !cacheable {
			return fresh, diags
		}
		// A failed cache write costs only a second read next time.
		_ = req.Cache.Put(manifest.KindPython, key, fresh)
		entry = fresh
	}
	var diags hcl.Diagnostics
	for _, w := range entry.Warnings {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Python tool read in part",
			Detail: fmt.Sprintf("In %q: %s.", py.Source.Value, w), Subject: py.Source.Range.Ptr()})
	}
	return entry, diags
}

// pythonReaderAnswer is the reader script's output.
type pythonReaderAnswer struct {
	Found       bool            `json:"found"`
	Error       string          `json:"error"`
	Problem     string          `json:"problem"`
	Kind        string          `json:"kind"`
	File        string          `json:"file"`
	Line        int             `json:"line"`
	Attr        string          `json:"attr"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Warnings    []string        `json:"warnings"`
}

// runPythonReader runs the embedded reader with python3, bounded by the
// request's timeout and ctx. cacheable is false unless the reader answered
// with a schema: errors are not cached, and neither is a missing or too old
// python3, so that a later plan on a better equipped host reads the schema.
func runPythonReader(ctx context.Context, req Request, dir string, pyFiles []string, export string, at *hcl.Range) (entry pythonCacheEntry, cacheable bool, diags hcl.Diagnostics) {
	py := req.Tool.Python
	fail := func(summary, format string, args ...any) (pythonCacheEntry, bool, hcl.Diagnostics) {
		return pythonCacheEntry{}, false, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: at}}
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		return pythonCacheEntry{}, false, hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "python3 not found",
			Detail:  fmt.Sprintf("agentform reads a python tool's description and input schema with python3's ast module (your code is never run), but python3 is not on this host's PATH. The tool %q is pinned without a schema; install Python 3 and plan again to see it.", req.Tool.Name),
			Subject: py.Source.Range.Ptr()}}
	}

	input, err := json.Marshal(map[string]any{"dir": dir, "export": export, "files": pyFiles})
	if err != nil {
		return fail("Cannot read python tool", "Encoding the reader's request: %s.", err)
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, python, "-I", "-c", pythonReaderScript)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return fail("Reading python tool cancelled", "Reading the tool in %q was cancelled: %s.", py.Source.Value, ctx.Err())
	case runCtx.Err() != nil:
		return fail("Reading python tool timed out", "python3 did not finish reading the tool in %q within %s. Large packages take longer: %s, or move files that are not part of the tool out of the package.", py.Source.Value, timeout, req.raiseTimeout())
	case runErr != nil:
		return fail("Cannot read python tool", "Running %s to read the tool in %q failed: %s.%s", python, py.Source.Value, runErr, stderrTail(stderr.Bytes()))
	}
	var ans pythonReaderAnswer
	if err := json.Unmarshal(stdout.Bytes(), &ans); err != nil {
		return fail("Cannot read python tool", "The reader's answer is not JSON (%s).%s", err, stderrTail(stderr.Bytes()))
	}
	if !ans.Found {
		switch ans.Problem {
		case "not_found":
			return fail("Python tool not found", "Reading %q: %s. agentform looks for a class whose name attribute or class name is %q, or a function named %q, in the package's Python files (outside tests and virtual environments); set export to the right name.%s",
				py.Source.Value, ans.Error, export, export, warningsNote(ans.Warnings))
		case "ambiguous":
			return fail("Ambiguous python tool", "Reading %q: %s. Rename one, or set export to a name only one of them has.", py.Source.Value, ans.Error)
		case "unreadable":
			return fail("Python tool cannot be read statically", "Reading %q: %s.", py.Source.Value, ans.Error)
		case "python":
			// Like a missing python3: a problem of this host, not of the tool.
			return pythonCacheEntry{}, false, hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "python3 too old",
				Detail:  fmt.Sprintf("%s (%s). The tool %q is pinned without a schema; put a newer python3 on PATH and plan again to see it.", ans.Error, python, req.Tool.Name),
				Subject: py.Source.Range.Ptr()}}
		}
		return fail("Cannot read python tool", "Reading %q: %s.", py.Source.Value, ans.Error)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, ans.Schema); err != nil {
		return fail("Invalid tool schema", "The schema read from %s:%d is not JSON: %s.", ans.File, ans.Line, err)
	}
	if err := checkInputSchema(compact.Bytes(), false); err != nil {
		return fail("Invalid tool schema", "The input schema of %s (%s:%d) cannot describe the tool's arguments: %s. Fix it in the Python source, then plan again.", export, ans.File, ans.Line, err)
	}
	return pythonCacheEntry{Description: ans.Description, InputSchema: compact.String(), Warnings: ans.Warnings, File: ans.File, Attr: ans.Attr}, true, nil
}

// isPythonToolFile reports whether a package file is searched for the tool:
// a .py file outside tests, hidden directories and virtual environments,
// and not a test module.
func isPythonToolFile(rel string) bool {
	if !strings.HasSuffix(rel, ".py") {
		return false
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		if pythonSkipDirs[p] || strings.HasPrefix(p, ".") {
			return false
		}
	}
	base := parts[len(parts)-1]
	return !strings.HasPrefix(base, "test_") && !strings.HasSuffix(base, "_test.py") && base != "conftest.py"
}

// stderrTail returns the end of a subprocess's stderr as a sentence to add
// to a diagnostic's detail, or "".
func stderrTail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return " python3 said:\n" + s
}

// warningsNote lists the reader's warnings (unreadable files) after an
// error, since they may explain why the export was not found.
func warningsNote(warnings []string) string {
	if len(warnings) == 0 {
		return ""
	}
	return " Also: " + strings.Join(warnings, "; ") + "."
}

// uvLock is the part of uv.lock agentform reads.
type uvLock struct {
	Version  int         `toml:"version"`
	Packages []uvPackage `toml:"package"`
}

// uvPackage is one [[package]] entry of uv.lock.
type uvPackage struct {
	Name                 string                    `toml:"name"`
	Version              string                    `toml:"version"`
	Source               map[string]any            `toml:"source"`
	Dependencies         []uvDependency            `toml:"dependencies"`
	OptionalDependencies map[string][]uvDependency `toml:"optional-dependencies"`
	Sdist                *uvDistribution           `toml:"sdist"`
	Wheels               []uvDistribution          `toml:"wheels"`
}

// uvDependency is one edge of the lock's dependency graph.
type uvDependency struct {
	Name    string   `toml:"name"`
	Version string   `toml:"version"`
	Extra   []string `toml:"extra"`
	Marker  string   `toml:"marker"`
}

// uvDistribution is a wheel or sdist: a URL, a local path, or a file name.
type uvDistribution struct {
	URL      string `toml:"url"`
	Path     string `toml:"path"`
	Filename string `toml:"filename"`
	Hash     string `toml:"hash"`
}

// local reports whether the package is the project itself or another
// local source tree (a workspace member): its code is in the package.
func (p *uvPackage) local() bool {
	_, editable := p.Source["editable"]
	_, virtual := p.Source["virtual"]
	return editable || virtual
}

// filename returns the distribution's file name.
func (d uvDistribution) filename() string {
	if d.Filename != "" {
		return d.Filename
	}
	if d.URL != "" {
		if u, err := url.Parse(d.URL); err == nil {
			if name, err := url.PathUnescape(path.Base(u.Path)); err == nil {
				return name
			}
			return path.Base(u.Path)
		}
	}
	return path.Base(filepath.ToSlash(d.Path))
}

// pureWheel reports whether a wheel file name's tags say it is pure Python:
// every ABI tag is "none" and every platform tag is "any" (py3-none-any,
// py2.py3-none-any). A platform tag (manylinux_2_17_x86_64, macosx_11_0_arm64,
// win_amd64, linux_armv6l) or an ABI tag (cp311, abi3) means compiled code.
func pureWheel(name string) bool {
	name = strings.TrimSuffix(name, ".whl")
	parts := strings.Split(name, "-")
	if len(parts) < 5 {
		return false
	}
	abi, platform := parts[len(parts)-2], parts[len(parts)-1]
	for _, tag := range strings.Split(abi, ".") {
		if tag != "none" {
			return false
		}
	}
	for _, tag := range strings.Split(platform, ".") {
		if tag != "any" {
			return false
		}
	}
	return true
}

// checkUVLock parses uv.lock and, for the embedded interpreter, reports
// each dependency the tool needs at run time that ships only
// platform-specific wheels.
//
// The dependencies checked are those reachable from the project's own
// package (named in pyproject.toml) through its dependencies and the extras
// they ask for; development groups and the project's optional extras are
// not installed with the tool and are not checked. When the lock does not
// hold the project, every package is checked. Dependencies whose
// environment marker limits them to Windows or macOS are not followed.
// Packages without wheels (an sdist, a git or path source) cannot be told
// apart without building them and are accepted.
func checkUVLock(data []byte, project, interpreter string, py *manifest.PythonTool) hcl.Diagnostics {
	var lock uvLock
	err := tomlNesting(data)
	if err == nil {
		err = toml.Unmarshal(data, &lock)
	}
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid uv.lock",
			Detail:  fmt.Sprintf("uv.lock in %q cannot be read: %s. Run uv lock in %s to rewrite it.", py.Source.Value, err, py.Source.Value),
			Subject: py.Source.Range.Ptr()}}
	}
	if interpreter != "embedded" {
		return nil
	}
	at := py.Source.Range.Ptr()
	if py.Interpreter.Set {
		at = py.Interpreter.Range.Ptr()
	}
	var diags hcl.Diagnostics
	for _, p := range uvRuntimePackages(&lock, project) {
		if p.local() || len(p.Wheels) == 0 {
			continue
		}
		var native []string
		pure := false
		for _, w := range p.Wheels {
			name := w.filename()
			if pureWheel(name) {
				pure = true
				break
			}
			native = append(native, name)
		}
		if pure {
			continue
		}
		sort.Strings(native)
		example := native[0]
		more := ""
		if len(native) > 1 {
			more = fmt.Sprintf(" and %d more", len(native)-1)
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Dependency needs a native interpreter",
			Detail: fmt.Sprintf("uv.lock in %q locks %s %s, which ships only platform-specific wheels (%s%s): it contains compiled code that the embedded interpreter cannot load. Set interpreter = \"static\" for this tool, or replace the dependency with a pure-Python one.",
				py.Source.Value, p.Name, p.Version, example, more),
			Subject: at})
	}
	return diags
}

// uvRuntimePackages returns the packages the project needs at run time,
// sorted by name and version, each once.
func uvRuntimePackages(lock *uvLock, project string) []*uvPackage {
	byName := map[string][]*uvPackage{}
	for i := range lock.Packages {
		p := &lock.Packages[i]
		byName[normalizePythonName(p.Name)] = append(byName[normalizePythonName(p.Name)], p)
	}
	var roots []*uvPackage
	for _, p := range byName[project] {
		if p.local() {
			roots = append(roots, p)
		}
	}
	var out []*uvPackage
	if len(roots) == 0 {
		for i := range lock.Packages {
			out = append(out, &lock.Packages[i])
		}
	} else {
		type extraOf struct {
			p     *uvPackage
			extra string
		}
		seen := map[*uvPackage]bool{}
		seenExtra := map[extraOf]bool{}
		var visit func(deps []uvDependency)
		visit = func(deps []uvDependency) {
			for _, d := range deps {
				if uvForeignPlatformOnly(d.Marker) {
					continue
				}
				for _, p := range byName[normalizePythonName(d.Name)] {
					if d.Version != "" && p.Version != d.Version {
						continue
					}
					if !seen[p] {
						seen[p] = true
						out = append(out, p)
						visit(p.Dependencies)
					}
					for _, extra := range d.Extra {
						if k := (extraOf{p, extra}); !seenExtra[k] {
							seenExtra[k] = true
							visit(p.OptionalDependencies[extra])
						}
					}
				}
			}
		}
		for _, r := range roots {
			seen[r] = true
			visit(r.Dependencies)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Version < out[j].Version
	})
	return out
}

var uvForeignPlatform = regexp.MustCompile(`(sys_platform|platform_system|os_name)\s*==\s*['"](win32|cygwin|Windows|nt|darwin|Darwin)['"]`)

// uvForeignPlatformOnly reports whether an environment marker limits a
// dependency to Windows or macOS: every "or" branch requires one. Markers
// with parentheses are not analysed (the dependency is followed).
func uvForeignPlatformOnly(marker string) bool {
	if marker == "" || strings.ContainsAny(marker, "()") {
		return false
	}
	for _, branch := range strings.Split(marker, " or ") {
		if !uvForeignPlatform.MatchString(branch) {
			return false
		}
	}
	return true
}

// tomlMaxNesting bounds how deep arrays and inline tables may nest in a
// TOML file agentform reads: the TOML parser recurses once per level, and
// a file nested a few million levels deep would exhaust the stack (a fatal
// error, not a panic). pyproject.toml and uv.lock nest a few levels.
const tomlMaxNesting = 256

// tomlNesting reports a TOML document whose arrays and inline tables nest
// deeper than tomlMaxNesting, with its line. Strings and comments are
// skipped; table headers open and close on their line.
func tomlNesting(data []byte) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			quote := string(c)
			if i+2 < len(data) && data[i+1] == c && data[i+2] == c {
				quote = strings.Repeat(quote, 3)
			}
			i += len(quote)
			for i < len(data) && !bytes.HasPrefix(data[i:], []byte(quote)) {
				switch {
				case data[i] == '\n' && len(quote) == 1:
					// A one-line string ends at the line; the parser
					// reports it.
					i--
					goto next
				case data[i] == '\n':
					line++
				case data[i] == '\\' && c == '"':
					if i+1 < len(data) && data[i+1] == '\n' {
						line++
					}
					i++
				}
				i++
			}
			if len(quote) == 3 {
				// A run of four or five quotes ends the string with one
				// or two of them in it: the string ends after the run.
				run := 3
				for run < 5 && i+run < len(data) && data[i+run] == c {
					run++
				}
				i += run - 3
			}
			i += len(quote) - 1
		case '[', '{':
			if depth++; depth > tomlMaxNesting {
				return fmt.Errorf("its arrays and inline tables nest more than %d levels deep (line %d)", tomlMaxNesting, line)
			}
		case ']', '}':
			depth = max(0, depth-1)
		}
	next:
	}
	return nil
}
