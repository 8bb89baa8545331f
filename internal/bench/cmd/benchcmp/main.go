// Command benchcmp measures agentform against terraform and esbuild with
// real processes and prints the comparison table (see internal/bench).
//
//	go run ./internal/bench/cmd/benchcmp [-tools N] [-agents M] [-js J]
//	    [-dep-js D] [-dep-modules K] [-runs R] [-floor-runs F] [-scale]
//	    [-skip-terraform] [-terraform PATH] [-workdir DIR] [-json FILE]
//	    [-quiet]
//
// It builds agentform from the module it is run in, so run it from the
// repository. Progress goes to standard error, the table to standard
// output. Every count must be at least 1, except -dep-js 0, which leaves
// out the workspace of tools with an npm dependency. The exit status is 2
// for bad flags, 1 when a measurement fails; a target that is missed is
// reported in the table, not in the exit status.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentform/agentform/internal/bench"
)

func main() {
	var cfg bench.Config
	flag.IntVar(&cfg.Tools, "tools", bench.DefaultTools, "bash tools in the workspace (and terraform_data resources)")
	flag.IntVar(&cfg.Agents, "agents", bench.DefaultAgents, "agents in the workspaces")
	flag.IntVar(&cfg.JS, "js", bench.DefaultJS, "javascript tools, each its own TypeScript package")
	flag.IntVar(&cfg.DepJS, "dep-js", bench.DefaultDepJS, "javascript tools with an npm dependency (generated, no registry needed); 0 leaves them out")
	flag.IntVar(&cfg.DepModules, "dep-modules", bench.DefaultDepModules, "modules in each of those tools' dependency")
	flag.IntVar(&cfg.Runs, "runs", bench.DefaultRuns, "runs of each scenario; the table shows medians")
	flag.IntVar(&cfg.FloorRuns, "floor-runs", bench.DefaultFloorRuns, "runs of each javascript apply and of its esbuild build, in turns; the table shows medians")
	flag.BoolVar(&cfg.Scale, "scale", false, "also plan 100, 1000 and 10000 tools × 10 and 1000 agents (agentform only)")
	flag.BoolVar(&cfg.SkipTerraform, "skip-terraform", false, "do not run terraform even when it is on PATH")
	flag.StringVar(&cfg.Terraform, "terraform", "", "terraform binary (default: terraform on PATH)")
	flag.StringVar(&cfg.WorkDir, "workdir", "", "keep the generated workspaces in this directory (default: a temporary directory, removed)")
	jsonOut := flag.String("json", "", "also write the report as JSON to this file")
	quiet := flag.Bool("quiet", false, "no progress on standard error")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "benchcmp takes no arguments, got %q\n", flag.Args())
		os.Exit(2)
	}
	// bench.Config reads 0 as "the default"; here the defaults are the
	// flags' own, so a 0 on the command line is a mistake, said as one.
	cfg.SkipDeps = cfg.DepJS == 0
	for _, f := range []struct {
		name string
		v    int
	}{{"tools", cfg.Tools}, {"agents", cfg.Agents}, {"js", cfg.JS}, {"dep-js", cfg.DepJS}, {"dep-modules", cfg.DepModules}, {"runs", cfg.Runs}, {"floor-runs", cfg.FloorRuns}} {
		if f.v < 1 && !(cfg.SkipDeps && f.name == "dep-js") {
			fmt.Fprintf(os.Stderr, "benchcmp: -%s must be at least 1, got %d", f.name, f.v)
			if f.name == "dep-js" {
				fmt.Fprint(os.Stderr, " (0 leaves out the tools with an npm dependency)")
			}
			fmt.Fprintln(os.Stderr)
			os.Exit(2)
		}
	}
	if !*quiet {
		cfg.Progress = os.Stderr
	}

	// Interrupted or terminated, Run stops its child and removes its
	// temporary directory before benchcmp exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	report, err := bench.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchcmp: %s\n", err)
		if errors.Is(err, bench.ErrInvalidConfig) {
			os.Exit(2)
		}
		os.Exit(1)
	}
	report.Command = strings.Join(append([]string{"benchcmp"}, os.Args[1:]...), " ")
	if err := report.WriteTable(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "benchcmp: writing the table: %s\n", err)
		os.Exit(1)
	}
	if *jsonOut != "" {
		if err := report.WriteJSON(*jsonOut); err != nil {
			fmt.Fprintf(os.Stderr, "benchcmp: %s\n", err)
			os.Exit(1)
		}
	}
}
