// Command benchcmp measures agentform against terraform and esbuild with
// real processes and prints the comparison table (see internal/bench).
//
//	go run ./internal/bench/cmd/benchcmp [-tools N] [-agents M] [-js J]
//	    [-dep-js D] [-dep-modules K] [-runs R] [-floor-runs F] [-scale]
//	    [-skip-terraform] [-json FILE]
//
// It builds agentform from the module it is run in, so run it from the
// repository. Progress goes to standard error, the table to standard
// output; the exit status is 1 when a measurement fails. A target that is
// missed is reported in the table, not in the exit status.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/agentform/agentform/internal/bench"
)

func main() {
	var cfg bench.Config
	flag.IntVar(&cfg.Tools, "tools", bench.DefaultTools, "bash tools in the workspace (and terraform_data resources)")
	flag.IntVar(&cfg.Agents, "agents", bench.DefaultAgents, "agents in the workspaces")
	flag.IntVar(&cfg.JS, "js", bench.DefaultJS, "javascript tools, each its own TypeScript package")
	flag.IntVar(&cfg.DepJS, "dep-js", bench.DefaultDepJS, "javascript tools with an npm dependency (generated, no registry needed)")
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
	if !*quiet {
		cfg.Progress = os.Stderr
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	report, err := bench.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchcmp: %s\n", err)
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
