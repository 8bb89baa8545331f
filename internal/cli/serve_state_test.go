package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/state"
)

// TestServeFailsClosedOnState: serve and invoke compare the artifact with
// the state; when they cannot (an apply holds the state's lock past
// -lock-timeout, or the state is corrupt) they refuse to start, instead of
// running an artifact that may be another agent's. -lock-timeout waits
// for the lock.
func TestServeFailsClosedOnState(t *testing.T) {
	dir := appliedQuickstart(t)
	art := filepath.Join(dir, "dist", "assistant.agent.tgz")
	applied, err := os.ReadFile(art)
	must(t, err)
	researcher, err := os.ReadFile(filepath.Join(dir, "dist", "researcher.agent.tgz"))
	must(t, err)
	must(t, os.WriteFile(art, researcher, 0o644))
	invoke := []string{"-chdir=" + dir, "invoke", "dist/assistant.agent.tgz", "word_count", `-args={"text": "a b"}`}
	const ran = "Output:\n2\n"

	// An apply waiting at its prompt holds the lock.
	held, err := state.Open(dir, state.Options{Operation: "apply"})
	must(t, err)
	for _, cmd := range [][]string{invoke, {"-chdir=" + dir, "serve", "dist/assistant.agent.tgz"}} {
		code, stdout, stderr := run(t, "", cmd...)
		if code != ExitError || !strings.Contains(stderr, "cannot start dist/assistant.agent.tgz: it was not compared") ||
			!strings.Contains(stderr, "Error acquiring the state lock") || !strings.Contains(stderr, "Operation: apply") || stdout != "" {
			t.Errorf("%s of a swapped artifact while the state is locked got: exit %d\n%s%s\nwant: refused, naming the lock", cmd[1], code, stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".agentform", "runtime.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a call ran while the state was locked: runtime.db exists (%v)", err)
	}
	// verify keeps its documented warning: its OK line says what was
	// compared.
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "verify", "-lockfile=false", "dist/assistant.agent.tgz"); code != ExitOK || !strings.Contains(stderr, "Warning: the artifact was not compared with the state") || strings.Contains(stdout, "last apply") {
		t.Errorf("verify while the state is locked got: exit %d\n%s%s\nwant: OK with the warning", code, stdout, stderr)
	}

	// With -lock-timeout invoke waits for the apply, then compares.
	must(t, os.WriteFile(art, applied, 0o644))
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		held.Close()
		close(released)
	}()
	code, stdout, stderr := run(t, "", append(invoke, "-lock-timeout=20s")...)
	<-released
	if code != ExitOK || !strings.Contains(stdout, ran) {
		t.Errorf("invoke -lock-timeout=20s while an apply finishes got: exit %d\n%s%s\nwant: the call, after the wait", code, stdout, stderr)
	}

	// A corrupt state cannot be compared with either.
	must(t, os.WriteFile(filepath.Join(dir, ".agentform", "state.db"), bytes.Repeat([]byte{0x5a, 0xa5, 0x01}, 1700), 0o600))
	if code, stdout, stderr := run(t, "", invoke...); code != ExitError || !strings.Contains(stderr, "it was not compared") || !strings.Contains(stderr, "state database is corrupt") {
		t.Errorf("invoke with a corrupt state got: exit %d\n%s%s\nwant: refused, saying the state is corrupt", code, stdout, stderr)
	}

	// No state at all: nothing to compare with, the artifact's own checks
	// apply, as documented.
	must(t, os.Remove(filepath.Join(dir, ".agentform", "state.db")))
	if code, stdout, stderr := run(t, "", invoke...); code != ExitOK || !strings.Contains(stdout, ran) {
		t.Errorf("invoke without state got: exit %d\n%s%s\nwant: the call", code, stdout, stderr)
	}
}
