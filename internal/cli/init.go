package cli

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/agentform/agentform/internal/manifest"
)

//go:embed scaffold
var scaffold embed.FS

// InitCommand is "agentform init": scaffold a new workspace.
type InitCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *InitCommand) Synopsis() string { return "Create a new workspace" }

// Help implements cli.Command.
func (c *InitCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] init [options] [DIR]

  Creates a workspace in DIR (default: the workspace directory): agent.acl
  with one agent, a TypeScript tool package (tools/greet), a skill
  (skills/greeting) and a .gitignore. The new workspace validates as is.

  init never overwrites: when any of these files exists it changes
  nothing and says which.

Options:

  -agent=NAME  Name of the agent (default: derived from DIR, else
               "assistant").
  -no-color    Disable colour.
  -chdir=DIR   Use DIR as the workspace.
`) + "\n"
}

var nonName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Run implements cli.Command.
func (c *InitCommand) Run(args []string) int {
	fset := c.flagSet("init")
	agent := fset.String("agent", "", "agent name")
	if !c.parseFlagsAnywhere(fset, args, c.Help()) {
		return ExitError
	}
	if fset.NArg() > 1 {
		fmt.Fprintf(c.Stderr, "Error: init takes at most one directory.\n\n%s", c.Help())
		return ExitError
	}
	dir := c.Dir
	if fset.NArg() == 1 {
		dir = c.path(fset.Arg(0))
		info, err := os.Stat(dir)
		switch {
		case err == nil && !info.IsDir():
			fmt.Fprintf(c.Stderr, "Error: %s is a file; init creates a workspace in a directory (it writes agent.acl there).\n", fset.Arg(0))
			return ExitError
		case err != nil && (strings.HasSuffix(dir, manifest.SuffixNative) || strings.HasSuffix(dir, manifest.SuffixJSON)):
			fmt.Fprintf(c.Stderr, "Error: %s looks like a manifest file; init takes a directory and writes agent.acl in it (agentform init DIR).\n", fset.Arg(0))
			return ExitError
		}
	}
	name := *agent
	if name == "" {
		abs, _ := filepath.Abs(dir)
		name = strings.Trim(nonName.ReplaceAllString(filepath.Base(abs), "_"), "_-")
		if name == "" || name[0] >= '0' && name[0] <= '9' {
			name = "assistant"
		}
	}
	if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).MatchString(name) {
		fmt.Fprintf(c.Stderr, "Error: %q is not a valid agent name: start with a letter or underscore; use letters, digits, _ and -.\n", name)
		return ExitError
	}

	files, err := renderScaffold(name)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s\n", err)
		return ExitError
	}
	var existing []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, f.path)); err == nil {
			existing = append(existing, f.path)
		}
	}
	if len(existing) > 0 {
		fmt.Fprintf(c.Stderr, "Error: %s already has %s; init changed nothing.\nRemove them or run init in an empty directory.\n", dir, strings.Join(existing, ", "))
		return ExitError
	}
	for _, f := range files {
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = fmt.Errorf("%s: %w", pe.Path, pe.Err)
			}
			fmt.Fprintf(c.Stderr, "Error: cannot create the workspace directory %s (%s).\n", filepath.Dir(p), err)
			return ExitError
		}
		if err := writeFileAtomic(p, f.data); err != nil {
			fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
			return ExitError
		}
	}
	fmt.Fprintf(c.Stdout, "agentform has created a workspace for agent %q in %s:\n\n", name, dir)
	for _, f := range files {
		fmt.Fprintf(c.Stdout, "  %s\n", f.path)
	}
	d := shellWord(dir)
	fmt.Fprintf(c.Stdout, "\nNext: \"agentform -chdir=%s validate\" to check it, then \"agentform -chdir=%s plan\".\n", d, d)
	return ExitOK
}

// shellWord quotes s for a POSIX shell when it holds anything but
// letters, digits and _./:@%+=,- (a space, a quote), so that a command
// shown to be pasted runs as shown.
func shellWord(s string) string {
	plain := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./:@%+=,-", r))
	})
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

type scaffoldFile struct {
	path string
	data []byte
}

// renderScaffold returns the workspace files for an agent name, sorted by
// path.
func renderScaffold(name string) ([]scaffoldFile, error) {
	var out []scaffoldFile
	err := fs.WalkDir(scaffold, "scaffold", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := scaffold.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "scaffold/")
		if strings.HasSuffix(rel, ".tmpl") {
			rel = strings.TrimSuffix(rel, ".tmpl")
			tmpl, err := template.New(rel).Parse(string(data))
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := tmpl.Execute(&buf, struct{ Name string }{name}); err != nil {
				return err
			}
			data = buf.Bytes()
		}
		if rel == "gitignore" {
			rel = ".gitignore"
		}
		out = append(out, scaffoldFile{path: path.Clean(rel), data: data})
		return nil
	})
	return out, err
}
