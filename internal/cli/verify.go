package cli

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
	"github.com/agentform/agentform/planner"
)

// VerifyCommand is "agentform verify": check an artifact.
type VerifyCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *VerifyCommand) Synopsis() string { return "Check an agent artifact" }

// Help implements cli.Command.
func (c *VerifyCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] verify [options] ARTIFACT

  Checks dist/<agent>.agent.tgz without extracting it: every entry against
  SHA256SUMS, the digests agent.json records against the files, and
  against the workspace's agentform.lock.hcl. Without a lockfile, an
  artifact that pins nothing matches, and one that pins tools or skills
  is not compared, with a warning. Archives with unsafe entries (absolute
  paths, "..", links, duplicates) are rejected.

  Against the workspace's state too: when it records an agent's artifact at
  this path, the file must hold that agent and be the one the last apply
  wrote (serve makes the same check). A copy elsewhere is checked on its
  own. A state that cannot be read now (an apply holds its lock) is not
  compared, with a warning; only an OK line that ends "it is the artifact
  the last apply wrote" was.

Options:

  -lockfile=false  Do not compare with the workspace's lockfile.
  -state=false     Do not compare with the workspace's state (after an
                   apply that was interrupted between writing artifacts
                   and recording them, the new ones are not recorded yet).
  -no-color        Disable colour.
  -chdir=DIR       Use DIR as the workspace: its lockfile is compared,
                   and a relative ARTIFACT path is read from it.
`) + "\n"
}

// Run implements cli.Command.
func (c *VerifyCommand) Run(args []string) int {
	fs := c.flagSet("verify")
	useLock := fs.Bool("lockfile", true, "compare with the lockfile")
	useState := fs.Bool("state", true, "compare with the state")
	if !c.parseFlagsAnywhere(fs, args, c.Help()) {
		return ExitError
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(c.Stderr, "Error: verify needs one artifact file.\n\n%s", c.Help())
		return ExitError
	}
	path := fs.Arg(0)
	data, err := artifact.ReadFile(c.path(path))
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(c.Stderr, "Error: there is no artifact at %s.\n", c.path(path))
		return ExitError
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", readError(path, err))
		return ExitError
	}
	if msg := notArtifact(path, data); msg != "" {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", msg)
		return ExitError
	}
	a, err := artifact.Read(bytes.NewReader(data))
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s is not a safe agentform artifact: %s.\n", path, err)
		return ExitError
	}
	var lock *lockfile.File
	noLockfile := false // -lockfile, but the workspace has none
	if *useLock {
		l, diags := lockfile.Load(c.Dir)
		if diags.HasErrors() {
			c.showDiagnostics(diags, nil)
			return ExitError
		}
		// Any file there is compared, an empty one too: it pins nothing,
		// and an artifact that pins something does not match it.
		if _, err := os.Lstat(c.path(lockfile.FileName)); err == nil {
			lock = l
		} else {
			noLockfile = true
		}
	}
	var problems []string
	for _, p := range artifact.Verify(a, lock) {
		problems = append(problems, p.String())
	}
	// Whole on its own, the archive differs from the lockfile only.
	lockOnly := len(problems) > 0 && lock != nil && len(artifact.Verify(a, nil)) == 0
	if noLockfile && len(problems) == 0 {
		// No lockfile is what a workspace that pins nothing has: an
		// artifact that pins nothing matches it; one that pins something
		// was not compared with any.
		if agent, err := artifact.ParseAgent(a.Files[artifact.AgentName]); err == nil {
			if agent.LockfileDigest == lockfile.New().Digest() {
				// Compared with the empty lockfile whole: an entry in
				// agent.json that it does not hold is a problem too.
				lock = lockfile.New()
				for _, p := range artifact.Verify(a, lock) {
					problems = append(problems, p.String())
				}
			} else {
				fmt.Fprintf(c.Stderr, "Warning: the artifact was not compared with a lockfile: there is no %s, and the artifact pins tools or skills. Run verify in the workspace that built it (or with -chdir) to compare them.\n", c.path(lockfile.FileName))
			}
		}
	}
	var applied bool
	if len(problems) == 0 && *useState {
		agent, err := artifact.ParseAgent(a.Files[artifact.AgentName])
		if err != nil {
			problems = append(problems, err.Error())
		} else {
			var more []string
			more, applied, err = c.appliedProblems(c.path(path), agent.Name, data, 0, "verify")
			if err != nil {
				fmt.Fprintf(c.Stderr, "Warning: the artifact was not compared with the state: %s.\n", err)
			}
			problems = append(problems, more...)
		}
	}
	if len(problems) > 0 && lockOnly {
		// The archive is whole; it was built against other lock entries.
		fmt.Fprintf(c.Stderr, "Error: %s does not match %s:\n", path, c.path(lockfile.FileName))
		for _, p := range problems {
			fmt.Fprintf(c.Stderr, "  - %s\n", p)
		}
		fmt.Fprintf(c.Stderr, "The archive is intact (SHA256SUMS and agent.json's digests hold), but it was built from other lock entries than the lockfile holds. If the lockfile changed since it was built (agentform lock, an edit), run agentform apply to build it again; if not, it was not built from this lockfile.\n")
		return ExitError
	}
	if len(problems) > 0 {
		fmt.Fprintf(c.Stderr, "Error: %s failed verification:\n", path)
		for _, p := range problems {
			fmt.Fprintf(c.Stderr, "  - %s\n", p)
		}
		return ExitError
	}
	if !artifact.Canonical(a, data) {
		fmt.Fprintf(c.Stderr, "Warning: %s is not byte for byte the archive agentform writes for these files (its entry order, modes, owners, timestamps or compression differ): the files check out, but it was repacked since agentform built it, or built by an agentform that writes archives otherwise. agentform apply builds it again.\n", path)
	}
	against := ""
	switch {
	case lock != nil && noLockfile:
		against = " and pins nothing, as the workspace has no " + lockfile.FileName
	case lock != nil:
		against = " and matches " + lockfile.FileName
	}
	if applied {
		against += "; it is the artifact the last apply wrote"
	}
	fmt.Fprintf(c.Stdout, "%s: OK (%d files; SHA256SUMS verified%s)\n", path, len(a.Files), against)
	return ExitOK
}

// appliedProblems checks the artifact file at path, which holds agent,
// against the workspace's state, waiting up to timeout for a writer's
// lock. When the state records an agent's artifact at this very path, the
// file must hold that agent and be the file the last apply wrote there:
// anything else (another agent's artifact copied over it, one repackaged
// with an edited agent.json) is the drift plan reports. applied is true
// when it is that file. A file the state does not know (a copy
// elsewhere), or a workspace with no state at all, is checked on its own.
// err is set when the state could not be read (locked past timeout, or
// corrupt): the comparison was not made, and the caller decides whether
// the artifact's own checks are enough (verify) or not (serve).
func (m *Meta) appliedProblems(path, agent string, data []byte, timeout time.Duration, operation string) (problems []string, applied bool, err error) {
	db, err := m.openState(true, timeout, operation)
	var prior *planner.Applied
	if err == nil && db != nil {
		prior, err = planner.AppliedFromState(db)
	}
	if db != nil {
		db.Close()
	}
	if err != nil || prior == nil {
		return nil, false, err
	}
	for _, addr := range slices.Sorted(maps.Keys(prior.Resources)) {
		res := prior.Resources[addr]
		rec := res.Artifact
		if res.Type != "agent" || rec == nil || !sameFile(m.path(filepath.FromSlash(rec.Path)), path) {
			continue
		}
		switch sum := resolve.SHA256(data); {
		case res.Name != agent:
			return []string{fmt.Sprintf("the last apply wrote the artifact of agent.%s here, but this file holds agent %q", res.Name, agent)}, false, nil
		case sum != rec.SHA256:
			return []string{fmt.Sprintf("it is not the artifact the last apply wrote for agent.%s (%s, recorded %s): agentform plan shows the drift and agentform apply rebuilds it",
				agent, shortDigest(sum), shortDigest(rec.SHA256))}, false, nil
		}
		return nil, true, nil
	}
	return nil, false, nil
}

// sameFile reports whether a and b name the same existing file (or
// directory).
func sameFile(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

// shortDigest is "sha256:" and the first 12 hex digits of a digest.
func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12] + "…"
	}
	return d
}
