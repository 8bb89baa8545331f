package artifact

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/agentform/agentform/internal/pathfold"
)

// File is one file of an artifact.
type File struct {
	// Path is the entry's path: relative, clean, with forward slashes
	// ("tools/adder/bundle.js").
	Path string
	// Data is the file's content. Build does not modify or retain it.
	Data []byte
	// Executable gives the entry mode 0755 instead of 0644. Set it only
	// for files that are executable in the input.
	Executable bool
}

// Mode bits Build writes.
const (
	modeFile       = 0o644
	modeExecutable = 0o755
)

// CompressionLevel is the gzip level every artifact is compressed at by
// github.com/klauspost/compress: the level gzip(1) and compress/flate
// default to (klauspost's own default is 5), fixed here so that a change
// of library default cannot change the bytes. Changing it changes every
// artifact's bytes.
const CompressionLevel = 6

// gzipWriters holds compressors between builds. Each carries about a
// megabyte of tables, which an apply building many artifacts would
// otherwise allocate, and fault in, for every one. Reset leaves the level.
var gzipWriters = sync.Pool{New: func() any {
	zw, err := gzip.NewWriterLevel(nil, CompressionLevel)
	if err != nil {
		panic(fmt.Sprintf("artifact: gzip level %d: %v", CompressionLevel, err))
	}
	return zw
}}

// gzipOS is the gzip header's OS byte: 255, "unknown", so that the bytes
// do not depend on the system that built them.
const gzipOS = 255

// epoch is every entry's modification time.
var epoch = time.Unix(0, 0)

// Build returns the artifact for files: a gzip'd tar holding each file,
// sorted by path, then SHA256SUMS listing every file's digest. The result
// depends only on the files' paths, contents and executable bits, never on
// their order; see the package documentation for the exact format.
//
// Every path must be safe and canonical (ErrUnsafePath), appear once and
// not be a directory of another (ErrDuplicate); SHA256SUMS is added by
// Build and must not be passed (ErrDuplicate). An artifact that Read would
// refuse as too large is refused (ErrTooLarge).
func Build(files []File) ([]byte, error) {
	if len(files)+1 > MaxEntries {
		return nil, fmt.Errorf("building artifact: %d files: %w (at most %d entries)", len(files), ErrTooLarge, MaxEntries)
	}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	paths := make([]string, len(sorted))
	var size int64
	for i, f := range sorted {
		if why := pathfold.CheckPath(f.Path); why != "" {
			return nil, fmt.Errorf("building artifact: file %q: %w: %s", f.Path, ErrUnsafePath, why)
		}
		if f.Path == SumsName {
			return nil, fmt.Errorf("building artifact: file %q: %w: Build writes %s itself", f.Path, ErrDuplicate, SumsName)
		}
		if i > 0 && f.Path == sorted[i-1].Path {
			return nil, fmt.Errorf("building artifact: file %q: %w: given more than once", f.Path, ErrDuplicate)
		}
		paths[i] = f.Path
		size += int64(len(f.Data))
		if size > MaxBytes {
			return nil, fmt.Errorf("building artifact: %w (more than %d bytes)", ErrTooLarge, MaxBytes)
		}
	}
	if dir := conflicts(paths); dir != "" {
		return nil, fmt.Errorf("building artifact: file %q: %w: it is also a directory of another file", dir, ErrDuplicate)
	}
	if p, q := pathfold.Twins(paths); p != "" {
		return nil, fmt.Errorf("building artifact: path %q: %w: %q differs from it only in letter case or Unicode form, and one would unpack over the other on some file systems (rename one)", q, ErrDuplicate, p)
	}

	var sums bytes.Buffer
	for _, f := range sorted {
		sumsLine(&sums, f.Path, f.Data)
	}

	// The tar stream goes straight into the compressor (klauspost's flate
	// cuts blocks by its window, not by writes, so the bytes are those of
	// compressing the whole stream at once), counted for the size limit.
	var out bytes.Buffer
	out.Grow(int(size/4) + 4096)
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&out)
	// The zero Header has no name, comment or extra field, and a zero
	// ModTime, which gzip writes as MTIME 0. OS defaults to 255 already;
	// it is set so that a change of default cannot change the bytes.
	zw.Header = gzip.Header{OS: gzipOS}
	stream := &countingWriter{w: zw}
	tw := tar.NewWriter(stream)
	for _, f := range sorted {
		if err := writeEntry(tw, f.Path, f.Data, f.Executable); err != nil {
			return nil, err
		}
	}
	if err := writeEntry(tw, SumsName, sums.Bytes(), false); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("building artifact: %w", err)
	}
	if stream.n > MaxBytes {
		return nil, fmt.Errorf("building artifact: %w (the tar stream is %d bytes, more than %d)", ErrTooLarge, stream.n, MaxBytes)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("building artifact: %w", err)
	}
	return out.Bytes(), nil
}

// countingWriter counts what it passes on.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeEntry writes one regular-file entry. Leaving the header's Format
// unset lets archive/tar pick USTAR when the path fits and PAX otherwise;
// with every other field fixed, that choice depends on the path alone.
func writeEntry(tw *tar.Writer, p string, data []byte, executable bool) error {
	mode := int64(modeFile)
	if executable {
		mode = modeExecutable
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     p,
		Mode:     mode,
		Size:     int64(len(data)),
		ModTime:  epoch,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("building artifact: file %q: %w", p, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("building artifact: file %q: %w", p, err)
	}
	return nil
}
