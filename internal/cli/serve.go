package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/apparentlymart/go-textseg/v17/textseg"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/safefile"
	"github.com/agentform/agentform/internal/serve"
)

// ServeCommand is "agentform serve": run an artifact as an MCP server.
type ServeCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *ServeCommand) Synopsis() string {
	return "Serve an agent artifact as a capability-enforcing MCP server"
}

// Help implements cli.Command.
func (c *ServeCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] serve ARTIFACT [options]

  Runs dist/<agent>.agent.tgz as an MCP server that exposes exactly the
  tools the agent may call and enforces it on every call. The artifact is
  verified first; runtime() and secret() values come from the environment
  (every missing variable is listed in one error). Calls are recorded in
  .agentform/runtime.db (see agentform calls); arguments only as a digest.

  When the workspace's state records an agent's artifact at ARTIFACT, the
  file must be the one the last apply wrote. serve does not start when it
  cannot tell: the state is locked by an apply (waiting at its prompt, say)
  for longer than -lock-timeout, or cannot be read. A workspace with no
  state (an artifact served away from the workspace that built it) has
  nothing to compare with: the artifact's own checks apply.

  Over stdio (the default) the server speaks MCP on standard input and
  output and logs to standard error. When standard input ends it answers
  every request already read, then exits; SIGINT, SIGTERM or SIGHUP
  stops it at once, cancelling the calls in flight (a call whose tool
  does not stop is given up 5 s later). A second one does not wait: it
  kills every process serve started and exits at once with status 1.

  With -listen it serves streamable HTTP at http://ADDR/mcp; each HTTP
  session has its own state, and a client may send the header
  X-Agentform-Capability-Override: extend:a,b (or replace:, inherit) on its
  first request — honoured only for extensible agents.

Options:

  -listen=ADDR                 Serve streamable HTTP on ADDR instead of
                               stdio, e.g. 127.0.0.1:8765. A port alone
                               ("8765" or ":8765") listens on loopback only;
                               another address is allowed, with a warning.
  -capability-override=SPEC    extend:a,b, replace:a,b or inherit. Honoured
                               only for agents with capability_policy =
                               "extensible"; ignored with a warning otherwise.
  -session=ID                  stdio only: the session whose state calls
                               read and update (default: a new session).
                               1 to 128 ASCII letters, digits and
                               . _ - : @ / + =.
  -lock-timeout=D              How long to wait for an apply's lock on the
                               state before refusing to start (default 0s:
                               refuse at once).
  -no-color                    Disable colour in messages.
  -chdir=DIR                   Use DIR as the workspace (runtime database;
                               a relative ARTIFACT, a bash tool's
                               relative fs path and commands and an mcp
                               stdio server's relative command are found
                               there too).
`) + "\n"
}

// validPort reports whether port is a TCP port number: net.Listen would
// otherwise look a name up ("http") or refuse it with its own wording.
func validPort(port string) bool {
	if port == "" {
		return true // any free port, as 0
	}
	if len(port) > 5 || strings.Trim(port, "0123456789") != "" {
		return false
	}
	n := 0
	fmt.Sscan(port, &n)
	return n <= 65535
}

// listenError says why serve could not listen on addr in words, for the
// common causes, rather than with the system's error text.
func listenError(addr string, err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Sprintf("cannot listen on %s: another program is listening on that port; stop it, or pick another port with -listen", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Sprintf("cannot listen on %s: that is not an address of this machine; use one of its addresses, or 127.0.0.1", addr)
	case errors.Is(err, syscall.EACCES):
		return fmt.Sprintf("cannot listen on %s: this user may not listen on that port (ports below 1024 need privileges); pick a port above 1023", addr)
	}
	return err.Error()
}

// Run implements cli.Command.
func (c *ServeCommand) Run(args []string) int {
	fs := c.flagSet("serve")
	listen := fs.String("listen", "", "HTTP listen address")
	override := fs.String("capability-override", "", "capability override")
	session := fs.String("session", "", "stdio session id")
	lockTimeout := lockTimeoutVar(fs)
	operands, ok := c.parseInterspersed(fs, args, c.Help())
	if !ok {
		return ExitError
	}
	if len(operands) != 1 {
		fmt.Fprintf(c.Stderr, "Error: serve needs one artifact file.\n\n%s", c.Help())
		return ExitError
	}
	if *listen != "" && isSet(fs, "session") {
		fmt.Fprintf(c.Stderr, "Error: -session is for stdio; over HTTP every MCP session has its own state.\n")
		return ExitError
	}
	if isSet(fs, "session") && !c.checkSession(*session) {
		return ExitError
	}
	addr := *listen
	if addr != "" && !strings.Contains(addr, ":") {
		// A port alone.
		addr = ":" + addr
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	if addr != "" {
		if _, port, err := net.SplitHostPort(addr); err != nil || !validPort(port) {
			fmt.Fprintf(c.Stderr, "Error: -listen=%s is not a port or HOST:PORT address, like -listen=8765 or -listen=127.0.0.1:8765 (a port is a number from 0 to 65535).\n", *listen)
			return ExitError
		}
	}
	ctx, stop := c.interruptContext("Stopping the server")
	defer stop()
	srv, code := c.openServer(ctx, "serve", operands[0], *override, "", *lockTimeout)
	if srv == nil {
		return code
	}
	defer srv.Close()
	var err error
	if addr != "" {
		err = srv.ServeHTTP(ctx, addr, func(a net.Addr) {})
	} else {
		in := c.Stdin
		if in == nil {
			in = os.Stdin
		}
		err = srv.ServeStdio(ctx, in, c.Stdout, *session)
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", listenError(addr, err))
		return ExitError
	}
	return ExitOK
}

// notArtifact says that the file at path is not an artifact at all (a
// manifest, a saved plan), or "" when it is a gzip stream: artifact.Read's
// "corrupt artifact: not a gzip stream: gzip: invalid header" is for an
// artifact that broke.
func notArtifact(path string, data []byte) string {
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		return ""
	}
	return fmt.Sprintf("%s is not an agentform artifact: it is not a gzip archive (agentform apply writes artifacts to dist/<agent>.agent.tgz)", path)
}

// openServer opens the artifact for serving, printing startup errors.
// operation ("serve", "invoke") names the command; only is the tool invoke
// calls ("" for serve); lockTimeout is how long it waits for a writer's
// lock on the state (-lock-timeout).
func (m *Meta) openServer(ctx context.Context, operation, path, override, only string, lockTimeout time.Duration) (*serve.Server, int) {
	// What serve logs quotes upstream servers and agents (names,
	// versions, messages): it reaches the terminal as text, never as
	// control sequences.
	logf := func(format string, args ...any) {
		fmt.Fprintln(m.Stderr, render.Printable(fmt.Sprintf(format, args...)))
	}
	data, err := artifact.ReadFile(m.path(path))
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(m.Stderr, "Error: there is no artifact at %s.\n", m.path(path))
		return nil, ExitError
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "Error: cannot start: %s.\n", readError(path, err))
		return nil, ExitError
	}
	if msg := notArtifact(path, data); msg != "" {
		fmt.Fprintf(m.Stderr, "Error: cannot start: %s.\n", msg)
		return nil, ExitError
	}
	// The check against the state that verify makes, on the bytes served:
	// what serve cannot read it reports itself. Unlike verify, serve does
	// not run an artifact it could not compare: a state locked by an
	// apply (at its prompt, say) or unreadable is a refusal, not a
	// warning, or a repackaged artifact would run whenever it is.
	if arch, err := artifact.Read(bytes.NewReader(data)); err == nil {
		if agent, err := artifact.ParseAgent(arch.Files[artifact.AgentName]); err == nil {
			problems, _, err := m.appliedProblems(m.path(path), agent.Name, data, lockTimeout, operation)
			if err != nil {
				fmt.Fprintf(m.Stderr, "Error: cannot start %s: it was not compared with the artifact the last apply wrote, because the workspace's state cannot be read now.\n\n", path)
				m.showStateError(err)
				return nil, ExitError
			}
			if len(problems) > 0 {
				fmt.Fprintf(m.Stderr, "Error: cannot start %s:\n", path)
				for _, p := range problems {
					fmt.Fprintf(m.Stderr, "  - %s\n", p)
				}
				return nil, ExitError
			}
		}
	}
	// invoke makes one call: only the executor of its tool starts.
	srv, err := serve.OpenData(ctx, m.path(path), data, serve.Options{Dir: m.Dir, Lookup: os.LookupEnv, Override: override, Logf: logf, OnCall: operation == "invoke", Only: only})
	if err != nil {
		var missing *serve.MissingError
		var oe *serve.OpenError
		// An upstream server that fails to start is quoted (its standard
		// error): as text, like what serve logs.
		switch {
		case errors.As(err, &missing):
			them := "them"
			if len(missing.Vars) == 1 {
				them = "it"
			}
			fmt.Fprintf(m.Stderr, "Error: cannot start %s: %s.\n\nSet %s in the environment of agentform (secrets have no default in the artifact).\n", path, err, them)
		case errors.As(err, &oe):
			fmt.Fprintf(m.Stderr, "Error: cannot start %s:\n", path)
			for _, p := range oe.Problems {
				fmt.Fprintf(m.Stderr, "  - %s\n", render.Printable(p))
			}
		default:
			fmt.Fprintf(m.Stderr, "Error: cannot start %s: %s.\n", path, render.Printable(err.Error()))
		}
		return nil, ExitError
	}
	return srv, ExitOK
}

// InvokeCommand is "agentform invoke": run one tool call.
type InvokeCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *InvokeCommand) Synopsis() string {
	return "Call one tool of an agent artifact, with the same enforcement as serve"
}

// Help implements cli.Command.
func (c *InvokeCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] invoke ARTIFACT TOOL [options]

  Runs one call of TOOL from dist/<agent>.agent.tgz exactly as serve would:
  the artifact is verified (against the workspace's state too, as serve
  does), the agent must be allowed to call the tool, the arguments must
  match its schema, and the call is recorded. Prints the output, the
  session state after the call, and the call record (only the record and
  the reason for a blocked or skipped call, which ran nothing). Only the called
  tool's block starts: an mcp block's server is reached (and its tools
  checked against the lock) only to call one of its tools.

  Exit status: 0 when the call succeeded (or partially succeeded), 1 when
  it failed, was blocked or skipped, or could not start.

  SIGINT, SIGTERM or SIGHUP (Ctrl-C) cancels the call, which is recorded as
  failed; a second one does not wait for the tool to stop: it kills every
  process invoke started and exits at once with status 1. A tool that
  does not stop when the call is cancelled or its deadline passes is given
  up 5 s later.

Options:

  -args=JSON                   The arguments, a JSON object (default {}).
                               -args=@FILE reads them from a regular file
                               (relative to -chdir), -args=- from standard
                               input: at most 16 MiB, beyond the system's
                               limit on a command line.
  -session=ID                  The session whose state the call reads and
                               updates (default "default"): 1 to 128 ASCII
                               letters, digits and . _ - : @ / + =.
  -capability-override=SPEC    As for serve: extend:a,b, replace:a,b or
                               inherit, for extensible agents only.
  -timeout=DURATION            Stop the call after DURATION (default: as
                               serve does, 5m, and 30s for a javascript
                               tool).
  -lock-timeout=D              As for serve: how long to wait for an
                               apply's lock on the state (default 0s).
  -json                        Print {output, state, record} as JSON.
  -no-color                    Disable colour.
  -chdir=DIR                   Use DIR as the workspace.
`) + "\n"
}

// Run implements cli.Command.
func (c *InvokeCommand) Run(args []string) int {
	fs := c.flagSet("invoke")
	argsJSON := fs.String("args", "{}", "arguments")
	session := fs.String("session", "default", "session id")
	override := fs.String("capability-override", "", "capability override")
	timeout := fs.Duration("timeout", 0, "call timeout")
	lockTimeout := lockTimeoutVar(fs)
	asJSON := fs.Bool("json", false, "JSON output")
	operands, ok := c.parseInterspersed(fs, args, c.Help())
	if !ok {
		return ExitError
	}
	if len(operands) != 2 {
		fmt.Fprintf(c.Stderr, "Error: invoke needs an artifact file and a tool name.\n\n%s", c.Help())
		return ExitError
	}
	if !c.checkSession(*session) {
		return ExitError
	}
	callArgs, err := c.readArgs(*argsJSON)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: -args: %s.\n", err)
		return ExitError
	}
	if !json.Valid(callArgs) {
		fmt.Fprintf(c.Stderr, "Error: -args is not valid JSON; pass an object such as -args='{\"text\": \"hello\"}', -args=@FILE or -args=- (standard input).\n")
		return ExitError
	}
	if *timeout < 0 || isSet(fs, "timeout") && *timeout == 0 {
		fmt.Fprintf(c.Stderr, "Error: -timeout must be positive.\n")
		return ExitError
	}
	ctx, stop := c.interruptContext("Stopping the call")
	defer stop()
	srv, code := c.openServer(ctx, "invoke", operands[0], *override, operands[1], *lockTimeout)
	if srv == nil {
		return code
	}
	defer srv.Close()
	// Without -timeout the call gets serve's: 5 minutes, 30 s for a
	// javascript tool.
	callCtx := ctx
	if *timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	grant := srv.Grant()
	resp, err := srv.Call(callCtx, serve.Request{
		Tool: operands[1], Args: json.RawMessage(callArgs), Session: *session, Via: "invoke", Held: grant.Held, Override: grant.Override,
		Event: func(kind string, data any) {
			b, _ := json.Marshal(data)
			fmt.Fprintln(c.Stderr, render.Printable(fmt.Sprintf("[%s] %s", kind, b)))
		},
		Progress: func(progress, total float64, message string) {
			fmt.Fprintln(c.Stderr, render.Printable(fmt.Sprintf("[progress] %g %s", progress, message)))
		},
	})
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", render.Printable(err.Error()))
		return ExitError
	}
	if *asJSON {
		out, _ := json.MarshalIndent(struct {
			Output json.RawMessage `json:"output"`
			State  json.RawMessage `json:"state"`
			Record serve.Record    `json:"record"`
		}{resp.Output, resp.State, resp.Record}, "", "  ")
		fmt.Fprintln(c.Stdout, string(out))
	} else {
		// A tool's output and error may quote a remote server or agent:
		// shown as text, never as control sequences (-json prints them as
		// they are).
		//
		// A blocked or skipped call ran nothing: it has no output, and the
		// session's state is as it was; only the call and its error show.
		if resp.Status != serve.StatusBlocked && resp.Status != serve.StatusSkipped {
			fmt.Fprintf(c.Stdout, "Output:\n%s\n\nState (session %s):\n%s\n\n", printableText(indentJSON(resp.Output)), render.Printable(resp.Record.Session), render.Printable(indentJSON(resp.State)))
		}
		fmt.Fprintf(c.Stdout, "Call %s: %s in %.1f ms", resp.Record.ID, resp.Status, resp.Record.DurationMS)
		if resp.Record.PatchApplied {
			fmt.Fprint(c.Stdout, ", state updated")
		}
		fmt.Fprintln(c.Stdout)
		if resp.Error != "" {
			fmt.Fprintf(c.Stderr, "Error: %s.\n", printableText(strings.TrimSuffix(resp.Error, ".")))
		}
	}
	switch resp.Status {
	case serve.StatusSuccess, serve.StatusPartialSuccess:
		return ExitOK
	}
	return ExitError
}

// maxArgs bounds the arguments invoke reads from a file or standard input.
const maxArgs = 16 << 20

// readArgs returns the arguments -args gives: the JSON itself, the
// content of a regular file for @FILE (relative to the workspace), or
// standard input for "-", at most maxArgs bytes.
func (m *Meta) readArgs(value string) ([]byte, error) {
	switch {
	case value == "-":
		in := m.Stdin
		if in == nil {
			in = os.Stdin
		}
		b, err := io.ReadAll(io.LimitReader(in, maxArgs+1))
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		if len(b) > maxArgs {
			return nil, fmt.Errorf("standard input holds more than the %d bytes allowed", maxArgs)
		}
		return b, nil
	case strings.HasPrefix(value, "@"):
		name := strings.TrimPrefix(value, "@")
		if name == "" {
			return nil, errors.New("@ needs a file name, as in -args=@args.json")
		}
		b, err := safefile.Read(m.path(name), maxArgs)
		if err != nil {
			return nil, errors.New(readError(name, err))
		}
		return b, nil
	}
	return []byte(value), nil
}

// checkSession reports whether id, given with -session, can name a
// session, and says why not.
func (m *Meta) checkSession(id string) bool {
	if err := serve.CheckSessionID(id); err != nil {
		fmt.Fprintf(m.Stderr, "Error: -session: %s.\n", err)
		return false
	}
	return true
}

// printableText is a tool's text output as render.Printable shows it, with
// CRLF line ends read as line ends: only a carriage return that is not
// part of one is shown escaped (\r), since on a terminal it would
// overwrite the line.
func printableText(s string) string {
	return render.Printable(strings.ReplaceAll(s, "\r\n", "\n"))
}

// indentJSON indents a JSON value; a string prints as itself. Numbers
// print as the tool wrote them (an integer beyond 2^53 is not rounded to
// a float64), and <, > and & as themselves, not as \u003c and the like.
func indentJSON(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// CallsCommand is "agentform calls": list recorded calls.
type CallsCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *CallsCommand) Synopsis() string { return "List the tool calls recorded by serve and invoke" }

// Help implements cli.Command.
func (c *CallsCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] calls [options]

  Lists the calls recorded in .agentform/runtime.db, oldest first: time,
  agent, tool, session, status (success, partial_success, error, blocked,
  skipped), duration, whether a state update was applied, and why a call
  failed. Arguments are recorded only as a digest, never raw, but a
  digest confirms a guess of them: runtime.db is as sensitive as the
  arguments. The table cuts long cells (80 characters, an error 120);
  -json shows them whole.

  The database keeps every record until it is pruned: -prune=AGE removes
  the records of calls older than AGE (720h is 30 days), and the state of
  each session with no call since (its next call starts from an empty
  state), and lists nothing. The file does not shrink (later records
  reuse its space).

Options:

  -json         Print the records as a JSON array.
  -last=N       Only the last N calls (default: all).
  -prune=AGE    Remove the records of calls that started more than AGE
                ago (a duration such as 720h), and the states of sessions
                with no later call, then print how many.
  -no-color     Disable colour.
  -chdir=DIR    Use DIR as the workspace.
`) + "\n"
}

// Run implements cli.Command.
func (c *CallsCommand) Run(args []string) int {
	fs := c.flagSet("calls")
	asJSON := fs.Bool("json", false, "JSON output")
	last := fs.Int("last", 0, "last N calls")
	prune := fs.Duration("prune", 0, "remove records older than")
	if !c.parseFlags(fs, args, c.Help()) {
		return ExitError
	}
	if isSet(fs, "prune") && *prune <= 0 {
		fmt.Fprintln(c.Stderr, "Error: -prune takes a positive age, such as -prune=720h (30 days).")
		return ExitError
	}
	if isSet(fs, "prune") && (isSet(fs, "json") || isSet(fs, "last")) {
		fmt.Fprintf(c.Stderr, "Error: -prune lists nothing: it cannot be given with -json or -last.\n")
		return ExitError
	}
	if *last < 0 {
		fmt.Fprintf(c.Stderr, "Error: -last must be 0 (every call) or more, not %d.\n", *last)
		return ExitError
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(c.Stderr, "Error: calls takes no arguments.\n\n%s", c.Help())
		return ExitError
	}
	db, err := serve.OpenRuntimeDB(c.Dir)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		return ExitError
	}
	if *prune > 0 {
		before := time.Now().Add(-*prune)
		n, err := db.Prune(before)
		if err != nil {
			fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
			return ExitError
		}
		fmt.Fprintf(c.Stdout, "Removed %d %s from before %s, and the state of %d %s with no call since.\n",
			n.Calls, plural(n.Calls, "call record", "call records"), before.UTC().Format(time.RFC3339),
			n.Sessions, plural(n.Sessions, "session", "sessions"))
		return ExitOK
	}
	records, err := db.Calls(*last)
	if err != nil && !errors.Is(err, serve.ErrNoRuntimeDB) {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		return ExitError
	}
	if *asJSON {
		if records == nil {
			records = []serve.Record{}
		}
		b, _ := json.MarshalIndent(records, "", "  ")
		fmt.Fprintln(c.Stdout, string(b))
		return ExitOK
	}
	if len(records) == 0 {
		fmt.Fprintln(c.Stdout, "No calls recorded.")
		return ExitOK
	}
	w := tabwriter.NewWriter(c.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "TIME\tAGENT\tTOOL\tSESSION\tVIA\tOVERRIDE\tSTATUS\tDURATION\tSTATE\tERROR")
	for _, r := range records {
		patch := "-"
		if r.PatchApplied {
			patch = "updated"
		}
		// A call the matrix denies succeeds in a session whose override
		// widened the agent's tags: without this column the table shows
		// it as any other success.
		override := "-"
		if r.CapabilityOverride != "" {
			override = shortCell(r.CapabilityOverride, nameWidth)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f ms\t%s\t%s\n", r.Time.Format(time.RFC3339), shortCell(r.Agent, nameWidth), shortCell(r.Tool, nameWidth), shortCell(r.Session, nameWidth), shortCell(r.Via, nameWidth), override, shortCell(r.Status, nameWidth), r.DurationMS, patch, shortCell(r.Error, errorWidth))
	}
	w.Flush()
	return ExitOK
}

// The widths of the calls table's cells: text/tabwriter pads every row to
// the widest cell of its column, so one long value (a tool name a client
// made up, an old record's session id) would widen every row.
const (
	nameWidth  = 80
	errorWidth = 120
)

// shortCell shortens s to one printable cell of at most width characters
// (runes, as text/tabwriter counts them) for the table (an error may quote
// a remote server). A shortened cell ends at a whole character as a
// reader sees it, a grapheme cluster of s: never inside an escape
// sequence cell writes for one (\x1b, \u202e), nor between a letter and
// the accent that combines with it.
func shortCell(s string, width int) string {
	line := cell(s)
	if utf8.RuneCountInString(line) <= width {
		return line
	}
	var b strings.Builder
	n := 0
	for rest := []byte(s); len(rest) > 0; {
		size, _, err := textseg.ScanGraphemeClusters(rest, true)
		if err != nil || size <= 0 {
			_, size = utf8.DecodeRune(rest)
		}
		c := cell(string(rest[:size]))
		rest = rest[size:]
		k := utf8.RuneCountInString(c)
		if n+k > width-3 {
			break
		}
		b.WriteString(c)
		n += k
	}
	return b.String() + "..."
}

// cell is s as one printable table cell: control characters escaped
// (printableText: a CRLF is a line end), and line ends and tabs as
// spaces.
func cell(s string) string {
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(printableText(s))
}
