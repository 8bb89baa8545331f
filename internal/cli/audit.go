package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/audit"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

// Exit codes of audit: usage errors are 2 so a CI gate can tell a broken
// invocation from a failed audit.
const exitUsage = 2

// AuditCommand is "agentform audit": findings in six formats, and gates.
type AuditCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *AuditCommand) Synopsis() string {
	return "Report capability, supply-chain and sandbox findings"
}

// Help implements cli.Command.
func (c *AuditCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] audit [options]

  Plans the workspace and reports findings with stable rule IDs: AF1xx
  capability (denials, override reach, over-broad grants, delegation),
  AF2xx supply chain (unpinned remote tools, lock drift, destructive MCP
  tools behind broad tags), AF3xx sandbox and secrets, AF4xx hygiene.
  docs/rules/<ID>.md explains each rule and how to fix or waive it.

  waiver "AF105" { target = "agent.x", reason = "...", expires = "2027-03-31" }
  blocks accept findings; waived findings are counted apart, shown with
  -show-waived, and emitted as SARIF suppressions.

Options:

  -format=FORMAT     table (default), json, sarif, markdown, html or junit.
  -out=FILE          Write the report to FILE instead of stdout. When the
                     audit cannot see the whole workspace, the report says
                     so and lists the errors; when the workspace cannot be
                     read, FILE still gets a report, saying the audit failed.
                     A manifest file (or a new *.acl in the workspace), the
                     lockfile, a file under .agentform/, or one inside the
                     source of a tool or skill is refused as FILE.
  -fail-on=LEVEL     Exit 1 when an unwaived finding is at LEVEL or above:
                     error (default), warning, note, or none.
  -show-waived       List waived findings too.
  -against=state     "No new access" gate: fail when any agent can call a
                     tool it could not call at the last apply.
  -baseline=FILE     The same gate against a previous audit -format=json.
  -refresh=false     Contact no MCP server or A2A agent.
  -resolve-timeout=D Timeout for each remote operation (default 10s).
  -lockfile=readonly Also fail when the resolved tools differ from the
                     lockfile, as plan -lockfile=readonly does (audit
                     never writes the lockfile either way).
  -lock-timeout=D    How long to wait for the state lock (default 0s).
  -no-color          Disable colour.
  -chdir=DIR         Use DIR as the workspace.

Exit status: 0 when the audit passes, 1 when a finding at or above
-fail-on is unwaived or the gate fails, or when the workspace cannot be
read or wholly planned (a failed check is an AF110 finding; other plan
errors are printed on standard error, listed in the report, which then
covers only what could be planned, and fail the audit whatever -fail-on
says), 2 for usage errors.
`) + "\n"
}

var auditFormats = []string{"table", "json", "sarif", "markdown", "html", "junit"}

// Run implements cli.Command.
func (c *AuditCommand) Run(args []string) int {
	fs := c.flagSet("audit")
	format := fs.String("format", "table", "output format")
	out := fs.String("out", "", "output file")
	failOn := fs.String("fail-on", "error", "failure level")
	showWaived := fs.Bool("show-waived", false, "list waived findings")
	against := fs.String("against", "", "gate against state")
	baseline := fs.String("baseline", "", "gate against a previous report")
	lockTimeout := lockTimeoutVar(fs)
	var rf resolveFlags
	c.addResolveFlags(fs, &rf)
	if !c.parseFlags(fs, args, c.Help()) {
		return exitUsage
	}
	if *out != "" {
		if what := workspaceFile(c.Dir, c.path(*out)); what != "" {
			// Checked before anything is written: usage below writes a
			// "not run" report to -out.
			fmt.Fprintf(c.Stderr, "Error: -out=%s names %s; write the report to another file, like -out=audit.txt.\n", *out, what)
			return exitUsage
		}
	}
	if *out != "" {
		if fi, err := os.Stat(c.path(*out)); err == nil && fi.IsDir() {
			// Checked before anything is planned (and before usage below
			// would try to write there).
			fmt.Fprintf(c.Stderr, "Error: -out=%s is a directory; name a file, like -out=%s.\n", *out, filepath.Join(*out, "audit."+auditExt(*format)))
			return exitUsage
		}
	}
	usage := func(msg string, a ...any) int {
		text := fmt.Sprintf(msg, a...)
		fmt.Fprintf(c.Stderr, "Error: %s\n", text)
		// A report -out names is replaced by one that says the audit did
		// not run, as when the workspace does not load: a CI step that
		// uploads it afterwards never uploads the previous one. (Without
		// a known format there is nothing to write it in.) Not inside the
		// source of a tool or skill, which the report would change: the
		// audit refuses such a path once the workspace loads (below).
		if *out != "" && slices.Contains(auditFormats, *format) {
			if cfg, _ := manifest.Load(c.Dir); cfg != nil {
				if what, _ := sourceOutput(cfg, c.path(*out)); what != "" {
					fmt.Fprintf(c.Stderr, "No report written: -out=%s would be %s, whose files agentform hashes and packages.\n", *out, what)
					return exitUsage
				}
			}
			w := reportWriter{c: c, format: *format, out: *out}
			w.write(audit.Failed(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Audit not run", Detail: text}}, nil))
		}
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		code := usage("audit takes no arguments; use -chdir=DIR to pick the workspace.")
		fmt.Fprintf(c.Stderr, "\n%s", c.Help())
		return code
	case setEmpty(fs, "out"):
		return usage("-out needs a value: -out=FILE.")
	case setEmpty(fs, "against"), setEmpty(fs, "baseline"):
		// An unset variable (-baseline=$BASELINE) must not drop the gate.
		return usage("-against and -baseline need a value: -against=state or -baseline=FILE.")
	case !slices.Contains(auditFormats, *format):
		return usage("-format must be one of %s, not %q.", strings.Join(auditFormats, ", "), *format)
	case *failOn != "none" && audit.Severity(*failOn).Rank() == 0:
		return usage("-fail-on must be error, warning, note or none, not %q.", *failOn)
	case *against != "" && *against != "state":
		return usage("-against takes only \"state\" (use -baseline=FILE for a previous report).")
	case *against != "" && *baseline != "":
		return usage("use either -against=state or -baseline=FILE, not both.")
	}
	if err := rf.validate(); err != nil {
		return usage("%s.", err)
	}
	var base *audit.Report
	if *baseline != "" {
		var err error
		if base, err = audit.ReadBaseline(c.path(*baseline)); err != nil {
			return usage("%s.", err)
		}
	}
	ctx, stop := c.interruptContext("Stopping the audit")
	defer stop()

	cfg, plan, prior, diags, err := c.planForReport(ctx, rf, *lockTimeout, "audit")
	if *out != "" && cfg != nil {
		if what, like := sourceOutput(cfg, c.path(*out)); what != "" {
			fmt.Fprintf(c.Stderr, "Error: -out=%s would be %s, whose files agentform hashes and packages: writing the report there changes that source, so the next plan would find it changed and apply would package the report. Write the report outside the source of every tool and skill%s.\n", *out, what, like)
			return exitUsage
		}
	}
	w := reportWriter{c: c, cfg: cfg, format: *format, out: *out, showWaived: *showWaived}
	if err != nil {
		c.showStateError(err)
		w.write(audit.Failed(hcl.Diagnostics{stateDiagnostic(err)}, c.redaction(cfg)))
		return ExitError
	}
	if plan == nil {
		c.showManifestDiagnostics(diags, cfg)
		w.write(audit.Failed(diags, c.redaction(cfg)))
		return ExitError
	}
	// On standard error whatever the format: the report is on standard
	// output or in -out.
	c.showManifestDiagnostics(diags, cfg)
	report := audit.Run(plan, audit.Options{})
	// Errors that no finding reports (a tool that cannot be resolved, a
	// lockfile -lockfile=readonly refuses) mean the audit did not see the
	// whole workspace: the report says so, and the audit fails whatever
	// -fail-on says, so that it is never greener than the plan; failed
	// checks and lock drift are findings. Before the gate, which leaves
	// out what an incomplete audit could not resolve.
	unreported := unreportedErrors(plan, diags)
	report.MarkIncomplete(unreported)
	switch {
	case *against == "state":
		audit.CompareState(report, prior.Matrix, prior.Extensible(), prior.RuntimeDependent(), prior.Tools)
	case base != nil:
		audit.CompareBaseline(report, base, *baseline)
	}
	if !w.write(report) {
		return ExitError
	}
	if n := len(unreported); n > 0 {
		what := "an error"
		if n > 1 {
			what = fmt.Sprintf("%d errors", n)
		}
		fmt.Fprintf(c.Stderr, "Error: the audit is incomplete: %s above kept agentform from planning the whole workspace; the report covers only what it could plan.\n", what)
		return ExitError
	}
	if report.Gate != nil && !report.Gate.Pass {
		return ExitError
	}
	if *failOn != "none" {
		level := audit.Severity(*failOn).Rank()
		for _, f := range report.Findings {
			if f.Severity.Rank() >= level {
				return ExitError
			}
		}
	}
	return ExitOK
}

// workspaceFile names what path is when it is, or would be, one of the
// workspace's own files, which an output file must not replace or
// become: a manifest file (an existing one, or a new *.acl or *.acl.json
// in the workspace directory, which the workspace would load), the
// lockfile (also where there is none yet), or anything under .agentform/
// (the state and runtime databases, the resolution cache). It returns ""
// for any other path.
func workspaceFile(dir, path string) string {
	if target, err := os.Stat(path); err == nil {
		names, _ := manifest.ManifestFiles(dir)
		for _, name := range names {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && os.SameFile(fi, target) {
				return "the manifest file " + name
			}
		}
		if fi, err := os.Stat(filepath.Join(dir, lockfile.FileName)); err == nil && os.SameFile(fi, target) {
			return "the lockfile " + lockfile.FileName
		}
	}
	// By where it is: the directory it would be written in, as the
	// system finds it.
	parent, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return ""
	}
	ws, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	base := filepath.Base(path)
	if sameFile(parent, ws) {
		switch {
		case base == lockfile.FileName:
			return "the lockfile " + lockfile.FileName
		case strings.HasSuffix(base, manifest.SuffixNative) || strings.HasSuffix(base, manifest.SuffixJSON):
			return "a manifest file (" + base + ": the workspace would load it)"
		}
	}
	for d := parent; ; d = filepath.Dir(d) {
		if filepath.Base(d) == state.DirName && sameFile(filepath.Dir(d), ws) {
			return "a file of agentform's own in " + state.DirName + "/ (state, runtime records, cache)"
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// sourceOutput says, when an output file written at path (absolute, or
// relative to the workspace) would be a file of the source of a tool or
// skill block that the plan hashes (planner.SourceHolding), which block
// that is, where its source is set, and, in like (", like -out=PATH"), a
// path for the file outside every such source; what is "" otherwise. Such
// a file changes the source's hash and so the next plan, and an apply
// would package it.
func sourceOutput(cfg *manifest.Config, path string) (what, like string) {
	block, src, ok := planner.SourceHolding(cfg, path)
	if !ok {
		return "", ""
	}
	what = fmt.Sprintf("a file of the source of %s (source = %q, %s:%d)", block, src.Value, src.Range.Filename, src.Range.Start.Line)
	base := filepath.Base(path)
	for _, p := range []string{base, filepath.Join("..", base)} {
		if _, _, held := planner.SourceHolding(cfg, p); held {
			continue
		}
		if info, err := os.Stat(filepath.Dir(filepath.Join(cfg.Dir, p))); err == nil && info.IsDir() {
			return what, ", like -out=" + filepath.ToSlash(p)
		}
	}
	return what, ""
}

// reportWriter writes an audit report where audit -format and -out say.
type reportWriter struct {
	c          *AuditCommand
	cfg        *manifest.Config
	format     string
	out        string
	showWaived bool
}

// write renders report and writes it to -out (atomically: a reader sees
// the previous file or the new one, whole) or to standard output; ok is
// false, with the error on standard error, when it could not.
func (w reportWriter) write(report *audit.Report) (ok bool) {
	c := w.c
	source := map[string][]byte{}
	if w.cfg != nil {
		for name, f := range w.cfg.Files {
			if f != nil {
				source[name] = f.Bytes
			}
		}
	}
	opts := audit.WriteOptions{Color: w.out == "" && c.color(), ShowWaived: w.showWaived, Source: source, RepoPath: repoPath(c.Dir)}
	var buf bytes.Buffer
	if err := audit.Write(&buf, report, w.format, opts); err != nil {
		fmt.Fprintf(c.Stderr, "Error: writing the %s report: %s.\n", w.format, err)
		return false
	}
	if w.out == "" {
		_, _ = c.Stdout.Write(buf.Bytes())
		return true
	}
	if err := writeFileAtomic(c.path(w.out), buf.Bytes()); err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		return false
	}
	if w.format != "table" {
		fmt.Fprintf(c.Stdout, "Wrote the %s report to %s.\n", w.format, w.out)
	}
	return true
}

// unreportedErrors are the errors of diags that no finding of the audit
// reports: all but lock drift (AF202) and failed checks (AF110).
func unreportedErrors(plan *planner.Plan, diags hcl.Diagnostics) hcl.Diagnostics {
	reported := map[*hcl.Diagnostic]bool{}
	for _, d := range plan.Drift {
		reported[d] = true
	}
	for _, ch := range plan.Checks {
		for _, d := range ch.Diagnostics {
			reported[d] = true
		}
	}
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError && !reported[d] {
			out = append(out, d)
		}
	}
	return out
}

// repoPath is dir's slash-separated path from the root of the repository
// holding it (resolve.ProjectRoot), or "" when dir is that root or in no
// repository.
func repoPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, err := filepath.Rel(resolve.ProjectRoot(abs), abs)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// auditExt is the file extension a report of format is usually given.
func auditExt(format string) string {
	switch format {
	case "table":
		return "txt"
	case "markdown":
		return "md"
	case "junit":
		return "xml"
	case "json", "sarif", "html":
		return format
	}
	return "txt"
}
