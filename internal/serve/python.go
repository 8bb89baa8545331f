package serve

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentform/agentform/internal/artifact"
)

// pythonRunner is the script that runs a python tool; see its docstring for
// how it finds the tool and calls it.
//
//go:embed python_runner.py
var pythonRunner []byte

func init() { register(artifact.KindPython, newPythonExecutor) }

// pythonMaxAnswer bounds the answer of one python call.
const pythonMaxAnswer = 64 << 20

// pythonStartTimeout bounds the startup steps that run python3 (finding
// the interpreter and the tool); none of them runs the tool's code.
const pythonStartTimeout = 30 * time.Second

// pythonExecutor runs the tool of one python block: the package is
// extracted once, read-only, into a private directory, and every call is
// a python3 -I subprocess of the embedded runner, with the call's
// {args, state, config} on standard input and a minimal environment.
//
// Dependencies locked in uv.lock are not installed: the package runs with
// the standard library and whatever the host's python3 has installed.
type pythonExecutor struct {
	// dir is the private directory: runner.py, src/ (the package) and
	// one temporary home directory per call.
	dir, runner, src string
	// python is the interpreter's real path (not a shim such as pyenv's,
	// which needs the environment a call does not get).
	python string
	tools  map[string]*pythonTool
}

// pythonTool is where a tool is in the package, as the runner located it.
type pythonTool struct {
	Root   string `json:"root"`
	Module string `json:"module"`
	Attr   string `json:"attr"`
	Kind   string `json:"kind"`
}

// newPythonExecutor is the Factory of python blocks. It fails when python3
// is missing or the tool cannot be found in the package.
func newPythonExecutor(ctx context.Context, h *Host, block string, tools []*artifact.Tool) (Executor, error) {
	python, err := pythonInterpreter(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agentform-python-")
	if err != nil {
		return nil, fmt.Errorf("creating a directory for the python package: %w", err)
	}
	e := &pythonExecutor{dir: dir, runner: filepath.Join(dir, "runner.py"), src: filepath.Join(dir, "src"), python: python, tools: map[string]*pythonTool{}}
	ok := false
	defer func() {
		if !ok {
			_ = e.Close()
		}
	}()
	if err := os.WriteFile(e.runner, pythonRunner, 0o600); err != nil {
		return nil, err
	}
	for _, t := range tools {
		if !strings.HasSuffix(t.File, "/") {
			return nil, fmt.Errorf("tool %q has no package in the artifact (file %q); rebuild it with agentform apply", t.Name, t.File)
		}
	}
	// A block's tools share one package.
	if err := extractDir(h.Files, tools[0].File, e.src); err != nil {
		return nil, err
	}
	if err := setTreeWritable(e.src, false); err != nil {
		return nil, err
	}
	for _, t := range tools {
		export := t.Export
		if export == "" {
			export = strings.TrimPrefix(t.Block, "tool.")
		}
		loc, err := e.locate(ctx, export)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		e.tools[t.Name] = loc
	}
	ok = true
	return e, nil
}

// pythonInterpreter finds python3 on the PATH of serve and returns the
// path of the interpreter it runs.
func pythonInterpreter(ctx context.Context) (string, error) {
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", errors.New("python3 is not on the PATH of agentform serve; python tools and skill scripts need Python 3.8 or later")
	}
	ctx, cancel := context.WithTimeout(ctx, pythonStartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, "-I", "-c", "import sys; sys.stdout.write(sys.executable)")
	inOwnGroup(cmd)
	out, err := cmd.Output()
	_ = killGroup(cmd)
	exe := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(exe) {
		return "", fmt.Errorf("running %s to find its interpreter failed (%v); check that python3 works on this host", p, err)
	}
	return exe, nil
}

// extractDir writes the archive files under prefix ("tools/x/src/") into
// dir, which must not exist yet.
func extractDir(files map[string][]byte, prefix, dir string) error {
	n := 0
	for name, data := range files {
		rel, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(rel)) || path.Clean(rel) != rel {
			return fmt.Errorf("the artifact holds a file with an unsafe path: %s", name)
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("the artifact has no files under %s", prefix)
	}
	return nil
}

// setTreeWritable makes the files and directories under dir writable by
// their owner, or read-only, so that no call can change the package the
// next one runs.
func setTreeWritable(dir string, writable bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o400)
		if d.IsDir() {
			mode = 0o500
		}
		if writable {
			mode |= 0o200
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return os.Chmod(p, mode)
	})
}

// locate asks the runner where the tool export is in the package.
func (e *pythonExecutor) locate(ctx context.Context, export string) (*pythonTool, error) {
	ctx, cancel := context.WithTimeout(ctx, pythonStartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.python, "-I", e.runner, "locate", e.src, export)
	cmd.Dir = e.dir
	cmd.Env = pythonEnv(e.dir)
	inOwnGroup(cmd)
	out, err := cmd.Output()
	_ = killGroup(cmd)
	var ans struct {
		pythonTool
		Error string `json:"error"`
	}
	if jerr := json.Unmarshal(out, &ans); jerr != nil {
		return nil, fmt.Errorf("finding %q in the package failed (%v)", export, err)
	}
	if ans.Error != "" {
		return nil, fmt.Errorf("finding the tool in the package: %s", ans.Error)
	}
	return &ans.pythonTool, nil
}

// pythonEnv is the whole environment of a python subprocess: PATH, HOME
// (a private directory), PYTHONDONTWRITEBYTECODE and LANG.
func pythonEnv(home string) []string {
	lang := os.Getenv("LANG")
	if lang == "" {
		lang = "C.UTF-8"
	}
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "PYTHONDONTWRITEBYTECODE=1", "LANG=" + lang}
}

// pythonAnswer is the runner's answer to a call.
type pythonAnswer struct {
	Output      json.RawMessage `json:"output"`
	StateUpdate json.RawMessage `json:"state_update"`
	Status      string          `json:"status"`
	Error       *struct {
		Phase   string `json:"phase"`
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// Call runs one call in a fresh python3 process. An exception raised by the
// tool is a result with status error ("ValueError: message"); a tool that
// cannot be imported, a timeout or a crash is an error.
func (e *pythonExecutor) Call(ctx context.Context, call *Call) (*Result, error) {
	pt := e.tools[call.Tool.Name]
	if pt == nil {
		return nil, fmt.Errorf("tool %q is not served by this python executor", call.Tool.Name)
	}
	req, err := json.Marshal(map[string]json.RawMessage{"args": orJSON(call.Args, "{}"), "state": orJSON(call.State, "{}"), "config": orJSON(call.Config, "null")})
	if err != nil {
		return nil, fmt.Errorf("encoding the call: %w", err)
	}
	home, err := os.MkdirTemp(e.dir, "home-")
	if err != nil {
		return nil, fmt.Errorf("creating the call's home directory: %w", err)
	}
	defer os.RemoveAll(home)

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	limitErr := &limitError{fmt.Sprintf("the python tool's answer is larger than %d bytes", pythonMaxAnswer)}
	stdout := &cappedBuffer{lim: &outputLimit{max: pythonMaxAnswer, err: limitErr, cancel: cancel}}
	cmd := exec.CommandContext(runCtx, e.python, "-I", e.runner, "call", e.src, pt.Root, pt.Module, pt.Attr)
	cmd.Dir = home
	cmd.Env = pythonEnv(home)
	cmd.Stdin = bytes.NewReader(req)
	// The tool's standard error may hold anything, secrets included; it
	// goes nowhere.
	cmd.Stdout = stdout
	inOwnGroup(cmd)
	runErr := cmd.Run()
	_ = killGroup(cmd)
	if cause := context.Cause(runCtx); errors.Is(cause, limitErr) {
		return nil, limitErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("the python tool was stopped: %w", err)
	}
	var ans pythonAnswer
	if err := json.Unmarshal([]byte(stdout.String()), &ans); err != nil {
		if runErr == nil {
			runErr = err
		}
		return nil, fmt.Errorf("the python tool ended without an answer (%v)", runErr)
	}
	if x := ans.Error; x != nil {
		msg := x.Type
		if x.Message != "" {
			msg += ": " + x.Message
		}
		if x.Phase == "load" {
			hint := ""
			if x.Type == "ModuleNotFoundError" || x.Type == "ImportError" {
				hint = " (agentform serve runs the package with this host's python3 and the packages installed for it; install the tool's dependencies there)"
			}
			return nil, fmt.Errorf("the python tool cannot be loaded: %s%s", msg, hint)
		}
		out, _ := json.Marshal(msg)
		return &Result{Output: out, Status: StatusError}, nil
	}
	res := &Result{Output: orJSON(ans.Output, "null"), Status: ans.Status}
	if s := bytes.TrimSpace(ans.StateUpdate); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		res.StateUpdate = ans.StateUpdate
	}
	return res, nil
}

// orJSON returns raw, or def when raw is empty.
func orJSON(raw json.RawMessage, def string) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage(def)
	}
	return raw
}

// Close removes the private directory.
func (e *pythonExecutor) Close() error {
	if e.dir == "" {
		return nil
	}
	_ = setTreeWritable(e.src, true)
	return os.RemoveAll(e.dir)
}
