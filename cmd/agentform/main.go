// Command agentform is plan / apply for AI agents. It is a thin wrapper over
// internal/cli.
package main

import (
	"os"
	"runtime/debug"

	"github.com/agentform/agentform/internal/cli"
)

func main() {
	// agentform is a short-lived process that allocates most of what it
	// ever holds up front (the manifest, bundles, the matrix): collecting
	// at 4× the live heap instead of 2× halves the time spent in the
	// garbage collector for a few more MiB. GOGC in the environment wins.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	os.Exit(cli.Run(os.Args[1:], cli.Streams{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		StdoutTTY: cli.IsTerminal(os.Stdout),
		StderrTTY: cli.IsTerminal(os.Stderr),
	}))
}
