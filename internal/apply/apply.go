// Package apply carries out a plan: it writes each changed agent's artifact,
// the lockfile and the state, in an order that survives a crash at any
// point (DESIGN §9):
//
//  1. each artifact is built into a temporary file in its directory and
//     renamed into place, so an artifact is either the old bytes or the
//     new ones, never partial;
//  2. the lockfile is written the same way;
//  3. state is committed in one bbolt transaction (new serial, history);
//  4. artifacts the new state no longer records (deleted agents', or left
//     behind by a new -out-dir) are removed.
//
// A crash between steps leaves new artifacts (or a new lockfile) that the
// state does not record yet; the next plan sees them as drift and the next
// apply converges. Artifacts to paths state does not own yet are built
// in memory first, and the SHA-256 of each is recorded in state as
// pending (one small transaction, only when there are such paths) before
// any of them is renamed into place, added to what earlier interrupted
// applies recorded there that is still on disk (a path may list several
// digests); the artifacts of step 4 are recorded
// with the digest state has for them in the commit itself. After a crash,
// the next plan lists as leftovers the recorded files that still hold
// exactly the recorded bytes and are none of the artifacts state owns or
// the plan writes (compared by file identity: a symbolic link to the
// artifact directory, another spelling on a case-insensitive file system
// or a hard link name the same file), and the next apply removes them.
// Nothing else is ever removed: not a user's file at a recorded path, nor
// a file changed since. An apply that ends with an error before its commit
// takes back the record of the paths it did not write; a stale record
// never matches and the next commit drops it. Cancellation (Ctrl-C) is
// checked between steps: the step under way finishes, the rest does not
// start.
package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/safefile"
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
	// Before anything is written, the leftovers of an interrupted apply go
	// (only files that still hold the bytes recorded for them and that no
	// resource owns or this plan writes; DESIGN §9).
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w before building: %v", ErrInterrupted, err)
	}
	pending, err := db.Pending()
	if err != nil {
		return nil, fmt.Errorf("reading state: %w", err)
	}
	if _, err := removeLeftovers(opts.Dir, plan, pending, progress); err != nil {
		return nil, err
	}
	// Artifacts written to paths state does not own yet (a new agent, a
	// new -out-dir) are held in memory once built, until their digests are
	// recorded as pending in one small transaction; only then are they
	// renamed into place. If this apply dies before its commit, the next
	// one removes the files that still hold exactly those bytes. Applies
	// that only rewrite owned paths, and no-op applies, record nothing.
	owned := planner.OwnedArtifacts(opts.Dir, plan.Applied)
	isNew := make([]bool, len(build))
	var builtNew sync.WaitGroup
	for i, a := range build {
		if isNew[i] = !owned.Contains(opts.Dir, plan.ArtifactPath(a.Name)); isNew[i] {
			builtNew.Add(1)
		}
	}
	// recorded is closed once the new paths' record is written (recordOK)
	// or will not be (a build failed, or the apply was interrupted).
	recorded := make(chan struct{})
	var recordOK bool
	var record map[string][]string // what this apply recorded, nil if nothing

	// The agent.json entries the artifacts share are encoded once, on
	// every core, before they are built side by side.
	names := make([]string, len(build))
	for i, a := range build {
		names[i] = a.Name
	}
	plan.EncodeArtifactEntries(names)
	built := make([]state.Artifact, len(build))
	digests := make([]string, len(build))
	errs := make([]error, len(build))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	writing := make(chan struct{}, writeSlots())
	var wg sync.WaitGroup
	for i, a := range build {
		wg.Add(1)
		go func() {
			defer wg.Done()
			newDone := func() {
				if isNew[i] {
					builtNew.Done()
				}
			}
			// A build slot is held while the artifact is built, not while
			// it is written and synced: that time is another artifact's
			// to build. A write slot is taken before the build slot is
			// given up, so that built artifacts cannot pile up in memory
			// waiting to be written (except those to new paths, which
			// wait for the pending record).
			sem <- struct{}{}
			// errs[i] is set before newDone: the recording reads it once
			// every artifact to a new path is built or failed.
			if err := ctx.Err(); err != nil {
				<-sem
				errs[i] = fmt.Errorf("%w before building %s: %v", ErrInterrupted, a.Address, err)
				newDone()
				return
			}
			progress("%s: Building artifact...", a.Address)
			data, err := buildArtifact(plan, a.Name)
			if err != nil {
				<-sem
				errs[i] = fmt.Errorf("building the artifact of %s: %w", a.Address, err)
				newDone()
				return
			}
			if isNew[i] {
				digests[i] = resolve.SHA256(data)
				<-sem
				newDone()
				<-recorded
				if !recordOK {
					errs[i] = errNotRecorded
					return
				}
				// Ctrl-C while recording: nothing new is written, and the
				// record is taken back.
				if err := ctx.Err(); err != nil {
					errs[i] = fmt.Errorf("%w before writing %s: %v", ErrInterrupted, a.Address, err)
					return
				}
				writing <- struct{}{}
			} else {
				writing <- struct{}{}
				<-sem
			}
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
	builtNew.Wait()
	recordErr := func() error {
		for i := range build {
			if isNew[i] && errs[i] != nil {
				return nil // reported below; nothing new is written
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w before writing new artifacts: %v", ErrInterrupted, err)
		}
		want := map[string]string{}
		for i, a := range build {
			if !isNew[i] {
				continue
			}
			path := plan.ArtifactPath(a.Name)
			// A file already holding these very bytes (state rm, another
			// workspace's identical artifact) is not this apply's to
			// remove should it die.
			if d, err := resolve.SHA256File(planner.ArtifactFile(opts.Dir, path)); err == nil && d == digests[i] {
				continue
			}
			want[path] = digests[i]
		}
		if len(want) > 0 {
			// Merged into what earlier interrupted applies recorded, not
			// in place of it: a file that still holds an earlier apply's
			// bytes (one killed at its commit, this one yet to rename its
			// own over it) stays theirs to remove.
			merged := mergePending(opts.Dir, pending, want)
			if !equalPending(merged, pending) {
				if err := setPending(db, merged); err != nil {
					return err
				}
			}
			record = merged
		}
		recordOK = true
		return nil
	}()
	close(recorded)
	wg.Wait()
	// From here, an error before the commit leaves in the record only
	// what this apply did write (a file holding the recorded bytes): a
	// path it never wrote may hold someone else's file.
	committed := false
	defer func() {
		if record != nil && !committed {
			trimPending(db, opts.Dir, record)
		}
	}()
	if recordErr != nil {
		return nil, recordErr
	}
	// The first failure in plan order is the one reported; what was built
	// is consistent (each artifact is written whole) and the state still
	// describes the previous apply.
	for _, err := range errs {
		if err != nil && err != errNotRecorded {
			return nil, err
		}
	}
	for i, a := range build {
		res.Artifacts[a.Name] = built[i]
	}
	// Artifacts of deleted agents go, and so do those a new -out-dir moved,
	// but only once the commit that stops recording them is durable: the
	// commit records them as pending, with the digest state has for them,
	// so that a crash before they are removed leaves them to the next
	// apply. A file the new state owns is kept, also by another name: an
	// old path spelled another way (an -out-dir through a symbolic link to
	// the old directory, its absolute path, a case-insensitive file
	// system) may name one just written, and removing it would remove the
	// new artifact (newOwned compares files by identity).
	newOwned := planner.NewFileSet()
	for _, rec := range res.Artifacts {
		newOwned.Add(opts.Dir, rec.Path)
	}
	var removals []removal
	for _, rc := range plan.ResourceChanges {
		if rc.Type != "agent" || rc.Actions[0] == planner.ActionNoOp || rc.Actions[0] == planner.ActionCreate {
			continue
		}
		if old := plan.Applied.Resources[rc.Address].Artifact; old != nil && !newOwned.Contains(opts.Dir, old.Path) {
			removals = append(removals, removal{address: rc.Address, path: old.Path, digest: old.SHA256, deleted: rc.Actions[0] == planner.ActionDelete})
		}
	}

	// 2. The lockfile.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w before writing %s: %v", ErrInterrupted, lockfile.FileName, err)
	}
	if writeLock {
		if err := writeLockfile(lock); err != nil {
			return nil, unrecorded(err, res.Artifacts) // "writing PATH: why"
		}
		progress("Wrote %s", lockfile.FileName)
	}

	// 3. State, in one transaction, which replaces the pending record.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w before committing state: %v", ErrInterrupted, err)
	}
	commit, err := stateCommit(plan, res.Artifacts, actions)
	if err != nil {
		return nil, err
	}
	for _, r := range removals {
		if r.digest == "" {
			continue
		}
		if commit.Pending == nil {
			commit.Pending = map[string][]string{}
		}
		if !slices.Contains(commit.Pending[r.path], r.digest) {
			commit.Pending[r.path] = append(commit.Pending[r.path], r.digest)
		}
	}
	if err := beforeCommit(); err != nil {
		return nil, err
	}
	meta, err := db.Commit(commit)
	if err != nil {
		return nil, unrecorded(fmt.Errorf("committing state: %w", err), res.Artifacts)
	}
	committed = true
	res.Meta = meta
	if err := afterCommit(); err != nil {
		return nil, err
	}

	// 4. What the new state no longer records goes, if it still holds the
	// bytes state recorded, and the pending record with it.
	for _, r := range removals {
		if !planner.Removable(opts.Dir, r.path, []string{r.digest}, newOwned) {
			if _, err := os.Lstat(planner.ArtifactFile(opts.Dir, r.path)); err == nil {
				progress("%s: Kept %s: it is not the artifact state recorded (changed or replaced since)", r.address, r.path)
			}
			continue
		}
		if err := removeArtifact(opts.Dir, r.path); err != nil {
			return res, fmt.Errorf("state committed (serial %d), but removing the old artifact of %s failed: %w; the next apply removes it", meta.Serial, r.address, err)
		}
		if r.deleted {
			progress("%s: Removed %s", r.address, r.path)
		}
	}
	if len(commit.Pending) > 0 {
		if err := setPending(db, nil); err != nil {
			return res, fmt.Errorf("state committed (serial %d), but %w", meta.Serial, err)
		}
	}
	return res, nil
}

// errNotRecorded is the error of an artifact to a new path that was not
// written because the pending record was not (another artifact's build
// failed, or the apply was interrupted): that error is the one reported.
var errNotRecorded = errors.New("not written: the pending record was not written")

// trimPending replaces the pending record an apply wrote (its own
// entries merged into earlier ones) with the entries whose file holds
// one of the recorded digests, that digest alone, when the apply ends
// with an error before its commit: what this apply did write, and what
// an earlier interrupted apply wrote that is still there. A path no file
// there matches may hold someone else's file. A variable so that tests
// can end an apply as a crash would, without it.
var trimPending = func(db *state.DB, dir string, record map[string][]string) {
	kept := matchingPending(dir, record)
	if !equalPending(kept, record) {
		_ = setPending(db, kept)
	}
}

// matchingPending returns the entries of pending whose file holds one of
// the recorded digests, with that digest only.
func matchingPending(dir string, pending map[string][]string) map[string][]string {
	out := map[string][]string{}
	for path, digests := range pending {
		if d, ok := planner.HeldDigest(dir, path, digests); ok {
			out[path] = []string{d}
		}
	}
	return out
}

// mergePending returns the record an apply writes before renaming its
// artifacts to new paths (want: path → digest): the earlier record's
// entries whose file still holds a recorded digest (matchingPending),
// with want's digests added. Entries whose file no longer matches are
// dropped: the bytes they record are not there.
func mergePending(dir string, prior map[string][]string, want map[string]string) map[string][]string {
	out := matchingPending(dir, prior)
	for path, d := range want {
		if !slices.Contains(out[path], d) {
			out[path] = append(out[path], d)
		}
	}
	return out
}

// equalPending reports whether two pending records are the same.
func equalPending(a, b map[string][]string) bool {
	return maps.EqualFunc(a, b, slices.Equal[[]string])
}

// removal is an artifact the apply removes after its commit.
type removal struct {
	address, path string
	// digest is the artifact's digest as state recorded it: a file that
	// no longer holds those bytes is kept.
	digest string
	// deleted is set for the artifact of a deleted agent (reported as
	// removed); otherwise the agent's artifact moved.
	deleted bool
}

// beforeCommit and afterCommit run just before and just after the state
// commit; tests set them to end an apply there as a crash would.
var (
	beforeCommit = func() error { return nil }
	afterCommit  = func() error { return nil }
)

// writeLockfile is lockfile.WriteChecked; a variable for tests.
var writeLockfile = lockfile.WriteChecked

// unrecorded adds to err, which ends an apply after it wrote artifacts
// and before its commit, which artifacts are now there unrecorded (up to
// three named), and what to do.
func unrecorded(err error, written map[string]state.Artifact) error {
	if len(written) == 0 {
		return err
	}
	paths := make([]string, 0, len(written))
	for _, a := range written {
		paths = append(paths, a.Path)
	}
	slices.Sort(paths)
	named := strings.Join(paths, ", ")
	if len(paths) > 3 {
		named = strings.Join(paths[:3], ", ") + fmt.Sprintf(" and %d more", len(paths)-3)
	}
	return fmt.Errorf("%w; the %d %s this apply wrote (%s) %s not recorded in state, so serve and invoke refuse those that replaced recorded ones, and the next plan shows them as changes: fix the cause and run agentform apply again",
		err, len(paths), map[bool]string{true: "artifact", false: "artifacts"}[len(paths) == 1], named, map[bool]string{true: "is", false: "are"}[len(paths) == 1])
}

// setPending is state.DB.SetPending; a variable for tests.
var setPending = (*state.DB).SetPending

// RemoveLeftovers removes the leftover artifacts of an interrupted apply
// (planner.Plan.LeftoverArtifacts of the state's pending record) and
// clears the record, for a plan that has nothing else to apply: Apply
// does the same before it builds. It returns the paths it removed.
func RemoveLeftovers(db *state.DB, plan *planner.Plan, opts Options) ([]string, error) {
	pending, err := db.Pending()
	if err != nil {
		return nil, fmt.Errorf("reading state: %w", err)
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	removed, err := removeLeftovers(opts.Dir, plan, pending, progress)
	if err != nil {
		return removed, err
	}
	if len(pending) > 0 {
		if err := setPending(db, nil); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// removeLeftovers removes plan.LeftoverArtifacts(dir, pending): files an
// interrupted apply wrote, or meant to remove, that still hold the bytes
// recorded for them, that no resource in state owns and this plan does
// not write again (compared by file identity, not by name).
func removeLeftovers(dir string, plan *planner.Plan, pending map[string][]string, progress func(string, ...any)) ([]string, error) {
	var removed []string
	for _, path := range plan.LeftoverArtifacts(dir, pending) {
		if err := removeArtifact(dir, path); err != nil {
			return removed, fmt.Errorf("removing %s, left by an interrupted apply: %w", path, err)
		}
		removed = append(removed, path)
		progress("Removed %s (left by an interrupted apply)", path)
	}
	return removed, nil
}

// buildArtifact builds agent's artifact in memory; a variable for tests.
var buildArtifact = buildArtifactData

func buildArtifactData(plan *planner.Plan, agent string) ([]byte, error) {
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
	c.Tools = make([]string, len(tools))
	for i, t := range tools {
		c.Tools[i] = t.Name
	}
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
	if err := os.Remove(planner.ArtifactFile(dir, path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
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
	safefile.RemoveMatching(workspace, "."+lockfile.FileName+".tmp*")
	dirs := map[string]bool{}
	for _, a := range plan.Agents {
		dir := filepath.Dir(filepath.FromSlash(plan.ArtifactPath(a.Name)))
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(workspace, dir)
		}
		dirs[dir] = true
	}
	for dir := range dirs {
		safefile.RemoveMatching(dir, ".*.agent.tgz.tmp*")
	}
}
