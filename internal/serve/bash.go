package serve

import (
	"bytes"
	"cmp"
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
	"runtime"
	"runtime/metrics"
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
	"github.com/agentform/agentform/internal/proctree"
)

func init() { register(artifact.KindBash, newBashExecutor) }

// defaultMaxOutput bounds what a script may write (standard output and
// standard error together) when its tool sets no max_output_size, so that
// a runaway script cannot exhaust the memory of serve.
const defaultMaxOutput = 16 << 20

// bashHeapLimit bounds how far serve's heap may grow while a script runs
// (its variables, arrays and expansions live there: x=$x$x doubles one
// at each statement and no limit of the tool counts assignments); a run
// that grows it further is stopped. Other runs at the same time count
// too, so the bound is of serve's memory, not of one script's exactly. A
// variable for tests.
var bashHeapLimit uint64 = 256 << 20

// bashHeapEvery is how often a run's watchdog reads the heap.
const bashHeapEvery = 10 * time.Millisecond

// bashWriteLimit bounds the bytes the shell's own redirections write to
// files in one run (an external command's writes are its own), so that a
// loop appending to a file cannot fill the disk. A variable for tests.
var bashWriteLimit int64 = 1 << 30

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
//     source) stays inside the sandbox directory, and never writes over an
//     allowed command (a read_write filesystem that holds one is refused at
//     startup). External commands start there but are ordinary processes:
//     what they open by path, and their network access, are not confined
//     in-process. The network block is therefore not enforced for external
//     commands; a warning says so at startup.
//   - An external command's environment is the env policy's as the run
//     began, without those that make a loader or an interpreter run other
//     code (execEnvDenied); the script may set only a language, time zone
//     or width for it (execEnvScriptSet), and any other variable it sets
//     refuses the command (GREP=/bin/sh zgrep ran a shell). Its HOME is
//     never in the sandbox, so that a script can neither preload a library
//     nor plant an rc file.
//   - Every external command runs in its own process group, killed when
//     the command ends and when the run ends, times out or is stopped, so
//     no child in the group outlives a call. A process that leaves the
//     group (an allowed setsid, a daemon that detaches) is not found:
//     list no such command.
//   - Builtins do not reveal the host: source, type, command -v and pwd -P
//     answer from the sandbox and the tool's commands only, and process
//     substitution, which the interpreter cannot bound, is refused.
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
	bt := &bashTool{name: t.Name, cfg: cfg, commands: newCommandSet(h.Dir, cfg.Commands), fsKind: "in_memory"}
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
			// path is taken from serve's (-chdir, or the directory serve
			// runs in), as plan takes it from the workspace.
			p := workspacePath(h.Dir, fsc.Path)
			info, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("tool %q: the fs path %s cannot be used: %w (a relative path is taken from the workspace: -chdir, or the directory agentform serve runs in)", t.Name, p, err)
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
		// A script writes where it runs: an allowed command in that tree
		// could be replaced by a program of the script, then run.
		for _, name := range cfg.Commands {
			if p := bt.commands.path(name); p != "" && pathWithin(bt.fsPath, p) {
				return nil, fmt.Errorf("tool %q: the command %q (%s) is inside the tool's read_write filesystem %s, where a script could replace it with its own program; move it out of that directory or use an overlay filesystem", t.Name, name, p, bt.fsPath)
			}
		}
		// So could a program of another tool of the agent (plan checks
		// every tool of the workspace; this artifact holds only the
		// agent's).
		agent, owners := agentCommands(h)
		for _, name := range agent.entries {
			if p := agent.path(name); p != "" && pathWithin(bt.fsPath, p) {
				return nil, fmt.Errorf("tool %q: the command %q (%s) of tool %q is inside this tool's read_write filesystem %s, where a script of this tool could replace it with its own program for %q to run; move it out of that directory or use an overlay filesystem", t.Name, name, p, owners[name], bt.fsPath, owners[name])
			}
		}
		// A hard link in the tree is the same file: the shell writes
		// none of the agent's programs.
		bt.commands.guard(agent)
	}
	if env := cfg.Env; env != nil {
		switch env.Kind {
		case "", "empty", "inherit", "allow", "deny":
		default:
			return nil, fmt.Errorf("tool %q: unknown env kind %q (empty, inherit, allow or deny)", t.Name, env.Kind)
		}
	}
	if len(cfg.Commands) > 0 {
		// The shell is confined; the programs it may start are not.
		what := "open any path they are given, inside the tool's fs or not"
		if cfg.Network == nil || !cfg.Network.Enabled || len(cfg.Network.AllowedURLPrefixes) > 0 || len(cfg.Network.AllowedMethods) > 0 {
			what = "reach the network whatever the tool's network policy says, and " + what
		}
		h.Logf("tool %s: the external commands it may run (%s) %s, as any process of this host can", t.Name, strings.Join(cfg.Commands, ", "), what)
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
		// The parser's message quotes the script: the record says only
		// that it did not parse.
		return shellResult(&shellOutcome{Stderr: err.Error() + "\n", ExitCode: 2, reason: "the script could not be parsed (exit status 2)"})
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
	if bt.fsKind == "overlay" && pathWithin(bt.fsPath, os.TempDir()) {
		// The copy would be made inside the tree it copies, and copied
		// again into itself until its paths grew too long.
		return "", nil, fmt.Errorf("the temporary directory %s is inside the tool's filesystem %s; run agentform serve with a TMPDIR outside it", os.TempDir(), bt.fsPath)
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
	// dir is the workspace, which relative entries are taken from.
	dir string
	// names maps each allowed command name to where the PATH of serve
	// leads ("" when it is not there).
	names map[string]string
	// paths holds the absolute paths that may run: those of names, and
	// the entries given as paths.
	paths map[string]bool
	// files holds the files the paths are, as given and with symbolic
	// links resolved, and infos those files themselves: the shell never
	// writes them, by these paths or by a hard link.
	files map[string]bool
	infos []os.FileInfo
	// guarded is the set of the agent's programs, which the shell never
	// writes either (guard).
	guarded *commandSet
	// entries are the commands as listed, for agentCommands.
	entries []string
	// list is the allowed commands for messages.
	list string
}

// newCommandSet looks up commands: a name on the PATH of serve, an entry
// with a "/" as a path (relative to the workspace dir).
func newCommandSet(dir string, commands []string) *commandSet {
	c := &commandSet{dir: dir, names: map[string]string{}, paths: map[string]bool{}, files: map[string]bool{}, list: strings.Join(commands, ", "), entries: commands}
	for _, name := range commands {
		if name == "" {
			continue
		}
		if strings.Contains(name, "/") {
			c.paths[workspacePath(dir, name)] = true
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
	for p := range c.paths {
		c.files[p] = true
		c.files[resolvePath(p)] = true
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			c.infos = append(c.infos, info)
		}
	}
	return c
}

// guard adds the files of other's commands to those the shell never
// writes (the programs the agent's other tools run).
func (c *commandSet) guard(other *commandSet) { c.guarded = other }

// agentCommands returns the programs the agent's tools run, looked up
// once per host: every bash tool's commands and every stdio MCP server's
// command (when not a runtime value), with the tool that first lists
// each.
func agentCommands(h *Host) (*commandSet, map[string]string) {
	h.commandsOnce.Do(func() {
		owners := map[string]string{}
		var names []string
		add := func(tool, name string) {
			if _, seen := owners[name]; !seen && name != "" {
				owners[name] = tool
				names = append(names, name)
			}
		}
		if h.Agent != nil {
			for _, t := range h.Agent.Tools {
				if t.Bash != nil {
					for _, name := range t.Bash.Commands {
						add(t.Name, name)
					}
				}
				if t.MCP != nil && t.MCP.Transport == "stdio" && t.MCP.Command != nil && t.MCP.Command.Runtime == nil {
					add(t.Name, t.MCP.Command.Value)
				}
			}
		}
		h.commands, h.commandOwners = newCommandSet(h.Dir, names), owners
	})
	return h.commands, h.commandOwners
}

// path is the absolute path an entry of the tool's commands runs ("" for
// a name that is not on the PATH of serve).
func (c *commandSet) path(entry string) string {
	if strings.Contains(entry, "/") {
		return workspacePath(c.dir, entry)
	}
	return c.names[entry]
}

// workspacePath is the absolute path of a path of the manifest: p itself
// when absolute, else p in the workspace dir (the directory serve runs in
// when dir is "").
func workspacePath(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// isCommandFile reports whether the absolute path p is, or leads to, one
// of the allowed commands (or another tool's: guard), or is a hard link
// of one.
func (c *commandSet) isCommandFile(p string) bool {
	clean, real := filepath.Clean(p), resolvePath(p)
	sets := []*commandSet{c}
	if c.guarded != nil {
		sets = append(sets, c.guarded)
	}
	var info os.FileInfo
	for _, set := range sets {
		if set.files[clean] || set.files[real] {
			return true
		}
		if len(set.infos) == 0 {
			continue
		}
		if info == nil {
			var err error
			if info, err = os.Stat(p); err != nil {
				return false
			}
		}
		if slices.ContainsFunc(set.infos, func(cmd os.FileInfo) bool { return os.SameFile(info, cmd) }) {
			return true
		}
	}
	return false
}

// resolvePath is the absolute path p with symbolic links resolved, as far
// as they exist: a missing file is resolved through its directory.
func resolvePath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(r, filepath.Base(p))
	}
	return p
}

// pathWithin reports whether the absolute path p is base or below it, as
// given or with symbolic links resolved.
func pathWithin(base, p string) bool {
	within := func(base, p string) bool {
		rel, err := filepath.Rel(base, p)
		return err == nil && (rel == "." || filepath.IsLocal(rel))
	}
	return within(filepath.Clean(base), filepath.Clean(p)) || within(resolvePath(base), resolvePath(p))
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

// refusal is the message for a command that may not run; with name ""
// it does not name the command (for the call record).
func (c *commandSet) refusal(name string) string {
	what := "a command"
	if name != "" {
		what = fmt.Sprintf("command %q", name)
	}
	if c.list == "" {
		return what + " is not allowed: the tool allows shell builtins only"
	}
	return what + " is not allowed: the tool's commands are " + c.list
}

// refusedError stops a run at a command that may not run. msg is shown
// to the caller; record, when set, is what the call record keeps instead
// (see Result.Reason): agentform's words only, never a word of the script,
// which can be the output of $(cat file) or an argument.
type refusedError struct{ msg, record string }

func (e *refusedError) Error() string { return e.msg }

// limitError is a limit that stopped a run; its message names the limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// loopMarker begins the name that marks, in code the interpreter parses
// while a script runs (eval, source, a trap), the calls agentform inserts
// to count loop iterations. Each run adds a random suffix. A script that
// learns it (declare -f shows it) gains nothing: such a call can only add
// to a count, never reset one.
const loopMarker = "__agentform_loop_"

// execEnvDenied lists the variables that never reach an external command,
// whether the env policy or the script sets them: each makes the dynamic
// loader, a shell or an interpreter load or run code the script chose
// (LD_PRELOAD, BASH_ENV, NODE_OPTIONS, PYTHONSTARTUP, GIT_SSH_COMMAND, …),
// or names a program to run (PAGER, EDITOR, SSH_ASKPASS, …) or a config
// file that may name one (XDG_CONFIG_HOME, WGETRC, …). An entry ending in
// "*" is a prefix. HOME and TMPDIR are set by agentform (see exec).
var execEnvDenied = []string{
	// Dynamic loaders and the C library.
	"LD_*", "DYLD_*", "GCONV_PATH", "LOCPATH", "NLSPATH", "GLIBC_TUNABLES", "HOSTALIASES",
	"OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES",
	// Shells.
	"BASH_ENV", "ENV", "BASH_FUNC_*", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "ZDOTDIR",
	// Interpreters and runtimes.
	"NODE_*", "PYTHON*", "PERL5*", "PERLLIB", "RUBY*", "GEM_*", "LUA_*", "TCLLIBPATH",
	"PHPRC", "PHP_INI_SCAN_DIR", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
	"npm_config_*", "NPM_CONFIG_*",
	// The shell's field separator: what a shell script a command runs
	// splits on is its own.
	"IFS",
	// Git, and programs other programs run.
	"GIT_*", "LESSOPEN", "LESSCLOSE", "LESSKEY", "PAGER", "MANPAGER", "SYSTEMD_PAGER",
	"EDITOR", "VISUAL", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS",
	"VIMINIT", "EXINIT", "MYVIMRC", "GVIMINIT", "EMACSLOADPATH",
	// Where programs look for their configuration.
	"XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "WGETRC", "CURL_HOME",
}

// execEnvAllowed reports whether the variable name may reach an external
// command (see execEnvDenied).
func execEnvAllowed(name string) bool {
	return !matchesAny(execEnvDenied, name)
}

// shellJob is one run of a script in the interpreter.
type shellJob struct {
	file   *syntax.File
	params []string
	// root is the sandbox tree (free of symbolic links); the interpreter's
	// own file access stays inside it. dir is the working directory.
	root, dir string
	env       []string
	// base is the environment the run began with (env, TMPDIR set), by
	// name: what external commands get (execEnv).
	base     map[string]string
	commands *commandSet
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
	cancel context.CancelCauseFunc
	// written counts the bytes the shell's redirections wrote to files.
	written atomic.Int64
	fsys    *os.Root
	ran     atomic.Int64
	// homes is the private directory that holds the fresh HOME of each
	// external command, unless execHome, the HOME of the env policy, is
	// outside the sandbox and is used instead.
	homes, execHome string
	// sources is the private directory under which a file run by source
	// is opened (the rest of the path is its path in the sandbox).
	sources string
	// internal is the command name the call handler gives to builtins
	// that agentform answers itself (type, command -v, pwd -P); the exec
	// handler runs them.
	internal string
	marker   string
	loopsMu  sync.Mutex
	loops    map[string]*loopCount
	loopIDs  int
}

// loopCount counts the iterations of one loop of a run.
type loopCount struct {
	n int64
	// inner is set for a loop in code parsed while the script runs: it
	// is never reset by a call, but each of its iterations resets the
	// loops nested in it.
	inner []*loopCount
	// late marks a loop in code parsed while the script runs.
	late bool
}

// shellOutcome is what a script run returns to the client.
type shellOutcome struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exit_code"`
	// reason is agentform's account of a non-zero exit it caused (a
	// refused command), recorded; "" for the script's own exit status.
	reason string
}

// shellResult turns an outcome into a Result: status error for a non-zero
// exit, with its reason (Result.Reason): what agentform refused, or the
// exit status; never the script's output.
func shellResult(out *shellOutcome) (*Result, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	res := &Result{Output: b, Status: StatusSuccess}
	if out.ExitCode != 0 {
		res.Status, res.Reason = StatusError, out.reason
		if res.Reason == "" {
			res.Reason = fmt.Sprintf("the script exited with status %d", out.ExitCode)
		}
	}
	return res, nil
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

	// Process substitution opens pipes with no deadline: a script could
	// hang past every limit, and leak a thread with each one.
	if ps := findProcSubst(j.file); ps != nil {
		msg := procSubstRefusal(ps)
		if j.file.Name != "" {
			msg = j.file.Name + ":" + ps.Pos().String() + ": " + msg
		}
		return &shellOutcome{Stderr: msg + "\n", ExitCode: 2, reason: msg}, nil
	}

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
	// A private directory of the run holds TMPDIR (the interpreter makes
	// the pipes of process substitutions there and opens files there named
	// like them without its open handler) and the HOME of each external
	// command. The shell's file access cannot reach it.
	private, err := os.MkdirTemp("", "agentform-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(private)
	if pathWithin(j.root, private) {
		return nil, fmt.Errorf("the temporary directory %s is inside the tool's filesystem %s; run agentform serve with a TMPDIR outside it", filepath.Dir(private), j.root)
	}
	tmp, homes := filepath.Join(private, "tmp"), filepath.Join(private, "home")
	for _, d := range []string{tmp, homes} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	j.homes, j.sources = homes, filepath.Join(private, "source")
	// The HOME of the env policy (serve's, say) serves external commands
	// unless it is in the sandbox, where the script could plant rc files.
	for _, kv := range j.env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok && filepath.IsAbs(h) && !pathWithin(j.root, h) {
			j.execHome = h
		}
	}
	env := append(slices.DeleteFunc(slices.Clone(j.env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+tmp)
	j.base = map[string]string{}
	for _, kv := range env {
		name, v, _ := strings.Cut(kv, "=")
		j.base[name] = v
	}
	var suffix [16]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, err
	}
	j.marker = loopMarker + hex.EncodeToString(suffix[:8])
	j.internal = "__agentform_builtin_" + hex.EncodeToString(suffix[8:])
	if j.maxLoops > 0 {
		j.loops = map[string]*loopCount{}
		j.instrumentLoops(j.file, false)
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
	stopWatch := j.watchHeap(runCtx)
	runErr := runner.Run(runCtx, j.file)
	stopWatch()

	cause := context.Cause(runCtx)
	var limit *limitError
	if errors.As(cause, &limit) {
		return nil, limit
	}
	if ctx.Err() != nil {
		return nil, stoppedError(ctx, j.what)
	}
	out := &shellOutcome{}
	var refused *refusedError
	var status interp.ExitStatus
	switch {
	case errors.As(cause, &refused):
		stderr.note("agentform: " + refused.msg + "\n")
		out.ExitCode, out.reason = 126, cmp.Or(refused.record, refused.msg)
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
// against max_command_count, counts loop iterations, and vets the builtins
// that parse code or look at the host (see vet).
func (j *shellJob) call(ctx context.Context, args []string) ([]string, error) {
	if j.loops != nil && len(args) == 3 && args[0] == ":" {
		if ok, err := j.loopCall(interp.HandlerCtx(ctx).Pos, args[1], args[2]); ok {
			if err != nil {
				return nil, err
			}
			return args[:1], nil
		}
	}
	if n := j.ran.Add(1); j.maxCommands > 0 && n > j.maxCommands {
		err := &limitError{fmt.Sprintf("%s ran more than the tool's max_command_count (%d) commands and was stopped", j.what, j.maxCommands)}
		j.cancel(err)
		return nil, err
	}
	out, err := j.vet(ctx, args)
	if err != nil {
		// Stop the whole run, also in a subshell or a pipeline.
		j.cancel(err)
		return nil, err
	}
	return out, nil
}

// vet rewrites or refuses the builtins that parse code while the script
// runs or that would look at the host, also when reached through builtin
// or command:
//   - eval: its code is refused if it has a process substitution, and its
//     loops are counted (see instrumentLoops);
//   - source and .: a name without a slash is a file of the working
//     directory (never one found on the script's PATH), and the file is
//     read, vetted and counted like eval's code by the open handler;
//   - trap: an action with a process substitution is refused, one with a
//     loop runs through eval;
//   - alias and unset (whose array subscripts are arithmetic): a process
//     substitution, or a loop under max_loop_iterations, is refused;
//   - type, command -v and pwd -P run as agentform's own (see builtin).
func (j *shellJob) vet(ctx context.Context, args []string) ([]string, error) {
	i := 0
prefixes:
	for i < len(args) {
		switch args[i] {
		case "builtin":
			i++
		case "command":
			flags, rest := shellFlags(args[i+1:])
			for _, f := range flags {
				if f != "-v" {
					return args, nil // the interpreter refuses the option
				}
			}
			if len(flags) > 0 {
				return append([]string{j.internal, "command-v"}, rest...), nil
			}
			i = len(args) - len(rest)
		default:
			break prefixes
		}
	}
	if i >= len(args) {
		return args, nil
	}
	core := args[i:]
	// out is the call with core rewritten (in a copy).
	out := func() []string { return append(slices.Clone(args[:i]), core...) }
	switch core[0] {
	case "eval":
		if len(core) < 2 {
			break
		}
		f, err := syntax.NewParser().Parse(strings.NewReader(strings.Join(core[1:], " ")), "")
		if err != nil {
			break // the interpreter reports it
		}
		if ps := findProcSubst(f); ps != nil {
			return nil, &refusedError{msg: "eval: " + procSubstRefusal(ps)}
		}
		if j.loops != nil && j.instrumentLoops(f, true) > 0 {
			var b strings.Builder
			if err := syntax.NewPrinter().Print(&b, f); err != nil {
				return nil, &refusedError{"eval: cannot count the loops of this code: " + err.Error(), "eval: cannot count the loops of this code"}
			}
			core = []string{"eval", b.String()}
			return out(), nil
		}
	case "source", ".":
		if len(core) < 2 {
			break
		}
		dir := interp.HandlerCtx(ctx).Dir
		p := core[1]
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		core = slices.Clone(core)
		if rel, ok := j.inside(dir, p); ok {
			core[1] = filepath.Join(j.sources, rel)
		} else {
			core[1] = filepath.Clean(p) // refused by the open handler
		}
		return out(), nil
	case "trap":
		flags, rest := shellFlags(core[1:])
		if len(flags) > 0 && slices.ContainsFunc(flags, func(f string) bool { return f != "-" }) || len(rest) < 2 || rest[0] == "-" || rest[0] == "" {
			break
		}
		f, err := syntax.NewParser().Parse(strings.NewReader(rest[0]), "")
		if err != nil {
			break
		}
		if ps := findProcSubst(f); ps != nil {
			return nil, &refusedError{msg: "trap: " + procSubstRefusal(ps)}
		}
		if j.loops != nil && hasLoop(f) {
			// The action is parsed anew each time it runs: through eval,
			// its loops are counted afresh each time.
			q, err := syntax.Quote(rest[0], syntax.LangBash)
			if err != nil {
				return nil, &refusedError{"trap: cannot count the loops of this action: " + err.Error(), "trap: cannot count the loops of this action"}
			}
			core = slices.Clone(core)
			core[len(core)-len(rest)] = "eval " + q
			return out(), nil
		}
	case "alias":
		for _, arg := range core[1:] {
			_, src, ok := strings.Cut(arg, "=")
			if !ok {
				continue
			}
			for w, err := range syntax.NewParser().WordsSeq(strings.NewReader(src)) {
				if err != nil {
					break
				}
				if err := j.vetLate("alias", w); err != nil {
					return nil, err
				}
			}
		}
	case "unset":
		for _, arg := range core[1:] {
			k := strings.IndexByte(arg, '[')
			if k <= 0 || !strings.HasSuffix(arg, "]") || !syntax.ValidName(arg[:k]) {
				continue
			}
			x, err := syntax.NewParser().Arithmetic(strings.NewReader(arg[k+1 : len(arg)-1]))
			if err != nil || x == nil {
				continue
			}
			if err := j.vetLate("unset", x); err != nil {
				return nil, err
			}
		}
	case "type":
		flags, rest := shellFlags(core[1:])
		mode := ""
		for _, f := range flags {
			switch f {
			case "-p", "-P", "-t":
				mode = f
			default:
				return args, nil // the interpreter refuses the option
			}
		}
		return append([]string{j.internal, "type", mode}, rest...), nil
	case "pwd":
		physical := false
		for _, a := range core[1:] {
			switch a {
			case "-L":
				physical = false
			case "-P":
				physical = true
			default:
				return args, nil // the interpreter refuses the option
			}
		}
		if physical {
			return []string{j.internal, "pwd"}, nil
		}
	}
	return args, nil
}

// vetLate refuses, in code that an alias or an array subscript brings in,
// a process substitution, and a loop when loops are counted: the
// interpreter parses such code itself, where no count can be inserted.
func (j *shellJob) vetLate(what string, n syntax.Node) error {
	if ps := findProcSubst(n); ps != nil {
		return &refusedError{msg: what + ": " + procSubstRefusal(ps)}
	}
	if j.loops != nil && hasLoop(n) {
		return &refusedError{msg: fmt.Sprintf("%s: a loop here is not supported by agentform's bash sandbox when the tool sets max_loop_iterations", what)}
	}
	return nil
}

// shellFlags splits the arguments of a builtin into its options, one
// letter each ("-ab" is "-a", "-b"), and the rest, as the interpreter's
// builtins do: options end at the first argument that does not begin with
// "-" or "+", or after "--".
func shellFlags(args []string) (flags, rest []string) {
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return flags, args[1:]
		}
		if a == "" || a[0] != '-' && a[0] != '+' {
			break
		}
		args = args[1:]
		if len(a) <= 2 {
			flags = append(flags, a)
			continue
		}
		for k := 1; k < len(a); k++ {
			flags = append(flags, a[:1]+a[k:k+1])
		}
	}
	return flags, args
}

// findProcSubst returns the first process substitution in n, or nil.
func findProcSubst(n syntax.Node) *syntax.ProcSubst {
	var found *syntax.ProcSubst
	syntax.Walk(n, func(n syntax.Node) bool {
		if ps, ok := n.(*syntax.ProcSubst); ok && found == nil {
			found = ps
		}
		return found == nil
	})
	return found
}

// procSubstRefusal is the message that refuses a process substitution.
func procSubstRefusal(ps *syntax.ProcSubst) string {
	op := "<("
	switch ps.Op {
	case syntax.CmdOut:
		op = ">("
	case syntax.CmdInTemp:
		op = "=("
	}
	return "process substitution " + op + "...) is not supported by agentform's bash sandbox"
}

// hasLoop reports whether n holds a loop.
func hasLoop(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok && isLoop(st) {
			found = true
		}
		return !found
	})
	return found
}

// isLoop reports whether st is a while, until or for loop.
func isLoop(st *syntax.Stmt) bool {
	switch st.Cmd.(type) {
	case *syntax.WhileClause, *syntax.ForClause:
		return true
	}
	return false
}

// loopCall handles a call ":" with two arguments when it is one that
// instrumentLoops inserted: ": ID start" or ": ID tick" in the script
// itself, which only agentform's own syntax tree holds (the interpreter
// gives the call no position, which no parsed code has), or ": MARKER ID"
// in code parsed while the script runs. It reports whether it handled the
// call, and an error when a loop ran out of iterations. Other calls of ":"
// are plain ":", so a script cannot reset a count.
func (j *shellJob) loopCall(pos syntax.Pos, a, b string) (bool, error) {
	j.loopsMu.Lock()
	defer j.loopsMu.Unlock()
	if pos == (syntax.Pos{}) {
		lc := j.loops[a]
		if lc == nil || lc.late {
			return false, nil
		}
		switch b {
		case "start":
			lc.n = 0
			return true, nil
		case "tick":
			return true, j.tick(lc)
		}
		return false, nil
	}
	if a != j.marker {
		return false, nil
	}
	if lc := j.loops[b]; lc != nil && lc.late {
		return true, j.tick(lc)
	}
	return false, nil
}

// tick counts one iteration of a loop, and restarts the count of the loops
// nested in it; j.loopsMu is held.
func (j *shellJob) tick(lc *loopCount) error {
	lc.n++
	if lc.n > j.maxLoops {
		err := &limitError{fmt.Sprintf("a loop of %s ran more than the tool's max_loop_iterations (%d) times and was stopped", j.what, j.maxLoops)}
		j.cancel(err)
		return err
	}
	for _, in := range lc.inner {
		in.n = 0
	}
	return nil
}

// instrumentLoops inserts the calls that count loop iterations into n and
// returns how many loops it found, so that max_loop_iterations bounds every
// run of every loop, also loops with no command in them. The inserted
// calls stand for ":", so $? is 0 at the start of a loop body (it would
// otherwise be the status of the condition for until, and of the previous
// command for for).
//
// In the script itself (late false), each loop statement becomes
// "{ : ID start; loop; }" and each loop body begins with ": ID tick"; the
// call handler honours these calls only from agentform's own syntax tree,
// so the script cannot make them. Code parsed while the script runs (late:
// eval's, a trap's, a file run by source) is printed back to text that the
// interpreter parses again, so its calls cannot be told from the script's:
// each loop body begins with ": MARKER ID", which counts an iteration and
// restarts the loops nested in this one, and nothing resets a count. Such
// code is parsed anew each time eval or source runs it, with fresh counts;
// a loop of a function it defines counts across all the calls of it.
func (j *shellJob) instrumentLoops(n syntax.Node, late bool) int {
	type loopAt struct {
		st *syntax.Stmt
		lc *loopCount
	}
	var loops []loopAt
	var stack []*loopCount // per node being walked; nil for all but loops
	syntax.Walk(n, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		var lc *loopCount
		if st, ok := n.(*syntax.Stmt); ok && isLoop(st) {
			lc = &loopCount{late: late}
			loops = append(loops, loopAt{st, lc})
			if late {
				for _, outer := range stack {
					if outer != nil {
						outer.inner = append(outer.inner, lc)
					}
				}
			}
		}
		stack = append(stack, lc)
		return true
	})
	if len(loops) == 0 {
		return 0
	}
	j.loopsMu.Lock()
	ids := make([]string, len(loops))
	for i, l := range loops {
		ids[i] = strconv.Itoa(j.loopIDs)
		if late {
			ids[i] = "late" + ids[i]
		}
		j.loopIDs++
		j.loops[ids[i]] = l.lc
	}
	j.loopsMu.Unlock()
	for i, l := range loops {
		tick := markerCall(":", ids[i], "tick")
		if late {
			tick = markerCall(":", j.marker, ids[i])
		}
		switch loop := l.st.Cmd.(type) {
		case *syntax.WhileClause:
			loop.Do = append([]*syntax.Stmt{tick}, loop.Do...)
		case *syntax.ForClause:
			loop.Do = append([]*syntax.Stmt{tick}, loop.Do...)
		}
		if !late {
			l.st.Cmd = &syntax.Block{Stmts: []*syntax.Stmt{markerCall(":", ids[i], "start"), {Cmd: l.st.Cmd}}}
		}
	}
	return len(loops)
}

// markerCall is an inserted loop-counting call. Its words have no position.
func markerCall(args ...string) *syntax.Stmt {
	ce := &syntax.CallExpr{}
	for _, a := range args {
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
	if len(args) > 1 && args[0] == j.internal {
		return j.builtin(ctx, hc, args[1], args[2:])
	}
	path, ok := j.commands.lookup(hc.Dir, args[0])
	if !ok {
		// Stop the whole run, also when the command is in a subshell or
		// a pipeline, whose errors do not reach the top.
		err := &refusedError{j.commands.refusal(args[0]), j.commands.refusal("")}
		j.cancel(err)
		return err
	}
	if path == "" {
		fmt.Fprintf(hc.Stderr, "%s: command not found\n", args[0])
		return interp.ExitStatus(127)
	}
	home := j.execHome
	if home == "" {
		h, err := os.MkdirTemp(j.homes, "")
		if err != nil {
			fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
			return interp.ExitStatus(126)
		}
		defer os.RemoveAll(h)
		home = h
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = args
	env, set := execEnv(hc.Env, j.base, home)
	if set != "" {
		err := &refusedError{fmt.Sprintf("the script sets %s for %s, but external commands get only the variables of the tool's env policy as serve started, and of those the script may set or change only %s, with values that are not paths: a variable can make a command run another program (GREP for zgrep, PATH for what it runs) or read a file the script wrote; set it in the tool's env block instead",
			set, args[0], strings.Join(execEnvScriptSet, ", ")),
			"the script set a variable for an external command that only the tool's env block may set"}
		j.cancel(err)
		return err
	}
	cmd.Env = env
	cmd.Dir = hc.Dir
	// A file the shell opened is handed over as the file itself, as a
	// shell does: the command's writes are its own (not the shell's to
	// count), and grep or cat can tell that their input is their output.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = unwrapReader(hc.Stdin), unwrapWriter(hc.Stdout), unwrapWriter(hc.Stderr)
	inOwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
		return interp.ExitStatus(126)
	}
	untrack := proctree.Track(cmd.Process)
	defer untrack()
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
	cmd.SysProcAttr = proctree.GroupAttr()
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

// execEnvScriptSet lists the variables a script may set, or change from
// the env policy's value, for the external commands it runs: they choose a
// language, a time zone or a width, never a program. An entry ending in
// "*" is a prefix.
var execEnvScriptSet = []string{"LANG", "LANGUAGE", "LC_*", "TZ", "COLUMNS", "LINES", "NO_COLOR"}

// execEnvPinned are variables an external command gets as the run began,
// whatever the script did to them: PATH (the script's never finds a
// command, and a command's children must not find the script's programs
// either), TMPDIR (serve's, outside the sandbox's reach), the working
// directories the interpreter keeps itself, and HOME, which exec sets.
var execEnvPinned = []string{"PATH", "TMPDIR", "PWD", "OLDPWD", "HOME"}

// execEnv is the environment an external command gets: the exported
// string variables of the shell but those of execEnvDenied, each with the
// value the run began with (base, the env policy's), and HOME. A script
// may unset a variable, and set or change those of execEnvScriptSet; for
// any other it set or changed, execEnv returns its name instead (the
// command is refused: GREP=/bin/sh zgrep ran a shell). execEnvPinned keep
// their base value.
func execEnv(env expand.Environ, base map[string]string, home string) (out []string, set string) {
	vars := map[string]string{}
	env.Each(func(name string, vr expand.Variable) bool {
		switch {
		case !vr.IsSet(), !vr.Exported, vr.Kind != expand.String, !execEnvAllowed(name):
			// Unset, or no longer exported (export -n): a variable of the
			// policy the script removes does not reach the command.
			delete(vars, name)
		case slices.Contains(execEnvPinned, name):
			if v, ok := base[name]; ok {
				vars[name] = v
			}
		case unchanged(base, name, vr.String()), matchesAny(execEnvScriptSet, name) && scriptSettable(name, vr.String()):
			vars[name] = vr.String()
		case set == "":
			set = name
		}
		return true
	})
	if set != "" {
		return nil, set
	}
	vars["HOME"] = home
	out = make([]string, 0, len(vars))
	for name, v := range vars {
		out = append(out, name+"="+v)
	}
	slices.Sort(out)
	return out, ""
}

// matchesAny reports whether name is one of patterns, where a pattern
// ending in "*" is a prefix.
func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || name == p {
			return true
		}
	}
	return false
}

// scriptSettable reports whether v is a value the script may give the
// variable name of execEnvScriptSet: a name, never a path (LANGUAGE
// reaching ../x/LC_MESSAGES made sort print the script's format strings;
// LC_ALL and TZ may name files too). A time zone's name may hold "/"
// (Europe/Paris, also written :Europe/Paris), never at its start or as a
// ".." segment, and it does not start with "." (musl reads ./x, .tz
// relative to the working directory).
func scriptSettable(name, v string) bool {
	if name == "TZ" {
		v = strings.TrimPrefix(v, ":")
		return !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, ".") && !slices.Contains(strings.Split(v, "/"), "..")
	}
	return !strings.Contains(v, "/")
}

// unchanged reports whether base holds name with the value v.
func unchanged(base map[string]string, name, v string) bool {
	b, ok := base[name]
	return ok && b == v
}

// builtin runs a builtin that agentform answers itself in place of the
// interpreter, which would look at the host: "pwd" is pwd -P, the working
// directory with symbolic links resolved (never $PWD, which the script
// sets); "command-v" and "type" (with its mode, "", -t, -p or -P) name
// keywords, aliases, functions and builtins as the interpreter does, and
// otherwise only the tool's commands (never what the script's PATH finds).
func (j *shellJob) builtin(ctx context.Context, hc interp.HandlerContext, op string, args []string) error {
	switch op {
	case "pwd":
		dir := hc.Dir
		if p, err := filepath.EvalSymlinks(dir); err == nil && pathWithin(j.root, p) {
			dir = p
		}
		fmt.Fprintln(hc.Stdout, dir)
		return nil
	case "command-v":
		status := 0
		for _, name := range args {
			status = 0
			switch {
			case !strings.Contains(name, "/") && (interp.IsBuiltin(name) || j.isFunction(ctx, hc, name)):
				fmt.Fprintln(hc.Stdout, name)
			case j.commandPath(hc.Dir, name) != "":
				fmt.Fprintln(hc.Stdout, j.commandPath(hc.Dir, name))
			default:
				status = 1
			}
		}
		if status != 0 {
			return interp.ExitStatus(status)
		}
		return nil
	case "type":
		mode, names := "", args
		if len(args) > 0 {
			mode, names = args[0], args[1:]
		}
		notFound := false
		for _, name := range names {
			if mode != "-p" && mode != "-P" && !strings.Contains(name, "/") &&
				(syntax.IsKeyword(name) || interp.IsBuiltin(name) || j.isFunction(ctx, hc, name)) {
				// The interpreter answers before it would search PATH.
				targs := []string{"type"}
				if mode != "" {
					targs = append(targs, mode)
				}
				if err := hc.Builtin(ctx, append(targs, "--", name)); err != nil {
					notFound = true
				}
				continue
			}
			p := j.commandPath(hc.Dir, name)
			switch {
			case p == "":
				notFound = true
				if mode == "" {
					fmt.Fprintf(hc.Stderr, "type: %s: not found\n", name)
				}
			case mode == "-t":
				fmt.Fprintln(hc.Stdout, "file")
			case mode == "":
				fmt.Fprintf(hc.Stdout, "%s is %s\n", name, p)
			default:
				fmt.Fprintln(hc.Stdout, p)
			}
		}
		if notFound {
			return interp.ExitStatus(1)
		}
		return nil
	}
	return fmt.Errorf("unknown agentform builtin %q", op)
}

// commandPath is the program an allowed command runs, or "".
func (j *shellJob) commandPath(dir, name string) string {
	if p, ok := j.commands.lookup(dir, name); ok {
		return p
	}
	return ""
}

// isFunction reports whether the script has defined the function name.
// It asks the interpreter with a negated declare -f, whose failure neither
// runs an ERR trap nor ends a set -e script, then leaves the status 0 for
// the caller to set.
func (j *shellJob) isFunction(ctx context.Context, hc interp.HandlerContext, name string) bool {
	if !syntax.ValidName(name) {
		return false
	}
	found := hc.Builtin(ctx, []string{"eval", "! declare -f " + name + " >/dev/null 2>&1"}) != nil
	_ = hc.Builtin(ctx, []string{"eval", "((1))"})
	return found
}

// errOutside is the error of a file access outside the sandbox.
var errOutside = errors.New("outside the tool's filesystem")

// errCommandFile is the error of writing one of the tool's commands.
var errCommandFile = errors.New("one of the tool's commands (or another tool's of the agent), which a script may not write")

// errNotRegular is the error of opening what is neither a regular file nor
// a directory (a named pipe, a device, a socket).
var errNotRegular = errors.New("not a regular file: the shell of a bash tool opens only regular files and directories (a named pipe could make it wait past every limit)")

// maxSourceSize bounds a file run by source.
const maxSourceSize = 16 << 20

// source opens the file rel of the sandbox (its path from the root) for
// source: it refuses a process substitution in it and counts its loops as
// eval's (see instrumentLoops). The text it returns is what the interpreter
// parses, so a script cannot change the file between check and use.
func (j *shellJob) source(rel string) (io.ReadWriteCloser, error) {
	rel = filepath.Clean(rel)
	if rel != "." && !filepath.IsLocal(rel) {
		return nil, &os.PathError{Op: "open", Path: rel, Err: errOutside}
	}
	pathErr := func(err error) error {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &os.PathError{Op: "open", Path: rel, Err: err}
	}
	// Not blocking: a named pipe would otherwise wait for a writer.
	f, err := j.fsys.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, pathErr(err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		if err == nil {
			err = errors.New("not a regular file")
		}
		return nil, pathErr(err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSourceSize+1))
	if err != nil {
		return nil, pathErr(err)
	}
	if len(data) > maxSourceSize {
		return nil, pathErr(fmt.Errorf("larger than %d bytes", maxSourceSize))
	}
	file, err := syntax.NewParser().Parse(bytes.NewReader(data), "")
	if err != nil {
		return nil, &os.PathError{Op: "parse", Path: rel, Err: err}
	}
	if ps := findProcSubst(file); ps != nil {
		err := &refusedError{procSubstRefusal(ps) + " (in " + rel + ", run by source)", procSubstRefusal(ps) + " (in a file run by source)"}
		j.cancel(err)
		return nil, err
	}
	if j.loops != nil && j.instrumentLoops(file, true) > 0 {
		var b bytes.Buffer
		if err := syntax.NewPrinter().Print(&b, file); err != nil {
			return nil, &os.PathError{Op: "open", Path: rel, Err: err}
		}
		data = b.Bytes()
	}
	return nopReadWriteCloser{r: bytes.NewReader(data)}, nil
}

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
	if rel, ok := strings.CutPrefix(p, j.sources); ok && j.sources != "" && flag == os.O_RDONLY && (rel == "" || rel[0] == filepath.Separator) {
		// A file run by source (see vet).
		return j.source(strings.TrimPrefix(rel, string(filepath.Separator)))
	}
	rel, ok := j.inside(hc.Dir, p)
	if !ok {
		return nil, &os.PathError{Op: "open", Path: p, Err: errOutside}
	}
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 && j.commands.isCommandFile(filepath.Join(j.root, rel)) {
		return nil, &os.PathError{Op: "open", Path: p, Err: errCommandFile}
	}
	// Not blocking: opening a named pipe waits for the other end in a
	// system call that neither a limit nor the call's deadline can
	// interrupt, and the run would hang for good. Only regular files and
	// directories are opened.
	f, err := j.fsys.OpenFile(rel, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, syscall.ENXIO) {
			err = errNotRegular // a named pipe opened for writing
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() && !info.IsDir() {
		f.Close()
		if err == nil {
			err = errNotRegular
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		return &limitedFile{f: f, j: j}, nil
	}
	return f, nil
}

// watchHeap stops the run, with a limitError, when serve's heap grows more
// than bashHeapLimit beyond what it was as the run began; the returned
// function ends the watch.
func (j *shellJob) watchHeap(ctx context.Context) func() {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	start := read()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(bashHeapEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				over := func() bool { now := read(); return now > start && now-start > bashHeapLimit }
				if !over() {
					continue
				}
				// The heap counts garbage not yet collected: collect it,
				// so that only memory the run holds stops it.
				runtime.GC()
				if over() {
					j.cancel(&limitError{fmt.Sprintf("serve's memory grew by more than %d MiB while %s ran (its variables and expansions, and any other call running at the same time), and it was stopped", bashHeapLimit>>20, j.what)})
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// limitedFile is a file the shell opened for writing: its writes count
// toward the run's bashWriteLimit. It has no other method of *os.File
// (WriteString, ReadFrom) that would write around Write.
type limitedFile struct {
	f *os.File
	j *shellJob
}

func (f *limitedFile) Read(p []byte) (int, error) { return f.f.Read(p) }

func (f *limitedFile) Close() error { return f.f.Close() }

func (f *limitedFile) Write(p []byte) (int, error) {
	if f.j.written.Add(int64(len(p))) > bashWriteLimit {
		err := &limitError{fmt.Sprintf("%s wrote more than %d MiB to files and was stopped", f.j.what, bashWriteLimit>>20)}
		f.j.cancel(err)
		return 0, err
	}
	return f.f.Write(p)
}

// unwrapReader and unwrapWriter return the file a limitedFile holds, and
// anything else (nil included) as it is.
func unwrapReader(r io.Reader) io.Reader {
	if lf, ok := r.(*limitedFile); ok {
		return lf.f
	}
	return r
}

func unwrapWriter(w io.Writer) io.Writer {
	if lf, ok := w.(*limitedFile); ok {
		return lf.f
	}
	return w
}

// readDir is the interpreter's directory reader (for globs).
func (j *shellJob) readDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	rel, ok := j.inside(interp.HandlerCtx(ctx).Dir, p)
	if !ok {
		return nil, &os.PathError{Op: "readdir", Path: p, Err: errOutside}
	}
	// A directory only: opening a named pipe would wait for a writer.
	f, err := j.fsys.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
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

// nopReadWriteCloser reads from r and writes to w (either may be nil:
// nothing to read, or to write) and has nothing to close.
type nopReadWriteCloser struct {
	r io.Reader
	w io.Writer
}

func (n nopReadWriteCloser) Read(p []byte) (int, error) {
	if n.r == nil {
		return 0, io.EOF
	}
	return n.r.Read(p)
}

func (n nopReadWriteCloser) Write(p []byte) (int, error) {
	if n.w == nil {
		return 0, os.ErrPermission
	}
	return n.w.Write(p)
}

func (n nopReadWriteCloser) Close() error { return nil }

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
