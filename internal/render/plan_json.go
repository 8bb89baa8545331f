package render

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/version"
	"github.com/agentform/agentform/planner"
)

// PlanDocument is the JSON plan document (DESIGN §10), printed by
// "agentform plan -json". Field names are a public interface: add fields,
// never rename or remove them. capability_changes are what applying the
// configuration as written would grant or revoke, with or without a
// simulated capability_override.
type PlanDocument struct {
	FormatVersion     string           `json:"format_version"`
	AgentformVersion  string           `json:"agentform_version"`
	Applyable         bool             `json:"applyable"`
	ResourceChanges   []JSONResource   `json:"resource_changes"`
	Tools             []JSONTool       `json:"tools"`
	CapabilityMatrix  []JSONMatrixRow  `json:"capability_matrix"`
	CapabilityChanges []JSONCapChange  `json:"capability_changes"`
	Denials           []JSONDenial     `json:"denials"`
	Checks            []JSONCheck      `json:"checks"`
	LockChanges       []JSONLockChange `json:"lock_changes"`
	Diagnostics       []JSONDiagnostic `json:"diagnostics"`
	// CapabilityOverride is the session override the plan simulates
	// (plan -capability-override); such a plan is never applyable, and its
	// capability_matrix and denials are the simulated session's.
	CapabilityOverride string `json:"capability_override,omitempty"`
	// SessionCapabilityChanges are what the simulated session would gain
	// ("granted") or lose ("revoked") compared with the configuration;
	// empty without capability_override.
	SessionCapabilityChanges []JSONCapChange `json:"session_capability_changes"`
	// LeftoverArtifacts are artifact files an interrupted apply wrote, or
	// meant to remove, that no resource in state owns: apply removes them.
	// Absent when there are none.
	LeftoverArtifacts []string `json:"leftover_artifacts,omitempty"`
}

// JSONLockChange is one difference between agentform.lock.hcl and what
// the plan resolved.
type JSONLockChange struct {
	Address    string   `json:"address"`
	Action     string   `json:"action"`
	Attributes []string `json:"attributes"`
}

// JSONResource is one entry of resource_changes.
type JSONResource struct {
	Address string   `json:"address"`
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Actions []string `json:"actions"`
	Reasons []string `json:"reasons"`
	// ChangedAttributes names the attributes that changed, sorted.
	ChangedAttributes []string `json:"changed_attributes"`
	// AttributeChanges says how each changed, in the same order, with
	// values as the plan text shows them.
	AttributeChanges []JSONAttributeChange `json:"attribute_changes"`
}

// JSONAttributeChange is how one attribute changed (planner.AttributeChange
// as Shown): before and after, abbreviated and scrubbed, each absent when
// the attribute was not set; unused when the value is still written but no
// longer used; the items a list gained and lost (neither: reordered); the
// addresses an agent's tools or skills added, changed and removed.
type JSONAttributeChange struct {
	Name    string   `json:"name"`
	Before  *string  `json:"before,omitempty"`
	After   *string  `json:"after,omitempty"`
	Unused  bool     `json:"unused,omitempty"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
}

// JSONTool is one registered tool.
type JSONTool struct {
	Name           string   `json:"name"`
	Block          string   `json:"block"`
	Kind           string   `json:"kind"`
	Requires       []string `json:"requires"`
	Enabled        bool     `json:"enabled"`
	RuntimeEnabled bool     `json:"runtime_enabled"`
	Resolved       bool     `json:"resolved"`
	FromLock       bool     `json:"from_lock"`
}

// JSONMatrixRow is one agent's row of the capability matrix.
type JSONMatrixRow struct {
	Agent            string     `json:"agent"`
	Policy           string     `json:"policy"`
	Holds            []string   `json:"holds"`
	RuntimeDependent bool       `json:"runtime_dependent"`
	Cells            []JSONCell `json:"cells"`
}

// JSONCell is one cell of the matrix with its explanation.
type JSONCell struct {
	Tool              string            `json:"tool"`
	Decision          string            `json:"decision"`
	Reason            string            `json:"reason"`
	Requires          []string          `json:"requires"`
	Missing           []string          `json:"missing"`
	Matched           map[string]string `json:"matched"`
	OverrideReachable bool              `json:"override_reachable"`
}

// JSONCapChange is one capability granted or revoked.
type JSONCapChange struct {
	Agent  string `json:"agent"`
	Tool   string `json:"tool"`
	Change string `json:"change"`
}

// JSONDenial is one denied cell.
type JSONDenial struct {
	Agent   string   `json:"agent"`
	Tool    string   `json:"tool"`
	Missing []string `json:"missing"`
}

// JSONCheck is one check block's result.
type JSONCheck struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// scrub replaces the manifest's credential values (red, which may be nil)
// in the document's check messages and diagnostics: a check's
// error_message can interpolate a local that feeds a credential.
func (doc *PlanDocument) scrub(red *Redaction) {
	for i := range doc.Checks {
		doc.Checks[i].Message = red.Scrub(doc.Checks[i].Message)
	}
	for i := range doc.Diagnostics {
		doc.Diagnostics[i].Summary = red.Scrub(doc.Diagnostics[i].Summary)
		doc.Diagnostics[i].Detail = red.Scrub(doc.Diagnostics[i].Detail)
	}
}

// PlanJSON builds the JSON plan document, with the manifest's credential
// values (red, which may be nil) scrubbed from its text: check messages,
// diagnostics and the values of changed attributes. p may be nil when the
// manifest did not load; the document then carries only the diagnostics.
// Every list is non-nil so consumers see [] rather than null.
func PlanJSON(p *planner.Plan, diags hcl.Diagnostics, red *Redaction) *PlanDocument {
	doc := planJSON(p, diags, red)
	doc.scrub(red)
	return doc
}

// planJSON is PlanJSON but for scrubbing checks and diagnostics.
func planJSON(p *planner.Plan, diags hcl.Diagnostics, red *Redaction) *PlanDocument {
	doc := &PlanDocument{
		FormatVersion:     planner.FormatVersion,
		AgentformVersion:  version.Version,
		ResourceChanges:   []JSONResource{},
		Tools:             []JSONTool{},
		CapabilityMatrix:  []JSONMatrixRow{},
		CapabilityChanges: []JSONCapChange{},
		Denials:           []JSONDenial{},
		Checks:            []JSONCheck{},
		LockChanges:       []JSONLockChange{},
		Diagnostics:       JSONDiagnostics(diags),

		SessionCapabilityChanges: []JSONCapChange{},
	}
	if p == nil {
		return doc
	}
	doc.Applyable = p.Applyable && !diags.HasErrors()
	if p.Session != nil {
		doc.CapabilityOverride, doc.Applyable = p.Session.Override, false
		for _, c := range p.Session.Changes {
			doc.SessionCapabilityChanges = append(doc.SessionCapabilityChanges, JSONCapChange(c))
		}
	}
	for _, rc := range p.ResourceChanges {
		jr := JSONResource{Address: rc.Address, Type: rc.Type, Name: rc.Name, Kind: rc.Kind, Actions: rc.Actions, Reasons: rc.Reasons,
			ChangedAttributes: rc.ChangedAttributes, AttributeChanges: []JSONAttributeChange{}}
		if jr.ChangedAttributes == nil {
			jr.ChangedAttributes = []string{}
		}
		for _, c := range rc.AttributeChanges {
			jr.AttributeChanges = append(jr.AttributeChanges, JSONAttributeChange(c.Shown(red.Scrub)))
		}
		doc.ResourceChanges = append(doc.ResourceChanges, jr)
	}
	for _, t := range p.Tools {
		doc.Tools = append(doc.Tools, JSONTool{Name: t.Name, Block: t.Block, Kind: t.Kind, Requires: t.Requires,
			Enabled: t.Enabled, RuntimeEnabled: t.RuntimeEnabled, Resolved: t.Resolved, FromLock: t.FromLock})
	}
	if m := p.Matrix(); m != nil {
		tools := m.Tools()
		for ai, a := range p.Agents {
			row := JSONMatrixRow{Agent: a.Name, Policy: a.Policy, Holds: a.Holds, RuntimeDependent: a.RuntimeDependent, Cells: make([]JSONCell, 0, len(tools))}
			for ti := range tools {
				c := m.Cell(ai, ti)
				decision := "deny"
				if c.Allowed {
					decision = "allow"
				}
				row.Cells = append(row.Cells, JSONCell{Tool: c.Tool, Decision: decision, Reason: c.Reason, Requires: c.Requires,
					Missing: c.Missing, Matched: c.Matched, OverrideReachable: c.OverrideReachable})
			}
			doc.CapabilityMatrix = append(doc.CapabilityMatrix, row)
		}
	}
	for _, c := range p.CapabilityChanges {
		doc.CapabilityChanges = append(doc.CapabilityChanges, JSONCapChange(c))
	}
	p.EachDenial(func(d planner.Denial) bool {
		doc.Denials = append(doc.Denials, JSONDenial(d))
		return true
	})
	for _, c := range p.Checks {
		doc.Checks = append(doc.Checks, JSONCheck{Name: c.Name, Status: c.Status, Message: c.Message})
	}
	for _, c := range p.LockChanges {
		attrs := c.Attributes
		if attrs == nil {
			attrs = []string{}
		}
		doc.LockChanges = append(doc.LockChanges, JSONLockChange{Address: c.Address, Action: c.Action, Attributes: attrs})
	}
	doc.LeftoverArtifacts = p.Leftovers
	return doc
}
