// Package apply carries out a plan: it writes each changed agent's artifact,
// the lockfile and the state, in an order that survives a crash at any
// point (DESIGN §9):
//
//  1. each artifact is built into a temporary file in its directory and
//     renamed into place, so an artifact is either the old bytes or the
//     new ones, never partial;
//  2. the lockfile is written the same way;
//  3. state is committed in one bbolt transaction (new serial, history).
//
// A crash between steps leaves new artifacts (or a new lockfile) that the
// state does not record yet; the next plan sees them as drift and the next
// apply converges. Cancellation (Ctrl-C) is checked between steps: the
// step under way finishes, the rest does not start.
package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

// DefaultOutDir is where artifacts go, relative to the workspace.
const DefaultOutDir = planner.DefaultOutDir

// Options control an apply.
type Options struct {
	// Dir is the workspace directory. Where artifacts go is the plan's
	// decision (planner.Options.OutDir, Plan.ArtifactPath).
	Dir string
	// WriteLock is false under -lockfile=readonly: the lockfile is never
	// written (the plan then has no lock changes, or it would have failed).
	WriteLock bool
	// Progress, when set, is told about each step, one call at a time
	// (artifacts are built concurrently, so their lines come in the order
	// they finish).
	Progress func(format string, args ...any)
}

// Result is what an apply did.
type Result struct {
	Meta      state.Meta
	Artifacts map[string]state.Artifact
	Added     int
	Changed   int
	Destroyed int
}

// ErrInterrupted is returned when the context was cancelled between steps;
// what was done before is consistent and the next apply converges.
var ErrInterrupted = errors.New("apply interrupted")

// Apply carries out plan against the open, writable state database db.
func Apply(ctx context.Context, db *state.DB, plan *planner.Plan, opts Options) (*Result, error) {
	if !plan.Applyable {
		return nil, errors.New("the plan has errors and cannot be applied")
	}
	progress := func(string, ...any) {}
	if opts.Progress != nil {
		// Artifacts are built concurrently; progress lines are not.
		var mu sync.Mutex
		progress = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			opts.Progress(format, args...)
		}
	}
	res := &Result{Artifacts: map[string]state.Artifact{}}
	actions := map[string]planner.ResourceChange{}
	for _, rc := range plan.ResourceChanges {
		actions[rc.Address] = rc
		switch rc.Actions[0] {
		case planner.ActionCreate:
			res.Added++
		case planner.ActionUpdate:
			res.Changed++
		case planner.ActionDelete:
			res.Destroyed++
		}
	}

	// A killed apply may have left temporary artifact files; holding the
	// state lock, this apply is the only writer and may remove them.
	RemoveStaleTemps(opts.Dir, plan)

	// 1. Artifacts of created and updated agents; unchanged ones keep
	// theirs. They are built side by side (compressing and syncing them is
	// most of an apply's own work), and recorded in plan order.
	var build []planner.Address
	for _, a := range plan.Addresses {
		if a.Type != "agent" {
			continue
		}
		act := actions[a.Address].Actions[0]
		if act == planner.ActionNoOp {
			if old := plan.Applied.Resources[a.Address].Artifact; old != nil {
				res.Artifacts[a.Name] = state.Artifact{Path: old.Path, SHA256: old.SHA256, Size: old.Size}
				continue
			}
		}
		build = append(build, a)
	}
	// The lockfile is checked before any artifact is built: artifacts
	// carry its digest, so a lockfile that could not be written must not
	// leave artifacts naming it.
	writeLock := opts.WriteLock && plan.Lock != nil && len(plan.LockChanges) > 0
	var lock lockfile.Checked
	if writeLock {
		var err error
		if lock, err = lockfile.CheckEncoded(filepath.Join(opts.Dir, lockfile.FileName), plan.Lock, plan.LockBytes()); err != nil {
			return nil, fmt.Errorf("writing %s: %w", lockfile.FileName, err)
		}
	}
	// The agent.json entries the artifacts share are encoded once, on
	// every core, before they are built side by side.
	names := make([]string, len(build))
	for i, a := range build {
		names[i] = a.Name
	}
	plan.EncodeArtifactEntries(names)
	built := make([]state.Artifact, len(build))
	errs := make([]error, len(build))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	writing := make(chan struct{}, writeSlots())
	var wg sync.WaitGroup
	for i, a := range build {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A build slot is held while the artifact is built, not while
			// it is written and synced: that time is another artifact's
			// to build. A write slot is taken before the build slot is
			// given up, so that built artifacts cannot pile up in memory
			// waiting to be written.
			sem <- struct{}{}
			if err := ctx.Err(); err != nil {
				<-sem
				errs[i] = fmt.Errorf("%w before building %s: %v", ErrInterrupted, a.Address, err)
				return
			}
			progress("%s: Building artifact...", a.Address)
			data, err := buildArtifact(plan, a.Name)
			if err != nil {
				<-sem
				errs[i] = fmt.Errorf("building the artifact of %s: %w", a.Address, err)
				return
			}
			writing <- struct{}{}
			<-sem
			defer func() { <-writing }()
			rec, err := writeArtifact(plan, opts, a.Name, data)
			if err != nil {
				errs[i] = fmt.Errorf("writing the artifact of %s: %w", a.Address, err)
				return
			}
			built[i] = rec
			progress("%s: Wrote %s (%s)", a.Address, rec.Path, rec.SHA256[:19])
		}()
	}
	wg.Wait()
	// The first failure in plan order is the one reported; what was built
	// is consistent (each artifact is written whole) and the state still
	// describes the previous apply.
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// The files just written, by identity: an old path spelled another
	// way (an -out-dir through a symbolic link to the old directory, a
	// case-insensitive file system) may name one of them, and removing
	// it would remove the new artifact.
	var written []os.FileInfo
	for _, rec := range built {
		if fi, err := os.Stat(artifactFile(opts.Dir, rec.Path)); err == nil {
			written = append(written, fi)
		}
	}
	isWritten := func(path string) bool {
		fi, err := os.Stat(artifactFile(opts.Dir, path))
		return err == nil && slices.ContainsFunc(written, func(w os.FileInfo) bool { return os.SameFile(fi, w) })
	}
	for i, a := range build {
		rec := built[i]
		res.Artifacts[a.Name] = rec
		// A moved artifact (new -out-dir) leaves no copy behind.
		if old := plan.Applied.Resources[a.Address].Artifact; old != nil && old.Path != rec.Path && !isWritten(old.Path) {
			removeArtifact(opts.Dir, old.Path)
		}
	}
	// Artifacts of deleted agents go.
	for _, rc := range plan.ResourceChanges {
		if rc.Type != "agent" || rc.Actions[0] != planner.ActionDelete {
			continue
		}
		if old := plan.Applied.Resources[rc.Address].Artifact; old != nil && !isWritten(old.Path) {
			if err := removeArtifact(opts.Dir, old.Path); err != nil {
				return nil, fmt.Errorf("removing the artifact of %s: %w", rc.Address, err)
			}
			progress("%s: Removed %s", rc.Address, old.Path)
		}
	}

	// 2. The lockfile.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w before writing %s: %v", ErrInterrupted, lockfile.FileName, err)
	}
	if writeLock {
		if err := lockfile.WriteChecked(lock); err != nil {
			return nil, err // "writing PATH: why"
		}
		progress("Wrote %s", lockfile.FileName)
	}

	// 3. State, in one transaction.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w before committing state: %v", ErrInterrupted, err)
	}
	commit, err := stateCommit(plan, res.Artifacts, actions)
	if err != nil {
		return nil, err
	}
	meta, err := db.Commit(commit)
	if err != nil {
		return nil, fmt.Errorf("committing state: %w", err)
	}
	res.Meta = meta
	return res, nil
}

// buildArtifact builds agent's artifact in memory.
func buildArtifact(plan *planner.Plan, agent string) ([]byte, error) {
	files, err := plan.ArtifactFiles(agent)
	if err != nil {
		return nil, err
	}
	return artifact.Build(files)
}

// writeSlots is how many artifacts are written and synced at once: a few
// per core, since a sync mostly waits for the disk, but a fixed number,
// so that neither the artifacts waiting to be written nor the threads
// blocked in fsync grow with the number of agents.
func writeSlots() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// writeArtifactFile writes an artifact's file; a variable for tests.
var writeArtifactFile = artifact.WriteFile

// writeArtifact writes agent's artifact, data, to its path (atomically
// and synced) and returns its state record.
func writeArtifact(plan *planner.Plan, opts Options, agent string, data []byte) (state.Artifact, error) {
	rel := filepath.FromSlash(plan.ArtifactPath(agent))
	full := rel
	if !filepath.IsAbs(full) {
		full = filepath.Join(opts.Dir, rel)
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return state.Artifact{}, err
	}
	if err := writeArtifactFile(full, data); err != nil {
		return state.Artifact{}, err
	}
	return state.Artifact{Path: filepath.ToSlash(rel), SHA256: resolve.SHA256(data), Size: int64(len(data))}, nil
}

func stateCommit(plan *planner.Plan, artifacts map[string]state.Artifact, actions map[string]planner.ResourceChange) (state.Commit, error) {
	var c state.Commit
	for _, a := range plan.Addresses {
		r := state.Resource{Address: a.Address, Type: a.Type, Name: a.Name, Kind: a.Kind, Fingerprint: a.Fingerprint, Attributes: a.Attributes}
		if plan.Lock != nil {
			var entry any
			switch a.Type {
			case "tool":
				if t := plan.Lock.Tools[a.Name]; t != nil {
					entry = artifact.NewLock(t)
				}
			case "skill":
				if s := plan.Lock.Skills[a.Name]; s != nil {
					entry = artifact.NewSkillLock(s)
				}
			}
			if entry != nil {
				b, err := json.Marshal(entry)
				if err != nil {
					return c, err
				}
				r.Lock = b
			}
		}
		if a.Type == "agent" {
			if rec, ok := artifacts[a.Name]; ok {
				rec := rec
				r.Artifact = &rec
			}
		}
		c.Resources = append(c.Resources, r)
	}
	c.Matrix = map[string][]string{}
	m := plan.Matrix()
	tools := m.Tools()
	for ai, a := range plan.Agents {
		row := []string{}
		for ti, t := range tools {
			if m.Allowed(ai, ti) {
				row = append(row, t.Name)
			}
		}
		c.Matrix[a.Name] = row
	}
	for _, rc := range plan.ResourceChanges {
		if rc.Actions[0] == planner.ActionNoOp {
			continue
		}
		reason := ""
		if len(rc.Reasons) > 0 {
			reason = rc.Reasons[len(rc.Reasons)-1]
		}
		c.Entry.Actions = append(c.Entry.Actions, state.Action{Address: rc.Address, Action: rc.Actions[0], Reason: reason})
	}
	for _, cc := range plan.CapabilityChanges {
		c.Entry.CapabilityChanges = append(c.Entry.CapabilityChanges, state.CapabilityChange{Agent: cc.Agent, Tool: cc.Tool, Change: cc.Change})
	}
	for _, ch := range plan.Checks {
		c.Entry.Checks = append(c.Entry.Checks, state.CheckResult{Name: ch.Name, Status: ch.Status, Message: ch.Message})
	}
	return c, nil
}

// removeArtifact deletes an artifact recorded in state; a file already gone
// is fine.
func removeArtifact(dir, path string) error {
	if err := os.Remove(artifactFile(dir, path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// artifactFile is the file of an artifact path (relative to the
// workspace dir, or absolute).
func artifactFile(dir, path string) string {
	p := filepath.FromSlash(path)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p
}

// RemoveStaleTemps deletes the temporary files artifact.WriteFile names
// ".<agent>.agent.tgz.tmp*" in the artifact directory, and those the
// lockfile is written through, ".agentform.lock.hcl.tmp*" in the
// workspace. They only exist when an apply (or lock) was killed while
// writing. The caller holds the state lock exclusively, so no apply is
// writing them, nor a lock in a workspace with state (it holds the lock
// shared); a lock in a workspace without state takes no lock, and would
// see its rename fail if a first apply removed its temporary file.
func RemoveStaleTemps(workspace string, plan *planner.Plan) {
	if matches, _ := filepath.Glob(filepath.Join(workspace, "."+lockfile.FileName+".tmp*")); len(matches) > 0 {
		for _, m := range matches {
			_ = os.Remove(m)
		}
	}
	dirs := map[string]bool{}
	for _, a := range plan.Agents {
		dir := filepath.Dir(filepath.FromSlash(plan.ArtifactPath(a.Name)))
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(workspace, dir)
		}
		dirs[dir] = true
	}
	for dir := range dirs {
		matches, _ := filepath.Glob(filepath.Join(dir, ".*.agent.tgz.tmp*"))
		for _, m := range matches {
			_ = os.Remove(m)
		}
	}
}
