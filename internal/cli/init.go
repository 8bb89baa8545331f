package cli

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"text/template"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/safefile"
)

//go:embed scaffold
var scaffold embed.FS

// InitCommand is "agentform init": scaffold a new workspace.
type InitCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *InitCommand) Synopsis() string { return "Create a new workspace" }

// Help implements cli.Command.
func (c *InitCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] init [options] [DIR]

  Creates a workspace in DIR (default: the workspace directory): agent.acl
  with one agent, a TypeScript tool package (tools/greet), a skill
  (skills/greeting) and a .gitignore. The new workspace validates as is.

  init checks everything before it writes: when any of these files
  exists (init never overwrites), when DIR already has manifest files
  (*.acl, *.acl.json: agent.acl would be merged with them), or when a
  path where init needs a directory is none, it changes nothing and says
  which. If a write still fails midway (a full disk, a directory that
  refuses new files), init removes the files and directories it created.

Options:

  -agent=NAME  Name of the agent (default: derived from DIR, or
               "assistant" when DIR's name makes no agent name: it
               starts with a digit, or is longer than 64 characters).
  -no-color    Disable colour.
  -chdir=DIR   Use DIR as the workspace.
`) + "\n"
}

var nonName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// maxAgentName is the longest agent name init writes.
const maxAgentName = 64

// agentName is what init accepts as an agent's name, up to maxAgentName
// characters.
var agentName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// Run implements cli.Command.
func (c *InitCommand) Run(args []string) int {
	fset := c.flagSet("init")
	agent := fset.String("agent", "", "agent name")
	if !c.parseFlagsAnywhere(fset, args, c.Help()) {
		return ExitError
	}
	if fset.NArg() > 1 {
		fmt.Fprintf(c.Stderr, "Error: init takes at most one directory.\n\n%s", c.Help())
		return ExitError
	}
	dir := c.Dir
	if fset.NArg() == 1 {
		dir = c.path(fset.Arg(0))
		info, err := os.Stat(dir)
		switch {
		case err == nil && !info.IsDir():
			fmt.Fprintf(c.Stderr, "Error: %s is a file; init creates a workspace in a directory (it writes agent.acl there).\n", fset.Arg(0))
			return ExitError
		case err != nil && (strings.HasSuffix(dir, manifest.SuffixNative) || strings.HasSuffix(dir, manifest.SuffixJSON)):
			fmt.Fprintf(c.Stderr, "Error: %s looks like a manifest file; init takes a directory and writes agent.acl in it (agentform init DIR).\n", fset.Arg(0))
			return ExitError
		}
	}
	name := *agent
	if name == "" {
		abs, _ := filepath.Abs(dir)
		name = strings.Trim(nonName.ReplaceAllString(filepath.Base(abs), "_"), "_-")
		// A directory whose name makes no agent name gives the default.
		if !agentName.MatchString(name) || len(name) > maxAgentName {
			name = "assistant"
		}
	}
	switch {
	case len(name) > maxAgentName:
		fmt.Fprintf(c.Stderr, "Error: the agent name %.20q… is %d characters long; an agent name has at most %d. Choose a shorter one with -agent=NAME.\n", name, len(name), maxAgentName)
		return ExitError
	case !agentName.MatchString(name):
		fmt.Fprintf(c.Stderr, "Error: %q is not a valid agent name: start with a letter or underscore; use letters, digits, _ and -.\n", name)
		return ExitError
	}

	files, err := renderScaffold(name)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s\n", err)
		return ExitError
	}
	mkdirs, conflicts := checkInitTarget(dir, files)
	if len(conflicts) > 0 {
		for _, m := range conflicts {
			fmt.Fprintf(c.Stderr, "Error: %s.\n", m)
		}
		fmt.Fprintf(c.Stderr, "init changed nothing.\n")
		return ExitError
	}
	// Everything init makes is recorded, so that a write failing midway
	// (a full disk, a directory that refuses new files) removes it all
	// again, and nothing that was there before: a re-run then starts
	// from where this one did.
	var made []string
	fail := func(err error) int {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		if undone := undoInit(made); len(undone) > 0 {
			for _, m := range undone {
				fmt.Fprintf(c.Stderr, "Error: %s.\n", m)
			}
			return ExitError
		}
		fmt.Fprintf(c.Stderr, "init removed what it had created; %s is as it was.\n", dir)
		return ExitError
	}
	for _, d := range mkdirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fail(fmt.Errorf("cannot create the workspace directory %s (%w)", d, bareErr(err)))
		}
		made = append(made, d)
	}
	for _, f := range files {
		p := filepath.Join(dir, f.path)
		if err := createNew(p, f.data); err != nil {
			return fail(err)
		}
		made = append(made, p)
	}
	// The directory as given: printed escaped, never as control sequences.
	fmt.Fprintf(c.Stdout, "agentform has created a workspace for agent %q in %s:\n\n", name, render.PrintableName(dir))
	for _, f := range files {
		fmt.Fprintf(c.Stdout, "  %s\n", f.path)
	}
	chdir := ""
	if filepath.Clean(dir) != "." {
		chdir = "-chdir=" + render.PrintableName(shellWord(dir)) + " "
	}
	fmt.Fprintf(c.Stdout, "\nNext: \"agentform %svalidate\" to check it, then \"agentform %splan\".\n", chdir, chdir)
	return ExitOK
}

// checkInitTarget finds, before init writes anything, every reason it
// cannot write files in dir: a file that exists (init never overwrites),
// a manifest file dir already has (the workspace is every manifest file
// of the directory, so the new agent.acl would be merged with it), a path
// where init needs a directory that is none, and a path that cannot be
// inspected. Without one, it returns the directories init must create,
// parents first.
func checkInitTarget(dir string, files []scaffoldFile) (mkdirs, conflicts []string) {
	dir = filepath.Clean(dir)
	// state of each directory init needs: "ok" (exists), "missing" or
	// "bad" (a conflict, reported once: nothing below it is checked).
	state := map[string]string{}
	need := func(p string) {
		parent := filepath.Dir(p)
		if s, known := state[parent]; known && s != "ok" {
			state[p] = s
			if s == "missing" {
				mkdirs = append(mkdirs, p)
			}
			return
		}
		info, err := os.Stat(p)
		switch {
		case err == nil && info.IsDir():
			state[p] = "ok"
		case err == nil:
			state[p] = "bad"
			conflicts = append(conflicts, fmt.Sprintf("%s is not a directory, but init needs a directory there", p))
		case errors.Is(err, fs.ErrNotExist):
			if _, lerr := os.Lstat(p); lerr == nil {
				state[p] = "bad"
				conflicts = append(conflicts, fmt.Sprintf("%s is a symbolic link that leads nowhere, but init needs a directory there", p))
				return
			}
			state[p] = "missing"
			mkdirs = append(mkdirs, p)
		default:
			state[p] = "bad"
			conflicts = append(conflicts, fmt.Sprintf("cannot inspect %s, where init needs a directory (%s)", p, bareErr(err)))
		}
	}
	// dir and the directories above it, outermost first.
	var up []string
	for p := dir; ; p = filepath.Dir(p) {
		up = append(up, p)
		if filepath.Dir(p) == p || filepath.Dir(p) == "." {
			break
		}
	}
	for i := len(up) - 1; i >= 0; i-- {
		need(up[i])
	}
	// The directories inside dir, parents first (sorted paths put a
	// directory before what it holds).
	var sub []string
	for _, f := range files {
		for d := path.Dir(f.path); d != "."; d = path.Dir(d) {
			if !slices.Contains(sub, d) {
				sub = append(sub, d)
			}
		}
	}
	slices.Sort(sub)
	for _, d := range sub {
		need(filepath.Join(dir, filepath.FromSlash(d)))
	}

	var existing []string
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if state[filepath.Dir(p)] != "ok" {
			continue
		}
		_, err := os.Lstat(p)
		switch {
		case err == nil:
			existing = append(existing, f.path)
		case !errors.Is(err, fs.ErrNotExist):
			conflicts = append(conflicts, fmt.Sprintf("cannot inspect %s, where init writes a file (%s)", p, bareErr(err)))
		}
	}
	if len(existing) > 0 {
		conflicts = append(conflicts, fmt.Sprintf("%s already has %s: init never overwrites; remove %s or run init in an empty directory", dir, strings.Join(existing, ", "), itThem(len(existing))))
	}
	if state[dir] == "ok" {
		names, err := manifest.ManifestFiles(dir)
		if err != nil {
			conflicts = append(conflicts, fmt.Sprintf("cannot list the manifest files of %s (%s)", dir, bareErr(err)))
		}
		names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(existing, n) })
		if len(names) > 0 {
			what := "the manifest file " + names[0]
			if len(names) > 1 {
				what = "the manifest files " + strings.Join(names, ", ")
			}
			conflicts = append(conflicts, fmt.Sprintf("%s already has %s, and every *.acl and *.acl.json file of a directory belongs to its workspace: init's agent.acl would be merged with %s; run init in a directory without manifest files", dir, what, itThem(len(names))))
		}
	}
	return mkdirs, conflicts
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// createNew writes a file that must not exist yet: one that appeared
// since init checked (another process) is an error, never overwritten, and
// is not init's to remove. The data goes into a temporary file
// ".<name>.tmp*" in the same directory, synced and given mode 0644, which
// is then hard-linked to path (a link fails when path exists) and removed:
// path appears complete or not at all, so a write that fails or is killed
// midway leaves no part of a file for the next init to call a conflict
// (at most a dot-prefixed temporary file). Where the file system has no
// hard links, path is created with O_EXCL and written in place.
func createNew(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, bareErr(err))
	}
	defer os.Remove(tmp.Name())
	if err := writeSynced(tmp, data); err != nil {
		return fmt.Errorf("writing %s: %w", path, bareErr(err))
	}
	err = linkFile(tmp.Name(), path)
	if err != nil && noHardLinks(err) {
		return createExclusive(path, data)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, bareErr(err))
	}
	return nil
}

// linkFile is os.Link; tests replace it to take the path without hard
// links.
var linkFile = os.Link

// noHardLinks reports whether a link failed because the file system (or
// the system) does not make hard links, as FAT and some network and FUSE
// file systems do not: EPERM on Linux, ENOTSUP, EOPNOTSUPP or ENOSYS
// (errors.ErrUnsupported), EXDEV.
func noHardLinks(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EXDEV)
}

// createExclusive is createNew without hard links: path is created with
// O_EXCL and written in place. A write that fails removes the file, only
// if path is still the file this call created.
func createExclusive(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, bareErr(err))
	}
	created, serr := f.Stat()
	if err := writeSynced(f, data); err != nil {
		if now, lerr := os.Lstat(path); serr == nil && lerr == nil && os.SameFile(created, now) {
			os.Remove(path)
		}
		return fmt.Errorf("writing %s: %w", path, bareErr(err))
	}
	return nil
}

// writeSynced writes data to f, gives it mode 0644 (whatever the umask),
// syncs it and closes it.
func writeSynced(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// undoInit removes what a failed init made, newest first, and returns
// what it could not remove. A directory that holds something init did
// not put there is not empty, and stays.
func undoInit(made []string) []string {
	var failed []string
	for i := len(made) - 1; i >= 0; i-- {
		if err := os.Remove(made[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			failed = append(failed, fmt.Sprintf("init created %s and cannot remove it (%s); remove it before running init again", made[i], bareErr(err)))
		}
	}
	return failed
}

// bareErr is the system's reason of a file system error, without the
// path the message around it already names.
func bareErr(err error) error { return safefile.Bare(err) }

// shellWord quotes s for a POSIX shell when it holds anything but
// letters, digits and _./:@%+=,- (a space, a quote), so that a command
// shown to be pasted runs as shown.
func shellWord(s string) string {
	plain := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./:@%+=,-", r))
	})
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

type scaffoldFile struct {
	path string
	data []byte
}

// renderScaffold returns the workspace files for an agent name, sorted by
// path.
func renderScaffold(name string) ([]scaffoldFile, error) {
	var out []scaffoldFile
	err := fs.WalkDir(scaffold, "scaffold", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := scaffold.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "scaffold/")
		if strings.HasSuffix(rel, ".tmpl") {
			rel = strings.TrimSuffix(rel, ".tmpl")
			tmpl, err := template.New(rel).Parse(string(data))
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := tmpl.Execute(&buf, struct{ Name string }{name}); err != nil {
				return err
			}
			data = buf.Bytes()
		}
		if rel == "gitignore" {
			rel = ".gitignore"
		}
		out = append(out, scaffoldFile{path: path.Clean(rel), data: data})
		return nil
	})
	return out, err
}
