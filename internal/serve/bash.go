package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agentform/agentform/internal/artifact"
)

func init() { register(artifact.KindBash, newBashExecutor) }

// defaultMaxOutput bounds what a script may write (standard output and
// standard error together) when its tool sets no max_output_size, so that
// a runaway script cannot exhaust the memory of serve.
const defaultMaxOutput = 16 << 20

// agentHome is the working directory agentc gives a bash tool (the
// manifest's default cwd). A sandbox's directory tree stands for it, so
// cwd = "/home/agent/src" means the tree's "src".
const agentHome = "/home/agent"

// bashExecutor runs the tool of one bash block: each call's script in
// mvdan.cc/sh's POSIX shell interpreter, in a sandbox built from the
// tool's fs, env and limits blocks.
//
// What the sandbox enforces, and what it cannot:
//   - Only shell builtins, the script's own functions and the tool's
//     commands run. A command name is looked up on the PATH of serve (never
//     the script's PATH, which the script controls); a path runs only when
//     it is exactly where such a lookup leads.
//   - The interpreter's own file access (redirections, globs, cd, test,
//     source) stays inside the sandbox directory. External commands start
//     there but are ordinary processes: what they open by path, and their
//     network access, are not confined in-process. The network block is
//     therefore not enforced for external commands; a warning says so at
//     startup.
//   - Every external command runs in its own process group, killed when
//     the run ends, times out or is stopped, so no child outlives a call.
type bashExecutor struct {
	tools map[string]*bashTool
}

// bashTool is one registered bash tool, prepared at startup.
type bashTool struct {
	name     string
	cfg      *artifact.Bash
	commands *commandSet
	// fsKind is in_memory, overlay or read_write; fsPath is the absolute
	// host directory of an overlay or read_write filesystem.
	fsKind, fsPath string
	// cwd is the working directory inside the sandbox tree, relative
	// ("." for the tree itself).
	cwd string
}

// newBashExecutor is the Factory of bash blocks.
func newBashExecutor(ctx context.Context, h *Host, block string, tools []*artifact.Tool) (Executor, error) {
	e := &bashExecutor{tools: map[string]*bashTool{}}
	for _, t := range tools {
		bt, err := newBashTool(h, t)
		if err != nil {
			return nil, err
		}
		e.tools[t.Name] = bt
	}
	return e, nil
}

// newBashTool checks a bash tool's sandbox and prepares it.
func newBashTool(h *Host, t *artifact.Tool) (*bashTool, error) {
	cfg := t.Bash
	if cfg == nil {
		return nil, fmt.Errorf("tool %q has no bash settings in agent.json; rebuild the artifact with agentform apply", t.Name)
	}
	bt := &bashTool{name: t.Name, cfg: cfg, commands: newCommandSet(cfg.Commands), fsKind: "in_memory"}
	for _, name := range cfg.Commands {
		if p := bt.commands.names[name]; !strings.Contains(name, "/") && p == "" {
			h.Logf("tool %s: the command %q is not on the PATH of agentform serve; scripts that run it will fail", t.Name, name)
		}
	}
	cwd := cfg.Cwd
	if fsc := cfg.FS; fsc != nil {
		if fsc.Kind != "" {
			bt.fsKind = fsc.Kind
		}
		if fsc.Cwd != "" {
			cwd = fsc.Cwd
		}
		switch bt.fsKind {
		case "in_memory":
		case "overlay", "read_write":
			if fsc.Path == "" {
				return nil, fmt.Errorf("tool %q: a filesystem of kind %s needs a path", t.Name, bt.fsKind)
			}
			// The artifact does not record the workspace, so a relative
			// path is taken from the directory serve runs in.
			p, err := filepath.Abs(fsc.Path)
			if err != nil {
				return nil, fmt.Errorf("tool %q: fs path %q: %w", t.Name, fsc.Path, err)
			}
			info, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("tool %q: the fs path %s cannot be used: %w (a relative path is taken from the directory agentform serve runs in)", t.Name, p, err)
			}
			if !info.IsDir() {
				return nil, fmt.Errorf("tool %q: the fs path %s is not a directory", t.Name, p)
			}
			bt.fsPath = p
		default:
			return nil, fmt.Errorf("tool %q: unknown fs kind %q (in_memory, overlay or read_write)", t.Name, bt.fsKind)
		}
	}
	rel, err := sandboxRel(cwd, bt.fsPath)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	bt.cwd = rel
	if bt.fsKind == "read_write" {
		if info, err := os.Stat(filepath.Join(bt.fsPath, rel)); err != nil || !info.IsDir() {
			return nil, fmt.Errorf("tool %q: the working directory %q is not a directory under %s", t.Name, cwd, bt.fsPath)
		}
	}
	if env := cfg.Env; env != nil {
		switch env.Kind {
		case "", "empty", "inherit", "allow", "deny":
		default:
			return nil, fmt.Errorf("tool %q: unknown env kind %q (empty, inherit, allow or deny)", t.Name, env.Kind)
		}
	}
	if len(cfg.Commands) > 0 && (cfg.Network == nil || !cfg.Network.Enabled || len(cfg.Network.AllowedURLPrefixes) > 0 || len(cfg.Network.AllowedMethods) > 0) {
		h.Logf("tool %s: its network policy is not enforced for the external commands it may run (%s); they reach the network as any process of this host does", t.Name, strings.Join(cfg.Commands, ", "))
	}
	return bt, nil
}

// sandboxRel maps a working directory setting to a path relative to the
// sandbox tree: "" and agentHome are the tree, a relative path or a path
// under agentHome (or under the host directory hostPath) is inside it, and
// any other absolute path is taken as inside the tree too. It is an error
// for the result to leave the tree.
func sandboxRel(cwd, hostPath string) (string, error) {
	c := filepath.Clean(filepath.FromSlash(cwd))
	switch {
	case cwd == "":
		return ".", nil
	case filepath.IsAbs(c):
		for _, base := range []string{agentHome, hostPath} {
			if base == "" {
				continue
			}
			if r, err := filepath.Rel(base, c); err == nil && (r == "." || filepath.IsLocal(r)) {
				return r, nil
			}
		}
		c = strings.TrimPrefix(c, string(filepath.Separator))
		if c == "" {
			return ".", nil
		}
	}
	if c != "." && !filepath.IsLocal(c) {
		return "", fmt.Errorf("the working directory %q leaves the tool's filesystem", cwd)
	}
	return c, nil
}

// bashArgs are a bash tool's arguments.
type bashArgs struct {
	Script *string `json:"script"`
}

// Call runs the script of a call and returns {"stdout", "stderr",
// "exit_code"}: status error for a non-zero exit or a refused command, a Go
// error when a limit stopped the run.
func (e *bashExecutor) Call(ctx context.Context, call *Call) (*Result, error) {
	bt := e.tools[call.Tool.Name]
	if bt == nil {
		return nil, fmt.Errorf("tool %q is not served by this bash executor", call.Tool.Name)
	}
	var args bashArgs
	if err := json.Unmarshal(call.Args, &args); err != nil || args.Script == nil {
		return nil, errors.New(`the arguments must be an object with a string "script"`)
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(*args.Script), "script")
	if err != nil {
		return shellResult(&shellOutcome{Stderr: err.Error() + "\n", ExitCode: 2})
	}
	root, cleanup, err := bt.sandbox()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	dir := filepath.Join(root, bt.cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("preparing the working directory: %w", err)
	}
	job := &shellJob{
		file:     file,
		root:     root,
		dir:      dir,
		env:      bt.environ(dir),
		commands: bt.commands,
		what:     "the script",
	}
	if l := bt.cfg.Limits; l != nil {
		if l.MaxExecutionTimeSecs != nil {
			// Beyond what a Duration holds, the limit is no limit.
			job.timeout = time.Duration(min(*l.MaxExecutionTimeSecs, int64(math.MaxInt64/time.Second))) * time.Second
			job.timeoutErr = &limitError{fmt.Sprintf("the script ran longer than the tool's max_execution_time_secs (%d s) and was stopped", *l.MaxExecutionTimeSecs)}
		}
		if l.MaxOutputSize != nil {
			job.maxOutput = *l.MaxOutputSize
			job.outputErr = &limitError{fmt.Sprintf("the script wrote more than the tool's max_output_size (%d bytes) and was stopped", *l.MaxOutputSize)}
		}
		if l.MaxCommandCount != nil {
			job.maxCommands = *l.MaxCommandCount
		}
		if l.MaxLoopIterations != nil {
			job.maxLoops = *l.MaxLoopIterations
		}
	}
	out, err := job.run(ctx)
	if err != nil {
		return nil, err
	}
	return shellResult(out)
}

// Close releases nothing: each call cleans up after itself.
func (e *bashExecutor) Close() error { return nil }

// sandbox returns the directory tree a call runs in and how to remove it:
// a fresh temporary directory (in_memory, and without an fs block), a
// temporary copy of the host directory (overlay), or the host directory
// itself (read_write). The path is free of symbolic links, so that the
// interpreter's confinement compares like with like.
func (bt *bashTool) sandbox() (string, func(), error) {
	if bt.fsKind == "read_write" {
		root, err := filepath.EvalSymlinks(bt.fsPath)
		if err != nil {
			return "", nil, fmt.Errorf("the tool's filesystem %s cannot be used: %w", bt.fsPath, err)
		}
		return root, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "agentform-bash-")
	if err != nil {
		return "", nil, fmt.Errorf("creating the tool's filesystem: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	root, err := filepath.EvalSymlinks(tmp)
	if err == nil && bt.fsKind == "overlay" {
		err = copyTree(bt.fsPath, root)
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("creating the tool's filesystem: %w", err)
	}
	return root, cleanup, nil
}

// copyTree copies the directory tree src into the existing directory dst:
// directories and regular files with their permission bits, and symbolic
// links that are relative and stay inside src (others are left out, so
// that the copy cannot reach back into the original).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if rel == "." {
				return nil
			}
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if filepath.IsAbs(link) || !filepath.IsLocal(filepath.Join(filepath.Dir(rel), link)) {
				return nil
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // devices, sockets and pipes are not copied
	})
}

// copyFile copies one regular file.
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// environ returns the script's environment under the tool's env policy:
// empty (the default) gives PATH and HOME only; inherit the environment of
// serve; allow only the listed variables; deny all but the listed ones.
// HOME is the working directory whenever the policy leaves it out, so that
// the interpreter does not fill in the real home directory.
func (bt *bashTool) environ(home string) []string {
	kind, vars := "empty", []string(nil)
	if env := bt.cfg.Env; env != nil && env.Kind != "" {
		kind, vars = env.Kind, env.Vars
	}
	var out []string
	switch kind {
	case "inherit":
		out = os.Environ()
	case "allow":
		for _, name := range vars {
			if v, ok := os.LookupEnv(name); ok {
				out = append(out, name+"="+v)
			}
		}
	case "deny":
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(vars, name) {
				out = append(out, kv)
			}
		}
	default:
		out = []string{"PATH=" + os.Getenv("PATH")}
	}
	if !slices.ContainsFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
		out = append(out, "HOME="+home)
	}
	return out
}

// commandSet is the set of external commands a script may run.
type commandSet struct {
	// names maps each allowed command name to where the PATH of serve
	// leads ("" when it is not there).
	names map[string]string
	// paths holds the absolute paths that may run: those of names, and
	// the entries given as paths.
	paths map[string]bool
	// list is the allowed commands for messages.
	list string
}

// newCommandSet looks up commands: a name on the PATH of serve, an entry
// with a "/" as a path (relative to the directory serve runs in).
func newCommandSet(commands []string) *commandSet {
	c := &commandSet{names: map[string]string{}, paths: map[string]bool{}, list: strings.Join(commands, ", ")}
	for _, name := range commands {
		if name == "" {
			continue
		}
		if strings.Contains(name, "/") {
			if p, err := filepath.Abs(name); err == nil {
				c.paths[p] = true
			}
			continue
		}
		p, err := exec.LookPath(name)
		if err == nil && filepath.IsAbs(p) {
			c.names[name] = p
			c.paths[p] = true
		} else {
			c.names[name] = ""
		}
	}
	return c
}

// lookup returns the program a command runs and whether it may run. A
// name must be allowed; a path must be exactly one of the allowed paths.
// An allowed name that is not on PATH gives "".
func (c *commandSet) lookup(dir, name string) (string, bool) {
	if !strings.Contains(name, "/") {
		p, ok := c.names[name]
		return p, ok
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	return p, c.paths[p]
}

// refusal is the message for a command that may not run.
func (c *commandSet) refusal(name string) string {
	if c.list == "" {
		return fmt.Sprintf("command %q is not allowed: the tool allows shell builtins only", name)
	}
	return fmt.Sprintf("command %q is not allowed: the tool's commands are %s", name, c.list)
}

// refusedError stops a run at a command that may not run.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// limitError is a limit that stopped a run; its message names the limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// loopMarker begins the name of the calls agentform inserts into loops to
// count their iterations. Each run adds a random suffix that the script
// does not know, so that it cannot reset a count by making such a call.
const loopMarker = "__agentform_loop_"

// shellJob is one run of a script in the interpreter.
type shellJob struct {
	file   *syntax.File
	params []string
	// root is the sandbox tree (free of symbolic links); the interpreter's
	// own file access stays inside it. dir is the working directory.
	root, dir string
	env       []string
	commands  *commandSet
	// what names the script in messages ("the script").
	what string

	// Limits; zero means unset. timeoutErr and outputErr are the errors
	// that report them.
	timeout     time.Duration
	timeoutErr  error
	maxOutput   int64
	outputErr   error
	maxCommands int64
	maxLoops    int64

	// State of the run.
	cancel  context.CancelCauseFunc
	fsys    *os.Root
	ran     atomic.Int64
	marker  string
	loopsMu sync.Mutex
	loops   map[string]int64
	loopIDs int
}

// shellOutcome is what a script run returns to the client.
type shellOutcome struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exit_code"`
}

// shellResult turns an outcome into a Result: status error for a non-zero
// exit.
func shellResult(out *shellOutcome) (*Result, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	status := StatusSuccess
	if out.ExitCode != 0 {
		status = StatusError
	}
	return &Result{Output: b, Status: status}, nil
}

// run interprets the script. It returns the outcome when the script ran to
// its end or was refused a command (exit code 126, the refusal on standard
// error), and an error when a limit or ctx stopped it.
func (j *shellJob) run(ctx context.Context) (*shellOutcome, error) {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	j.cancel = cancel
	if j.timeout > 0 {
		var stop context.CancelFunc
		runCtx, stop = context.WithTimeoutCause(runCtx, j.timeout, j.timeoutErr)
		defer stop()
	}
	maxOutput := j.maxOutput
	if maxOutput <= 0 {
		maxOutput = defaultMaxOutput
		j.outputErr = &limitError{fmt.Sprintf("%s wrote more than %d bytes of output and was stopped", j.what, maxOutput)}
	}
	lim := &outputLimit{max: maxOutput, err: j.outputErr, cancel: cancel}
	stdout, stderr := &cappedBuffer{lim: lim}, &cappedBuffer{lim: lim}

	fsys, err := os.OpenRoot(j.root)
	if err != nil {
		return nil, fmt.Errorf("opening the tool's filesystem: %w", err)
	}
	defer fsys.Close()
	j.fsys = fsys
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer stdin.Close()
	// The interpreter makes the pipes of process substitutions in TMPDIR
	// and opens files there named like them without its open handler, so
	// TMPDIR is a private directory of the run.
	tmp, err := os.MkdirTemp("", "agentform-tmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	env := append(slices.DeleteFunc(slices.Clone(j.env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+tmp)
	if j.maxLoops > 0 {
		var suffix [8]byte
		if _, err := rand.Read(suffix[:]); err != nil {
			return nil, err
		}
		j.marker = loopMarker + hex.EncodeToString(suffix[:])
		j.loops = map[string]int64{}
		j.instrumentLoops(j.file)
	}

	runner, err := interp.New(
		interp.Env(expand.ListEnviron(env...)),
		interp.Dir(j.dir),
		interp.Params(append([]string{"--"}, j.params...)...),
		interp.StdIO(stdin, stdout, stderr),
		interp.CallHandler(j.call),
		interp.ExecHandlers(j.execMiddleware),
		interp.OpenHandler(j.open),
		interp.ReadDirHandler2(j.readDir),
		interp.StatHandler(j.stat),
		interp.AccessHandler(j.access),
	)
	if err != nil {
		return nil, fmt.Errorf("starting the shell: %w", err)
	}
	runErr := runner.Run(runCtx, j.file)

	cause := context.Cause(runCtx)
	var limit *limitError
	if errors.As(cause, &limit) {
		return nil, limit
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s was stopped: %w", j.what, err)
	}
	out := &shellOutcome{}
	var refused *refusedError
	var status interp.ExitStatus
	switch {
	case errors.As(cause, &refused):
		stderr.note("agentform: " + refused.msg + "\n")
		out.ExitCode = 126
	case runErr == nil:
	case errors.As(runErr, &status):
		out.ExitCode = int(status)
	default:
		return nil, fmt.Errorf("running %s: %w", j.what, runErr)
	}
	out.Stdout, out.Stderr = stdout.String(), stderr.String()
	return out, nil
}

// call is the interpreter's call handler: it runs before every simple
// command (builtins, functions and external commands alike), counts them
// against max_command_count and counts loop iterations.
func (j *shellJob) call(ctx context.Context, args []string) ([]string, error) {
	if j.marker != "" && args[0] == j.marker && len(args) == 3 {
		return j.loopTick(args[1], args[2])
	}
	if n := j.ran.Add(1); j.maxCommands > 0 && n > j.maxCommands {
		err := &limitError{fmt.Sprintf("%s ran more than the tool's max_command_count (%d) commands and was stopped", j.what, j.maxCommands)}
		j.cancel(err)
		return nil, err
	}
	if args[0] == "eval" && j.marker != "" && len(args) > 1 {
		// Code run by eval is parsed only now: count its loops too.
		f, err := syntax.NewParser().Parse(strings.NewReader(strings.Join(args[1:], " ")), "")
		if err == nil && j.instrumentLoops(f) > 0 {
			var b strings.Builder
			if syntax.NewPrinter().Print(&b, f) == nil {
				return []string{"eval", b.String()}, nil
			}
		}
	}
	return args, nil
}

// loopTick counts one event of a loop: its start (which resets its count)
// or one iteration. It stands in for the inserted call with ":".
func (j *shellJob) loopTick(id, event string) ([]string, error) {
	j.loopsMu.Lock()
	defer j.loopsMu.Unlock()
	if event == "start" {
		j.loops[id] = 0
		return []string{":"}, nil
	}
	j.loops[id]++
	if j.loops[id] > j.maxLoops {
		err := &limitError{fmt.Sprintf("a loop of %s ran more than the tool's max_loop_iterations (%d) times and was stopped", j.what, j.maxLoops)}
		j.cancel(err)
		return nil, err
	}
	return []string{":"}, nil
}

// instrumentLoops inserts the calls that count loop iterations and returns
// how many loops it found: each loop statement becomes "{ start; loop; }"
// and each loop body begins with a tick, so that max_loop_iterations
// bounds every run of every loop, also loops with no command in them. The
// inserted calls stand for ":", so $? is 0 at the start of a loop body (it
// would otherwise be the status of the condition for until, and of the
// previous command for for). Loops of the script and of the code it runs
// with eval are counted; loops of files it runs with source are not (the
// time limit still bounds them).
func (j *shellJob) instrumentLoops(f *syntax.File) int {
	var loops []*syntax.Stmt
	syntax.Walk(f, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok {
			switch st.Cmd.(type) {
			case *syntax.WhileClause, *syntax.ForClause:
				loops = append(loops, st)
			}
		}
		return true
	})
	j.loopsMu.Lock()
	first := j.loopIDs
	j.loopIDs += len(loops)
	j.loopsMu.Unlock()
	for i, st := range loops {
		id := strconv.Itoa(first + i)
		switch loop := st.Cmd.(type) {
		case *syntax.WhileClause:
			loop.Do = append([]*syntax.Stmt{j.markerCall(id, "tick")}, loop.Do...)
		case *syntax.ForClause:
			loop.Do = append([]*syntax.Stmt{j.markerCall(id, "tick")}, loop.Do...)
		}
		st.Cmd = &syntax.Block{Stmts: []*syntax.Stmt{j.markerCall(id, "start"), {Cmd: st.Cmd}}}
	}
	return len(loops)
}

// markerCall is an inserted loop-counting call.
func (j *shellJob) markerCall(id, event string) *syntax.Stmt {
	ce := &syntax.CallExpr{}
	for _, a := range []string{j.marker, id, event} {
		ce.Args = append(ce.Args, &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: a}}})
	}
	return &syntax.Stmt{Cmd: ce}
}

// execMiddleware is the interpreter's exec handler; it never calls next.
func (j *shellJob) execMiddleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return j.exec
}

// exec runs an external command when the tool allows it, in its own
// process group that is killed when the command ends or the run stops. A
// refused command stops the whole run.
func (j *shellJob) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	path, ok := j.commands.lookup(hc.Dir, args[0])
	if !ok {
		// Stop the whole run, also when the command is in a subshell or
		// a pipeline, whose errors do not reach the top.
		err := &refusedError{j.commands.refusal(args[0])}
		j.cancel(err)
		return err
	}
	if path == "" {
		fmt.Fprintf(hc.Stderr, "%s: command not found\n", args[0])
		return interp.ExitStatus(127)
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = args
	cmd.Env = exportedEnv(hc.Env)
	cmd.Dir = hc.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = hc.Stdin, hc.Stdout, hc.Stderr
	inOwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
		return interp.ExitStatus(126)
	}
	err := cmd.Wait()
	// Leave nothing behind: a background child of the command dies with it.
	_ = killGroup(cmd)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		return nil
	case errors.As(err, &exitErr):
		return interp.ExitStatus(exitCode(exitErr))
	}
	return err
}

// exitCode is a process's exit status as a shell gives it: 128 plus the
// signal's number for a process killed by a signal.
func exitCode(err *exec.ExitError) int {
	if ws, ok := err.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return err.ExitCode()
}

// inOwnGroup makes cmd the leader of a new process group that is killed,
// with everything it started, when cmd's context is done.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = time.Second
}

// killGroup kills the process group of a started command.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// exportedEnv is the environment an external command gets: the exported
// string variables of the shell.
func exportedEnv(env expand.Environ) []string {
	vars := map[string]string{}
	env.Each(func(name string, vr expand.Variable) bool {
		switch {
		case !vr.IsSet():
			delete(vars, name)
		case vr.Exported && vr.Kind == expand.String:
			vars[name] = vr.String()
		}
		return true
	})
	out := make([]string, 0, len(vars))
	for name, v := range vars {
		out = append(out, name+"="+v)
	}
	slices.Sort(out)
	return out
}

// errOutside is the error of a file access outside the sandbox.
var errOutside = errors.New("outside the tool's filesystem")

// inside returns a path of the shell (absolute or relative to its
// directory) relative to the sandbox root, or false when it is outside.
func (j *shellJob) inside(dir, p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	rel, err := filepath.Rel(j.root, filepath.Clean(p))
	if err != nil || (rel != "." && !filepath.IsLocal(rel)) {
		return "", false
	}
	return rel, true
}

// open is the interpreter's open handler: files inside the sandbox through
// os.Root (which also keeps symbolic links from leading out), /dev/null,
// and /dev/stdout, /dev/stderr and /dev/stdin as the shell's own streams.
func (j *shellJob) open(ctx context.Context, p string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	switch p {
	case os.DevNull, "/dev/stdin":
		return os.OpenFile(os.DevNull, flag, perm)
	case "/dev/stdout":
		return nopReadWriteCloser{w: hc.Stdout}, nil
	case "/dev/stderr":
		return nopReadWriteCloser{w: hc.Stderr}, nil
	}
	rel, ok := j.inside(hc.Dir, p)
	if !ok {
		return nil, &os.PathError{Op: "open", Path: p, Err: errOutside}
	}
	f, err := j.fsys.OpenFile(rel, flag, perm)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, &os.PathError{Op: "open", Path: p, Err: pe.Err}
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return f, nil
}

// readDir is the interpreter's directory reader (for globs).
func (j *shellJob) readDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	rel, ok := j.inside(interp.HandlerCtx(ctx).Dir, p)
	if !ok {
		return nil, &os.PathError{Op: "readdir", Path: p, Err: errOutside}
	}
	f, err := j.fsys.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// stat is the interpreter's stat handler (test, cd, globs).
func (j *shellJob) stat(ctx context.Context, p string, followSymlinks bool) (fs.FileInfo, error) {
	if p == os.DevNull {
		return os.Stat(p)
	}
	rel, ok := j.inside(interp.HandlerCtx(ctx).Dir, p)
	if !ok {
		return nil, &os.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
	if followSymlinks {
		return j.fsys.Stat(rel)
	}
	return j.fsys.Lstat(rel)
}

// access is the interpreter's access handler (test -r/-w/-x, cd).
func (j *shellJob) access(ctx context.Context, p string, mode interp.AccessMode) error {
	rel, ok := j.inside(interp.HandlerCtx(ctx).Dir, p)
	if !ok {
		return &os.PathError{Op: "access", Path: p, Err: fs.ErrNotExist}
	}
	if _, err := j.fsys.Stat(rel); err != nil {
		return err
	}
	return interp.DefaultAccessHandler()(ctx, filepath.Join(j.root, rel), mode)
}

// nopReadWriteCloser writes to w and has nothing to read or close.
type nopReadWriteCloser struct{ w io.Writer }

func (n nopReadWriteCloser) Read([]byte) (int, error)    { return 0, io.EOF }
func (n nopReadWriteCloser) Write(p []byte) (int, error) { return n.w.Write(p) }
func (n nopReadWriteCloser) Close() error                { return nil }

// outputLimit is the output budget shared by a run's standard output and
// standard error; exceeding it cancels the run with err.
type outputLimit struct {
	mu     sync.Mutex
	max, n int64
	err    error
	cancel context.CancelCauseFunc
}

// cappedBuffer is one stream of a run, written within its outputLimit.
// Background commands may write concurrently, so it locks.
type cappedBuffer struct {
	lim *outputLimit
	buf bytes.Buffer
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	l := b.lim
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.n; int64(len(p)) > room {
		if room > 0 {
			b.buf.Write(p[:room])
			l.n += room
		}
		l.cancel(l.err)
		return int(max(room, 0)), l.err
	}
	b.buf.Write(p)
	l.n += int64(len(p))
	return len(p), nil
}

// note adds a message of agentform's own, beyond the budget.
func (b *cappedBuffer) note(s string) {
	b.lim.mu.Lock()
	defer b.lim.mu.Unlock()
	b.buf.WriteString(s)
}

// String returns what was written.
func (b *cappedBuffer) String() string {
	b.lim.mu.Lock()
	defer b.lim.mu.Unlock()
	return b.buf.String()
}
