package planner

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/lockfile"
)

// Applied is what the last apply recorded in the state database: the base
// a plan diffs against. A zero Applied (no state yet) makes every address
// a create.
type Applied struct {
	Lineage   string
	Serial    uint64
	Resources map[string]AppliedResource
	// Matrix maps each agent to the tools it could call as applied.
	Matrix map[string][]string
	// Tools are the registered tools as applied (the matrix's columns);
	// nil when the state does not record them (written before it did).
	Tools []string
	// Pending is the record of artifact paths an apply wrote or meant to
	// remove and had not settled when it ended (state.DB.Pending): empty
	// unless an apply was interrupted.
	Pending map[string][]string
}

// AppliedResource is one address as applied.
type AppliedResource struct {
	Type, Name, Kind string
	Fingerprint      string
	Attributes       Attributes
	// Lock is an mcp or a2a tool's lock entry as the last apply recorded
	// it; nil for other resources.
	Lock *lockfile.Tool
	// Artifact is the agent's artifact as written, for drift detection.
	Artifact *AppliedArtifact
}

// AppliedArtifact is an artifact file as apply wrote it; Path is relative
// to the workspace.
type AppliedArtifact struct {
	Path   string
	SHA256 string
	Size   int64
}

// ReasonArtifactDrift is the reason of an update caused by an artifact that
// was changed or removed outside agentform.
const ReasonArtifactDrift = "artifact on disk differs from state"

// ReasonArtifactMoved is the reason of an update caused by a new -out-dir.
const ReasonArtifactMoved = "artifact directory changed"

// DefaultOutDir is where artifacts go, relative to the workspace, unless
// -out-dir says otherwise.
const DefaultOutDir = "dist"

// ArtifactPath returns the path of an agent's artifact, slash-separated and
// relative to the workspace (absolute when the output directory is): in the
// plan's -out-dir when one was given, else where it was applied, else
// beside the other applied artifacts, else in DefaultOutDir.
func (p *Plan) ArtifactPath(agent string) string {
	name := agent + ".agent.tgz"
	if p.outDir != "" {
		return filepath.ToSlash(filepath.Join(p.outDir, name))
	}
	if p.Applied != nil {
		if old := p.Applied.Resources["agent."+agent].Artifact; old != nil {
			return old.Path
		}
		var dirs []string
		for _, r := range p.Applied.Resources {
			if r.Artifact != nil {
				dirs = append(dirs, filepath.ToSlash(filepath.Dir(r.Artifact.Path)))
			}
		}
		if len(dirs) > 0 {
			sort.Strings(dirs)
			return dirs[0] + "/" + name
		}
	}
	return DefaultOutDir + "/" + name
}

// Address is one planned address with its fingerprint and attributes, as
// apply records them.
type Address struct {
	Address     string
	Type, Name  string
	Kind        string
	Fingerprint string
	Attributes  Attributes
}

// diffState computes every address's attributes and fingerprint and the
// action against the applied state, and the capability changes of
// reachable (the configuration's matrix, reachableByAgent) against it.
func (p *Plan) diffState(cfg *manifest.Config, ws *resolve.Workspace, applied *Applied, reachable map[string][]string) {
	if applied == nil {
		applied = &Applied{}
	}
	p.Applied = applied
	toolFP := map[string]string{}
	skillFP := map[string]string{}
	// Tools whose block still has a description that no registered tool
	// uses: one that was recorded shows as no longer used, not as removed.
	undescribed := map[string]bool{}
	registered := map[string][]string{}
	for _, rt := range p.Tools {
		registered[rt.Block] = append(registered[rt.Block], rt.Name)
	}
	for _, t := range cfg.Tools {
		var res *resolve.Resolved
		if ws != nil {
			res = ws.Tools[t.Name]
		}
		a := toolAttributes(t, res, registered["tool."+t.Name])
		fp := a.fingerprint()
		undescribed["tool."+t.Name] = descriptionUnused(res) && str(t.Description) != ""
		if old, ok := applied.Resources["tool."+t.Name]; ok && old.Fingerprint != fp {
			switch {
			case maps.Equal(old.Attributes, a):
				// The state is an earlier agentform's, which recorded
				// config credentials in the clear and fingerprinted them
				// so: AppliedFromState hid them, and nothing else
				// differs. The tool is as applied, and so are the agents;
				// the next apply records the attributes as they read now.
				fp = old.Fingerprint
			case onlyUnusedDescription(old.Attributes, a, res):
				// A description no tool uses is all that changed (or the
				// state is an earlier agentform's, which recorded it): the
				// tool is as applied, and so are the agents.
				a, fp = old.Attributes, old.Fingerprint
			}
		}
		toolFP[t.Name] = fp
		p.Addresses = append(p.Addresses, Address{Address: "tool." + t.Name, Type: "tool", Name: t.Name, Kind: t.Kind, Fingerprint: fp, Attributes: a})
	}
	for _, s := range cfg.Skills {
		var res *resolve.ResolvedSkill
		if ws != nil {
			res = ws.Skills[s.Name]
		}
		a := skillAttributes(s, res)
		fp := a.fingerprint()
		skillFP[s.Name] = fp
		p.Addresses = append(p.Addresses, Address{Address: "skill." + s.Name, Type: "skill", Name: s.Name, Kind: "skill", Fingerprint: fp, Attributes: a})
	}
	toolsDigest, skillsDigest := digestOf(toolFP), digestOf(skillFP)
	lockFP := ""
	if p.Lock != nil {
		lockFP = p.Lock.Fingerprint()
	}
	netFP := networkFingerprint(cfg.Network)
	for _, ag := range cfg.Agents {
		a := agentAttributes(ag, toolsDigest, skillsDigest, lockFP)
		// Every artifact carries the workspace's network block, the
		// egress policy serve enforces: a change to it rebuilds them.
		a.set("network", netFP)
		// So do the references it takes from the providers entry of its
		// model, http_server and runtime (agent.json's runtime list).
		a.set("workspace_references", workspaceReferences(cfg, ag))
		p.Addresses = append(p.Addresses, Address{Address: "agent." + ag.Name, Type: "agent", Name: ag.Name, Kind: "agent", Fingerprint: a.fingerprint(), Attributes: a})
	}
	sort.Slice(p.Addresses, func(i, j int) bool { return p.Addresses[i].Address < p.Addresses[j].Address })

	p.ResourceChanges = nil
	seen := map[string]bool{}
	for _, ad := range p.Addresses {
		seen[ad.Address] = true
		rc := ResourceChange{Address: ad.Address, Type: ad.Type, Name: ad.Name, Kind: ad.Kind, ChangedAttributes: []string{}}
		old, ok := applied.Resources[ad.Address]
		switch {
		case !ok:
			rc.Actions, rc.Reasons = []string{ActionCreate}, []string{"new"}
		case old.Fingerprint != ad.Fingerprint:
			rc.Actions, rc.Reasons = []string{ActionUpdate}, []string{"configuration changed"}
			rc.AttributeChanges = changedAttributes(old.Attributes, ad.Attributes)
			for i, c := range rc.AttributeChanges {
				rc.ChangedAttributes = append(rc.ChangedAttributes, c.Name)
				if undescribed[ad.Address] && c.Name == "description" && c.After == nil {
					rc.AttributeChanges[i].Unused = true
				}
			}
		default:
			rc.Actions, rc.Reasons = []string{ActionNoOp}, []string{}
		}
		if ok && ad.Type == "agent" && old.Artifact != nil {
			reason := ""
			switch {
			case artifactDrifted(cfg.Dir, old.Artifact):
				reason = ReasonArtifactDrift
			case p.outDir != "" && filepath.ToSlash(old.Artifact.Path) != p.ArtifactPath(ad.Name):
				reason = ReasonArtifactMoved
			}
			if reason != "" {
				if rc.Actions[0] == ActionNoOp {
					rc.Actions, rc.Reasons = []string{ActionUpdate}, nil
				}
				rc.Reasons = append(rc.Reasons, reason)
			}
		}
		p.ResourceChanges = append(p.ResourceChanges, rc)
	}
	var gone []string
	for addr := range applied.Resources {
		if !seen[addr] {
			gone = append(gone, addr)
		}
	}
	sort.Strings(gone)
	for _, addr := range gone {
		old := applied.Resources[addr]
		p.ResourceChanges = append(p.ResourceChanges, ResourceChange{Address: addr, Type: old.Type, Name: old.Name, Kind: old.Kind,
			Actions: []string{ActionDelete}, Reasons: []string{"removed from configuration"}, ChangedAttributes: []string{}})
	}
	sort.Slice(p.ResourceChanges, func(i, j int) bool { return p.ResourceChanges[i].Address < p.ResourceChanges[j].Address })
	p.nameChangedParts()
	p.Applied = applied
	p.CapabilityChanges = capabilityChanges(applied.Matrix, reachable)
	p.Leftovers = p.LeftoverArtifacts(cfg.Dir, applied.Pending)
}

// artifactDrifted reports whether an agent's artifact is missing or not the
// bytes apply wrote.
func artifactDrifted(dir string, art *AppliedArtifact) bool {
	if art == nil {
		return false
	}
	path := art.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	info, err := os.Stat(path)
	if err != nil || info.Size() != art.Size {
		return true
	}
	sum, err := resolve.SHA256File(path)
	return err != nil || sum != art.SHA256
}

// changedAttributes returns the attributes that differ between two
// attribute sets, by name: a list attribute (isListAttribute) set on both
// sides with the items it gained and lost, an agent's tools and skills
// with nothing yet (nameChangedParts names them), any other attribute
// with its values.
func changedAttributes(old, new Attributes) []AttributeChange {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		if old[k] != new[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := []AttributeChange{}
	for _, k := range names {
		o, okOld := old[k]
		n, okNew := new[k]
		c := AttributeChange{Name: k}
		switch {
		case k == "tools" || k == "skills":
		case okOld && okNew && isListAttribute(k):
			c.Added, c.Removed = listDelta(o, n)
		default:
			if okOld {
				c.Before = &o
			}
			if okNew {
				c.After = &n
			}
		}
		out = append(out, c)
	}
	return out
}

// shortPair abbreviates two different values for display so that they
// still read differently: where short would cut both to the same text (a
// long value that changed past its first characters, such as a config
// object), each is shown from a little before the first difference:
// `…"plain":"plain-NEW"}` → `…"plain":"plain-NEW2"}`.
func shortPair(o, n string) (string, string) {
	so, sn := short(o), short(n)
	if so != sn {
		return so, sn
	}
	p := 0
	for p < len(o) && p < len(n) && o[p] == n[p] {
		p++
	}
	start := max(0, p-8)
	for start > 0 && !utf8.RuneStart(o[start]) {
		start--
	}
	return "…" + short(o[start:]), "…" + short(n[start:])
}

func isListAttribute(k string) bool {
	return k == "capabilities" || k == "commands" || k == "expose" || k == "registered"
}

// listDelta returns the items of a list attribute ("a, b") that new has
// and old lacks, and those old has and new lacks; neither for a list
// that was only reordered.
func listDelta(old, new string) (added, removed []string) {
	o, n := listItems(old), listItems(new)
	for _, x := range n {
		if !slices.Contains(o, x) {
			added = append(added, x)
		}
	}
	for _, x := range o {
		if !slices.Contains(n, x) {
			removed = append(removed, x)
		}
	}
	return added, removed
}

// capabilityChanges compares who may call what in after with before
// (both map agents to the tools they may call): access granted since, and
// access revoked (including every access of an agent that is gone),
// sorted by agent then tool.
func capabilityChanges(before, after map[string][]string) []CapabilityChange {
	names := make([]string, 0, len(after)+len(before))
	for a := range after {
		names = append(names, a)
	}
	for a := range before {
		if _, ok := after[a]; !ok {
			names = append(names, a)
		}
	}
	sort.Strings(names)
	var out []CapabilityChange
	for _, a := range names {
		old, cur := sortedSet(before[a]), sortedSet(after[a])
		i, j := 0, 0
		for i < len(old) || j < len(cur) {
			switch {
			case j == len(cur) || i < len(old) && old[i] < cur[j]:
				out = append(out, CapabilityChange{Agent: a, Tool: old[i], Change: "revoked"})
				i++
			case i == len(old) || cur[j] < old[i]:
				out = append(out, CapabilityChange{Agent: a, Tool: cur[j], Change: "granted"})
				j++
			default:
				i, j = i+1, j+1
			}
		}
	}
	return out
}

// sortedSet returns tools sorted and deduplicated, copying only when they
// are not already.
func sortedSet(tools []string) []string {
	for i := 1; i < len(tools); i++ {
		if tools[i] <= tools[i-1] {
			out := slices.Clone(tools)
			sort.Strings(out)
			return slices.Compact(out)
		}
	}
	return tools
}

// nameChangedParts fills an agent's "tools" and "skills" changes with the
// addresses that changed, taken from their own resource changes.
func (p *Plan) nameChangedParts() {
	parts := map[string]AttributeChange{}
	for _, rc := range p.ResourceChanges {
		if rc.Actions[0] == ActionNoOp || rc.Type == "agent" {
			continue
		}
		name := "tools"
		if rc.Type == "skill" {
			name = "skills"
		}
		c := parts[name]
		switch rc.Actions[0] {
		case ActionCreate:
			c.Added = append(c.Added, rc.Address)
		case ActionUpdate:
			c.Changed = append(c.Changed, rc.Address)
		case ActionDelete:
			c.Removed = append(c.Removed, rc.Address)
		}
		parts[name] = c
	}
	for _, rc := range p.ResourceChanges {
		if rc.Type != "agent" {
			continue
		}
		for i, c := range rc.AttributeChanges {
			if c.Name == "tools" || c.Name == "skills" {
				part := parts[c.Name]
				part.Name = c.Name
				rc.AttributeChanges[i] = part
			}
		}
	}
}

// StoredAttributes returns the attributes a state record holds as a plan
// reads and shows them: a tool's config with its credentials as digests
// (hideConfigCredentials), and its url without the credentials it
// carries (hideURLCredentials), which an earlier agentform stored in the
// clear. The state keeps such a value until the next apply rewrites the
// record; what agentform shows of it never holds it.
func StoredAttributes(typ string, attrs map[string]string) Attributes {
	config, hasConfig := attrs["config"]
	u, hasURL := attrs["url"]
	if typ != "tool" || !hasConfig && !hasURL {
		return Attributes(attrs)
	}
	out := maps.Clone(Attributes(attrs))
	if hasConfig {
		out["config"] = hideConfigCredentials(config)
	}
	if hasURL {
		out["url"] = hideURLCredentials(u)
	}
	return out
}

// Extensible returns the agents whose capability_policy was "extensible" at
// the last apply, as that plan took it: written so, or a runtime()
// reference whose default is "extensible" (a plan assumes the default; a
// secret's, which it never reads, and none give "locked").
func (a *Applied) Extensible() map[string]bool {
	out := map[string]bool{}
	if a == nil {
		return out
	}
	for _, r := range a.Resources {
		if r.Type != "agent" {
			continue
		}
		p := r.Attributes["capability_policy"]
		out[r.Name] = p == manifest.PolicyExtensible ||
			strings.HasPrefix(p, "runtime(") && strings.HasSuffix(p, `, "`+manifest.PolicyExtensible+`")`)
	}
	return out
}

// RuntimeDependent returns, for each agent of the last apply, whether its
// capabilities or its capability_policy came from runtime() (the
// attribute records the reference, not a value).
func (a *Applied) RuntimeDependent() map[string]bool {
	out := map[string]bool{}
	if a == nil {
		return out
	}
	isRef := func(v string) bool { return strings.HasPrefix(v, "runtime(") || strings.HasPrefix(v, "secret(") }
	for _, r := range a.Resources {
		if r.Type == "agent" {
			out[r.Name] = isRef(r.Attributes["capabilities"]) || isRef(r.Attributes["capability_policy"])
		}
	}
	return out
}

// AppliedFromState reads what the last apply recorded in the state
// database, for planning against it; db may be nil (no state yet), which
// gives an empty Applied.
func AppliedFromState(db *state.DB) (*Applied, error) {
	out := &Applied{Resources: map[string]AppliedResource{}, Matrix: map[string][]string{}}
	if db == nil {
		return out, nil
	}
	meta, err := db.Meta()
	if err != nil {
		return nil, err
	}
	out.Lineage, out.Serial = meta.Lineage, meta.Serial
	resources, err := db.Resources()
	if err != nil {
		return nil, err
	}
	for _, r := range resources {
		ar := AppliedResource{Type: r.Type, Name: r.Name, Kind: r.Kind, Fingerprint: r.Fingerprint, Attributes: StoredAttributes(r.Type, r.Attributes)}
		if r.Type == "tool" && (r.Kind == manifest.KindMCP || r.Kind == manifest.KindA2A) && len(r.Lock) > 0 {
			// The remote kinds' entries only: compareLock reads them in
			// place of a missing lock entry. An entry that does not decode
			// is as none.
			var l artifact.Lock
			if json.Unmarshal(r.Lock, &l) == nil {
				ar.Lock = l.Tool()
			}
		}
		if r.Artifact != nil {
			ar.Artifact = &AppliedArtifact{Path: r.Artifact.Path, SHA256: r.Artifact.SHA256, Size: r.Artifact.Size}
		}
		out.Resources[r.Address] = ar
	}
	if out.Matrix, err = db.Matrix(); err != nil {
		return nil, err
	}
	if out.Tools, _, err = db.Tools(); err != nil {
		return nil, err
	}
	if out.Pending, err = db.Pending(); err != nil {
		return nil, err
	}
	return out, nil
}
