package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/agentform/agentform/internal/version"
)

// VersionCommand is "agentform version".
type VersionCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *VersionCommand) Synopsis() string { return "Show the agentform version" }

// Help implements cli.Command.
func (c *VersionCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform version [options]

  Shows the agentform version and the platform it was built for.

Options:

  -json       Print the version as JSON.
  -no-color   Accepted, as by every command; the output has no colour.
  -chdir=DIR  Accepted, as by every command; the version does not depend
              on the workspace.
`) + "\n"
}

// Run implements cli.Command.
func (c *VersionCommand) Run(args []string) int {
	fs := c.flagSet("version")
	jsonOut := fs.Bool("json", false, "JSON output")
	if !c.parseFlags(fs, args, c.Help()) {
		return ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "Error: version takes no arguments.\n\n%s", c.Help())
		return ExitError
	}
	platform := runtime.GOOS + "_" + runtime.GOARCH
	if *jsonOut {
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]string{"agentform_version": version.Version, "platform": platform, "go_version": runtime.Version()})
		return ExitOK
	}
	fmt.Fprintf(c.Stdout, "agentform v%s\non %s\n", version.Version, platform)
	return ExitOK
}
