package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
)

// compareLock computes the lockfile the resolution implies and compares it
// with the one on disk. A remote definition (mcp tool list, a2a card) that
// changed since the lock is an error: trust on first use. With
// -lockfile=readonly any difference is an error.
func (p *Plan) compareLock(cfg *manifest.Config, opts Options) {
	current := opts.Lock
	if current == nil {
		current = lockfile.New()
	}
	p.lockRead = current
	p.Lock = opts.Resolution.Pins(cfg, current)
	p.LockChanges = lockfile.Diff(current, p.Lock)

	drifted := map[string]bool{}
	for _, t := range cfg.Tools {
		old := current.Tools[t.Name]
		if old != nil && old.Kind != t.Kind {
			// An entry of another kind (the block changed kind, or the
			// entry was edited or copied from elsewhere) pins nothing of
			// this block, and is replaced: as no entry, so that what the
			// last apply recorded stands in for it.
			old = nil
		}
		res := opts.Resolution.Tools[t.Name]
		if res != nil && res.Pin == nil && old == nil {
			// Neither lock entry nor answer (the server unreachable,
			// -refresh=false): applying would record the block without
			// what the last apply pinned, and the next answer would have
			// nothing to be compared with.
			if d := unverifiedSinceApply(t, opts.Applied); d != nil {
				p.Diagnostics = append(p.Diagnostics, d)
			}
			continue
		}
		if res == nil || res.Pin == nil || res.FromLock {
			continue
		}
		var d hcl.Diagnostics
		applied := appliedLock(opts.Applied, t)
		switch {
		case old != nil, applied == nil:
		case t.Kind == manifest.KindMCP:
			// No lock entry: the one the last apply recorded stands in.
			locked := resolve.MCPLockedWithout(applied, slices.Concat(res.Unpinnable, unexposed(t, applied)))
			d = resolve.MCPDriftSinceApplyEntry(t.Name, locked, res.Pin, t.DeclRange)
		case t.Kind == manifest.KindA2A:
			d = resolve.A2ADriftSinceApplyEntry(t.Name, applied, res.Pin, t.DeclRange)
		}
		if old == nil {
			if d.HasErrors() {
				drifted["tool."+t.Name] = true
				p.Drift = append(p.Drift, driftErrors(d)...)
			}
			p.Diagnostics = append(p.Diagnostics, d...)
			continue
		}
		switch t.Kind {
		case manifest.KindMCP:
			// Tools an earlier agentform pinned under a name the lockfile
			// cannot hold are left out now, with a warning, and tools
			// expose no longer lists leave the lock: neither is drift.
			// And the entry is shown without text that quotes a runtime
			// value (LockShown).
			shown := old
			if res.LockShown != nil {
				shown = res.LockShown
			}
			d = resolve.MCPDrift(t.Name, resolve.MCPLockedWithout(shown, slices.Concat(res.Unpinnable, unexposed(t, old))), res.Pin, t.DeclRange)
		case manifest.KindA2A:
			d = resolve.A2ADrift(t.Name, old, res.Pin, t.DeclRange)
		}
		if d.HasErrors() {
			drifted["tool."+t.Name] = true
			p.Drift = append(p.Drift, driftErrors(d)...)
		}
		p.Diagnostics = append(p.Diagnostics, d...)
	}
	if !opts.LockReadonly {
		return
	}
	for _, c := range p.LockChanges {
		if drifted[c.Address] {
			continue
		}
		what := map[string]string{"add": "is not in", "remove": "is no longer in the configuration but still in", "update": "differs from"}[c.Action]
		detail := fmt.Sprintf("-lockfile=readonly: %s %s %s.", c.Address, what, lockfile.FileName)
		stale := ""
		if c.Action == "remove" {
			stale = staleEntry(cfg, current, c.Address)
		}
		switch {
		case stale != "":
			detail = "-lockfile=readonly: " + stale
		case c.Action == lockfile.ActionUpdate && len(c.Attributes) > 0:
			// An entry added or removed whole changes every attribute:
			// only an update's list says something.
			detail += fmt.Sprintf(" Changed: %s.", strings.Join(c.Attributes, ", "))
		}
		detail += " Run \"agentform lock\" (after reviewing the change) and commit " + lockfile.FileName + "."
		p.Diagnostics = append(p.Diagnostics, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Lockfile out of date",
			Detail:   detail,
			Subject:  declRange(cfg, c.Address),
		})
	}
}

// unverifiedSinceApply is the error of an mcp or a2a block that has no
// lock entry and did not resolve now, when the last apply recorded what it
// served (its tools' digests, its card's): nil otherwise.
func unverifiedSinceApply(t *manifest.Tool, applied *Applied) *hcl.Diagnostic {
	locked := appliedLock(applied, t)
	if locked == nil {
		return nil
	}
	var what string
	switch t.Kind {
	case manifest.KindMCP:
		n := len(locked.Served)
		if n == 0 {
			return nil
		}
		what = fmt.Sprintf("the %d %s it served", n, map[bool]string{true: "tool", false: "tools"}[n == 1])
	case manifest.KindA2A:
		if locked.Card == "" {
			return nil
		}
		what = "its agent card's digest"
	default:
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Remote tool not verified",
		Detail: fmt.Sprintf("%s has no entry for tool %q (it was removed, or replaced by an entry of another kind, or the file deleted), and what the block serves could not be read now (see the warning). The last apply recorded %s: applying without them would forget it, and a definition changed since would then be accepted unseen. Restore the entry from version control, or plan where the server can be reached (with its runtime values set, without -refresh=false), so that what it serves is compared with the last apply.",
			lockfile.FileName, t.Name, what),
		Subject: t.DeclRange.Ptr(),
	}
}

// appliedLock is the lock entry the last apply recorded for an mcp or a2a
// tool of the kind it is now; nil when state records none.
func appliedLock(applied *Applied, t *manifest.Tool) *lockfile.Tool {
	if applied == nil {
		return nil
	}
	r, ok := applied.Resources["tool."+t.Name]
	if !ok || r.Kind != t.Kind || r.Lock == nil || r.Lock.Kind != t.Kind {
		return nil
	}
	return r.Lock
}

// staleEntry says why the lock entry of a block still in the
// configuration is to be removed: a tool of another kind now, an inline
// skill, or a block that pins nothing; "" when the block is gone.
func staleEntry(cfg *manifest.Config, current *lockfile.File, address string) string {
	typ, name, _ := strings.Cut(address, ".")
	switch typ {
	case "tool":
		t := cfg.Tool(name)
		if t == nil {
			return ""
		}
		if old := current.Tools[name]; old != nil && old.Kind != t.Kind {
			return fmt.Sprintf("%s is %s tool now, but %s still has its %s entry.", address, manifest.KindWithArticle(t.Kind), lockfile.FileName, old.Kind)
		}
	case "skill":
		i := slices.IndexFunc(cfg.Skills, func(s *manifest.Skill) bool { return s.Name == name })
		if i < 0 {
			return ""
		}
		if cfg.Skills[i].Inline() {
			return fmt.Sprintf("%s is an inline skill now, which has nothing to pin, but %s still has an entry for it.", address, lockfile.FileName)
		}
	default:
		return ""
	}
	return fmt.Sprintf("%s pins nothing now, but %s still has an entry for it.", address, lockfile.FileName)
}

// declRange returns the block range of an address, or nil when the block
// is gone from the configuration.
func declRange(cfg *manifest.Config, address string) *hcl.Range {
	typ, name, _ := strings.Cut(address, ".")
	switch typ {
	case "tool":
		if t := cfg.Tool(name); t != nil {
			return t.DeclRange.Ptr()
		}
	case "skill":
		for _, s := range cfg.Skills {
			if s.Name == name {
				return s.DeclRange.Ptr()
			}
		}
	}
	return nil
}

func driftErrors(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}

// unexposed lists the tools an mcp block's lock entry pins that its expose
// list, when it has one, no longer names.
func unexposed(t *manifest.Tool, locked *lockfile.Tool) []string {
	if t.MCP == nil || !(t.MCP.Expose.Set || len(t.MCP.Expose.Values) > 0) {
		return nil
	}
	var out []string
	for name := range locked.Served {
		if !slices.Contains(t.MCP.Expose.Values, name) {
			out = append(out, name)
		}
	}
	return out
}
