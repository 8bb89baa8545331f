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
	t.Cleanup(func() { *hook = func() error { return nil } })
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

func pendingOf(t *testing.T, dir string) []string {
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
	var recorded [][]string
	setPending = func(db *state.DB, paths []string) error {
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
