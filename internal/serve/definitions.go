package serve

import (
	"bytes"
	"context"
	"fmt"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/internal/mcpwire"
	"github.com/agentform/agentform/internal/resolve"
)

// CheckDefinitions reads the definition of every javascript tool whose
// bundle the artifact ships, as plan read it, and reports where agent.json
// says something else of the tool: a description the bundle gives
// (without one, the block's own, from the manifest, which no bundle
// records) or its parameters. The bundle is pinned (artifact.Verify checks
// its digest, and against the lockfile); what agent.json says of it is
// what a model reads, so an edited agent.json must not change it. Python
// tools' definitions are not read here: that takes running python.
func CheckDefinitions(ctx context.Context, arch *artifact.Archive, agent *artifact.Agent) []artifact.Problem {
	var problems []artifact.Problem
	add := func(format string, args ...any) {
		problems = append(problems, artifact.Problem{Path: artifact.AgentName, Message: fmt.Sprintf(format, args...)})
	}
	for i := range agent.Tools {
		t := &agent.Tools[i]
		if t.Kind != artifact.KindJavaScript || t.File == "" {
			continue
		}
		bundle, ok := arch.Files[t.File]
		if !ok {
			continue // artifact.Verify reports it
		}
		desc, params, err := resolve.JavaScriptDefinition(ctx, bundle, t.Export, 0)
		if err != nil {
			add("tool %q: the definition its bundle %s exports as %q cannot be read: %v", t.Name, t.File, t.Export, err)
			continue
		}
		if desc != "" && desc != t.Description {
			add("tool %q: its description differs from the one its bundle %s exports", t.Name, t.File)
		}
		if !sameJSON(t.Parameters, params) {
			add("tool %q: its parameters differ from those its bundle %s exports", t.Name, t.File)
		}
	}
	return problems
}

// sameJSON reports whether a and b hold the same JSON value, numbers as
// written (both empty or null count as the same).
func sameJSON(a, b []byte) bool {
	canon := func(x []byte) ([]byte, bool) {
		x = bytes.TrimSpace(x)
		if len(x) == 0 || string(x) == "null" {
			return nil, true
		}
		v, err := mcpwire.DecodeJSON(x)
		if err != nil {
			return nil, false
		}
		c, err := mcpwire.CanonicalJSON(v)
		return c, err == nil
	}
	ca, okA := canon(a)
	cb, okB := canon(b)
	return okA && okB && bytes.Equal(ca, cb)
}
