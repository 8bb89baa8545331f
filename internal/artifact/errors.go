package artifact

import "errors"

// Errors returned by Read. Build returns ErrUnsafePath, ErrDuplicate and
// ErrTooLarge for the same conditions in its input. Each is wrapped with
// the entry it concerns; test with errors.Is.
var (
	// ErrUnsafePath is returned when an entry's path is empty, absolute,
	// contains a ".." or "." element, an empty element, a backslash, a NUL
	// or another control character, is not valid UTF-8, is longer than
	// MaxPathLength bytes, or is not in clean form (path.Clean would
	// change it).
	ErrUnsafePath = errors.New("unsafe path")

	// ErrNotRegular is returned when an entry is anything but a regular
	// file: a directory, a symbolic or hard link, a device, a FIFO, a
	// sparse file.
	ErrNotRegular = errors.New("not a regular file")

	// ErrMetadata is returned when an entry's header says what Build
	// never writes: a mode other than 0644 or 0755 (setuid, setgid,
	// sticky, world-writable, ...), an owner other than uid and gid 0,
	// or a user or group name.
	ErrMetadata = errors.New("unexpected entry metadata")

	// ErrDuplicate is returned when two entries have the same path, or
	// paths that differ only in letter case or Unicode normalisation (one
	// file on a case-insensitive or normalising file system), when
	// one entry's path is a directory of another's ("a" and "a/b"), and,
	// from Build, when the input includes SHA256SUMS, which Build writes
	// itself.
	ErrDuplicate = errors.New("duplicate path")

	// ErrTooLarge is returned when an archive has more than MaxEntries
	// entries or its tar stream, decompressed, exceeds MaxBytes.
	ErrTooLarge = errors.New("artifact too large")

	// ErrCorrupt is returned when the input is not a well-formed gzip'd
	// tar: a bad gzip header or checksum, a truncated stream, a malformed
	// tar header, or non-zero data after the end of the tar stream.
	ErrCorrupt = errors.New("corrupt artifact")
)

// Errors returned by ParseAgent.
var (
	// ErrFormatVersion is returned when agent.json's format_version is
	// not FormatVersion.
	ErrFormatVersion = errors.New("unsupported agent.json format_version")
)
