package planner

import (
	"fmt"
	"slices"
	"strings"
)

// AttributeChange is how one attribute of an address changed since the
// last apply. Values are the attributes' own (Attributes): references for
// runtime() values and digests for what may hold a credential, but a
// tool's config as written. Shown prepares a change for output.
type AttributeChange struct {
	// Name is the attribute ("description", "tools", `tools["get"]`).
	Name string
	// Before and After are the value at the last apply and now; nil when
	// the attribute was not set then, or is not set now. Both are nil for
	// a list attribute and for an agent's tools and skills.
	Before, After *string
	// Unused is set when After is nil because the value is still written
	// but no longer used: a tool block's description that no registered
	// tool takes any more.
	Unused bool
	// Added and Removed are, for a list attribute (capabilities,
	// commands, expose, registered), the items it gained and lost (neither
	// when it was only reordered); for an agent's tools and skills, the
	// addresses created and deleted. Changed lists the updated addresses
	// of an agent's tools and skills.
	Added, Removed, Changed []string
}

// Shown returns c as output shows it: every value and item passed
// through scrub (which may be nil; it hides the manifest's credentials),
// then values abbreviated to about 16 bytes (short, shortPair). Scrubbing
// comes first so that no part of a credential is left in the
// abbreviation.
func (c AttributeChange) Shown(scrub func(string) string) AttributeChange {
	if scrub == nil {
		scrub = func(s string) string { return s }
	}
	all := func(items []string) []string {
		if items == nil {
			return nil
		}
		out := make([]string, len(items))
		for i, s := range items {
			out[i] = scrub(s)
		}
		return out
	}
	out := AttributeChange{Name: c.Name, Unused: c.Unused, Added: all(c.Added), Removed: all(c.Removed), Changed: all(c.Changed)}
	switch {
	case c.Before != nil && c.After != nil:
		b, a := shortPair(scrub(*c.Before), scrub(*c.After))
		out.Before, out.After = &b, &a
	case c.Before != nil:
		b := short(scrub(*c.Before))
		out.Before = &b
	case c.After != nil:
		a := short(scrub(*c.After))
		out.After = &a
	}
	return out
}

// Lines is the change as plan prints it under its address (call it on
// Shown's result): "description: Lists. → Lists files.", "cwd: (none) →
// /srv", "capabilities: + web, - shell", "commands: reordered"; for an
// agent's tools and skills, one line an address ("tool.grep changed"),
// ten at most and then how many more.
func (c AttributeChange) Lines() []string {
	switch {
	case c.Name == "tools" || c.Name == "skills":
		type entry struct{ address, what string }
		var entries []entry
		for _, list := range []struct {
			addrs []string
			what  string
		}{{c.Added, "added"}, {c.Changed, "changed"}, {c.Removed, "removed"}} {
			for _, a := range list.addrs {
				entries = append(entries, entry{a, list.what})
			}
		}
		slices.SortStableFunc(entries, func(x, y entry) int { return strings.Compare(x.address, y.address) })
		var out []string
		for _, e := range entries {
			out = append(out, e.address+" "+e.what)
		}
		return capList(out)
	case c.Before == nil && c.After == nil && !c.Unused:
		var parts []string
		for _, x := range c.Added {
			parts = append(parts, "+ "+x)
		}
		for _, x := range c.Removed {
			parts = append(parts, "- "+x)
		}
		if len(parts) == 0 {
			return []string{c.Name + ": reordered"}
		}
		return []string{c.Name + ": " + strings.Join(parts, ", ")}
	}
	value := func(v *string, none string) string {
		if v == nil {
			return none
		}
		return *v
	}
	after := "(none)"
	if c.Unused {
		after = "(not used)"
	}
	return []string{fmt.Sprintf("%s: %s → %s", c.Name, value(c.Before, "(none)"), value(c.After, after))}
}

// capList keeps long lists of changed parts readable.
func capList(items []string) []string {
	const most = 10
	if len(items) <= most {
		return items
	}
	return append(items[:most:most], fmt.Sprintf("... and %d more", len(items)-most))
}
