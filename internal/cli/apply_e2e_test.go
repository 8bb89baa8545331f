//go:build unix

package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests run the real agentform binary as a child process: what a
// user (or a crash, or a second terminal) does to a workspace, observed
// only through exit codes, output and the files left on disk.

var (
	e2eBinOnce sync.Once
	e2eBin     string
	e2eBinErr  error
)

// e2eSecret is the value of E2E_TOKEN in every child's environment; the
// workspace refers to it with secret(runtime("E2E_TOKEN")), so it must
// never be written anywhere.
const e2eSecret = "e2e-SECRET-5150"

// e2eAgents are the agents of the generated workspace, one artifact each.
var e2eAgents = []string{"alpha", "bravo", "charlie", "delta"}

// e2eBinary builds cmd/agentform once per test binary and returns its path.
func e2eBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the agentform binary")
	}
	e2eBinOnce.Do(func() {
		e2eSweep()
		dir, err := os.MkdirTemp("", fmt.Sprintf("agentform-e2e-%d-", os.Getpid()))
		if err != nil {
			e2eBinErr = err
			return
		}
		e2eBin = filepath.Join(dir, "agentform")
		out, err := exec.Command("go", "build", "-o", e2eBin, "../../cmd/agentform").CombinedOutput()
		if err != nil {
			e2eBinErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if e2eBinErr != nil {
		t.Fatalf("building agentform: %v", e2eBinErr)
	}
	return e2eBin
}

// e2eSweep removes the binaries of earlier test processes that have exited
// (there is no hook to remove a binary when the test binary ends): their
// directories are named after the pid that built them.
func e2eSweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "agentform-e2e-*-*"))
	for _, dir := range dirs {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(dir), "agentform-e2e-%d-", &pid); err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(dir)
		}
	}
}

// e2eManifest returns the generated manifest: four agents with different
// capabilities, a javascript tool, 30 bash tools, a bash tool whose config
// holds a runtime secret, and an inline skill. variant is appended to
// every agent's prompt, so two variants give different artifacts for
// every agent with the same tools, skills and lockfile.
func e2eManifest(variant string) string {
	var b strings.Builder
	caps := map[string]string{
		"alpha":   `["text::count"]`,
		"bravo":   `["shell::read", "skills"]`,
		"charlie": `["shell", "text"]`,
		"delta":   `[]`,
	}
	for _, a := range e2eAgents {
		policy := "locked"
		if a == "charlie" {
			policy = "extensible"
		}
		fmt.Fprintf(&b, `agent %q {
  version           = "0.1.0"
  description       = "The %s agent."
  prompt            = "You are %s.%s"
  capabilities      = %s
  capability_policy = %q

  graph {
    type = "react"
  }

  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

`, a, a, a, variant, caps[a], policy)
	}
	b.WriteString(`tool "word_count" {
  kind         = "javascript"
  source       = "./tools/word_count"
  description  = "Counts the words in a text."
  capabilities = ["text::count"]
}

tool "secretive" {
  kind         = "bash"
  description  = "Lists files with a token in its configuration."
  commands     = ["ls"]
  capabilities = ["shell::admin"]
  config       = { TOKEN = secret(runtime("E2E_TOKEN")) }
}

skill "notes" {
  description = "Takes short notes."
  content     = "Write one line per note."
  resources   = { "tips.md" = "Be brief." }
}
`)
	for i := 1; i <= 30; i++ {
		tag := "shell::read"
		if i%2 == 1 {
			tag = "shell::write"
		}
		fmt.Fprintf(&b, `
tool "sh%02d" {
  kind         = "bash"
  description  = "Lists files (%d)."
  commands     = ["ls"]
  capabilities = [%q]
}
`, i, i, tag)
	}
	return b.String()
}

// e2eWorkspace writes the generated workspace into dir (created as
// needed), with the given permission bits on every file and directory it
// creates.
func e2eWorkspace(t *testing.T, dir, variant string, fileMode, dirMode os.FileMode) {
	t.Helper()
	src := filepath.Join(quickstart, "tools", "word_count")
	dst := filepath.Join(dir, "tools", "word_count")
	for _, d := range []string{dir, filepath.Join(dir, "tools"), dst} {
		if err := os.MkdirAll(d, dirMode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, dirMode); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"package.json", "index.ts"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		e2eWriteFile(t, filepath.Join(dst, name), b, fileMode)
	}
	e2eWriteFile(t, filepath.Join(dir, "agent.acl"), []byte(e2eManifest(variant)), fileMode)
}

func e2eWriteFile(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// e2eOpts describe how a child runs.
type e2eOpts struct {
	// umask, when set, runs the child through sh with that umask.
	umask string
	// env is added to the test's environment (later entries win).
	env []string
}

// e2eCommand returns the agentform command with args, run in dir.
func e2eCommand(t *testing.T, dir string, o e2eOpts, args ...string) *exec.Cmd {
	t.Helper()
	bin := e2eBinary(t)
	var cmd *exec.Cmd
	if o.umask != "" {
		cmd = exec.Command("sh", append([]string{"-c", "umask " + o.umask + `; exec "$0" "$@"`, bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "E2E_TOKEN="+e2eSecret, "NO_COLOR=1"), o.env...)
	return cmd
}

// e2eResult is what a finished child did.
type e2eResult struct {
	args           []string
	code           int
	stdout, stderr string
}

func (r e2eResult) String() string {
	return fmt.Sprintf("agentform %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// e2eRun runs agentform with args in dir and waits for it (at most a
// minute, so that a hung child fails the test instead of the run).
func e2eRun(t *testing.T, dir string, o e2eOpts, args ...string) e2eResult {
	t.Helper()
	cmd := e2eCommand(t, dir, o, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, err := e2eWait(cmd, time.Minute)
	if err != nil {
		t.Fatalf("agentform %s: %v", strings.Join(args, " "), err)
	}
	return e2eResult{args: args, code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// e2eWait waits for a started child, killing it after timeout. code is the
// exit code, or -1 when a signal ended it.
func e2eWait(cmd *exec.Cmd, timeout time.Duration) (code int, err error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return 0, fmt.Errorf("still running after %s; killed", timeout)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		return ee.ExitCode(), nil
	}
	return 0, err
}

// e2eMust runs agentform and fails the test unless it exits with want.
func e2eMust(t *testing.T, dir string, o e2eOpts, want int, args ...string) e2eResult {
	t.Helper()
	r := e2eRun(t, dir, o, args...)
	if r.code != want {
		t.Fatalf("got:\n%s\nwant: exit %d", r, want)
	}
	return r
}

// e2eHashes returns the sha256 of every dist/*.agent.tgz by file name.
func e2eHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "dist", "*.agent.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		out[filepath.Base(p)] = hex.EncodeToString(sum[:])
	}
	return out
}

// e2eFormat renders hashes sorted, one per line, for failure messages.
func e2eFormat(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s %s\n", m[k], k)
	}
	return b.String()
}

// e2eCheckHashes fails unless dir's artifacts are exactly want.
func e2eCheckHashes(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	if got := e2eHashes(t, dir); e2eFormat(got) != e2eFormat(want) {
		t.Errorf("artifacts of %s differ\ngot:\n%swant:\n%s", dir, e2eFormat(got), e2eFormat(want))
	}
}

// e2eCheckNoChanges fails unless plan -detailed-exitcode reports nothing to do.
func e2eCheckNoChanges(t *testing.T, dir string, o e2eOpts) {
	t.Helper()
	r := e2eRun(t, dir, o, "plan", "-detailed-exitcode", "-no-color")
	if r.code != ExitOK || !strings.Contains(r.stdout, "No changes. Artifacts match the configuration.") {
		t.Errorf("got:\n%s\nwant: exit 0 and No changes", r)
	}
}

func TestApplyReproducible(t *testing.T) {
	e2eBinary(t)
	base := t.TempDir()
	runs := []struct {
		name  string
		dir   string
		modes [2]os.FileMode
		opts  e2eOpts
	}{
		{
			name:  "shallow umask 022 UTC 1 proc",
			dir:   filepath.Join(base, "ws"),
			modes: [2]os.FileMode{0o644, 0o755},
			opts:  e2eOpts{umask: "022", env: []string{"TZ=UTC", "GOMAXPROCS=1"}},
		},
		{
			name:  "deep umask 077 Kathmandu 2 procs",
			dir:   filepath.Join(base, "a", "much", "deeper", "place", "for", "the", "workspace"),
			modes: [2]os.FileMode{0o600, 0o700},
			opts:  e2eOpts{umask: "077", env: []string{"TZ=Asia/Kathmandu", "GOMAXPROCS=2"}},
		},
	}
	hashes := make([]map[string]string, len(runs))
	locks := make([]string, len(runs))
	for i, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			e2eWorkspace(t, run.dir, "", run.modes[0], run.modes[1])
			e2eMust(t, run.dir, run.opts, ExitOK, "apply", "-auto-approve", "-no-color")
			hashes[i] = e2eHashes(t, run.dir)
			if len(hashes[i]) != len(e2eAgents) {
				t.Errorf("got artifacts:\n%swant: one per agent (%d)", e2eFormat(hashes[i]), len(e2eAgents))
			}
			for name := range hashes[i] {
				info, err := os.Stat(filepath.Join(run.dir, "dist", name))
				if err != nil {
					t.Fatal(err)
				}
				if info.Mode().Perm() != 0o644 {
					t.Errorf("%s mode\ngot:  %v\nwant: -rw-r--r-- whatever the umask", name, info.Mode().Perm())
				}
			}
			lock, err := os.ReadFile(filepath.Join(run.dir, "agentform.lock.hcl"))
			if err != nil {
				t.Fatal(err)
			}
			locks[i] = string(lock)
			e2eCheckNoChanges(t, run.dir, run.opts)
		})
	}
	if t.Failed() {
		return
	}
	if e2eFormat(hashes[0]) != e2eFormat(hashes[1]) {
		t.Errorf("artifacts differ between the two applies\ngot:\n%swant:\n%s", e2eFormat(hashes[1]), e2eFormat(hashes[0]))
	}
	if locks[0] != locks[1] {
		t.Errorf("lockfiles differ\ngot:\n%s\nwant:\n%s", locks[1], locks[0])
	}
}

// e2eCheckCrashed checks a workspace after an apply ended, killed or not:
// the state opens, every artifact verifies and is one of the known ones
// for its agent (never a partial file), and nothing but dot-prefixed temp
// files sits beside the artifacts. It returns the leftover temp files.
func e2eCheckCrashed(t *testing.T, dir string, known map[string]map[string]bool) []string {
	t.Helper()
	r := e2eRun(t, dir, e2eOpts{}, "state", "list")
	if r.code != ExitOK {
		t.Errorf("state does not open\ngot:\n%s\nwant: exit 0", r)
	}
	// Before the first commit there is no state ("No state" message) or an
	// empty one (no addresses); afterwards, the addresses. Never an error.
	if strings.Contains(r.stderr, "Error") {
		t.Errorf("got:\n%s\nwant: addresses, nothing, or the No state message", r)
	}
	var temps []string
	entries, err := os.ReadDir(filepath.Join(dir, "dist"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, "dist", name)
		switch {
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp"):
			temps = append(temps, path)
		case strings.HasSuffix(name, ".agent.tgz") && e.Type().IsRegular():
			// Not against the state: a kill between the artifacts and the
			// state commit leaves new artifacts the state does not record
			// yet, which the next plan treats as drift.
			if v := e2eRun(t, dir, e2eOpts{}, "verify", "-state=false", path); v.code != ExitOK {
				t.Errorf("an artifact fails verification\ngot:\n%s\nwant: exit 0", v)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); !known[name][got] {
				t.Errorf("%s is neither the old nor the new artifact\ngot:  sha256 %s (%d bytes)\nwant: one of %v", name, got, len(b), known[name])
			}
		default:
			t.Errorf("unexpected file in dist\ngot:  %s\nwant: only artifacts and dot-prefixed temp files", name)
		}
	}
	// The lockfile's temp files live beside it.
	roots, _ := filepath.Glob(filepath.Join(dir, ".agentform.lock.hcl.tmp*"))
	temps = append(temps, roots...)
	if p := e2eRun(t, dir, e2eOpts{}, "plan", "-detailed-exitcode", "-no-color"); p.code != ExitOK && p.code != ExitChanges {
		t.Errorf("plan fails after the crash\ngot:\n%s\nwant: exit 0 or 2", p)
	}
	return temps
}

func TestApplyCrashSafety(t *testing.T) {
	e2eBinary(t)
	variants := []string{"", " Second edition."}

	// Reference artifacts of both variants from a clean apply each, and
	// how long a clean apply takes once the build cache is warm (as it is
	// for all but the first kill below).
	ref := filepath.Join(t.TempDir(), "ref")
	known := map[string]map[string]bool{}
	var reference map[string]string
	var clean time.Duration
	for i, v := range variants {
		e2eWorkspace(t, ref, v, 0o644, 0o755)
		start := time.Now()
		e2eMust(t, ref, e2eOpts{}, ExitOK, "apply", "-auto-approve", "-no-color")
		clean = time.Since(start)
		h := e2eHashes(t, ref)
		if i == 0 {
			reference = h
		}
		for name, sum := range h {
			if known[name] == nil {
				known[name] = map[string]bool{}
			}
			known[name][sum] = true
		}
	}
	for _, a := range e2eAgents {
		if n := len(known[a+".agent.tgz"]); n != len(variants) {
			t.Fatalf("agent %s\ngot:  %d distinct artifacts over the variants\nwant: %d", a, n, len(variants))
		}
	}

	// Kill delays spread over [0, 1.25 × a clean apply): stratified so
	// that every part of the apply is hit, in a shuffled order.
	const iterations = 24
	rng := rand.New(rand.NewPCG(5150, 20260101))
	span := clean * 5 / 4
	delays := make([]time.Duration, iterations)
	for i := range delays {
		delays[i] = time.Duration((float64(i) + rng.Float64()) / iterations * float64(span))
	}
	rng.Shuffle(len(delays), func(i, j int) { delays[i], delays[j] = delays[j], delays[i] })

	// Alternating variants make every apply have work to do: the agents'
	// artifacts change each time, so a kill can land between the old and
	// the new artifact of each agent.
	ws := filepath.Join(t.TempDir(), "ws")
	e2eWorkspace(t, ws, variants[0], 0o644, 0o755)
	phases := map[string]int{}
	var leftovers []string
	for i, delay := range delays {
		e2eWriteFile(t, filepath.Join(ws, "agent.acl"), []byte(e2eManifest(variants[i%2])), 0o644)
		cmd := e2eCommand(t, ws, e2eOpts{}, "apply", "-auto-approve", "-no-color")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		code, err := e2eWait(cmd, time.Minute)
		timer.Stop()
		if err != nil {
			t.Fatal(err)
		}
		switch code {
		case -1:
			// Where the kill landed, from the progress printed so far.
			wrote := strings.Count(stdout.String(), ": Wrote dist/")
			switch {
			case wrote == 0:
				phases["before any artifact"]++
			case wrote < len(e2eAgents):
				phases["between artifacts"]++
			default:
				phases["after the artifacts"]++
			}
		case ExitOK:
			phases["finished"]++
		default:
			t.Errorf("iteration %d: an apply that was not killed failed\ngot:  exit %d\n%s%s\nwant: exit 0", i, code, &stdout, &stderr)
		}
		leftovers = e2eCheckCrashed(t, ws, known)
		if t.Failed() {
			t.Fatalf("iteration %d (kill after %s, variant %d) left the workspace inconsistent", i, delay, i%2)
		}
	}
	t.Logf("%d kills spread over %s: %v", iterations, span, phases)
	if len(leftovers) > 0 {
		t.Logf("temp files left by killed applies (dot-prefixed, not artifacts): %v", leftovers)
	}

	e2eWriteFile(t, filepath.Join(ws, "agent.acl"), []byte(e2eManifest(variants[0])), 0o644)
	e2eMust(t, ws, e2eOpts{}, ExitOK, "apply", "-auto-approve", "-no-color")
	e2eCheckHashes(t, ws, reference)
	e2eCheckNoChanges(t, ws, e2eOpts{})
	if leftovers := e2eCheckCrashed(t, ws, known); len(leftovers) > 0 {
		t.Logf("temp files still there after a successful apply: %v", leftovers)
	}
}

// e2eBuffer is a bytes.Buffer safe for a child's output copier and the
// test reading it at the same time.
type e2eBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *e2eBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *e2eBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// e2eEventually polls cond every 10ms until it holds or timeout passes.
func e2eEventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// e2eHasOpen reports whether process pid has path open, from /proc; ok is
// false where /proc does not tell.
func e2eHasOpen(pid int, path string) (open, ok bool) {
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			return false, false
		}
		return false, true
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && target == path {
			return true, true
		}
	}
	return false, true
}

func TestApplyLocking(t *testing.T) {
	e2eBinary(t)
	ws := filepath.Join(t.TempDir(), "ws")
	e2eWorkspace(t, ws, "", 0o644, 0o755)
	ws, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}

	// Apply #1 plans, takes the lock and waits at the prompt.
	first := e2eCommand(t, ws, e2eOpts{}, "apply", "-no-color")
	stdin, err := first.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out1, err1 e2eBuffer
	first.Stdout, first.Stderr = &out1, &err1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	done1 := make(chan struct{})
	var code1 int
	var wait1 error
	go func() {
		code1, wait1 = e2eWait(first, time.Minute)
		close(done1)
	}()
	t.Cleanup(func() {
		_ = first.Process.Kill()
		<-done1
	})
	if !e2eEventually(30*time.Second, func() bool { return strings.Contains(out1.String(), "Enter a value") }) {
		t.Fatalf("apply #1 never asked\ngot:\n%s%s\nwant: the prompt", out1.String(), err1.String())
	}
	pid1 := first.Process.Pid

	lockTests := []struct {
		name string
		args []string
	}{
		{"apply default timeout", []string{"apply", "-auto-approve", "-no-color"}},
		{"apply timeout 0", []string{"apply", "-auto-approve", "-no-color", "-lock-timeout=0"}},
		{"plan timeout 0", []string{"plan", "-no-color", "-lock-timeout=0"}},
		{"state rm", []string{"state", "rm", "tool.sh01"}},
	}
	for _, tc := range lockTests {
		t.Run(tc.name, func(t *testing.T) {
			r := e2eRun(t, ws, e2eOpts{}, tc.args...)
			if r.code != ExitError {
				t.Errorf("got:\n%s\nwant: exit 1", r)
			}
			for _, want := range []string{"Error acquiring the state lock", "Operation: apply"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("got:\n%s\nwant: stderr containing %q", r, want)
				}
			}
			if !regexp.MustCompile(fmt.Sprintf(`PID:\s+%d\n`, pid1)).MatchString(r.stderr) {
				t.Errorf("got:\n%s\nwant: the holder's PID %d", r, pid1)
			}
		})
	}

	// Apply #2 waits for the lock; #1 is then approved and releases it.
	second := e2eCommand(t, ws, e2eOpts{}, "apply", "-auto-approve", "-no-color", "-lock-timeout=10s")
	var out2, err2 bytes.Buffer
	second.Stdout, second.Stderr = &out2, &err2
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	done2 := make(chan struct{})
	var code2 int
	var wait2 error
	go func() {
		code2, wait2 = e2eWait(second, time.Minute)
		close(done2)
	}()
	t.Cleanup(func() {
		_ = second.Process.Kill()
		<-done2
	})
	// bbolt opens the file before it tries the lock: once #2 has
	// state.db open, it is waiting for #1.
	db := filepath.Join(ws, ".agentform", "state.db")
	if _, ok := e2eHasOpen(second.Process.Pid, db); ok {
		if !e2eEventually(10*time.Second, func() bool { open, _ := e2eHasOpen(second.Process.Pid, db); return open }) {
			t.Errorf("apply #2 never opened %s", db)
		}
	} else {
		time.Sleep(500 * time.Millisecond)
	}
	select {
	case <-done2:
		t.Fatalf("apply #2 did not wait for the lock\ngot: exit %d (%v)\n%s%s\nwant: still waiting", code2, wait2, &out2, &err2)
	default:
	}

	if _, err := io.WriteString(stdin, "yes\n"); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	<-done1
	if wait1 != nil || code1 != ExitOK {
		t.Errorf("apply #1\ngot:  exit %d (%v)\n%s%s\nwant: exit 0", code1, wait1, out1.String(), err1.String())
	}
	<-done2
	if wait2 != nil || code2 != ExitOK {
		t.Errorf("apply #2\ngot:  exit %d (%v)\n%s%s\nwant: exit 0", code2, wait2, &out2, &err2)
	}
	e2eCheckNoChanges(t, ws, e2eOpts{})
}

func TestApplySavedPlans(t *testing.T) {
	e2eBinary(t)
	ws := filepath.Join(t.TempDir(), "ws")
	e2eWorkspace(t, ws, "", 0o644, 0o755)
	var outputs []e2eResult
	step := func(want int, args ...string) e2eResult {
		t.Helper()
		r := e2eMust(t, ws, e2eOpts{}, want, args...)
		outputs = append(outputs, r)
		return r
	}

	step(ExitOK, "plan", "-out=tfplan", "-no-color")
	r := step(ExitOK, "apply", "tfplan")
	if strings.Contains(r.stdout, "Enter a value") || !strings.Contains(r.stdout, "Apply complete!") {
		t.Errorf("got:\n%s\nwant: applied without a prompt", r)
	}
	if got := e2eHashes(t, ws); len(got) != len(e2eAgents) {
		t.Errorf("got artifacts:\n%swant: one per agent", e2eFormat(got))
	}
	if r := step(ExitOK, "state", "list"); !strings.Contains(r.stdout, "tool.secretive\n") {
		t.Errorf("got:\n%s\nwant: tool.secretive in state", r)
	}

	r = step(ExitError, "apply", "tfplan")
	if !strings.Contains(r.stderr, "stale") {
		t.Errorf("got:\n%s\nwant: the plan refused as stale", r)
	}

	step(ExitOK, "plan", "-out=p2", "-no-color")
	manifest := strings.Replace(e2eManifest(""), `description  = "Lists files (7)."
  commands     = ["ls"]`, `description  = "Lists files (7)."
  commands     = ["ls", "cat"]`, 1)
	if manifest == e2eManifest("") {
		t.Fatal("the manifest edit did not apply")
	}
	e2eWriteFile(t, filepath.Join(ws, "agent.acl"), []byte(manifest), 0o644)
	r = step(ExitError, "apply", "p2")
	for _, want := range []string{"changed since the plan was saved", "tool.sh07"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("got:\n%s\nwant: stderr containing %q", r, want)
		}
	}
	if strings.Contains(r.stdout, "Apply complete!") {
		t.Errorf("got:\n%s\nwant: nothing applied", r)
	}

	// The secret value is nowhere: not in the saved plans, the artifacts,
	// .agentform (state, cache), the lockfile or any output.
	var files []string
	for _, p := range []string{"tfplan", "p2", "agentform.lock.hcl"} {
		files = append(files, filepath.Join(ws, p))
	}
	for _, d := range []string{"dist", ".agentform"} {
		err := filepath.WalkDir(filepath.Join(ws, d), func(path string, e os.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(e2eSecret)) {
			t.Errorf("got: %s contains the secret value\nwant: never written", f)
		}
		if strings.HasSuffix(f, ".agent.tgz") {
			e2eCheckArchiveHasNo(t, f, b, e2eSecret)
		}
	}
	for _, r := range outputs {
		if strings.Contains(r.stdout+r.stderr, e2eSecret) {
			t.Errorf("got: output of agentform %s contains the secret value\nwant: never printed", strings.Join(r.args, " "))
		}
	}
}

// e2eCheckArchiveHasNo looks for s inside every entry of a gzip'd tar (the
// compressed bytes would hide it).
func e2eCheckArchiveHasNo(t *testing.T, name string, data []byte, s string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("got: %s entry %s contains the secret value\nwant: never written", name, h.Name)
		}
	}
}

// e2eUpdateReasons returns the reasons plan -json gives for each updated
// address.
func e2eUpdateReasons(t *testing.T, dir string) map[string][]string {
	t.Helper()
	r := e2eRun(t, dir, e2eOpts{}, "plan", "-json")
	var doc struct {
		ResourceChanges []struct {
			Address string   `json:"address"`
			Actions []string `json:"actions"`
			Reasons []string `json:"reasons"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("plan -json is not JSON: %v\n%s", err, r)
	}
	out := map[string][]string{}
	for _, rc := range doc.ResourceChanges {
		if len(rc.Actions) == 1 && rc.Actions[0] == "update" {
			out[rc.Address] = rc.Reasons
		}
	}
	return out
}

func TestApplyDriftAndVerify(t *testing.T) {
	e2eBinary(t)
	ws := filepath.Join(t.TempDir(), "ws")
	e2eWorkspace(t, ws, "", 0o644, 0o755)
	e2eMust(t, ws, e2eOpts{}, ExitOK, "apply", "-auto-approve", "-no-color")
	reference := e2eHashes(t, ws)

	const reason = "artifact on disk differs from state"
	drifts := []struct {
		name    string
		agent   string
		tamper  func(path string) error
		drifted []string // every agent drifted so far
	}{
		{"appended byte", "alpha", func(p string) error {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			if _, err := f.Write([]byte{0}); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}, []string{"alpha"}},
		{"deleted", "bravo", os.Remove, []string{"alpha", "bravo"}},
	}
	for _, tc := range drifts {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.tamper(filepath.Join(ws, "dist", tc.agent+".agent.tgz")); err != nil {
				t.Fatal(err)
			}
			r := e2eRun(t, ws, e2eOpts{}, "plan", "-detailed-exitcode", "-no-color")
			if r.code != ExitChanges {
				t.Errorf("got:\n%s\nwant: exit 2", r)
			}
			for _, want := range []string{"agent." + tc.agent + " will be updated in place", reason} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("got:\n%s\nwant: stdout containing %q", r, want)
				}
			}
			reasons := e2eUpdateReasons(t, ws)
			var want []string
			for _, a := range tc.drifted {
				want = append(want, "agent."+a)
				if !strings.Contains(strings.Join(reasons["agent."+a], "\n"), reason) {
					t.Errorf("agent.%s reasons\ngot:  %q\nwant: %q", a, reasons["agent."+a], reason)
				}
			}
			var got []string
			for addr := range reasons {
				got = append(got, addr)
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("updated addresses\ngot:  %v\nwant: %v", got, want)
			}
		})
	}
	e2eMust(t, ws, e2eOpts{}, ExitOK, "apply", "-auto-approve", "-no-color")
	e2eCheckHashes(t, ws, reference)
	e2eCheckNoChanges(t, ws, e2eOpts{})

	// Archives with unsafe entries are refused before anything else.
	unsafe := []struct {
		name  string
		entry tar.Header
	}{
		{"parent", tar.Header{Name: "../x", Mode: 0o644, Typeflag: tar.TypeReg}},
		{"nested parent", tar.Header{Name: "tools/../../x", Mode: 0o644, Typeflag: tar.TypeReg}},
		{"absolute", tar.Header{Name: "/tmp/x", Mode: 0o644, Typeflag: tar.TypeReg}},
		{"symlink", tar.Header{Name: "tools/x", Linkname: "/etc/passwd", Mode: 0o777, Typeflag: tar.TypeSymlink}},
	}
	for _, tc := range unsafe {
		t.Run("verify "+tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			h := tc.entry
			content := []byte("x\n")
			if h.Typeflag == tar.TypeReg {
				h.Size = int64(len(content))
			}
			if err := tw.WriteHeader(&tar.Header{Name: "agent.json", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write([]byte("{}")); err != nil {
				t.Fatal(err)
			}
			if err := tw.WriteHeader(&h); err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				if _, err := tw.Write(content); err != nil {
					t.Fatal(err)
				}
			}
			if err := tw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "evil.agent.tgz")
			e2eWriteFile(t, path, buf.Bytes(), 0o644)
			r := e2eRun(t, ws, e2eOpts{}, "verify", path)
			if r.code != ExitError || !strings.Contains(r.stderr, "is not a safe agentform artifact") {
				t.Errorf("got:\n%s\nwant: exit 1, not a safe agentform artifact", r)
			}
		})
	}
}
