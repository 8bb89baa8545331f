package resolve

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"golang.org/x/text/unicode/norm"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/pathfold"
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

// shippedFiles reports, of a directory that an artifact ships (a skill's
// source, a python package), a file whose path an artifact cannot hold
// (pathfold.CheckPath: a backslash, a control character, invalid UTF-8),
// then two files whose paths differ only in letter case or Unicode
// normalisation form ("Notes.py" and "notes.py"): the artifact builder
// refuses them, since on macOS and Windows they are one file and one
// would unpack over the other. files are the directory's PackageFiles;
// src is its source argument and rng where the problem is reported (the
// argument's range); what names the directory ("skill directory") and
// dest where the artifact puts its files ("skills/research/").
func shippedFiles(files []string, src manifest.String, rng *hcl.Range, what, dest string) hcl.Diagnostics {
	for _, name := range files {
		if why := pathfold.CheckPath(dest + name); why != "" {
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "File name an artifact cannot hold",
				Detail: fmt.Sprintf("The %s %q holds %s, whose artifact path under %s is refused: %s. An artifact's paths are the same on every system and each is one line of its SHA256SUMS, so apply cannot build it. Rename or remove the file.",
					what, src.Value, strconv.Quote(path.Join(filepath.ToSlash(src.Value), name)), dest, why),
				Subject: rng,
			}}
		}
	}
	first, second := pathfold.Twins(files)
	if first == "" {
		return nil
	}
	shown := func(name string) string { return path.Join(filepath.ToSlash(src.Value), name) }
	summary, how := "File names differ only in letter case", "differ only in letter case or Unicode form"
	if norm.NFC.String(first) == norm.NFC.String(second) {
		// They look alike: show the code points that differ.
		summary = "File names differ only in Unicode form"
		how = fmt.Sprintf("are the same text in two Unicode normalisation forms (%+q and %+q)", first, second)
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail: fmt.Sprintf("The %s %q holds both %s and %s, whose paths %s. Its artifact would ship both under %s, where they unpack over each other on macOS and Windows, whose file systems take them for one file, so apply cannot build it. Rename or remove one of them.",
			what, src.Value, shown(first), shown(second), how, dest),
		Subject: rng,
	}}
}

// envFileWarnings warns of each dotenv file (".env", ".env.local", ...; not
// an ".env.example", ".env.sample" or ".env.template") a package or skill
// directory holds: the directory goes into the artifact whole, and such
// a file usually holds credentials, which would go with it to whoever can
// read the artifact. files are the directory's PackageFiles; the rest is
// as for shippedFiles.
func envFileWarnings(files []string, src manifest.String, rng *hcl.Range, what string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range files {
		base := path.Base(name)
		if base != ".env" && !strings.HasPrefix(base, ".env.") {
			continue
		}
		switch strings.TrimPrefix(base, ".env.") {
		case "example", "sample", "template", "dist":
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Environment file in an artifact",
			Detail: fmt.Sprintf("The %s %q holds %s, which goes into the artifact with the rest of the directory: whoever can read the artifact can read it. If it holds credentials, remove it and give them to the tool at runtime with secret(runtime(\"NAME\")) in the block's config or env.",
				what, src.Value, strconv.Quote(path.Join(filepath.ToSlash(src.Value), name))),
			Subject: rng,
		})
	}
	return diags
}
