package planner

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
)

// SummaryOutDirInSource is the summary of the error for an artifact
// directory inside the source directory of a tool or skill. It has no
// location in the manifest: the directory comes from Options.OutDir (a
// flag, a provider attribute) or from state.
const SummaryOutDirInSource = "Artifact directory inside a source"

// SummaryOutDirNotDirectory is the summary of the error for an artifact
// directory that is a file, or under one.
const SummaryOutDirNotDirectory = "Artifact directory is not a directory"

// DefaultOutDirName is how messages name Options.OutDir when
// Options.OutDirName is empty: the CLI's flag.
const DefaultOutDirName = "-out-dir"

// hashedSource is the source directory of a tool or skill block whose
// files the plan hashes (resolve.HashPackage): a javascript or python
// package, a skill directory.
type hashedSource struct {
	block  string          // "tool.word_count", "skill.research"
	source manifest.String // the source argument as written
	real   string          // absolute, symbolic links resolved
}

// hashedSources lists the source directories the plan hashes, resolved
// as resolution resolves them (resolve.SourceDir): relative to the
// workspace ws, symbolic links followed. A source that cannot be resolved
// is resolution's error, and is left out. Disabled tools are not
// resolved, so not hashed.
func hashedSources(cfg *manifest.Config, ws string) []hashedSource {
	var out []hashedSource
	// Sources mostly share a few parent directories (tools/<name>).
	var reals resolve.RealPaths
	add := func(block string, src manifest.String) {
		p := src.Value
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		// Not cleaned first: resolution follows a link before the ".."
		// after it ("/ws/link/../pkg"), and so does Real.
		if real, _, err := reals.Real(p); err == nil {
			out = append(out, hashedSource{block: block, source: src, real: real})
		}
	}
	for _, t := range cfg.Tools {
		if t.Enabled.Known() && !t.Enabled.Value {
			continue
		}
		switch {
		case t.JavaScript != nil:
			add("tool."+t.Name, t.JavaScript.Source)
		case t.Python != nil:
			add("tool."+t.Name, t.Python.Source)
		}
	}
	for _, s := range cfg.Skills {
		if !s.Inline() {
			add("skill."+s.Name, s.Source)
		}
	}
	return out
}

// realDir resolves the symbolic links of dir, an absolute and clean path
// that may not exist yet (an artifact directory apply will create): those
// of its longest existing ancestor, with the rest joined on. It resolves
// as writing to the lexically cleaned path does, the way apply writes.
func realDir(dir string) string {
	var rest []string
	for d := dir; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		if filepath.Dir(d) == d {
			return dir
		}
		rest = append([]string{filepath.Base(d)}, rest...)
	}
}

// checkOutDirs refuses an -out-dir that is a file or under one (apply
// would find out only after removing the artifacts it moves), and an
// artifact directory that is, or is inside, a source directory the plan
// hashes (hashedSources), unless the hash leaves
// it out (resolve.InPackage): each apply would write artifacts into the
// source, change its hash and so the next plan, which would never be
// empty, and each artifact would carry the ones before it. name is how
// the caller's user sets outDir (DefaultOutDirName, or a provider's
// attribute).
func (p *Plan) checkOutDirs(cfg *manifest.Config, name string) {
	ws, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	if name == "" {
		name = DefaultOutDirName
	}
	if p.outDir != "" {
		// A file where the directory (or one above it) must be: apply
		// would find out only after it removed the artifacts it moves.
		abs := filepath.Clean(p.outDir)
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(ws, abs)
		}
		for d := abs; ; d = filepath.Dir(d) {
			if info, err := os.Stat(d); err == nil {
				if !info.IsDir() {
					what := "is a file"
					if d != abs {
						what = fmt.Sprintf("is under %s, which is a file", d)
					}
					p.Diagnostics = append(p.Diagnostics, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  SummaryOutDirNotDirectory,
						Detail:   fmt.Sprintf("The artifact directory %q (%s) %s, so apply could not write the artifacts there. Choose a path that is a directory, or that does not exist yet.", p.outDir, name, what),
					})
					return
				}
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	sources := hashedSources(cfg, ws)
	if len(sources) == 0 {
		return
	}
	// Each directory the plan writes artifacts to, with what puts them
	// there: the -out-dir given, else where state has them.
	type target struct {
		shown string // as written
		agent string // "" for the -out-dir given
	}
	targets := map[string]target{}
	if p.outDir != "" {
		targets[filepath.Clean(p.outDir)] = target{shown: p.outDir}
	} else {
		for _, a := range cfg.Agents {
			d := filepath.Dir(filepath.FromSlash(p.ArtifactPath(a.Name)))
			if _, ok := targets[d]; !ok {
				targets[d] = target{shown: filepath.ToSlash(d), agent: a.Name}
			}
		}
	}
	dirs := make([]string, 0, len(targets))
	for d := range targets {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		abs := d
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(ws, abs)
		}
		real := realDir(abs)
		for _, src := range sources {
			if !resolve.InPackage(src.real, real) {
				continue
			}
			t := targets[d]
			where := fmt.Sprintf("The artifact directory %q (%s)", t.shown, name)
			advice := fmt.Sprintf("Choose a directory outside the source of every tool and skill, such as %q.", DefaultOutDir)
			if t.agent != "" {
				where = fmt.Sprintf("The artifacts of agent.%s are in %q, where an earlier apply put them: that directory", t.agent, t.shown)
				advice = fmt.Sprintf("Apply with %s set to a directory outside the source of every tool and skill, such as %q, to move them there.", name, DefaultOutDir)
			}
			p.Diagnostics = append(p.Diagnostics, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  SummaryOutDirInSource,
				Detail: fmt.Sprintf("%s is inside the source of %s (%q), whose files agentform hashes: %s is inside %s. "+
					"Every apply would write artifacts into %s and so change it, no plan would ever be empty, and each artifact "+
					"would hold the ones before it. %s",
					where, src.block, src.source.Value, real, src.real, src.block, advice),
			})
			break
		}
	}
}

// SourceHolding returns the tool or skill block whose source directory the
// plan hashes (a javascript or python package, a skill directory) would
// hold a file written at file, an absolute path or one relative to cfg's
// workspace: its address ("tool.search") and source argument. ok is false
// when the file would be outside every such source, or in a directory
// their hashes leave out (resolve.InPackage). A file written there, such
// as a saved plan or an audit report, would change the source's hash, so
// the next plan, and be packaged with it.
func SourceHolding(cfg *manifest.Config, file string) (block string, source manifest.String, ok bool) {
	ws, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return "", manifest.String{}, false
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(ws, file)
	}
	// Where the file would be written: its directory as the system finds
	// it (a link at the name itself is replaced, not followed).
	dir := realDir(filepath.Dir(filepath.Clean(file)))
	for _, src := range hashedSources(cfg, ws) {
		if resolve.InPackage(src.real, dir) {
			return src.block, src.source, true
		}
	}
	return "", manifest.String{}, false
}
