package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/planner"
)

// PlanCommand is "agentform plan": show the capability matrix, every
// denial and the check results before anything is built.
type PlanCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *PlanCommand) Synopsis() string { return "Show what apply would do and who may call what" }

// Help implements cli.Command.
func (c *PlanCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] plan [options]

  Reads the workspace and resolves every tool for real: bundles javascript,
  reads python packages, lists MCP servers' tools, fetches A2A agent cards,
  reads skills. Then computes the effective capability matrix: which agent
  may call which tool, and why. Prints the resource changes, lockfile
  changes, the matrix, capability changes, every denial with its missing
  tags, the check results and a summary line.

  An MCP tool or A2A card that changed since agentform.lock.hcl is an
  error: review the change, then run "agentform lock -upgrade".

  plan never writes the lockfile or anything else in the workspace besides
  its cache (.agentform/cache).

Options:

  -capability-override=STRATEGY:TAGS
                       Simulate one session's override, e.g.
                       extend:fs::write,net or replace:read. Honoured only
                       for agents with capability_policy = "extensible".
  -detailed-exitcode   Exit 0 with no changes, 1 on errors, 2 when there
                       are resource or capability changes.
  -json                Print the JSON plan document on stdout, and nothing
                       else. On errors the document still prints, with
                       "applyable": false and the diagnostics.
  -matrix=MODE         auto (default: a grid for up to 40 tools and 20
                       agents, else a per-agent summary), full, or summary.
  -no-color            Plain ASCII output (yes/no/override), no colour.
  -lockfile=readonly   Make any difference between agentform.lock.hcl and
                       what was resolved an error (for CI).
  -refresh=false       Contact no MCP server or A2A agent: remote tools
                       come from agentform.lock.hcl.
  -resolve-timeout=D   Timeout for each remote operation (default 10s).
  -chdir=DIR           Use DIR as the workspace.
`) + "\n"
}

// Run implements cli.Command.
func (c *PlanCommand) Run(args []string) int {
	fs := c.flagSet("plan")
	jsonOut := fs.Bool("json", false, "JSON output")
	detailed := fs.Bool("detailed-exitcode", false, "detailed exit code")
	overrideFlag := fs.String("capability-override", "", "simulate a session override")
	var rf resolveFlags
	c.addResolveFlags(fs, &rf)
	matrix := fs.String("matrix", "auto", "matrix mode")
	if !c.parseFlags(fs, args, c.Help()) {
		return ExitError
	}
	if err := rf.validate(); err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		return ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "Error: plan takes no arguments; use -chdir=DIR to pick the workspace.\n\n%s", c.Help())
		return ExitError
	}
	mode := render.MatrixMode(*matrix)
	if mode != render.MatrixAuto && mode != render.MatrixFull && mode != render.MatrixSummary {
		fmt.Fprintf(c.Stderr, "Error: -matrix must be auto, full or summary, not %q.\n", *matrix)
		return ExitError
	}
	var override *capability.Override
	if *overrideFlag != "" {
		o, err := capability.ParseOverride(*overrideFlag)
		if err != nil {
			fmt.Fprintf(c.Stderr, "Error: invalid -capability-override: %s.\nWrite it as extend:TAG,TAG or replace:TAG,TAG.\n", err)
			return ExitError
		}
		override = &o
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cfg, diags := c.loadManifest()
	var plan *planner.Plan
	if !diags.HasErrors() {
		ws, lock, d := c.resolveWorkspace(ctx, cfg, rf, !*jsonOut && c.StdoutTTY)
		diags = append(diags, d...)
		if ws != nil {
			plan = planner.New(ctx, cfg, planner.Options{Override: override, Resolution: ws, Lock: lock, LockReadonly: rf.lockMode == "readonly"})
			diags = append(diags, plan.Diagnostics...)
		}
	}

	if *jsonOut {
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(render.PlanJSON(plan, diags)); err != nil {
			fmt.Fprintf(c.Stderr, "Error: writing JSON: %s\n", err)
			return ExitError
		}
		return c.exitCode(plan, diags, *detailed)
	}

	c.showDiagnostics(diags, cfg.Files)
	if plan != nil {
		// Shown even with errors: the matrix helps understand a failed check.
		render.Plan(c.Stdout, plan, render.PlanOptions{Color: c.color(), Matrix: mode})
	}
	return c.exitCode(plan, diags, *detailed)
}

func (c *PlanCommand) exitCode(plan *planner.Plan, diags hcl.Diagnostics, detailed bool) int {
	switch {
	case diags.HasErrors() || plan == nil:
		return ExitError
	case detailed && plan.HasChanges():
		return ExitChanges
	}
	return ExitOK
}
