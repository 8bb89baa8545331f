package lockfile

import (
	"sort"
	"strings"
)

// Change is one difference between two lockfiles, at one entry.
type Change struct {
	// Address is the entry's address: "tool.adder", "skill.arithmetic".
	Address string
	// Action is "add", "remove" or "update".
	Action string
	// Attributes names what changed, in the order the lockfile writes
	// attributes, map entries by key: "source", "bundle",
	// `server.version`, "hashed_fields", `tools["create_issue"]`,
	// `definitions["create_issue"]`. For an add it lists every attribute of
	// the new entry, for a remove every attribute of the old one.
	Attributes []string
}

// Actions of a Change.
const (
	ActionAdd    = "add"
	ActionRemove = "remove"
	ActionUpdate = "update"
)

// AttrChange is one attribute that differs between two lock entries, with
// its old and new values in full ("" when absent on that side).
type AttrChange struct {
	// Name is the attribute's name as in Change.Attributes.
	Name string
	// Old and New are the values: strings as written (hashes, names),
	// hashed_fields as an HCL list (`["description", "name"]`).
	Old, New string
}

// attr is one flattened attribute of an entry.
type attr struct {
	// rank orders attributes: the index in toolAttrOrder.
	rank  int
	name  string
	value string
}

// rank of each top-level tool attribute; server.name and server.version
// share server's.
var attrRank = func() map[string]int {
	m := map[string]int{}
	for i, n := range toolAttrOrder {
		m[n] = i
	}
	return m
}()

// toolAttrs flattens a tool into its set attributes, in the order the
// lockfile writes them: map entries become `tools["name"]`, the server
// object server.name and server.version. Strings are canonical (see
// canon), so that a File equals what Parse reads back from its Bytes.
func toolAttrs(t *Tool) []attr {
	if t == nil {
		return nil
	}
	var out []attr
	add := func(name, value string) {
		if value != "" {
			out = append(out, attr{attrRank[name], name, canon(value)})
		}
	}
	add("kind", t.Kind)
	add("source", t.Source)
	add("deps", t.Deps)
	add("bundle", t.Bundle)
	add("bundler", t.Bundler)
	add("uv_lock", t.UVLock)
	add("interpreter", t.Interpreter)
	if t.ServerName != "" {
		out = append(out, attr{attrRank["server"], "server.name", canon(t.ServerName)})
	}
	if t.ServerVersion != "" {
		out = append(out, attr{attrRank["server"], "server.version", canon(t.ServerVersion)})
	}
	if fields := normalFields(t.HashedFields); len(fields) > 0 {
		quotedFields := make([]string, len(fields))
		for i, f := range fields {
			quotedFields[i] = hclQuote(f)
		}
		out = append(out, attr{attrRank["hashed_fields"], "hashed_fields", "[" + strings.Join(quotedFields, ", ") + "]"})
	}
	for _, e := range entries(t.Served, func(s string) bool { return s == "" }) {
		out = append(out, attr{attrRank["tools"], "tools[" + hclQuote(e.name) + "]", canon(e.value)})
	}
	for _, e := range entries(t.Definitions, func(s string) bool { return s == "" }) {
		out = append(out, attr{attrRank["definitions"], "definitions[" + hclQuote(e.name) + "]", canonJSON(e.value)})
	}
	add("card", t.Card)
	add("card_name", t.CardName)
	add("card_version", t.CardVersion)
	add("card_json", canonJSON(t.CardJSON))
	return out
}

func skillAttrs(s *Skill) []attr {
	if s == nil || s.Source == "" {
		return nil
	}
	return []attr{{attrRank["source"], "source", canon(s.Source)}}
}

// hclQuote returns s as an HCL quoted string.
func hclQuote(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' || c == '$' || c == '%' {
			plain = false
			break
		}
	}
	if plain {
		return `"` + s + `"`
	}
	return string(quoted(s).Bytes())
}

// changedAttrs compares two flattened entries.
func changedAttrs(old, new []attr) []AttrChange {
	type pair struct {
		rank     int
		old, new *attr
	}
	byName := map[string]*pair{}
	for i := range old {
		a := &old[i]
		byName[a.name] = &pair{rank: a.rank, old: a}
	}
	for i := range new {
		a := &new[i]
		if p, ok := byName[a.name]; ok {
			p.new = a
		} else {
			byName[a.name] = &pair{rank: a.rank, new: a}
		}
	}
	var out []AttrChange
	ranks := map[string]int{}
	for name, p := range byName {
		var o, n string
		if p.old != nil {
			o = p.old.value
		}
		if p.new != nil {
			n = p.new.value
		}
		if o != n {
			out = append(out, AttrChange{Name: name, Old: o, New: n})
			ranks[name] = p.rank
		}
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := ranks[out[i].Name], ranks[out[j].Name]
		if ri != rj {
			return ri < rj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// ChangedAttributes returns the attributes that differ between two lock
// entries of a tool, in the order the lockfile writes them (map entries
// sorted by key), with the old and new values in full. A nil tool has no
// attributes, so ChangedAttributes(nil, t) lists all of t's. Strings are
// compared as the lockfile stores them (NFC-normalised), and hashed_fields
// as a set.
func ChangedAttributes(old, new *Tool) []AttrChange {
	return changedAttrs(toolAttrs(old), toolAttrs(new))
}

// ChangedSkillAttributes is ChangedAttributes for skill entries.
func ChangedSkillAttributes(old, new *Skill) []AttrChange {
	return changedAttrs(skillAttrs(old), skillAttrs(new))
}

// Equal reports whether two tool entries pin the same things: every
// attribute the lockfile would write is the same. A nil tool equals one
// with nothing set.
func (t *Tool) Equal(o *Tool) bool {
	return len(ChangedAttributes(t, o)) == 0
}

// Equal reports whether two skill entries pin the same source. A nil skill
// equals one with nothing set.
func (s *Skill) Equal(o *Skill) bool {
	return len(ChangedSkillAttributes(s, o)) == 0
}

// Equal reports whether two lockfiles have the same entries, which holds
// exactly when their Bytes are equal. A nil File equals an empty one.
func (f *File) Equal(o *File) bool {
	return len(Diff(f, o)) == 0
}

// Diff returns the entries that differ from old to new, sorted by
// address: "add" for an entry only in new, "remove" for one only in old,
// "update" for one whose attributes changed. Nil files, nil entries and
// entries with nothing set count as absent.
func Diff(old, new *File) []Change {
	var changes []Change
	diffEntries(&changes, "skill.", skillMap(old), skillMap(new), skillAttrs)
	diffEntries(&changes, "tool.", toolMap(old), toolMap(new), toolAttrs)
	sort.Slice(changes, func(i, j int) bool { return changes[i].Address < changes[j].Address })
	return changes
}

func skillMap(f *File) map[string]*Skill {
	if f == nil {
		return nil
	}
	return f.Skills
}

func toolMap(f *File) map[string]*Tool {
	if f == nil {
		return nil
	}
	return f.Tools
}

func diffEntries[V interface{ empty() bool }](changes *[]Change, prefix string, old, new map[string]V, flatten func(V) []attr) {
	isEmpty := func(v V) bool { return v.empty() }
	oldByName := map[string]V{}
	for _, e := range entries(old, isEmpty) {
		oldByName[e.name] = e.value
	}
	newByName := map[string]V{}
	for _, e := range entries(new, isEmpty) {
		newByName[e.name] = e.value
	}
	names := func(list []AttrChange) []string {
		out := make([]string, len(list))
		for i, c := range list {
			out[i] = c.Name
		}
		return out
	}
	for name, o := range oldByName {
		n, ok := newByName[name]
		if !ok {
			*changes = append(*changes, Change{Address: prefix + name, Action: ActionRemove,
				Attributes: names(changedAttrs(flatten(o), nil))})
			continue
		}
		if attrs := changedAttrs(flatten(o), flatten(n)); len(attrs) > 0 {
			*changes = append(*changes, Change{Address: prefix + name, Action: ActionUpdate, Attributes: names(attrs)})
		}
	}
	for name, n := range newByName {
		if _, ok := oldByName[name]; !ok {
			*changes = append(*changes, Change{Address: prefix + name, Action: ActionAdd,
				Attributes: names(changedAttrs(nil, flatten(n)))})
		}
	}
}
