package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/agentform/agentform/internal/apply"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/planner"
)

// ApplyCommand is "agentform apply": build the artifacts, write the
// lockfile and record the result in state.
type ApplyCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *ApplyCommand) Synopsis() string { return "Build agent artifacts and record them in state" }

// Help implements cli.Command.
func (c *ApplyCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] apply [options] [PLANFILE]

  Plans, shows the plan and asks for confirmation, then builds each changed
  agent's artifact (dist/<agent>.agent.tgz, byte-for-byte reproducible),
  writes agentform.lock.hcl and records everything in .agentform/state.db.

  With PLANFILE (from "agentform plan -out"), applies exactly that plan
  without asking, and refuses it when the state moved or the inputs
  (a block, what a tool resolves to, agentform.lock.hcl's entries)
  changed since it was made, when apply would now do anything the plan
  does not show (an artifact removed or changed on disk since), or when
  another version of agentform made it.

  The order survives a crash: artifacts are written to temporary files and
  renamed into place, then the lockfile, then state in one transaction,
  and only then are artifacts of removed agents (or left behind by a new
  -out-dir) deleted. An artifact written to a path state does not own yet
  is built first and its SHA-256 recorded in state before it is renamed
  into place (the old artifacts of a removal are recorded with the commit),
  so a file an interrupted apply left that nothing records is listed by
  the next plan and removed by the next apply. Only a file that still
  holds exactly the recorded bytes, and is not an artifact state owns or
  the apply writes (compared by file identity, so a symbolic link to the
  artifact directory names the same files), is ever removed. Ctrl-C (or
  SIGTERM, SIGHUP) finishes the current step and stops (at the confirmation
  prompt, it cancels the apply); a second one does not wait: it kills
  every process agentform started and exits at once with status 1,
  leaving what a killed apply leaves, which the next plan lists and the
  next apply finishes.

Options:

  -auto-approve        Skip the confirmation.
  -lock-timeout=D      How long to wait for the state lock (default 0s).
  -lockfile=readonly   Refuse any lockfile difference, and a missing entry
                       for an mcp or a2a block, as plan does; never write
                       the lockfile.
  -out-dir=DIR         Artifact directory, relative to the workspace. By
                       default artifacts stay where they were applied
                       (dist for the first apply); a new directory moves
                       them. A saved plan applies to the directory it was
                       planned with; -out-dir with one must be the same.
                       A directory inside the source of a tool or skill
                       (which agentform hashes), or a file where the
                       directory would be, is an error. Give each
                       workspace its own: artifacts are named by agent
                       alone, so two workspaces sharing one overwrite
                       each other's artifact of an agent both name.
  -refresh=false       Contact no MCP server or A2A agent.
  -resolve-timeout=D   Timeout for each remote operation (default 10s).
  -no-color            Disable colour.
  -chdir=DIR           Use DIR as the workspace.
`) + "\n"
}

// Run implements cli.Command.
func (c *ApplyCommand) Run(args []string) int {
	fs := c.flagSet("apply")
	autoApprove := fs.Bool("auto-approve", false, "skip confirmation")
	lockTimeout := lockTimeoutVar(fs)
	outDir := fs.String("out-dir", "", "artifact directory")
	var rf resolveFlags
	c.addResolveFlags(fs, &rf)
	if !c.parseFlagsAnywhere(fs, args, c.Help()) {
		return ExitError
	}
	if err := rf.validate(); err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		return ExitError
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(c.Stderr, "Error: apply takes at most one plan file.\n\n%s", c.Help())
		return ExitError
	}
	if setEmpty(fs, "out-dir") {
		fmt.Fprintln(c.Stderr, "Error: -out-dir needs a value: -out-dir=PATH.")
		return ExitError
	}
	var saved *planner.Saved
	if fs.NArg() == 1 {
		var err error
		if saved, err = planner.ReadSaved(c.path(fs.Arg(0))); err != nil {
			fmt.Fprintf(c.Stderr, "Error: reading the saved plan: %s.\n", err)
			return ExitError
		}
		// A saved plan writes where it said; an -out-dir given again must
		// agree with it (CheckSaved says so when it does not).
		outDirSet := false
		fs.Visit(func(f *flag.Flag) { outDirSet = outDirSet || f.Name == "out-dir" })
		if !outDirSet {
			*outDir = saved.OutDir
		}
	}
	ctx, stop := c.interruptContext("Stopping the apply")
	defer stop()

	lockAhead := c.readLockAhead()
	cfg, diags := c.loadManifest()
	if diags.HasErrors() {
		c.showManifestDiagnostics(diags, cfg)
		return ExitError
	}
	db, err := c.openState(false, *lockTimeout, "apply")
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	defer db.Close()
	prior, err := planner.AppliedFromState(db)
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	rf.cacheLater = true
	ws, lock, d := c.resolveWorkspace(ctx, cfg, rf, c.StdoutTTY, lockAhead)
	cacheWritten := writeCacheInBackground(ws)
	defer cacheWritten()
	diags = append(diags, d...)
	if ws == nil || diags.HasErrors() {
		c.showManifestDiagnostics(append(diags, cacheWritten()...), cfg)
		return ExitError
	}
	plan := planner.New(ctx, cfg, planner.Options{Resolution: ws, Lock: lock, LockReadonly: rf.lockMode == "readonly", Applied: prior, OutDir: *outDir, EncodeLock: true})
	diags = append(diags, cacheWritten()...)
	diags = append(diags, plan.Diagnostics...)
	if diags.HasErrors() {
		c.showManifestDiagnostics(diags, cfg)
		return ExitError
	}
	if saved != nil {
		c.showManifestDiagnostics(diags, cfg)
		if err := plan.CheckSaved(saved); err != nil {
			fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
			if what, instead := sourceOutput(cfg, c.path(fs.Arg(0))); what != "" && errors.Is(err, planner.ErrPlanInputsChanged) {
				like := ""
				if instead != "" {
					like = fmt.Sprintf(", like -out=%s", instead)
				}
				fmt.Fprintf(c.Stderr, "\nThe saved plan %s is itself %s, which it therefore changed. Plan again, and save the plan outside the source of every tool and skill%s.\n", fs.Arg(0), what, like)
			}
			return ExitError
		}
		// The inputs are the same; what apply would do must be too: an
		// artifact changed on disk since (drift) or a document edited
		// by hand would otherwise apply what the saved plan does not show.
		if what := savedChangesDiffer(saved.Document, render.PlanJSON(plan, diags, c.redaction(cfg))); what != "" {
			fmt.Fprintf(c.Stderr, "Error: %s: %s. Run agentform plan again to see what apply would do.\n", planner.ErrStalePlan, what)
			return ExitError
		}
	} else {
		// The plan, then its warnings, then the question, as Terraform
		// and agentform plan show them.
		render.Plan(c.Stdout, plan, render.PlanOptions{Color: c.color(), Redaction: c.redaction(cfg)})
		if len(diags) > 0 {
			fmt.Fprintln(c.Stderr)
		}
		c.showManifestDiagnostics(diags, cfg)
	}
	// A lockfile that differs from the one the plan implies (deleted,
	// edited, with stale entries) is written even when no artifact
	// changes: the plan says apply writes it.
	if !plan.HasChanges() && len(plan.LockChanges) == 0 && len(plan.Leftovers) == 0 {
		// With nothing to apply, still clear what a killed apply left.
		apply.RemoveStaleTemps(c.Dir, plan)
		if saved != nil {
			fmt.Fprintln(c.Stdout, render.SummaryLine(plan))
		}
		return ExitOK
	}
	if saved == nil && !*autoApprove && !c.confirm(ctx) {
		fmt.Fprintln(c.Stderr, "Apply cancelled.")
		return ExitError
	}

	applyOpts := apply.Options{
		Dir: c.Dir, WriteLock: rf.lockMode != "readonly",
		Progress: func(format string, args ...any) { fmt.Fprintf(c.Stdout, format+"\n", args...) },
	}
	if !plan.HasChanges() && len(plan.LockChanges) == 0 {
		// Only the leftovers of an interrupted apply: they go, and state
		// is not committed (no resource changed).
		apply.RemoveStaleTemps(c.Dir, plan)
		removed, err := apply.RemoveLeftovers(db, plan, applyOpts)
		if err != nil {
			fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
			return ExitError
		}
		msg := fmt.Sprintf("Apply complete! Removed %d %s left by an interrupted apply.", len(removed), plural(len(removed), "file", "files"))
		if c.color() {
			msg = "\x1b[1;32m" + msg + "\x1b[0m"
		}
		fmt.Fprintf(c.Stdout, "\n%s\n", msg)
		return ExitOK
	}

	result, err := apply.Apply(ctx, db, plan, applyOpts)
	if errors.Is(err, apply.ErrInterrupted) {
		fmt.Fprintf(c.Stderr, "Error: %s.\nWhat was written is consistent; the next plan shows what is left and the next apply finishes it.\n", err)
		return ExitError
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		return ExitError
	}
	var granted, revoked int
	for _, cc := range plan.CapabilityChanges {
		if cc.Change == "granted" {
			granted++
		} else {
			revoked++
		}
	}
	msg := fmt.Sprintf("Apply complete! Resources: %d added, %d changed, %d destroyed. Capabilities: %d granted, %d revoked.",
		result.Added, result.Changed, result.Destroyed, granted, revoked)
	if c.color() {
		msg = "\x1b[1;32m" + msg + "\x1b[0m"
	}
	fmt.Fprintf(c.Stdout, "\n%s\n", msg)
	return ExitOK
}

// confirm asks for "yes" on stdin, as Terraform does. An interrupt
// (ctx ending) while it waits is a no: the apply stops at once rather
// than wait for a line the user is not going to type.
func (c *ApplyCommand) confirm(ctx context.Context) bool {
	fmt.Fprint(c.Stdout, "\nDo you want to perform these actions?\n  agentform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ")
	if c.Stdin == nil {
		fmt.Fprintln(c.Stdout)
		return false
	}
	answer := make(chan string, 1)
	go func() {
		// Left reading when ctx ends first: agentform exits soon after.
		line, _ := bufio.NewReader(c.Stdin).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		fmt.Fprintln(c.Stdout)
		return strings.TrimSpace(line) == "yes"
	case <-ctx.Done():
		fmt.Fprintln(c.Stdout)
		return false
	}
}

// plural picks the singular or plural form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// savedChangesDiffer compares what a saved plan's document shows apply
// doing (its resource actions, capability changes, lockfile changes and
// leftover artifacts) with what the fresh plan would do, and says what
// apply would now do that the plan does not show (at most three, then a
// count), or "". Less than it shows is no difference: what is already
// done (agentform lock wrote the entry the plan would write) is not done
// again. A document that does not read as a plan document is one.
func savedChangesDiffer(document json.RawMessage, fresh *render.PlanDocument) string {
	var saved render.PlanDocument
	if err := json.Unmarshal(document, &saved); err != nil {
		return "its plan document cannot be read"
	}
	changes := func(d *render.PlanDocument) []string {
		var out []string
		for _, r := range d.ResourceChanges {
			if len(r.Actions) == 1 && r.Actions[0] == planner.ActionNoOp {
				continue
			}
			out = append(out, strings.Join(r.Actions, " and ")+" "+r.Address)
		}
		for _, c := range d.CapabilityChanges {
			verb := map[string]string{"granted": "grant", "revoked": "revoke"}[c.Change]
			if verb == "" {
				verb = "change"
			}
			out = append(out, fmt.Sprintf("%s %s → %s", verb, c.Agent, c.Tool))
		}
		for _, c := range d.LockChanges {
			out = append(out, fmt.Sprintf("%s the lock entry of %s", c.Action, c.Address))
		}
		for _, a := range d.LeftoverArtifacts {
			out = append(out, "remove the leftover "+a)
		}
		slices.Sort(out)
		return out
	}
	before, now := changes(&saved), changes(fresh)
	var diffs []string
	for _, c := range now {
		if _, found := slices.BinarySearch(before, c); !found {
			diffs = append(diffs, "apply would now "+c+", which the plan does not show")
		}
	}
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("and %d more", len(diffs)-3))
	}
	return strings.Join(diffs, "; ")
}
