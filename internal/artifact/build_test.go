package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func TestBuildSameBytesWhateverTheOrder(t *testing.T) {
	s := newSample(t)
	files := s.all(t)
	want, err := Build(files)
	if err != nil {
		t.Fatal(err)
	}
	orders := map[string]func([]File){
		"reversed": slices.Reverse[[]File],
		"shuffled": func(f []File) {
			r := rand.New(rand.NewPCG(1, 2))
			r.Shuffle(len(f), func(i, j int) { f[i], f[j] = f[j], f[i] })
		},
		"sorted": func(f []File) {
			slices.SortFunc(f, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
		},
	}
	for name, reorder := range orders {
		t.Run(name, func(t *testing.T) {
			f := slices.Clone(files)
			reorder(f)
			before := slices.Clone(f)
			got, err := Build(f)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("bytes differ from the first build\ngot:  sha256 %x\nwant: sha256 %x", sha256.Sum256(got), sha256.Sum256(want))
			}
			if !slices.EqualFunc(f, before, func(a, b File) bool { return a.Path == b.Path }) {
				t.Errorf("Build reordered its input")
			}
		})
	}
}

// TestBuildConcurrent builds different artifacts at once: compressors are
// shared between builds, and none may carry state from one to the next.
// Each artifact must be what a fresh compressor makes of its tar stream.
func TestBuildConcurrent(t *testing.T) {
	files := newSample(t).all(t)
	inputs := make([][]File, 8)
	want := make([][]byte, len(inputs))
	for i := range inputs {
		inputs[i] = slices.Clone(files)[:1+i%len(files)]
		built, err := Build(inputs[i])
		if err != nil {
			t.Fatal(err)
		}
		want[i] = freshlyCompressed(t, built)
		if !bytes.Equal(built, want[i]) {
			t.Errorf("input %d: bytes differ from a fresh compressor's", i)
		}
	}
	var wg sync.WaitGroup
	got := make([][]byte, len(inputs)*4)
	for i := range got {
		wg.Go(func() {
			b, err := Build(inputs[i%len(inputs)])
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	wg.Wait()
	for i, b := range got {
		if !bytes.Equal(b, want[i%len(inputs)]) {
			t.Errorf("build %d: bytes differ from the same files built alone", i)
		}
	}
}

// freshlyCompressed decompresses an artifact and compresses its tar stream
// again as Build does, with a compressor of its own.
func freshlyCompressed(t *testing.T, artifact []byte) []byte {
	t.Helper()
	stream := tarStream(t, artifact)
	var out bytes.Buffer
	zw, err := kgzip.NewWriterLevel(&out, CompressionLevel)
	if err != nil {
		t.Fatal(err)
	}
	zw.Header = kgzip.Header{OS: gzipOS}
	if _, err := zw.Write(stream); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestBuildSameBytesInProcessEnvironment(t *testing.T) {
	s := newSample(t)
	files := s.all(t)
	want := s.build(t)
	check := func(t *testing.T) {
		t.Helper()
		got, err := Build(files)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("bytes differ\ngot:  sha256 %x\nwant: sha256 %x", sha256.Sum256(got), sha256.Sum256(want))
		}
	}
	t.Run("time zone", func(t *testing.T) {
		old := time.Local
		t.Cleanup(func() { time.Local = old })
		time.Local = time.FixedZone("UTC+13:45", 13*3600+45*60)
		check(t)
	})
	for _, procs := range []int{1, 2} {
		t.Run("GOMAXPROCS "+strconv.Itoa(procs), func(t *testing.T) {
			old := runtime.GOMAXPROCS(procs)
			t.Cleanup(func() { runtime.GOMAXPROCS(old) })
			check(t)
		})
	}
	t.Run("working directory", func(t *testing.T) {
		t.Chdir(t.TempDir())
		check(t)
	})
}

// TestBuildSameBytesInChildProcess builds the sample in child processes
// of the test binary with a different time zone, GOMAXPROCS, working
// directory and umask, and compares their artifacts with this process's.
func TestBuildSameBytesInChildProcess(t *testing.T) {
	if out := os.Getenv("ARTIFACT_TEST_CHILD_OUT"); out != "" {
		childBuild(t, out)
		return
	}
	want := newSample(t).build(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	envs := map[string][]string{
		"TZ=Pacific/Chatham GOMAXPROCS=1":            {"TZ=Pacific/Chatham", "GOMAXPROCS=1"},
		"TZ=America/St_Johns GOMAXPROCS=2 umask 077": {"TZ=America/St_Johns", "GOMAXPROCS=2", "ARTIFACT_TEST_CHILD_UMASK=077"},
		"TZ=UTC GOMAXPROCS=2 umask 0":                {"TZ=UTC", "GOMAXPROCS=2", "ARTIFACT_TEST_CHILD_UMASK=0"},
	}
	for name, env := range envs {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "child.agent.tgz")
			cmd := exec.Command(exe, "-test.run=^TestBuildSameBytesInChildProcess$", "-test.count=1")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), env...)
			cmd.Env = append(cmd.Env, "ARTIFACT_TEST_CHILD_OUT="+out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("child: %v\n%s", err, msg)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("child's artifact differs\ngot:  sha256 %x\nwant: sha256 %x", sha256.Sum256(got), sha256.Sum256(want))
			}
		})
	}
}

func TestBuildGzipHeader(t *testing.T) {
	got := newSample(t).build(t)
	// ID1 ID2 CM FLG MTIME(4) XFL OS: deflate, no flags (no name, comment,
	// extra or header CRC), MTIME 0, XFL 0 (neither fastest nor best
	// compression), OS 255.
	want := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}
	if !bytes.Equal(got[:10], want) {
		t.Errorf("gzip header\ngot:  % x\nwant: % x", got[:10], want)
	}
	zr, err := gzip.NewReader(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	if h := zr.Header; h.Name != "" || h.Comment != "" || h.Extra != nil || !h.ModTime.IsZero() || h.OS != 255 {
		t.Errorf("gzip header\ngot:  %+v\nwant: no name, comment or extra, zero ModTime, OS 255", h)
	}
}

// tarStream returns an artifact's decompressed tar stream.
func tarStream(t *testing.T, artifact []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(artifact))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

// rawHeaders returns the tar headers of an artifact in order, with each
// entry's content.
func rawHeaders(t *testing.T, artifact []byte) ([]*tar.Header, [][]byte) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(artifact))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var hdrs []*tar.Header
	var datas [][]byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hdrs, datas
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		hdrs = append(hdrs, h)
		datas = append(datas, data)
	}
}

func TestBuildTarHeaders(t *testing.T) {
	long := strings.Repeat("d", 120) + "/" + strings.Repeat("f", 120) // no USTAR split: name part > 100
	files := []File{
		{Path: "b.txt", Data: []byte("b")},
		{Path: "a/run.sh", Data: []byte("#!/bin/sh\n"), Executable: true},
		{Path: "Z.txt", Data: []byte("Z")},
		{Path: long, Data: []byte("long")},
		{Path: "tools/ünïcode.txt", Data: []byte("u")},
		{Path: strings.Repeat("p", 120) + "/f.txt", Data: []byte("split")}, // fits USTAR's prefix and name
	}
	hdrs, datas := rawHeaders(t, mustBuild(t, files))

	var names []string
	for _, h := range hdrs {
		names = append(names, h.Name)
	}
	want := []string{"Z.txt", "a/run.sh", "b.txt", long, strings.Repeat("p", 120) + "/f.txt", "tools/ünïcode.txt", SumsName}
	if !slices.Equal(names, want) {
		t.Errorf("entry order\ngot:  %q\nwant: %q", names, want)
	}
	for _, h := range hdrs {
		t.Run(h.Name[:min(len(h.Name), 20)], func(t *testing.T) {
			wantMode := int64(0o644)
			if h.Name == "a/run.sh" {
				wantMode = 0o755
			}
			wantFormat := tar.FormatUSTAR
			if h.Name == long || strings.HasPrefix(h.Name, "tools/ü") {
				wantFormat = tar.FormatPAX
			}
			if h.Typeflag != tar.TypeReg || h.Mode != wantMode || h.Uid != 0 || h.Gid != 0 ||
				h.Uname != "" || h.Gname != "" || h.ModTime.Unix() != 0 || h.Devmajor != 0 || h.Devminor != 0 ||
				h.Linkname != "" || h.Format != wantFormat {
				t.Errorf("header\ngot:  type %q mode %o uid %d gid %d uname %q gname %q mtime %d format %v\nwant: type '0' mode %o uid 0 gid 0 no names mtime 0 format %v",
					h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.Unix(), h.Format, wantMode, wantFormat)
			}
			if h.Format == tar.FormatPAX {
				if len(h.PAXRecords) != 1 || h.PAXRecords["path"] != h.Name {
					t.Errorf("PAX records\ngot:  %q\nwant: only path", h.PAXRecords)
				}
			}
		})
	}
	gotSums := string(datas[len(datas)-1])
	var wantSums strings.Builder
	for i, h := range hdrs[:len(hdrs)-1] {
		sum := sha256.Sum256(datas[i])
		wantSums.WriteString(hex.EncodeToString(sum[:]) + "  " + h.Name + "\n")
	}
	if gotSums != wantSums.String() {
		t.Errorf("SHA256SUMS\ngot:\n%s\nwant:\n%s", gotSums, wantSums.String())
	}
}

func mustBuild(t testing.TB, files []File) []byte {
	t.Helper()
	out, err := Build(files)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBuildGolden pins the sample's uncompressed tar stream and its
// compressed bytes: a change to either changes the artifacts users build
// (for the compressed bytes, typically a new version of the compressor,
// which the release notes must then say). Run with -update after an
// intended change.
func TestBuildGolden(t *testing.T) {
	built := newSample(t).build(t)
	checkGoldenSum(t, "sample.tar.sha256", tarStream(t, built))
	checkGoldenSum(t, "sample.tgz.sha256", built)
}

// checkGoldenSum compares the SHA-256 of data with testdata/name.
func checkGoldenSum(t *testing.T, name string, data []byte) {
	t.Helper()
	sum := sha256.Sum256(data)
	got := hex.EncodeToString(sum[:]) + "\n"
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("sha256 of %s\ngot:  %s\nwant: %s", strings.TrimSuffix(name, ".sha256"), got, want)
	}
}

func TestBuildRejects(t *testing.T) {
	ok := func(p string) File { return File{Path: p, Data: []byte(p)} }
	tests := []struct {
		name  string
		files []File
		want  error
	}{
		{"empty path", []File{ok("")}, ErrUnsafePath},
		{"absolute", []File{ok("/etc/passwd")}, ErrUnsafePath},
		{"dot dot", []File{ok("../x")}, ErrUnsafePath},
		{"dot dot inside", []File{ok("a/../../b")}, ErrUnsafePath},
		{"dot dot that cleans away", []File{ok("a/../b")}, ErrUnsafePath},
		{"dot", []File{ok("./a")}, ErrUnsafePath},
		{"double slash", []File{ok("a//b")}, ErrUnsafePath},
		{"trailing slash", []File{ok("a/")}, ErrUnsafePath},
		{"backslash", []File{ok(`a\b`)}, ErrUnsafePath},
		{"windows absolute", []File{ok(`C:\x`)}, ErrUnsafePath},
		{"NUL", []File{ok("a\x00b")}, ErrUnsafePath},
		{"newline", []File{ok("a\nb")}, ErrUnsafePath},
		{"invalid UTF-8", []File{ok("a\xffb")}, ErrUnsafePath},
		{"too long", []File{ok(strings.Repeat("a", MaxPathLength+1))}, ErrUnsafePath},
		{"duplicate", []File{ok("a"), ok("b"), ok("a")}, ErrDuplicate},
		{"file and directory", []File{ok("a"), ok("a-b"), ok("a/b")}, ErrDuplicate},
		{"SHA256SUMS", []File{ok(SumsName)}, ErrDuplicate},
		{"letter case twins", []File{ok("tools/p/src/Readme.md"), ok("tools/p/src/README.md")}, ErrDuplicate},
		{"Unicode form twins", []File{ok("skills/s/caf\u00e9.txt"), ok("skills/s/cafe\u0301.txt")}, ErrDuplicate},
		{"a file and a directory in other case", []File{ok("skills/s/Notes"), ok("skills/s/notes/todo.md")}, ErrDuplicate},
		{"long s twins", []File{ok("skills/s/s.md"), ok("skills/s/\u017f.md")}, ErrDuplicate},
		{"final sigma twins", []File{ok("skills/s/\u03c3.md"), ok("skills/s/\u03c2.md")}, ErrDuplicate},
		{"too many", slices.Repeat([]File{{}}, MaxEntries), ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Build(tt.files)
			if !errors.Is(err, tt.want) || out != nil {
				t.Errorf("Build\ngot:  %d bytes, %v\nwant: nil, %v", len(out), err, tt.want)
			}
		})
	}
}

func TestBuildEmptyAndNoFiles(t *testing.T) {
	for name, files := range map[string][]File{"nil": nil, "empty file": {{Path: "empty"}}} {
		t.Run(name, func(t *testing.T) {
			a, err := Read(bytes.NewReader(mustBuild(t, files)))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(a.Files), len(files)+1; got != want {
				t.Errorf("entries\ngot:  %d\nwant: %d", got, want)
			}
		})
	}
}

// childBuild is the child side of TestBuildSameBytesInChildProcess.
func childBuild(t *testing.T, out string) {
	s := newSample(t)
	if err := os.WriteFile(out, s.build(t), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestBuildStreamsAsOneWrite: Build compresses the tar stream as it is
// written, entry by entry; the bytes must be those of compressing the
// whole stream in one write, as it did before, also for entries larger
// than the compressor's window and blocks.
func TestBuildStreamsAsOneWrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	text := func(n int) []byte {
		words := []string{"agent", "tool", "capability", "{\n  \"name\": ", "schema", "\"type\": \"object\"", "\n"}
		var b bytes.Buffer
		for b.Len() < n {
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.Bytes()[:n]
	}
	noise := make([]byte, 200_000)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	files := []File{
		{Path: "agent.json", Data: text(700_000)},
		{Path: "tools/a/bundle.js", Data: text(65_535)},
		{Path: "tools/b/bundle.js", Data: noise},
		{Path: "tools/c/bundle.js", Data: text(1)},
		{Path: "tools/c/src/" + strings.Repeat("long-name/", 12) + "x.py", Data: text(90_000), Executable: true},
	}
	got, err := Build(files)
	if err != nil {
		t.Fatal(err)
	}
	// The reference: the tar stream whole, then compressed in one write.
	stream := tarStream(t, got)
	zw, err := kgzip.NewWriterLevel(nil, CompressionLevel)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	zw.Reset(&want)
	zw.Header = kgzip.Header{OS: gzipOS}
	if _, err := zw.Write(stream); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("Build gave %d bytes, compressing its tar stream in one write %d: they differ", len(got), want.Len())
	}
}
