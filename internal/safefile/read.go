package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular is wrapped by Read's error for a path that is not a
// regular file once symbolic links are followed: a directory, a named
// pipe, a device (a link to /dev/zero would otherwise be read until memory
// runs out, and a named pipe would block with no writer).
var ErrNotRegular = errors.New("not a regular file")

// readPrealloc bounds the memory Read reserves from a file's size before
// reading it; a larger file grows the buffer as it is read.
const readPrealloc = 64 << 20

// ErrTooLarge is wrapped by Read's error for a file larger than its limit.
var ErrTooLarge = errors.New("file too large")

// Read returns the content of the regular file at path, refusing anything
// else (ErrNotRegular) and a file of more than max bytes (ErrTooLarge),
// also one that grows past max while it is read. It never blocks on a
// named pipe: the file is opened non-blocking and checked before a byte
// is read. The error's text names path.
func Read(path string, max int64) ([]byte, error) {
	f, info, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.Size() > max {
		return nil, &ReadError{Path: path, Reason: fmt.Sprintf("is %d bytes, more than the %d allowed", info.Size(), max), Err: ErrTooLarge}
	}
	// What the size says, up to a point: a sparse file or one that
	// shrinks must not reserve memory it never fills.
	data := make([]byte, 0, min(info.Size()+1, readPrealloc))
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > max {
			return nil, &ReadError{Path: path, Reason: fmt.Sprintf("grew past the %d bytes allowed while it was read", max), Err: ErrTooLarge}
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// Open opens the regular file at path for reading, refusing anything else
// (ErrNotRegular) without blocking on a named pipe, for a caller that
// streams the file instead of reading it whole.
func Open(path string) (*os.File, error) {
	f, _, err := open(path)
	return f, err
}

func open(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, &ReadError{Path: path, Reason: "is " + fileType(info.Mode()) + ", not a regular file", Err: ErrNotRegular}
	}
	return f, info, nil
}

// ReadError is Read's refusal of a file: Path, then Reason ("is a named
// pipe, not a regular file"). It wraps ErrNotRegular or ErrTooLarge.
type ReadError struct {
	Path   string
	Reason string
	Err    error
}

func (e *ReadError) Error() string { return e.Path + " " + e.Reason }

func (e *ReadError) Unwrap() error { return e.Err }

// fileType names what a non-regular file is.
func fileType(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
