package resolve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/agentform/agentform/internal/safefile"
	"github.com/agentform/agentform/lockfile"
)

// SHA256 returns "sha256:<hex>" of data.
func SHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// SHA256File returns "sha256:<hex>" of a regular file's content, refusing
// anything else (safefile.Open: a named pipe would block).
func SHA256File(path string) (string, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// maxInputFile is the largest file of a tool's or skill's package that
// resolution reads whole (package.json, pyproject.toml, uv.lock, a skill's
// files): far above any real one, it stops a file that never ends.
const maxInputFile = 256 << 20

// readInput reads a package file, refusing what is not a regular file (a
// named pipe would block) or is larger than maxInputFile.
func readInput(path string) ([]byte, error) {
	return safefile.Read(path, maxInputFile)
}

// BuildOutputDirs are directories left out of package hashes: installed
// dependencies, build output, version-control metadata, and agentform's
// own state and cache (.agentform) and Terraform's (.terraform, the
// states of terraform.tfstate.d), which a package at the workspace's root
// would otherwise hold.
var BuildOutputDirs = []string{".agentform", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".terraform", ".tox", ".venv", "__pycache__", "dist", "node_modules", "terraform.tfstate.d"}

// terraformFile reports whether a file name is one of Terraform's own
// files, which package hashes leave out wherever they are: a state (which
// holds the values of every resource, sensitive ones too, and changes
// with every apply), its backups and its lock info, a saved plan named
// *.tfplan (which holds state values too), and the dependency lock. A workspace that Terraform runs in (the provider's dir = ".")
// holds them at its root, where a skill or tool with source = "." would
// otherwise pack them into the artifact.
func terraformFile(name string) bool {
	return strings.HasSuffix(name, ".tfstate") || strings.HasSuffix(name, ".tfstate.backup") ||
		// terraform state mv and rm back the state up as
		// terraform.tfstate.<unix time>.backup.
		strings.Contains(name, ".tfstate.") && strings.HasSuffix(name, ".backup") ||
		strings.HasSuffix(name, ".tfplan") ||
		name == ".terraform.tfstate.lock.info" || name == ".terraform.lock.hcl"
}

// PackageFiles lists the regular files of a package directory, relative
// with forward slashes and sorted, skipping BuildOutputDirs, Terraform's
// files (terraformFile) and a lockfile (agentform.lock.hcl) at its root. A symbolic
// link that leads outside the package is an error, and so is one to a
// directory; a link to a file inside the package is listed like the file.
func PackageFiles(dir string) ([]string, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	return packageFiles(root)
}

// packageFiles is PackageFiles of a directory whose symbolic links are
// resolved already (SourceDir's result).
func packageFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			for _, skip := range BuildOutputDirs {
				if d.Name() == skip && path != root {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if d.Type()&os.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(path)
			if err != nil {
				return fmt.Errorf("%s is a broken symbolic link", filepath.ToSlash(rel))
			}
			if !within(root, target) {
				return fmt.Errorf("%s is a symbolic link that leads outside the package (to %s)", filepath.ToSlash(rel), target)
			}
			info, err := os.Stat(target)
			if err != nil {
				return err
			}
			if info.IsDir() {
				return fmt.Errorf("%s is a symbolic link to a directory; packages may only link to files", filepath.ToSlash(rel))
			}
			if !info.Mode().IsRegular() {
				// Reading a named pipe would wait for a writer.
				return fmt.Errorf("%s is a symbolic link to a special file (a named pipe, a socket or a device); packages may only link to regular files", filepath.ToSlash(rel))
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		if unhashedTopFile(rel) || terraformFile(d.Name()) {
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// HashPackage returns the dirhash Hash1 ("h1:...") of a package directory
// over PackageFiles. The hash depends on file names and contents only, not
// on the directory's location, modes or times.
func HashPackage(dir string) (string, error) {
	files, err := PackageFiles(dir)
	if err != nil {
		return "", err
	}
	return hashFiles(dir, files)
}

// hashPackage is HashPackage of a directory whose symbolic links are
// resolved already (SourceDir's result).
func hashPackage(dir string) (string, error) {
	files, err := packageFiles(dir)
	if err != nil {
		return "", err
	}
	return hashFiles(dir, files)
}

func hashFiles(dir string, files []string) (string, error) {
	return dirhash.Hash1(files, func(name string) (io.ReadCloser, error) {
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		// dirhash copies what it opens with io.Copy, which gives every
		// *os.File a fresh 32 KiB buffer: a small file costs far less
		// read whole.
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= 1<<20 {
			defer f.Close()
			b := make([]byte, fi.Size())
			if _, err := io.ReadFull(f, b); err != nil {
				return nil, err
			}
			return io.NopCloser(bytes.NewReader(b)), nil
		}
		return f, nil
	})
}

// InPackage reports whether the package hash of the directory pkg
// (HashPackage) covers files written to dir: dir is pkg or inside it, and
// no directory on the way down from pkg is one the hash leaves out
// (BuildOutputDirs). Both must be clean absolute paths with symbolic links
// resolved.
func InPackage(pkg, dir string) bool {
	if !within(pkg, dir) {
		return false
	}
	rel, _ := filepath.Rel(pkg, dir)
	if rel == "." {
		return true
	}
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		if slices.Contains(BuildOutputDirs, name) {
			return false
		}
	}
	return true
}

// unhashedTopFile reports whether rel, a file's path relative to a
// package's top, is one the package's hash leaves out: the lockfile, which
// a package at the workspace's root would otherwise hash while it records
// that hash (no plan after an apply would be empty), and the temporary
// files it is written through (lockfileTemp), which a killed apply or lock
// leaves and the next apply removes.
func unhashedTopFile(rel string) bool { return rel == lockfile.FileName || lockfileTemp(rel) }

// lockfileTemp reports whether rel, a path relative to a package's top, is
// a temporary file the lockfile is written through
// (".agentform.lock.hcl.tmp*", safefile.Write's name for it).
func lockfileTemp(rel string) bool {
	ok, _ := filepath.Match("."+lockfile.FileName+".tmp*", rel)
	return ok
}

// within reports whether path is root or inside it. Both must be clean
// absolute paths with symbolic links resolved.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
