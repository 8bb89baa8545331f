// Package bench measures agentform against its peers with real processes:
// agentform plan and apply against terraform plan and apply of the same
// data as terraform_data resources, and agentform's javascript bundling
// against one esbuild build of the same entry points (the bundling floor).
//
// Every number is the median of several runs of a child process: its wall
// time from start to exit and its peak resident set size as the kernel
// reports it on exit (rusage ru_maxrss). Nothing is timed in-process, so
// agentform and its peers pay the same process start-up.
//
// Run generates every workspace itself (GenerateBash, GenerateJavaScript,
// GenerateJavaScriptDeps, GenerateTerraform), builds agentform from the module being measured, and
// checks each child's output for the outcome the scenario must have (a
// no-op plan that plans changes is an error, not a fast run).
package bench
