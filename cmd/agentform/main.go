// Command agentform is plan / apply for AI agents. It is a thin wrapper over
// internal/cli.
package main

import (
	"os"

	"github.com/agentform/agentform/internal/cli"
	// Collect garbage at 4× the live heap under a 256 MiB soft limit while
	// the heap is small, Go's defaults once it is not (internal/memtune),
	// from package initialisation on; GOGC and GOMEMLIMIT in the
	// environment win.
	_ "github.com/agentform/agentform/internal/memtune/early"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], cli.Streams{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		StdoutTTY: cli.IsTerminal(os.Stdout),
		StderrTTY: cli.IsTerminal(os.Stderr),
	}))
}
