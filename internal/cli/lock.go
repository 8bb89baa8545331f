package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

// LockCommand is "agentform lock": resolve and write agentform.lock.hcl.
type LockCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *LockCommand) Synopsis() string { return "Resolve tools and write agentform.lock.hcl" }

// Help implements cli.Command.
func (c *LockCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] lock [options]

  Resolves every tool and skill and records what was resolved in
  agentform.lock.hcl: package hashes and bundles for local tools, each MCP
  server's served tools, each A2A agent card. Commit the lockfile.

  Local changes (a javascript or python package, a skill) are always
  written. A remote definition that changed since the lock (an MCP tool's
  description or schema, an A2A card) is refused: review the change that
  "agentform plan" shows, then accept it with -upgrade.

  An mcp or a2a block the lockfile has no entry for, whose server is not
  reached (-refresh=false, or out of reach), leaves the lockfile out of
  date: lock writes what it could resolve, names the block and exits 1.
  A block whose address is a runtime() value left unset is not counted
  (nothing here could pin it), as under plan -lockfile=readonly.

  The state's lock is held (shared, as plan holds it) while the tools
  resolve and the lockfile is written, so that an apply running at the
  same time cannot write its own lockfile over this one.

Options:

  -upgrade             Accept changed MCP tools and A2A cards.
  -lock-timeout=D      How long to wait for the state lock (default 0s).
  -refresh=false       Contact no server: remote entries stay as locked.
  -resolve-timeout=D   Timeout for each remote operation (default 10s).
  -no-color            Disable colour.
  -chdir=DIR           Use DIR as the workspace.
`) + "\n"
}

// Run implements cli.Command.
func (c *LockCommand) Run(args []string) int {
	fs := c.flagSet("lock")
	upgrade := fs.Bool("upgrade", false, "accept remote changes")
	lockTimeout := lockTimeoutVar(fs)
	var rf resolveFlags
	fs.BoolVar(&rf.refresh, "refresh", true, "contact remote servers")
	fs.DurationVar(&rf.timeout, "resolve-timeout", resolve.DefaultTimeout, "timeout")
	rf.lockMode = "update"
	if !c.parseFlags(fs, args, c.Help()) {
		return ExitError
	}
	if fs.NArg() > 0 {
		// Flags after an operand would be read as operands, silently.
		fmt.Fprintf(c.Stderr, "Error: lock takes no arguments; use -chdir=DIR to pick the workspace.\n\n%s", c.Help())
		return ExitError
	}
	if err := rf.validate(); err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		return ExitError
	}
	ctx, stop := c.interruptContext("Stopping the resolution")
	defer stop()

	lockAhead := c.readLockAhead()
	cfg, diags := c.loadManifest()
	if diags.HasErrors() {
		c.showManifestDiagnostics(diags, cfg)
		return ExitError
	}
	// An apply holds the state's lock from before it reads the lockfile
	// until after it writes its own: holding it too (shared, as plan
	// does; a workspace without state has no apply to wait for) keeps an
	// apply's lockfile from replacing this one, an accepted -upgrade with
	// it.
	db, err := c.openState(true, *lockTimeout, "lock")
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	if db != nil {
		defer db.Close()
	}
	ws, lock, d := c.resolveWorkspace(ctx, cfg, rf, c.StdoutTTY, lockAhead)
	diags = append(diags, d...)
	if ws == nil || diags.HasErrors() {
		c.showManifestDiagnostics(diags, cfg)
		fmt.Fprintf(c.Stderr, "%s was not changed.\n", lockfile.FileName)
		return ExitError
	}
	// What the last apply recorded of a block the lockfile has no entry
	// for stands in for it: removing an entry accepts no change.
	var prior *planner.Applied
	if db != nil {
		if prior, err = planner.AppliedFromState(db); err != nil {
			c.showStateError(err)
			return ExitError
		}
	}
	plan := planner.New(ctx, cfg, planner.Options{Resolution: ws, Lock: lock, Applied: prior})
	if *upgrade {
		// Drift errors are what -upgrade accepts; keep the rest.
		for _, d := range plan.Diagnostics {
			if !slices.Contains(plan.Drift, d) {
				diags = append(diags, d)
			}
		}
	} else {
		diags = append(diags, plan.Diagnostics...)
	}
	c.showManifestDiagnostics(diags, cfg)
	if diags.HasErrors() {
		fmt.Fprintf(c.Stderr, "%s was not changed.\n", lockfile.FileName)
		return ExitError
	}
	// A remote block lock could pin, had it reached the server, leaves
	// the lockfile out of date whatever else was written: an error, as
	// under plan -lockfile=readonly, so that a CI gate does not pass.
	var unpinned []string
	for _, name := range slices.Sorted(maps.Keys(ws.Tools)) {
		if ws.Tools[name].Unpinned {
			unpinned = append(unpinned, "tool."+name)
		}
	}
	if len(plan.LockChanges) == 0 && len(unpinned) == 0 {
		fmt.Fprintf(c.Stdout, "%s is up to date.\n", lockfile.FileName)
		return ExitOK
	}
	if len(plan.LockChanges) > 0 {
		if err := lockfile.WriteDir(c.Dir, plan.Lock); err != nil {
			fmt.Fprintf(c.Stderr, "Error: writing %s: %s\n", lockfile.FileName, err)
			return ExitError
		}
		fmt.Fprintf(c.Stdout, "%s updated:\n", lockfile.FileName)
		for _, ch := range plan.LockChanges {
			sym := map[string]string{"add": "+", "remove": "-", "update": "~"}[ch.Action]
			line := fmt.Sprintf("  %s %s", sym, render.PrintableName(ch.Address))
			if ch.Action == lockfile.ActionUpdate && len(ch.Attributes) > 0 {
				line += " (" + strings.Join(ch.Attributes, ", ") + ")"
			}
			fmt.Fprintln(c.Stdout, line)
		}
	}
	if len(unpinned) > 0 {
		whose, it, blocks := "whose server was", "it", "the block's"
		if len(unpinned) > 1 {
			whose, it, blocks = "whose servers were", "they", "the blocks'"
		}
		fmt.Fprintf(c.Stderr, "Error: %s is not up to date: it has no entry for %s, %s not reached (see the warnings above). Run agentform lock where %s can be reached, without -refresh=false and with %s runtime values set, then review and commit %s.\n",
			lockfile.FileName, strings.Join(unpinned, ", "), whose, it, blocks, lockfile.FileName)
		return ExitError
	}
	return ExitOK
}
