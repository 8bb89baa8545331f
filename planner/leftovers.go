package planner

import (
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/agentform/agentform/internal/resolve"
)

// ReasonLeftover says why a plan lists a leftover artifact.
const ReasonLeftover = "written or to be removed by an apply that did not finish; no resource in state owns it"

// ArtifactFile returns the file of an artifact path as recorded in state
// or returned by ArtifactPath (slash-separated, relative to the workspace
// dir unless absolute), made absolute and cleaned, with the symbolic
// links of its directory resolved when it exists, so that two spellings
// of one file compare equal more often. Only FileSet, which also compares
// files by identity, decides whether two paths are one file.
func ArtifactFile(dir, path string) string {
	p := filepath.FromSlash(path)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	p = filepath.Clean(p)
	if parent, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		if abs, err := filepath.Abs(parent); err == nil {
			p = filepath.Join(abs, filepath.Base(p))
		}
	}
	return p
}

// FileSet is a set of artifact files that must not be removed: those state
// owns and those an apply writes. A path is in the set when it names one
// of them as ArtifactFile spells it, or is the same file (os.SameFile: a
// symbolic link to a directory, another spelling on a case-insensitive
// file system, a hard link).
type FileSet struct {
	keys  map[string]bool
	infos []os.FileInfo
}

// NewFileSet returns an empty FileSet.
func NewFileSet() *FileSet { return &FileSet{keys: map[string]bool{}} }

// Add adds the artifact at path (relative to dir unless absolute). A file
// that does not exist yet is known by its path alone.
func (s *FileSet) Add(dir, path string) {
	f := ArtifactFile(dir, path)
	s.keys[f] = true
	if fi, err := os.Stat(f); err == nil {
		s.infos = append(s.infos, fi)
	}
}

// Contains reports whether the artifact at path is one of the set's files.
func (s *FileSet) Contains(dir, path string) bool {
	f := ArtifactFile(dir, path)
	if s.keys[f] {
		return true
	}
	for _, name := range []string{f, filepath.Join(dir, filepath.FromSlash(path))} {
		for _, stat := range []func(string) (os.FileInfo, error){os.Lstat, os.Stat} {
			fi, err := stat(name)
			if err != nil {
				continue
			}
			for _, o := range s.infos {
				if os.SameFile(fi, o) {
					return true
				}
			}
		}
	}
	return false
}

// OwnedArtifacts returns the artifacts applied records, as a FileSet.
func OwnedArtifacts(dir string, applied *Applied) *FileSet {
	owned := NewFileSet()
	if applied == nil {
		return owned
	}
	for _, r := range applied.Resources {
		if r.Artifact != nil {
			owned.Add(dir, r.Artifact.Path)
		}
	}
	return owned
}

// buildsArtifact reports whether applying the plan writes the artifact of
// the agent rc is the change of: a created or updated agent, or one whose
// state records no artifact (as apply decides).
func (p *Plan) buildsArtifact(rc ResourceChange) bool {
	if rc.Type != "agent" {
		return false
	}
	switch rc.Actions[0] {
	case ActionCreate, ActionUpdate:
		return true
	case ActionNoOp:
		return p.Applied == nil || p.Applied.Resources[rc.Address].Artifact == nil
	}
	return false
}

// KeptArtifacts returns the artifacts an apply of this plan must never
// remove: those the applied state owns and those the plan writes.
func (p *Plan) KeptArtifacts(dir string) *FileSet {
	keep := OwnedArtifacts(dir, p.Applied)
	for _, rc := range p.ResourceChanges {
		if p.buildsArtifact(rc) {
			keep.Add(dir, p.ArtifactPath(rc.Name))
		}
	}
	return keep
}

// LeftoverArtifacts returns, sorted, the paths among pending (the record
// interrupted applies left in state, path → digests of the bytes they
// wrote there or meant to remove) that an apply of this plan removes: those
// Removable says may go, given the artifacts the applied state owns and
// those this plan writes. Nothing else is ever a leftover.
func (p *Plan) LeftoverArtifacts(dir string, pending map[string][]string) []string {
	if len(pending) == 0 {
		return nil
	}
	keep := p.KeptArtifacts(dir)
	var out []string
	seen := map[string]bool{}
	for path, digests := range pending {
		f := ArtifactFile(dir, path)
		if seen[f] || !Removable(dir, path, digests, keep) {
			continue
		}
		seen[f] = true
		out = append(out, path)
	}
	sort.Strings(out)
	return out
}

// Removable reports whether the artifact file at path (relative to dir
// unless absolute) may be removed as one an apply wrote, or meant to
// remove, that nothing owns: it is a regular file (not a link), it is none
// of keep's files, and it holds exactly the bytes one of digests
// ("sha256:<hex>") names. A file anyone changed since, or wrote in its
// place, is never removed.
func Removable(dir, path string, digests []string, keep *FileSet) bool {
	if len(digests) == 0 || keep.Contains(dir, path) {
		return false
	}
	if fi, err := os.Lstat(ArtifactFile(dir, path)); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	_, ok := HeldDigest(dir, path, digests)
	return ok
}

// HeldDigest returns the digest of the artifact file at path (relative to
// dir unless absolute) when it is one of digests: the file holds the
// bytes one of them names.
func HeldDigest(dir, path string, digests []string) (string, bool) {
	got, err := resolve.SHA256File(ArtifactFile(dir, path))
	return got, err == nil && got != "" && slices.Contains(digests, got)
}
