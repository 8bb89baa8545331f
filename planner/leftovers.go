package planner

import (
	"os"
	"path/filepath"
	"sort"
)

// ReasonLeftover says why a plan lists a leftover artifact.
const ReasonLeftover = "written or to be removed by an apply that did not finish; no resource in state owns it"

// ArtifactFile returns the file of an artifact path as recorded in state
// or returned by ArtifactPath (slash-separated, relative to the workspace
// dir unless absolute), made absolute and cleaned so that two spellings
// of one file compare equal.
func ArtifactFile(dir, path string) string {
	p := filepath.FromSlash(path)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// OwnedArtifacts returns the files of the artifacts applied records
// (ArtifactFile), keyed by file.
func OwnedArtifacts(dir string, applied *Applied) map[string]bool {
	owned := map[string]bool{}
	if applied == nil {
		return owned
	}
	for _, r := range applied.Resources {
		if r.Artifact != nil {
			owned[ArtifactFile(dir, r.Artifact.Path)] = true
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

// LeftoverArtifacts returns, sorted, the paths among pending (the record
// an interrupted apply left in state, Applied.Pending) that an apply of
// this plan removes: those no resource in the applied state owns, that
// this plan does not write again, and that exist as regular files in the
// workspace dir. Nothing else is ever a leftover: pending only holds
// paths of artifacts agentform wrote or was about to write.
func (p *Plan) LeftoverArtifacts(dir string, pending []string) []string {
	if len(pending) == 0 {
		return nil
	}
	skip := OwnedArtifacts(dir, p.Applied)
	for _, rc := range p.ResourceChanges {
		if p.buildsArtifact(rc) {
			skip[ArtifactFile(dir, p.ArtifactPath(rc.Name))] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, path := range pending {
		f := ArtifactFile(dir, path)
		if skip[f] || seen[f] {
			continue
		}
		seen[f] = true
		if fi, err := os.Lstat(f); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, path)
	}
	sort.Strings(out)
	return out
}
