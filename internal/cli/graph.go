package cli

import (
	"fmt"
	"strings"

	"github.com/agentform/agentform/internal/render"
)

// GraphCommand is "agentform graph": the matrix as Graphviz dot.
type GraphCommand struct{ *Meta }

// Synopsis implements cli.Command.
func (c *GraphCommand) Synopsis() string { return "Draw agents and tools as a Graphviz graph" }

// Help implements cli.Command.
func (c *GraphCommand) Help() string {
	return strings.TrimSpace(`
Usage: agentform [-chdir=DIR] graph [options] | dot -Tsvg > agents.svg

  Prints the capability matrix as a Graphviz dot graph: agents → tools,
  allowed edges solid, denied edges dashed, edges reachable by a session
  override (extensible agents) dotted, and A2A delegation to workspace
  agents (target_agent) bold. Warnings and errors go to standard error;
  when the plan has errors the graph is still drawn, and graph exits 1,
  as plan does.

Options:

  -denied=false      Leave denied edges out (large workspaces).
  -refresh=false     Contact no MCP server or A2A agent.
  -resolve-timeout=D Timeout for each remote operation (default 10s).
  -lockfile=readonly Also treat a lockfile that plan -lockfile=readonly
                     refuses as an error (graph never writes the
                     lockfile).
  -lock-timeout=D    How long to wait for the state lock (default 0s).
  -no-color          Accepted, as by every command; dot has no colour
                     codes.
  -chdir=DIR         Use DIR as the workspace.
`) + "\n"
}

// Run implements cli.Command.
func (c *GraphCommand) Run(args []string) int {
	fs := c.flagSet("graph")
	denied := fs.Bool("denied", true, "draw denied edges")
	lockTimeout := lockTimeoutVar(fs)
	var rf resolveFlags
	c.addResolveFlags(fs, &rf)
	if !c.parseFlags(fs, args, c.Help()) {
		return ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "Error: graph takes no arguments; use -chdir=DIR to pick the workspace.\n\n%s", c.Help())
		return ExitError
	}
	if err := rf.validate(); err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s.\n", err)
		return ExitError
	}
	ctx, stop := c.interruptContext("Stopping the plan")
	defer stop()
	cfg, plan, _, diags, err := c.planForReport(ctx, rf, *lockTimeout, "graph")
	if err != nil {
		c.showStateError(err)
		return ExitError
	}
	if plan == nil {
		c.showManifestDiagnostics(diags, cfg)
		return ExitError
	}
	// Warnings too: an unresolved block is drawn as one node, and the
	// warning says why.
	c.showManifestDiagnostics(diags, cfg)
	if diags.HasErrors() {
		fmt.Fprintln(c.Stderr, "The graph below is drawn from a plan with errors.")
	}
	render.Graph(c.Stdout, plan, *denied)
	if diags.HasErrors() {
		return ExitError
	}
	return ExitOK
}
