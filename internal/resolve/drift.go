package resolve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/aymanbagabas/go-udiff"
	"github.com/hashicorp/hcl/v2"
	"golang.org/x/text/unicode/norm"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/mcpwire"
	"github.com/agentform/agentform/lockfile"
)

// mcpDriftFields is the order in which a changed tool's fields are shown.
var mcpDriftFields = []string{"name", "description", "inputSchema", "outputSchema", "annotations"}

// mcpDriftAdvice ends every MCP drift diagnostic.
const mcpDriftAdvice = "An MCP server that changes a tool's definition after it was trusted may be poisoning it (a \"rug pull\"). Review the change, then run `agentform lock -upgrade` to accept it."

// MCPDrift compares an mcp block's lock entry with what was resolved now
// (current is Resolved.Pin of a live resolution). MCP tool lists are
// trust-on-first-use, so every served tool that changed, appeared or
// disappeared since the lock is one error located at rng, whose detail
// shows old beside new: a unified diff of the description and of each
// pretty-printed schema or annotations object that changed (or the whole
// definition of an added or removed tool). A changed server name or
// version is a warning, reported first (mcpIdentityChange). Diagnostics
// are ordered by served tool name. Nothing is reported when locked or
// current is nil.
func MCPDrift(block string, locked, current *lockfile.Tool, rng hcl.Range) hcl.Diagnostics {
	if locked == nil || current == nil {
		return nil
	}
	if d := mcpFieldsNarrowed(block, locked, rng); d != nil {
		return hcl.Diagnostics{d}
	}
	var diags hcl.Diagnostics
	if d := mcpIdentityChange(block, locked, current, rng); d != nil {
		diags = append(diags, d)
	}
	// An entry without the list (written by hand) is taken as hashing
	// what agentform hashes.
	lockedFields, currentFields := locked.HashedFields, current.HashedFields
	if len(lockedFields) == 0 {
		lockedFields = MCPHashedFields
	}
	if len(currentFields) == 0 {
		currentFields = MCPHashedFields
	}
	sameFields := slices.Equal(lockedFields, currentFields)
	names := map[string]bool{}
	for n := range locked.Served {
		names[n] = true
	}
	for n := range current.Served {
		names[n] = true
	}
	for _, name := range sortedKeys(names) {
		oldDigest, inOld := locked.Served[name]
		newDigest, inNew := current.Served[name]
		oldDef, hasOld := locked.Definitions[name]
		newDef, hasNew := current.Definitions[name]
		switch {
		case !inNew:
			detail := fmt.Sprintf("Tool %q no longer serves %q, which %s pins.", block, name, lockfile.FileName)
			if hasOld {
				detail += " It was:\n\n" + mcpShowDefinition(oldDef)
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "MCP tool removed since lock",
				Detail:   detail + "\n\n" + mcpDriftAdvice,
				Subject:  rng.Ptr(),
				Extra:    DriftDetail{Block: block, Served: name},
			})
		case !inOld:
			detail := fmt.Sprintf("Tool %q now serves %q, which %s does not pin: the server added it, or it was newly listed in expose.", block, name, lockfile.FileName)
			if hasNew {
				detail += " It is:\n\n" + mcpShowDefinition(newDef)
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "MCP tool added since lock",
				Detail:   detail + "\n\n" + mcpDriftAdvice,
				Subject:  rng.Ptr(),
				Extra:    DriftDetail{Block: block, Served: name},
			})
		default:
			changed := oldDigest != newDigest
			if !sameFields {
				// Digests over different field sets cannot be compared:
				// compare the definitions over the fields both cover.
				changed = !hasOld || !hasNew || !mcpSameOver(oldDef, newDef, lockedFields, currentFields)
			}
			if !changed {
				continue
			}
			detail := fmt.Sprintf("The definition of %q served by tool %q changed since %s pinned it (%s, now %s).", name, block, lockfile.FileName, oldDigest, newDigest)
			switch {
			case hasOld && hasNew && oldDef == newDef && sameFields:
				// The server serves what the entry records: the entry's
				// digest is what changed.
				detail = fmt.Sprintf("%s records the definition of %q served by tool %q as the server serves it now, but under another digest (%s, the definition's is %s): the entry's digest was edited. Review the file's history; if the definition is what you trust, run `agentform lock -upgrade` to record its digest again.", lockfile.FileName, name, block, oldDigest, newDigest)
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "MCP lock entry does not match its digests",
					Detail:   detail,
					Subject:  rng.Ptr(),
					Extra:    DriftDetail{Block: block, Served: name},
				})
				continue
			case hasOld && hasNew:
				detail += "\n\n" + mcpDefinitionDiff(oldDef, newDef)
			case hasNew:
				detail += " The lock holds only the old digest, so only the new definition can be shown:\n\n" + mcpShowDefinition(newDef)
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "MCP tool changed since lock",
				Detail:   strings.TrimRight(detail, "\n") + "\n\n" + mcpDriftAdvice,
				Subject:  rng.Ptr(),
				Extra:    DriftDetail{Block: block, Served: name},
			})
		}
	}
	return diags
}

// MCPDriftSinceApplyEntry is MCPDrift for an mcp block the lockfile has
// no entry for, against the lock entry the last apply recorded in state
// (applied): the same errors, old beside new, worded for the last apply.
// The server's identity, which apply records again, is not compared.
func MCPDriftSinceApplyEntry(block string, applied, current *lockfile.Tool, rng hcl.Range) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range MCPDrift(block, applied, current, rng) {
		if d.Severity != hcl.DiagError {
			continue
		}
		out = append(out, sinceApply(d, block, strings.NewReplacer(
			"which "+lockfile.FileName+" pins", "which the last apply recorded",
			"which "+lockfile.FileName+" does not pin", "which the last apply did not record",
			"since "+lockfile.FileName+" pinned it", "since the last apply recorded it",
			"The lock holds only the old digest", "The last apply recorded only its digest",
			"--- locked/", "--- applied/",
			mcpDriftAdvice, sinceApplyAdvice+mcpDriftAdvice,
			// mcpFieldsNarrowed's words.
			fmt.Sprintf("The entry for %q in %s has hashed_fields", block, lockfile.FileName), "The entry it recorded has hashed_fields",
			"so the list was edited", "so the list was edited (in the lockfile the apply read, or in state)",
			"Review the file's history; to pin", "To pin",
		)))
	}
	return out
}

// sinceApply rewords a drift error against the lockfile as one against
// the last apply: its summary, its detail (with words), and its Extra.
func sinceApply(d *hcl.Diagnostic, block string, words *strings.Replacer) *hcl.Diagnostic {
	c := *d
	c.Summary = strings.Replace(d.Summary, " since lock", " since last apply", 1)
	c.Detail = sinceApplyLead(block) + " " + words.Replace(d.Detail)
	if dd, ok := d.Extra.(DriftDetail); ok {
		dd.SinceApply = true
		c.Extra = dd
	}
	return &c
}

// sinceApplyLead opens every drift diagnostic against the last apply.
func sinceApplyLead(block string) string {
	return fmt.Sprintf("%s has no entry for tool %q (it was removed, or replaced by an entry of another kind, or the file deleted), so what the server serves now is compared with what the last apply recorded in state.", lockfile.FileName, block)
}

// sinceApplyAdvice ends every drift diagnostic against the last apply.
const sinceApplyAdvice = "Removing a lock entry does not accept a change. "

// mcpIdentityChange warns that the server's self-reported name or version
// (serverInfo) is not the one locked, saying which changed; nil when
// neither did. It is no drift error: what a server says of itself pins
// none of its tools, whose definitions MCPDrift compares one by one, so
// the plan stays applyable and apply or lock records the new identity
// (under -lockfile=readonly, the planner's lock comparison fails on it).
func mcpIdentityChange(block string, locked, current *lockfile.Tool, rng hcl.Range) *hcl.Diagnostic {
	nameChanged := locked.ServerName != current.ServerName
	versionChanged := locked.ServerVersion != current.ServerVersion
	var what, was, now string
	switch {
	case nameChanged && versionChanged:
		what = "name and version"
		was, now = mcpIdentity(locked), mcpIdentity(current)
	case nameChanged:
		what = "name"
		was, now = fmt.Sprintf("name %q", locked.ServerName), fmt.Sprintf("%q", current.ServerName)
	case versionChanged:
		what = "version"
		was, now = fmt.Sprintf("version %q", locked.ServerVersion), fmt.Sprintf("%q", current.ServerVersion)
	default:
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  fmt.Sprintf("MCP server %s changed since lock", what),
		Detail: fmt.Sprintf("The MCP server behind tool %q reported %s when it was locked and reports %s now. A server's name and version are what it says of itself and pin none of its tools: each tool's definition is compared with the lock on its own, and a change to one is reported separately, as an error. agentform apply (or agentform lock) records the new %s in %s; under -lockfile=readonly the difference fails the plan until that is done and committed.",
			block, was, now, what, lockfile.FileName),
		Subject: rng.Ptr(),
		Extra:   DriftDetail{Block: block},
	}
}

// mcpIdentity renders a server's self-reported name and version.
func mcpIdentity(t *lockfile.Tool) string {
	return fmt.Sprintf("name %q version %q", t.ServerName, t.ServerVersion)
}

// mcpFields decodes a canonical definition into its fields; a definition
// that does not parse is shown as text under "definition".
func mcpFields(def string) map[string]any {
	v, err := mcpwire.DecodeJSON([]byte(def))
	if obj, ok := v.(map[string]any); err == nil && ok {
		return obj
	}
	return map[string]any{"definition": def}
}

// mcpFieldText renders one field for display: a description as its text,
// anything else as indented JSON; "" when absent. The text ends with a
// newline unless empty.
func mcpFieldText(field string, v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok && (field == "description" || field == "name" || field == "definition") {
		return strings.TrimSuffix(s, "\n") + "\n"
	}
	canon, err := mcpwire.CanonicalJSON(v)
	if err != nil {
		return fmt.Sprintf("%v\n", v)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, canon, "", "  "); err != nil {
		return string(canon) + "\n"
	}
	return out.String() + "\n"
}

// mcpShowDefinition renders a whole definition, field by field.
func mcpShowDefinition(def string) string {
	fields := mcpFields(def)
	var b strings.Builder
	for _, f := range mcpOrderedFields(fields) {
		text := mcpFieldText(f, fields[f])
		if text == "" {
			continue
		}
		fmt.Fprintf(&b, "%s:\n%s", f, mcpIndent(text))
	}
	return strings.TrimRight(b.String(), "\n")
}

// mcpDefinitionDiff renders a unified diff of each field that changed.
func mcpDefinitionDiff(oldDef, newDef string) string {
	oldF, newF := mcpFields(oldDef), mcpFields(newDef)
	all := map[string]any{}
	for k := range oldF {
		all[k] = true
	}
	for k := range newF {
		all[k] = true
	}
	var b strings.Builder
	for _, f := range mcpOrderedFields(all) {
		if mcpFieldSame(oldF[f], newF[f]) {
			continue
		}
		o, n := mcpFieldText(f, oldF[f]), mcpFieldText(f, newF[f])
		if o == n {
			// Shown alike (a text is shown ending in one line break):
			// the values differ in a line break at the end.
			which := "the served text ends with a line break and the locked one does not"
			if s, _ := oldF[f].(string); strings.HasSuffix(s, "\n") {
				which = "the locked text ends with a line break and the served one does not"
			}
			fmt.Fprintf(&b, "%s:\n%s  (The text changed only at its end: %s.)\n\n", f, mcpIndent(o), which)
			continue
		}
		diff := udiff.Unified("locked/"+f, "served now/"+f, o, n)
		switch {
		case norm.NFC.String(o) == norm.NFC.String(n):
			// The lines look the same: say what differs.
			diff += "(The same characters, composed differently: the text changed only in its Unicode normalisation.)\n"
		default:
			// Trailing spaces, a tab for spaces, a zero-width space: the
			// lines may look alike.
			if what := mcpUnseenChange(o, n); what != "" {
				diff += "(The same words: the text changed only in its whitespace, invisible characters or composition, which may not show above; here " + what + ".)\n"
			}
		}
		fmt.Fprintf(&b, "%s:\n%s\n", f, mcpIndent(diff))
	}
	return strings.TrimRight(b.String(), "\n")
}

// mcpUnseenChange says how two texts that differ but are not equal in NFC
// differ, when they read the same: they are equal once composed (NFC),
// stripped of invisible characters (mcpInvisible) and with whitespace
// runs folded. It names which of the three it took: "in its whitespace
// (spaces, tabs or line breaks)", "in invisible characters (U+200B)",
// "in how its characters are composed (Unicode normalisation)", joined
// by "and". It returns "" when the texts differ in more than those.
func mcpUnseenChange(o, n string) string {
	compose := func(s string) string { return norm.NFC.String(s) }
	strip := func(s string) string {
		return strings.Map(func(r rune) rune {
			if mcpInvisible(r) {
				return -1
			}
			return r
		}, s)
	}
	fold := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if fold(strip(compose(o))) != fold(strip(compose(n))) {
		return ""
	}
	// A step took part when the texts differ without it.
	// (Neither alone is needed when an invisible character swapped places
	// with a space: then both took part.)
	space := strip(compose(o)) != strip(compose(n))
	invisible := fold(compose(o)) != fold(compose(n))
	if !space && !invisible {
		space, invisible = true, true
	}
	var parts []string
	if space {
		parts = append(parts, "in its whitespace (spaces, tabs or line breaks)")
	}
	if invisible {
		parts = append(parts, "in invisible characters ("+mcpInvisibleChanged(o, n)+")")
	}
	if fold(strip(o)) != fold(strip(n)) {
		parts = append(parts, "in how its characters are composed (Unicode normalisation)")
	}
	return strings.Join(parts, " and ")
}

// mcpInvisible reports whether r shows as nothing in a text: a control
// character other than a line break or tab, or a character capability
// tags refuse as invisible on its own (a format character such as a
// zero-width space or bidirectional control, a variation selector, a
// blank filler, the combining grapheme joiner; not the Arabic number
// signs, which show). Spaces and line or paragraph separators are
// whitespace, compared apart.
func mcpInvisible(r rune) bool {
	switch {
	case r == '\n' || r == '\t' || unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
		return false
	case unicode.IsControl(r):
		return true
	}
	_, hidden := capability.Hidden(string(r))
	return hidden
}

// mcpInvisibleChanged lists, as U+XXXX in code point order, the invisible
// characters that occur a different number of times in the two texts, or,
// when none does (the same ones moved), those that occur in them.
func mcpInvisibleChanged(o, n string) string {
	count := map[rune]int{}
	for _, r := range o {
		if mcpInvisible(r) {
			count[r]++
		}
	}
	for _, r := range n {
		if mcpInvisible(r) {
			count[r]--
		}
	}
	var changed, all []rune
	for r, c := range count {
		all = append(all, r)
		if c != 0 {
			changed = append(changed, r)
		}
	}
	if len(changed) == 0 {
		changed = all
	}
	slices.Sort(changed)
	names := make([]string, len(changed))
	for i, r := range changed {
		names[i] = fmt.Sprintf("%U", r)
	}
	return strings.Join(names, ", ")
}

// mcpOrderedFields lists a definition's fields: the known ones in display
// order, then any others sorted.
func mcpOrderedFields(fields map[string]any) []string {
	var out []string
	for _, f := range mcpDriftFields {
		if _, ok := fields[f]; ok {
			out = append(out, f)
		}
	}
	for _, f := range sortedKeys(fields) {
		if !slices.Contains(mcpDriftFields, f) {
			out = append(out, f)
		}
	}
	return out
}

// mcpFieldsNarrowed refuses a lock entry whose hashed_fields leave out a
// field agentform hashes (MCPHashedFields): every agentform has hashed
// all of them, so the list was edited, and drift is compared over the
// fields both lists hold, so a change to a field left out would be taken
// without a word. A field agentform does not know (hashed by a later
// one) narrows nothing, and an entry without the list is taken as
// hashing all of them (MCPDrift). Nil when the entry holds all of them.
func mcpFieldsNarrowed(block string, locked *lockfile.Tool, rng hcl.Range) *hcl.Diagnostic {
	if len(locked.HashedFields) == 0 {
		return nil
	}
	var missing []string
	for _, f := range MCPHashedFields {
		if !slices.Contains(locked.HashedFields, f) {
			missing = append(missing, strconv.Quote(f))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "MCP lock entry hashes too few fields",
		Detail: fmt.Sprintf("The entry for %q in %s has hashed_fields without %s. agentform hashes %s of every served tool, and always has, so the list was edited: a change to a field left out would be accepted without a word. Review the file's history; to pin what the server serves now, run `agentform lock -upgrade` and review the change.",
			block, lockfile.FileName, strings.Join(missing, ", "), strings.Join(MCPHashedFields, ", ")),
		Subject: rng.Ptr(),
	}
}

// mcpSameOver reports whether two definitions agree on the fields both
// field sets cover.
func mcpSameOver(oldDef, newDef string, oldFields, newFields []string) bool {
	oldF, newF := mcpFields(oldDef), mcpFields(newDef)
	for _, f := range oldFields {
		if !slices.Contains(newFields, f) {
			continue
		}
		if !mcpFieldSame(oldF[f], newF[f]) {
			return false
		}
	}
	return true
}

// mcpFieldSame reports whether two values of a definition's field are the
// same, compared in their canonical JSON form (not as mcpFieldText shows
// them, which reads a text with and without a final line break alike).
func mcpFieldSame(a, b any) bool {
	ca, errA := mcpwire.CanonicalJSON(a)
	cb, errB := mcpwire.CanonicalJSON(b)
	if errA != nil || errB != nil {
		return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
	}
	return bytes.Equal(ca, cb)
}

// mcpIndent indents every non-empty line by two spaces.
func mcpIndent(text string) string {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString("  ")
		}
		b.WriteString(l)
	}
	return b.String()
}

// DriftDetail is the Extra of every drift diagnostic (MCPDrift, A2ADrift):
// which tool block, and for MCP which served tool, changed since the lock,
// so consumers (audit) need not read it out of the message.
type DriftDetail struct {
	// Block is the tool block's name.
	Block string
	// Served is the served MCP tool concerned; empty for a server identity
	// change or an A2A card.
	Served string
	// SinceApply is set for drift against what the last apply recorded
	// (the block has no lock entry), which shows the new text only.
	SinceApply bool
}
