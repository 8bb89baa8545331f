package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/planner"
)

// TestSecondInterruptedApplyKeepsEarlierLeftover: an apply killed at its
// commit leaves dist/extra.agent.tgz (D1) recorded; the configuration
// changes and a second apply is interrupted (killed at the rename of the
// new bytes D2, or Ctrl-C'd while recording) with the file still D1. Once
// the agent is removed from the configuration, the file is a leftover and
// the next apply removes it; a file of the user's with other bytes put in
// its place is kept.
func TestSecondInterruptedApplyKeepsEarlierLeftover(t *testing.T) {
	for _, how := range []string{"kill at rename", "ctrl-c while recording"} {
		for _, user := range []bool{false, true} {
			name := how
			if user {
				name += ", then a user's file"
			}
			t.Run(name, func(t *testing.T) {
				dir := newWorkspace(t)
				mine := userFiles(t, dir)
				if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
					t.Fatal(err)
				}
				extra := filepath.Join(dir, "extra.acl")
				artifactPath := filepath.Join(dir, "dist", "extra.agent.tgz")
				must(t, os.WriteFile(extra, []byte(extraAgent), 0o644))
				trim := trimPending
				crashAt(t, &beforeCommit)
				if _, err := applyIn(t, dir, ""); !errors.Is(err, errCrash) {
					t.Fatalf("apply #1\ngot:  %v\nwant: the simulated crash", err)
				}
				beforeCommit, trimPending = func() error { return nil }, trim
				d1, err := resolve.SHA256File(artifactPath)
				must(t, err)

				must(t, os.WriteFile(extra, []byte(strings.Replace(extraAgent, `["shell"]`, `["shell", "net"]`, 1)), 0o644))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				switch how {
				case "kill at rename":
					crashAt(t, &beforeCommit) // no trimming, as a kill
					orig := writeArtifactFile
					writeArtifactFile = func(path string, data []byte) error {
						if filepath.Base(path) == "extra.agent.tgz" {
							return errCrash
						}
						return orig(path, data)
					}
					t.Cleanup(func() { writeArtifactFile = orig })
					if _, err := applyIn(t, dir, ""); !errors.Is(err, errCrash) {
						t.Fatalf("apply #2\ngot:  %v\nwant: the simulated crash", err)
					}
					writeArtifactFile = orig
					beforeCommit, trimPending = func() error { return nil }, trim
					got := pendingOf(t, dir)["dist/extra.agent.tgz"]
					if len(got) != 2 || !slices.Contains(got, d1) {
						t.Errorf("record after apply #2\ngot:  %v\nwant: %s and the new digest", got, d1)
					}
				case "ctrl-c while recording":
					afterRecording(t, func() error { cancel(); return nil })
					if _, err := applyInCtx(t, ctx, dir, ""); !errors.Is(err, ErrInterrupted) {
						t.Fatalf("apply #2\ngot:  %v\nwant: interrupted", err)
					}
					setPending = (*state.DB).SetPending
					if got := pendingOf(t, dir)["dist/extra.agent.tgz"]; !slices.Equal(got, []string{d1}) {
						t.Errorf("record after apply #2, trimmed\ngot:  %v\nwant: [%s] (the file still holds apply #1's bytes)", got, d1)
					}
				}
				if d, err := resolve.SHA256File(artifactPath); err != nil || d != d1 {
					t.Fatalf("dist/extra.agent.tgz after apply #2\ngot:  %s (%v)\nwant: apply #1's bytes; the test no longer tests anything", d, err)
				}
				if user {
					must(t, os.WriteFile(artifactPath, []byte("mine\n"), 0o644))
				}

				must(t, os.Remove(extra))
				p, db := planIn(t, dir, "")
				db.Close()
				var want []string
				if !user {
					want = []string{"dist/extra.agent.tgz"}
				}
				if p.HasChanges() || !slices.Equal(p.Leftovers, want) {
					t.Fatalf("plan with the agent removed\ngot:  changes %v, leftovers %v\nwant: no resource changes, leftovers %v", p.HasChanges(), p.Leftovers, want)
				}
				if _, err := applyIn(t, dir, ""); err != nil {
					t.Fatal(err)
				}
				if user {
					checkContent(t, artifactPath, "mine\n")
				} else if exists(t, artifactPath) {
					t.Error("dist/extra.agent.tgz, apply #1's artifact of an agent no longer configured\ngot:  still there\nwant: removed")
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
			})
		}
	}
}

// TestInterruptedNewPathErrors: an apply to new paths whose build fails,
// or that is cancelled before building, reports that error, writes
// nothing there and records nothing (run with -race: each error is
// stored before the recording reads it).
func TestInterruptedNewPathErrors(t *testing.T) {
	for _, how := range []string{"build error", "cancelled"} {
		t.Run(how, func(t *testing.T) {
			dir := newWorkspace(t)
			if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := Options{Dir: dir, WriteLock: true}
			failBuild := errors.New("build failed")
			switch how {
			case "build error":
				orig := buildArtifact
				buildArtifact = func(p *planner.Plan, agent string) ([]byte, error) {
					if agent == "b" {
						return nil, failBuild
					}
					return orig(p, agent)
				}
				t.Cleanup(func() { buildArtifact = orig })
			case "cancelled":
				// A leftover to remove first: its progress line is the
				// moment to cancel, after Apply's first check and before
				// any artifact is built.
				ghost := filepath.Join(dir, "dist", "ghost.agent.tgz")
				must(t, os.WriteFile(ghost, []byte("ghost"), 0o644))
				db, err := state.Open(dir, state.Options{Operation: "apply"})
				must(t, err)
				must(t, db.SetPending(map[string][]string{"dist/ghost.agent.tgz": {resolve.SHA256([]byte("ghost"))}}))
				db.Close()
				var once sync.Once
				opts.Progress = func(format string, args ...any) {
					if strings.Contains(format, "interrupted apply") {
						once.Do(cancel)
					}
				}
			}
			p, db := planIn(t, dir, "release")
			_, err := Apply(ctx, db, p, opts)
			db.Close()
			switch how {
			case "build error":
				if !errors.Is(err, failBuild) {
					t.Fatalf("got: %v\nwant: the build error", err)
				}
			case "cancelled":
				if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "before building") {
					t.Fatalf("got: %v\nwant: interrupted before building", err)
				}
			}
			for _, a := range []string{"a", "b"} {
				if exists(t, filepath.Join(dir, "release", a+".agent.tgz")) {
					t.Errorf("release/%s.agent.tgz\ngot:  written\nwant: nothing written to a new path", a)
				}
			}
			if got := pendingOf(t, dir); len(got) != 0 && how == "build error" {
				t.Errorf("pending record\ngot:  %v\nwant: none", got)
			}
		})
	}
}

// TestLeftoverIdentity: a pending path that is a hard link to an artifact
// state owns, or a symbolic link to a file holding the recorded bytes,
// is never removed (nor the link's target), though its bytes match.
func TestLeftoverIdentity(t *testing.T) {
	for _, kind := range []string{"hard link to an owned artifact", "symlink to a copy", "symlink to an owned artifact"} {
		t.Run(kind, func(t *testing.T) {
			dir := newWorkspace(t)
			if _, _, err := planAndApply(t, context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			a := filepath.Join(dir, "dist", "a.agent.tgz")
			data, err := os.ReadFile(a)
			must(t, err)
			digest := resolve.SHA256(data)
			link := filepath.Join(dir, "dist", "extra.agent.tgz")
			target := a
			switch kind {
			case "hard link to an owned artifact":
				must(t, os.Link(a, link))
			case "symlink to a copy":
				target = filepath.Join(dir, "copy.agent.tgz")
				must(t, os.WriteFile(target, data, 0o644))
				must(t, os.Symlink(target, link))
			case "symlink to an owned artifact":
				must(t, os.Symlink(a, link))
			}
			setPendingIn(t, dir, map[string][]string{"dist/extra.agent.tgz": {digest}})
			if got, err := resolve.SHA256File(link); err != nil || got != digest {
				t.Fatalf("the link's bytes\ngot:  %s (%v)\nwant: the recorded digest; the test no longer tests anything", got, err)
			}
			p, db := planIn(t, dir, "")
			db.Close()
			if len(p.Leftovers) != 0 {
				t.Errorf("leftovers\ngot:  %v\nwant: none", p.Leftovers)
			}
			// A no-op apply (leftovers only), then one that writes state
			// (drift) and removes leftovers before building.
			if _, err := applyIn(t, dir, ""); err != nil {
				t.Fatal(err)
			}
			setPendingIn(t, dir, map[string][]string{"dist/extra.agent.tgz": {digest}})
			must(t, os.WriteFile(filepath.Join(dir, "dist", "b.agent.tgz"), []byte("edited"), 0o644))
			if _, err := applyIn(t, dir, ""); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{link, target, a} {
				if _, err := os.Lstat(f); err != nil {
					t.Errorf("%s\ngot:  %v\nwant: kept", f, err)
				}
			}
			if got, err := resolve.SHA256File(a); err != nil || got != digest {
				t.Errorf("dist/a.agent.tgz\ngot:  %s (%v)\nwant: unchanged", got, err)
			}
		})
	}
}

func setPendingIn(t *testing.T, dir string, pending map[string][]string) {
	t.Helper()
	db, err := state.Open(dir, state.Options{Operation: "apply"})
	must(t, err)
	defer db.Close()
	must(t, db.SetPending(pending))
}
