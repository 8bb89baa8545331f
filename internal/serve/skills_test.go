package serve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/artifact"
)

// skillsTestExecutor builds a workspace with the skill "calc" (a directory
// with SKILL.md, a reference and scripts) and an inline skill "tone", and
// starts the skills executor.
func skillsTestExecutor(t *testing.T) (Executor, *artifact.Agent, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"agent.acl": `
agent "a" {
  capabilities = ["skills", "skills::execute"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

skill "calc" {
  source = "./skills/calc"
}

skill "tone" {
  description = "Keeps replies calm."
  content     = "Answer calmly.\n"
}
`,
		"skills/calc/SKILL.md": `---
name: calc
description: Adds numbers carefully.
allowed-tools:
  - adder
---

# Careful arithmetic

Run scripts/add.sh with two numbers.
`,
		"skills/calc/reference/method.md": "Add the units first.\n",
		"skills/calc/scripts/add.sh":      "echo \"$(($1 + $2))\"\n",
		"skills/calc/scripts/escape.sh":   "echo before\ntouch marker\necho after\n",
		"skills/calc/scripts/read.sh":     "read x < /etc/hostname; echo \"got $x\"\n",
		"skills/calc/scripts/fail.sh":     "echo bad >&2\nexit 3\n",
		"skills/calc/scripts/hello.py":    "import os, sys\nprint('hi', ' '.join(sys.argv[1:]))\nprint(sorted(os.listdir('.')))\n",
		"skills/calc/scripts/raise.py":    "raise SystemExit('no luck')\n",
		"skills/calc/scripts/env.py":      "import json, os\nprint(json.dumps({'home': os.environ['HOME'], 'cwd': os.getcwd(), 'in_home': os.listdir(os.environ['HOME'])}))\n",
		"skills/calc/scripts/detach.py":   "import subprocess\nchild = subprocess.Popen(['sleep', '300'], start_new_session=True)\nprint(child.pid)\n",
		"skills/calc/scripts/code.py":     "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
		"skills/calc/data.bin":            "\xff\xfe\x00binary",
	})
	a, arch, _ := buildArtifact(t, dir, "a", nil)
	h, _ := testHost(t, a, arch, nil)
	var tools []*artifact.Tool
	for i := range a.Tools {
		if a.Tools[i].Kind == artifact.KindSkills {
			tools = append(tools, &a.Tools[i])
		}
	}
	if len(tools) != 5 {
		t.Fatalf("got %d skill tools, want 5", len(tools))
	}
	ex, err := factories[artifact.KindSkills](context.Background(), h, "skills", tools)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	return ex, a, dir
}

// skillCall calls a skill tool.
func skillCall(t *testing.T, ex Executor, a *artifact.Agent, tool, args string) (*Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return ex.Call(ctx, testCall(a, tool, args))
}

func TestSkillsReadTools(t *testing.T) {
	ex, a, _ := skillsTestExecutor(t)
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"list_skills", `{}`, `[{"description":"Adds numbers carefully.","name":"calc"},{"description":"Keeps replies calm.","name":"tone"}]`},
		{"get_skill", `{"skill":"calc"}`, `"---\nname: calc\ndescription: Adds numbers carefully.\nallowed-tools:\n  - adder\n---\n\n# Careful arithmetic\n\nRun scripts/add.sh with two numbers.\n"`},
		{"get_skill", `{"skill":"tone"}`, `"---\nname: tone\ndescription: Keeps replies calm.\n---\n\nAnswer calmly.\n"`},
		{"describe_skill", `{"skill":"calc"}`, `{"allowed_tools":["adder"],"description":"Adds numbers carefully.","files":["SKILL.md","data.bin","reference/method.md","scripts/add.sh","scripts/code.py","scripts/detach.py","scripts/env.py","scripts/escape.sh","scripts/fail.sh","scripts/hello.py","scripts/raise.py","scripts/read.sh"],"name":"calc"}`},
		{"read_skill_file", `{"skill":"calc","path":"reference/method.md"}`, `"Add the units first.\n"`},
		{"read_skill_file", `{"skill":"calc","path":"./reference/method.md"}`, `"Add the units first.\n"`},
	} {
		res, err := skillCall(t, ex, a, tc.tool, tc.args)
		if err != nil {
			t.Errorf("%s %s: %v", tc.tool, tc.args, err)
			continue
		}
		var v any
		if err := json.Unmarshal(res.Output, &v); err != nil {
			t.Fatalf("output %s: %v", res.Output, err)
		}
		got, _ := json.Marshal(v)
		if string(got) != tc.want || res.Status != StatusSuccess {
			t.Errorf("%s %s\ngot:  %s (status %q)\nwant: %s", tc.tool, tc.args, got, res.Status, tc.want)
		}
	}
}

func TestSkillsRefuseBadRequests(t *testing.T) {
	ex, a, _ := skillsTestExecutor(t)
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"get_skill", `{"skill":"nope"}`, `there is no skill "nope"; the skills are calc, tone`},
		{"read_skill_file", `{"skill":"calc","path":"../tone/SKILL.md"}`, `may not contain ".."`},
		{"read_skill_file", `{"skill":"calc","path":"reference/../SKILL.md"}`, `may not contain ".."`},
		{"read_skill_file", `{"skill":"calc","path":"/etc/passwd"}`, "is absolute"},
		{"read_skill_file", `{"skill":"calc","path":"missing.md"}`, `skill "calc" has no file "missing.md"`},
		{"read_skill_file", `{"skill":"calc","path":""}`, "the path is empty"},
		{"read_skill_file", `{"skill":"calc","path":"data.bin"}`, "not a text file"},
		{"run_skill_script", `{"skill":"calc","script":"reference/method.md"}`, "runs .sh and .py scripts only"},
		{"run_skill_script", `{"skill":"calc","script":"../../../bin/sh"}`, `may not contain ".."`},
		{"run_skill_script", `{"skill":"calc","script":"scripts/none.sh"}`, "has no file"},
		// A Python script's arguments may not name paths outside the
		// skill's copy.
		{"run_skill_script", `{"skill":"calc","script":"scripts/hello.py","args":["/etc/passwd"]}`, "is an absolute path"},
		{"run_skill_script", `{"skill":"calc","script":"scripts/hello.py","args":["ok","--out=/tmp/x"]}`, "is an absolute path"},
		{"run_skill_script", `{"skill":"calc","script":"scripts/hello.py","args":["../../secret"]}`, `may not contain ".."`},
		{"run_skill_script", `{"skill":"calc","script":"scripts/hello.py","args":["reference/../../x"]}`, `may not contain ".."`},
		{"run_skill_script", `{"skill":"calc","script":"scripts/hello.py","args":["--in=../x"]}`, `may not contain ".."`},
		{"run_skill_script", `{"skill":"calc","script":"scripts/hello.py","args":["..\\x"]}`, `may not contain ".."`},
		{"run_skill_script", `{"skill":"calc","script":"scripts/hello.py","args":[".."]}`, `may not contain ".."`},
	} {
		_, err := skillCall(t, ex, a, tc.tool, tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s\ngot:  %v\nwant: an error with %q", tc.tool, tc.args, err, tc.want)
		}
	}
}

func TestSkillsRunShellScript(t *testing.T) {
	ex, a, dir := skillsTestExecutor(t)
	run := func(args string) (*Result, shellOutcome) {
		t.Helper()
		res, err := skillCall(t, ex, a, "run_skill_script", args)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		var out shellOutcome
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatalf("output %s: %v", res.Output, err)
		}
		return res, out
	}
	res, out := run(`{"skill":"calc","script":"scripts/add.sh","args":["2","40"]}`)
	if out.Stdout != "42\n" || out.ExitCode != 0 || res.Status != StatusSuccess {
		t.Fatalf("add.sh\ngot:  %q exit %d status %q (stderr %q)\nwant: %q exit 0", out.Stdout, out.ExitCode, res.Status, out.Stderr, "42\n")
	}
	res, out = run(`{"skill":"calc","script":"scripts/fail.sh"}`)
	if out.ExitCode != 3 || out.Stderr != "bad\n" || res.Status != StatusError {
		t.Fatalf("fail.sh\ngot:  exit %d stderr %q status %q\nwant: exit 3, stderr %q, status error", out.ExitCode, out.Stderr, res.Status, "bad\n")
	}
	// No external command runs, and the script stops at the first one.
	res, out = run(`{"skill":"calc","script":"scripts/escape.sh"}`)
	if res.Status != StatusError || out.Stdout != "before\n" || !strings.Contains(out.Stderr, `command "touch" is not allowed: the tool allows shell builtins only`) {
		t.Fatalf("escape.sh\ngot:  status %q stdout %q stderr %q\nwant: before, then the refusal of touch", res.Status, out.Stdout, out.Stderr)
	}
	for _, d := range []string{dir, filepath.Join(dir, "skills", "calc"), filepath.Join(dir, "skills", "calc", "scripts")} {
		if _, err := os.Stat(filepath.Join(d, "marker")); err == nil {
			t.Fatalf("touch ran: %s/marker exists", d)
		}
	}
	// The shell's own file access stays in the skill's copy.
	_, out = run(`{"skill":"calc","script":"scripts/read.sh"}`)
	if out.Stdout != "got \n" || !strings.Contains(out.Stderr, "outside the tool's filesystem") {
		t.Fatalf("read.sh\ngot:  stdout %q stderr %q\nwant: nothing read from /etc/hostname", out.Stdout, out.Stderr)
	}
}

func TestSkillsRunPythonScript(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	ex, a, _ := skillsTestExecutor(t)
	res, err := skillCall(t, ex, a, "run_skill_script", `{"skill":"calc","script":"scripts/hello.py","args":["there","you"]}`)
	if err != nil {
		t.Fatal(err)
	}
	var out shellOutcome
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	// The script runs in a copy of the skill's files.
	want := "hi there you\n['SKILL.md', 'data.bin', 'reference', 'scripts']\n"
	if out.Stdout != want || out.ExitCode != 0 || res.Status != StatusSuccess {
		t.Fatalf("got:  %q exit %d status %q (stderr %q)\nwant: %q exit 0", out.Stdout, out.ExitCode, res.Status, out.Stderr, want)
	}
	res, err = skillCall(t, ex, a, "run_skill_script", `{"skill":"calc","script":"scripts/raise.py"}`)
	if err != nil {
		t.Fatal(err)
	}
	out = shellOutcome{}
	_ = json.Unmarshal(res.Output, &out)
	if out.ExitCode != 1 || out.Stderr != "no luck\n" || res.Status != StatusError {
		t.Fatalf("got:  exit %d stderr %q status %q\nwant: exit 1, stderr %q, status error", out.ExitCode, out.Stderr, res.Status, "no luck\n")
	}
	// A script killed by a signal exits with 128 plus its number.
	res, err = skillCall(t, ex, a, "run_skill_script", `{"skill":"calc","script":"scripts/code.py"}`)
	if err != nil {
		t.Fatal(err)
	}
	out = shellOutcome{}
	_ = json.Unmarshal(res.Output, &out)
	if out.ExitCode != 128+15 || res.Status != StatusError {
		t.Fatalf("got:  exit %d status %q (stderr %q)\nwant: exit 143, status error", out.ExitCode, res.Status, out.Stderr)
	}
	// Arguments that only look like dots are not paths out.
	res, err = skillCall(t, ex, a, "run_skill_script", `{"skill":"calc","script":"scripts/hello.py","args":["a..b","1.5","x=y"]}`)
	if err != nil {
		t.Fatal(err)
	}
	out = shellOutcome{}
	_ = json.Unmarshal(res.Output, &out)
	if !strings.HasPrefix(out.Stdout, "hi a..b 1.5 x=y\n") {
		t.Fatalf("got:  %q\nwant: hi a..b 1.5 x=y", out.Stdout)
	}
}

// TestSkillsPythonScriptHome checks that a Python script runs in the
// skill's copy with HOME a fresh empty directory of its own.
func TestSkillsPythonScriptHome(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	ex, a, _ := skillsTestExecutor(t)
	res, err := skillCall(t, ex, a, "run_skill_script", `{"skill":"calc","script":"scripts/env.py"}`)
	if err != nil {
		t.Fatal(err)
	}
	var out shellOutcome
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	var got struct {
		Home   string   `json:"home"`
		Cwd    string   `json:"cwd"`
		InHome []string `json:"in_home"`
	}
	if err := json.Unmarshal([]byte(out.Stdout), &got); err != nil {
		t.Fatalf("stdout %q (stderr %q): %v", out.Stdout, out.Stderr, err)
	}
	if got.Home == got.Cwd || len(got.InHome) != 0 || strings.HasPrefix(got.Home, got.Cwd+string(filepath.Separator)) {
		t.Fatalf("got:  HOME %q (holding %v), working directory %q\nwant: HOME an empty directory apart from the skill's copy", got.Home, got.InHome, got.Cwd)
	}
	for _, d := range []string{got.Home, got.Cwd} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after the call (%v)", d, err)
		}
	}
}

// TestSkillsPythonScriptDetachedKilled runs a script that leaves a process
// in a session of its own behind: the call kills it.
func TestSkillsPythonScriptDetachedKilled(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("sleep is not on PATH")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	ex, a, _ := skillsTestExecutor(t)
	res, err := skillCall(t, ex, a, "run_skill_script", `{"skill":"calc","script":"scripts/detach.py"}`)
	if err != nil {
		t.Fatal(err)
	}
	var out shellOutcome
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out.Stdout))
	if err != nil {
		t.Fatalf("stdout %q (stderr %q): %v", out.Stdout, out.Stderr, err)
	}
	waitProcessGone(t, pid)
}

// TestCheckScriptArgs: an absolute path or a ".." segment is refused
// whole, as an option's value after "=", and glued to short options
// (-i/etc/x, -vi../x); ordinary arguments pass.
func TestCheckScriptArgs(t *testing.T) {
	for _, a := range []string{"/etc/hostname", "--input=/etc/hostname", "-i/etc/hostname", "-vi/etc/hostname", "-i../x", "-vi../x", "../x", "a/../../x", `-i\etc`, "-odata/out.txt", "-n../"} {
		if err := checkScriptArgs([]string{"ok", a}); err == nil {
			t.Errorf("%q: got no error\nwant: refused", a)
		}
	}
	for _, a := range []string{"-n5", "-v", "--count=3", "data/in.txt", "-o", "--", "-", "a=b/c", "x..y"} {
		if err := checkScriptArgs([]string{a}); err != nil {
			t.Errorf("%q: got %v\nwant: allowed", a, err)
		}
	}
}
