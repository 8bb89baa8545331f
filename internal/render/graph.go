package render

import (
	"fmt"
	"io"
	"strconv"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/planner"
)

// Graph writes the plan's capability matrix as a Graphviz dot graph:
// agents (boxes) → tools (ellipses), allowed edges solid green, denied
// edges dashed red, override-reachable edges dotted amber, and A2A
// delegation from an a2a tool to the workspace agent behind it bold blue.
// With denied false, only allowed and override-reachable edges are drawn.
func Graph(w io.Writer, p *planner.Plan, denied bool) {
	q := strconv.Quote
	fmt.Fprintln(w, "digraph agentform {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, `  node [fontname="Helvetica"];`)
	m := p.Matrix()
	tools := m.Tools()
	for _, a := range p.Agents {
		fmt.Fprintf(w, "  %s [shape=box, style=filled, fillcolor=\"#dbeafe\", label=%s];\n", q("agent."+a.Name), q(a.Name+"\n("+a.Policy+")"))
	}
	for _, t := range tools {
		fmt.Fprintf(w, "  %s [shape=ellipse, label=%s];\n", q("tool."+t.Name), q(t.Name))
	}
	for ai, a := range p.Agents {
		for ti, t := range tools {
			allowed := m.Allowed(ai, ti)
			reach := !allowed && a.Policy == manifest.PolicyExtensible
			switch {
			case allowed:
				fmt.Fprintf(w, "  %s -> %s [color=\"#16a34a\"];\n", q("agent."+a.Name), q("tool."+t.Name))
			case reach:
				fmt.Fprintf(w, "  %s -> %s [style=dotted, color=\"#d97706\", label=\"override\"];\n", q("agent."+a.Name), q("tool."+t.Name))
			case denied:
				fmt.Fprintf(w, "  %s -> %s [style=dashed, color=\"#dc2626\"];\n", q("agent."+a.Name), q("tool."+t.Name))
			}
		}
	}
	if cfg := p.Config(); cfg != nil {
		for _, t := range cfg.Tools {
			if t.A2A == nil || !t.A2A.TargetAgent.Set || cfg.Agent(t.A2A.TargetAgent.Value) == nil {
				continue
			}
			for _, op := range planner.A2AOperations {
				name := fmt.Sprintf("a2a_%s_%s", t.Name, op)
				if _, ok := m.ToolIndex(name); ok {
					fmt.Fprintf(w, "  %s -> %s [style=bold, color=\"#2563eb\", label=\"delegates\"];\n", q("tool."+name), q("agent."+t.A2A.TargetAgent.Value))
				}
			}
		}
	}
	fmt.Fprintln(w, "}")
}
