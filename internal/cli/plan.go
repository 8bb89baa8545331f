package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/safefile"
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
                       extend:fs::write,net or replace:read (inherit
                       overrides nothing: no change). Honoured only for
                       agents with capability_policy = "extensible".
                       The matrix, denials and checks are the session's,
                       and what it would gain or lose is listed apart
                       from what apply would change. Such a plan cannot
                       be applied or saved; with -json the document names
                       it and is not applyable.
  -detailed-exitcode   Exit 0 with no changes, 1 on errors, 2 when apply
                       would change resources, capabilities or the
                       lockfile, or remove the leftovers of an
                       interrupted apply. A simulated
                       -capability-override is not a change: with it, 2
                       only for changes apply would make to the
                       configuration as written. Its checks are the
                       session's, and one the session fails is an error
                       (1), as any failed check is.
  -lock-timeout=D      How long to wait for a state lock held by an
                       apply (default 0s: fail at once).
  -out-dir=DIR         Plan artifacts into DIR (see apply -help).
  -out=FILE            Save the plan to FILE (a new file, or an earlier
                       plan: any other file is refused); "agentform apply
                       FILE" applies exactly it, and refuses when the state
                       or the inputs changed since. FILE must be outside
                       the source of every tool and skill, which it would
                       change (a plan printed with -json > FILE too).
  -json                Print the JSON plan document on stdout, and nothing
                       else. On errors the document still prints, with
                       "applyable": false and the diagnostics.
  -matrix=MODE         auto (default: a grid for up to 40 tools and 20
                       agents, else a per-agent summary), full, or summary.
  -no-color            Plain ASCII output (yes/no/override), no colour.
  -lockfile=readonly   Make any difference between agentform.lock.hcl and
                       what was resolved an error (for CI), and an mcp or
                       a2a block it has no entry for, unless the block's
                       address is a runtime() value left unset.
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
	out := fs.String("out", "", "save the plan")
	outDir := fs.String("out-dir", "", "artifact directory")
	lockTimeout := lockTimeoutVar(fs)
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
	for _, name := range []string{"out", "out-dir"} {
		if setEmpty(fs, name) {
			fmt.Fprintf(c.Stderr, "Error: -%s needs a value: -%s=PATH.\n", name, name)
			return ExitError
		}
	}
	if *out != "" {
		if what := workspaceFile(c.Dir, c.path(*out)); what != "" {
			fmt.Fprintf(c.Stderr, "Error: -out=%s names %s; write the plan to another file, like -out=agents.plan.\n", *out, what)
			return ExitError
		}
	}
	if *out != "" && notPlanFile(c.path(*out)) {
		fmt.Fprintf(c.Stderr, "Error: -out=%s names a file that is not a saved plan, which the plan would replace; name a new file, like -out=agents.plan.\n", *out)
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
		for _, t := range o.Capabilities {
			if w, _ := capability.ValidateTag(t); w != "" {
				fmt.Fprintf(c.Stderr, "Warning: -capability-override: %s.\n\n", w)
			}
		}
		if *out != "" {
			fmt.Fprintf(c.Stderr, "Error: -capability-override simulates one session and cannot be saved with -out: a saved plan is applied as configured.\n")
			return ExitError
		}
	}

	ctx, stop := c.interruptContext("Stopping the plan")
	defer stop()

	lockAhead := c.readLockAhead()
	cfg, diags := c.loadManifest()
	if *out != "" && !diags.HasErrors() {
		if what, like := sourceOutput(cfg, c.path(*out)); what != "" {
			fmt.Fprintf(c.Stderr, "Error: -out=%s would be %s, whose files agentform hashes and packages: writing the plan there changes what it planned, so agentform apply would always refuse it (the workspace changed since the plan was saved). Write the plan outside the source of every tool and skill%s.\n", *out, what, like)
			return ExitError
		}
	}
	var plan *planner.Plan
	if !diags.HasErrors() {
		db, err := c.openState(true, *lockTimeout, "plan")
		var prior *planner.Applied
		if err == nil {
			prior, err = planner.AppliedFromState(db)
		}
		if db != nil {
			db.Close()
		}
		if err != nil && *jsonOut {
			// The document is printed even so, with the reason.
			return c.writePlanJSON(nil, append(diags, stateDiagnostic(err)), c.redaction(cfg), *detailed, *overrideFlag)
		}
		if err != nil {
			c.showStateError(err)
			return ExitError
		}
		rf.cacheLater = true
		ws, lock, d := c.resolveWorkspace(ctx, cfg, rf, !*jsonOut && c.StdoutTTY, lockAhead)
		cacheWritten := writeCacheInBackground(ws)
		defer cacheWritten()
		diags = append(diags, d...)
		// An interrupted resolution plans nothing: a matrix of the tools
		// resolved so far would be shown as if it were the plan.
		if ws != nil && ctx.Err() == nil {
			plan = planner.New(ctx, cfg, planner.Options{Override: override, Resolution: ws, Lock: lock, LockReadonly: rf.lockMode == "readonly", Applied: prior, OutDir: *outDir})
		}
		diags = append(diags, cacheWritten()...)
		if plan != nil {
			diags = append(diags, plan.Diagnostics...)
		}
	}
	if *out != "" && plan != nil && !diags.HasErrors() {
		if err := c.savePlan(*out, plan, diags); err != nil {
			fmt.Fprintf(c.Stderr, "Error: saving the plan: %s.\n", err)
			return ExitError
		}
	}

	if *jsonOut {
		return c.writePlanJSON(plan, diags, c.redaction(cfg), *detailed, *overrideFlag)
	}

	if plan != nil {
		// Shown even with errors: the matrix helps understand a failed check.
		render.Plan(c.Stdout, plan, render.PlanOptions{Color: c.color(), Matrix: mode, Errors: len(diags.Errs()), Redaction: c.redaction(cfg)})
	}
	// Last, as Terraform does: the errors (and warnings) are what is read.
	if plan != nil && len(diags) > 0 {
		fmt.Fprintln(c.Stderr)
	}
	c.showManifestDiagnostics(diags, cfg)
	if *out != "" && plan != nil && !diags.HasErrors() {
		fmt.Fprintf(c.Stdout, "\nSaved the plan to: %s\n\nTo perform exactly these actions, run:\n  agentform apply %q\n", *out, *out)
	}
	return c.exitCode(plan, diags, *detailed)
}

// writePlanJSON prints the JSON plan document and returns the exit code.
// A plan that simulates a session override says so, and is not
// applyable: apply applies the configuration as written.
func (c *PlanCommand) writePlanJSON(plan *planner.Plan, diags hcl.Diagnostics, red *render.Redaction, detailed bool, override string) int {
	doc := render.PlanJSON(plan, diags, red)
	if override != "" {
		doc.CapabilityOverride, doc.Applyable = override, false
	}
	enc := json.NewEncoder(c.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		fmt.Fprintf(c.Stderr, "Error: writing JSON: %s\n", err)
		return ExitError
	}
	return c.exitCode(plan, diags, detailed)
}

// savePlan writes the plan to path with its JSON document and plain text.
func (c *PlanCommand) savePlan(path string, plan *planner.Plan, diags hcl.Diagnostics) error {
	red := c.redaction(plan.Config())
	pd := render.PlanJSON(plan, diags, red)
	doc, err := json.Marshal(pd)
	if err != nil {
		return err
	}
	var text bytes.Buffer
	render.Plan(&text, plan, render.PlanOptions{Matrix: render.MatrixAuto, Redaction: red})
	return plan.Save(doc, text.String()).WriteFile(c.path(path))
}

// notPlanFile reports whether path is a file with something in it other
// than a saved plan (a plan's JSON starts with its format_version): the
// manifest, a tool's source or the lockfile, which -out would replace.
// A missing or empty file, or an earlier plan, may be written over; what
// is no regular file is refused when the plan is written.
func notPlanFile(path string) bool {
	// Not os.Open, which waits for a writer on a named pipe.
	f, err := safefile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.Size() == 0 {
		return false
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = bytes.TrimLeft(head[:n], " \t\r\n")
	return !bytes.HasPrefix(head, []byte("{")) || !bytes.Contains(head, []byte(`"format_version"`))
}

// exitCode is 1 on errors and, with -detailed-exitcode, 2 when apply
// would change something. What a simulated session override would gain or
// lose is not such a change (plan.Session.Changes are not
// plan.CapabilityChanges), though its document is not applyable; a check
// the simulated session fails is an error like any failed check.
func (c *PlanCommand) exitCode(plan *planner.Plan, diags hcl.Diagnostics, detailed bool) int {
	switch {
	case diags.HasErrors() || plan == nil:
		return ExitError
	case detailed && (plan.HasChanges() || len(plan.LockChanges) > 0 || len(plan.Leftovers) > 0):
		return ExitChanges
	}
	return ExitOK
}
