package state

import "errors"

// These errors are returned by Open.
var (
	// ErrNoState is returned by a read-only Open of a workspace that has no
	// state database yet (no .agentform/state.db, or one a writer created but
	// never initialised). Callers treat it as an empty state.
	ErrNoState = errors.New("no state database")

	// ErrLocked is returned, wrapped in a *LockError, when Open cannot get the
	// lock within Options.LockTimeout because another process holds it: a
	// writer (for any Open) or a reader (for a writer's Open).
	ErrLocked = errors.New("state is locked")
)

// These errors are returned by Open and by every read.
var (
	// ErrCorrupt is returned when the database cannot be understood: the file
	// is not a bbolt database, its format_version is not FormatVersion, or a
	// record does not decode (the error names the bucket and key).
	ErrCorrupt = errors.New("state database is corrupt")
)

// These errors are returned by Commit and Remove.
var (
	// ErrReadOnly is returned by a write on a database opened with
	// Options.ReadOnly.
	ErrReadOnly = errors.New("state database is open read-only")

	// ErrInvalid is returned by Commit when a record cannot be stored: an
	// address that is not "<type>.<name>", a duplicate address, lock JSON that
	// does not parse, or an empty agent or tool name in the matrix. Nothing is
	// written.
	ErrInvalid = errors.New("invalid state record")

	// ErrNoResource is returned by Remove when the address is not in state.
	// Nothing is written.
	ErrNoResource = errors.New("no such resource in state")
)
