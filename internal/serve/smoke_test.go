package serve

import "testing"

func TestBuildArtifactHelper(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": `
agent "a" {
  capabilities = ["fs::read"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "grep" {
  kind         = "bash"
  commands     = ["grep"]
  capabilities = ["fs::read"]
}
`})
	a, _, _ := buildArtifact(t, dir, "a", nil)
	if len(a.Tools) != 1 || a.Tools[0].Name != "grep" {
		t.Fatalf("tools: %+v", a.Tools)
	}
}
