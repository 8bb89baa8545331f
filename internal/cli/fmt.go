package cli

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

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
  symbolic links included and dot files not. A file that is a symbolic
  link is rewritten where the link leads, keeping its mode; the link
  stays a link. With "-" as the only target, fmt reads stdin and writes
  the result to stdout. *.acl.json files are not reformatted.

Options:

  -check      Change nothing; exit 3 when any file needs formatting.
  -diff       Print the changes as a unified diff.
  -list=false Don't print the names of the files changed.
  -write=false Don't write files (implied by -check).
  -recursive  Also format subdirectories (skipping hidden ones,
              node_modules and dist).
  -no-color   Disable colour.
  -chdir=DIR  Use DIR as the workspace.

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
		return c.formatStdin(*check)
	}
	if slices.Contains(targets, "-") {
		fmt.Fprintf(c.Stderr, "Error: \"-\" (standard input) must be fmt's only target.\n")
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
	for _, path := range files {
		ws := workspaces[filepath.Dir(path)]
		if ws == nil {
			ws = loadFmtWorkspace(filepath.Dir(path))
			workspaces[filepath.Dir(path)] = ws
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

// display shows a path relative to the workspace when it is inside it,
// with control characters escaped (a file's name cannot drive the
// terminal).
func (c *FmtCommand) display(path string) string {
	if rel, err := filepath.Rel(c.Dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		path = rel
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
	return hclwrite.Format(src), nil
}

// fmtWorkspace is the workspace a formatted file belongs to: the manifest
// files of its directory as they are on disk, read once, so that what fmt
// prints of a file hides what plan hides in it.
type fmtWorkspace struct {
	dir      string
	files    map[string][]byte
	unparsed map[string]bool
}

func loadFmtWorkspace(dir string) *fmtWorkspace {
	w := &fmtWorkspace{dir: dir, files: map[string][]byte{}, unparsed: map[string]bool{}}
	if cfg, _ := manifest.Load(dir); cfg != nil {
		for name, f := range cfg.Files {
			if f != nil {
				w.files[name] = f.Bytes
			}
		}
		w.unparsed = cfg.Unparsed
	}
	return w
}

// redaction returns what to hide of the file base of the workspace when
// it holds b (the file on disk, or its formatted form), named name in
// what fmt prints: the credentials, secrets' defaults and the locals they
// read, as the workspace's redaction finds them with b in place of the
// file (masked by their source ranges, so a value written with escapes
// or in a heredoc is hidden too), and what b's own bytes show
// (audit.SourceRedaction). While a file of the workspace does not parse,
// what it reads into a secret cannot be told: every local's value is
// hidden then.
func (w *fmtWorkspace) redaction(base, name string, b []byte) *render.Redaction {
	sources := map[string][]byte{}
	broken := false
	for n, src := range w.files {
		switch {
		case n == base:
		case w.unparsed[n]:
			broken = true
		default:
			sources[n] = src
		}
	}
	sources[base] = b
	cfg, _ := manifest.LoadSources(w.dir, sources)
	var ranges []hcl.Range
	var values []string
	if red := audit.Redaction(cfg); red != nil {
		for _, r := range red.Ranges() {
			if r.Filename == base {
				r.Filename = name
				ranges = append(ranges, r)
			}
		}
		values = red.Values()
	}
	if broken || cfg == nil || len(cfg.Unparsed) > 0 {
		// Decoded without the files that do not parse, b among them
		// when it is one.
		parsed := maps.Clone(sources)
		if cfg == nil || cfg.Unparsed[base] {
			delete(parsed, base)
		}
		if rest, _ := manifest.LoadSources(w.dir, parsed); rest != nil {
			values = append(values, stringLeaves(rest.EvalContext(nil).Variables["locals"])...)
			if red := audit.Redaction(rest); red != nil {
				values = append(values, red.Values()...)
			}
		}
	}
	own := audit.SourceRedaction(map[string][]byte{name: b})
	return render.NewRedaction(append(ranges, own.Ranges()...), append(values, own.Values()...))
}

// stringLeaves returns the strings and numbers of v, however nested.
func stringLeaves(v cty.Value) []string {
	v, _ = v.UnmarkDeep()
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() {
		return nil
	}
	switch {
	case v.Type() == cty.String:
		return []string{v.AsString()}
	case v.Type() == cty.Number:
		return []string{v.AsBigFloat().Text('f', -1)}
	case v.CanIterateElements():
		var out []string
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			out = append(out, stringLeaves(ev)...)
		}
		return out
	}
	return nil
}

// formatFile formats the file at path; with diff it prints the change with
// credentials masked, also every value workspace (the redaction of the
// file's workspace, or nil) hides.
func (c *FmtCommand) formatFile(path string, write, diff bool, ws *fmtWorkspace) (bool, error) {
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
		red := audit.SourceRedaction(map[string][]byte{name: src})
		if ws != nil {
			red = ws.redaction(filepath.Base(path), name, src)
		}
		render.Diagnostics(c.Stderr, diags, map[string]*hcl.File{name: {Bytes: src}}, red, c.colorFor(c.StderrTTY))
		return false, fmt.Errorf("syntax error")
	}
	if bytes.Equal(src, out) {
		return false, nil
	}
	if diff {
		// Both sides with their credentials masked, as a diagnostic
		// quotes a line: a secret's default must not reach a CI log.
		masked := func(b []byte) string {
			red := ws.redaction(filepath.Base(path), name, b)
			return red.Scrub(render.MaskText(b, red.Spans(name, func(p hcl.Pos) int { return min(max(p.Byte, 0), len(b)) })))
		}
		fmt.Fprint(c.Stdout, udiff.Unified("old/"+filepath.ToSlash(name), "new/"+filepath.ToSlash(name), masked(src), masked(out)))
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

func (c *FmtCommand) formatStdin(check bool) int {
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
	if check {
		if !bytes.Equal(src, out) {
			return ExitUnformatted
		}
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
