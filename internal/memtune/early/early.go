// Package early applies internal/memtune's collector settings while the
// program's packages are still being initialised: importing it for its
// side effect is all it takes.
//
// Go initialises a package as soon as every package it imports is
// initialised, taking the packages in the order of their import paths (the
// language specification, "Package initialization"). This one needs only
// memtune and a few standard packages, so it runs early, before the
// libraries whose initialisation allocates the most and which import much
// more (santhosh-tekuri/jsonschema compiles every draft's metaschema, about
// 1.7 MB): with Go's default settings the first collection came in the
// middle of that, on every command, and memtune.Start called from main came
// too late to prevent it. internal/cli's TestE2ECollectorSetBeforeHeavyInit
// checks the order in the built binary.
package early

import "github.com/agentform/agentform/internal/memtune"

func init() { memtune.Start() }
