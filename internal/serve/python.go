package serve

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/proctree"
)

// pythonRunner is the script that runs a python tool (and a skill's Python
// script); see its docstring for how it finds the tool and calls it. It is
// given to python3 -I -c, so that there is no file of it that a call could
// change for the calls after it.
//
//go:embed python_runner.py
var pythonRunner string

func init() { register(artifact.KindPython, newPythonExecutor) }

// pythonMaxAnswer bounds the answer of one python call.
const pythonMaxAnswer = 64 << 20

// pythonStartTimeout bounds the startup steps that run python3 (finding
// the interpreter and the tool); none of them runs the tool's code.
const pythonStartTimeout = 30 * time.Second

// pythonExecutor runs the tool of one python block: the package is
// extracted once, read-only, into a private directory, and every call is
// a python3 -I subprocess of the embedded runner, with the call's
// {args, state, config} on standard input, a minimal environment and a
// fresh temporary directory outside the private one as its working
// directory and HOME. Every process the call starts is killed when it ends
// (see runContained).
//
// Dependencies locked in uv.lock are not installed: the package runs with
// the standard library and whatever the host's python3 has installed.
type pythonExecutor struct {
	// dir is the private directory, read-only once src/ (the package) is
	// extracted into it.
	dir, src string
	// python is the interpreter's real path (not a shim such as pyenv's,
	// which needs the environment a call does not get).
	python string
	tools  map[string]*pythonTool
}

// pythonTool is how the runner imports a tool: the import root (relative
// to the package), the module and the class or function in it.
type pythonTool struct {
	Root, Module, Attr string
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
	e := &pythonExecutor{dir: dir, src: filepath.Join(dir, "src"), python: python, tools: map[string]*pythonTool{}}
	ok := false
	defer func() {
		if !ok {
			_ = e.Close()
		}
	}()
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
	if err := os.Chmod(e.dir, 0o500); err != nil {
		return nil, err
	}
	for _, t := range tools {
		if t.Entry == nil {
			return nil, fmt.Errorf("tool %q: the artifact does not say where the tool is in its package (python3 was missing or could not read it when the artifact was built); apply again on a host with python3", t.Name)
		}
		root, module, err := pythonModule(e.src, t.Entry.File)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		e.tools[t.Name] = &pythonTool{Root: root, Module: module, Attr: t.Entry.Attr}
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
// their owner, or read-only (0444 and 0555), so that no call can change the
// package the next one runs. Modes do not hold against root, or against
// code that changes them back; see docs/serve.md.
func setTreeWritable(dir string, writable bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o444)
		if d.IsDir() {
			mode = 0o555
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

// pythonModule returns how Python imports a package file: the import root
// (relative to src) and the dotted module name. The directories above the
// file that hold an __init__.py are packages, as plan read them.
func pythonModule(src, file string) (root, module string, err error) {
	if !strings.HasSuffix(file, ".py") || !filepath.IsLocal(filepath.FromSlash(file)) {
		return "", "", fmt.Errorf("the tool's file %q is not a Python file of the package", file)
	}
	if _, err := os.Stat(filepath.Join(src, filepath.FromSlash(file))); err != nil {
		return "", "", fmt.Errorf("the tool's file %s is not in the artifact's package", file)
	}
	parts := strings.Split(file, "/")
	dirs, stem := parts[:len(parts)-1], strings.TrimSuffix(parts[len(parts)-1], ".py")
	i := len(dirs)
	for i > 0 {
		if _, err := os.Stat(filepath.Join(src, filepath.Join(dirs[:i]...), "__init__.py")); err != nil {
			break
		}
		i--
	}
	names := slices.Clone(dirs[i:])
	if stem != "__init__" {
		names = append(names, stem)
	}
	if len(names) == 0 {
		return "", "", fmt.Errorf("%s is not in a package that can be imported", file)
	}
	root = path.Join(dirs[:i]...)
	if root == "" {
		root = "."
	}
	return root, strings.Join(names, "."), nil
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
	optional, _ := json.Marshal(optionalParams(call.Tool.Parameters))
	req, err := json.Marshal(map[string]json.RawMessage{"args": orJSON(call.Args, "{}"), "state": orJSON(call.State, "{}"), "config": orJSON(call.Config, "null"), "optional": optional})
	if err != nil {
		return nil, fmt.Errorf("encoding the call: %w", err)
	}
	// The call's home and working directory is outside the private
	// directory: nothing a call writes there is seen by another.
	home, err := os.MkdirTemp("", "agentform-python-call-")
	if err != nil {
		return nil, fmt.Errorf("creating the call's home directory: %w", err)
	}
	defer os.RemoveAll(home)

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	limitErr := &limitError{fmt.Sprintf("the python tool's answer is larger than %d bytes", pythonMaxAnswer)}
	stdout := &cappedBuffer{lim: &outputLimit{max: pythonMaxAnswer, err: limitErr, cancel: cancel}}
	cmd := exec.CommandContext(runCtx, e.python, "-I", "-c", pythonRunner, "call", e.src, pt.Root, pt.Module, pt.Attr)
	cmd.Dir = home
	cmd.Env = pythonEnv(home)
	cmd.Stdin = bytes.NewReader(req)
	// The tool's standard error may hold anything, secrets included; it
	// goes nowhere.
	cmd.Stdout = stdout
	_, _, runErr := runContained(cmd)
	if cause := context.Cause(runCtx); errors.Is(cause, limitErr) {
		return nil, limitErr
	}
	if ctx.Err() != nil {
		return nil, stoppedError(ctx, "the python tool")
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
			// The runner leaves out the private paths already; this is
			// in case the message holds them in another form.
			msg += ": " + scrubPaths(x.Message, e.src, e.dir, home)
		}
		if x.Phase == "load" {
			hint := ""
			if x.Type == "ModuleNotFoundError" || x.Type == "ImportError" {
				hint = " (agentform serve runs the package with this host's python3 and the packages installed for it; install the tool's dependencies there)"
			}
			return nil, fmt.Errorf("the python tool cannot be loaded: %s%s", msg, hint)
		}
		out, _ := json.Marshal(msg)
		// The message is the tool's (it can quote the arguments); the
		// record names the exception's class when it is a plain name.
		reason := "the python tool raised an exception"
		if pythonClassRE.MatchString(x.Type) {
			reason = "the python tool raised " + x.Type
		}
		return &Result{Output: out, Status: StatusError, Reason: reason}, nil
	}
	res := &Result{Output: orJSON(ans.Output, "null"), Status: ans.Status}
	if s := bytes.TrimSpace(ans.StateUpdate); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		res.StateUpdate = ans.StateUpdate
	}
	return res, nil
}

// optionalParams lists the properties of a tool's argument schema that it
// does not require: the runner passes None for such a parameter of a
// function that has no default (Optional[str] without "= None", which
// plan reads as an argument that may be left out).
func optionalParams(schema []byte) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return []string{}
	}
	out := []string{}
	for name := range s.Properties {
		if !slices.Contains(s.Required, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// pythonClassRE matches an exception class name worth recording: a
// dotted identifier ("ValueError", "requests.HTTPError").
var pythonClassRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,7}$`)

// scrubPaths removes the directories dirs (and their real paths) from s:
// the paths of private temporary directories mean nothing to the client.
func scrubPaths(s string, dirs ...string) string {
	var forms []string
	for _, d := range dirs {
		forms = append(forms, d)
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			forms = append(forms, real)
		}
	}
	// The longest first, so that no directory is cut out of another.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	for _, f := range forms {
		s = strings.ReplaceAll(s, f+string(filepath.Separator), "")
		s = strings.ReplaceAll(s, f, "")
	}
	return s
}

// runContained runs cmd, a python3 -I -c process of the runner in call or
// script mode, in a process group of its own, and kills every process it
// started when it is done or cmd's context is.
//
// A process that leaves the group (setsid, start_new_session) is still
// found: the runner makes itself a child subreaper, so that whatever it
// starts stays its descendant even when the parent in between ends, and
// once done it reports "CODE\n" on file descriptor 3 and waits; then, or
// when the context is done, proctree.KillTree stops and kills the runner and all
// its descendants. runContained returns the exit code the runner reported
// (reported is false when it ended without a report) and Wait's error.
func runContained(cmd *exec.Cmd) (code int, reported bool, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, false, err
	}
	cmd.ExtraFiles = []*os.File{w} // file descriptor 3 of the runner
	cmd.SysProcAttr = proctree.GroupAttr()
	started := make(chan struct{})
	var (
		start uint64
		once  sync.Once
	)
	kill := func() {
		<-started
		once.Do(func() { proctree.KillTree(cmd.Process, start) })
	}
	cmd.Cancel = func() error { kill(); return nil }
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return 0, false, err
	}
	_ = w.Close()
	// Until Wait, the runner is not reaped: its pid is its own.
	_, start, _ = proctree.Stat(cmd.Process.Pid)
	close(started)
	untrack := proctree.Track(cmd.Process)
	defer untrack()
	reportc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(io.LimitReader(r, 32)).ReadString('\n')
		kill()
		reportc <- line
	}()
	err = cmd.Wait()
	_ = r.Close()
	line := <-reportc
	_ = killGroup(cmd)
	if n, cerr := strconv.Atoi(strings.TrimSuffix(line, "\n")); cerr == nil && strings.HasSuffix(line, "\n") {
		return n, true, err
	}
	return 0, false, err
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
	_ = os.Chmod(e.dir, 0o700)
	_ = setTreeWritable(e.src, true)
	return os.RemoveAll(e.dir)
}
