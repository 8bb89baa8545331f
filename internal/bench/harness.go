package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agentform/agentform/internal/resolve"
)

// Run builds agentform from cfg.Module, generates the workspaces and
// measures every scenario cfg.Runs times (the javascript applies and
// their floors cfg.FloorRuns times):
//
//   - agentform plan of a fresh bash workspace vs terraform plan of a fresh
//     configuration (after an untimed terraform init);
//   - agentform apply vs terraform apply, fresh each run;
//   - a no-op re-plan after the last apply, for both;
//   - agentform apply of a fresh javascript workspace vs one esbuild build
//     of the same entry points in a child process (the bundling floor),
//     run in turns with it;
//   - a no-op agentform apply after the last javascript apply, which must
//     rewrite nothing in the resolution cache (Report.NoBundling);
//   - unless cfg.SkipDeps, agentform apply of a fresh workspace of
//     javascript tools with an npm dependency (GenerateJavaScriptDeps), in
//     turns with its own floor, and a no-op apply after the last one
//     (checked for "No changes." only; the resolution cache check above
//     covers bundling);
//   - with cfg.Scale, agentform plan at every ScaleTools × ScaleAgents size.
//
// Terraform rows have no peer measure when terraform is skipped or not on
// PATH. Errors wrap ErrInvalidConfig, ErrNoModule, ErrChildFailed or
// ErrUnexpectedOutput.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.Normalize()
	if err != nil {
		return nil, err
	}
	if cfg.Module == "" {
		if cfg.Module, err = findModule("."); err != nil {
			return nil, err
		}
	}
	// Children run in directories of their own, where a relative path
	// would name another file; a bad one is refused before anything is
	// built or created.
	if cfg.Terraform != "" && !cfg.SkipTerraform {
		if cfg.Terraform, err = terraformPath(cfg.Terraform); err != nil {
			return nil, err
		}
	}
	h := &harness{cfg: cfg, work: cfg.WorkDir}
	if h.work == "" {
		if h.work, err = os.MkdirTemp("", "agentform-bench-"); err != nil {
			return nil, fmt.Errorf("creating the work directory: %w", err)
		}
		defer os.RemoveAll(h.work)
	} else if err := emptyDir(h.work); err != nil {
		return nil, err
	}
	if err := h.prepare(ctx); err != nil {
		return nil, err
	}
	return h.measure(ctx)
}

// harness holds what one Run shares between scenarios.
type harness struct {
	cfg  Config
	work string
	// agentform and floor are the built binaries; terraform is empty when
	// terraform is not run, and tfNote then says why.
	agentform, floor string
	terraform        string
	tfNote           string
	report           Report
	dirs             int
}

// prepare builds the binaries and finds terraform.
func (h *harness) prepare(ctx context.Context) error {
	bin := filepath.Join(h.work, "bin")
	h.agentform = filepath.Join(bin, "agentform")
	h.floor = filepath.Join(bin, "esbuild-floor")
	for _, b := range []struct{ out, pkg string }{{h.agentform, "./cmd/agentform"}, {h.floor, "./internal/bench/cmd/esbuildfloor"}} {
		fmt.Fprintf(h.cfg.Progress, "go build -o %s %s\n", b.out, b.pkg)
		if _, _, err := (child{dir: h.cfg.Module, name: "go", args: []string{"build", "-o", b.out, b.pkg}}).run(ctx); err != nil {
			return fmt.Errorf("building %s: %w", b.pkg, err)
		}
	}
	_, out, err := child{dir: h.work, name: h.agentform, args: []string{"version"}}.run(ctx)
	if err != nil {
		return fmt.Errorf("reading the agentform version: %w", err)
	}
	h.report.Machine = Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(), Agentform: firstLine(out)}

	switch {
	case h.cfg.SkipTerraform:
		h.tfNote = "skipped (-skip-terraform)"
	case h.cfg.Terraform != "":
		h.terraform = h.cfg.Terraform
	default:
		if h.terraform, err = exec.LookPath("terraform"); err != nil {
			h.terraform, h.tfNote = "", "n/a: terraform is not on PATH"
		}
	}
	if h.terraform != "" {
		_, out, err := h.tf(h.work, "version", "-json").run(ctx)
		if err != nil {
			return fmt.Errorf("reading the terraform version: %w", err)
		}
		var v struct {
			Version string `json:"terraform_version"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.Version == "" {
			return fmt.Errorf("%w: terraform version -json printed %q", ErrUnexpectedOutput, tail(out, 200))
		}
		h.report.Machine.Terraform = "terraform " + v.Version
	}
	return nil
}

// measure runs every scenario and assembles the report.
func (h *harness) measure(ctx context.Context) (*Report, error) {
	c := h.cfg
	r := &h.report
	r.Tools, r.Agents, r.JS, r.Runs, r.FloorRuns = c.Tools, c.Agents, c.JS, c.Runs, c.FloorRuns
	r.DepJS, r.DepModules = c.DepJS, c.DepModules
	resources := c.Tools + c.Agents

	// agentform on the bash workspace.
	planCold, err := h.repeat(ctx, "agentform plan, cold", func() (child, error) {
		dir, err := h.bashWorkspace(c.Tools, c.Agents)
		return h.af(dir, "plan"), err
	}, planned(resources))
	if err != nil {
		return nil, err
	}
	var applied string
	apply, err := h.repeat(ctx, "agentform apply", func() (child, error) {
		dir, err := h.bashWorkspace(c.Tools, c.Agents)
		applied = dir
		return h.af(dir, "apply", "-auto-approve"), err
	}, appliedAll(resources))
	if err != nil {
		return nil, err
	}
	planNoop, err := h.repeat(ctx, "agentform plan, no-op", func() (child, error) {
		return h.af(applied, "plan"), nil
	}, contains("No changes."))
	if err != nil {
		return nil, err
	}

	// terraform on the same data.
	tfPlanCold, tfApply, tfPlanNoop, err := h.terraformRows(ctx)
	if err != nil {
		return nil, err
	}

	// javascript: agentform apply vs the esbuild floor, run in turns so
	// that the machine drifting (page cache, other load) weighs on both
	// alike, then a no-op apply.
	jsApply, floor, jsDir, err := h.applyVsFloor(ctx, "javascript", "js", c.JS, func(dir string) error {
		return GenerateJavaScript(dir, c.JS, c.Agents)
	})
	if err != nil {
		return nil, err
	}
	before, err := snapshot(jsDir)
	if err != nil {
		return nil, err
	}
	r.NoBundling.CacheEntries = len(before.entries)
	jsNoop, err := h.repeat(ctx, "agentform apply, javascript no-op", func() (child, error) {
		c := h.af(jsDir, "apply", "-auto-approve")
		c.withStderr = true
		return c, nil
	}, func(out string) error {
		// A resolution that bundled and could not write the cache would
		// leave it unchanged; it says so in a warning.
		if strings.Contains(out, "Resolution cache not written") {
			return fmt.Errorf("%w: the no-op apply could not write the resolution cache:\n%s", ErrUnexpectedOutput, tail(out, 1000))
		}
		return contains("No changes.")(out)
	})
	if err != nil {
		return nil, err
	}
	after, err := snapshot(jsDir)
	if err != nil {
		return nil, err
	}
	r.NoBundling.Rewritten = rewritten(before, after)

	rows := []Row{
		h.row(fmt.Sprintf("plan, cold (%d tools × %d agents)", c.Tools, c.Agents), planCold, "terraform plan", tfPlanCold),
		h.row("plan, no-op after apply", planNoop, "terraform plan", tfPlanNoop),
		h.row("apply, fresh", apply, "terraform apply", tfApply),
		h.row(fmt.Sprintf("apply, %d javascript tools", c.JS), jsApply, "esbuild, one build", &floor),
		h.row("apply, no-op after javascript apply", jsNoop, "", nil),
	}

	// javascript tools with an npm dependency: the same, with no cache
	// check (the one above covers it).
	if !c.SkipDeps {
		depApply, depFloor, depDir, err := h.applyVsFloor(ctx, "dependencies", "dep", c.DepJS, func(dir string) error {
			return GenerateJavaScriptDeps(dir, c.DepJS, c.Agents, c.DepModules)
		})
		if err != nil {
			return nil, err
		}
		depNoop, err := h.repeat(ctx, "agentform apply, dependencies no-op", func() (child, error) {
			return h.af(depDir, "apply", "-auto-approve"), nil
		}, contains("No changes."))
		if err != nil {
			return nil, err
		}
		rows = append(rows,
			h.row(fmt.Sprintf("apply, %d javascript tools with dependencies", c.DepJS), depApply, "esbuild, one build", &depFloor),
			h.row("apply, no-op after the dependencies apply", depNoop, "", nil))
	}
	r.Rows = rows

	if c.Scale {
		for _, n := range c.ScaleTools {
			for _, m := range c.ScaleAgents {
				mm, err := h.repeat(ctx, fmt.Sprintf("agentform plan %d×%d", n, m), func() (child, error) {
					dir, err := h.bashWorkspace(n, m)
					return h.af(dir, "plan", "-matrix=summary"), err
				}, planned(n+m))
				if err != nil {
					return nil, err
				}
				r.Scale = append(r.Scale, ScaleRow{Tools: n, Agents: m, Agentform: mm})
			}
		}
	}
	r.Targets = evaluateTargets(r, rows[0], rows[1], rows[2], rows[3])
	r.TargetsNote = targetsNote(r)
	return r, nil
}

// terraformRows measures terraform plan (cold), apply (fresh) and a no-op
// plan after the last apply; all nil when terraform is not run.
func (h *harness) terraformRows(ctx context.Context) (planCold, apply, planNoop *Measure, err error) {
	if h.terraform == "" {
		return nil, nil, nil, nil
	}
	n := h.cfg.Tools
	pc, err := h.repeat(ctx, "terraform plan, cold", func() (child, error) {
		dir, err := h.tfWorkspace(ctx)
		return h.tf(dir, "plan", "-input=false", "-lock=false", "-no-color"), err
	}, planned(n))
	if err != nil {
		return nil, nil, nil, err
	}
	var applied string
	ap, err := h.repeat(ctx, "terraform apply", func() (child, error) {
		dir, err := h.tfWorkspace(ctx)
		applied = dir
		return h.tf(dir, "apply", "-auto-approve", "-input=false", "-no-color"), err
	}, appliedAll(n))
	if err != nil {
		return nil, nil, nil, err
	}
	pn, err := h.repeat(ctx, "terraform plan, no-op", func() (child, error) {
		return h.tf(applied, "plan", "-input=false", "-lock=false", "-no-color"), nil
	}, contains("No changes."))
	if err != nil {
		return nil, nil, nil, err
	}
	return &pc, &ap, &pn, nil
}

// A scenario is one measured command: setup prepares the child before
// each run (untimed) and check judges each run's standard output.
type scenario struct {
	label string
	setup func() (child, error)
	check func(string) error
}

// repeat runs the child that setup prepares cfg.Runs times, checking each
// run's standard output with check, and returns the medians. setup runs
// before each run and is not timed.
func (h *harness) repeat(ctx context.Context, label string, setup func() (child, error), check func(string) error) (Measure, error) {
	var samples []Sample
	sc := scenario{label: label, setup: setup, check: check}
	for i := range h.cfg.Runs {
		s, err := h.once(ctx, sc, i, h.cfg.Runs)
		if err != nil {
			return Measure{}, err
		}
		samples = append(samples, s)
	}
	return summarise(samples), nil
}

// alternate runs a and b cfg.FloorRuns times each, in turns (a, b, a, b,
// ...), and returns the medians of each: a ratio of the two then compares
// runs made under the same conditions. b's setup may use what a's last
// setup prepared.
func (h *harness) alternate(ctx context.Context, a, b scenario) (Measure, Measure, error) {
	var as, bs []Sample
	n := h.cfg.FloorRuns
	for i := range n {
		s, err := h.once(ctx, a, i, n)
		if err != nil {
			return Measure{}, Measure{}, err
		}
		as = append(as, s)
		if s, err = h.once(ctx, b, i, n); err != nil {
			return Measure{}, Measure{}, err
		}
		bs = append(bs, s)
	}
	return summarise(as), summarise(bs), nil
}

// once prepares, runs and checks run i of n of sc, printing its progress
// line.
func (h *harness) once(ctx context.Context, sc scenario, i, n int) (Sample, error) {
	c, err := sc.setup()
	if err != nil {
		return Sample{}, fmt.Errorf("preparing %s: %w", sc.label, err)
	}
	s, out, err := c.run(ctx)
	if err != nil {
		return Sample{}, fmt.Errorf("measuring %s in %s: %w", sc.label, c.dir, err)
	}
	if err := sc.check(out); err != nil {
		return Sample{}, fmt.Errorf("measuring %s in %s: %w", sc.label, c.dir, err)
	}
	fmt.Fprintf(h.cfg.Progress, "%-36s run %d/%d: %s, CPU %s, peak RSS %s\n", sc.label, i+1, n, formatDuration(s.Wall), formatDuration(s.CPU), formatRSS(s.PeakRSSKiB))
	return s, nil
}

// row assembles a table row; peer is nil when the peer was not run.
func (h *harness) row(scenario string, af Measure, peerName string, peer *Measure) Row {
	r := Row{Scenario: scenario, Agentform: af, PeerName: peerName, Peer: peer}
	if peerName != "" && peer == nil {
		r.PeerNote = h.tfNote
	}
	if peer != nil && af.Median > 0 {
		r.Ratio = float64(peer.Median) / float64(af.Median)
	}
	return r
}

// terraformPath finds the terraform binary name names (a path, or a name
// looked up on PATH) and returns its absolute path.
func terraformPath(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err == nil {
		path, err = filepath.Abs(path)
	}
	if err != nil {
		return "", fmt.Errorf("%w: terraform binary: %v", ErrInvalidConfig, err)
	}
	return path, nil
}

// floorBuilt checks the esbuild floor's output for n bundles from n entry
// points: the floor counts the files esbuild output, not the entry points
// it was given.
func floorBuilt(n int) func(string) error {
	return contains(fmt.Sprintf("built %d entry points into %d files", n, n))
}

// emptyDir creates dir, or checks that it holds nothing: the harness
// numbers what it generates there from 1, and would otherwise plan and
// apply the workspaces of an earlier run again.
func emptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: creating the work directory: %v", ErrInvalidConfig, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w: reading the work directory: %v", ErrInvalidConfig, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("%w: the work directory %s is not empty (it holds %s): name a new or empty directory, so that every workspace measured is fresh", ErrInvalidConfig, dir, entries[0].Name())
	}
	return nil
}

// newDir creates a fresh directory under the work directory.
func (h *harness) newDir(kind string) (string, error) {
	h.dirs++
	dir := filepath.Join(h.work, fmt.Sprintf("%s-%d", kind, h.dirs))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	return dir, nil
}

func (h *harness) bashWorkspace(tools, agents int) (string, error) {
	dir, err := h.newDir("bash")
	if err != nil {
		return "", err
	}
	return dir, GenerateBash(dir, tools, agents)
}

// applyVsFloor measures agentform apply of a fresh javascript workspace,
// generated into a new directory each run, in turns with the esbuild
// floor of its n entry points tools/<prefix><i>/index.ts (run on the
// workspace the apply before it generated); dir is the last workspace.
func (h *harness) applyVsFloor(ctx context.Context, kind, prefix string, n int, generate func(dir string) error) (apply, floor Measure, dir string, err error) {
	apply, floor, err = h.alternate(ctx, scenario{
		label: "agentform apply, " + kind,
		setup: func() (child, error) {
			d, err := h.newDir(kind)
			if err == nil {
				err = generate(d)
			}
			dir = d
			return h.af(d, "apply", "-auto-approve"), err
		},
		check: appliedAll(n + h.cfg.Agents),
	}, scenario{
		label: "esbuild build, " + kind,
		setup: func() (child, error) { return h.floorBuild(dir, prefix, n) },
		check: floorBuilt(n),
	})
	return apply, floor, dir, err
}

// tfWorkspace generates a Terraform configuration and runs terraform init
// in it, untimed.
func (h *harness) tfWorkspace(ctx context.Context) (string, error) {
	dir, err := h.newDir("terraform")
	if err != nil {
		return "", err
	}
	if err := GenerateTerraform(dir, h.cfg.Tools); err != nil {
		return "", err
	}
	if _, _, err := h.tf(dir, "init", "-input=false", "-no-color").run(ctx); err != nil {
		return "", err
	}
	return dir, nil
}

// floorBuild prepares the esbuild floor's child: one build of the n entry
// points tools/<prefix><i>/index.ts of the workspace dir into a fresh
// output directory.
func (h *harness) floorBuild(dir, prefix string, n int) (child, error) {
	out, err := h.newDir("esbuild-out")
	if err != nil {
		return child{}, err
	}
	args := []string{"-outdir", out}
	for i := range n {
		args = append(args, filepath.Join(dir, "tools", fmt.Sprintf("%s%d", prefix, i), "index.ts"))
	}
	return child{dir: dir, name: h.floor, args: args}, nil
}

// af is an agentform command: sub is the subcommand, -no-color follows it.
func (h *harness) af(dir, sub string, args ...string) child {
	return child{dir: dir, name: h.agentform, args: append([]string{sub, "-no-color"}, args...)}
}

// tf is a terraform command with the environment of an automated run and
// no update check over the network.
func (h *harness) tf(dir string, args ...string) child {
	return child{dir: dir, env: []string{"TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1"}, name: h.terraform, args: args}
}

// planned checks that a plan adds n resources and nothing else; agentform
// and terraform print the same summary.
func planned(n int) func(string) error {
	return contains(fmt.Sprintf("Plan: %d to add, 0 to change, 0 to destroy.", n))
}

// appliedAll checks that an apply created n resources; agentform and
// terraform print the same summary.
func appliedAll(n int) func(string) error {
	return contains(fmt.Sprintf("Apply complete! Resources: %d added, 0 changed, 0 destroyed.", n))
}

func contains(want string) func(string) error {
	return func(out string) error {
		if !strings.Contains(out, want) {
			return fmt.Errorf("%w: the output lacks %q; it ends:\n%s", ErrUnexpectedOutput, want, tail(out, 1000))
		}
		return nil
	}
}

// cacheSnapshot is the javascript entries of a workspace's resolution
// cache (resolve.CacheFile) and the identity of the database file.
type cacheSnapshot struct {
	entries map[string][]byte
	file    fs.FileInfo // nil when there is no database
	digest  [32]byte    // of the database file's bytes
}

// snapshot reads the resolution cache of the workspace dir; a workspace
// without one has an empty snapshot.
func snapshot(dir string) (cacheSnapshot, error) {
	var s cacheSnapshot
	path := filepath.Join(dir, resolve.CacheFile)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		s.entries = map[string][]byte{}
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading the cache %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("reading the cache %s: %w", path, err)
	}
	s.file, s.digest = fi, sha256.Sum256(b)
	if s.entries, err = resolve.CacheEntries(dir, "javascript"); err != nil {
		return s, fmt.Errorf("reading the cache %s: %w", path, err)
	}
	return s, nil
}

// rewritten counts the javascript entries of after that are new or differ
// from before. Every bundling writes its entry in a transaction, which
// rewrites the database file even when the entry's bytes are the same: a
// database that changed at all (another inode, size, modification time or
// content) with no entry telling which counts every entry as rewritten.
func rewritten(before, after cacheSnapshot) int {
	if after.file == nil || before.file != nil && os.SameFile(before.file, after.file) && before.file.Size() == after.file.Size() &&
		before.file.ModTime().Equal(after.file.ModTime()) && before.digest == after.digest {
		return 0
	}
	n := 0
	for key, a := range after.entries {
		if b, ok := before.entries[key]; !ok || !bytes.Equal(a, b) {
			n++
		}
	}
	if n == 0 {
		n = len(after.entries)
	}
	return n
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
