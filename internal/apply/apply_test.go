package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

const workspace = `
agent "a" {
  capabilities = ["shell", "skills"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
agent "b" {
  capabilities = ["web"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
tool "sh" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
  config       = { TOKEN = secret(runtime("APPLY_TEST_TOKEN")) }
}
skill "notes" {
  source = "./skills/notes"
}
`

// planAndApply plans dir against its state and applies the plan.
func planAndApply(t testing.TB, ctx context.Context, dir string) (*planner.Plan, *Result, error) {
	t.Helper()
	return planAndApplyAfter(t, ctx, dir, func(*planner.Plan) {})
}

// planAndApplyAfter is planAndApply with edit run on the plan before it is
// applied.
func planAndApplyAfter(t testing.TB, ctx context.Context, dir string, edit func(*planner.Plan)) (*planner.Plan, *Result, error) {
	t.Helper()
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	db, err := state.Open(dir, state.Options{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	prior, err := planner.AppliedFromState(db)
	if err != nil {
		t.Fatal(err)
	}
	lock, _ := lockfile.Load(dir)
	ws, d := resolve.Run(ctx, cfg, resolve.Options{Lock: lock, Env: os.LookupEnv})
	if d.HasErrors() {
		t.Fatal(d)
	}
	p := planner.New(ctx, cfg, planner.Options{Resolution: ws, Lock: lock, Applied: prior})
	if !p.Applyable {
		t.Fatal(p.Diagnostics)
	}
	edit(p)
	res, err := Apply(ctx, db, p, Options{Dir: dir, WriteLock: true})
	return p, res, err
}

func newWorkspace(t *testing.T) string {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(workspace), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "skills", "notes"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "skills", "notes", "SKILL.md"), []byte("---\nname: notes\ndescription: Take notes.\n---\nWrite.\n"), 0o644))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestApplyWritesArtifactsLockAndState(t *testing.T) {
	t.Setenv("APPLY_TEST_TOKEN", "apply-SECRET-31337")
	dir := newWorkspace(t)
	_, res, err := planAndApply(t, context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 4 || res.Meta.Serial != 1 || res.Meta.Lineage == "" {
		t.Errorf("got: %+v\nwant: 4 added, serial 1, a lineage", res)
	}
	for _, agent := range []string{"a", "b"} {
		path := filepath.Join(dir, "dist", agent+".agent.tgz")
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("artifact %s: %v", agent, err)
		}
		arc, err := artifact.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		lock, _ := lockfile.Load(dir)
		if problems := artifact.Verify(arc, lock); len(problems) > 0 {
			t.Errorf("verify %s: %v", agent, problems)
		}
		doc, err := artifact.ParseAgent(arc.Files["agent.json"])
		if err != nil || doc.Name != agent || len(doc.Matrix) == 0 {
			t.Errorf("agent.json of %s got: %+v (%v)", agent, doc, err)
		}
		if res.Artifacts[agent].SHA256 != resolve.SHA256(mustRead(t, path)) {
			t.Errorf("recorded digest of %s differs from the file", agent)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, lockfile.FileName)); err != nil {
		t.Errorf("lockfile not written: %v", err)
	}
	// No secret anywhere.
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.Contains(string(mustRead(t, path)), "apply-SECRET-31337") {
			t.Errorf("%s contains the secret", path)
		}
		return nil
	})

	// Applying again changes nothing and keeps the artifacts.
	p, res, err := planAndApply(t, context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.HasChanges() || res.Added+res.Changed+res.Destroyed != 0 {
		t.Errorf("second apply got: %+v\nwant: nothing to do", p.ResourceChanges)
	}
}

func TestApplyRemovesDeletedAgentsArtifacts(t *testing.T) {
	dir := newWorkspace(t)
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(workspace, `agent "b" {`, `agent "c" {`, 1)
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(src), 0o644))
	_, res, err := planAndApply(t, context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dist", "b.agent.tgz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got: b's artifact still there (%v)\nwant: removed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dist", "c.agent.tgz")); err != nil {
		t.Errorf("c's artifact: %v", err)
	}
	if res.Destroyed != 1 || res.Added != 1 {
		t.Errorf("got: %+v\nwant: 1 added, 1 destroyed", res)
	}
}

// TestApplyBoundsArtifactWrites applies 3×writeSlots agents with a slow
// disk: several artifacts are written at once, never more than
// writeSlots, and every one is written.
func TestApplyBoundsArtifactWrites(t *testing.T) {
	dir := newWorkspace(t)
	agents := 3 * writeSlots()
	var acl strings.Builder
	acl.WriteString(workspace)
	for i := range agents {
		fmt.Fprintf(&acl, "agent \"extra%02d\" {\n  capabilities = [\"shell\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n", i)
	}
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(acl.String()), 0o644))
	var mu sync.Mutex
	inFlight, most, written := 0, 0, 0
	writeArtifactFile = func(path string, data []byte) error {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			written++
			mu.Unlock()
		}()
		time.Sleep(20 * time.Millisecond)
		return artifact.WriteFile(path, data)
	}
	t.Cleanup(func() { writeArtifactFile = artifact.WriteFile })
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if want := agents + 2; written != want {
		t.Errorf("artifacts written\ngot:  %d\nwant: %d", written, want)
	}
	if most > writeSlots() || most < 2 {
		t.Errorf("artifacts written at once\ngot:  %d\nwant: 2 to %d", most, writeSlots())
	}
}

// TestApplyRefusedLockWritesNothing: a lockfile whose encoding would not
// parse back is refused before any artifact (which would carry its
// digest) is written, and nothing is committed.
func TestApplyRefusedLockWritesNothing(t *testing.T) {
	dir := newWorkspace(t)
	_, _, err := planAndApplyAfter(t, context.Background(), dir, func(p *planner.Plan) {
		bad := *p.Lock
		bad.Tools = map[string]*lockfile.Tool{"sh": {Kind: "bash", Source: "not a hash"}}
		p.Lock = &bad
	})
	if err == nil || !strings.Contains(err.Error(), "refusing to write") {
		t.Fatalf("apply with an invalid lockfile\ngot:  %v\nwant: the lockfile refused", err)
	}
	for _, name := range []string{lockfile.FileName, "dist"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after the refused apply\ngot:  %v\nwant: not written", name, err)
		}
	}
	// Nothing committed, nothing pending: the state database the apply
	// created is gone again.
	db, err := state.Open(dir, state.Options{ReadOnly: true})
	if err == nil {
		defer db.Close()
	}
	if !errors.Is(err, state.ErrNoState) {
		t.Errorf("state after the refused apply\ngot:  %v\nwant: %v", err, state.ErrNoState)
	}
}

func TestApplyInterruptedCommitsNothing(t *testing.T) {
	dir := newWorkspace(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := planAndApplyCancelled(t, ctx, dir)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got: %v\nwant: ErrInterrupted", err)
	}
	db, err := state.Open(dir, state.Options{ReadOnly: true})
	if err == nil {
		meta, _ := db.Meta()
		db.Close()
		if meta.Serial != 0 {
			t.Errorf("got serial %d\nwant: nothing committed", meta.Serial)
		}
	}
}

// TestApplyLockfileWriteFails: the lockfile write failing after the
// artifacts were written fails the apply with an error that says they are
// there and not recorded, and commits nothing.
func TestApplyLockfileWriteFails(t *testing.T) {
	dir := newWorkspace(t)
	writeLockfile = func(lockfile.Checked) error {
		return errors.New("writing agentform.lock.hcl: operation not permitted")
	}
	t.Cleanup(func() { writeLockfile = lockfile.WriteChecked })
	_, _, err := planAndApply(t, context.Background(), dir)
	want := "writing agentform.lock.hcl: operation not permitted; the 2 artifacts this apply wrote (dist/a.agent.tgz, dist/b.agent.tgz) are not recorded in state, so serve and invoke refuse those that replaced recorded ones, and the next plan shows them as changes: fix the cause and run agentform apply again"
	if err == nil || err.Error() != want {
		t.Fatalf("got: %v\nwant: %s", err, want)
	}
	for _, name := range []string{"a.agent.tgz", "b.agent.tgz"} {
		if _, err := os.Stat(filepath.Join(dir, "dist", name)); err != nil {
			t.Errorf("an artifact the error names: %v", err)
		}
	}
	db, err := state.Open(dir, state.Options{ReadOnly: true})
	if err == nil {
		meta, _ := db.Meta()
		db.Close()
		if meta.Serial != 0 {
			t.Errorf("got serial %d\nwant: nothing committed", meta.Serial)
		}
	}
}

// planAndApplyCancelled plans with a live context and applies with ctx.
func planAndApplyCancelled(t *testing.T, ctx context.Context, dir string) (*planner.Plan, *Result, error) {
	t.Helper()
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{})
	p := planner.New(context.Background(), cfg, planner.Options{Resolution: ws})
	db, err := state.Open(dir, state.Options{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := Apply(ctx, db, p, Options{Dir: dir, WriteLock: true})
	return p, res, err
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestApplyRemovesStaleTemps(t *testing.T) {
	dir := newWorkspace(t)
	must(t, os.MkdirAll(filepath.Join(dir, "dist"), 0o755))
	stale := filepath.Join(dir, "dist", ".a.agent.tgz.tmp123456")
	must(t, os.WriteFile(stale, []byte("partial"), 0o644))
	// A killed apply's (or lock's) lockfile temp file, in the workspace.
	staleLock := filepath.Join(dir, ".agentform.lock.hcl.tmp987654")
	must(t, os.WriteFile(staleLock, []byte("partial"), 0o644))
	// Not agentform's: kept.
	mine := filepath.Join(dir, ".agentform.lock.hcl.bak")
	must(t, os.WriteFile(mine, []byte("mine"), 0o644))
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stale, staleLock} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s\ngot: %v\nwant: the killed apply's temp file removed", p, err)
		}
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("%s\ngot: %v\nwant: kept", mine, err)
	}
}

// TestApplyRemovesOnlyItsOwnStaleTemps: a workspace whose path reads as a
// glob pattern ("ws[1]") removes its own temp files, and not those of the
// directories the pattern would match ("ws1"), whose apply may be
// writing them.
func TestApplyRemovesOnlyItsOwnStaleTemps(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "ws[1]")
	other := filepath.Join(root, "ws1")
	for _, d := range []string{dir, other} {
		must(t, os.MkdirAll(filepath.Join(d, "skills", "notes"), 0o755))
		must(t, os.MkdirAll(filepath.Join(d, "dist"), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(workspace), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "skills", "notes", "SKILL.md"), []byte("---\nname: notes\ndescription: Take notes.\n---\nWrite.\n"), 0o644))
	var own, others []string
	for _, d := range []string{dir, other} {
		temps := []string{filepath.Join(d, "dist", ".a.agent.tgz.tmp123456"), filepath.Join(d, ".agentform.lock.hcl.tmp987654")}
		for _, p := range temps {
			must(t, os.WriteFile(p, []byte("partial"), 0o644))
		}
		if d == dir {
			own = temps
		} else {
			others = temps
		}
	}
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range own {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s\ngot: %v\nwant: the killed apply's temp file removed", p, err)
		}
	}
	for _, p := range others {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s\ngot: %v\nwant: another workspace's temp file kept", p, err)
		}
	}
}

func TestApplyMovesArtifactsToANewOutDir(t *testing.T) {
	dir := newWorkspace(t)
	if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cfg, _ := manifest.Load(dir)
	db, err := state.Open(dir, state.Options{Operation: "apply"})
	must(t, err)
	defer db.Close()
	prior, err := planner.AppliedFromState(db)
	if err != nil {
		t.Fatal(err)
	}
	lock, _ := lockfile.Load(dir)
	ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{Lock: lock})

	// Without -out-dir nothing moves.
	if p := planner.New(context.Background(), cfg, planner.Options{Resolution: ws, Lock: lock, Applied: prior}); p.HasChanges() {
		t.Fatalf("got: %+v\nwant: no changes", p.ResourceChanges)
	}
	p := planner.New(context.Background(), cfg, planner.Options{Resolution: ws, Lock: lock, Applied: prior, OutDir: "build/agents"})
	if !p.HasChanges() {
		t.Fatal("got: no changes\nwant: the artifacts move")
	}
	if _, err := Apply(context.Background(), db, p, Options{Dir: dir, WriteLock: true}); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(dir, "build", "agents", agent+".agent.tgz")); err != nil {
			t.Errorf("moved artifact of %s: %v", agent, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "dist", agent+".agent.tgz")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("old artifact of %s still there (%v)", agent, err)
		}
	}
}
