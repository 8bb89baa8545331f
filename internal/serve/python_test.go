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
	"testing"
	"time"

	"github.com/agentform/agentform/internal/artifact"
)

// pythonTestPackage is a package in the style of the resolver's fixtures:
// plain typed functions at the package root, and a src layout with a TDK
// style class that imports a sibling module relatively.
var pythonTestPackage = map[string]string{
	"tools/pyproject.toml": "[project]\nname = \"tools\"\nversion = \"0.1.0\"\n",
	"tools/notes.py": `"""Plain typed functions."""

import os
import subprocess
import sys
import time
from typing import List, Optional


def lookup(title: str, limit: int = 2) -> dict:
    """Find notes by title."""
    print("noise on stdout")
    return {"title": title, "limit": limit}


async def shout(text: str) -> str:
    """Shout the text."""
    return text.upper()


def boom(city: str):
    """Always fails."""
    if city == "paths":
        raise FileNotFoundError(os.path.join(os.getcwd(), "data.txt") + " and " + __file__)
    raise ValueError("no weather for " + city)


def environment():
    """The process environment."""
    return {"env": dict(os.environ), "cwd": os.getcwd(), "file": __file__}


def tamper():
    """Tries to change its own package."""
    with open(__file__, "a") as f:
        f.write("# changed\n")
    return "changed"


def linger(pidfile: str, detached: bool = False):
    """Starts a child (in a session of its own when detached) and sleeps."""
    child = subprocess.Popen(["sleep", "30"], start_new_session=detached)
    with open(pidfile, "w") as f:
        f.write("%d\n%d\n" % (os.getpid(), child.pid))
    time.sleep(30)


def whoami(ctx):
    """Returns the request it was called with."""
    return {"args": ctx["args"], "state": ctx["state"], "config": ctx["config"]}


def detach() -> list:
    """Leaves processes behind: one in a session of its own, and one whose
    parent (a shell in a new session) has already exited."""
    child = subprocess.Popen(["sleep", "300"], start_new_session=True)
    out = subprocess.run(["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"], stdout=subprocess.PIPE, start_new_session=True).stdout
    return [child.pid, int(out)]


PLANTED = """def plant(paths=()):
    return "planted"


if __name__ == "__main__":
    print('{"output": "planted"}')
"""


def plant(paths: list) -> dict:
    """Tries to change what later calls run."""
    wrote = []
    for p in paths:
        try:
            with open(p, "w") as f:
                f.write(PLANTED)
            wrote.append(p)
        except OSError:
            pass
    return {"wrote": wrote, "cwd": os.getcwd()}


def leave():
    """Exits without an answer."""
    os._exit(3)


def note(text: str, suffix: Optional[str], *, loud: "bool | None") -> list:
    """Optional parameters without a default."""
    return [text, suffix, loud]


def repeat(text: str, times: int = 2, /, sep: str = "") -> str:
    """Positional-only parameters."""
    return sep.join([text] * times)


def scale(text: str, times: int, pad: "int | None" = None, sizes: List[int] = [], ratio: float = 1.0, **extra: int) -> list:
    """Whole numbers sent as floats."""
    return [text * times, pad, sizes, ratio, extra]
`,
	"tools/src/forecast/__init__.py": "",
	"tools/src/forecast/units.py":    "UNITS = [\"celsius\", \"fahrenheit\"]\n",
	"tools/src/forecast/tool.py": `from .units import UNITS


class Weather:
    """Current weather, with a session counter."""

    name = "current_weather"
    description = "Current weather for a city."
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

    async def execute(self, input):
        count = input.state["context"].get("count", 0) + 1
        return {
            "output": {"city": input.args["city"], "units": UNITS[0], "config": input.config},
            "state_update": [{"op": "add", "path": "/context/count", "value": count}],
        }
`,
	"tools/broken/pyproject.toml": "[project]\nname = \"broken\"\nversion = \"0.1.0\"\n",
	"tools/broken/broken.py":      "import agentform_no_such_module\n\n\ndef broken(x: str) -> str:\n    return x\n",
}

// pythonTestTools declares one tool block per function of the package.
const pythonTestTools = `
tool "lookup" {
  kind         = "python"
  source       = "./tools"
  export       = "lookup"
  capabilities = ["notes"]
}
tool "shout" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "boom" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "environment" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "tamper" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "linger" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "whoami" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "detach" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "plant" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "leave" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "weather" {
  kind         = "python"
  source       = "./tools"
  export       = "current_weather"
  capabilities = ["notes"]
  config = {
    units = "metric"
  }
}
tool "note" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "repeat" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "scale" {
  kind         = "python"
  source       = "./tools"
  capabilities = ["notes"]
}
tool "broken" {
  kind         = "python"
  source       = "./tools/broken"
  capabilities = ["notes"]
}
`

// pythonArtifact builds the python test workspace once per test.
func pythonArtifact(t *testing.T) (*artifact.Agent, *artifact.Archive) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	dir := t.TempDir()
	files := map[string]string{"agent.acl": `
agent "a" {
  capabilities = ["notes"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
` + pythonTestTools}
	for k, v := range pythonTestPackage {
		files[k] = v
	}
	writeFiles(t, dir, files)
	a, arch, _ := buildArtifact(t, dir, "a", nil)
	return a, arch
}

// TestPythonExecutor runs the python executor's tests on one artifact
// (building it reads every tool with python3, which takes a while).
func TestPythonExecutor(t *testing.T) {
	t.Setenv("AGENTFORM_TEST_SECRET", "hidden")
	a, arch := pythonArtifact(t)
	for _, tc := range []struct {
		name string
		test func(*testing.T, *artifact.Agent, *artifact.Archive)
	}{
		{"FunctionTools", testPythonFunctionTools},
		{"ClassToolGetsRequest", testPythonClassToolGetsRequest},
		{"ExceptionIsStatusError", testPythonExceptionIsStatusError},
		{"ImportFailure", testPythonImportFailure},
		{"EnvironmentAndPackage", testPythonEnvironmentAndPackage},
		{"StoppedKillsProcesses", testPythonStoppedKillsProcesses},
		{"NoAnswer", testPythonNoAnswer},
		{"RequestCannotBeForged", testPythonRequestCannotBeForged},
		{"CallsCannotChangeLaterCalls", testPythonCallsCannotChangeLaterCalls},
		{"DetachedProcessesKilled", testPythonDetachedProcessesKilled},
		{"ToolNotFound", testPythonToolNotFound},
		{"SchemaAndCallAgree", testPythonSchemaAndCallAgree},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, a, arch) })
	}
}

// pythonStart starts the executor of block.
func pythonStart(t *testing.T, a *artifact.Agent, arch *artifact.Archive, block string) (Executor, error) {
	t.Helper()
	h, _ := testHost(t, a, arch, nil)
	var tools []*artifact.Tool
	for i := range a.Tools {
		if a.Tools[i].Block == "tool."+block {
			tools = append(tools, &a.Tools[i])
		}
	}
	if len(tools) == 0 {
		t.Fatalf("no tools of block %s", block)
	}
	ex, err := factories[artifact.KindPython](context.Background(), h, block, tools)
	if err == nil {
		t.Cleanup(func() { _ = ex.Close() })
	}
	return ex, err
}

// pythonCall starts block's executor and calls its tool with args.
func pythonCall(t *testing.T, a *artifact.Agent, arch *artifact.Archive, block, args string) (*Result, error) {
	t.Helper()
	ex, err := pythonStart(t, a, arch, block)
	if err != nil {
		t.Fatalf("starting %s: %v", block, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return ex.Call(ctx, testCall(a, block, args))
}

func testPythonFunctionTools(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	for _, tc := range []struct {
		block, args, want string
	}{
		// Keyword arguments with a default; what the tool prints does
		// not disturb the answer.
		{"lookup", `{"title":"groceries"}`, `{"limit":2,"title":"groceries"}`},
		{"lookup", `{"title":"x","limit":5}`, `{"limit":5,"title":"x"}`},
		// A coroutine runs to its end.
		{"shout", `{"text":"hey"}`, `"HEY"`},
		// An Optional parameter without a default, which the schema does
		// not require, is None when left out.
		{"note", `{"text":"a"}`, `["a",null,null]`},
		{"note", `{"text":"a","suffix":"b","loud":true}`, `["a","b",true]`},
		// A positional-only parameter is passed by position.
		{"repeat", `{"text":"ab"}`, `"abab"`},
		{"repeat", `{"text":"ab","times":3,"sep":"-"}`, `"ab-ab-ab"`},
		{"repeat", `{"text":"ab","sep":"-"}`, `"ab-ab"`},
	} {
		res, err := pythonCall(t, a, arch, tc.block, tc.args)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.block, tc.args, err)
		}
		var got any
		if err := json.Unmarshal(res.Output, &got); err != nil {
			t.Fatalf("output %s: %v", res.Output, err)
		}
		norm, _ := json.Marshal(got)
		if string(norm) != tc.want || (res.Status != "" && res.Status != StatusSuccess) {
			t.Errorf("%s %s\ngot:  %s (status %q)\nwant: %s", tc.block, tc.args, norm, res.Status, tc.want)
		}
	}
}

func testPythonClassToolGetsRequest(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	ex, err := pythonStart(t, a, arch, "weather")
	if err != nil {
		t.Fatal(err)
	}
	call := testCall(a, "weather", `{"city":"Paris"}`)
	call.State = []byte(`{"context":{"count":4},"messages":[]}`)
	call.Config = []byte(`{"units":"metric"}`)
	res, err := ex.Call(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"city":"Paris","units":"celsius","config":{"units":"metric"}}`; string(res.Output) != want {
		t.Errorf("output\ngot:  %s\nwant: %s", res.Output, want)
	}
	if want := `[{"op":"add","path":"/context/count","value":5}]`; string(res.StateUpdate) != want {
		t.Errorf("state_update\ngot:  %s\nwant: %s", res.StateUpdate, want)
	}
}

func testPythonExceptionIsStatusError(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	res, err := pythonCall(t, a, arch, "boom", `{"city":"Atlantis"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"ValueError: no weather for Atlantis"`; res.Status != StatusError || string(res.Output) != want {
		t.Fatalf("got:  %s (status %q)\nwant: %s (status error)", res.Output, res.Status, want)
	}
	// The message does not name the call's home or the package's place.
	res, err = pythonCall(t, a, arch, "boom", `{"city":"paths"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"FileNotFoundError: data.txt and notes.py"`; res.Status != StatusError || string(res.Output) != want {
		t.Fatalf("got:  %s (status %q)\nwant: %s (status error)", res.Output, res.Status, want)
	}
	// Arguments the function does not take are the call's failure too.
	res, err = pythonCall(t, a, arch, "boom", `{"town":"x"}`)
	if err != nil || res.Status != StatusError || !strings.Contains(string(res.Output), "TypeError") {
		t.Fatalf("got:  %v %v\nwant: a TypeError result", res, err)
	}
}

func testPythonImportFailure(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	_, err := pythonCall(t, a, arch, "broken", `{"x":"y"}`)
	if err == nil || !strings.Contains(err.Error(), "ModuleNotFoundError: No module named 'agentform_no_such_module'") {
		t.Fatalf("got:  %v\nwant: an error with the ModuleNotFoundError", err)
	}
	if strings.Contains(err.Error(), os.TempDir()) {
		t.Fatalf("the error names a temporary path: %v", err)
	}
}

func testPythonEnvironmentAndPackage(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	res, err := pythonCall(t, a, arch, "environment", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Env  map[string]string `json:"env"`
		Cwd  string            `json:"cwd"`
		File string            `json:"file"`
	}
	if err := json.Unmarshal(res.Output, &got); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	for name := range got.Env {
		switch name {
		case "PATH", "HOME", "PYTHONDONTWRITEBYTECODE", "LANG", "LC_CTYPE":
		default:
			t.Errorf("the tool sees the variable %s\nwant: only PATH, HOME, PYTHONDONTWRITEBYTECODE and LANG", name)
		}
	}
	if got.Env["HOME"] != got.Cwd || got.Env["PYTHONDONTWRITEBYTECODE"] != "1" {
		t.Errorf("got:  HOME %q, working directory %q, PYTHONDONTWRITEBYTECODE %q\nwant: HOME the working directory, 1", got.Env["HOME"], got.Cwd, got.Env["PYTHONDONTWRITEBYTECODE"])
	}
	if _, err := os.Stat(got.Cwd); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the call's home %s is still there (%v)", got.Cwd, err)
	}

	// The package is read-only: a call cannot change what the next one
	// runs (unless it runs as root, for whom permissions do not count).
	ex, err := pythonStart(t, a, arch, "tamper")
	if err != nil {
		t.Fatal(err)
	}
	res, err = ex.Call(context.Background(), testCall(a, "tamper", `{}`))
	if os.Geteuid() != 0 && (err != nil || res.Status != StatusError || !strings.Contains(string(res.Output), "PermissionError")) {
		t.Fatalf("got:  %v %v\nwant: a PermissionError result", res, err)
	}

	// Close removes the extracted package.
	pe := ex.(*pythonExecutor)
	if _, err := os.Stat(filepath.Join(pe.src, "notes.py")); err != nil {
		t.Fatalf("the package is not extracted: %v", err)
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pe.dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got:  %s after Close (%v)\nwant: removed", pe.dir, err)
	}
}

func testPythonStoppedKillsProcesses(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("sleep is not on PATH")
	}
	ex, err := pythonStart(t, a, arch, "linger")
	if err != nil {
		t.Fatal(err)
	}
	// A child in the tool's process group, and one in a session of its
	// own (start_new_session), which the group's kill does not reach.
	for _, detached := range []bool{false, true} {
		t.Run(fmt.Sprintf("detached=%v", detached), func(t *testing.T) { testPythonStopped(t, a, ex, detached) })
	}
}

func testPythonStopped(t *testing.T, a *artifact.Agent, ex Executor, detached bool) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	args, _ := json.Marshal(map[string]any{"pidfile": pidfile, "detached": detached})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ex.Call(ctx, testCall(a, "linger", string(args)))
		done <- err
	}()
	var pids []int
	for deadline := time.Now().Add(30 * time.Second); len(pids) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("the tool did not write its pids")
		}
		b, _ := os.ReadFile(pidfile)
		if strings.Count(string(b), "\n") < 2 {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("pidfile holds %q", b)
			}
			pids = append(pids, pid)
		}
	}
	cancel()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("got:  %v\nwant: the call stopped", err)
	}
	for _, pid := range pids {
		waitProcessGone(t, pid)
	}
}

// testPythonRequestCannotBeForged calls a tool that takes the request
// (def whoami(ctx)) with an argument named ctx that looks like a request:
// the tool gets the call's real state and config, and the forged request
// only as an argument.
func testPythonRequestCannotBeForged(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	ex, err := pythonStart(t, a, arch, "whoami")
	if err != nil {
		t.Fatal(err)
	}
	forged := `{"ctx":{"args":{},"config":{"api":"http://evil"},"state":{"context":{"admin":true}}}}`
	call := testCall(a, "whoami", forged)
	call.State = []byte(`{"context":{"count":1},"messages":[]}`)
	call.Config = []byte(`{"api":"http://good"}`)
	res, err := ex.Call(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Args   json.RawMessage `json:"args"`
		State  json.RawMessage `json:"state"`
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(res.Output, &got); err != nil || res.Status == StatusError {
		t.Fatalf("output %s (status %q): %v", res.Output, res.Status, err)
	}
	if string(got.Config) != `{"api":"http://good"}` || string(got.State) != `{"context":{"count":1},"messages":[]}` {
		t.Fatalf("the tool got config %s and state %s\nwant: the call's config {\"api\":\"http://good\"} and state", got.Config, got.State)
	}
	if string(got.Args) != forged {
		t.Fatalf("args\ngot:  %s\nwant: %s", got.Args, forged)
	}
}

// testPythonCallsCannotChangeLaterCalls has a tool write over the runner's
// old place in the executor's directory (a file it could once write, which
// every later call ran) and, unless the test runs as root (for whom file
// modes do not count), over its own module: the next call runs as before.
func testPythonCallsCannotChangeLaterCalls(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	ex, err := pythonStart(t, a, arch, "plant")
	if err != nil {
		t.Fatal(err)
	}
	pe := ex.(*pythonExecutor)
	targets := []string{filepath.Join(pe.dir, "runner.py")}
	if os.Geteuid() != 0 {
		targets = append(targets, filepath.Join(pe.src, "notes.py"))
	}
	// The package is read-only, its directory too.
	err = filepath.WalkDir(pe.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o222 != 0 {
			t.Errorf("%s has mode %v; want no write permission", p, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := json.Marshal(map[string]any{"paths": targets})
	first, err := ex.Call(context.Background(), testCall(a, "plant", string(paths)))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Cwd string `json:"cwd"`
	}
	_ = json.Unmarshal(first.Output, &out)
	if out.Cwd == "" || strings.HasPrefix(out.Cwd, pe.dir) {
		t.Errorf("the call ran in %q\nwant: a directory outside %s", out.Cwd, pe.dir)
	}
	second, err := ex.Call(context.Background(), testCall(a, "plant", `{"paths":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(second.Output), "planted") {
		t.Fatalf("the first call (which wrote %s) changed the second: it answered %s", first.Output, second.Output)
	}
}

// testPythonDetachedProcessesKilled calls a tool that leaves a process in a
// session of its own behind, and one whose parent has already exited: the
// call kills both.
func testPythonDetachedProcessesKilled(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("sleep is not on PATH")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	res, err := pythonCall(t, a, arch, "detach", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	if err := json.Unmarshal(res.Output, &pids); err != nil || len(pids) != 2 {
		t.Fatalf("output %s (status %q): %v", res.Output, res.Status, err)
	}
	for _, pid := range pids {
		waitProcessGone(t, pid)
	}
}

func testPythonNoAnswer(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	_, err := pythonCall(t, a, arch, "leave", `{}`)
	if err == nil || !strings.Contains(err.Error(), "without an answer") {
		t.Fatalf("got:  %v\nwant: an error saying the tool ended without an answer", err)
	}
}

func testPythonToolNotFound(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	for i := range a.Tools {
		if a.Tools[i].Name == "lookup" {
			a.Tools[i].Entry = nil
		}
	}
	_, err := pythonStart(t, a, arch, "lookup")
	if want := "does not say where the tool is"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got:  %v\nwant: an error with %q", err, want)
	}
}

// testPythonSchemaAndCallAgree checks arguments as serve does, against
// the schema plan read from the signature, and calls the tool with those
// the schema accepts: what the schema lets through, the function takes.
func testPythonSchemaAndCallAgree(t *testing.T, a *artifact.Agent, arch *artifact.Archive) {
	for _, tc := range []struct {
		block, args string
		want        string // the output, or the schema's refusal
		refused     bool
	}{
		// null for an Optional parameter (with and without a default,
		// and annotated as a string) is None.
		{block: "note", args: `{"text":"a","suffix":null,"loud":null}`, want: `["a",null,null]`},
		{block: "note", args: `{"text":"a","suffix":"b","loud":false}`, want: `["a","b",false]`},
		{block: "note", args: `{"text":null}`, want: `at /text: got null, want string`, refused: true},
		// A whole number sent as a float is an int where the parameter is
		// annotated int (also in an Optional, a list or **kwargs), and
		// stays a float where it is annotated float; 2.5 is no integer.
		{block: "scale", args: `{"text":"ab","times":2.0}`, want: `["abab",null,[],1.0,{}]`},
		{block: "scale", args: `{"text":"ab","times":2,"pad":3.0,"sizes":[1.0,2],"ratio":2.0,"n":4.0}`, want: `["abab",3,[1,2],2.0,{"n":4}]`},
		{block: "repeat", args: `{"text":"ab","times":3.0}`, want: `"ababab"`},
		{block: "scale", args: `{"text":"ab","times":2.5}`, want: `at /times: got number, want integer`, refused: true},
		// An argument the function does not name is refused by the
		// schema, unless the function takes **kwargs.
		{block: "lookup", args: `{"title":"x","extra":1}`, want: `at /: additional properties 'extra' not allowed`, refused: true},
		{block: "environment", args: `{"x":1}`, want: `at /: additional properties 'x' not allowed`, refused: true},
		{block: "scale", args: `{"text":"a","times":1,"k":"v"}`, want: `["a",null,[],1.0,{"k":"v"}]`},
	} {
		var tool *artifact.Tool
		for i := range a.Tools {
			if a.Tools[i].Name == tc.block {
				tool = &a.Tools[i]
			}
		}
		sch, err := compileSchema(tool.Parameters)
		if err != nil {
			t.Fatalf("%s: compiling %s: %v", tc.block, tool.Parameters, err)
		}
		err = validateArgs(sch, json.RawMessage(tc.args))
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s\ngot:  %v (schema %s)\nwant: refused, %s", tc.block, tc.args, err, tool.Parameters, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: refused: %v (schema %s)", tc.block, tc.args, err, tool.Parameters)
			continue
		}
		res, err := pythonCall(t, a, arch, tc.block, tc.args)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.block, tc.args, err)
		}
		if string(res.Output) != tc.want || (res.Status != "" && res.Status != StatusSuccess) {
			t.Errorf("%s %s\ngot:  %s (status %q)\nwant: %s", tc.block, tc.args, res.Output, res.Status, tc.want)
		}
	}
}

// TestPythonEntryFromPlan: serve imports exactly the class or function
// plan read the schema from (agent.json's entry), for the resolver's own
// fixtures, so the two can never disagree about which one is the tool.
func TestPythonEntryFromPlan(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	for _, tc := range []struct{ pkg, export, want string }{
		{"tdk", "current_weather", "src forecast.tool Weather"},
		{"tdk", "daily_forecast", "src forecast.tool DailyForecast"},
		{"tdk", "DailyForecast", "src forecast.tool DailyForecast"},
		{"functions", "search", ". text_tools search"},
		{"generic", "greeter", ". greeter Greeter"},
		{"pure", "lookup", ". notes lookup"},
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "tools", "pkg"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := copyTree(filepath.Join("..", "resolve", "testdata", "python", tc.pkg), filepath.Join(dir, "tools", "pkg")); err != nil {
			t.Fatal(err)
		}
		writeFiles(t, dir, map[string]string{"agent.acl": fmt.Sprintf(`
agent "a" {
  capabilities = ["x"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "t" {
  kind         = "python"
  source       = "./tools/pkg"
  export       = %q
  capabilities = ["x"]
}
`, tc.export)})
		a, _, _ := buildArtifact(t, dir, "a", nil)
		var entry *artifact.Entry
		for _, tl := range a.Tools {
			if tl.Name == "t" {
				entry = tl.Entry
			}
		}
		if entry == nil {
			t.Errorf("%s %s: agent.json has no entry", tc.pkg, tc.export)
			continue
		}
		root, module, err := pythonModule(filepath.Join(dir, "tools", "pkg"), entry.File)
		if err != nil {
			t.Errorf("%s %s: %v", tc.pkg, tc.export, err)
			continue
		}
		if got := root + " " + module + " " + entry.Attr; got != tc.want {
			t.Errorf("%s %s\ngot:  %s\nwant: %s", tc.pkg, tc.export, got, tc.want)
		}
	}
}
