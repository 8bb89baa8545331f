package provider

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/agentform/agentform/internal/audit"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/planner"
)

// engineDiagnostics converts the engine's diagnostics into Terraform's,
// each on the attribute at (usually "dir": the workspace they are about),
// with the manifest file and line and its source text appended to the
// detail. Summaries are kept as the engine wrote them, so Terraform and the
// CLI report a problem in the same words. Diagnostics for which warn
// returns true are downgraded to warnings; warn may be nil.
//
// Summaries and details quote text from MCP servers and A2A agents (a
// tool's description in a drift error), and Terraform prints diagnostics
// to the terminal as they come: like the CLI, they are passed through
// render.Printable so that an escape sequence, a carriage return or a
// bidirectional override shows as written instead of acting.
func engineDiagnostics(ws *workspacePlan, at path.Path, warn func(*hcl.Diagnostic) bool) diag.Diagnostics {
	var out diag.Diagnostics
	var red *render.Redaction
	if ws.cfg != nil {
		red = audit.Redaction(ws.cfg)
	}
	for _, d := range ws.diags {
		where, detail := at, d.Detail
		if rest, ok := readonlyLockDetail(d); ok {
			where, detail = path.Root("lockfile_mode"), rest
		}
		if d.Summary == summaryNoManifest {
			detail = strings.Replace(detail, cliNoManifestAdvice, providerNoManifestAdvice, 1)
		}
		// The CLI's flags by the provider's attributes: in Terraform,
		// -refresh=false is Terraform's own flag, which means another
		// thing.
		detail = cliFlags.Replace(detail)
		if (d.Summary == planner.SummaryOutDirInSource || d.Summary == planner.SummaryOutDirNotDirectory) && ws.outDirSet {
			where = path.Root(outDirAttr)
		}
		detail = render.Printable(red.Scrub(detail))
		if loc := location(ws, d.Subject, red); loc != "" {
			detail = strings.TrimSpace(detail) + "\n\n" + loc
		}
		if d.Severity == hcl.DiagError && (warn == nil || !warn(d)) {
			out.AddAttributeError(where, render.Printable(red.Scrub(d.Summary)), detail)
		} else {
			out.AddAttributeWarning(where, render.Printable(red.Scrub(d.Summary)), detail)
		}
	}
	if ws.failure != nil {
		out.Append(stateDiagnostic(ws.dir, at, ws.failure))
	}
	return out
}

// summaryNoManifest is the engine's summary for a workspace directory
// without manifest files; cliNoManifestAdvice ends its detail with advice
// for the CLI's command line, which engineDiagnostics replaces by
// providerNoManifestAdvice.
const (
	summaryNoManifest        = "No manifest files"
	cliNoManifestAdvice      = ` Run agentform in a workspace directory, pass -chdir=DIR, or create one with "agentform init".`
	providerNoManifestAdvice = ` Check dir, or create a workspace there with "agentform init".`
)

// cliFlags rewrites the CLI's flags that engine messages name as the
// provider's attributes that do the same.
var cliFlags = strings.NewReplacer(
	"-refresh=false", "refresh = false",
	"-lockfile=readonly", `lockfile_mode = "readonly"`,
	"-resolve-timeout", "resolve_timeout",
	"-lock-timeout", "lock_timeout",
)

// cliReadonlyLock begins the detail of every error the engine reports
// because the lockfile is read-only (summary "Lockfile out of date"),
// in the CLI's words.
const cliReadonlyLock = "-lockfile=readonly: "

// readonlyLockDetail rewrites the detail of a read-only lockfile error in
// the provider's words, for the lockfile_mode attribute that caused it;
// ok is false for any other diagnostic.
func readonlyLockDetail(d *hcl.Diagnostic) (detail string, ok bool) {
	rest, ok := strings.CutPrefix(d.Detail, cliReadonlyLock)
	if !ok || d.Severity != hcl.DiagError {
		return "", false
	}
	return "With lockfile_mode = \"readonly\", " + rest, true
}

// isDrift reports whether d is one of the plan's drift errors: a remote
// definition (an MCP tool, an A2A card) that changed since the lock.
func isDrift(plan *planner.Plan) func(*hcl.Diagnostic) bool {
	return func(d *hcl.Diagnostic) bool { return plan != nil && slices.Contains(plan.Drift, d) }
}

// location renders where a diagnostic points, as the CLI does:
//
//	on /path/to/agent.acl line 12:
//	  12:   capabilities = ["shell"]
//	              ^^^^^^^^^^^^^^^^^^^^^
//
// The source lines are the CLI's snippet (render.SourceLines): the
// manifest's credentials (red, audit.Redaction of the workspace) masked,
// a long line cut to a window around the range, and every character that
// could act on the terminal or reorder what the reviewer reads replaced.
func location(ws *workspacePlan, rng *hcl.Range, red *render.Redaction) string {
	if rng == nil || rng.Filename == "" {
		return ""
	}
	name := rng.Filename
	if !filepath.IsAbs(name) {
		name = filepath.Join(ws.dir, name)
	}
	loc := fmt.Sprintf("on %s line %d:", render.Printable(name), rng.Start.Line)
	if ws.cfg == nil {
		return loc
	}
	lines := render.SourceLines(rng, ws.cfg.Files[rng.Filename], red)
	if lines == "" {
		return loc
	}
	return loc + "\n" + strings.TrimRight(lines, "\n")
}

// stateDiagnostic explains a failure to read the workspace's state
// database (.agentform/state.db) or to apply. The error may quote what a
// remote server sent, so it is made printable like engineDiagnostics.
func stateDiagnostic(dir string, at path.Path, err error) diag.Diagnostic {
	why := render.Printable(err.Error())
	var le *state.LockError
	switch {
	case errors.As(err, &le):
		// The error itself says how long agentform waited.
		return diag.NewAttributeErrorDiagnostic(at, "Workspace State Locked",
			fmt.Sprintf("Another agentform command or Terraform run holds the state lock of %s. Wait for it to finish, then run Terraform again, or raise %s to wait longer.\n\n%s",
				dir, lockTimeoutAdvice, why))
	case errors.Is(err, state.ErrCorrupt):
		return diag.NewAttributeErrorDiagnostic(at, "Corrupt Workspace State",
			fmt.Sprintf("The state database of %s cannot be read. Restore %s from a backup, or remove it to let the next apply rebuild every artifact.\n\n%s",
				dir, filepath.Join(dir, state.DirName, state.FileName), why))
	}
	return diag.NewAttributeErrorDiagnostic(at, "Cannot Apply Workspace",
		fmt.Sprintf("agentform could not plan or apply %s. Fix the cause below and run Terraform again; what was written is consistent and the next apply converges.\n\n%s", dir, why))
}

// denialWarnings warns once per agent about the tools it may not call,
// on the attribute at. Tool names may be an MCP server's, so they are made
// printable.
func denialWarnings(plan *planner.Plan, at path.Path) diag.Diagnostics {
	var out diag.Diagnostics
	byAgent := map[string][]planner.Denial{}
	var agents []string
	for _, d := range plan.Denials() {
		if _, ok := byAgent[d.Agent]; !ok {
			agents = append(agents, d.Agent)
		}
		byAgent[d.Agent] = append(byAgent[d.Agent], d)
	}
	for _, agent := range agents {
		var b strings.Builder
		fmt.Fprintf(&b, "Agent %q may not call %d registered tool(s):\n", agent, len(byAgent[agent]))
		for _, d := range byAgent[agent] {
			fmt.Fprintf(&b, "  - %s: missing %s\n", render.Printable(d.Tool), render.Printable(strings.Join(d.Missing, ", ")))
		}
		b.WriteString("\nIf the agent needs one of them, add the missing tag to its capabilities; otherwise nothing needs doing: denials are how agentform keeps agents away from tools.")
		out.AddAttributeWarning(at, "Agent Denied Tools", b.String())
	}
	return out
}
