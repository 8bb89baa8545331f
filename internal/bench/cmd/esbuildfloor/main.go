// Command esbuildfloor is the bundling floor the benchmark harness
// (internal/bench) compares agentform's javascript apply with: one esbuild
// build, through its Go API in this process, of every entry point given,
// bundled as ESM for the browser platform and written to -outdir.
//
//	esbuildfloor -outdir DIR ENTRY...
//
// It prints "built N entry points into M files in DIR in D", M counting
// the files esbuild output (not the entry points it was given), and exits
// 1 on any build error.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/evanw/esbuild/pkg/api"
)

func main() {
	outdir := flag.String("outdir", "", "output directory")
	flag.Parse()
	if *outdir == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: esbuildfloor -outdir DIR ENTRY...")
		os.Exit(2)
	}
	start := time.Now()
	res := api.Build(api.BuildOptions{
		EntryPoints: flag.Args(),
		Bundle:      true,
		Outdir:      *outdir,
		Format:      api.FormatESModule,
		Platform:    api.PlatformBrowser,
		Write:       true,
		LogLevel:    api.LogLevelSilent,
	})
	took := time.Since(start)
	if len(res.Errors) > 0 {
		for _, m := range api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage}) {
			fmt.Fprint(os.Stderr, m)
		}
		os.Exit(1)
	}
	fmt.Printf("built %d entry points into %d files in %s in %s\n", flag.NArg(), len(res.OutputFiles), *outdir, took)
}
