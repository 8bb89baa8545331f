package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/internal/version"
	"github.com/agentform/agentform/planner"
)

// openState opens the workspace's state database. A read-only open of a
// workspace without state returns nil and no error.
func (m *Meta) openState(readOnly bool, timeout time.Duration, operation string) (*state.DB, error) {
	db, err := state.Open(m.Dir, state.Options{ReadOnly: readOnly, LockTimeout: timeout, Operation: operation, Version: version.Version})
	if readOnly && errors.Is(err, state.ErrNoState) {
		return nil, nil
	}
	return db, err
}

// showStateError prints a state error; a lock held by another process is
// reported the way Terraform reports it.
func (m *Meta) showStateError(err error) {
	var le *state.LockError
	if errors.As(err, &le) {
		fmt.Fprintf(m.Stderr, "Error: Error acquiring the state lock\n\n%s\n", err)
		if le.Info != nil {
			fmt.Fprintf(m.Stderr, "\nLock Info:\n  ID:        %s\n  Operation: %s\n  Who:       %s\n  PID:       %d\n  Version:   %s\n  Created:   %s\n",
				le.Info.ID, le.Info.Operation, le.Info.Who, le.Info.PID, le.Info.Version, le.Info.Created.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(m.Stderr, "\nagentform acquires a state lock to protect the state from being written by\nmultiple users at the same time. Wait for the other operation to finish, or\nretry with a longer -lock-timeout (for example -lock-timeout=30s).\n")
		return
	}
	d := stateDiagnostic(err)
	fmt.Fprintf(m.Stderr, "Error: %s\n\n%s\n", d.Summary, d.Detail)
}

// stateDiagnostic describes a state database that cannot be opened or
// read, with what to do about it.
func stateDiagnostic(err error) *hcl.Diagnostic {
	d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read the state", Detail: capitalize(err.Error()) + "."}
	var le *state.LockError
	switch {
	case errors.As(err, &le):
		d.Summary = "Error acquiring the state lock"
		d.Detail += " Wait for the other operation to finish, or retry with a longer -lock-timeout (for example -lock-timeout=30s)."
	case errors.Is(err, fs.ErrPermission):
		// Often a write: creating .agentform, or opening state.db to
		// record an apply.
		d.Summary = "Cannot open the state"
		d.Detail += " Check the permissions and owner of the workspace directory, " + state.DirName + "/ and " + filepath.Join(state.DirName, state.FileName) + ": every command reads them, and apply and state rm also create and write them."
	case errors.Is(err, state.ErrCorrupt):
		d.Detail += " Restore " + filepath.Join(state.DirName, state.FileName) + " from a backup, or move it aside: the next plan then starts from no state, and apply rebuilds every artifact."
	}
	return d
}

// StateCommand is "agentform state": inspect and edit the state database.
type StateCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *StateCommand) Synopsis() string { return "Inspect or edit the state database" }

// Help implements cli.Command.
func (c *StateCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] state <subcommand> [options] [ADDRESS]

  Reads or edits .agentform/state.db, the record of what the last apply
  produced.

Subcommands:

  list          List every address in state.
  show ADDRESS  Show one address as applied (-json for JSON).
  rm ADDRESS    Forget an address: the next plan creates it again. Nothing
                on disk besides the state changes.

  An ADDRESS is agent.NAME, tool.NAME or skill.NAME.

Options:

  -json              show only: JSON output. The other subcommands
                     refuse it.
  -lock-timeout=D    How long to wait for the state lock (default 0s).
  -no-color          Disable colour.
  -chdir=DIR         Use DIR as the workspace.
`) + "\n"
}

// Run implements cli.Command.
func (c *StateCommand) Run(args []string) int {
	// Options may come before the subcommand too (state -chdir=DIR list),
	// as every command takes them among its options: the subcommand is
	// the first argument that is not an option.
	at := slices.IndexFunc(args, func(a string) bool { return !strings.HasPrefix(a, "-") })
	if at > 0 && !slices.Contains([]string{"list", "show", "rm"}, args[at]) {
		// An option's value (-lock-timeout 5s), or a mistyped subcommand
		// after options: the first subcommand name given, if any.
		if i := slices.IndexFunc(args, func(a string) bool { return a == "list" || a == "show" || a == "rm" }); i >= 0 {
			at = i
		}
	}
	if at < 0 {
		fmt.Fprintf(c.Stderr, "Error: state needs a subcommand: list, show or rm.\n\n%s", c.Help())
		return ExitError
	}
	sub := args[at]
	if sub != "list" && sub != "show" && sub != "rm" {
		fmt.Fprintf(c.Stderr, "Error: unknown state subcommand %q: use list, show or rm.\n\n%s", render.PrintableName(sub), c.Help())
		return ExitError
	}
	args = append(append([]string{sub}, args[:at]...), args[at+1:]...)
	// Each subcommand takes only its own options: -json is show's.
	fs := c.flagSet("state " + sub)
	timeout := lockTimeoutVar(fs)
	var jsonOut *bool
	if sub == "show" {
		jsonOut = fs.Bool("json", false, "JSON output")
	}
	// Options may follow the address: state show ADDRESS -json.
	operands, ok := c.parseInterspersed(fs, args[1:], c.Help())
	if !ok {
		return ExitError
	}
	if sub == "list" {
		if len(operands) != 0 {
			fmt.Fprintf(c.Stderr, "Error: state list takes no address.\n\n%s", c.Help())
			return ExitError
		}
		return c.list(*timeout)
	}
	if len(operands) != 1 {
		fmt.Fprintf(c.Stderr, "Error: state %s needs one address, like tool.adder.\n\n%s", sub, c.Help())
		return ExitError
	}
	if err := checkStateAddress(operands[0]); err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		return ExitError
	}
	if sub == "show" {
		return c.show(operands[0], *jsonOut, *timeout)
	}
	return c.rm(operands[0], *timeout)
}

// stateTypes are the types of the addresses in state (DESIGN §9).
var stateTypes = []string{"agent", "tool", "skill"}

// checkStateAddress says why address is not one a state records:
// TYPE.NAME with TYPE agent, tool or skill and a name. The message shows
// the address escaped, as it came from the command line.
func checkStateAddress(address string) error {
	typ, name, ok := strings.Cut(address, ".")
	if !ok || name == "" || !slices.Contains(stateTypes, typ) {
		return fmt.Errorf("\"%s\" is not a state address: an address is agent.NAME, tool.NAME or skill.NAME, as agentform state list prints them", render.PrintableName(address))
	}
	return nil
}

func (c *StateCommand) list(timeout time.Duration) int {
	db, err := c.openState(true, timeout, "state list")
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	if db == nil {
		fmt.Fprintln(c.Stderr, "No state: nothing has been applied in this workspace yet.")
		return ExitOK
	}
	defer db.Close()
	resources, err := db.Resources()
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	for _, r := range resources {
		fmt.Fprintln(c.Stdout, render.PrintableName(r.Address))
	}
	return ExitOK
}

func (c *StateCommand) show(address string, jsonOut bool, timeout time.Duration) int {
	db, err := c.openState(true, timeout, "state show")
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	if db == nil {
		fmt.Fprintf(c.Stderr, "Error: no state: %s has not been applied.\n", render.PrintableName(address))
		return ExitError
	}
	defer db.Close()
	r, ok, err := db.Resource(address)
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	if !ok {
		fmt.Fprintf(c.Stderr, "Error: %s is not in state; agentform state list shows what is.\n", render.PrintableName(address))
		return ExitError
	}
	// As plan shows them: a config credential an earlier agentform stored
	// in the clear as its digest.
	r.Attributes = planner.StoredAttributes(r.Type, r.Attributes)
	if jsonOut {
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(r)
		return ExitOK
	}
	fmt.Fprintf(c.Stdout, "# %s\n%s %q {\n", render.PrintableName(r.Address), render.PrintableName(r.Type), r.Name)
	keys := make([]string, 0, len(r.Attributes))
	width := len("fingerprint")
	for k := range r.Attributes {
		if k == "kind" {
			continue
		}
		keys = append(keys, k)
		width = max(width, len(k))
	}
	sort.Strings(keys)
	fmt.Fprintf(c.Stdout, "  %-*s = %q\n  %-*s = %q\n", width, "kind", r.Kind, width, "fingerprint", r.Fingerprint)
	for _, k := range keys {
		fmt.Fprintf(c.Stdout, "  %-*s = %q\n", width, k, r.Attributes[k])
	}
	if r.Artifact != nil {
		fmt.Fprintf(c.Stdout, "  %-*s = { path = %q, sha256 = %q, size = %d }\n", width, "artifact", r.Artifact.Path, r.Artifact.SHA256, r.Artifact.Size)
	}
	fmt.Fprintln(c.Stdout, "}")
	return ExitOK
}

func (c *StateCommand) rm(address string, timeout time.Duration) int {
	// A workspace without state has nothing to remove, and the writer's
	// open would create the database.
	if _, err := os.Stat(filepath.Join(c.Dir, state.DirName, state.FileName)); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(c.Stderr, "Error: %s is not in state: nothing has been applied in this workspace yet.\n", render.PrintableName(address))
		return ExitError
	}
	db, err := c.openState(false, timeout, "state rm")
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	defer db.Close()
	meta, err := db.Remove(address)
	if errors.Is(err, state.ErrNoResource) {
		fmt.Fprintf(c.Stderr, "Error: %s is not in state; agentform state list shows what is.\n", render.PrintableName(address))
		return ExitError
	}
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	fmt.Fprintf(c.Stdout, "Removed %s from state (serial %d). The next plan creates it again.\n", render.PrintableName(address), meta.Serial)
	return ExitOK
}

// capitalize upper-cases the first letter of s, for an error's text used
// as a sentence.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
