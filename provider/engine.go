package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/apply"
	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/internal/version"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

// The engine is the CLI's plan and apply (internal/cli plan.go, apply.go,
// resolve.go, state.go), minus the printing: load the manifest, read the
// lockfile and the applied state, resolve every tool and skill, plan, and
// for apply carry the plan out under the state lock. It never shells out
// to the agentform CLI, so Terraform and the CLI share one state database
// and one lockfile per workspace.

// stateLockTimeout is how long the engine waits for the workspace's state
// lock unless the provider's lock_timeout says otherwise: long enough to
// queue behind a concurrent agentform command or a second resource on the
// same workspace, short enough to fail clearly.
const stateLockTimeout = 30 * time.Second

// settings are the provider's configuration (agentformProvider.Configure),
// which every resource and data source gets: how long the engine waits. A
// nil *settings (an object not configured, as in unit tests) gives the
// defaults.
type settings struct {
	// resolveTimeout bounds each remote operation of resolution
	// (resolve_timeout).
	resolveTimeout time.Duration
	// lockTimeout is how long to wait for the workspace's state lock
	// (lock_timeout); 0 fails at once.
	lockTimeout time.Duration
}

// defaultSettings are the settings of a provider configured with none.
func defaultSettings() settings {
	return settings{resolveTimeout: resolve.DefaultTimeout, lockTimeout: stateLockTimeout}
}

// resolveWait is s's resolution timeout, the default's for nil.
func (s *settings) resolveWait() time.Duration {
	if s == nil {
		return defaultSettings().resolveTimeout
	}
	return s.resolveTimeout
}

// lockWait is s's state lock timeout, the default's for nil.
func (s *settings) lockWait() time.Duration {
	if s == nil {
		return defaultSettings().lockTimeout
	}
	return s.lockTimeout
}

// Advice names for the provider's settings, as resolve and the lock error
// say them ("... or raise the provider's resolve_timeout").
const (
	resolveTimeoutAdvice = "the provider's resolve_timeout"
	lockTimeoutAdvice    = "the provider's lock_timeout"
)

// engineOptions are the resolve and lockfile settings of one run, the
// provider's counterparts of the CLI's -refresh and -lockfile flags.
type engineOptions struct {
	// refresh contacts MCP servers and A2A agents; false takes remote tools
	// from the lockfile.
	refresh bool
	// lockReadonly makes any lockfile difference an error and never writes
	// the lockfile.
	lockReadonly bool
	// outDir is the artifact directory, relative to the workspace unless
	// absolute; the plan places (and moves) artifacts there.
	outDir string
	// claim makes apply commit state even when the plan changes nothing,
	// so that the state's serial moves: a new agentform_build takes the
	// workspace's build over from any older Terraform object of it (see
	// buildResource.Delete).
	claim bool
	// operation is what the state's history records as the writer;
	// terraformApply when empty. Tests apply as the CLI does ("apply").
	operation string
	// settings are the provider's; nil for the defaults.
	settings *settings
}

// outDirAttr is agentform_build's attribute for engineOptions.outDir.
const outDirAttr = "out_dir"

// workspacePlan is one workspace loaded and planned.
type workspacePlan struct {
	dir string
	// outDirSet says the caller gave an artifact directory
	// (engineOptions.outDir): agentform_build's out_dir, where a problem
	// with it belongs.
	outDirSet bool
	cfg       *manifest.Config
	// plan is nil when the manifest, the lockfile or the state could not
	// be read; diags then say why.
	plan *planner.Plan
	// diags holds every diagnostic of loading, resolving and planning, in
	// that order; it has errors exactly when the plan must not be applied.
	diags hcl.Diagnostics
	// failure is set when the state database could not be opened or read,
	// or the apply failed.
	failure error
}

// planWorkspace plans dir as "agentform plan" does, holding the state
// database's shared lock only while reading it. It writes nothing in the
// workspace besides the resolve cache (.agentform/cache).
func planWorkspace(ctx context.Context, dir string, opts engineOptions) *workspacePlan {
	ws := &workspacePlan{dir: dir, outDirSet: opts.outDir != ""}
	ws.cfg, ws.diags = manifest.Load(dir)
	if ws.diags.HasErrors() {
		return ws
	}
	prior, err := readApplied(dir, opts.settings)
	if err != nil {
		ws.failure = err
		return ws
	}
	ws.plan = ws.resolveAndPlan(ctx, opts, prior)
	return ws
}

// applyResult is what applyWorkspace did.
type applyResult struct {
	*workspacePlan
	// artifacts maps each agent to its artifact as recorded in state after
	// the run, whether or not this run rebuilt it.
	artifacts map[string]state.Artifact
	// applied is false when the plan had nothing to do and state was not
	// written.
	applied bool
	// meta is the workspace state's lineage and serial after the run.
	meta state.Meta
	// mismatch, when not empty, says what the plan made under the lock
	// would record differently from what the caller expected: nothing was
	// applied.
	mismatch string
}

// applyWorkspace plans dir under the exclusive state lock and applies the
// plan when it changes anything (or opts.claim is set), as "agentform
// apply -auto-approve" does. outDir is the artifact directory, relative to
// dir unless absolute. verify, when not nil, is given the plan before
// anything is written; when it returns a mismatch or an error, nothing is
// applied, and res.mismatch or ws.failure says why.
func applyWorkspace(ctx context.Context, dir, outDir string, opts engineOptions, verify func(*planner.Plan) (string, error)) *applyResult {
	res := &applyResult{workspacePlan: &workspacePlan{dir: dir, outDirSet: opts.outDir != ""}}
	ws := res.workspacePlan
	ws.cfg, ws.diags = manifest.Load(dir)
	if ws.diags.HasErrors() {
		return res
	}
	operation := opts.operation
	if operation == "" {
		operation = terraformApply
	}
	db, err := state.Open(dir, state.Options{LockTimeout: opts.settings.lockWait(), Operation: operation, Version: version.Version})
	if err != nil {
		ws.failure = err
		return res
	}
	defer db.Close()
	prior, err := planner.AppliedFromState(db)
	if err != nil {
		ws.failure = err
		return res
	}
	// Re-planned under the lock: what Terraform planned may be stale, and
	// apply must carry out exactly what this plan says.
	ws.plan = ws.resolveAndPlan(ctx, opts, prior)
	if ws.plan == nil || ws.diags.HasErrors() {
		return res
	}
	if verify != nil {
		if res.mismatch, ws.failure = verify(ws.plan); res.mismatch != "" || ws.failure != nil {
			return res
		}
	}
	if !opts.claim && !wouldApply(ws.plan, opts) {
		// Nothing to apply but, perhaps, the leftovers of an interrupted
		// apply (files it wrote that nothing owns): they go, with no
		// commit. apply.Apply removes them itself otherwise.
		if len(ws.plan.Leftovers) > 0 {
			if _, err := apply.RemoveLeftovers(db, ws.plan, apply.Options{Dir: dir}); err != nil {
				ws.failure = err
				return res
			}
		}
		res.artifacts = appliedArtifacts(prior)
		res.meta = state.Meta{Lineage: prior.Lineage, Serial: prior.Serial}
		return res
	}
	out, err := apply.Apply(ctx, db, ws.plan, apply.Options{Dir: dir, WriteLock: !opts.lockReadonly})
	if err != nil {
		ws.failure = err
		return res
	}
	res.artifacts, res.applied, res.meta = out.Artifacts, true, out.Meta
	return res
}

// wouldApply reports whether applying plan writes anything: an artifact,
// state, or (unless the lockfile is read-only) the lockfile. Leftovers of
// an interrupted apply (plan.Leftovers) alone are not: they change no
// attribute, so Terraform plans no change for them and only warns
// (leftoverWarnings); any apply of the resource removes them.
func wouldApply(plan *planner.Plan, opts engineOptions) bool {
	return plan.HasChanges() || !opts.lockReadonly && len(plan.LockChanges) > 0
}

// resolveAndPlan reads the lockfile, resolves every tool and skill and
// plans against prior, appending every diagnostic to ws.diags. It returns
// nil, with an error in ws.diags, when there is nothing to plan with.
func (ws *workspacePlan) resolveAndPlan(ctx context.Context, opts engineOptions, prior *planner.Applied) *planner.Plan {
	lock, diags := lockfile.Load(ws.dir)
	ws.diags = append(ws.diags, diags...)
	if len(diags) > 0 && ws.cfg != nil {
		// Let the diagnostics show the lockfile's source lines, as the
		// CLI's do.
		if f := lockfile.Source(ws.dir); f != nil {
			ws.cfg.Files[lockfile.FileName] = f
		}
	}
	if diags.HasErrors() {
		return nil
	}
	resolution, diags := resolve.Run(ctx, ws.cfg, resolve.Options{
		Env:          os.LookupEnv,
		Timeout:      opts.settings.resolveWait(),
		TimeoutName:  resolveTimeoutAdvice,
		Refresh:      opts.refresh,
		LockReadonly: opts.lockReadonly,
		Lock:         lock,
		Cache:        resolve.NewCache(ws.dir),
	})
	ws.diags = append(ws.diags, diags...)
	if resolution == nil {
		if !diags.HasErrors() {
			// Callers rely on a nil plan coming with an error.
			ws.diags = append(ws.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot resolve workspace",
				Detail: "Resolving the workspace's tools and skills produced nothing to plan with. Run \"agentform plan\" in the workspace to see why."})
		}
		return nil
	}
	plan := planner.New(ctx, ws.cfg, planner.Options{Resolution: resolution, Lock: lock, LockReadonly: opts.lockReadonly, Applied: prior, OutDir: opts.outDir, OutDirName: outDirAttr})
	ws.diags = append(ws.diags, plan.Diagnostics...)
	return plan
}

// readApplied reads what the last apply in dir recorded, under the shared
// state lock, waiting for it as s says. A workspace without state yields
// an empty Applied.
func readApplied(dir string, s *settings) (*planner.Applied, error) {
	db, err := state.Open(dir, state.Options{ReadOnly: true, LockTimeout: s.lockWait()})
	if errors.Is(err, state.ErrNoState) {
		return planner.AppliedFromState(nil)
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return planner.AppliedFromState(db)
}

// appliedArtifacts returns each agent's artifact as recorded in prior.
func appliedArtifacts(prior *planner.Applied) map[string]state.Artifact {
	out := map[string]state.Artifact{}
	for _, r := range prior.Resources {
		if r.Type == "agent" && r.Artifact != nil {
			out[r.Name] = state.Artifact{Path: r.Artifact.Path, SHA256: r.Artifact.SHA256, Size: r.Artifact.Size}
		}
	}
	return out
}

// predictArtifacts returns each agent's artifact as applying plan will
// record it, without writing anything. An agent apply leaves
// alone keeps its recorded artifact; every other agent's artifact is built
// in memory (the build is deterministic, so its digest is exactly what
// apply will write), or, without build, has no digest. rebuildAll
// predicts a rebuild of every agent, for a replacement whose destroy
// removes the artifacts first.
func predictArtifacts(plan *planner.Plan, rebuildAll, build bool) (map[string]state.Artifact, error) {
	actions := map[string]string{}
	for _, rc := range plan.ResourceChanges {
		actions[rc.Address] = rc.Actions[0]
	}
	out := map[string]state.Artifact{}
	for _, a := range plan.Addresses {
		if a.Type != "agent" {
			continue
		}
		rel := plan.ArtifactPath(a.Name)
		old := plan.Applied.Resources[a.Address].Artifact
		if !rebuildAll && actions[a.Address] == planner.ActionNoOp && old != nil && old.Path == rel {
			out[a.Name] = state.Artifact{Path: old.Path, SHA256: old.SHA256, Size: old.Size}
			continue
		}
		if !build {
			out[a.Name] = state.Artifact{Path: rel}
			continue
		}
		files, err := plan.ArtifactFiles(a.Name)
		if err != nil {
			return nil, fmt.Errorf("collecting the files of %s: %w", a.Address, err)
		}
		data, err := artifact.Build(files)
		if err != nil {
			return nil, fmt.Errorf("building the artifact of %s: %w", a.Address, err)
		}
		out[a.Name] = state.Artifact{Path: rel, SHA256: resolve.SHA256(data), Size: int64(len(data))}
	}
	return out, nil
}

// predictLockDigest returns the hex SHA-256 the lockfile will have after
// applying plan, or "" when the workspace will have no lockfile.
func predictLockDigest(dir string, plan *planner.Plan, opts engineOptions) (string, error) {
	if !opts.lockReadonly && plan.Lock != nil && len(plan.LockChanges) > 0 {
		sum := sha256.Sum256(plan.Lock.Bytes())
		return hex.EncodeToString(sum[:]), nil
	}
	return fileDigest(filepath.Join(dir, lockfile.FileName))
}

// fileDigest returns the hex SHA-256 of the file at path, or "" when there
// is no such file.
func fileDigest(path string) (string, error) {
	data, err := lockfile.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// fingerprint digests every address's input fingerprint (address → the
// planner's or the state's fingerprint) into one hex SHA-256, so that any
// change agentform would make shows as a change of one attribute.
func fingerprint(fingerprints map[string]string) string {
	addrs := make([]string, 0, len(fingerprints))
	for a := range fingerprints {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	h := sha256.New()
	for _, a := range addrs {
		fmt.Fprintf(h, "%s %s\n", a, fingerprints[a])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// planFingerprint is fingerprint over the plan's addresses: what state
// will record once the plan is applied.
func planFingerprint(plan *planner.Plan) string {
	fps := map[string]string{}
	for _, a := range plan.Addresses {
		fps[a.Address] = a.Fingerprint
	}
	return fingerprint(fps)
}

// appliedFingerprint is fingerprint over what state records.
func appliedFingerprint(prior *planner.Applied) string {
	fps := map[string]string{}
	for addr, r := range prior.Resources {
		fps[addr] = r.Fingerprint
	}
	return fingerprint(fps)
}

// hexDigest strips the "sha256:" prefix agentform records, giving the
// plain hex digest Terraform's filesha256 returns.
func hexDigest(d string) string { return strings.TrimPrefix(d, "sha256:") }

// hasArtifactDrift reports whether rc rebuilds an artifact that was
// changed or removed outside agentform.
func hasArtifactDrift(rc planner.ResourceChange) bool {
	for _, r := range rc.Reasons {
		if r == planner.ReasonArtifactDrift {
			return true
		}
	}
	return false
}
