package resolve

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealPaths: Real agrees with filepath.EvalSymlinks through linked
// directories and files, also for a second path in a directory it looked
// up already; info is the file's own for a plain file and nil for a link.
func TestRealPaths(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755))
	must(os.WriteFile(filepath.Join(root, "real", "f.ts"), nil, 0o644))
	must(os.WriteFile(filepath.Join(root, "real", "g.ts"), nil, 0o644))
	must(os.Symlink("real", filepath.Join(root, "linked")))
	must(os.Symlink("f.ts", filepath.Join(root, "real", "h.ts")))
	must(os.Symlink(filepath.Join(root, "real", "sub"), filepath.Join(root, "real", "subl")))

	var r RealPaths
	for _, rel := range []string{"real/f.ts", "real/g.ts", "linked/f.ts", "linked/g.ts", "linked/h.ts", "real/h.ts", "real/subl", "linked/subl", "real", "linked"} {
		p := filepath.Join(root, rel)
		want, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		got, info, err := r.Real(p)
		if err != nil || got != want {
			t.Errorf("Real(%s) = %q, %v; want %q", rel, got, err, want)
		}
		fi, _ := os.Lstat(p)
		if link := fi.Mode()&os.ModeSymlink != 0; link != (info == nil) {
			t.Errorf("Real(%s): info %v for a path that is a link: %v", rel, info, link)
		}
	}
	// ".." after a link is taken where the link leads, as the system and
	// EvalSymlinks take it: deep/.. is real, not root.
	must(os.Symlink(filepath.Join(root, "real", "sub"), filepath.Join(root, "deep")))
	unclean := filepath.Join(root, "deep") + string(filepath.Separator) + ".." + string(filepath.Separator) + "f.ts"
	if got, _, err := r.Real(unclean); err != nil || got != filepath.Join(root, "real", "f.ts") {
		t.Errorf("Real(deep/../f.ts) = %q, %v; want %q", got, err, filepath.Join(root, "real", "f.ts"))
	}
	if _, _, err := r.Real(filepath.Join(root, "linked", "missing.ts")); err == nil {
		t.Error("Real of a missing file: no error")
	}
	// A directory recorded as Known is taken as its own real path, not
	// looked up (the caller resolved it).
	var known RealPaths
	known.Known(filepath.Join(root, "linked"))
	if got, _, _ := known.Real(filepath.Join(root, "linked", "f.ts")); got != filepath.Join(root, "linked", "f.ts") {
		t.Errorf("Real under a Known directory = %q", got)
	}
}
