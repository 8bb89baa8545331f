package manifest

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// A2AOperations are the four tools an a2a block registers, in order
// (A2AToolName).
var A2AOperations = []string{"send", "stream", "get_task", "cancel_task"}

// A2AToolName is the name of the tool an a2a block registers for one of
// its operations: "a2a_<block>_<op>".
func A2AToolName(block, op string) string { return fmt.Sprintf("a2a_%s_%s", block, op) }

// SkillTool is a tool the workspace registers when it has a skill.
type SkillTool struct {
	Name string
	// Requires is the capability tag an agent needs to call it.
	Requires string
}

// SkillTools are the tools registered when the workspace has at least one
// skill, sorted by name.
var SkillTools = []SkillTool{
	{"describe_skill", "skills"},
	{"get_skill", "skills"},
	{"list_skills", "skills"},
	{"read_skill_file", "skills"},
	{"run_skill_script", "skills::execute"},
}

// StaticToolNames returns the names of the tools a tool block registers
// when they follow from the manifest alone: the block's own name for
// javascript, python and bash, the four A2AToolName for a2a. An mcp
// block's tools are the ones its server serves, known only once it is
// resolved: nil.
func StaticToolNames(t *Tool) []string {
	switch t.Kind {
	case KindMCP:
		return nil
	case KindA2A:
		out := make([]string, len(A2AOperations))
		for i, op := range A2AOperations {
			out[i] = A2AToolName(t.Name, op)
		}
		return out
	}
	return []string{t.Name}
}

// DuplicateToolDiagnostic is the error for the block at at registering a
// tool named name, which the block at prev registers already. Load reports
// the names StaticToolNames and SkillTools give; the planner the ones an
// mcp block's resolution adds.
func DuplicateToolDiagnostic(name string, prev, at hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Duplicate registered tool",
		Detail:   fmt.Sprintf("This block registers a tool named %q, which is already registered by the block at %s. Rename one of the blocks.", name, prev),
		Subject:  at.Ptr(),
	}
}

// validateToolNames reports every tool name two blocks register, among the
// names that need no resolution, in the order the planner registers tools:
// tool blocks by name (disabled ones too: their names stay taken), then
// the skill tools, reported at the first skill.
func (d *decoder) validateToolNames(cfg *Config) {
	owner := map[string]hcl.Range{}
	claim := func(name string, at hcl.Range) {
		if prev, dup := owner[name]; dup {
			d.diags = append(d.diags, DuplicateToolDiagnostic(name, prev, at))
			return
		}
		owner[name] = at
	}
	for _, t := range cfg.Tools {
		for _, name := range StaticToolNames(t) {
			claim(name, t.DeclRange)
		}
	}
	if len(cfg.Skills) > 0 {
		for _, st := range SkillTools {
			claim(st.Name, cfg.Skills[0].DeclRange)
		}
	}
}
