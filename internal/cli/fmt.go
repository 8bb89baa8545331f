package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	hcljson "github.com/hashicorp/hcl/v2/json"

	"github.com/agentform/agentform/internal/audit"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/safefile"
)

// FmtCommand is "agentform fmt": rewrite manifest files in canonical style.
type FmtCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *FmtCommand) Synopsis() string { return "Rewrite manifest files in canonical style" }

// Help implements cli.Command.
func (c *FmtCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] fmt [options] [TARGET ...]

  Rewrites *.acl files to the canonical HCL style (indentation, alignment
  of "=", spacing). Formatting never changes what a manifest means. A file
  with a syntax error is reported and left untouched.

  TARGET is a file or directory (default: the workspace directory). In a
  directory fmt formats the *.acl files validate and plan load there,
  symbolic links included and dot files not. A file keeps its mode, owner
  and hard links; one that is a symbolic link is rewritten where the link
  leads, and the link stays a link; one you may not write is an error.
  With "-" as the only target, fmt reads stdin and writes the result to
  stdout. *.acl.json files are not reformatted.

Options:

  -check        Change nothing; exit 3 when any file needs formatting.
  -diff         Print the changes as a unified diff (for "-", instead of
                the formatted text).
  -list=false   Don't print the names of the files changed.
  -write=false  Don't write files (implied by -check).
  -recursive    Also format subdirectories (skipping hidden ones,
                node_modules and dist).
  -no-color     Disable colour.
  -chdir=DIR    Use DIR as the workspace.

Exit status: 0 when all went well, 1 on errors, 3 with -check when a file
needs formatting.
`) + "\n"
}

// Run implements cli.Command.
func (c *FmtCommand) Run(args []string) int {
	fset := c.flagSet("fmt")
	check := fset.Bool("check", false, "check only")
	diff := fset.Bool("diff", false, "show diff")
	list := fset.Bool("list", true, "list changed files")
	write := fset.Bool("write", true, "write files")
	recursive := fset.Bool("recursive", false, "recurse")
	if !c.parseFlagsAnywhere(fset, args, c.Help()) {
		return ExitError
	}
	if *check {
		*write = false
	}
	targets := fset.Args()
	if len(targets) == 1 && targets[0] == "-" {
		return c.formatStdin(*check, *diff)
	}
	if slices.Contains(targets, "-") {
		fmt.Fprintf(c.Stderr, "Error: \"-\" (standard input) must be fmt's only target.\n\n%s", c.Help())
		return ExitError
	}
	if len(targets) == 0 {
		targets = []string{"."}
	}

	var files []string
	for _, t := range targets {
		p := c.path(t)
		info, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(c.Stderr, "Error: no file or directory at %s\n", p)
			return ExitError
		}
		if !info.IsDir() {
			if !strings.HasSuffix(p, manifest.SuffixNative) {
				fmt.Fprintf(c.Stderr, "Error: %s is not a %s file; fmt formats only those (*.acl.json files are left as they are).\n", t, manifest.SuffixNative)
				return ExitError
			}
			files = append(files, p)
			continue
		}
		found, err := manifestFilesUnder(p, *recursive)
		if err != nil {
			fmt.Fprintf(c.Stderr, "Error: listing %s: %s\n", t, err)
			return ExitError
		}
		files = append(files, found...)
	}

	code := ExitOK
	workspaces := map[string]*fmtWorkspace{}
	seen := map[string]bool{}
	for _, path := range files {
		// A file named twice (a target and its directory, a relative
		// and an absolute path) once.
		key, err := filepath.Abs(path)
		if err != nil {
			key = filepath.Clean(path)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		// Read only when something of the file is printed: a diff, or
		// the lines of a syntax error.
		ws := func() *fmtWorkspace {
			w := workspaces[filepath.Dir(path)]
			if w == nil {
				w = loadFmtWorkspace(filepath.Dir(path))
				workspaces[filepath.Dir(path)] = w
			}
			return w
		}
		changed, err := c.formatFile(path, *write, *diff, ws)
		if err != nil {
			code = ExitError
			continue
		}
		if changed {
			if *list {
				fmt.Fprintln(c.Stdout, c.display(path))
			}
			if *check && code == ExitOK {
				code = ExitUnformatted
			}
		}
	}
	return code
}

// display shows a path relative to the workspace (outside it too:
// "../a.acl"), with control characters escaped (a file's name cannot
// drive the terminal).
func (c *FmtCommand) display(path string) string {
	// Relative to the workspace, as targets are given, outside it too
	// ("../a.acl"): relative to two directories, two files could read
	// the same.
	dir, derr := filepath.Abs(c.Dir)
	abs, perr := filepath.Abs(path)
	if derr == nil && perr == nil {
		if rel, err := filepath.Rel(dir, abs); err == nil {
			path = rel
		}
	}
	return render.PrintableName(path)
}

// manifestFilesUnder lists the *.acl files fmt formats in the directory
// root, and with recursive in its subdirectories (not through symbolic
// links to directories): in each directory, the *.acl files manifest.Load
// reads there (manifest.ManifestFiles, symbolic links included), so that
// fmt formats the workspace validate and plan load. root itself may be a
// symbolic link, as a workspace directory may.
func manifestFilesUnder(root string, recursive bool) ([]string, error) {
	var out []string
	var walk func(dir string) error
	walk = func(dir string) error {
		names, err := manifest.ManifestFiles(dir)
		if err != nil {
			return err
		}
		for _, name := range names {
			if strings.HasSuffix(name, manifest.SuffixNative) {
				out = append(out, filepath.Join(dir, name))
			}
		}
		if !recursive {
			return nil
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || name == "node_modules" || name == "dist" {
				continue
			}
			if err := walk(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
		return nil
	}
	err := walk(root)
	sort.Strings(out)
	return out, err
}

// canonical parses src and returns it in canonical style. Syntax errors
// are returned as diagnostics and src is not formatted.
func canonical(src []byte, name string) ([]byte, hcl.Diagnostics) {
	// HCL's parsers recurse once per level: refuse what would exhaust the
	// stack, as loading the manifest does.
	if d := manifest.CheckNesting(name, src); d != nil {
		return nil, hcl.Diagnostics{d}
	}
	if _, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos); diags.HasErrors() {
		return nil, diags
	}
	out := hclwrite.Format(src)
	// A byte order mark, which the formatter drops, is the file's own:
	// kept, so that formatting changes nothing a diff cannot show.
	if bom := []byte("\ufeff"); bytes.HasPrefix(src, bom) && !bytes.HasPrefix(out, bom) {
		out = append(bom, out...)
	}
	return out, nil
}

// fmtWorkspace is the workspace a formatted file belongs to, read once:
// what plan hides in each of its files (the credentials, secrets'
// defaults and the locals they read, by source range, so that a value
// written with escapes or in a heredoc is hidden too), and the values to
// scrub, so that what fmt prints of a file hides the same.
type fmtWorkspace struct {
	red *render.Redaction
	// broken is set when a file of the workspace does not parse: what it
	// reads into a secret cannot be told, so every local is hidden.
	broken bool
}

func loadFmtWorkspace(dir string) *fmtWorkspace {
	cfg, _ := manifest.Load(dir)
	return fmtWorkspaceOf(dir, cfg)
}

// stdinFmtName is the name standard input is loaded under, as a manifest
// file of its own, to find what fmt -diff - must hide.
const stdinFmtName = "stdin" + manifest.SuffixNative

// fmtWorkspaceOf is the fmtWorkspace of cfg, loaded from dir.
func fmtWorkspaceOf(dir string, cfg *manifest.Config) *fmtWorkspace {
	if cfg == nil {
		return &fmtWorkspace{}
	}
	w := &fmtWorkspace{red: audit.Redaction(cfg), broken: len(cfg.Unparsed) > 0}
	if w.broken {
		// A file that does not parse stops the decoding of the others:
		// decode those that do, for their locals' values.
		sources := map[string][]byte{}
		for name, f := range cfg.Files {
			if !cfg.Unparsed[name] && f != nil {
				sources[name] = f.Bytes
			}
		}
		var values []string
		if rest, _ := manifest.LoadSources(dir, sources); rest != nil {
			values = append(audit.ValueStrings(rest.EvalContext(nil).Variables["locals"]), audit.Redaction(rest).Values()...)
		}
		w.red = render.NewRedaction(w.red.Ranges(), append(w.red.Values(), values...))
	}
	return w
}

// redaction returns what to hide in src, the file base of the workspace
// as it is on disk, named name in what fmt prints, and the spans to mask
// in src and in out, its formatted form (nil out: src only).
func (w *fmtWorkspace) redaction(base, name string, src, out []byte) (red *render.Redaction, srcSpans, outSpans []render.Span) {
	offset := func(b []byte) func(hcl.Pos) int {
		return func(p hcl.Pos) int { return min(max(p.Byte, 0), len(b)) }
	}
	var ranges []hcl.Range
	for _, r := range w.red.Ranges() {
		if r.Filename == base {
			r.Filename = name
			ranges = append(ranges, r)
		}
	}
	if w.broken {
		ranges = append(ranges, localRanges(name, src)...)
	}
	own := audit.SourceRedaction(map[string][]byte{name: src})
	red = render.NewRedaction(append(ranges, own.Ranges()...), append(w.red.Values(), own.Values()...))
	srcSpans = red.Spans(name, offset(src))
	if out != nil {
		var ok bool
		if outSpans, ok = mapSpans(src, out, srcSpans); !ok {
			// Formatting changed more than spacing: what out's own
			// bytes show, and the values.
			outSpans = audit.SourceRedaction(map[string][]byte{name: out}).Spans(name, offset(out))
		}
	}
	return red, srcSpans, outSpans
}

// localRanges returns the ranges of the values of every local in src (in
// either syntax), which parses.
func localRanges(name string, src []byte) []hcl.Range {
	if manifest.CheckNesting(name, src) != nil {
		// Too deep for the parser's stack: it does not parse.
		return nil
	}
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(name, manifest.SuffixJSON) {
		f, diags = hcljson.Parse(src, name)
	} else {
		f, diags = hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	}
	if diags.HasErrors() || f == nil {
		return nil
	}
	content, _, _ := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "locals"}}})
	var out []hcl.Range
	for _, b := range content.Blocks {
		attrs, _ := b.Body.JustAttributes()
		for _, a := range attrs {
			out = append(out, a.Expr.Range())
		}
	}
	return out
}

// mapSpans maps spans of src to out, its formatted form, token by token:
// formatting changes only the spaces between tokens. It reports false
// when the tokens differ.
func mapSpans(src, out []byte, spans []render.Span) ([]render.Span, bool) {
	ts, d1 := hclsyntax.LexConfig(src, "", hcl.InitialPos)
	to, d2 := hclsyntax.LexConfig(out, "", hcl.InitialPos)
	if d1.HasErrors() || d2.HasErrors() || len(ts) != len(to) {
		return nil, false
	}
	for i := range ts {
		if ts[i].Type != to[i].Type || !bytes.Equal(ts[i].Bytes, to[i].Bytes) {
			return nil, false
		}
	}
	// start maps a span's start, a byte offset of src: inside a token, to
	// the same place in out's token; between tokens, to the start of the
	// next. end maps a span's end: inside a token or at its end, to the
	// same place in out's (never past the spaces formatting puts after
	// it); between tokens, to the start of the next.
	start := func(off int) int {
		for i, t := range ts {
			if off < t.Range.End.Byte {
				if off < t.Range.Start.Byte {
					return to[i].Range.Start.Byte
				}
				return to[i].Range.Start.Byte + min(off-t.Range.Start.Byte, len(to[i].Bytes))
			}
		}
		return len(out)
	}
	end := func(off int) int {
		for i, t := range ts {
			if off <= t.Range.End.Byte {
				if off <= t.Range.Start.Byte {
					return to[i].Range.Start.Byte
				}
				return to[i].Range.Start.Byte + min(off-t.Range.Start.Byte, len(to[i].Bytes))
			}
		}
		return len(out)
	}
	mapped := make([]render.Span, 0, len(spans))
	for _, sp := range spans {
		mapped = append(mapped, render.Span{Start: start(sp.Start), End: end(sp.End)})
	}
	return mapped, true
}

// formatFile formats the file at path; with diff it prints the change,
// and for a file that does not parse its diagnostics, with what the
// file's workspace (read by workspace when needed) hides masked.
func (c *FmtCommand) formatFile(path string, write, diff bool, workspace func() *fmtWorkspace) (bool, error) {
	name := c.display(path)
	src, err := safefile.Read(path, manifest.MaxFileSize)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", readError(name, err))
		return false, err
	}
	out, diags := canonical(src, name)
	if diags.HasErrors() {
		// The source lines are all the diagnostics need, masked as
		// validate masks them.
		red, _, _ := workspace().redaction(filepath.Base(path), name, src, nil)
		render.Diagnostics(c.Stderr, diags, map[string]*hcl.File{name: {Bytes: src}}, red, c.colorFor(c.StderrTTY))
		return false, fmt.Errorf("syntax error")
	}
	if bytes.Equal(src, out) {
		return false, nil
	}
	if diff {
		// Both sides with their credentials masked, as a diagnostic
		// quotes a line: a secret's default must not reach a CI log.
		red, srcSpans, outSpans := workspace().redaction(filepath.Base(path), name, src, out)
		before, after := red.Scrub(render.MaskText(src, srcSpans)), red.Scrub(render.MaskText(out, outSpans))
		if before == after {
			// Every change is inside what is hidden.
			fmt.Fprintf(c.Stdout, "--- old/%s\n+++ new/%s\n(the changes are all inside hidden values, not shown)\n", filepath.ToSlash(name), filepath.ToSlash(name))
		} else {
			fmt.Fprint(c.Stdout, udiff.Unified("old/"+filepath.ToSlash(name), "new/"+filepath.ToSlash(name), before, after))
		}
	}
	if write {
		// Through a symbolic link to its target, as manifest.Load read it.
		if err := safefile.WriteThrough(path, out, 0o644); err != nil {
			fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
			return true, err
		}
	}
	return true, nil
}

// showSourceDiagnostics prints the diagnostics of a file that did not
// parse, quoting its lines with its credentials masked: fmt has no loaded
// manifest, so the redaction is made from the file's bytes
// (audit.SourceRedaction).
func (c *FmtCommand) showSourceDiagnostics(diags hcl.Diagnostics, name string, src []byte) {
	render.Diagnostics(c.Stderr, diags, map[string]*hcl.File{name: {Bytes: src}}, audit.SourceRedaction(map[string][]byte{name: src}), c.colorFor(c.StderrTTY))
}

// formatStdin formats standard input: the result to stdout, or with diff
// the change as a unified diff instead (masked as a file's is); with check
// nothing but the diff, and exit 3 when the input needs formatting.
func (c *FmtCommand) formatStdin(check, diff bool) int {
	src, err := io.ReadAll(io.LimitReader(c.Stdin, manifest.MaxFileSize+1))
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: reading stdin: %s\n", err)
		return ExitError
	}
	if len(src) > manifest.MaxFileSize {
		fmt.Fprintf(c.Stderr, "Error: standard input holds more than %d bytes, more than a manifest file may.\n", manifest.MaxFileSize)
		return ExitError
	}
	out, diags := canonical(src, "<stdin>")
	if diags.HasErrors() {
		c.showSourceDiagnostics(diags, "<stdin>", src)
		return ExitError
	}
	changed := !bytes.Equal(src, out)
	if diff && changed {
		// Masked as a file's diff is, with stdin taken for a workspace of
		// its own: its locals that a secret reads are hidden too.
		cfg, _ := manifest.LoadSources("", map[string][]byte{stdinFmtName: src})
		red, srcSpans, outSpans := fmtWorkspaceOf("", cfg).redaction(stdinFmtName, "<stdin>", src, out)
		before, after := red.Scrub(render.MaskText(src, srcSpans)), red.Scrub(render.MaskText(out, outSpans))
		if before == after {
			fmt.Fprintf(c.Stdout, "--- old/<stdin>\n+++ new/<stdin>\n(the changes are all inside hidden values, not shown)\n")
		} else {
			fmt.Fprint(c.Stdout, udiff.Unified("old/<stdin>", "new/<stdin>", before, after))
		}
	}
	switch {
	case check && changed:
		return ExitUnformatted
	case check, diff:
		return ExitOK
	}
	_, _ = c.Stdout.Write(out)
	return ExitOK
}

// writeFileAtomic replaces path with data through a temporary file in the
// same directory, keeping the file's mode, so a crash never leaves a
// half-written file.
func writeFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	return safefile.Write(path, data, mode)
}
