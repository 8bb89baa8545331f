// Package cli implements the agentform command line: commands, flags,
// exit codes and terminal output. cmd/agentform is a thin main over Run.
package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
	hcli "github.com/hashicorp/cli"

	"github.com/agentform/agentform/internal/version"
)

// Exit codes shared by every command.
const (
	ExitOK    = 0
	ExitError = 1
	// ExitChanges is returned by plan -detailed-exitcode when there are
	// changes, and by fmt -check when files need formatting it is
	// ExitUnformatted.
	ExitChanges     = 2
	ExitUnformatted = 3
)

// Streams are the standard streams a command reads and writes.
type Streams struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StdoutTTY and StderrTTY report whether the streams are terminals
	// (colour and progress are only used on terminals).
	StdoutTTY bool
	StderrTTY bool
}

// Run runs the agentform command line with args (without the program name)
// and returns the process exit code.
func Run(args []string, streams Streams) int {
	meta := &Meta{Streams: streams, Dir: "."}
	// Global options come before the command name, as in Terraform:
	// agentform -chdir=DIR plan.
	twice := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-chdir=") {
		if meta.chdir != "" && twice == "" {
			twice = meta.chdir
		}
		meta.Dir = strings.TrimPrefix(args[0], "-chdir=")
		meta.chdir = cmp.Or(meta.Dir, "=")
		args = args[1:]
	}
	if twice != "" {
		fmt.Fprintf(streams.Stderr, "Error: -chdir=%s was given already: give the workspace once.\n", twice)
		if len(args) > 0 && args[0] == "audit" {
			return exitUsage
		}
		return ExitError
	}
	if len(args) > 0 && (args[0] == "-chdir" || strings.HasPrefix(args[0], "--chdir")) {
		fmt.Fprintln(streams.Stderr, "Error: write the global option as -chdir=DIR (with \"=\"), before the command name.")
		return ExitError
	}
	if meta.Dir == "" {
		fmt.Fprintln(streams.Stderr, "Error: -chdir needs a directory: -chdir=DIR.")
		return ExitError
	}
	// A mistyped -chdir must not read as an empty workspace (or have a
	// command create files there); init alone creates its directory.
	if len(args) > 0 && args[0] != "init" && !strings.HasPrefix(args[0], "-") && args[0] != "help" {
		if err := checkChdir(meta.Dir); err != nil {
			fmt.Fprintf(streams.Stderr, "Error: %s.\n", err)
			if args[0] == "audit" {
				// audit tells a broken invocation from a failed audit.
				return exitUsage
			}
			return ExitError
		}
	}

	commands := map[string]hcli.CommandFactory{
		"apply":    func() (hcli.Command, error) { return &ApplyCommand{Meta: meta}, nil },
		"audit":    func() (hcli.Command, error) { return &AuditCommand{Meta: meta}, nil },
		"calls":    func() (hcli.Command, error) { return &CallsCommand{Meta: meta}, nil },
		"fmt":      func() (hcli.Command, error) { return &FmtCommand{Meta: meta}, nil },
		"graph":    func() (hcli.Command, error) { return &GraphCommand{Meta: meta}, nil },
		"init":     func() (hcli.Command, error) { return &InitCommand{Meta: meta}, nil },
		"invoke":   func() (hcli.Command, error) { return &InvokeCommand{Meta: meta}, nil },
		"lock":     func() (hcli.Command, error) { return &LockCommand{Meta: meta}, nil },
		"plan":     func() (hcli.Command, error) { return &PlanCommand{Meta: meta}, nil },
		"serve":    func() (hcli.Command, error) { return &ServeCommand{Meta: meta}, nil },
		"show":     func() (hcli.Command, error) { return &ShowCommand{Meta: meta}, nil },
		"state":    func() (hcli.Command, error) { return &StateCommand{Meta: meta}, nil },
		"verify":   func() (hcli.Command, error) { return &VerifyCommand{Meta: meta}, nil },
		"validate": func() (hcli.Command, error) { return &ValidateCommand{Meta: meta}, nil },
		"version":  func() (hcli.Command, error) { return &VersionCommand{Meta: meta}, nil },
	}
	// "agentform -version" is "agentform version", as in Terraform.
	if len(args) == 1 && (args[0] == "-version" || args[0] == "--version" || args[0] == "-v") {
		args = []string{"version"}
	}
	// "agentform help [CMD]" is "agentform [CMD] -help".
	if len(args) > 0 && args[0] == "help" {
		if len(args) == 1 || args[1] == "help" {
			args = []string{"-help"}
		} else {
			args = []string{args[1], "-help"}
		}
	}
	if len(args) > 1 && slices.Contains([]string{"-version", "--version", "-v"}, args[0]) {
		fmt.Fprintf(streams.Stderr, "Error: %s takes nothing after it: run agentform version, or the command without %s.\n", args[0], args[0])
		return ExitError
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-") && !slices.Contains([]string{"-help", "-h", "--help"}, args[0]) {
		fmt.Fprintf(streams.Stderr, "Error: agentform has no global option %q. The global options are -chdir=DIR, -help and -version; a command's own options follow its name (agentform plan -help lists plan's).\n", args[0])
		return ExitError
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && commands[args[0]] == nil {
		fmt.Fprintf(streams.Stderr, "Error: agentform has no command named %q.%s\n\nTo see all of agentform's commands, run:\n  agentform -help\n", args[0], didYouMean(args[0], commands))
		return ExitError
	}
	c := &hcli.CLI{
		Name:        "agentform",
		Version:     version.Version,
		Args:        args,
		Commands:    commands,
		HelpFunc:    helpFunc,
		HelpWriter:  streams.Stdout,
		ErrorWriter: streams.Stderr,
	}
	code, err := c.Run()
	if err != nil {
		fmt.Fprintf(streams.Stderr, "Error: %s\n", err)
		return ExitError
	}
	return code
}

// checkChdir reports a -chdir that names no directory: a mistyped one
// must not read as an empty workspace, or have a command create files
// there.
func checkChdir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("-chdir=%s: there is no directory %s", dir, dir)
	case err != nil:
		return fmt.Errorf("-chdir=%s: %s", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("-chdir=%s: %s is a file, not a directory", dir, dir)
	}
	return nil
}

// didYouMean suggests the command closest to name, when one is close.
func didYouMean(name string, commands map[string]hcli.CommandFactory) string {
	best, bestDist := "", 3
	for c := range commands {
		if d := levenshtein.Distance(name, c, nil); d < bestDist || d == bestDist && c < best {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}

func helpFunc(commands map[string]hcli.CommandFactory) string {
	var b strings.Builder
	b.WriteString(`Usage: agentform [-chdir=DIR] <command> [options] [args]

agentform is plan / apply for AI agents: it reads agent manifests (*.acl),
shows which agent may call which tool before anything ships, and builds
locked, reproducible agent artifacts.

Commands:
`)
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cmd, err := commands[name]()
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "  %-10s %s\n", name, cmd.Synopsis())
	}
	b.WriteString(`
Global options (before the command name):
  -chdir=DIR   Use DIR as the workspace instead of the current directory.
  -help        Show this help, or a command's help: agentform <command> -help
               (or agentform help [command]).
  -version     Show the agentform version.
`)
	return b.String()
}

// IsTerminal reports whether f is an interactive terminal.
func IsTerminal(f *os.File) bool {
	return isTerminal(int(f.Fd()))
}
