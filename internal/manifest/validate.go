package manifest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/agentform/agentform/internal/capability"
)

// validateWorkspace checks the rules that span blocks: model providers and
// allow-lists, capability tag syntax, references between blocks, tool names
// two blocks register and agents checks ask about.
func (d *decoder) validateWorkspace(cfg *Config) {
	if len(cfg.Agents) == 0 && !d.diags.HasErrors() {
		var rng *hcl.Range
		for _, name := range sortedKeys(cfg.Files) {
			r := hcl.Range{Filename: name, Start: hcl.InitialPos, End: hcl.InitialPos}
			rng = &r
			break
		}
		d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No agent block",
			Detail:  "A workspace needs at least one agent block, for example:\n  agent \"assistant\" {\n    graph {\n      type = \"react\"\n    }\n    model {\n      provider = \"anthropic\"\n      name     = \"claude-haiku-4-5\"\n    }\n  }",
			Subject: rng})
	}
	for _, a := range cfg.Agents {
		d.validateAgentModel(cfg, a)
		d.validateTags(a.Capabilities, "capabilities")
	}
	for _, t := range cfg.Tools {
		d.validateTags(t.Capabilities, "capabilities")
		if t.MCP != nil {
			for _, name := range sortedKeys(t.MCP.ToolCapabilities) {
				d.validateTags(t.MCP.ToolCapabilities[name], "tool_capabilities")
				if t.MCP.Expose.Set && t.MCP.Expose.Known() && !slices.Contains(t.MCP.Expose.Values, name) {
					d.warnf(t.MCP.ToolCapabilities[name].Range, "Capabilities for a tool that is not exposed",
						"tool_capabilities names %q, but expose does not include it, so the requirement never applies. Add %q to expose or remove it here.", name, name)
				}
			}
			for i, name := range t.MCP.Expose.Values {
				if strings.TrimSpace(name) == "" {
					d.errorf(t.MCP.Expose.ElemRanges[i], "Invalid value for \"expose\"", "Served tool names in expose must not be empty.")
				} else if slices.Index(t.MCP.Expose.Values, name) != i {
					d.warnf(t.MCP.Expose.ElemRanges[i], "Duplicate exposed tool", "%q is listed more than once in expose.", name)
				}
			}
		}
		if t.A2A != nil && t.A2A.TargetAgent.Set && cfg.Agent(t.A2A.TargetAgent.Value) == nil {
			var names []string
			for _, a := range cfg.Agents {
				names = append(names, a.Name)
			}
			d.errorf(t.A2A.TargetAgent.Range, "Unknown target agent",
				"target_agent names %q, but this workspace has no agent of that name.%s", t.A2A.TargetAgent.Value, didYouMean(t.A2A.TargetAgent.Value, names))
		}
	}
	d.validateToolNames(cfg)
	d.validateCheckAgents(cfg)
}

func (d *decoder) validateAgentModel(cfg *Config, a *Agent) {
	prov := a.Model.Provider
	if !prov.Set || !prov.Known() {
		return
	}
	if len(cfg.Providers) == 0 {
		// Without a providers block the provider is a kind. One that
		// was written but did not decode has its own error.
		if !d.providersWritten && !slices.Contains(ProviderNames, prov.Value) {
			d.errorf(prov.Range, "Unknown model provider",
				"Agent %q uses provider %q, which is none of the kinds agentform knows (%s), and the workspace declares no providers.%s Use one of the kinds, or declare the provider (a provider block with that label, and its kind).",
				a.Name, prov.Value, quotedList(ProviderNames), didYouMean(prov.Value, ProviderNames))
		}
		return
	}
	p, ok := cfg.Providers[prov.Value]
	if !ok {
		declared := sortedKeys(cfg.Providers)
		d.errorf(prov.Range, "Undeclared model provider",
			"Agent %q uses provider %q, but the providers block declares only %s.%s Declare it (a block named %s inside providers, or a provider block with that label), or use a declared provider.",
			a.Name, prov.Value, quotedList(declared), didYouMean(prov.Value, declared), prov.Value)
		return
	}
	if !p.Models.Set || !a.Model.Name.Set || !a.Model.Name.Known() {
		return
	}
	if !slices.Contains(p.Models.Values, a.Model.Name.Value) {
		d.errorf(a.Model.Name.Range, "Model not allowed",
			"Agent %q uses model %q, which is not in the models allow-list of provider %q (%s, at %s).%s",
			a.Name, a.Model.Name.Value, prov.Value, quotedList(p.Models.Values), p.Models.Range, didYouMean(a.Model.Name.Value, p.Models.Values))
	}
}

// validateTags checks every tag of a list: well-formed, no duplicates, and
// a warning for "*", which is not a wildcard.
func (d *decoder) validateTags(l StringList, name string) {
	if ref := l.Runtime; ref != nil && ref.Secret && ref.HasDefault() {
		// A secret's default is what plans use too, and must be
		// well-formed; the message does not quote it.
		if dv, err := convert.Convert(ref.Default, cty.List(cty.String)); err == nil {
			for i, tag := range listStrings(dv) {
				if ValidateTag(tag) != nil {
					d.errorf(ref.Range, "Invalid capability tag", "In %q, element %d of the default of secret(runtime(%q)) is not a well-formed tag (a secret's value is not shown). %s", name, i+1, ref.Env, TagHelp)
				}
			}
		}
		return
	}
	values, ranges := l.Values, l.ElemRanges
	if l.Runtime != nil {
		// The default is what plans use; it must be well-formed too.
		ranges = nil
	}
	rangeOf := func(i int) hcl.Range {
		if i < len(ranges) {
			return ranges[i]
		}
		if l.Runtime != nil {
			return l.Runtime.Range
		}
		return l.Range
	}
	for i, tag := range values {
		if err := ValidateTag(tag); err != nil {
			d.errorf(rangeOf(i), "Invalid capability tag", "In %q, %s. %s", name, err, TagHelp)
			continue
		}
		if tag == "*" || slices.Contains(strings.Split(tag, "::"), "*") {
			what := starTagText(tag)
			d.warnf(rangeOf(i), "\"*\" is not a wildcard",
				"%s To grant a whole namespace, hold its root, like \"github\" for \"github::read\" and \"github::write\".", what)
		}
		if strings.Contains(strings.ReplaceAll(tag, "::", ""), ":") {
			// A single ":" is legal inside a segment, and almost always a
			// "::" mistyped: "text:count" is one segment, which neither
			// grants nor needs "text".
			segs := strings.Split(tag, "::")
			for j, seg := range segs {
				segs[j] = strings.ReplaceAll(seg, ":", "::")
			}
			d.warnf(rangeOf(i), "Single \":\" in a capability tag",
				"In %q, the tag %q has a single \":\", which is part of a segment: segments are joined by \"::\". Did you mean %q?", name, tag, strings.Join(segs, "::"))
		}
		if strings.Contains(tag, ",") {
			// Legal, but a session override lists its tags with commas.
			d.warnf(rangeOf(i), "Comma in a capability tag",
				"In %q, the tag %q holds a \",\": a session override (-capability-override, the X-Agentform-Capability-Override header) separates its tags with commas, so it cannot name this tag.%s", name, tag, commaTags(tag))
		}
		if slices.Index(values, tag) != i {
			d.warnf(rangeOf(i), "Duplicate capability tag", "%q is listed more than once in %q.", tag, name)
		}
	}
}

// commaTags asks whether a tag with commas was meant as the tags it
// reads as (` Did you mean the tags "a" and "b"?`), when it reads as more
// than one well-formed tag, and says nothing otherwise.
func commaTags(tag string) string {
	var quoted []string
	for p := range strings.SplitSeq(tag, ",") {
		p = strings.TrimSpace(p)
		if ValidateTag(p) != nil {
			return ""
		}
		quoted = append(quoted, strconv.Quote(p))
	}
	if len(quoted) < 2 {
		return ""
	}
	return fmt.Sprintf(" Did you mean the tags %s and %s?", strings.Join(quoted[:len(quoted)-1], ", "), quoted[len(quoted)-1])
}

// starTagText says what a tag with a "*" segment means, held and
// required: "*" is compared like any other segment.
func starTagText(tag string) string {
	if tag == "*" {
		return `The tag "*" is compared like any other: an agent holding it is granted only "*" and the tags under it ("*::…"), and a tool requiring it is reached only by agents holding "*".`
	}
	text := fmt.Sprintf("In %q, \"*\" is a literal segment, compared like any other: an agent holding %q is granted only it and the tags under it, and a tool requiring it is reached only by agents holding %q", tag, tag, tag)
	if first, _, ok := strings.Cut(tag, "::"); ok {
		text += fmt.Sprintf(" or a namespace it starts with, like %q", first)
	}
	return text + "."
}

// TagHelp says what a well-formed capability tag is, for errors about one.
const TagHelp = `Tags are namespace segments joined by "::", like "github::issues::write"; a held tag grants every tag it prefixes.`

// ValidateTag reports whether tag is a well-formed capability tag: not
// empty, valid UTF-8 without a control or invisible character
// (capability.Hidden), no surrounding whitespace, and no "::"-separated segment that is
// empty, has surrounding whitespace, or begins or ends with a stray ":".
// The capability engine applies the same rule (capability.ValidateTag);
// the planner's tests hold the two together.
func ValidateTag(tag string) error {
	switch {
	case tag == "":
		return fmt.Errorf("the tag is empty")
	case !utf8.ValidString(tag):
		return fmt.Errorf("the tag %q is not valid UTF-8", tag)
	}
	if r, ok := capability.Hidden(tag); ok {
		return fmt.Errorf("the tag %q holds %U, a control or invisible character: it could read as another tag", tag, r)
	}
	if strings.TrimSpace(tag) != tag {
		return fmt.Errorf("the tag %q has surrounding whitespace", tag)
	}
	for i, seg := range strings.Split(tag, "::") {
		switch {
		case seg == "":
			return fmt.Errorf("the tag %q has an empty segment", tag)
		case strings.TrimSpace(seg) != seg:
			return fmt.Errorf("segment %d of the tag %q has surrounding whitespace", i+1, tag)
		case seg[0] == ':' || seg[len(seg)-1] == ':':
			return fmt.Errorf("segment %d of the tag %q begins or ends with a stray \":\"", i+1, tag)
		}
	}
	return nil
}
