package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

const extraAgent = `
agent "extra" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`

var errCrash = errors.New("simulated crash")

// crashAt makes the next apply end at hook (beforeCommit or afterCommit)
// as if the process died there: nothing after it runs.
func crashAt(t *testing.T, hook *func() error) {
	t.Helper()
	*hook = func() error { return errCrash }
	trim := trimPending
	trimPending = func(*state.DB, string, map[string][]string) {}
	t.Cleanup(func() { *hook = func() error { return nil }; trimPending = trim })
}

// planIn plans dir against its state with outDir.
func planIn(t *testing.T, dir, outDir string) (*planner.Plan, *state.DB) {
	t.Helper()
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	db, err := state.Open(dir, state.Options{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	prior, err := planner.AppliedFromState(db)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	lock, _ := lockfile.Load(dir)
	ws, d := resolve.Run(context.Background(), cfg, resolve.Options{Lock: lock, Env: os.LookupEnv})
	if d.HasErrors() {
		db.Close()
		t.Fatal(d)
	}
	p := planner.New(context.Background(), cfg, planner.Options{Resolution: ws, Lock: lock, Applied: prior, OutDir: outDir})
	if !p.Applyable {
		db.Close()
		t.Fatal(p.Diagnostics)
	}
	return p, db
}

// applyIn plans dir with outDir and applies the plan as the CLI does: a
// plan whose only work is leftovers removes them without a commit.
func applyIn(t *testing.T, dir, outDir string) (*planner.Plan, error) {
	t.Helper()
	p, db := planIn(t, dir, outDir)
	defer db.Close()
	if !p.HasChanges() && len(p.LockChanges) == 0 {
		_, err := RemoveLeftovers(db, p, Options{Dir: dir, WriteLock: true})
		return p, err
	}
	_, err := Apply(context.Background(), db, p, Options{Dir: dir, WriteLock: true})
	return p, err
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// userFiles puts files of the user's own in dist: agentform never wrote
// them and must never remove them, even one named like an artifact.
func userFiles(t *testing.T, dir string) []string {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(dir, "dist"), 0o755))
	var paths []string
	for _, name := range []string{"README.txt", "mine.agent.tgz"} {
		p := filepath.Join(dir, "dist", name)
		must(t, os.WriteFile(p, []byte("the user's own"), 0o644))
		paths = append(paths, p)
	}
	return paths
}

func checkUserFiles(t *testing.T, paths []string) {
	t.Helper()
	for _, p := range paths {
		if !exists(t, p) {
			t.Errorf("%s, a file agentform did not write\ngot:  removed\nwant: kept", p)
		}
	}
}

func pendingOf(t *testing.T, dir string) map[string][]string {
	t.Helper()
	db, err := state.Open(dir, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := db.Pending()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestApplyCrashBeforeCommitNewAgentLeavesNoOrphan: a new agent's artifact
// is in place when an apply dies at its commit; once the agent is removed
// from the configuration, the next plan lists the artifact as a leftover
// and the next apply removes it, and nothing else.
func TestApplyCrashBeforeCommitNewAgentLeavesNoOrphan(t *testing.T) {
	dir := newWorkspace(t)
	mine := userFiles(t, dir)
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(dir, "extra.acl")
	must(t, os.WriteFile(extra, []byte(extraAgent), 0o644))
	func() {
		crashAt(t, &beforeCommit)
		if _, err := applyIn(t, dir, ""); !errors.Is(err, errCrash) {
			t.Fatalf("got: %v\nwant: the simulated crash", err)
		}
		beforeCommit = func() error { return nil }
	}()
	artifactPath := filepath.Join(dir, "dist", "extra.agent.tgz")
	if !exists(t, artifactPath) {
		t.Fatal("the crashed apply did not write the new agent's artifact; the test no longer tests anything")
	}
	must(t, os.Remove(extra))

	p, db := planIn(t, dir, "")
	db.Close()
	if want := []string{"dist/extra.agent.tgz"}; p.HasChanges() || !slices.Equal(p.Leftovers, want) {
		t.Fatalf("plan after the crash\ngot:  changes %v, leftovers %v\nwant: no resource changes, leftovers %v", p.HasChanges(), p.Leftovers, want)
	}
	if _, err := applyIn(t, dir, ""); err != nil {
		t.Fatal(err)
	}
	if exists(t, artifactPath) {
		t.Errorf("artifact of the agent no longer configured\ngot:  still in dist\nwant: removed")
	}
	for _, a := range []string{"a", "b"} {
		if !exists(t, filepath.Join(dir, "dist", a+".agent.tgz")) {
			t.Errorf("artifact of %s\ngot:  removed\nwant: kept", a)
		}
	}
	checkUserFiles(t, mine)
	if got := pendingOf(t, dir); len(got) != 0 {
		t.Errorf("pending record\ngot:  %v\nwant: cleared", got)
	}
	p, db = planIn(t, dir, "")
	db.Close()
	if p.HasChanges() || len(p.Leftovers) > 0 {
		t.Errorf("plan after the cleanup\ngot:  %+v, leftovers %v\nwant: no changes", p.ResourceChanges, p.Leftovers)
	}
}

// TestApplyAfterCrashKeepsArtifactItRebuilds: when the configuration
// still has the agent, the next apply rebuilds its artifact rather than
// listing it as a leftover.
func TestApplyAfterCrashKeepsArtifactItRebuilds(t *testing.T) {
	dir := newWorkspace(t)
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "extra.acl"), []byte(extraAgent), 0o644))
	crashAt(t, &beforeCommit)
	if _, err := applyIn(t, dir, ""); !errors.Is(err, errCrash) {
		t.Fatalf("got: %v\nwant: the simulated crash", err)
	}
	beforeCommit = func() error { return nil }
	p, err := applyIn(t, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Leftovers) != 0 {
		t.Errorf("leftovers\ngot:  %v\nwant: none (the artifact is built again)", p.Leftovers)
	}
	if !exists(t, filepath.Join(dir, "dist", "extra.agent.tgz")) {
		t.Error("the new agent's artifact is missing")
	}
	if got := pendingOf(t, dir); len(got) != 0 {
		t.Errorf("pending record\ngot:  %v\nwant: cleared by the commit", got)
	}
}

// TestApplyCrashMovingOutDir: an apply to a new -out-dir that dies at its
// commit leaves the old directory whole (state still owns it) and the new
// one's files as leftovers, which the next plain apply removes; one that
// dies after its commit leaves the old directory's files as leftovers.
func TestApplyCrashMovingOutDir(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hook      *func() error
		owner     string // where state's artifacts are after the crash
		leftovers []string
	}{
		{"before commit", &beforeCommit, "dist", []string{"build/a.agent.tgz", "build/b.agent.tgz"}},
		{"after commit", &afterCommit, "build", []string{"dist/a.agent.tgz", "dist/b.agent.tgz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newWorkspace(t)
			mine := userFiles(t, dir)
			if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			crashAt(t, tc.hook)
			if _, err := applyIn(t, dir, "build"); !errors.Is(err, errCrash) {
				t.Fatalf("got: %v\nwant: the simulated crash", err)
			}
			*tc.hook = func() error { return nil }
			for _, d := range []string{"dist", "build"} {
				for _, a := range []string{"a", "b"} {
					if !exists(t, filepath.Join(dir, d, a+".agent.tgz")) {
						t.Errorf("after the crash\ngot:  %s/%s.agent.tgz missing\nwant: both directories whole", d, a)
					}
				}
			}
			p, db := planIn(t, dir, "")
			db.Close()
			if p.HasChanges() || !slices.Equal(p.Leftovers, tc.leftovers) {
				t.Fatalf("plan after the crash\ngot:  %+v, leftovers %v\nwant: no resource changes, leftovers %v", p.ResourceChanges, p.Leftovers, tc.leftovers)
			}
			if _, err := applyIn(t, dir, ""); err != nil {
				t.Fatal(err)
			}
			gone := "build"
			if tc.owner == "build" {
				gone = "dist"
			}
			for _, a := range []string{"a", "b"} {
				if !exists(t, filepath.Join(dir, tc.owner, a+".agent.tgz")) {
					t.Errorf("%s/%s.agent.tgz, which state owns\ngot:  removed\nwant: kept", tc.owner, a)
				}
				if exists(t, filepath.Join(dir, gone, a+".agent.tgz")) {
					t.Errorf("%s/%s.agent.tgz, which no resource owns\ngot:  still there\nwant: removed", gone, a)
				}
			}
			checkUserFiles(t, mine)
			p, db = planIn(t, dir, "")
			db.Close()
			if p.HasChanges() || len(p.Leftovers) > 0 {
				t.Errorf("plan after the cleanup\ngot:  %+v, leftovers %v\nwant: no changes", p.ResourceChanges, p.Leftovers)
			}
			if got := pendingOf(t, dir); len(got) != 0 {
				t.Errorf("pending record\ngot:  %v\nwant: cleared", got)
			}
		})
	}
}

// TestApplyCrashAfterCommitDeletedAgent: the artifact of a deleted agent
// goes after the commit; a crash in between leaves it to the next apply.
func TestApplyCrashAfterCommitDeletedAgent(t *testing.T) {
	dir := newWorkspace(t)
	mine := userFiles(t, dir)
	extra := filepath.Join(dir, "extra.acl")
	must(t, os.WriteFile(extra, []byte(extraAgent), 0o644))
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	must(t, os.Remove(extra))
	crashAt(t, &afterCommit)
	if _, err := applyIn(t, dir, ""); !errors.Is(err, errCrash) {
		t.Fatalf("got: %v\nwant: the simulated crash", err)
	}
	afterCommit = func() error { return nil }
	p, err := applyIn(t, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dist/extra.agent.tgz"}; !slices.Equal(p.Leftovers, want) {
		t.Errorf("leftovers\ngot:  %v\nwant: %v", p.Leftovers, want)
	}
	if exists(t, filepath.Join(dir, "dist", "extra.agent.tgz")) {
		t.Error("the deleted agent's artifact is still there")
	}
	checkUserFiles(t, mine)
}

// TestApplyInPlaceRecordsNothingPending: an apply that only rewrites
// artifacts state already owns records no pending paths, and one that
// finished leaves none.
func TestApplyInPlaceRecordsNothingPending(t *testing.T) {
	dir := newWorkspace(t)
	var recorded []map[string][]string
	setPending = func(db *state.DB, paths map[string][]string) error {
		recorded = append(recorded, paths)
		return db.SetPending(paths)
	}
	t.Cleanup(func() { setPending = (*state.DB).SetPending })
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 1 || len(recorded[0]) != 2 {
		t.Fatalf("first apply's pending records\ngot:  %v\nwant: one, of both new artifacts", recorded)
	}
	recorded = nil
	// Drift: an artifact changed on disk is rebuilt in place.
	must(t, os.WriteFile(filepath.Join(dir, "dist", "a.agent.tgz"), []byte("edited"), 0o644))
	p, _, err := planAndApply(t, context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasChanges() {
		t.Fatal("got: no changes\nwant: the drifted artifact rebuilt")
	}
	if len(recorded) != 0 {
		t.Errorf("pending records of an in-place apply\ngot:  %v\nwant: none (no extra transaction)", recorded)
	}
	if got := pendingOf(t, dir); len(got) != 0 {
		t.Errorf("pending record\ngot:  %v\nwant: none", got)
	}
}

// TestApplyMoveToSameDirKeepsArtifact: an -out-dir that names the
// artifacts' directory another way (absolute) rewrites them in place; the
// old path is the same file and is not removed after the commit.
func TestApplyMoveToSameDirKeepsArtifact(t *testing.T) {
	dir := newWorkspace(t)
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := applyIn(t, dir, filepath.Join(dir, "dist")); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"a", "b"} {
		if !exists(t, filepath.Join(dir, "dist", a+".agent.tgz")) {
			t.Errorf("artifact of %s\ngot:  removed after being written\nwant: kept", a)
		}
	}
}

// applyInCtx is applyIn under ctx.
func applyInCtx(t *testing.T, ctx context.Context, dir, outDir string) (*planner.Plan, error) {
	t.Helper()
	p, db := planIn(t, dir, outDir)
	defer db.Close()
	if !p.HasChanges() && len(p.LockChanges) == 0 {
		_, err := RemoveLeftovers(db, p, Options{Dir: dir, WriteLock: true})
		return p, err
	}
	_, err := Apply(ctx, db, p, Options{Dir: dir, WriteLock: true})
	return p, err
}

// afterRecording runs then right after an apply records its pending
// artifacts, before any of them is written.
func afterRecording(t *testing.T, then func() error) {
	t.Helper()
	setPending = func(db *state.DB, p map[string][]string) error {
		if err := db.SetPending(p); err != nil {
			return err
		}
		if len(p) > 0 {
			return then()
		}
		return nil
	}
	t.Cleanup(func() { setPending = (*state.DB).SetPending })
}

func checkContent(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("%s, the user's file\ngot:  %q (%v)\nwant: %q, kept", path, b, err, want)
	}
}

// TestInterruptedApplyKeepsUserFileAtPendingPath: an apply to a new
// -out-dir that holds a file of the user's named like an artifact, ended
// after recording its pending artifacts and before writing any (Ctrl-C,
// or a kill that leaves the record as it is), never makes a later apply
// remove that file; Ctrl-C also takes back the record.
func TestInterruptedApplyKeepsUserFileAtPendingPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		kill bool
	}{{"ctrl-c", false}, {"kill", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newWorkspace(t)
			if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			mine := filepath.Join(dir, "release", "a.agent.tgz")
			must(t, os.MkdirAll(filepath.Dir(mine), 0o755))
			must(t, os.WriteFile(mine, []byte("mine\n"), 0o644))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.kill {
				crashAt(t, &beforeCommit) // also: no trimming, as a kill
				afterRecording(t, func() error { return errCrash })
			} else {
				afterRecording(t, func() error { cancel(); return nil })
			}
			_, err := applyInCtx(t, ctx, dir, "release")
			if err == nil {
				t.Fatal("got: the apply finished\nwant: interrupted after recording")
			}
			setPending = (*state.DB).SetPending
			beforeCommit = func() error { return nil }
			checkContent(t, mine, "mine\n")
			if !tc.kill {
				if got := pendingOf(t, dir); len(got) != 0 {
					t.Errorf("pending record after Ctrl-C before any write\ngot:  %v\nwant: cleared", got)
				}
			} else if got := pendingOf(t, dir); len(got) == 0 {
				t.Fatal("got: no pending record after the kill\nwant: the record as written; the test no longer tests anything")
			}
			p, db := planIn(t, dir, "")
			db.Close()
			if len(p.Leftovers) != 0 {
				t.Errorf("leftovers\ngot:  %v\nwant: none (the file is not what the apply would have written)", p.Leftovers)
			}
			for i, out := range []string{"", "release", ""} {
				if _, err := applyIn(t, dir, out); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					checkContent(t, mine, "mine\n")
				}
			}
			if got := pendingOf(t, dir); len(got) != 0 {
				t.Errorf("pending record\ngot:  %v\nwant: cleared", got)
			}
		})
	}
}

// TestStaleRecordNeverRemoves: a pending record whose files do not hold
// the recorded bytes (a user's file, an artifact state owns, a file
// changed since) causes no removal, even by a no-op apply, and the next
// apply that writes state drops it.
func TestStaleRecordNeverRemoves(t *testing.T) {
	dir := newWorkspace(t)
	mine := userFiles(t, dir)
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "dist", "a.agent.tgz")
	aDigest, err := resolve.SHA256File(a)
	must(t, err)
	db, err := state.Open(dir, state.Options{Operation: "apply"})
	must(t, err)
	must(t, db.SetPending(map[string][]string{
		"dist/mine.agent.tgz": {aDigest},                     // a user's file, other bytes
		"dist/a.agent.tgz":    {aDigest},                     // state owns it
		"dist/gone.agent.tgz": {aDigest},                     // no file
		"dist/README.txt":     {resolve.SHA256([]byte("x"))}, // other bytes
	}))
	db.Close()
	p, db := planIn(t, dir, "")
	db.Close()
	if p.HasChanges() || len(p.Leftovers) != 0 {
		t.Fatalf("plan with a stale record\ngot:  changes %v, leftovers %v\nwant: none", p.HasChanges(), p.Leftovers)
	}
	if _, err := applyIn(t, dir, ""); err != nil { // no-op
		t.Fatal(err)
	}
	checkUserFiles(t, mine)
	if !exists(t, a) {
		t.Fatal("an artifact state owns was removed")
	}
	// Drift makes the next apply write state: the record goes.
	must(t, os.WriteFile(a, []byte("edited"), 0o644))
	if _, err := applyIn(t, dir, ""); err != nil {
		t.Fatal(err)
	}
	checkUserFiles(t, mine)
	if got := pendingOf(t, dir); len(got) != 0 {
		t.Errorf("stale pending record after an apply that wrote state\ngot:  %v\nwant: dropped", got)
	}
}

// TestSymlinkOutDir: with dist linked as link, the artifacts state owns
// in dist are the files link names: an apply to -out-dir=link (plain, or
// crashed before or after its commit, or a record naming link's files)
// never removes them.
func TestSymlinkOutDir(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook *func() error
	}{{"plain", nil}, {"crash before commit", &beforeCommit}, {"crash after commit", &afterCommit}, {"record", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newWorkspace(t)
			if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			must(t, os.Symlink("dist", filepath.Join(dir, "link")))
			if tc.name == "record" {
				d, err := resolve.SHA256File(filepath.Join(dir, "dist", "a.agent.tgz"))
				must(t, err)
				db, err := state.Open(dir, state.Options{Operation: "apply"})
				must(t, err)
				must(t, db.SetPending(map[string][]string{"link/a.agent.tgz": {d}, "link/../dist/a.agent.tgz": {d}}))
				db.Close()
			} else {
				if tc.hook != nil {
					crashAt(t, tc.hook)
				}
				if _, err := applyIn(t, dir, "link"); tc.hook == nil && err != nil || tc.hook != nil && !errors.Is(err, errCrash) {
					t.Fatalf("apply -out-dir=link\ngot:  %v", err)
				}
				if tc.hook != nil {
					*tc.hook = func() error { return nil }
				}
			}
			check := func(when string) {
				t.Helper()
				for _, a := range []string{"a", "b"} {
					if !exists(t, filepath.Join(dir, "dist", a+".agent.tgz")) {
						t.Fatalf("%s\ngot:  dist/%s.agent.tgz removed\nwant: kept", when, a)
					}
				}
			}
			check("after apply -out-dir=link")
			for _, out := range []string{"", "link", ""} {
				p, db := planIn(t, dir, out)
				db.Close()
				if len(p.Leftovers) != 0 {
					t.Errorf("leftovers with -out-dir=%q\ngot:  %v\nwant: none (they are the artifacts)", out, p.Leftovers)
				}
				if _, err := applyIn(t, dir, out); err != nil {
					t.Fatal(err)
				}
				check("after apply -out-dir=" + out)
			}
		})
	}
}

// TestLeftoversWithResourceChanges: leftovers and resource changes in one
// plan: the apply removes the leftovers and applies the changes.
func TestLeftoversWithResourceChanges(t *testing.T) {
	dir := newWorkspace(t)
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(dir, "extra.acl")
	must(t, os.WriteFile(extra, []byte(extraAgent), 0o644))
	crashAt(t, &beforeCommit)
	if _, err := applyIn(t, dir, ""); !errors.Is(err, errCrash) {
		t.Fatalf("got: %v\nwant: the simulated crash", err)
	}
	beforeCommit = func() error { return nil }
	must(t, os.Remove(extra))
	a := filepath.Join(dir, "dist", "a.agent.tgz")
	must(t, os.WriteFile(a, []byte("edited"), 0o644))
	p, err := applyIn(t, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasChanges() || !slices.Equal(p.Leftovers, []string{"dist/extra.agent.tgz"}) {
		t.Fatalf("plan\ngot:  changes %v, leftovers %v\nwant: the drift and the leftover", p.HasChanges(), p.Leftovers)
	}
	if exists(t, filepath.Join(dir, "dist", "extra.agent.tgz")) {
		t.Error("the leftover is still there")
	}
	if b, _ := os.ReadFile(a); string(b) == "edited" {
		t.Error("the drifted artifact was not rebuilt")
	}
	if got := pendingOf(t, dir); len(got) != 0 {
		t.Errorf("pending record\ngot:  %v\nwant: cleared", got)
	}
}

// TestPendingClearedAfterMoveAndDelete: applies that move the artifacts or
// delete an agent leave no pending record behind, and remove the old
// files.
func TestPendingClearedAfterMoveAndDelete(t *testing.T) {
	dir := newWorkspace(t)
	extra := filepath.Join(dir, "extra.acl")
	must(t, os.WriteFile(extra, []byte(extraAgent), 0o644))
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := applyIn(t, dir, "build"); err != nil {
		t.Fatal(err)
	}
	if got := pendingOf(t, dir); len(got) != 0 {
		t.Errorf("pending record after a move\ngot:  %v\nwant: cleared", got)
	}
	if exists(t, filepath.Join(dir, "dist", "a.agent.tgz")) {
		t.Error("the moved artifact's old file is still there")
	}
	must(t, os.Remove(extra))
	if _, err := applyIn(t, dir, "build"); err != nil {
		t.Fatal(err)
	}
	if got := pendingOf(t, dir); len(got) != 0 {
		t.Errorf("pending record after a delete\ngot:  %v\nwant: cleared", got)
	}
	if exists(t, filepath.Join(dir, "build", "extra.agent.tgz")) {
		t.Error("the deleted agent's artifact is still there")
	}
}

// TestBuildErrorTrimsRecord: an apply whose build fails writes no new
// artifact and takes back its record.
func TestBuildErrorTrimsRecord(t *testing.T) {
	dir := newWorkspace(t)
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "release", "b.agent.tgz")
	must(t, os.MkdirAll(filepath.Dir(mine), 0o755))
	must(t, os.WriteFile(mine, []byte("mine\n"), 0o644))
	failWrite := errors.New("disk full")
	orig := writeArtifactFile
	writeArtifactFile = func(path string, data []byte) error {
		if filepath.Base(path) == "b.agent.tgz" {
			return failWrite
		}
		return orig(path, data)
	}
	t.Cleanup(func() { writeArtifactFile = orig })
	if _, err := applyIn(t, dir, "release"); !errors.Is(err, failWrite) {
		t.Fatalf("got: %v\nwant: the write error", err)
	}
	writeArtifactFile = orig
	got := pendingOf(t, dir)
	if _, ok := got["release/b.agent.tgz"]; ok || len(got) != 1 {
		t.Errorf("pending record after a failed write\ngot:  %v\nwant: release/a.agent.tgz only (written)", got)
	}
	if _, err := applyIn(t, dir, ""); err != nil {
		t.Fatal(err)
	}
	checkContent(t, mine, "mine\n")
	if exists(t, filepath.Join(dir, "release", "a.agent.tgz")) {
		t.Error("release/a.agent.tgz, written by the failed apply, is still there")
	}
}

// TestDeleteKeepsReplacedArtifact: a deleted agent's artifact that no
// longer holds the bytes state recorded (replaced by a file of the
// user's) is kept, and so is one a crash left to the next apply.
func TestDeleteKeepsReplacedArtifact(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "crash after commit"}[crash], func(t *testing.T) {
			dir := newWorkspace(t)
			extra := filepath.Join(dir, "extra.acl")
			must(t, os.WriteFile(extra, []byte(extraAgent), 0o644))
			if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			must(t, os.Remove(extra))
			mine := filepath.Join(dir, "dist", "extra.agent.tgz")
			must(t, os.WriteFile(mine, []byte("mine\n"), 0o644))
			if crash {
				crashAt(t, &afterCommit)
			}
			if _, err := applyIn(t, dir, ""); crash != errors.Is(err, errCrash) || !crash && err != nil {
				t.Fatal(err)
			}
			afterCommit = func() error { return nil }
			if _, err := applyIn(t, dir, ""); err != nil {
				t.Fatal(err)
			}
			checkContent(t, mine, "mine\n")
		})
	}
}

// TestStateRmThenInterruptedApply: after "state rm agent.a", the next
// apply writes dist/a.agent.tgz again, a path state no longer owns; the
// file there already holds those bytes, so the apply does not record it,
// and a crash before its commit never makes a later apply remove it.
func TestStateRmThenInterruptedApply(t *testing.T) {
	dir := newWorkspace(t)
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	db, err := state.Open(dir, state.Options{Operation: "state rm"})
	must(t, err)
	if _, err := db.Remove("agent.a"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	crashAt(t, &beforeCommit)
	if _, err := applyIn(t, dir, ""); !errors.Is(err, errCrash) {
		t.Fatalf("got: %v\nwant: the simulated crash", err)
	}
	beforeCommit = func() error { return nil }
	if got := pendingOf(t, dir); len(got) != 0 {
		t.Errorf("pending record\ngot:  %v\nwant: none (the file held the bytes already)", got)
	}
	if _, err := applyIn(t, dir, ""); err != nil {
		t.Fatal(err)
	}
	if !exists(t, filepath.Join(dir, "dist", "a.agent.tgz")) {
		t.Error("dist/a.agent.tgz\ngot:  removed\nwant: kept")
	}
}
