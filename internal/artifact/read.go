package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentform/agentform/internal/pathfold"
	"github.com/agentform/agentform/internal/safefile"
)

// Limits Read enforces and Build respects, so that every artifact Build
// returns can be read back.
const (
	// MaxEntries is the most entries an artifact may hold, SHA256SUMS
	// included.
	MaxEntries = 100_000
	// MaxBytes is the most bytes an artifact's tar stream may decompress
	// to, headers and padding included: 1 GiB.
	MaxBytes = 1 << 30
	// MaxFileBytes is the largest artifact file ReadFile reads: room for
	// a gzip stream of MaxBytes stored without compression.
	MaxFileBytes = MaxBytes + MaxBytes/64
)

// ReadFile returns the bytes of the artifact file at path, refusing what
// is not a regular file (a named pipe, a link to a device) or is larger
// than MaxFileBytes (safefile.Read).
func ReadFile(path string) ([]byte, error) {
	return safefile.Read(path, MaxFileBytes)
}

// Archive is an artifact read into memory.
type Archive struct {
	// Files holds every entry's content by path, SHA256SUMS included.
	Files map[string][]byte
	// Sums holds the well-formed lines of SHA256SUMS: lowercase hex sha256
	// by path. It is empty when there is no SHA256SUMS. Verify reads the
	// SHA256SUMS entry itself, so that it can report malformed lines.
	Sums map[string]string
	// Executable holds the paths of entries with an execute bit set.
	Executable map[string]bool
}

// Paths returns the archive's entry paths, sorted.
func (a *Archive) Paths() []string {
	paths := make([]string, 0, len(a.Files))
	for p := range a.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// Read reads an artifact from r into memory, extracting nothing to disk.
// It returns ErrCorrupt for input that is not a gzip'd tar (or whose gzip
// checksum fails), ErrUnsafePath, ErrNotRegular and ErrDuplicate for the
// first offending entry, and ErrTooLarge once the archive passes
// MaxEntries entries or MaxBytes of decompressed tar stream. Read does not
// check SHA256SUMS; Verify does.
func Read(r io.Reader) (*Archive, error) {
	return read(r, MaxEntries, MaxBytes)
}

// read is Read with its limits as parameters, so that tests can reach them
// without building gigabytes.
func read(r io.Reader, maxEntries int, maxBytes int64) (*Archive, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("reading artifact: %w: not a gzip stream: %w", ErrCorrupt, err)
	}
	defer zr.Close()
	stream := &limitReader{r: zr, limit: maxBytes, left: maxBytes}
	tr := tar.NewReader(stream)
	a := &Archive{Files: map[string][]byte{}, Sums: map[string]string{}, Executable: map[string]bool{}}
	var paths []string
	var content int64 // bytes of entry content so far
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readErr(err)
		}
		if len(paths) >= maxEntries {
			return nil, fmt.Errorf("reading artifact: %w: more than %d entries", ErrTooLarge, maxEntries)
		}
		name := hdr.Name
		if why := pathfold.CheckPath(name); why != "" {
			return nil, fmt.Errorf("reading artifact: entry %q: %w: %s", name, ErrUnsafePath, why)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("reading artifact: entry %q: %w (%s)", name, ErrNotRegular, typeName(hdr.Typeflag))
		}
		if isSparse(hdr) {
			return nil, fmt.Errorf("reading artifact: entry %q: %w (a sparse file)", name, ErrNotRegular)
		}
		if perm := hdr.Mode & 0o7777; (perm != modeFile && perm != modeExecutable) || hdr.Uid != 0 || hdr.Gid != 0 || hdr.Uname != "" || hdr.Gname != "" {
			return nil, fmt.Errorf("reading artifact: entry %q: %w: mode %04o, owner %d:%d (%q:%q); artifacts hold files of mode 0644 or 0755 owned by 0:0 with no names", name, ErrMetadata, perm, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname)
		}
		if _, dup := a.Files[name]; dup {
			return nil, fmt.Errorf("reading artifact: entry %q: %w: the archive holds it more than once", name, ErrDuplicate)
		}
		// The header's claimed size is checked before any of it is read, so
		// that a small input claiming a huge file fails at once. Content
		// is counted on its own as well as in the stream, so that no
		// encoding of the content can make it larger than the stream.
		content += hdr.Size
		if hdr.Size > stream.left || content > maxBytes {
			return nil, fmt.Errorf("reading artifact: entry %q: %w: %d bytes, more than the %d bytes allowed in all", name, ErrTooLarge, hdr.Size, maxBytes)
		}
		data, err := readEntry(tr, hdr.Size)
		if err != nil {
			return nil, readErr(fmt.Errorf("entry %q: %w", name, err))
		}
		a.Files[name] = data
		if hdr.Mode&0o111 != 0 {
			a.Executable[name] = true
		}
		paths = append(paths, name)
	}
	// Whatever follows the end of the tar stream must be zeros (block or
	// record padding); reading it to the end also makes gzip check its
	// CRC and length.
	if err := drainZeros(stream); err != nil {
		return nil, readErr(err)
	}
	slices.Sort(paths)
	if dir := conflicts(paths); dir != "" {
		return nil, fmt.Errorf("reading artifact: entry %q: %w: it is also a directory of another entry", dir, ErrDuplicate)
	}
	if p, q := pathfold.Twins(paths); p != "" {
		return nil, fmt.Errorf("reading artifact: path %q: %w: %q differs from it only in letter case or Unicode form, and one unpacks over the other on some file systems", q, ErrDuplicate, p)
	}
	if data, ok := a.Files[SumsName]; ok {
		a.Sums, _ = parseSums(data)
	}
	return a, nil
}

// readErr wraps an error met while reading the stream: ErrTooLarge from
// the limit passes through, anything else is corruption.
func readErr(err error) error {
	if errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("reading artifact: %w", err)
	}
	return fmt.Errorf("reading artifact: %w: %w", ErrCorrupt, err)
}

// errTrailingData reports non-zero bytes after the end of the tar stream.
var errTrailingData = errors.New("non-zero data after the end of the tar stream")

// drainZeros reads r to its end and fails on the first non-zero byte.
func drainZeros(r io.Reader) error {
	buf := make([]byte, 32<<10)
	zeros := make([]byte, len(buf))
	for {
		n, err := r.Read(buf)
		if !bytes.Equal(buf[:n], zeros[:n]) {
			return errTrailingData
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// limitReader reads from r until left bytes have been read, then fails
// with ErrTooLarge if any more data follows. Unlike io.LimitReader it
// tells "exactly at the limit" (EOF) from "beyond it" (an error).
type limitReader struct {
	r     io.Reader
	limit int64
	left  int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if l.left <= 0 {
		var probe [1]byte
		n, err := l.r.Read(probe[:])
		if n > 0 {
			return 0, fmt.Errorf("%w: the tar stream decompresses to more than the %d bytes allowed", ErrTooLarge, l.limit)
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// isSparse reports whether a header describes a GNU sparse file in PAX
// form, which archive/tar presents as a regular file whose holes read as
// zeros: content that is larger than its encoding, and not what Build
// writes.
func isSparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// typeName names a tar entry type for an error message.
func typeName(flag byte) string {
	switch flag {
	case tar.TypeDir:
		return "a directory"
	case tar.TypeSymlink:
		return "a symbolic link"
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeChar:
		return "a character device"
	case tar.TypeBlock:
		return "a block device"
	case tar.TypeFifo:
		return "a FIFO"
	case tar.TypeGNUSparse:
		return "a sparse file"
	case tar.TypeCont:
		return "a contiguous file"
	default:
		return fmt.Sprintf("entry type %q", flag)
	}
}

// Canonical reports whether data, the archive a was read from, is byte for
// byte the archive Build writes for a's files: entries in order, with
// agentform's modes, owners and timestamps, and its compression. An
// archive repacked by another tool can hold intact files and still fail.
func Canonical(a *Archive, data []byte) bool {
	files := make([]File, 0, len(a.Files))
	for _, p := range a.Paths() {
		if p == SumsName {
			continue
		}
		files = append(files, File{Path: p, Data: a.Files[p], Executable: a.Executable[p]})
	}
	built, err := Build(files)
	return err == nil && bytes.Equal(built, data)
}

// readEntryChunk is how much of an entry readEntry reads before it trusts
// the header's size enough to allocate all of it.
const readEntryChunk = 64 << 20

// readEntry reads an entry of the size its header claims. io.ReadAll
// doubled its buffer as the data came (a 1 GB entry took 2 GB); here the
// entry is read into one buffer of its size, allocated once the first
// readEntryChunk bytes show that the data is really there (a header that
// claims more than follows costs at most that much before it fails).
func readEntry(r io.Reader, size int64) ([]byte, error) {
	first := make([]byte, min(size, readEntryChunk))
	if _, err := io.ReadFull(r, first); err != nil {
		return nil, err
	}
	if int64(len(first)) == size {
		return first, nil
	}
	data := make([]byte, size)
	copy(data, first)
	if _, err := io.ReadFull(r, data[len(first):]); err != nil {
		return nil, err
	}
	return data, nil
}
