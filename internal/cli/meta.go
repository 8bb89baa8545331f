package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"golang.org/x/term"

	"github.com/agentform/agentform/internal/audit"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/safefile"
)

func isTerminal(fd int) bool { return term.IsTerminal(fd) }

// Meta holds what every command shares: the streams, the workspace
// directory (-chdir) and colour.
type Meta struct {
	Streams
	// Dir is the workspace directory.
	Dir string
	// chdir is the -chdir given (before the command or among its
	// options), "" when none was: it may be given once.
	chdir string
	// noColor is set by -no-color.
	noColor bool
	// red is the redaction of the manifest redOf (see redaction).
	red   *render.Redaction
	redOf *manifest.Config
}

// redaction returns the credentials of cfg to mask and scrub in what the
// command prints (audit.Redaction), found once per manifest: a plan shows
// them in its text, its JSON and its diagnostics.
func (m *Meta) redaction(cfg *manifest.Config) *render.Redaction {
	if cfg == nil {
		return nil
	}
	if m.redOf != cfg {
		m.red, m.redOf = audit.Redaction(cfg), cfg
	}
	return m.red
}

// flagSet returns a flag set with the options every command accepts:
// -chdir and -no-color.
func (m *Meta) flagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Func("chdir", "workspace directory", func(s string) error {
		if s == "" {
			return fmt.Errorf("-chdir needs a directory")
		}
		if m.chdir != "" {
			// Which would win, and relative to what, is a guess either
			// way: a second -chdir is refused.
			return fmt.Errorf("-chdir=%s was given already: give the workspace once", m.chdir)
		}
		m.chdir = s
		// As the global -chdir (checkChdir); init creates its directory.
		if name != "init" {
			if err := checkChdir(s); err != nil {
				return errors.New(strings.TrimPrefix(err.Error(), "-chdir="+s+": "))
			}
		}
		m.Dir = s
		return nil
	})
	fs.BoolVar(&m.noColor, "no-color", false, "disable colour")
	return fs
}

// flagSetSeen, when a test sets it, is given every flag set a command
// parses with the help text it shows, so that the test can check that the
// help lists every option.
var flagSetSeen func(fs *flag.FlagSet, help string)

// parseFlags parses args and reports a usage error the way Terraform does.
// ok is false when the command should stop with ExitError.
func (m *Meta) parseFlags(fs *flag.FlagSet, args []string, help string) bool {
	if flagSetSeen != nil {
		flagSetSeen(fs, help)
	}
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(m.Stderr, "Error: %s\n\n%s", strings.TrimSpace(err.Error()), help)
		return false
	}
	return true
}

// parseInterspersed is parseFlags for commands whose usage puts options
// after the operands too (agentform invoke ARTIFACT TOOL -args=JSON): it
// returns the operands with every option parsed wherever it stood. "--"
// ends the options.
func (m *Meta) parseInterspersed(fs *flag.FlagSet, args []string, help string) ([]string, bool) {
	var operands []string
	for {
		if !m.parseFlags(fs, args, help) {
			return nil, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, true
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(operands, rest...), true
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// setEmpty reports whether the flag name was given with an empty value
// (-out=), which would otherwise read as not given at all.
func setEmpty(fs *flag.FlagSet, name string) bool {
	empty := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name && f.Value.String() == "" {
			empty = true
		}
	})
	return empty
}

// parseFlagsAnywhere is parseFlags that also takes the options written
// after an operand (agentform show PLAN -json), as parseInterspersed does;
// fs.Args() then holds the operands alone.
func (m *Meta) parseFlagsAnywhere(fs *flag.FlagSet, args []string, help string) bool {
	operands, ok := m.parseInterspersed(fs, args, help)
	if !ok {
		return false
	}
	// Only "--" and the operands: no option is parsed again.
	return fs.Parse(append([]string{"--"}, operands...)) == nil
}

// color reports whether output to stdout should be coloured.
func (m *Meta) color() bool { return m.colorFor(m.StdoutTTY) }

func (m *Meta) colorFor(tty bool) bool {
	if m.noColor || os.Getenv("NO_COLOR") != "" {
		return false
	}
	return tty
}

// path resolves a path given on the command line against the workspace
// directory when it is relative.
func (m *Meta) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(m.Dir, p)
}

// loadManifest loads the workspace manifest.
func (m *Meta) loadManifest() (*manifest.Config, hcl.Diagnostics) {
	return manifest.Load(m.Dir)
}

// showDiagnostics prints diagnostics to stderr, quoting the lines of
// files. It hides no credential: diagnostics about a loaded manifest go
// through showManifestDiagnostics.
func (m *Meta) showDiagnostics(diags hcl.Diagnostics, files map[string]*hcl.File) {
	if len(diags) == 0 {
		return
	}
	render.Diagnostics(m.Stderr, diags, files, nil, m.colorFor(m.StderrTTY))
}

// showManifestDiagnostics prints diagnostics to stderr, quoting the lines
// of cfg's files with the manifest's credentials masked and scrubbed from
// the messages (audit.Redaction): a warning on a line that holds a token,
// or a check whose error_message interpolates one, must not print it.
func (m *Meta) showManifestDiagnostics(diags hcl.Diagnostics, cfg *manifest.Config) {
	if len(diags) == 0 {
		return
	}
	var files map[string]*hcl.File
	if cfg != nil {
		files = cfg.Files
	}
	render.Diagnostics(m.Stderr, diags, files, m.redaction(cfg), m.colorFor(m.StderrTTY))
}

// isSet reports whether the option name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// readError says why the file given as name could not be read: what
// safefile.Read refused it for ("dist/a.agent.tgz is a named pipe, not a
// regular file"), or "reading NAME: " and the error.
func readError(name string, err error) string {
	if refused := (*safefile.ReadError)(nil); errors.As(err, &refused) {
		return name + " " + refused.Reason
	}
	return "reading " + name + ": " + err.Error()
}
