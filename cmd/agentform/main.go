// Command agentform is plan / apply for AI agents. It is a thin wrapper over
// internal/cli.
package main

import (
	"os"

	"github.com/agentform/agentform/internal/cli"
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
