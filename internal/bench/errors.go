package bench

import "errors"

// These errors are returned by Run before anything is measured.
var (
	// ErrInvalidConfig is returned when a Config asks for fewer than one
	// tool, agent, javascript tool or run, or for a scale size below one,
	// or names a work directory that holds files or cannot be created, or
	// a terraform binary that cannot be found.
	ErrInvalidConfig = errors.New("invalid benchmark configuration")

	// ErrNoModule is returned when Config.Module is empty and no directory
	// from the working directory up holds the agentform go.mod.
	ErrNoModule = errors.New("agentform module not found")
)

// These errors are returned by Run while it measures.
var (
	// ErrChildFailed is returned when a measured or preparing child process
	// (agentform, terraform, the esbuild floor, go build) exits non-zero or
	// cannot start. The error carries the command and the start of its
	// standard error (where a panic or the first error is), or the end of
	// its standard output when it printed no error.
	ErrChildFailed = errors.New("child process failed")

	// ErrUnexpectedOutput is returned when a child succeeds but its output
	// lacks what the scenario must show: a cold plan that does not add every
	// resource, a no-op plan or apply that has changes, an apply that does
	// not complete. Timing such a run would measure the wrong work.
	ErrUnexpectedOutput = errors.New("unexpected child output")
)
