package resolve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/adrg/frontmatter"
	"github.com/hashicorp/hcl/v2"
	"gopkg.in/yaml.v3"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/pathfold"
	"github.com/agentform/agentform/lockfile"
)

// skillFileName is the file that defines a skill: YAML front matter (name,
// description, allowed-tools) followed by the instructions.
const skillFileName = "SKILL.md"

// SkillRequest is what resolving one skill needs.
type SkillRequest struct {
	Config *manifest.Config
	Skill  *manifest.Skill
	// Dir is the absolute workspace directory; Root the project root.
	// A skill's source must stay inside Root.
	Dir, Root string
	// Locked is the skill's current lock entry, or nil. ResolveSkill does
	// not consult it: a skill is a local input, and the planner compares
	// it with the resolved Pin.
	Locked *lockfile.Skill
}

// ResolvedSkill is a resolved skill.
type ResolvedSkill struct {
	// Name is the skill's block name (the name in SKILL.md's front matter
	// is only checked against it).
	Name        string
	Description string
	// AllowedTools lists the tools the skill pre-approves, as written in
	// the front matter's allowed-tools, without duplicates.
	AllowedTools []string
	// Files holds SKILL.md and the skill's resources by path relative to
	// the skill directory, with forward slashes.
	Files map[string][]byte
	// Pin is the lock entry: the dirhash of the source directory. nil for
	// inline skills, which the manifest itself pins.
	Pin *lockfile.Skill
}

// ResolveSkill reads a skill. A source skill is a directory with SKILL.md
// whose YAML front matter must give a description and may give name and
// allowed-tools; every file of the directory is a resource, and the
// directory's hash is pinned. An inline skill gets a SKILL.md generated
// from its description and content, plus its resources, and no pin.
// Problems are located at the skill's source argument (or block).
func ResolveSkill(ctx context.Context, req SkillRequest) (*ResolvedSkill, hcl.Diagnostics) {
	s := req.Skill
	if s == nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid skill",
			Detail: "No skill block was given to resolve; this is a bug in agentform."}}
	}
	if err := ctx.Err(); err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Skill resolution cancelled",
			Detail: fmt.Sprintf("Resolving skill %q was cancelled: %s.", s.Name, err), Subject: s.DeclRange.Ptr()}}
	}
	if s.Inline() {
		return resolveInlineSkill(s)
	}
	return resolveSourceSkill(req)
}

func resolveInlineSkill(s *manifest.Skill) (*ResolvedSkill, hcl.Diagnostics) {
	md, err := skillMarkdown(s.Name, s.Description.Value, s.Content.Value)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid skill",
			Detail: fmt.Sprintf("agentform could not write SKILL.md for skill %q: %s.", s.Name, err), Subject: s.DeclRange.Ptr()}}
	}
	files := map[string][]byte{skillFileName: md}
	keys := make([]string, 0, len(s.Resources))
	for k := range s.Resources {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var diags hcl.Diagnostics
	for _, k := range keys {
		p := path.Clean(filepath.ToSlash(k))
		if p == skillFileName {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Conflicting skill resource",
				Detail:  fmt.Sprintf("Skill %q has a resource named %s, but an inline skill's SKILL.md is generated from its description and content. Rename the resource.", s.Name, skillFileName),
				Subject: s.DeclRange.Ptr()})
			continue
		}
		if _, dup := files[p]; dup {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Conflicting skill resource",
				Detail:  fmt.Sprintf("Skill %q has two resources that name the same file %s. Keep one of them.", s.Name, p),
				Subject: s.DeclRange.Ptr()})
			continue
		}
		files[p] = []byte(s.Resources[k])
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return &ResolvedSkill{Name: s.Name, Description: s.Description.Value, Files: files}, nil
}

// skillMarkdown renders a SKILL.md: YAML front matter with name and
// description, a blank line, then content ending in a newline.
func skillMarkdown(name, description, content string) ([]byte, error) {
	fm, err := yaml.Marshal(struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	}{name, description})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(fm)
	b.WriteString("---\n\n")
	b.WriteString(content)
	if !strings.HasSuffix(content, "\n") {
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

func resolveSourceSkill(req SkillRequest) (*ResolvedSkill, hcl.Diagnostics) {
	s := req.Skill
	rng := s.Source.Range
	if rng.Filename == "" {
		rng = s.DeclRange
	}
	fail := func(summary, format string, args ...any) (*ResolvedSkill, hcl.Diagnostics) {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()}}
	}
	root := req.Root
	if root == "" {
		root = ProjectRoot(req.Dir)
	}
	dir, diags := SourceDir(req.Dir, root, s.Source, "skill")
	if diags.HasErrors() {
		return nil, diags
	}
	shown := path.Join(filepath.ToSlash(s.Source.Value), skillFileName)

	names, err := PackageFiles(dir)
	if err != nil {
		return fail("Cannot read skill", "agentform could not list the files of skill %q in %s: %s.", s.Name, s.Source.Value, err)
	}
	if d := shippedFiles(names, s.Source, rng.Ptr(), "skill directory", "skills/"+s.Name+"/"); d.HasErrors() {
		return nil, append(diags, d...)
	}
	diags = append(diags, envFileWarnings(names, s.Source, rng.Ptr(), "skill directory")...)
	files := make(map[string][]byte, len(names))
	for _, name := range names {
		b, err := readInput(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return fail("Cannot read skill", "agentform could not read %s of skill %q: %s.", path.Join(filepath.ToSlash(s.Source.Value), name), s.Name, err)
		}
		files[name] = b
	}
	md, ok := files[skillFileName]
	if !ok {
		for _, name := range names {
			if pathfold.Key(name) == pathfold.Key(skillFileName) {
				// On macOS and Windows the file opens as SKILL.md, but
				// the artifact keeps the name as listed, and serve looks
				// for SKILL.md exactly.
				return fail("Missing SKILL.md", "The skill directory %q has no %s, but has %s: the name must be %s exactly, in this letter case. Rename %s to %s.", s.Source.Value, skillFileName, path.Join(filepath.ToSlash(s.Source.Value), name), skillFileName, name, skillFileName)
			}
		}
		return fail("Missing SKILL.md", "The skill directory %q has no %s. Create %s with YAML front matter (at least a description) followed by the skill's instructions, like:\n\n---\nname: %s\ndescription: What the skill does and when to use it.\n---\n\n# Instructions", s.Source.Value, skillFileName, shown, s.Name)
	}

	fm, problem := parseSkillFrontMatter(md)
	if problem != "" {
		return fail("Invalid SKILL.md", "%s %s", shown, problem)
	}
	if fm.description == "" {
		return fail("Invalid SKILL.md", "%s has no description in its front matter. Add description: with what the skill does and when to use it; agents choose skills by their description.", shown)
	}
	if fm.name != "" && fm.name != s.Name {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Skill name differs from its block",
			Detail:  fmt.Sprintf("%s names the skill %q, but its block is skill %q. agentform registers it as %q; rename the block or change name in SKILL.md so that they agree.", shown, fm.name, s.Name, s.Name),
			Subject: rng.Ptr()})
	}

	hash, err := HashPackage(dir)
	if err != nil {
		return fail("Cannot read skill", "agentform could not hash skill %q in %s: %s.", s.Name, s.Source.Value, err)
	}
	return &ResolvedSkill{
		Name:         s.Name,
		Description:  fm.description,
		AllowedTools: fm.allowedTools,
		Files:        files,
		Pin:          &lockfile.Skill{Source: hash},
	}, diags
}

// skillFrontMatter is what agentform reads from SKILL.md's front matter;
// other keys (license, metadata, compatibility) are left alone.
type skillFrontMatter struct {
	name         string
	description  string
	allowedTools []string
}

// parseSkillFrontMatter reads SKILL.md's YAML front matter with
// github.com/adrg/frontmatter. problem completes "<path> ..." when the
// front matter is missing or invalid, naming the line in SKILL.md.
//
// allowed-tools is accepted in both forms agent-skill tooling writes: a
// YAML list of strings, or one string whose entries are separated by
// commas and/or white space (the Agent Skills specification uses spaces,
// Claude Code commas). Separators inside parentheses do not split, so
// "Bash(git add:*), Read" is two entries.
func parseSkillFrontMatter(md []byte) (skillFrontMatter, string) {
	var out skillFrontMatter
	md = bytes.TrimPrefix(md, []byte("\ufeff"))
	// offset is the number of lines before the YAML: leading blank lines
	// and the opening delimiter, which frontmatter skips.
	offset, opened := 0, false
	for _, line := range strings.SplitAfter(string(md), "\n") {
		offset++
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		opened = t == "---" || t == "---yaml"
		break
	}
	if !opened {
		return out, "has no YAML front matter. Start the file with a --- line, then name: and description:, then another --- line."
	}
	lineOf := func(n *yaml.Node) string { return fmt.Sprintf("line %d", n.Line+offset) }

	var doc yaml.Node
	unmarshal := func(data []byte, v any) error { return yaml.Unmarshal(data, v) }
	formats := []*frontmatter.Format{
		frontmatter.NewFormat("---", "---", unmarshal),
		frontmatter.NewFormat("---yaml", "---", unmarshal),
	}
	if _, err := frontmatter.MustParse(bytes.NewReader(md), &doc, formats...); err != nil {
		if errors.Is(err, frontmatter.ErrNotFound) {
			return out, "has a front matter that is never closed: add a --- line after the last front matter line."
		}
		return out, fmt.Sprintf("has invalid YAML front matter: %s. Fix the YAML between the --- lines.", skillYAMLError(err, offset))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return out, "has an empty front matter. Add at least description: with what the skill does and when to use it."
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return out, fmt.Sprintf("has front matter that is not a mapping (%s): write key: value lines such as description: ....", lineOf(root))
	}
	str := func(key string, v *yaml.Node) (string, string) {
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			return "", ""
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
			return "", fmt.Sprintf("has %s that is not a string (%s). Quote it: %s: \"...\".", key, lineOf(v), key)
		}
		return v.Value, ""
	}
	// YAML does not allow a key twice in a mapping; readers differ on
	// which one counts (the skill's loader may take the last).
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if first := seen[k.Value]; first != nil {
			return out, fmt.Sprintf("has %q twice (%s and %s). Keep one.", k.Value, lineOf(first), lineOf(k))
		}
		seen[k.Value] = k
		var problem string
		switch k.Value {
		case "name":
			out.name, problem = str("name", v)
		case "description":
			out.description, problem = str("description", v)
			out.description = strings.TrimSpace(out.description)
		case "allowed-tools":
			out.allowedTools, problem = skillAllowedTools(v, lineOf)
		}
		if problem != "" {
			return out, problem
		}
	}
	return out, ""
}

// skillAllowedTools reads allowed-tools: a list of strings, or a string of
// entries separated by commas or white space outside parentheses.
func skillAllowedTools(v *yaml.Node, lineOf func(*yaml.Node) string) ([]string, string) {
	var raw []string
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil, ""
	case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
		raw = splitAllowedTools(v.Value)
	case v.Kind == yaml.SequenceNode:
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode || e.Tag != "!!str" {
				return nil, fmt.Sprintf("has an allowed-tools entry that is not a string (%s). Write tool names, like allowed-tools: [Read, \"Bash(git:*)\"].", lineOf(e))
			}
			raw = append(raw, strings.TrimSpace(e.Value))
		}
	default:
		return nil, fmt.Sprintf("has allowed-tools that is neither a list nor a string (%s). Write a list, like allowed-tools: [Read, Grep], or a string, like allowed-tools: Read Grep.", lineOf(v))
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range raw {
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out, ""
}

// splitAllowedTools splits "Read, Grep Bash(git add:*)" into entries at
// commas and white space outside parentheses.
func splitAllowedTools(s string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

// skillYAMLError renders a YAML error with its line counted from the top
// of SKILL.md rather than of the front matter.
func skillYAMLError(err error, offset int) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var n int
	var rest string
	if _, scanErr := fmt.Sscanf(msg, "line %d:", &n); scanErr == nil {
		if i := strings.Index(msg, ":"); i >= 0 {
			rest = msg[i+1:]
		}
		return fmt.Sprintf("line %d:%s", n+offset, rest)
	}
	return msg
}
