package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentform/agentform/internal/render"
)

// ValidateCommand is "agentform validate": a static check of the manifest.
type ValidateCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *ValidateCommand) Synopsis() string { return "Check that the manifest is valid" }

// Help implements cli.Command.
func (c *ValidateCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] validate [options]

  Checks the workspace's manifest (*.acl and *.acl.json files): syntax,
  every block and argument, runtime() and secret() placement, capability
  tags and the rules between blocks, such as two blocks registering the
  same tool name or a check naming an agent that does not exist.

  validate is static: it contacts no server, runs no program and writes
  nothing. Use "agentform plan" to resolve tools for real.

Options:

  -json       Print {"valid": bool, "diagnostics": [...]} on stdout.
  -no-color   Disable colour.
  -chdir=DIR  Use DIR as the workspace.

Exit status: 0 when valid (warnings allowed), 1 when there are errors.
`) + "\n"
}

// Run implements cli.Command.
func (c *ValidateCommand) Run(args []string) int {
	fs := c.flagSet("validate")
	jsonOut := fs.Bool("json", false, "JSON output")
	if !c.parseFlags(fs, args, c.Help()) {
		return ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "Error: validate takes no arguments; use -chdir=DIR to pick the workspace.\n\n%s", c.Help())
		return ExitError
	}
	cfg, diags := c.loadManifest()
	if *jsonOut {
		doc := struct {
			FormatVersion string                  `json:"format_version"`
			Valid         bool                    `json:"valid"`
			ErrorCount    int                     `json:"error_count"`
			WarningCount  int                     `json:"warning_count"`
			Diagnostics   []render.JSONDiagnostic `json:"diagnostics"`
		}{FormatVersion: "1.0", Valid: !diags.HasErrors(), Diagnostics: render.JSONDiagnostics(diags)}
		// No source lines here, but a message may quote a value.
		red := c.redaction(cfg)
		for i := range doc.Diagnostics {
			doc.Diagnostics[i].Summary = red.Scrub(doc.Diagnostics[i].Summary)
			doc.Diagnostics[i].Detail = red.Scrub(doc.Diagnostics[i].Detail)
		}
		doc.ErrorCount = len(diags.Errs())
		doc.WarningCount = len(diags) - doc.ErrorCount
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			fmt.Fprintf(c.Stderr, "Error: writing JSON: %s\n", err)
			return ExitError
		}
		if diags.HasErrors() {
			return ExitError
		}
		return ExitOK
	}
	c.showManifestDiagnostics(diags, cfg)
	if diags.HasErrors() {
		return ExitError
	}
	msg := "Success! The configuration is valid."
	if len(diags) > 0 {
		msg = fmt.Sprintf("Success! The configuration is valid, but there were %d warning(s).", len(diags))
	}
	if c.color() {
		msg = "\x1b[1;32m" + msg + "\x1b[0m"
	}
	fmt.Fprintln(c.Stdout, msg)
	return ExitOK
}
