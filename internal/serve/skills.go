package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentform/agentform/internal/artifact"
)

func init() { register(artifact.KindSkills, newSkillsExecutor) }

// skillScriptTimeout bounds one run_skill_script call.
const skillScriptTimeout = 30 * time.Second

// skillsExecutor serves the built-in skill tools from the artifact's
// skills (agent.json "skills" and the files skills/<name>/...).
// run_skill_script runs a skill's .sh script in the shell interpreter with
// builtins only (no external command) and its .py script with python3 -I,
// each in a temporary copy of the skill's files and bounded by
// skillScriptTimeout.
//
// Only the shell script is confined to the copy. A Python script has the
// file access of serve's user: its arguments may not be absolute paths or
// hold ".." segments (checkScriptArgs), but the script itself may open any
// path.
type skillsExecutor struct {
	host   *Host
	skills map[string]*artifact.Skill
	// names are the skills' names, sorted.
	names []string

	pythonOnce sync.Once
	python     string
	pythonErr  error
}

// newSkillsExecutor is the Factory of the skill tools.
func newSkillsExecutor(ctx context.Context, h *Host, block string, tools []*artifact.Tool) (Executor, error) {
	e := &skillsExecutor{host: h, skills: map[string]*artifact.Skill{}}
	for i := range h.Agent.Skills {
		s := &h.Agent.Skills[i]
		e.skills[s.Name] = s
		e.names = append(e.names, s.Name)
	}
	slices.Sort(e.names)
	return e, nil
}

// skillArgs are the arguments of the skill tools.
type skillArgs struct {
	Skill  string   `json:"skill"`
	Path   string   `json:"path"`
	Script string   `json:"script"`
	Args   []string `json:"args"`
}

// Call serves one skill tool.
func (e *skillsExecutor) Call(ctx context.Context, call *Call) (*Result, error) {
	var args skillArgs
	if len(call.Args) > 0 {
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return nil, fmt.Errorf("the arguments do not match the tool's schema: %w", err)
		}
	}
	if call.Tool.Name == "list_skills" {
		type entry struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		}
		list := []entry{}
		for _, name := range e.names {
			list = append(list, entry{name, e.skills[name].Description})
		}
		return jsonResult(list)
	}
	s, err := e.skill(args.Skill)
	if err != nil {
		return nil, err
	}
	switch call.Tool.Name {
	case "get_skill":
		return e.readFile(s, "SKILL.md")
	case "describe_skill":
		files := []string{}
		for _, f := range s.Files {
			files = append(files, strings.TrimPrefix(f, skillPrefix(s)))
		}
		allowed := s.AllowedTools
		if allowed == nil {
			allowed = []string{}
		}
		return jsonResult(map[string]any{"name": s.Name, "description": s.Description, "allowed_tools": allowed, "files": files})
	case "read_skill_file":
		return e.readFile(s, args.Path)
	case "run_skill_script":
		return e.runScript(ctx, s, args.Script, args.Args)
	}
	return nil, fmt.Errorf("%q is not a skill tool", call.Tool.Name)
}

// skill returns the named skill.
func (e *skillsExecutor) skill(name string) (*artifact.Skill, error) {
	if s := e.skills[name]; s != nil {
		return s, nil
	}
	if len(e.names) == 0 {
		return nil, fmt.Errorf("there is no skill %q: this agent has no skills", name)
	}
	return nil, fmt.Errorf("there is no skill %q; the skills are %s", name, strings.Join(e.names, ", "))
}

// skillPrefix is the archive directory of a skill's files.
func skillPrefix(s *artifact.Skill) string { return "skills/" + s.Name + "/" }

// skillFile checks a path given for a file of a skill and returns its
// archive path: a relative, clean path to one of the skill's files.
func skillFile(s *artifact.Skill, p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("the path is empty; describe_skill lists the skill's files")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return "", fmt.Errorf("the path %q is absolute; give it relative to the skill, as describe_skill lists it", p)
	case strings.Contains(p, "\\") || slices.Contains(strings.Split(p, "/"), ".."):
		return "", fmt.Errorf("the path %q may not contain \"..\" or backslashes", p)
	}
	full := skillPrefix(s) + path.Clean(p)
	if !slices.Contains(s.Files, full) {
		return "", fmt.Errorf("skill %q has no file %q; describe_skill lists its files", s.Name, p)
	}
	return full, nil
}

// readFile returns the text of a file of a skill.
func (e *skillsExecutor) readFile(s *artifact.Skill, p string) (*Result, error) {
	full, err := skillFile(s, p)
	if err != nil {
		return nil, err
	}
	data, ok := e.host.Files[full]
	if !ok {
		return nil, fmt.Errorf("the artifact lacks %s, which skill %q lists; rebuild it with agentform apply", full, s.Name)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s is not a text file; read_skill_file returns text only", p)
	}
	return jsonResult(string(data))
}

// runScript runs a script of a skill with its files in a temporary
// directory, which is the script's working directory (and a shell script's
// HOME; a Python script gets an empty one of its own).
func (e *skillsExecutor) runScript(ctx context.Context, s *artifact.Skill, script string, args []string) (*Result, error) {
	full, err := skillFile(s, script)
	if err != nil {
		return nil, err
	}
	ext := path.Ext(full)
	if ext != ".sh" && ext != ".py" {
		return nil, fmt.Errorf("run_skill_script runs .sh and .py scripts only, not %q", script)
	}
	if ext == ".py" {
		if err := checkScriptArgs(args); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "agentform-skill-")
	if err != nil {
		return nil, fmt.Errorf("creating a directory for the skill: %w", err)
	}
	defer os.RemoveAll(tmp)
	root, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return nil, err
	}
	if err := extractDir(e.host.Files, skillPrefix(s), root); err != nil {
		return nil, err
	}
	rel := filepath.FromSlash(strings.TrimPrefix(full, skillPrefix(s)))
	if ext == ".sh" {
		file, err := syntax.NewParser().Parse(strings.NewReader(string(e.host.Files[full])), script)
		if err != nil {
			return shellResult(&shellOutcome{Stderr: err.Error() + "\n", ExitCode: 2, reason: "the skill script could not be parsed (exit status 2)"})
		}
		job := &shellJob{
			file:       file,
			params:     args,
			root:       root,
			dir:        root,
			env:        []string{"HOME=" + root},
			commands:   newCommandSet("", nil),
			what:       "the skill script",
			timeout:    skillScriptTimeout,
			timeoutErr: &limitError{fmt.Sprintf("the skill script ran longer than %s and was stopped", skillScriptTimeout)},
		}
		out, err := job.run(ctx)
		if err != nil {
			return nil, err
		}
		return shellResult(out)
	}
	return e.runPython(ctx, root, rel, args)
}

// checkScriptArgs refuses the arguments of a Python script that name a path
// outside the skill's copy: an absolute path, or one with a ".." segment,
// also as the value of an option (--out=/x). The script runs with the file
// access of serve's user; this keeps a client from pointing it elsewhere
// with its arguments, not the script from going there.
func checkScriptArgs(args []string) error {
	for _, a := range args {
		values := []string{a}
		if _, v, ok := strings.Cut(a, "="); ok {
			values = append(values, v)
		}
		for _, v := range values {
			if err := checkScriptArg(a, v); err != nil {
				return err
			}
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
			// Short options take their value glued on, after any number
			// of other options (-i/etc/x, -vi../x): each place the value
			// could begin is looked at. Which letters are options only
			// the script knows, so -odata/out.txt is refused too.
			end := 1
			for end < len(a) && (a[end] >= 'a' && a[end] <= 'z' || a[end] >= 'A' && a[end] <= 'Z' || a[end] >= '0' && a[end] <= '9') {
				end++
			}
			for i := 2; i <= end && i < len(a); i++ {
				if checkScriptArg(a, a[i:]) != nil {
					return fmt.Errorf("the argument %q may give a short option an absolute path or a \"..\" segment (%q); give an option's value as an argument of its own, relative to the skill", a, a[i:])
				}
			}
		}
	}
	return nil
}

// checkScriptArg refuses v, argument a or a value in it, when it is an
// absolute path or has a ".." segment.
func checkScriptArg(a, v string) error {
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "\\") || filepath.IsAbs(v) {
		return fmt.Errorf("the argument %q is an absolute path; a skill's Python script may be given paths relative to the skill only", a)
	}
	segments := strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' })
	if slices.Contains(segments, "..") {
		return fmt.Errorf("the argument %q may not contain \"..\" path segments", a)
	}
	return nil
}

// runPython runs a skill's Python script with python3 -I, under the runner
// in script mode, which kills every process the script started when it
// ends (see runContained). dir, the skill's copy, is its working
// directory; its HOME is a fresh empty directory.
func (e *skillsExecutor) runPython(ctx context.Context, dir, script string, args []string) (*Result, error) {
	e.pythonOnce.Do(func() { e.python, e.pythonErr = pythonInterpreter(ctx) })
	if e.pythonErr != nil {
		return nil, e.pythonErr
	}
	home, err := os.MkdirTemp("", "agentform-skill-home-")
	if err != nil {
		return nil, fmt.Errorf("creating the script's home directory: %w", err)
	}
	defer os.RemoveAll(home)
	if strings.HasPrefix(script, "-") {
		script = "." + string(filepath.Separator) + script
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timeoutErr := &limitError{fmt.Sprintf("the skill script ran longer than %s and was stopped", skillScriptTimeout)}
	runCtx, stop := context.WithTimeoutCause(runCtx, skillScriptTimeout, timeoutErr)
	defer stop()
	outputErr := &limitError{fmt.Sprintf("the skill script wrote more than %d bytes of output and was stopped", defaultMaxOutput)}
	lim := &outputLimit{max: defaultMaxOutput, err: outputErr, cancel: cancel}
	stdout, stderr := &cappedBuffer{lim: lim}, &cappedBuffer{lim: lim}
	cmd := exec.CommandContext(runCtx, e.python, append([]string{"-I", "-c", pythonRunner, "script", script}, args...)...)
	cmd.Dir = dir
	cmd.Env = pythonEnv(home)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	code, reported, runErr := runContained(cmd)
	var limit *limitError
	if errors.As(context.Cause(runCtx), &limit) {
		return nil, limit
	}
	if ctx.Err() != nil {
		return nil, stoppedError(ctx, "the skill script")
	}
	out := &shellOutcome{}
	var exitErr *exec.ExitError
	switch {
	case reported:
		// The runner is killed after its report; its report is the
		// script's exit code.
		out.ExitCode = code
	case runErr == nil:
	case errors.As(runErr, &exitErr):
		out.ExitCode = exitCode(exitErr)
	default:
		return nil, fmt.Errorf("running the skill script: %w", runErr)
	}
	out.Stdout, out.Stderr = stdout.String(), stderr.String()
	// Paths of the temporary directories mean nothing to the client.
	out.Stderr = strings.ReplaceAll(out.Stderr, dir+string(filepath.Separator), "")
	out.Stderr = scrubPaths(out.Stderr, home)
	return shellResult(out)
}

// jsonResult is a successful result with v as output.
func jsonResult(v any) (*Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &Result{Output: b, Status: StatusSuccess}, nil
}

// Close releases nothing: each call cleans up after itself.
func (e *skillsExecutor) Close() error { return nil }
