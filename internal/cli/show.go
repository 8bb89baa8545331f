package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/planner"
)

// ShowCommand is "agentform show": a saved plan or the current state.
type ShowCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *ShowCommand) Synopsis() string { return "Show a saved plan or the current state" }

// Help implements cli.Command.
func (c *ShowCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] show [options] [PLANFILE]

  With PLANFILE (from "agentform plan -out"), shows that plan; with -json,
  its JSON plan document. Without, shows the current state: every address
  as applied, the artifacts and the applied capability matrix.

Options:

  -json            JSON output.
  -lock-timeout=D  How long to wait for the state lock (default 0s).
  -no-color        Disable colour.
  -chdir=DIR       Use DIR as the workspace.
`) + "\n"
}

// Run implements cli.Command.
func (c *ShowCommand) Run(args []string) int {
	fs := c.flagSet("show")
	jsonOut := fs.Bool("json", false, "JSON output")
	timeout := lockTimeoutVar(fs)
	if !c.parseFlagsAnywhere(fs, args, c.Help()) {
		return ExitError
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(c.Stderr, "Error: show takes at most one plan file.\n\n%s", c.Help())
		return ExitError
	}
	if fs.NArg() == 1 {
		saved, err := planner.ReadSaved(c.path(fs.Arg(0)))
		if err != nil {
			fmt.Fprintf(c.Stderr, "Error: reading the saved plan: %s.\n", err)
			return ExitError
		}
		if *jsonOut {
			// The file nests the document, indented one level deeper;
			// printed as plan -json prints it.
			var doc bytes.Buffer
			if err := json.Indent(&doc, saved.Document, "", "  "); err != nil {
				fmt.Fprintf(c.Stderr, "Error: reading the saved plan: its JSON plan document is damaged: %s.\n", err)
				return ExitError
			}
			fmt.Fprintln(c.Stdout, doc.String())
			return ExitOK
		}
		// The text was written without color; a plan file from elsewhere
		// (a CI artifact) cannot drive the terminal through it.
		fmt.Fprint(c.Stdout, render.Printable(saved.Text))
		return ExitOK
	}
	db, err := c.openState(true, *timeout, "show")
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	prior, err := planner.AppliedFromState(db)
	if db != nil {
		defer db.Close()
	}
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	if *jsonOut {
		// Each resource as state show -json prints it (snake_case keys,
		// the lock entry), under its address.
		resources := map[string]state.Resource{}
		if db != nil {
			records, err := db.Resources()
			if err != nil {
				c.showStateError(err)
				return ExitError
			}
			for _, r := range records {
				r.Attributes = planner.StoredAttributes(r.Type, r.Attributes)
				resources[r.Address] = r
			}
		}
		doc := map[string]any{"format_version": "1.0", "lineage": prior.Lineage, "serial": prior.Serial, "resources": resources, "matrix": prior.Matrix}
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(doc)
		return ExitOK
	}
	if db == nil || len(prior.Resources) == 0 {
		fmt.Fprintln(c.Stdout, "No state: nothing has been applied in this workspace yet.")
		return ExitOK
	}
	fmt.Fprintf(c.Stdout, "State serial %d (lineage %s)\n\n", prior.Serial, prior.Lineage)
	addrs := make([]string, 0, len(prior.Resources))
	for a := range prior.Resources {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, a := range addrs {
		r := prior.Resources[a]
		line := fmt.Sprintf("  %s (%s)", a, r.Kind)
		if r.Artifact != nil {
			line += fmt.Sprintf(": %s %s", r.Artifact.Path, r.Artifact.SHA256)
		}
		fmt.Fprintln(c.Stdout, line)
	}
	fmt.Fprintln(c.Stdout, "\nApplied capability matrix:")
	agents := make([]string, 0, len(prior.Matrix))
	for a := range prior.Matrix {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	for _, a := range agents {
		if len(prior.Matrix[a]) == 0 {
			fmt.Fprintf(c.Stdout, "  %s may call no tool\n", a)
			continue
		}
		fmt.Fprintf(c.Stdout, "  %s may call: %s\n", a, strings.Join(prior.Matrix[a], ", "))
	}
	return ExitOK
}
