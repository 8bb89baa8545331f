// Package early applies internal/memtune's collector settings while the
// program's packages are still being initialised: importing it for its
// side effect is all it takes.
//
// Go initialises packages one at a time: at each step the first package,
// in the order of import paths, whose imports are all initialised (the
// language specification, "Package initialization"). This one imports only
// memtune and standard packages that are initialised early, so it runs
// before the libraries whose initialisation allocates the most, which wait
// for many more packages (santhosh-tekuri/jsonschema compiles every
// draft's metaschema, about 1.7 MB): with Go's default settings the first
// collection came in the middle of that, on most commands, and
// memtune.Start called from main came too late to prevent it. Nothing but
// today's dependencies makes the order so: internal/cli's
// TestE2ECollectorSetBeforeHeavyInit checks it in the built binary.
package early

import "github.com/agentform/agentform/internal/memtune"

func init() { memtune.Start() }
