package capability

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Policy controls whether a session may change the capabilities an agent
// holds.
type Policy string

// Policy values. The zero value "" behaves like Locked.
const (
	// Locked means session overrides are ignored; this is the default.
	Locked Policy = "locked"
	// Extensible means session overrides are honoured.
	Extensible Policy = "extensible"
)

// Strategy says how a session override combines with the tags an agent holds.
type Strategy string

// Strategy values. The zero value "" behaves like Inherit.
const (
	// Inherit keeps the agent's tags unchanged.
	Inherit Strategy = "inherit"
	// Extend adds the override's tags to the agent's tags.
	Extend Strategy = "extend"
	// Replace swaps the agent's tags for the override's tags.
	Replace Strategy = "replace"
)

// Override is a session-level change to the capabilities of an agent. It is
// honoured only for agents whose policy is Extensible.
type Override struct {
	// Strategy says how Capabilities combine with the agent's tags.
	Strategy Strategy
	// Capabilities are the tags to add (Extend) or to use instead (Replace);
	// they are ignored for Inherit.
	Capabilities []string
}

// String returns the command-line form of o, which ParseOverride reads:
// "inherit", "extend:a,b" or "replace:a,b".
func (o Override) String() string {
	if o.Strategy == "" || o.Strategy == Inherit {
		return string(Inherit)
	}
	return string(o.Strategy) + ":" + strings.Join(o.Capabilities, ",")
}

// ParseOverride parses the command-line form of an override: "inherit",
// "extend:a,b" or "replace:a,b".
//
// Extend and replace need at least one tag, and every tag must pass
// ValidateTag (tags are not trimmed, so "extend:a, b" is rejected). Tags
// are put in Unicode normal form C, as the manifest's are. Inherit
// takes no tag list. Tags are returned in the order given; warnings from
// ValidateTag (such as for "*") are not reported, so callers that want them
// should call ValidateTag on each of the returned Capabilities.
func ParseOverride(s string) (Override, error) {
	name, list, hasList := strings.Cut(s, ":")
	switch st := Strategy(name); st {
	case Inherit:
		if hasList {
			return Override{}, fmt.Errorf("capability override %q: %q takes no capabilities", s, Inherit)
		}
		return Override{Strategy: Inherit}, nil
	case Extend, Replace:
		if list == "" {
			return Override{}, fmt.Errorf("capability override %q: %q needs at least one capability, as in %q", s, st, string(st)+":tag")
		}
		tags := strings.Split(list, ",")
		for i, t := range tags {
			// Composed as the manifest's tags are (HCL normalises its
			// strings to NFC): "café" typed with a combining accent is
			// the manifest's "café".
			t = norm.NFC.String(t)
			tags[i] = t
			if _, err := ValidateTag(t); err != nil {
				return Override{}, fmt.Errorf("capability override %q: %w", s, err)
			}
		}
		return Override{Strategy: st, Capabilities: tags}, nil
	}
	return Override{}, fmt.Errorf("capability override %q: unknown strategy %q: want %q, %q or %q", s, name, Inherit, Extend+":tags", Replace+":tags")
}

// Effective returns the tags an agent holds during a session: holds combined
// with the override o according to policy, sorted and deduplicated. The
// result is never nil. o may be nil, which is the same as Inherit.
//
// Under Extensible, Extend yields the union of holds and o.Capabilities,
// Replace yields o.Capabilities, and Inherit yields holds. Under any other
// policy (Locked, or the zero value) an Extend or Replace override is ignored
// and a non-empty warning says so; Inherit changes nothing and never warns.
// An unknown strategy is ignored with a warning. Effective does not validate
// tags; use ValidateTag or ParseOverride for that.
func Effective(holds []string, policy Policy, o *Override) (tags []string, warning string) {
	if o == nil {
		return normalize(holds), ""
	}
	switch o.Strategy {
	case "", Inherit:
		return normalize(holds), ""
	case Extend, Replace:
		if policy != Extensible {
			p := policy
			if p == "" {
				p = Locked
			}
			return normalize(holds), fmt.Sprintf("capability override %q ignored: agent policy is %q, not %q", o.Strategy, p, Extensible)
		}
		if o.Strategy == Replace {
			return normalize(o.Capabilities), ""
		}
		return normalize(slices.Concat(holds, o.Capabilities)), ""
	}
	return normalize(holds), fmt.Sprintf("capability override ignored: unknown strategy %q", o.Strategy)
}

// normalize returns a sorted, deduplicated, non-nil copy of tags.
func normalize(tags []string) []string {
	out := make([]string, len(tags))
	copy(out, tags)
	slices.Sort(out)
	return slices.Clip(slices.Compact(out))
}
