package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/lockfile"
)

// VerifyCommand is "agentform verify": check an artifact.
type VerifyCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *VerifyCommand) Synopsis() string { return "Check an agent artifact" }

// Help implements cli.Command.
func (c *VerifyCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] verify [options] ARTIFACT

  Checks dist/<agent>.agent.tgz without extracting it: every entry against
  SHA256SUMS, the digests agent.json records against the files, and, when
  the workspace has agentform.lock.hcl, against the lockfile. Archives with
  unsafe entries (absolute paths, "..", links, duplicates) are rejected.

Options:

  -lockfile=false  Do not compare with the workspace's lockfile.
  -no-color        Disable colour.
  -chdir=DIR       Use DIR as the workspace: its lockfile is compared,
                   and a relative ARTIFACT path is read from it.
`) + "\n"
}

// Run implements cli.Command.
func (c *VerifyCommand) Run(args []string) int {
	fs := c.flagSet("verify")
	useLock := fs.Bool("lockfile", true, "compare with the lockfile")
	if !c.parseFlags(fs, args, c.Help()) {
		return ExitError
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(c.Stderr, "Error: verify needs one artifact file.\n\n%s", c.Help())
		return ExitError
	}
	path := fs.Arg(0)
	f, err := os.Open(c.path(path))
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(c.Stderr, "Error: there is no artifact at %s.\n", c.path(path))
		return ExitError
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: reading %s: %s.\n", path, err)
		return ExitError
	}
	defer f.Close()
	a, err := artifact.Read(f)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s is not a safe agentform artifact: %s.\n", path, err)
		return ExitError
	}
	var lock *lockfile.File
	if *useLock {
		l, diags := lockfile.Load(c.Dir)
		if diags.HasErrors() {
			c.showDiagnostics(diags, nil)
			return ExitError
		}
		if len(l.Tools) > 0 || len(l.Skills) > 0 {
			lock = l
		}
	}
	problems := artifact.Verify(a, lock)
	if len(problems) > 0 {
		fmt.Fprintf(c.Stderr, "Error: %s failed verification:\n", path)
		for _, p := range problems {
			fmt.Fprintf(c.Stderr, "  - %s\n", p.String())
		}
		return ExitError
	}
	against := ""
	if lock != nil {
		against = " and matches " + lockfile.FileName
	}
	fmt.Fprintf(c.Stdout, "%s: OK (%d files; SHA256SUMS verified%s)\n", path, len(a.Files), against)
	return ExitOK
}
