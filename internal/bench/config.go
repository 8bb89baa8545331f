package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Defaults of Config, the sizes issue 8 sets its targets at.
const (
	DefaultTools  = 1000
	DefaultAgents = 10
	DefaultJS     = 200
	DefaultRuns   = 3

	// DefaultFloorRuns is how many times each javascript apply runs in
	// turns with its esbuild floor. A pair takes under a second, and on a
	// shared 2-core machine single pairs of the same binaries have ranged
	// from 0.9× to 1.9× of the floor's time (docs/performance.md).
	DefaultFloorRuns = 11

	// DefaultDepJS and DefaultDepModules size the workspace of javascript
	// tools with an npm dependency (GenerateJavaScriptDeps), which no
	// target covers: tools, and modules in each tool's dependency.
	DefaultDepJS      = 50
	DefaultDepModules = 100
)

// DefaultScaleTools and DefaultScaleAgents are the plan sizes measured
// with Config.Scale: every tool count with every agent count.
var (
	DefaultScaleTools  = []int{100, 1000, 10000}
	DefaultScaleAgents = []int{10, 1000}
)

// Config says what Run measures. The zero value of a size field means its
// default; Normalize fills them in.
type Config struct {
	// Module is the root of the agentform module to build and measure;
	// empty means the nearest directory from the working directory up whose
	// go.mod declares modulePath.
	Module string

	// Tools and Agents size the bash workspace (and the Terraform
	// configuration, which has one terraform_data per tool).
	Tools, Agents int

	// JS is the number of javascript tools, each its own TypeScript
	// package, in the javascript workspace (which has Agents agents).
	JS int

	// DepJS is the number of javascript tools, each with an npm
	// dependency of DepModules modules, in the dependency workspace.
	DepJS, DepModules int

	// SkipDeps leaves out the dependency workspace and its two rows;
	// DepJS and DepModules are then ignored (and reported as 0).
	SkipDeps bool

	// Runs is how many times each scenario runs; the report keeps medians.
	Runs int

	// FloorRuns is how many times each javascript apply and its esbuild
	// floor run, in turns; it replaces Runs for those two pairs.
	FloorRuns int

	// Scale adds plans of every ScaleTools × ScaleAgents size, agentform
	// only, with the summarised matrix.
	Scale bool

	// ScaleTools and ScaleAgents override DefaultScaleTools and
	// DefaultScaleAgents.
	ScaleTools, ScaleAgents []int

	// SkipTerraform leaves terraform out even when it is on PATH; its rows
	// then have no peer.
	SkipTerraform bool

	// Terraform is the terraform binary; empty means "terraform" on PATH,
	// and none there means the terraform rows have no peer.
	Terraform string

	// WorkDir holds the generated workspaces and built binaries; empty
	// means a new temporary directory, removed when Run returns. It must
	// not exist or be empty: the harness numbers the directories it
	// generates from 1, and a workspace left by an earlier run would be
	// planned and applied again instead of fresh.
	WorkDir string

	// Progress receives one line per measured run; nil discards them.
	Progress io.Writer
}

// modulePath is the module Run builds agentform from.
const modulePath = "github.com/agentform/agentform"

// Normalize fills in defaults and checks every size, returning an error
// wrapping ErrInvalidConfig for a negative size or run count. It makes
// WorkDir absolute: the harness runs its children in directories of their
// own.
func (c Config) Normalize() (Config, error) {
	if c.SkipDeps {
		c.DepJS, c.DepModules = 0, 0
	}
	def := func(v *int, d int, name string) error {
		if *v == 0 {
			*v = d
		}
		if *v < 1 {
			return fmt.Errorf("%w: %s must be at least 1, got %d", ErrInvalidConfig, name, *v)
		}
		return nil
	}
	for _, f := range []struct {
		v    *int
		d    int
		name string
	}{{&c.Tools, DefaultTools, "tools"}, {&c.Agents, DefaultAgents, "agents"}, {&c.JS, DefaultJS, "js"},
		{&c.DepJS, DefaultDepJS, "dep-js"}, {&c.DepModules, DefaultDepModules, "dep-modules"}, {&c.Runs, DefaultRuns, "runs"},
		{&c.FloorRuns, DefaultFloorRuns, "floor-runs"}} {
		if c.SkipDeps && (f.v == &c.DepJS || f.v == &c.DepModules) {
			continue
		}
		if err := def(f.v, f.d, f.name); err != nil {
			return c, err
		}
	}
	if len(c.ScaleTools) == 0 {
		c.ScaleTools = DefaultScaleTools
	}
	if len(c.ScaleAgents) == 0 {
		c.ScaleAgents = DefaultScaleAgents
	}
	for _, n := range append(append([]int(nil), c.ScaleTools...), c.ScaleAgents...) {
		if n < 1 {
			return c, fmt.Errorf("%w: scale sizes must be at least 1, got %d", ErrInvalidConfig, n)
		}
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.WorkDir != "" {
		abs, err := filepath.Abs(c.WorkDir)
		if err != nil {
			return c, fmt.Errorf("%w: work directory %s: %v", ErrInvalidConfig, c.WorkDir, err)
		}
		c.WorkDir = abs
	}
	return c, nil
}

// findModule returns the nearest directory from dir up whose go.mod
// declares modulePath.
func findModule(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("finding the agentform module: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no go.mod declaring %s from the working directory up; pass the module root", ErrNoModule, modulePath)
		}
		dir = parent
	}
}
