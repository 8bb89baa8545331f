package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestReadRoundTrip(t *testing.T) {
	s := newSample(t)
	files := s.all(t)
	a, err := Read(bytes.NewReader(mustBuild(t, files)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(a.Files), len(files)+1; got != want {
		t.Errorf("entries\ngot:  %d\nwant: %d", got, want)
	}
	for _, f := range files {
		if !bytes.Equal(a.Files[f.Path], f.Data) {
			t.Errorf("%s\ngot:  %q\nwant: %q", f.Path, a.Files[f.Path], f.Data)
		}
		if a.Executable[f.Path] != f.Executable {
			t.Errorf("%s executable\ngot:  %v\nwant: %v", f.Path, a.Executable[f.Path], f.Executable)
		}
		if got, want := a.Sums[f.Path], hexSHA256(f.Data); got != want {
			t.Errorf("%s sum\ngot:  %s\nwant: %s", f.Path, got, want)
		}
	}
	if len(a.Sums) != len(files) {
		t.Errorf("sums\ngot:  %d\nwant: %d", len(a.Sums), len(files))
	}
	// Rebuilding what was read gives the same bytes.
	var again []File
	for _, p := range a.Paths() {
		if p != SumsName {
			again = append(again, File{Path: p, Data: a.Files[p], Executable: a.Executable[p]})
		}
	}
	if !bytes.Equal(mustBuild(t, again), mustBuild(t, files)) {
		t.Errorf("rebuilding the read archive gives different bytes")
	}
}

// entry is one tar entry of a crafted archive.
type entry struct {
	hdr  tar.Header
	data string
}

func reg(name, data string) entry {
	return entry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data))}, data}
}

func special(flag byte, name, link string) entry {
	return entry{tar.Header{Typeflag: flag, Name: name, Linkname: link, Mode: 0o644}, ""}
}

// withHeader changes an entry's header.
func withHeader(e entry, change func(h *tar.Header)) entry {
	change(&e.hdr)
	return e
}

// craft writes entries with archive/tar and gzip, as a hostile tool
// might, without Build's checks.
func craft(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		hdr := e.hdr
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatalf("crafting %q: %v", hdr.Name, err)
		}
		if _, err := io.WriteString(tw, e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadRejects(t *testing.T) {
	valid := mustBuild(t, []File{{Path: "agent.json", Data: []byte("{}")}})
	badCRC := bytes.Clone(valid)
	badCRC[len(badCRC)-8] ^= 0xff // the gzip trailer's CRC-32
	trailing := func() []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zr, _ := gzip.NewReader(bytes.NewReader(valid))
		io.Copy(zw, zr)
		zw.Write([]byte("hidden payload"))
		zw.Close()
		return buf.Bytes()
	}()
	zeroPadded := func() []byte { // GNU tar pads to a 10 KiB record: fine
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zr, _ := gzip.NewReader(bytes.NewReader(valid))
		io.Copy(zw, zr)
		zw.Write(make([]byte, 10240))
		zw.Close()
		return buf.Bytes()
	}()

	tests := []struct {
		name  string
		input []byte
		want  error // nil: accepted
	}{
		{"valid", valid, nil},
		{"zero padding after the end", zeroPadded, nil},
		{"parent", craft(t, reg("../x", "x")), ErrUnsafePath},
		{"absolute", craft(t, reg("/abs", "x")), ErrUnsafePath},
		{"parent inside", craft(t, reg("a/../../b", "x")), ErrUnsafePath},
		{"not clean", craft(t, reg("a/./b", "x")), ErrUnsafePath},
		{"backslash", craft(t, reg(`..\x`, "x")), ErrUnsafePath},
		{"empty name", craft(t, reg("", "x")), ErrUnsafePath},
		{"control character", craft(t, reg("a\nb", "x")), ErrUnsafePath},
		{"symlink", craft(t, special(tar.TypeSymlink, "link", "/etc/passwd")), ErrNotRegular},
		{"hardlink", craft(t, reg("a", "x"), special(tar.TypeLink, "b", "a")), ErrNotRegular},
		{"directory", craft(t, special(tar.TypeDir, "dir/", "")), ErrUnsafePath},
		{"directory, clean name", craft(t, special(tar.TypeDir, "dir", "")), ErrNotRegular},
		{"character device", craft(t, special(tar.TypeChar, "tty", "")), ErrNotRegular},
		{"fifo", craft(t, special(tar.TypeFifo, "fifo", "")), ErrNotRegular},
		{"duplicate", craft(t, reg("a", "1"), reg("b", "2"), reg("a", "3")), ErrDuplicate},
		{"file and directory", craft(t, reg("a", "1"), reg("a/b", "2")), ErrDuplicate},
		{"directory then file", craft(t, reg("a/b", "1"), reg("a", "2")), ErrDuplicate},
		{"letter case twins", craft(t, reg("agent.json", "{}"), reg("Agent.json", "{}")), ErrDuplicate},
		{"Unicode form twins", craft(t, reg("skills/s/caf\u00e9.txt", "1"), reg("skills/s/cafe\u0301.txt", "2")), ErrDuplicate},
		{"a file and a directory in other case", craft(t, reg("skills/s/Notes", "1"), reg("skills/s/notes/todo.md", "2")), ErrDuplicate},
		{"executable", craft(t, withHeader(reg("run.sh", "x"), func(h *tar.Header) { h.Mode = 0o755 })), nil},
		{"mode with the type bits", craft(t, withHeader(reg("a", "x"), func(h *tar.Header) { h.Mode = 0o100644 })), nil},
		{"setuid", craft(t, withHeader(reg("run.sh", "x"), func(h *tar.Header) { h.Mode = 0o4755 })), ErrMetadata},
		{"setgid", craft(t, withHeader(reg("run.sh", "x"), func(h *tar.Header) { h.Mode = 0o2755 })), ErrMetadata},
		{"sticky", craft(t, withHeader(reg("a", "x"), func(h *tar.Header) { h.Mode = 0o1644 })), ErrMetadata},
		{"world-writable", craft(t, withHeader(reg("a", "x"), func(h *tar.Header) { h.Mode = 0o666 })), ErrMetadata},
		{"owned by a user", craft(t, withHeader(reg("a", "x"), func(h *tar.Header) { h.Uid, h.Gid = 1000, 1000 })), ErrMetadata},
		{"user name", craft(t, withHeader(reg("a", "x"), func(h *tar.Header) { h.Uname = "bob" })), ErrMetadata},
		{"sparse file", rawTar(t, paxEntry(map[string]string{
			"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "f", "GNU.sparse.realsize": "1000000",
		}), ustarBlock("GNUSparseFile.0/f", tar.TypeReg, 512), padBlock([]byte("1\n0\n0\n"))), ErrNotRegular},
		// archive/tar refuses a PAX path with a NUL as a malformed header.
		{"NUL in a PAX path", rawTar(t, paxEntry(map[string]string{"path": "a\x00b"}), ustarBlock("a", tar.TypeReg, 0)), ErrCorrupt},
		{"backslash in a PAX path", rawTar(t, paxEntry(map[string]string{"path": `tools\x`}), ustarBlock("a", tar.TypeReg, 0)), ErrUnsafePath},
		{"raw USTAR parent", rawTar(t, ustarBlock("../evil", tar.TypeReg, 0)), ErrUnsafePath},
		{"empty input", nil, ErrCorrupt},
		{"not gzip", []byte("PK\x03\x04 a zip file"), ErrCorrupt},
		{"gzip, not tar", gzipOf(t, []byte("just some text, long enough to fill a bit of a header block")), ErrCorrupt},
		{"truncated", valid[:len(valid)/2], ErrCorrupt},
		{"bad checksum", badCRC, ErrCorrupt},
		{"data after the end", trailing, ErrCorrupt},
		{"garbage after the gzip stream", append(bytes.Clone(valid), "garbage"...), ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Read(bytes.NewReader(tt.input))
			if tt.want == nil {
				if err != nil {
					t.Errorf("Read\ngot:  %v\nwant: no error", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || a != nil {
				t.Errorf("Read\ngot:  %v\nwant: %v", err, tt.want)
			}
		})
	}
}

func gzipOf(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

func TestReadLimits(t *testing.T) {
	many := make([]entry, 11)
	for i := range many {
		many[i] = reg(fmt.Sprintf("f%02d", i), "x")
	}
	tests := []struct {
		name       string
		input      []byte
		maxEntries int
		maxBytes   int64
		want       error
	}{
		{"entries at the limit", craft(t, many[:10]...), 10, MaxBytes, nil},
		{"one entry too many", craft(t, many...), 10, MaxBytes, ErrTooLarge},
		// Eleven one-byte entries are 11 × 1024 bytes of tar, plus two
		// zero blocks.
		{"bytes at the limit, entries under", craft(t, many...), 20, 11*1024 + 1024, nil},
		{"one byte over", craft(t, many...), 20, 11*1024 + 1023, ErrTooLarge},
		{"claimed size over", craft(t, reg("big", string(make([]byte, 4096)))), 20, 4096, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read(bytes.NewReader(tt.input), tt.maxEntries, tt.maxBytes)
			if !errors.Is(err, tt.want) {
				t.Errorf("read\ngot:  %v\nwant: %v", err, tt.want)
			}
		})
	}
}

// zeroMembers returns n gzip members each holding size zero bytes,
// concatenated: a stream that decompresses to n*size zeros from an input
// of a few kilobytes per member, built without ever holding the zeros.
func zeroMembers(t testing.TB, n int, size int) []byte {
	t.Helper()
	member := gzipOf(t, make([]byte, size))
	return bytes.Repeat(member, n)
}

// TestReadGzipBomb feeds Read, with its real limits, 2 GiB of compressed
// zeros: once declared as one file's size (refused before decompressing
// anything), once hidden after the end of the tar stream (refused after
// MaxBytes of output).
func TestReadGzipBomb(t *testing.T) {
	const chunk = 1 << 20
	const total = 2 << 30
	tests := []struct {
		name   string
		header []byte // the tar stream's start, compressed
	}{
		{"declared", func() []byte {
			var hdr bytes.Buffer
			tw := tar.NewWriter(&hdr)
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bomb", Mode: 0o644, Size: total}); err != nil {
				t.Fatal(err)
			}
			tw.Flush()
			return gzipOf(t, hdr.Bytes())
		}()},
		{"after the end", func() []byte {
			zr, _ := gzip.NewReader(bytes.NewReader(mustBuild(t, []File{{Path: "a", Data: []byte("a")}})))
			stream, _ := io.ReadAll(zr)
			return gzipOf(t, stream)
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := append(bytes.Clone(tt.header), zeroMembers(t, total/chunk, chunk)...)
			if len(input) > 16<<20 {
				t.Fatalf("the bomb is %d bytes; it should be small", len(input))
			}
			start := time.Now()
			_, err := Read(bytes.NewReader(input))
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("Read\ngot:  %v\nwant: %v", err, ErrTooLarge)
			}
			t.Logf("%d compressed bytes refused in %v", len(input), time.Since(start))
		})
	}
}

func TestArchivePaths(t *testing.T) {
	a := &Archive{Files: map[string][]byte{"b": nil, "a/c": nil, "SHA256SUMS": nil}}
	got := a.Paths()
	want := []string{"SHA256SUMS", "a/c", "b"}
	if !slices.Equal(got, want) {
		t.Errorf("Paths\ngot:  %q\nwant: %q", got, want)
	}
}

// ustarBlock returns one raw USTAR header block, for entries archive/tar
// would not write.
func ustarBlock(name string, flag byte, size int) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	copy(b[100:108], "0000644\x00")
	copy(b[108:116], "0000000\x00")
	copy(b[116:124], "0000000\x00")
	copy(b[124:136], fmt.Sprintf("%011o\x00", size))
	copy(b[136:148], "00000000000\x00")
	b[156] = flag
	copy(b[257:265], "ustar\x0000")
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// padBlock pads data to a whole number of blocks.
func padBlock(data []byte) []byte {
	return append(data, make([]byte, (512-len(data)%512)%512)...)
}

// paxEntry returns a raw PAX extended header entry with the records, in
// sorted order.
func paxEntry(records map[string]string) []byte {
	var recs strings.Builder
	for _, k := range slices.Sorted(maps.Keys(records)) {
		r := " " + k + "=" + records[k] + "\n"
		n := len(r)
		for len(strconv.Itoa(n))+len(r) != n {
			n = len(strconv.Itoa(n)) + len(r)
		}
		recs.WriteString(strconv.Itoa(n) + r)
	}
	return append(ustarBlock("PaxHeaders.0/x", tar.TypeXHeader, recs.Len()), padBlock([]byte(recs.String()))...)
}

// rawTar gzips raw blocks followed by the end-of-archive marker.
func rawTar(t *testing.T, blocks ...[]byte) []byte {
	var stream []byte
	for _, b := range blocks {
		stream = append(stream, b...)
	}
	return gzipOf(t, append(stream, make([]byte, 1024)...))
}

// TestCanonical: what Build writes is canonical; the same tar stream
// compressed at another level, or its entries written in another order,
// reads back with the same files but is not.
func TestCanonical(t *testing.T) {
	s := newSample(t)
	data := mustBuild(t, s.all(t))
	read := func(data []byte) *Archive {
		t.Helper()
		a, err := Read(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if !Canonical(read(data), data) {
		t.Fatal("Build's own archive is not canonical")
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var recompressed bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&recompressed, gzip.BestSpeed)
	zw.Write(stream)
	zw.Close()
	// Entries in reverse order.
	tr := tar.NewReader(bytes.NewReader(stream))
	type entry struct {
		hdr  *tar.Header
		data []byte
	}
	var entries []entry
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		entries = append(entries, entry{hdr, b})
	}
	var reordered bytes.Buffer
	zw = gzip.NewWriter(&reordered)
	tw := tar.NewWriter(zw)
	for _, e := range slices.Backward(entries) {
		if err := tw.WriteHeader(e.hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write(e.data)
	}
	tw.Close()
	zw.Close()
	for name, other := range map[string][]byte{"recompressed": recompressed.Bytes(), "reordered": reordered.Bytes()} {
		a := read(other)
		if !maps.EqualFunc(a.Files, read(data).Files, bytes.Equal) {
			t.Fatalf("%s: files differ", name)
		}
		if Canonical(a, other) {
			t.Errorf("%s: got canonical, want not", name)
		}
	}
}

// TestReadEntry: an entry is read whole whatever its size, past the first
// chunk too, and one shorter than its header claims fails.
func TestReadEntry(t *testing.T) {
	for _, n := range []int{0, 1, 4096, readEntryChunk, readEntryChunk + 10} {
		want := bytes.Repeat([]byte{'x'}, n)
		got, err := readEntry(bytes.NewReader(want), int64(n))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("size %d: got %d bytes, %v", n, len(got), err)
		}
	}
	for _, n := range []int{10, readEntryChunk + 10} {
		if _, err := readEntry(bytes.NewReader(make([]byte, n-1)), int64(n)); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("size %d claimed, %d there: %v, want %v", n, n-1, err, io.ErrUnexpectedEOF)
		}
	}
}
