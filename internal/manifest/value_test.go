package manifest

import (
	"encoding/json"
	"strings"
	"testing"
)

func loadOne(t *testing.T, src string) *Config {
	t.Helper()
	cfg, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatalf("unexpected errors:\n%s", diagLines(diags))
	}
	return cfg
}

func TestRuntimeReferences(t *testing.T) {
	cfg := loadOne(t, `
locals {
  team = "docs"
}
agent "a" {
  description       = "for ${locals.team}"
  capabilities      = runtime("CAPS", ["math", "web::read"])
  capability_policy = secret(runtime("POLICY", "extensible"))
  graph {
    type = "react"
  }
  model {
    provider = runtime("PROVIDER", "anthropic")
    name     = "claude-haiku-4-5"
  }
}
tool "m" {
  kind      = "mcp"
  transport = "stdio"
  command   = "server"
  args      = ["--token", secret(runtime("TOKEN", "s3cr3t-default")), "--port", runtime("PORT", 8080)]
  config    = { HOME = "/tmp", KEY = secret(runtime("API_KEY")) }
  enabled   = runtime("M_ENABLED", false)
}
`)
	a := cfg.Agents[0]
	if a.Description.Value != "for docs" {
		t.Errorf("got: %q\nwant: interpolated local", a.Description.Value)
	}
	if a.Capabilities.Runtime == nil || a.Capabilities.Runtime.Env != "CAPS" || strings.Join(a.Capabilities.Values, ",") != "math,web::read" {
		t.Errorf("got: %+v\nwant: runtime CAPS with its default as the values", a.Capabilities)
	}
	// A secret's default is never surfaced as the value.
	if a.CapabilityPolicy.Runtime == nil || !a.CapabilityPolicy.Runtime.Secret || a.CapabilityPolicy.Value != "locked" {
		t.Errorf("got: %+v\nwant: secret runtime reference, value left at the default \"locked\"", a.CapabilityPolicy)
	}
	m := cfg.Tools[0].MCP
	if len(m.Args.ElemRuntime) != 4 || m.Args.ElemRuntime[1] == nil || !m.Args.ElemRuntime[1].Secret || m.Args.ElemRuntime[3].Env != "PORT" || m.Args.Values[0] != "--token" {
		t.Errorf("got: %+v\nwant: per-element references for elements 2 and 4", m.Args)
	}
	if refs := cfg.Tools[0].Config.Refs(); len(refs) != 1 || refs[0].Env != "API_KEY" || !refs[0].Secret {
		t.Errorf("got: %v\nwant: one secret reference API_KEY", refs)
	}
	if cfg.Tools[0].Enabled.Runtime == nil || cfg.Tools[0].Enabled.Value {
		t.Errorf("got: %+v\nwant: runtime enabled with default false", cfg.Tools[0].Enabled)
	}

	// Serialising never writes a secret's default.
	b, err := json.Marshal(map[string]any{"args": m.Args.ElemRuntime, "config": cfg.Tools[0].Config.JSON()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cr3t-default") {
		t.Errorf("got: %s\nwant: no secret default in JSON", b)
	}
	if !strings.Contains(string(b), `{"default":8080,"env":"PORT"}`) || !strings.Contains(string(b), `"has_default":true`) {
		t.Errorf("got: %s\nwant: references with the non-secret default and has_default for the secret", b)
	}
}

func TestRuntimeMarkerJSON(t *testing.T) {
	cfg, diags := Load("testdata/valid/agentc_runtime_marker")
	if diags.HasErrors() {
		t.Fatal(diagLines(diags))
	}
	h := cfg.HTTPServer
	if h.Host.Runtime == nil || h.Host.Runtime.Env != "HTTP_HOST" || h.Host.Value != "127.0.0.1" || h.Port.Runtime == nil || h.Port.Value != 8080 {
		t.Errorf("got: host %+v port %+v\nwant: runtime references with defaults", h.Host, h.Port)
	}
	if tok := cfg.Tools[0].MCP.AuthToken; tok.Runtime == nil || !tok.Runtime.Secret {
		t.Errorf("got: %+v\nwant: a secret runtime reference", tok)
	}
	if caps := cfg.Agents[0].Capabilities; caps.Runtime == nil || strings.Join(caps.Values, ",") != "math" {
		t.Errorf("got: %+v\nwant: runtime capabilities defaulting to math", caps)
	}
}

func TestDefaultsAndMerging(t *testing.T) {
	cfg, diags := LoadSources("", map[string][]byte{
		"agents.acl":     []byte(minimalAgent),
		"tools.acl.json": []byte(`{"tool": {"sh": {"kind": "bash", "commands": ["ls"]}, "js": {"kind": "javascript", "source": "./js"}}}`),
	})
	if diags.HasErrors() {
		t.Fatal(diagLines(diags))
	}
	if len(cfg.Tools) != 2 || cfg.Tools[0].Name != "js" || cfg.Tools[1].Name != "sh" {
		t.Fatalf("got: %v\nwant: tools from the JSON file, sorted", cfg.Tools)
	}
	js, sh := cfg.Tools[0], cfg.Tools[1]
	if js.JavaScript.Export.Value != "js" || !js.Enabled.Value || js.Enabled.Set {
		t.Errorf("got: export %q enabled %+v\nwant: export defaults to the block name, enabled true", js.JavaScript.Export.Value, js.Enabled)
	}
	if sh.Bash.Cwd.Value != "/home/agent" {
		t.Errorf("got: %q\nwant: /home/agent", sh.Bash.Cwd.Value)
	}
	a := cfg.Agents[0]
	if a.Version.Value != "0.1.0" || a.CapabilityPolicy.Value != "locked" {
		t.Errorf("got: version %q policy %q\nwant: 0.1.0, locked", a.Version.Value, a.CapabilityPolicy.Value)
	}
}

// TestBothFormsMeanTheSame checks that the swapped-forms fixture decodes to
// the values the usual forms give.
func TestBothFormsMeanTheSame(t *testing.T) {
	cfg, diags := Load("testdata/valid/forms_swapped")
	if diags.HasErrors() {
		t.Fatal(diagLines(diags))
	}
	a := cfg.Agents[0]
	if a.Graph.Type.Value != "react" || a.Graph.Model.Retry.MaxAttempts.Value != 2 || a.Model.Name.Value != "claude-haiku-4-5" {
		t.Errorf("got: graph %+v model %+v\nwant: react, 2 attempts, claude-haiku-4-5", a.Graph, a.Model)
	}
	if a.Prompt.Kind != PromptLangfuse || a.Prompt.Langfuse.PromptName.Value != "assistant" || !a.Prompt.Langfuse.SecretKey.Runtime.Secret {
		t.Errorf("got: %+v\nwant: a Langfuse prompt", a.Prompt)
	}
	p := cfg.Providers["anthropic"]
	if p == nil || p.Config.Refs()[0].Env != "ANTHROPIC_API_KEY" || p.Models.Values[0] != "claude-haiku-4-5" {
		t.Errorf("got: %+v\nwant: the provider with its config", p)
	}
	planner := cfg.Tool("planner").A2A
	if planner.Tenant.Policy.Value != "fixed" || planner.Tenant.ID.Value != "acme" {
		t.Errorf("got: %+v\nwant: fixed tenant acme", planner.Tenant)
	}
	if got := planner.Headers.JSON().(map[string]any)["X-Team"]; got != "docs" {
		t.Errorf("got: %v\nwant: header X-Team = docs", got)
	}
	grep := cfg.Tool("grep")
	if grep.Config.JSON().(map[string]any)["MODE"] != "fast" || grep.Bash.Env.Kind.Value != "allow" || grep.Bash.Limits.MaxExecutionTimeSecs.Value != 5 {
		t.Errorf("got: config %v env %+v\nwant: MODE=fast, allow env, 5s limit", grep.Config.JSON(), grep.Bash.Env)
	}
	if cfg.HTTPServer.AGUI == nil || cfg.Build.Archetype.Value != "standalone" {
		t.Errorf("got: %+v\nwant: ag_ui on", cfg.HTTPServer)
	}
}
