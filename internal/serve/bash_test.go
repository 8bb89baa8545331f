package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentform/agentform/internal/artifact"
)

// bashTestAgent is the agent of the bash tests; a test adds its tool "sh".
const bashTestAgent = `
agent "a" {
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

// bashTestExecutor builds an artifact whose tool "sh" has the given body
// (kind and capabilities are added) and starts its executor.
func bashTestExecutor(t *testing.T, body string) (Executor, *artifact.Agent) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": bashTestAgent + `
tool "sh" {
  kind         = "bash"
  capabilities = ["shell"]
` + body + `
}
`})
	a, arch, _ := buildArtifact(t, dir, "a", nil)
	h, _ := testHost(t, a, arch, nil)
	var tools []*artifact.Tool
	for i := range a.Tools {
		if a.Tools[i].Kind == artifact.KindBash {
			tools = append(tools, &a.Tools[i])
		}
	}
	ex, err := factories[artifact.KindBash](context.Background(), h, "sh", tools)
	if err != nil {
		t.Fatalf("starting the bash executor: %v", err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	return ex, a
}

// bashRun runs script with the tool "sh" and returns the result and error.
func bashRun(t *testing.T, ex Executor, a *artifact.Agent, script string) (*Result, *shellOutcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args, _ := json.Marshal(map[string]string{"script": script})
	res, err := ex.Call(ctx, testCall(a, "sh", string(args)))
	if err != nil {
		return nil, nil, err
	}
	var out shellOutcome
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("output %s is not {stdout, stderr, exit_code}: %v", res.Output, err)
	}
	return res, &out, nil
}

// bashMustRun is bashRun for a script that must run to its end.
func bashMustRun(t *testing.T, ex Executor, a *artifact.Agent, script string) (*Result, *shellOutcome) {
	t.Helper()
	res, out, err := bashRun(t, ex, a, script)
	if err != nil {
		t.Fatalf("running %q: %v", script, err)
	}
	return res, out
}

func TestBashBuiltinsAndAllowedCommands(t *testing.T) {
	ex, a := bashTestExecutor(t, `commands = ["grep", "sort"]`)
	res, out := bashMustRun(t, ex, a, `echo hello; printf 'b\na\n' | sort; printf 'xbx\nyyy\n' | grep b; f() { echo "in f $1"; }; f arg`)
	want := "hello\na\nb\nxbx\nin f arg\n"
	if out.Stdout != want || out.ExitCode != 0 || res.Status != StatusSuccess {
		t.Fatalf("got:  %q exit %d status %q (stderr %q)\nwant: %q exit 0 status success", out.Stdout, out.ExitCode, res.Status, out.Stderr, want)
	}

	// A failing command gives its exit code and status error, not a Go error.
	res, out = bashMustRun(t, ex, a, `echo oops >&2; printf 'a\n' | grep zzz`)
	if out.ExitCode != 1 || res.Status != StatusError || out.Stderr != "oops\n" || res.Reason != "the script exited with status 1" {
		t.Fatalf("got:  exit %d status %q stderr %q reason %q\nwant: exit 1 status error stderr %q, the exit status as the reason", out.ExitCode, res.Status, out.Stderr, res.Reason, "oops\n")
	}

	// A syntax error is the script's failure.
	res, out = bashMustRun(t, ex, a, `if then fi (`)
	if out.ExitCode != 2 || res.Status != StatusError || out.Stderr == "" || res.Reason != "the script could not be parsed (exit status 2)" {
		t.Fatalf("got:  exit %d status %q stderr %q reason %q\nwant: exit 2, status error and the parse error, not quoted in the reason", out.ExitCode, res.Status, out.Stderr, res.Reason)
	}
}

func TestBashRefusesCommandNotAllowed(t *testing.T) {
	dir := t.TempDir()
	ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = ["grep", "sort"]
  fs {
    kind = "read_write"
    path = %q
  }`, dir))
	for _, script := range []string{
		`echo before; touch marker; echo after`,
		`echo before; echo x | touch marker; echo after`,
		`echo before; x=$(touch marker); echo after`,
		`echo before; (touch marker); echo after`,
		`echo before; command touch marker; echo after`,
		`echo before; exec touch marker; echo after`,
		`echo before; eval 'touch marker'; echo after`,
	} {
		t.Run(script, func(t *testing.T) {
			res, out := bashMustRun(t, ex, a, script)
			wantMsg := `command "touch" is not allowed: the tool's commands are grep, sort`
			if res.Status != StatusError || out.ExitCode != 126 || !strings.Contains(out.Stderr, wantMsg) {
				t.Fatalf("got:  status %q exit %d stderr %q\nwant: status error, exit 126, stderr with %q", res.Status, out.ExitCode, out.Stderr, wantMsg)
			}
			// agentform's refusal is why the call failed: recorded, but
			// not the command's name, which the script chose (it can be
			// the output of $(cat file)).
			if want := `a command is not allowed: the tool's commands are grep, sort`; res.Reason != want {
				t.Errorf("reason\ngot:  %q\nwant: %q", res.Reason, want)
			}
			if strings.Contains(out.Stdout, "after") {
				t.Errorf("the run went on after the refusal: stdout %q", out.Stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "marker")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("got:  marker file (%v)\nwant: no marker file: touch must not have run", err)
			}
		})
	}
}

// TestBashRefusalRecordsNoScriptWords: a refused command's name, a
// variable the script set and a file it sourced are the script's words
// (a command name can be a file's content through $(cat f)): the caller
// sees them, the call record does not.
func TestBashRefusalRecordsNoScriptWords(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("TOPSECRET-file-content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "TOPSECRET-name.sh"), []byte("cat <(echo x)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = ["cat", "grep"]
  fs {
    kind = "read_write"
    path = %q
  }`, dir))
	for _, script := range []string{
		`$(cat ` + dir + `/secret.txt)`,
		`GREP=TOPSECRET-var grep x /dev/null`,
		`source ` + dir + `/TOPSECRET-name.sh`,
	} {
		t.Run(script, func(t *testing.T) {
			res, out := bashMustRun(t, ex, a, script)
			if res.Status != StatusError || out.ExitCode != 126 {
				t.Fatalf("got:  status %q exit %d stderr %q\nwant: status error, exit 126", res.Status, out.ExitCode, out.Stderr)
			}
			if res.Reason == "" || strings.Contains(res.Reason, "TOPSECRET") {
				t.Errorf("reason %q: want agentform's words, without the script's", res.Reason)
			}
		})
	}
}

func TestBashRefusesPaths(t *testing.T) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Skip("grep is not on PATH")
	}
	grep, _ = filepath.Abs(grep)
	dir := t.TempDir()
	// A program named like an allowed command, but not the one PATH gives.
	writeFiles(t, dir, map[string]string{"grep": "#!/bin/sh\necho fake > fake-ran\n"})
	if err := os.Chmod(filepath.Join(dir, "grep"), 0o755); err != nil {
		t.Fatal(err)
	}
	ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = ["grep"]
  fs {
    kind = "read_write"
    path = %q
  }`, dir))

	for _, script := range []string{`/bin/rm -f grep`, `./grep x`, dir + `/grep x`, `PATH=.; grep x`} {
		t.Run(script, func(t *testing.T) {
			res, out := bashMustRun(t, ex, a, script)
			if script == `PATH=.; grep x` {
				// The script's PATH does not choose the program: grep
				// is the one of serve's PATH, which finds nothing here.
				if out.ExitCode != 1 || res.Status != StatusError {
					t.Fatalf("got:  exit %d status %q stderr %q\nwant: grep's exit 1", out.ExitCode, res.Status, out.Stderr)
				}
			} else if out.ExitCode != 126 || !strings.Contains(out.Stderr, "is not allowed") {
				t.Fatalf("got:  exit %d stderr %q\nwant: exit 126 and a refusal", out.ExitCode, out.Stderr)
			}
			for _, f := range []string{"grep", "fake-ran"} {
				_, err := os.Stat(filepath.Join(dir, f))
				if want := f == "grep"; (err == nil) != want {
					t.Fatalf("file %s exists: %v, want %v", f, err == nil, want)
				}
			}
		})
	}

	// The path PATH gives for an allowed name may be used.
	_, out := bashMustRun(t, ex, a, `echo abc | `+grep+` b`)
	if out.Stdout != "abc\n" || out.ExitCode != 0 {
		t.Fatalf("got:  %q exit %d stderr %q\nwant: %q exit 0", out.Stdout, out.ExitCode, out.Stderr, "abc\n")
	}
}

func TestBashBuiltinsOnly(t *testing.T) {
	ex, a := bashTestExecutor(t, `commands = []`)
	res, out := bashMustRun(t, ex, a, `echo ok; ls`)
	if res.Status != StatusError || out.Stdout != "ok\n" || !strings.Contains(out.Stderr, `command "ls" is not allowed: the tool allows shell builtins only`) {
		t.Fatalf("got:  status %q stdout %q stderr %q\nwant: ok, then the refusal of ls", res.Status, out.Stdout, out.Stderr)
	}
}

func TestBashTimeLimit(t *testing.T) {
	ex, a := bashTestExecutor(t, `commands = []
  limits {
    max_execution_time_secs = 1
  }`)
	_, _, err := bashRun(t, ex, a, `while true; do :; done`)
	if err == nil || !strings.Contains(err.Error(), "max_execution_time_secs (1 s)") {
		t.Fatalf("got:  %v\nwant: an error naming max_execution_time_secs (1 s)", err)
	}
}

func TestBashTimeLimitKillsChildren(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh is not on PATH")
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("sleep is not on PATH")
	}
	_ = sh
	dir := t.TempDir()
	ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = ["sh"]
  env {
    kind = "inherit"
  }
  fs {
    kind = "read_write"
    path = %q
  }
  limits {
    max_execution_time_secs = 1
  }`, dir))
	// sh runs sleep in the background (a grandchild of serve) and waits.
	_, _, err = bashRun(t, ex, a, `sh -c 'echo $$ > sh.pid; sleep 30 & echo $! > sleep.pid; wait'`)
	if err == nil || !strings.Contains(err.Error(), "max_execution_time_secs") {
		t.Fatalf("got:  %v\nwant: an error naming max_execution_time_secs", err)
	}
	for _, name := range []string{"sh.pid", "sleep.pid"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("the script did not start its processes: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s holds %q", name, b)
		}
		waitProcessGone(t, pid)
	}
}

// waitProcessGone waits up to 5 s for pid to be gone (a zombie counts as
// gone) and fails the test, killing it, otherwise.
func waitProcessGone(t *testing.T, pid int) {
	t.Helper()
	gone := func() bool {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return true
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		s := string(b)
		i := strings.LastIndex(s, ")")
		return i >= 0 && len(s) > i+2 && s[i+2] == 'Z'
	}
	deadline := time.Now().Add(5 * time.Second)
	for !gone() {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d is still running after the call returned\ngot:  running\nwant: gone", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBashOutputLimit(t *testing.T) {
	if _, err := exec.LookPath("yes"); err != nil {
		t.Skip("yes is not on PATH")
	}
	ex, a := bashTestExecutor(t, `commands = ["yes"]
  limits {
    max_output_size = 100
  }`)
	for _, script := range []string{
		`while :; do echo 0123456789; done`,
		`yes`,
		`yes >&2`,
	} {
		_, _, err := bashRun(t, ex, a, script)
		if err == nil || !strings.Contains(err.Error(), "max_output_size (100 bytes)") {
			t.Fatalf("%s\ngot:  %v\nwant: an error naming max_output_size (100 bytes)", script, err)
		}
	}
	_, out := bashMustRun(t, ex, a, `echo 0123456789`)
	if out.Stdout != "0123456789\n" {
		t.Fatalf("got:  %q\nwant: %q", out.Stdout, "0123456789\n")
	}
}

func TestBashCommandCountLimit(t *testing.T) {
	ex, a := bashTestExecutor(t, `commands = []
  limits {
    max_command_count = 5
  }`)
	if _, out := bashMustRun(t, ex, a, `echo 1; echo 2; :; :; echo 5`); out.Stdout != "1\n2\n5\n" {
		t.Fatalf("5 commands: got %q, want %q", out.Stdout, "1\n2\n5\n")
	}
	_, _, err := bashRun(t, ex, a, `echo 1; echo 2; :; :; echo 5; echo 6`)
	if err == nil || !strings.Contains(err.Error(), "max_command_count (5)") {
		t.Fatalf("got:  %v\nwant: an error naming max_command_count (5)", err)
	}
	// Commands in subshells and functions count too.
	_, _, err = bashRun(t, ex, a, `f() { :; :; :; }; f; (f)`)
	if err == nil || !strings.Contains(err.Error(), "max_command_count") {
		t.Fatalf("got:  %v\nwant: an error naming max_command_count", err)
	}
}

func TestBashLoopLimit(t *testing.T) {
	ex, a := bashTestExecutor(t, `commands = []
  limits {
    max_loop_iterations = 10
  }`)
	_, out := bashMustRun(t, ex, a, `i=0; while [ $i -lt 10 ]; do i=$((i+1)); done; echo $i`)
	if out.Stdout != "10\n" {
		t.Fatalf("10 iterations: got %q (stderr %q), want %q", out.Stdout, out.Stderr, "10\n")
	}
	// Each run of a loop counts afresh: 5 runs of 10 iterations.
	_, out = bashMustRun(t, ex, a, `n=0; for o in 1 2 3 4 5; do for i in 1 2 3 4 5 6 7 8 9 10; do n=$((n+1)); done; done; echo $n`)
	if out.Stdout != "50\n" {
		t.Fatalf("nested loops: got %q (stderr %q), want %q", out.Stdout, out.Stderr, "50\n")
	}
	for _, script := range []string{
		`i=0; while [ $i -lt 11 ]; do i=$((i+1)); done`,
		`while true; do x=1; done`,
		`until false; do x=1; done`,
		`for ((;;)); do x=1; done`,
		`f() { while :; do :; done; }; f`,
		`eval 'while :; do :; done'`,
	} {
		_, _, err := bashRun(t, ex, a, script)
		if err == nil || !strings.Contains(err.Error(), "max_loop_iterations (10)") {
			t.Fatalf("%s\ngot:  %v\nwant: an error naming max_loop_iterations (10)", script, err)
		}
	}
	// A script cannot reset the count by calling a marker itself: it does
	// not know the run's marker, so the call is an unknown command.
	res, out, err := bashRun(t, ex, a, `while :; do `+loopMarker+` 0 start; done`)
	if err == nil && (res.Status != StatusError || !strings.Contains(out.Stderr, "is not allowed")) {
		t.Fatalf("got:  status %q stderr %q\nwant: the marker refused as a command, or the loop stopped", res.Status, out.Stderr)
	}
}

func TestBashEnvKinds(t *testing.T) {
	t.Setenv("AGENTFORM_TEST_OK", "visible")
	t.Setenv("AGENTFORM_TEST_SECRET", "hidden")
	envCmd, err := exec.LookPath("env")
	if err != nil {
		t.Skip("env is not on PATH")
	}
	_ = envCmd
	script := `echo "ok=${AGENTFORM_TEST_OK:-unset} secret=${AGENTFORM_TEST_SECRET:-unset} home=$HOME pwd=$PWD"; env`
	for _, tc := range []struct {
		name, block      string
		ok, secret, path bool
	}{
		{"default", ``, false, false, true},
		{"empty", `env {
    kind = "empty"
  }`, false, false, true},
		{"inherit", `env {
    kind = "inherit"
  }`, true, true, true},
		{"allow", `env {
    kind = "allow"
    vars = ["AGENTFORM_TEST_OK"]
  }`, true, false, false},
		{"deny", `env {
    kind = "deny"
    vars = ["AGENTFORM_TEST_SECRET"]
  }`, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex, a := bashTestExecutor(t, `commands = ["env"]
  `+tc.block)
			_, out := bashMustRun(t, ex, a, script)
			first, envOut, _ := strings.Cut(out.Stdout, "\n")
			want := map[bool]string{true: "ok=visible", false: "ok=unset"}[tc.ok] + " " + map[bool]string{true: "secret=hidden", false: "secret=unset"}[tc.secret]
			if !strings.HasPrefix(first, want+" ") {
				t.Fatalf("got:  %q\nwant: %q ...", first, want)
			}
			// What an external command sees follows the same policy.
			if got := strings.Contains(envOut, "AGENTFORM_TEST_SECRET=hidden"); got != tc.secret {
				t.Fatalf("env shows the secret: %v, want %v\n%s", got, tc.secret, envOut)
			}
			if got := strings.Contains(envOut, "AGENTFORM_TEST_OK=visible"); got != tc.ok {
				t.Fatalf("env shows the allowed variable: %v, want %v\n%s", got, tc.ok, envOut)
			}
			if got := strings.Contains(envOut, "\nPATH=") || strings.HasPrefix(envOut, "PATH="); got != tc.path {
				t.Fatalf("env shows PATH: %v, want %v\n%s", got, tc.path, envOut)
			}
			if tc.name != "inherit" && tc.name != "deny" {
				// HOME is the working directory unless the policy passes one.
				fields := strings.Fields(first)
				if home, pwd := strings.TrimPrefix(fields[2], "home="), strings.TrimPrefix(fields[3], "pwd="); home != pwd {
					t.Fatalf("got:  HOME %q, working directory %q\nwant: the same", home, pwd)
				}
			}
		})
	}
}

func TestBashFilesystemKinds(t *testing.T) {
	t.Run("read_write", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"data.txt": "hi\n", "sub/inner.txt": "inner\n"})
		ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = []
  fs {
    kind = "read_write"
    path = %q
  }`, dir))
		_, out := bashMustRun(t, ex, a, `read line < data.txt; echo "$line"; echo new > out.txt; echo sub/*`)
		if out.Stdout != "hi\nsub/inner.txt\n" {
			t.Fatalf("got:  %q (stderr %q)\nwant: %q", out.Stdout, out.Stderr, "hi\nsub/inner.txt\n")
		}
		if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "new\n" {
			t.Fatalf("got:  out.txt %q (%v)\nwant: %q written in the directory", b, err, "new\n")
		}
	})

	t.Run("cwd", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"sub/inner.txt": "inner\n"})
		ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = []
  fs {
    kind = "read_write"
    path = %q
    cwd  = "sub"
  }`, dir))
		_, out := bashMustRun(t, ex, a, `read line < inner.txt; echo "$line"`)
		if out.Stdout != "inner\n" {
			t.Fatalf("got:  %q (stderr %q)\nwant: %q", out.Stdout, out.Stderr, "inner\n")
		}
	})

	t.Run("in_memory", func(t *testing.T) {
		ex, a := bashTestExecutor(t, `commands = []
  fs {
    kind = "in_memory"
  }`)
		_, out := bashMustRun(t, ex, a, `echo x > f; echo "$PWD"`)
		pwd := strings.TrimSpace(out.Stdout)
		if !filepath.IsAbs(pwd) {
			t.Fatalf("got:  working directory %q (stderr %q)\nwant: an absolute path", pwd, out.Stderr)
		}
		if _, err := os.Stat(pwd); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got:  %s still there (%v)\nwant: removed after the call", pwd, err)
		}
		// Each call starts empty.
		_, out = bashMustRun(t, ex, a, `echo *`)
		if out.Stdout != "*\n" {
			t.Fatalf("got:  %q\nwant: an empty directory", out.Stdout)
		}
	})

	t.Run("overlay", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"data.txt": "hi\n", "sub/inner.txt": "inner\n"})
		if err := os.Symlink("/etc/hostname", filepath.Join(dir, "outside")); err != nil {
			t.Fatal(err)
		}
		ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = []
  fs {
    kind = "overlay"
    path = %q
  }`, dir))
		_, out := bashMustRun(t, ex, a, `read a < data.txt; echo changed > data.txt; echo n > new.txt; read b < data.txt; read c < sub/inner.txt; echo "$a $b $c"; echo *`)
		if want := "hi changed inner\ndata.txt new.txt sub\n"; out.Stdout != want {
			t.Fatalf("got:  %q (stderr %q)\nwant: %q", out.Stdout, out.Stderr, want)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "data.txt")); string(b) != "hi\n" {
			t.Fatalf("got:  data.txt %q\nwant: unchanged %q", b, "hi\n")
		}
		if _, err := os.Stat(filepath.Join(dir, "new.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got:  new.txt in the directory (%v)\nwant: none", err)
		}
	})

	t.Run("confined", func(t *testing.T) {
		outside := t.TempDir()
		writeFiles(t, outside, map[string]string{"secret.txt": "s3cret\n"})
		dir := t.TempDir()
		if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = []
  fs {
    kind = "read_write"
    path = %q
  }`, dir))
		for _, script := range []string{
			`read x < ` + filepath.Join(outside, "secret.txt") + `; echo "$x"`,
			`read x < ../` + filepath.Base(outside) + `/secret.txt; echo "$x"`,
			`read x < link; echo "$x"`,
			`echo pwned > ` + filepath.Join(outside, "new.txt"),
			`cd ` + outside + ` && read x < secret.txt; echo "$x"`,
			`echo ` + outside + `/*`,
			`echo pwned > $TMPDIR/../sh-interp-x`,
		} {
			_, out := bashMustRun(t, ex, a, script)
			if !strings.HasSuffix(script, "/*") && out.Stderr == "" {
				t.Fatalf("%s\ngot:  no error\nwant: the access refused on standard error", script)
			}
			if strings.Contains(out.Stdout, "s3cret") || strings.Contains(out.Stdout, "secret.txt") {
				t.Fatalf("%s\ngot:  %q\nwant: nothing from outside the tool's filesystem", script, out.Stdout)
			}
		}
		if _, err := os.Stat(filepath.Join(outside, "new.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got:  a file written outside (%v)\nwant: none", err)
		}
		if _, err := os.Stat(filepath.Join(os.TempDir(), "sh-interp-x")); err == nil {
			_ = os.Remove(filepath.Join(os.TempDir(), "sh-interp-x"))
			t.Fatal("got:  a file written in the temporary directory\nwant: none")
		}
	})
}

func TestBashStartupChecks(t *testing.T) {
	h := &Host{Logf: t.Logf}
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		name string
		bash *artifact.Bash
		want string
	}{
		{"no settings", nil, "no bash settings"},
		{"missing path", &artifact.Bash{FS: &artifact.BashFS{Kind: "read_write", Path: missing}}, "cannot be used"},
		{"escaping cwd", &artifact.Bash{FS: &artifact.BashFS{Kind: "in_memory", Cwd: "../.."}}, "leaves the tool's filesystem"},
		{"unknown env", &artifact.Bash{Env: &artifact.BashEnv{Kind: "some"}}, "unknown env kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newBashExecutor(context.Background(), h, "sh", []*artifact.Tool{{Name: "sh", Kind: artifact.KindBash, Bash: tc.bash}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got:  %v\nwant: an error with %q", err, tc.want)
			}
		})
	}
}

// TestBashExternalCommandWarning: a tool with external commands is
// announced at startup as not confining them: their file access always,
// their network access when the tool's policy would restrict it.
func TestBashExternalCommandWarning(t *testing.T) {
	for _, tc := range []struct {
		name    string
		network *artifact.BashNetwork
		want    []string
		absent  string
	}{
		{"no network block", nil, []string{"tool sh: the external commands it may run (ls)", "reach the network whatever the tool's network policy says", "open any path they are given"}, ""},
		{"network open to all", &artifact.BashNetwork{Enabled: true}, []string{"open any path they are given"}, "reach the network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged []string
			h := &Host{Logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }}
			bash := &artifact.Bash{Commands: []string{"ls"}, Network: tc.network}
			if _, err := newBashExecutor(context.Background(), h, "sh", []*artifact.Tool{{Name: "sh", Kind: artifact.KindBash, Bash: bash}}); err != nil {
				t.Fatal(err)
			}
			all := strings.Join(logged, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("logged:\n%s\nwant: %q", all, w)
				}
			}
			if tc.absent != "" && strings.Contains(all, tc.absent) {
				t.Errorf("logged:\n%s\nwant no %q", all, tc.absent)
			}
		})
	}
}

func TestSandboxRel(t *testing.T) {
	for _, tc := range []struct{ cwd, host, want string }{
		{"", "", "."},
		{"/home/agent", "", "."},
		{"/home/agent/src", "", "src"},
		{"src/x", "", "src/x"},
		{"/data/p/sub", "/data/p", "sub"},
		{"/work", "", "work"},
		{"/", "", "."},
	} {
		got, err := sandboxRel(tc.cwd, tc.host)
		if err != nil || got != tc.want {
			t.Errorf("sandboxRel(%q, %q)\ngot:  %q, %v\nwant: %q", tc.cwd, tc.host, got, err, tc.want)
		}
	}
	if _, err := sandboxRel("../x", ""); err == nil {
		t.Error("sandboxRel(\"../x\") did not fail")
	}
}

// bashRunWithin is bashRun for a script that might hang: the test fails,
// instead of hanging, when the call does not return within d.
func bashRunWithin(t *testing.T, ex Executor, a *artifact.Agent, script string, d time.Duration) (*Result, *shellOutcome, error) {
	t.Helper()
	type ret struct {
		res *Result
		err error
	}
	done := make(chan ret, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), d+5*time.Second)
		defer cancel()
		args, _ := json.Marshal(map[string]string{"script": script})
		res, err := ex.Call(ctx, testCall(a, "sh", string(args)))
		done <- ret{res, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, nil, r.err
		}
		var out shellOutcome
		if err := json.Unmarshal(r.res.Output, &out); err != nil {
			t.Fatalf("output %s is not {stdout, stderr, exit_code}: %v", r.res.Output, err)
		}
		return r.res, &out, nil
	case <-time.After(d):
		t.Fatalf("%s\ngot:  the call still running after %s\nwant: it returns", script, d)
		return nil, nil, nil
	}
}

// envLines returns the variables of env's output by name.
func envLines(out string) map[string]string {
	vars := map[string]string{}
	for line := range strings.SplitSeq(out, "\n") {
		if name, v, ok := strings.Cut(line, "="); ok {
			vars[name] = v
		}
	}
	return vars
}

func TestBashExecEnvironment(t *testing.T) {
	if _, err := exec.LookPath("env"); err != nil {
		t.Skip("env is not on PATH")
	}
	denied := []string{"LD_PRELOAD", "GIT_SSH_COMMAND", "NODE_OPTIONS", "PYTHONPATH", "BASH_ENV", "PAGER", "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME"}
	// The denied variables are dropped whoever sets them; LC_ALL and TZ
	// the script may set; PATH and TMPDIR keep the values the run began
	// with; a variable of serve's environment set again to its value
	// passes.
	script := `export PYTHONPATH=p BASH_ENV=b LC_ALL=C; export PATH=/nowhere:$PATH TMPDIR=$PWD; LD_PRELOAD=/x GIT_SSH_COMMAND=y NODE_OPTIONS=z PAGER=q XDG_CONFIG_HOME=$PWD HOME=$PWD TZ=UTC AGENTFORM_TEST_KEEP=k env`
	for _, tc := range []struct {
		name, env string
		// home is the HOME external commands get; "" for a fresh one.
		home string
	}{
		{name: "empty"},
		{name: "inherit", env: "inherit", home: "outside"},
		{name: "inherit with HOME in the sandbox", env: "inherit", home: "sandbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			wantHome := ""
			switch tc.home {
			case "outside":
				wantHome = t.TempDir()
				t.Setenv("HOME", wantHome)
			case "sandbox":
				t.Setenv("HOME", dir)
			}
			// From serve's environment too, under inherit.
			t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(dir, "gitconfig"))
			t.Setenv("AGENTFORM_TEST_KEEP", "k")
			block := ""
			if tc.env != "" {
				block = fmt.Sprintf("env {\n    kind = %q\n  }", tc.env)
			}
			ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = ["env"]
  %s
  fs {
    kind = "read_write"
    path = %q
  }`, block, dir))
			run := script
			if tc.env == "" {
				// Not in the environment of an empty policy: set, it
				// would be refused (below).
				run = strings.Replace(script, " AGENTFORM_TEST_KEEP=k", "", 1)
			}
			res, out := bashMustRun(t, ex, a, run)
			if res.Status != StatusSuccess {
				t.Fatalf("got: status %s stderr %q", res.Status, out.Stderr)
			}
			vars := envLines(out.Stdout)
			if vars["LC_ALL"] != "C" || vars["TZ"] != "UTC" {
				t.Errorf("got:  LC_ALL=%q TZ=%q\nwant: the script's LC_ALL=C and TZ=UTC\n%s", vars["LC_ALL"], vars["TZ"], out.Stdout)
			}
			if tc.env == "inherit" && vars["AGENTFORM_TEST_KEEP"] != "k" {
				t.Errorf("got:  AGENTFORM_TEST_KEEP=%q\nwant: serve's k\n%s", vars["AGENTFORM_TEST_KEEP"], out.Stdout)
			}
			if vars["PATH"] != os.Getenv("PATH") || strings.Contains(vars["PATH"], "/nowhere") {
				t.Errorf("got:  PATH=%q\nwant: serve's PATH, not the script's", vars["PATH"])
			}
			if tmp := vars["TMPDIR"]; tmp == "" || pathWithin(dir, tmp) {
				t.Errorf("got:  TMPDIR=%q\nwant: serve's temporary directory, not the script's $PWD", tmp)
			}
			for _, name := range denied {
				if v, ok := vars[name]; ok {
					t.Errorf("got:  %s=%s in the environment of an external command\nwant: no %s", name, v, name)
				}
			}
			home := vars["HOME"]
			switch {
			case wantHome != "":
				if home != wantHome {
					t.Fatalf("got:  HOME=%q\nwant: the env policy's HOME %q", home, wantHome)
				}
			case !filepath.IsAbs(home) || pathWithin(dir, home):
				t.Fatalf("got:  HOME=%q\nwant: a directory outside the sandbox %s", home, dir)
			default:
				if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("got:  HOME %s still there (%v)\nwant: removed after the command", home, err)
				}
			}
		})
	}
}

// TestBashExecEnvironmentSetByScript: a variable the script sets or
// changes for an external command, other than a language, time zone or
// width, refuses the command and stops the run: GREP=/bin/sh made zgrep
// run a shell, and any such variable may name a program.
func TestBashExecEnvironmentSetByScript(t *testing.T) {
	if _, err := exec.LookPath("env"); err != nil {
		t.Skip("env is not on PATH")
	}
	t.Setenv("AGENTFORM_TEST_KEEP", "k")
	ex, a := bashTestExecutor(t, `commands = ["env"]
  env {
    kind = "inherit"
  }`)
	// A policy variable the script unsets, and IFS, do not reach the
	// command; an ordinary locale and time zone do.
	if res, out := bashMustRun(t, ex, a, `unset AGENTFORM_TEST_KEEP; IFS=, LC_ALL=C.UTF-8 TZ=:Europe/Paris env`); res.Status != StatusSuccess {
		t.Errorf("got: %s %q", res.Status, out.Stderr)
	} else if vars := envLines(out.Stdout); vars["AGENTFORM_TEST_KEEP"] != "" || vars["IFS"] != "" || vars["LC_ALL"] != "C.UTF-8" {
		t.Errorf("got:\n%s\nwant: no AGENTFORM_TEST_KEEP, no IFS, LC_ALL=C.UTF-8", out.Stdout)
	} else if vars["TZ"] != ":Europe/Paris" {
		t.Errorf("got: TZ=%q\nwant: :Europe/Paris", vars["TZ"])
	}
	for _, script := range []string{
		`echo before; GREP='/bin/sh -c id' env; echo after`,
		`echo before; export AGENTFORM_TEST_KEEP=changed; env; echo after`,
		`echo before; DIFF=/bin/sh; export DIFF; (env); echo after`,
		`echo before; LANGUAGE=../../x LC_ALL=C env; echo after`,
		`echo before; LC_ALL=/tmp/locale env; echo after`,
		`echo before; TZ=:/etc/x env; echo after`,
		`echo before; TZ=:../x env; echo after`,
		`echo before; TZ=:./tz env; echo after`,
		`echo before; TZ=.tz env; echo after`,
		`echo before; TZ=../../tmp/zone env; echo after`,
	} {
		t.Run(script, func(t *testing.T) {
			res, out := bashMustRun(t, ex, a, script)
			if res.Status != StatusError || out.ExitCode != 126 || !strings.Contains(out.Stderr, "but external commands get only the variables of the tool's env policy") || strings.Contains(out.Stdout, "after") || out.Stdout != "before\n" {
				t.Errorf("got:  status %s exit %d stdout %q stderr %q\nwant: the command refused and the run stopped", res.Status, out.ExitCode, out.Stdout, out.Stderr)
			}
		})
	}
}

func TestBashRefusesCommandsInWritableTree(t *testing.T) {
	h := &Host{Logf: t.Logf}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"run.sh": "#!/bin/sh\necho original\n", "bin/agentform-test-tool": "#!/bin/sh\n"})
	for _, f := range []string{"run.sh", "bin/agentform-test-tool"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	start := func(kind string, commands ...string) error {
		_, err := newBashExecutor(context.Background(), h, "sh", []*artifact.Tool{{Name: "sh", Kind: artifact.KindBash, Bash: &artifact.Bash{
			Commands: commands,
			FS:       &artifact.BashFS{Kind: kind, Path: dir},
		}}})
		return err
	}
	for _, command := range []string{filepath.Join(dir, "run.sh"), "agentform-test-tool"} {
		err := start("read_write", "grep", command)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the command %q", command)) || !strings.Contains(err.Error(), "inside the tool's read_write filesystem") {
			t.Fatalf("command %s\ngot:  %v\nwant: a startup error naming it as inside the read_write filesystem", command, err)
		}
	}
	// An overlay is a copy: its commands stay as they are.
	if err := start("overlay", filepath.Join(dir, "run.sh")); err != nil {
		t.Fatalf("overlay\ngot:  %v\nwant: no error", err)
	}

	// The shell never writes an allowed command, also through a link, in
	// a tree that holds one all the same.
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run.sh", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(`printf '#!/bin/sh\nid\n' > run.sh; echo "w=$?"; echo x >> run.sh; echo "a=$?"; echo y > link; echo "l=$?"; echo ok > other.txt; echo "o=$?"`), "script")
	if err != nil {
		t.Fatal(err)
	}
	job := &shellJob{file: file, root: root, dir: root, env: []string{"HOME=" + root}, commands: newCommandSet("", []string{filepath.Join(root, "run.sh")}), what: "the script"}
	out, err := job.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := "w=1\na=1\nl=1\no=0\n"; out.Stdout != want || !strings.Contains(out.Stderr, "one of the tool's commands") {
		t.Fatalf("got:  %q, stderr %q\nwant: %q and the writes refused on standard error", out.Stdout, out.Stderr, want)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "run.sh")); string(b) != "#!/bin/sh\necho original\n" {
		t.Fatalf("got:  run.sh %q\nwant: unchanged", b)
	}
}

// TestBashGuardsOtherToolsCommands: a read_write tool may not hold another
// tool's command (a script of the one would choose what the other runs),
// and its shell writes no command of the agent's tools through a hard
// link either.
func TestBashGuardsOtherToolsCommands(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"data/x": "", "bin/helper": "#!/bin/sh\necho original\n", "own/run": "#!/bin/sh\necho own\n", "srv/server": "#!/bin/sh\necho server\n"})
	for _, f := range []string{"bin/helper", "own/run", "srv/server"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(root, "bin", "helper")
	agent := func(writerPath string) *Host {
		return &Host{Logf: t.Logf, Dir: root, Agent: &artifact.Agent{Tools: []artifact.Tool{
			{Name: "writer", Kind: artifact.KindBash, Bash: &artifact.Bash{Commands: []string{filepath.Join(root, "own", "run")}, FS: &artifact.BashFS{Kind: "read_write", Path: writerPath}}},
			{Name: "runner", Kind: artifact.KindBash, Bash: &artifact.Bash{Commands: []string{helper}}},
			{Name: "server__x", Kind: artifact.KindMCP, MCP: &artifact.MCP{Transport: "stdio", Command: &artifact.String{Value: filepath.Join(root, "srv", "server")}}},
		}}}
	}
	h := agent(filepath.Join(root, "bin"))
	_, err = newBashExecutor(context.Background(), h, "writer", []*artifact.Tool{&h.Agent.Tools[0]})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`the command %q (%s) of tool "runner" is inside this tool's read_write filesystem`, helper, helper)) {
		t.Fatalf("writer over bin\ngot:  %v\nwant: a startup error naming runner's command", err)
	}

	h = agent(filepath.Join(root, "srv"))
	_, err = newBashExecutor(context.Background(), h, "writer", []*artifact.Tool{&h.Agent.Tools[0]})
	if err == nil || !strings.Contains(err.Error(), `of tool "server__x" is inside this tool's read_write filesystem`) {
		t.Fatalf("writer over srv\ngot:  %v\nwant: a startup error naming the MCP server's command", err)
	}

	// A hard link of the runner's command in the writer's tree.
	if err := os.Link(helper, filepath.Join(root, "data", "hl")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if err := os.Link(filepath.Join(root, "own", "run"), filepath.Join(root, "data", "own")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "srv", "server"), filepath.Join(root, "data", "srv")); err != nil {
		t.Fatal(err)
	}
	h = agent(filepath.Join(root, "data"))
	ex, err := newBashExecutor(context.Background(), h, "writer", []*artifact.Tool{&h.Agent.Tools[0]})
	if err != nil {
		t.Fatalf("writer over data\ngot:  %v\nwant: started", err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	for _, script := range []string{`printf '#!/bin/sh\nid\n' > hl`, `echo x >> own`, `echo x > srv`, `echo ok > other.txt`} {
		args, _ := json.Marshal(map[string]string{"script": script})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := ex.Call(ctx, &Call{Tool: &h.Agent.Tools[0], Args: args, Event: func(string, any) {}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var out shellOutcome
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatal(err)
		}
		refused := strings.Contains(out.Stderr, "which a script may not write")
		if refused != (script != `echo ok > other.txt`) {
			t.Errorf("%s\ngot:  exit %d, stderr %q\nwant: refused only for the links", script, out.ExitCode, out.Stderr)
		}
	}
	for f, want := range map[string]string{"bin/helper": "#!/bin/sh\necho original\n", "own/run": "#!/bin/sh\necho own\n", "srv/server": "#!/bin/sh\necho server\n", "data/other.txt": "ok\n"} {
		if b, _ := os.ReadFile(filepath.Join(root, f)); string(b) != want {
			t.Errorf("%s\ngot:  %q\nwant: %q", f, b, want)
		}
	}
}

func TestBashRefusesProcessSubstitution(t *testing.T) {
	ex, a := bashTestExecutor(t, `commands = []
  limits {
    max_execution_time_secs = 5
    max_loop_iterations     = 100
  }`)
	const msg = "process substitution <(...) is not supported by agentform's bash sandbox"
	for _, tc := range []struct {
		script, msg string
		exit        int
	}{
		{`: <(:); wait`, msg, 2},
		{`echo x > >(:)`, strings.Replace(msg, "<(", ">(", 1), 2},
		{`f() { : <(:); }; echo never`, msg, 2},
		{`eval ': <(:); wait'`, msg, 126},
		{`builtin eval ': <(:); wait'`, msg, 126},
		{`echo ': <(:); wait' > lib.sh; . ./lib.sh`, msg, 126},
		{`echo ': <(:); wait' > lib.sh; source lib.sh`, msg, 126},
		{`trap ': <(:); wait' EXIT`, msg, 126},
		{`shopt -s expand_aliases; alias x=': <(:)'`, msg, 126},
	} {
		t.Run(tc.script, func(t *testing.T) {
			res, out, err := bashRunWithin(t, ex, a, tc.script, 20*time.Second)
			if err != nil {
				t.Fatalf("got:  %v\nwant: exit %d and %q", err, tc.exit, tc.msg)
			}
			if res.Status != StatusError || out.ExitCode != tc.exit || !strings.Contains(out.Stderr, tc.msg) {
				t.Fatalf("got:  exit %d, stderr %q\nwant: exit %d and %q", out.ExitCode, out.Stderr, tc.exit, tc.msg)
			}
			if strings.Contains(out.Stdout, "never") {
				t.Fatalf("got:  stdout %q\nwant: the script refused before it runs", out.Stdout)
			}
		})
	}
}

func TestBashLoopLimitEvasions(t *testing.T) {
	ex, a := bashTestExecutor(t, `commands = []
  limits {
    max_loop_iterations     = 10
    max_execution_time_secs = 30
  }`)
	const loop = `i=0; while [ $i -lt 100 ]; do i=$((i+1)); done; echo $i`
	for _, script := range []string{
		`builtin eval '` + loop + `'`,
		`command eval '` + loop + `'`,
		`command builtin eval '` + loop + `'`,
		`trap '` + loop + `' EXIT`,
		`trap -- '` + loop + `' EXIT; echo main`,
		`echo '` + loop + `' > l.sh; . ./l.sh`,
		`eval 'g() { ` + loop + `; }'; g`,
		// The script takes the loop-counting call from declare -f, and
		// makes it to restart the count.
		`f() { i=0; while [ $i -lt 100 ]; do i=$((i+1)); $reset; done; echo $i; }
src=$(declare -f f); m=${src#*` + loopMarker + `}; reset="` + loopMarker + `${m%% *} 0 start"; f`,
		`f() { i=0; while [ $i -lt 100 ]; do i=$((i+1)); : 0 start; done; echo $i; }; f`,
		`eval 'f() { i=0; while [ $i -lt 100 ]; do i=$((i+1)); : 0 start; done; echo $i; }'; f`,
		// Code that the interpreter parses itself.
		`shopt -s expand_aliases; alias x='echo $(` + loop + `)'; x`,
		`a=(1 2); unset 'a[$(` + loop + `)]'`,
	} {
		t.Run(script, func(t *testing.T) {
			res, out, err := bashRunWithin(t, ex, a, script, 30*time.Second)
			switch {
			case err != nil:
				if !strings.Contains(err.Error(), "max_loop_iterations (10)") {
					t.Fatalf("got:  %v\nwant: an error naming max_loop_iterations (10)", err)
				}
			case res.Status != StatusError || out.ExitCode != 126 || strings.Contains(out.Stdout, "100"):
				t.Fatalf("got:  status %s exit %d stdout %q stderr %q\nwant: the loop stopped at max_loop_iterations (10), or refused", res.Status, out.ExitCode, out.Stdout, out.Stderr)
			}
		})
	}

	// The loop-counting calls do not show.
	_, out := bashMustRun(t, ex, a, `f() { while false; do :; done; }; declare -f f; type f`)
	if strings.Contains(out.Stdout, "__agentform") {
		t.Fatalf("got:  %q\nwant: no agentform name", out.Stdout)
	}

	// What may run, does: each run of a nested loop, and of a trap or a
	// sourced file, counts afresh.
	for script, want := range map[string]string{
		`n=0; eval 'for o in 1 2 3; do for i in 1 2 3 4 5 6 7 8 9 10; do n=$((n+1)); done; done'; echo $n`:          "30\n",
		`trap 'for i in 1 2 3 4 5 6 7 8 9 10; do :; done; echo $i' EXIT; for i in 1 2 3 4 5 6 7 8 9 10; do :; done`: "10\n",
		`echo 'for i in 1 2 3 4 5 6 7 8 9 10; do n=$((n+1)); done' > l.sh; n=0; . ./l.sh; . ./l.sh; echo $n`:        "20\n",
	} {
		_, out := bashMustRun(t, ex, a, script)
		if out.Stdout != want || out.ExitCode != 0 {
			t.Errorf("%s\ngot:  %q exit %d stderr %q\nwant: %q", script, out.Stdout, out.ExitCode, out.Stderr, want)
		}
	}
}

func TestBashBuiltinsDoNotProbeHost(t *testing.T) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Skip("grep is not on PATH")
	}
	grep, _ = filepath.Abs(grep)
	dir := t.TempDir()
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = ["grep"]
  fs {
    kind = "read_write"
    path = %q
  }`, dir))
	for _, tc := range []struct{ name, script, stdout, stderr string }{
		{"pwd -P", `PWD=/proc/self/exe; pwd -P; builtin pwd -L -P`, root + "\n" + root + "\n", ""},
		{"source on PATH", `PATH=/etc; . passwd; echo "status=$?"`, "status=1\n", "source: open passwd: no such file or directory\n"},
		{"source here", `echo 'echo sourced $1' > lib.sh; PATH=/nonexistent; . lib.sh arg`, "sourced arg\n", ""},
		{"lookups", `f() { :; }; PATH=/usr/bin:/bin
type -p sh; echo "p=$?"; command -v sh; echo "v=$?"; type sh; echo "t=$?"; type -t sh; echo "tt=$?"
command -v /bin/sh; echo "vp=$?"; type /bin/sh; echo "tp=$?"
command -v grep f echo if; echo "v2=$?"
type f echo if grep; type -t f; type -p grep`,
			"p=1\nv=1\nt=1\ntt=1\nvp=1\ntp=1\n" + grep + "\nf\necho\nv2=1\nf is a function\necho is a shell builtin\nif is a shell keyword\ngrep is " + grep + "\nfunction\n" + grep + "\n",
			"type: sh: not found\ntype: /bin/sh: not found\n"},
		{"lookups under set -e and an ERR trap", `f() { :; }; trap 'echo ERR' ERR; set -e; command -v f >/dev/null; type f >/dev/null; command -v nothere || echo missing; echo end`, "missing\nend\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, out := bashMustRun(t, ex, a, tc.script)
			if out.Stdout != tc.stdout || out.Stderr != tc.stderr {
				t.Fatalf("got:  stdout %q stderr %q\nwant: stdout %q stderr %q", out.Stdout, out.Stderr, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestBashMemoryAndDiskBounded: a script that doubles a variable at each
// statement, which no limit of the tool counts, is stopped once serve's
// heap has grown past bashHeapLimit, before serve runs out of memory; one
// that appends to a file without end is stopped at bashWriteLimit.
func TestBashMemoryAndDiskBounded(t *testing.T) {
	heap, write := bashHeapLimit, bashWriteLimit
	bashHeapLimit, bashWriteLimit = 32<<20, 1<<20
	t.Cleanup(func() { bashHeapLimit, bashWriteLimit = heap, write })
	dir := t.TempDir()
	ex, a := bashTestExecutor(t, fmt.Sprintf(`fs {
    kind = "read_write"
    path = %q
  }`, dir))
	double := "x=aaaaaaaaaaaaaaaa" + strings.Repeat("; x=$x$x", 40) + "; echo done"
	_, out, err := bashRun(t, ex, a, double)
	if err == nil || !strings.Contains(err.Error(), "serve's memory grew by more than 32 MiB while the script ran") {
		t.Errorf("doubling: got %v (%+v)\nwant: stopped at the heap limit", err, out)
	}
	loop := "x=" + strings.Repeat("a", 4096) + "; while :; do echo \"$x\" >> f; done"
	_, out, err = bashRun(t, ex, a, loop)
	if err == nil || !strings.Contains(err.Error(), "wrote more than 1 MiB to files") {
		t.Errorf("appending: got %v (%+v)\nwant: stopped at the write limit", err, out)
	}
	if info, err := os.Stat(filepath.Join(dir, "f")); err != nil || info.Size() > 1<<20 {
		t.Errorf("got: %v, %v\nwant: f of at most 1 MiB", info, err)
	}
	// An ordinary script is not affected.
	if _, out, err := bashRun(t, ex, a, `x=$(printf 'a%.0s' 1 2 3); echo "$x" > g; echo ok`); err != nil || out.Stdout != "ok\n" {
		t.Errorf("got: %v %+v\nwant: ok", err, out)
	}
}

// TestBashRedirectedCommandGetsTheFile: an external command whose output
// the shell redirects to a file gets the file itself, so that cat and grep
// see that their input is their output (they stop at once instead of
// reading what they write), as under a shell.
func TestBashRedirectedCommandGetsTheFile(t *testing.T) {
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("cat is not on PATH")
	}
	dir := t.TempDir()
	ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = ["cat"]
  fs {
    kind = "read_write"
    path = %q
  }`, dir))
	res, out := bashMustRun(t, ex, a, `echo hello > c.txt; cat c.txt >> c.txt; echo "status $?"`)
	if res.Status != StatusSuccess || !strings.Contains(out.Stdout, "status 1") || !strings.Contains(out.Stderr, "input file is output file") {
		t.Errorf("got: %s stdout %q stderr %q\nwant: cat refusing to read its own output", res.Status, out.Stdout, out.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "c.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("got: %q, %v\nwant: c.txt unchanged", b, err)
	}
}

// A named pipe in the tool's filesystem is not opened: opening one waits
// for the other end in a system call that no limit and no deadline can
// interrupt, so a script that read it hung past every bound, and serve
// or invoke with it.
func TestBashDoesNotOpenNamedPipes(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ff")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	// Release any open still waiting when the test fails.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			time.Sleep(100 * time.Millisecond)
			f.Close()
		}
	})
	ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = []
  fs {
    kind = "read_write"
    path = %q
  }
  limits {
    max_execution_time_secs = 2
  }`, dir))
	for _, script := range []string{
		`read x < ff; echo "done $?"`,
		`echo hi > ff; echo "done $?"`,
		`echo ff/*; echo "done $?"`,
	} {
		res, out, err := bashRunWithin(t, ex, a, script, 10*time.Second)
		if err != nil {
			t.Fatalf("%s\ngot:  %v\nwant: the script runs to its end", script, err)
		}
		if res.Status != StatusSuccess || !strings.Contains(out.Stdout, "done") {
			t.Errorf("%s\ngot:  %s, stdout %q stderr %q\nwant: the script runs to its end", script, res.Status, out.Stdout, out.Stderr)
		}
	}
	_, out := bashMustRun(t, ex, a, `read x < ff`)
	if !strings.Contains(out.Stderr, "not a regular file") {
		t.Errorf("got:  stderr %q\nwant: the open refused as not a regular file", out.Stderr)
	}
}

// A relative fs path and command path are taken from the workspace serve
// was given (-chdir), as plan takes them, not from the directory serve
// happens to run in: an MCP client that starts agentform -chdir=WS serve
// in its own directory gave a read_write tool that directory's "data".
func TestBashRelativePathsFromWorkspace(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not on PATH")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"agent.acl": bashTestAgent + `
tool "sh" {
  kind         = "bash"
  capabilities = ["shell"]
  commands     = ["./bin/hello"]
  fs {
    kind = "read_write"
    path = "./data"
  }
}
`,
		"data/in-workspace.txt": "yes\n",
		"bin/hello":             "#!/bin/sh\necho hello from the workspace\n",
	})
	if err := os.Chmod(filepath.Join(dir, "bin", "hello"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, data := buildArtifact(t, dir, "a", nil)
	// serve runs elsewhere, in a directory with a data directory of its own.
	elsewhere := t.TempDir()
	writeFiles(t, elsewhere, map[string]string{"data/elsewhere.txt": "no\n"})
	t.Chdir(elsewhere)
	s, err := OpenData(context.Background(), filepath.Join(dir, "a.agent.tgz"), data, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := s.Call(context.Background(), Request{Tool: "sh", Args: json.RawMessage(`{"script":"echo *; ../bin/hello"}`), Session: "s", Via: "invoke", Held: s.Held()})
	if err != nil {
		t.Fatal(err)
	}
	var out shellOutcome
	_ = json.Unmarshal(resp.Output, &out)
	if resp.Status != StatusSuccess || out.Stdout != "in-workspace.txt\nhello from the workspace\n" {
		t.Fatalf("got:  %s %s %+v\nwant: the workspace's data and command", resp.Status, resp.Record.Error, out)
	}
}

// An overlay whose directory holds serve's TMPDIR is refused with what to
// do: its copy, made under TMPDIR, was copied into itself level after
// level (the whole tree each time) until its paths grew too long.
func TestBashOverlayHoldingTempDir(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "hi\n", "tmp/.keep": ""})
	ex, a := bashTestExecutor(t, fmt.Sprintf(`commands = []
  fs {
    kind = "overlay"
    path = %q
  }`, dir))
	t.Setenv("TMPDIR", filepath.Join(dir, "tmp"))
	_, _, err := bashRun(t, ex, a, `echo *`)
	if err == nil || !strings.Contains(err.Error(), "run agentform serve with a TMPDIR outside it") {
		t.Errorf("got:  %v\nwant: the TMPDIR inside the overlay refused", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(entries) != 1 {
		t.Errorf("got:  %d entries in TMPDIR\nwant: nothing copied there", len(entries))
	}
}

// A call cancelled (an interrupt of invoke, a client's cancellation) or out
// of time says so in words, not with Go's "context canceled".
func TestBashStoppedCallSaysWhy(t *testing.T) {
	ex, a := bashTestExecutor(t, `commands = ["sleep"]`)
	args, _ := json.Marshal(map[string]string{"script": "sleep 30"})
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want string
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			return ctx, cancel
		}, "the call was cancelled, and the script was stopped"},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}, "the script did not finish before the call's deadline and was stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			_, err := ex.Call(ctx, testCall(a, "sh", string(args)))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got:  %v\nwant: %s", err, tc.want)
			}
		})
	}
}
