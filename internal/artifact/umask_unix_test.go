//go:build unix

package artifact

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func init() {
	// A child of TestBuildSameBytesInChildProcess sets its umask before
	// building.
	if m := os.Getenv("ARTIFACT_TEST_CHILD_UMASK"); m != "" {
		if v, err := strconv.ParseUint(m, 8, 32); err == nil {
			syscall.Umask(int(v))
		}
	}
}

func TestBuildAndWriteFileUnderUmask(t *testing.T) {
	s := newSample(t)
	want := s.build(t)
	for _, mask := range []int{0, 0o022, 0o077, 0o777} {
		t.Run(strconv.FormatInt(int64(mask), 8), func(t *testing.T) {
			old := syscall.Umask(mask)
			t.Cleanup(func() { syscall.Umask(old) })
			got := s.build(t)
			if !bytes.Equal(got, want) {
				t.Errorf("Build under umask %o differs", mask)
			}
			dir := t.TempDir()
			if mask == 0o777 {
				// The directory itself must stay usable by the test.
				if err := os.Chmod(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, "x.agent.tgz")
			if err := WriteFile(path, got); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o644 {
				t.Errorf("mode\ngot:  %o\nwant: 644", info.Mode().Perm())
			}
		})
	}
}
