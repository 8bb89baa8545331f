package resolve

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
)

// ProjectRoot returns the nearest ancestor of dir (or dir itself) that
// holds a .git entry, else dir. Tool and skill sources must stay inside it.
func ProjectRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}

// SourceDir resolves a source argument to an absolute directory: relative
// to the workspace, existing, a directory, and inside the project root
// after following symbolic links. Problems are located at the argument.
func SourceDir(dir, root string, src manifest.String, what string) (string, hcl.Diagnostics) {
	return sourceDir(dir, root, false, src, what)
}

// sourceDir is SourceDir; resolved says root has its symbolic links
// resolved already.
func sourceDir(dir, root string, resolved bool, src manifest.String, what string) (string, hcl.Diagnostics) {
	rng := src.Range.Ptr()
	fail := func(summary, format string, args ...any) (string, hcl.Diagnostics) {
		return "", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng}}
	}
	p := src.Value
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	info, err := os.Stat(p)
	if err != nil {
		return fail("Source not found", "There is no %s directory at %q (relative to the workspace %s).", what, src.Value, dir)
	}
	if !info.IsDir() {
		return fail("Source is not a directory", "%q is a file; source names the %s directory.", src.Value, what)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fail("Source not found", "Resolving %q: %s.", src.Value, err)
	}
	rootReal := root
	if !resolved {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			rootReal = r
		}
	}
	if !within(rootReal, real) {
		return fail("Source outside the project", "%q resolves to %s, outside the project root %s. Sources must live inside the project (the nearest directory with .git, else the workspace) so that its lockfile pins them.", src.Value, real, rootReal)
	}
	return real, nil
}
