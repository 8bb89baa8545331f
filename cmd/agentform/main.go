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
	// at 4× the live heap instead of 2× cuts the time spent in the garbage
	// collector by a quarter. The soft memory limit makes the collector
	// work harder again as the heap nears 256 MiB, so a 10,000-tool plan
	// stays as small as before. GOGC and GOMEMLIMIT in the environment win.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(256 << 20)
	}
	os.Exit(cli.Run(os.Args[1:], cli.Streams{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		StdoutTTY: cli.IsTerminal(os.Stdout),
		StderrTTY: cli.IsTerminal(os.Stderr),
	}))
}
