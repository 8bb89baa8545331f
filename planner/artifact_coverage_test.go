package planner

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
)

// covWorkspace is a workspace for TestArtifactChangeUpdatesAgent: the
// manifest (agent.acl) and the files beside it, and the lockfile the
// plan starts from (nil: none).
type covWorkspace struct {
	files map[string]string
	lock  func() *lockfile.File
}

// planWorkspace writes w to a new directory and plans it against applied,
// resolving without contacting anything (as -refresh=false does).
func planWorkspace(t *testing.T, w covWorkspace, applied *Applied) *Plan {
	t.Helper()
	dir := t.TempDir()
	for name, text := range w.files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var lock *lockfile.File
	if w.lock != nil {
		lock = w.lock()
	}
	resLock := lock
	if resLock == nil {
		resLock = lockfile.New()
	}
	ws, diags := resolve.Run(context.Background(), cfg, resolve.Options{Lock: resLock})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	p := New(context.Background(), cfg, Options{Resolution: ws, Lock: lock, Applied: applied})
	if p.Diagnostics.HasErrors() {
		t.Fatal(p.Diagnostics.Error())
	}
	return p
}

// artifactOf is agent "a"'s artifact as apply would write it from p: its
// files by path.
func artifactOf(t *testing.T, p *Plan) map[string][]byte {
	t.Helper()
	files, err := p.ArtifactFiles("a")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		out[f.Path] = f.Data
	}
	return out
}

// covMCPLock is a lockfile pinning the mcp block "gh" with the served
// tools of defs (canonical JSON definitions, by served name).
func covMCPLock(defs map[string]string) func() *lockfile.File {
	return func() *lockfile.File {
		l := lockfile.New()
		tl := &lockfile.Tool{Kind: manifest.KindMCP, ServerName: "gh", ServerVersion: "1.0", HashedFields: resolve.MCPHashedFields,
			Served: map[string]string{}, Definitions: map[string]string{}}
		for name, def := range defs {
			tl.Served[name] = resolve.SHA256([]byte(def))
			tl.Definitions[name] = lockfile.ExactJSON(def)
		}
		l.Tools["gh"] = tl
		return l
	}
}

// TestArtifactChangeUpdatesAgent: whatever changes an agent's artifact
// (agent.json or a file beside it) plans the agent as an update that
// names the attribute that changed, so that no apply leaves an artifact
// out of date with the manifest; what leaves the artifact as it is plans
// no change. It goes through what agent.json carries: the agent's own
// settings and its runtime references, every kind of tool with its
// settings, skills, and which blocks the agent ships.
func TestArtifactChangeUpdatesAgent(t *testing.T) {
	// ws is a workspace of agent "a" (its capabilities and policy, lines
	// added to its block and to its graph block) and a bash tool "sh",
	// with more blocks and files.
	type agentOpts struct{ caps, policy, graph, extra string }
	agent := func(o agentOpts) string {
		if o.caps == "" {
			o.caps = `["shell", "math"]`
		}
		if o.policy == "" {
			o.policy = `"locked"`
		}
		return `
agent "a" {
  capabilities      = ` + o.caps + `
  capability_policy = ` + o.policy + `
  graph {
    type = "react"
` + o.graph + `
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
` + o.extra + `
}
`
	}
	bash := func(body string) string {
		if body == "" {
			body = `commands = ["ls"]`
		}
		return `
tool "sh" {
  kind         = "bash"
  capabilities = ["shell::exec"]
` + body + `
}
`
	}
	src := func(parts ...string) covWorkspace {
		return covWorkspace{files: map[string]string{"agent.acl": strings.Join(parts, "\n")}}
	}
	with := func(w covWorkspace, files map[string]string) covWorkspace {
		out := covWorkspace{files: maps.Clone(w.files), lock: w.lock}
		maps.Copy(out.files, files)
		return out
	}
	base := agent(agentOpts{})
	sh := bash("")
	a := func(extra string) string { return agent(agentOpts{extra: extra}) }

	// mcp blocks: without a lockfile entry, unresolved (the server is
	// never contacted); with one, the served tools it pins.
	mcp := func(body string) string {
		return `
tool "gh" {
  kind         = "mcp"
  capabilities = ["math::gh"]
` + body + `
}
`
	}
	stdio := func(extra string) string {
		return mcp("  transport = \"stdio\"\n  command = \"gh-mcp\"\n" + extra)
	}
	httpMCP := func(extra string) string {
		return mcp("  transport = \"http\"\n  url = \"https://mcp.example.com/mcp\"\n" + extra)
	}
	const defIssue = `{"description":"Create an issue.","inputSchema":{"type":"object"},"name":"create_issue"}`
	const defPR = `{"description":"Open a pull request.","inputSchema":{"type":"object"},"name":"open_pr"}`
	locked := func(w covWorkspace, defs map[string]string) covWorkspace {
		w.lock = covMCPLock(defs)
		return w
	}
	bothDefs := map[string]string{"create_issue": defIssue, "open_pr": defPR}

	a2a := func(extra string) string {
		return `
tool "peer" {
  kind         = "a2a"
  url          = "https://peer.example.com/a2a"
  capabilities = ["math::peer"]
` + extra + `
}
`
	}

	// javascript and python packages.
	jsTool := func(extra string) string {
		return `
tool "add" {
  kind         = "javascript"
  source       = "./tools/add"
  capabilities = ["math::add"]
` + extra + `
}
`
	}
	jsSource := func(export, description string) map[string]string {
		return map[string]string{
			"tools/add/package.json": `{"name": "add", "version": "0.1.0", "type": "module", "main": "index.js"}`,
			"tools/add/index.js":     "export const " + export + " = { name: \"add\", description: \"" + description + "\", parameters: { type: \"object\" }, async execute() { return { output: \"\" }; } };\n",
		}
	}
	pyTool := func(extra string) string {
		return `
tool "lookup" {
  kind         = "python"
  source       = "./tools/lookup"
  capabilities = ["math::lookup"]
` + extra + `
}
`
	}
	pySource := func(doc string) map[string]string {
		return map[string]string{
			"tools/lookup/pyproject.toml": "[project]\nname = \"lookup\"\nversion = \"0.1.0\"\nrequires-python = \">=3.11\"\n",
			"tools/lookup/lookup.py":      "def lookup(title: str) -> str:\n    \"\"\"" + doc + "\"\"\"\n    raise RuntimeError(\"never run at plan time\")\n\n\ndef other(x: int) -> int:\n    \"\"\"Another.\"\"\"\n    return x\n",
		}
	}

	skillInline := func(body string) string {
		return "\nskill \"notes\" {\n" + body + "\n}\n"
	}
	inline := func(description, content, resources string) string {
		s := "  description = " + description + "\n  content = " + content + "\n"
		if resources != "" {
			s += "  resources = " + resources + "\n"
		}
		return skillInline(s)
	}
	skillSource := skillInline(`  source = "./skills/research"`)
	skillFiles := func(frontMatter, extra string) map[string]string {
		f := map[string]string{"skills/research/SKILL.md": "---\n" + frontMatter + "---\n\n# Research\n"}
		if extra != "" {
			f["skills/research/notes.md"] = extra
		}
		return f
	}

	for _, tc := range []struct {
		name          string
		before, after covWorkspace
		// attribute is the agent's attribute the change must name;
		// "" for a change that leaves the artifact as it is.
		attribute string
	}{
		// The agent's own settings.
		{"agent version", src(base, sh), src(a(`  version = "0.2.0"`), sh), "version"},
		{"agent description", src(base, sh), src(a(`  description = "Triage."`), sh), "description"},
		{"model name", src(base, sh), src(strings.Replace(base, "claude-haiku-4-5", "claude-sonnet-4-5", 1), sh), "model"},
		{"model name a reference", src(base, sh), src(strings.Replace(base, `"claude-haiku-4-5"`, `runtime("MODEL", "claude-haiku-4-5")`, 1), sh), "model"},
		{"model name a secret given a default", src(strings.Replace(base, `"claude-haiku-4-5"`, `secret(runtime("MODEL"))`, 1), sh),
			src(strings.Replace(base, `"claude-haiku-4-5"`, `secret(runtime("MODEL", "claude-haiku-4-5"))`, 1), sh), "model"},
		{"capability added", src(base, sh), src(agent(agentOpts{caps: `["shell", "math", "web"]`}), sh), "capabilities"},
		{"capabilities a reference", src(base, sh), src(agent(agentOpts{caps: `runtime("CAPS", ["shell", "math"])`}), sh), "capabilities"},
		{"capabilities reference default changed", src(agent(agentOpts{caps: `runtime("CAPS", ["shell"])`}), sh), src(agent(agentOpts{caps: `runtime("CAPS", ["shell", "math"])`}), sh), "capabilities"},
		{"capabilities a secret given a default", src(agent(agentOpts{caps: `secret(runtime("CAPS"))`}), sh), src(agent(agentOpts{caps: `secret(runtime("CAPS", ["shell"]))`}), sh), "capabilities"},
		{"capability_policy", src(base, sh), src(agent(agentOpts{policy: `"extensible"`}), sh), "capability_policy"},
		{"capability_policy a secret given a default", src(agent(agentOpts{policy: `secret(runtime("POLICY"))`}), sh), src(agent(agentOpts{policy: `secret(runtime("POLICY", "locked"))`}), sh), "capability_policy"},
		{"graph model timeout", src(base, sh), src(agent(agentOpts{graph: "    model {\n      timeout = 30000\n    }"}), sh), "graph_model"},
		{"graph model retry", src(agent(agentOpts{graph: "    model {\n      retry {\n        max_attempts = 2\n        initial_backoff = 100\n        max_backoff = 1000\n      }\n    }"}), sh),
			src(agent(agentOpts{graph: "    model {\n      retry {\n        max_attempts = 3\n        initial_backoff = 100\n        max_backoff = 1000\n      }\n    }"}), sh), "graph_model"},
		{"graph model timeout a secret given a default", src(agent(agentOpts{graph: "    model {\n      timeout = secret(runtime(\"T\"))\n    }"}), sh),
			src(agent(agentOpts{graph: "    model {\n      timeout = secret(runtime(\"T\", 30000))\n    }"}), sh), "graph_model"},
		{"prompt text", src(a(`  prompt = "Be brief."`), sh), src(a(`  prompt = "Be thorough."`), sh), "prompt"},
		{"prompt messages", src(a(`  prompt = [{ role = "system", content = "Be brief." }]`), sh), src(a(`  prompt = [{ role = "system", content = "Be brief." }, { role = "user", content = "Hi." }]`), sh), "prompt"},
		{"langfuse label", src(a(`  prompt = { source = "langfuse", prompt_name = "p", public_key = runtime("LF_PUBLIC"), secret_key = secret(runtime("LF_SECRET")), label = "production" }`), sh), src(a(`  prompt = { source = "langfuse", prompt_name = "p", public_key = runtime("LF_PUBLIC"), secret_key = secret(runtime("LF_SECRET")), label = "staging" }`), sh), "prompt"},
		{"langfuse secret_key given a default", src(a(`  prompt = { source = "langfuse", prompt_name = "p", public_key = runtime("LF_PUBLIC"), secret_key = secret(runtime("LF_SECRET")) }`), sh),
			src(a(`  prompt = { source = "langfuse", prompt_name = "p", public_key = runtime("LF_PUBLIC"), secret_key = secret(runtime("LF_SECRET", "sk-lf-0")) }`), sh), "prompt"},

		// A bash tool's settings.
		{"bash description", src(base, sh), src(base, bash("commands = [\"ls\"]\ndescription = \"Lists.\"")), "tools"},
		{"bash command added", src(base, sh), src(base, bash(`commands = ["ls", "cat"]`)), "tools"},
		{"bash commands reordered", src(base, bash(`commands = ["ls", "cat"]`)), src(base, bash(`commands = ["cat", "ls"]`)), "tools"},
		{"bash cwd", src(base, sh), src(base, bash("commands = [\"ls\"]\ncwd = \"/work\"")), "tools"},
		{"bash shared", src(base, sh), src(base, bash("commands = [\"ls\"]\nshared = true")), "tools"},
		{"bash fs", src(base, bash("commands = [\"ls\"]\nfs {\n  kind = \"in_memory\"\n}")), src(base, bash("commands = [\"ls\"]\nfs {\n  kind = \"overlay\"\n  path = \"/srv\"\n}")), "tools"},
		{"bash env vars", src(base, bash("commands = [\"ls\"]\nenv {\n  kind = \"allow\"\n  vars = [\"HOME\"]\n}")), src(base, bash("commands = [\"ls\"]\nenv {\n  kind = \"allow\"\n  vars = [\"HOME\", \"LANG\"]\n}")), "tools"},
		{"bash env vars split", src(base, bash("commands = [\"ls\"]\nenv {\n  kind = \"allow\"\n  vars = [\"HOME, LANG\"]\n}")), src(base, bash("commands = [\"ls\"]\nenv {\n  kind = \"allow\"\n  vars = [\"HOME\", \"LANG\"]\n}")), "tools"},
		{"bash limits", src(base, bash("commands = [\"ls\"]\nlimits {\n  max_command_count = 10\n}")), src(base, bash("commands = [\"ls\"]\nlimits {\n  max_command_count = 20\n}")), "tools"},
		{"bash network", src(base, bash("commands = [\"ls\"]\nnetwork {\n  enabled = true\n  allowed_url_prefixes = [\"https://a.example.com/\"]\n}")),
			src(base, bash("commands = [\"ls\"]\nnetwork {\n  enabled = true\n  allowed_url_prefixes = [\"https://b.example.com/\"]\n}")), "tools"},
		{"tool capabilities (requires)", src(base, sh), src(base, strings.Replace(sh, `["shell::exec"]`, `["shell::exec", "shell::write"]`, 1)), "tools"},
		{"tool disabled", src(base, sh), src(base, bash("commands = [\"ls\"]\nenabled = false")), "tools"},
		{"tool enabled a reference", src(base, sh), src(base, bash("commands = [\"ls\"]\nenabled = runtime(\"SH_ON\", true)")), "tools"},
		{"tool enabled a secret given a default", src(base, bash("commands = [\"ls\"]\nenabled = secret(runtime(\"SH_ON\"))")), src(base, bash("commands = [\"ls\"]\nenabled = secret(runtime(\"SH_ON\", true))")), "tools"},
		{"tool config", src(base, sh), src(base, bash("commands = [\"ls\"]\nconfig = { region = \"eu\" }")), "tools"},
		{"tool config credential", src(base, bash("commands = [\"ls\"]\nconfig = { api_key = \"k-1\" }")), src(base, bash("commands = [\"ls\"]\nconfig = { api_key = \"k-2\" }")), "tools"},
		{"tool config reference default", src(base, bash("commands = [\"ls\"]\nconfig = { region = runtime(\"REGION\", \"eu\") }")), src(base, bash("commands = [\"ls\"]\nconfig = { region = runtime(\"REGION\", \"us\") }")), "tools"},
		{"tool config secret given a default", src(base, bash("commands = [\"ls\"]\nconfig = { api_key = secret(runtime(\"KEY\")) }")), src(base, bash("commands = [\"ls\"]\nconfig = { api_key = secret(runtime(\"KEY\", \"k\")) }")), "tools"},

		// mcp blocks.
		{"mcp transport", src(base, sh, stdio("")), src(base, sh, httpMCP("")), "tools"},
		{"mcp command", src(base, sh, stdio("")), src(base, sh, mcp("  transport = \"stdio\"\n  command = \"gh-mcp-2\"\n")), "tools"},
		{"mcp command a secret given a default", src(base, sh, mcp("  transport = \"stdio\"\n  command = secret(runtime(\"CMD\"))\n")), src(base, sh, mcp("  transport = \"stdio\"\n  command = secret(runtime(\"CMD\", \"gh-mcp\"))\n")), "tools"},
		{"mcp args", src(base, sh, stdio(`  args = ["--a"]`)), src(base, sh, stdio(`  args = ["--b"]`)), "tools"},
		{"mcp args split", src(base, sh, stdio(`  args = ["--tags", "a, b"]`)), src(base, sh, stdio(`  args = ["--tags", "a", "b"]`)), "tools"},
		{"mcp args an empty one", src(base, sh, stdio(`  args = ["--a"]`)), src(base, sh, stdio(`  args = ["--a", ""]`)), "tools"},
		{"mcp args only an empty one", src(base, sh, stdio(`  args = ["--a"]`)), src(base, sh, stdio(`  args = [""]`)), "tools"},
		{"mcp args an empty one for none", src(base, sh, stdio(`  args = []`)), src(base, sh, stdio(`  args = [""]`)), "tools"},
		{"mcp arg a reference", src(base, sh, stdio(`  args = ["--a", "x"]`)), src(base, sh, stdio(`  args = ["--a", runtime("X")]`)), "tools"},
		{"mcp arg a reference for its text", src(base, sh, stdio(`  args = ["--a", "runtime(\"X\")"]`)), src(base, sh, stdio(`  args = ["--a", runtime("X")]`)), "tools"},
		{"mcp arg a secret given a default", src(base, sh, stdio(`  args = ["--a", secret(runtime("X"))]`)), src(base, sh, stdio(`  args = ["--a", secret(runtime("X", "x"))]`)), "tools"},
		{"mcp url", src(base, sh, httpMCP("")), src(base, sh, mcp("  transport = \"http\"\n  url = \"https://mcp2.example.com/mcp\"\n")), "tools"},
		{"mcp url a secret given a default", src(base, sh, mcp("  transport = \"http\"\n  url = secret(runtime(\"URL\"))\n")), src(base, sh, mcp("  transport = \"http\"\n  url = secret(runtime(\"URL\", \"https://mcp.example.com/mcp\"))\n")), "tools"},
		{"mcp headers", src(base, sh, httpMCP(`  headers = { "X-Team" = "a" }`)), src(base, sh, httpMCP(`  headers = { "X-Team" = "b" }`)), "tools"},
		{"mcp headers secret given a default", src(base, sh, httpMCP(`  headers = { "X-Key" = secret(runtime("K")) }`)), src(base, sh, httpMCP(`  headers = { "X-Key" = secret(runtime("K", "k")) }`)), "tools"},
		{"mcp auth_token", src(base, sh, httpMCP(`  auth_token = "t-1"`)), src(base, sh, httpMCP(`  auth_token = "t-2"`)), "tools"},
		{"mcp auth_token a secret given a default", src(base, sh, httpMCP(`  auth_token = secret(runtime("TOKEN"))`)), src(base, sh, httpMCP(`  auth_token = secret(runtime("TOKEN", "t"))`)), "tools"},
		{"mcp config (server environment)", src(base, sh, stdio(`  config = { GH_HOST = "a" }`)), src(base, sh, stdio(`  config = { GH_HOST = "b" }`)), "tools"},
		{"mcp served tools pinned", src(base, sh, httpMCP("")), locked(src(base, sh, httpMCP("")), bothDefs), "tools"},
		{"mcp served definition changed", locked(src(base, sh, httpMCP("")), bothDefs),
			locked(src(base, sh, httpMCP("")), map[string]string{"create_issue": strings.Replace(defIssue, "Create an issue.", "Create an issue now.", 1), "open_pr": defPR}), "tools"},
		{"mcp output schema pinned", locked(src(base, sh, httpMCP("")), bothDefs),
			locked(src(base, sh, httpMCP("")), map[string]string{"create_issue": defIssue[:len(defIssue)-1] + `,"outputSchema":{"type":"object"}}`, "open_pr": defPR}), "tools"},
		{"mcp expose", locked(src(base, sh, httpMCP("")), bothDefs), locked(src(base, sh, httpMCP(`  expose = ["create_issue"]`)), bothDefs), "tools"},
		{"mcp tool_capabilities", locked(src(base, sh, httpMCP("")), bothDefs), locked(src(base, sh, httpMCP(`  tool_capabilities = { create_issue = ["math::write"] }`)), bothDefs), "tools"},

		// a2a blocks (unresolved: the card is never fetched).
		{"a2a url", src(base, sh, a2a("")), src(base, sh, strings.Replace(a2a(""), "peer.example.com", "peer2.example.com", 1)), "tools"},
		{"a2a url a secret given a default", src(base, sh, strings.Replace(a2a(""), `"https://peer.example.com/a2a"`, `secret(runtime("PEER"))`, 1)),
			src(base, sh, strings.Replace(a2a(""), `"https://peer.example.com/a2a"`, `secret(runtime("PEER", "https://peer.example.com/a2a"))`, 1)), "tools"},
		{"a2a tenant id a reference for its text", src(base, sh, a2a("  tenant {\n    policy = \"fixed\"\n    id = \"secret(runtime(\\\"TENANT\\\"))\"\n  }")),
			src(base, sh, a2a("  tenant {\n    policy = \"fixed\"\n    id = secret(runtime(\"TENANT\"))\n  }")), "tools"},
		{"a2a headers", src(base, sh, a2a(`  headers = { "X-Team" = "a" }`)), src(base, sh, a2a(`  headers = { "X-Team" = "b" }`)), "tools"},
		{"a2a auth_token", src(base, sh, a2a(`  auth_token = "t-1"`)), src(base, sh, a2a(`  auth_token = "t-2"`)), "tools"},
		{"a2a auth_token a secret given a default", src(base, sh, a2a(`  auth_token = secret(runtime("TOKEN"))`)), src(base, sh, a2a(`  auth_token = secret(runtime("TOKEN", "t"))`)), "tools"},
		{"a2a timeout_secs", src(base, sh, a2a(`  timeout_secs = 30`)), src(base, sh, a2a(`  timeout_secs = 60`)), "tools"},
		{"a2a timeout_secs a secret given a default", src(base, sh, a2a(`  timeout_secs = secret(runtime("T"))`)), src(base, sh, a2a(`  timeout_secs = secret(runtime("T", 30))`)), "tools"},
		{"a2a tenant", src(base, sh, a2a("  tenant {\n    policy = \"inherit\"\n  }")), src(base, sh, a2a("  tenant {\n    policy = \"fixed\"\n    id = \"acme\"\n  }")), "tools"},
		{"a2a tenant id a secret given a default", src(base, sh, a2a("  tenant {\n    policy = \"fixed\"\n    id = secret(runtime(\"TENANT\"))\n  }")),
			src(base, sh, a2a("  tenant {\n    policy = \"fixed\"\n    id = secret(runtime(\"TENANT\", \"acme\"))\n  }")), "tools"},
		{"a2a default_accepted_output_modes", src(base, sh, a2a(`  default_accepted_output_modes = ["text/plain"]`)), src(base, sh, a2a(`  default_accepted_output_modes = ["text/plain", "application/json"]`)), "tools"},
		{"a2a target_agent", src(base, sh, a2a("")), src(base, sh, a2a(`  target_agent = "b"`), "agent \"b\" {\n  capabilities = []\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name = \"claude-haiku-4-5\"\n  }\n}\n"), "tools"},

		// javascript and python packages.
		{"javascript source", with(src(base, sh, jsTool("")), jsSource("add", "Adds.")), with(src(base, sh, jsTool("")), jsSource("add", "Adds two numbers.")), "tools"},
		{"javascript export", with(src(base, sh, jsTool("")), jsSource("add", "Adds.")), with(src(base, sh, jsTool(`  export = "plus"`)), jsSource("plus", "Adds.")), "tools"},
		{"javascript bundle no longer shipped", with(src(base, sh, jsTool("")), jsSource("add", "Adds.")), with(src(agent(agentOpts{caps: `["shell"]`}), sh, jsTool("")), jsSource("add", "Adds.")), "capabilities"},
		{"python source", with(src(base, sh, pyTool("")), pySource("Find a note.")), with(src(base, sh, pyTool("")), pySource("Find a note by its title.")), "tools"},
		{"python export", with(src(base, sh, pyTool("")), pySource("Find a note.")), with(src(base, sh, pyTool(`  export = "other"`)), pySource("Find a note.")), "tools"},

		// Skills.
		{"skill added", src(base, sh), src(base, sh, inline(`"Notes."`, `"Take notes."`, "")), "skills"},
		{"inline skill description", src(base, sh, inline(`"Notes."`, `"Take notes."`, "")), src(base, sh, inline(`"Note taking."`, `"Take notes."`, "")), "skills"},
		{"inline skill content", src(base, sh, inline(`"Notes."`, `"Take notes."`, "")), src(base, sh, inline(`"Notes."`, `"Take short notes."`, "")), "skills"},
		{"inline skill resource", src(base, sh, inline(`"Notes."`, `"Take notes."`, `{ "a.md" = "A" }`)), src(base, sh, inline(`"Notes."`, `"Take notes."`, `{ "a.md" = "B" }`)), "skills"},
		{"skill allowed-tools", with(src(base, sh, skillSource), skillFiles("description: Research.\n", "")), with(src(base, sh, skillSource), skillFiles("description: Research.\nallowed-tools: sh\n", "")), "skills"},
		{"skill description", with(src(base, sh, skillSource), skillFiles("description: Research.\n", "")), with(src(base, sh, skillSource), skillFiles("description: Research things.\n", "")), "skills"},
		{"skill file added", with(src(base, sh, skillSource), skillFiles("description: Research.\n", "")), with(src(base, sh, skillSource), skillFiles("description: Research.\n", "Notes.")), "skills"},

		// The workspace's blocks.
		{"network added", src(base, sh), src(base, sh, "network {\n  policy {\n    addresses {\n      allow_private = false\n    }\n  }\n}\n"), "network"},
		{"http_server port a secret given a default", src("http_server {\n  port = secret(runtime(\"PORT\"))\n}\n", base, sh), src("http_server {\n  port = secret(runtime(\"PORT\", 8080))\n}\n", base, sh), "workspace_references"},

		// What leaves the artifact as it is.
		{"nothing", src(base, sh), src(base, sh), ""},
		{"capabilities reordered", src(base, sh), src(agent(agentOpts{caps: `["math", "shell"]`}), sh), ""},
		{"a secret's default changed", src(base, bash("commands = [\"ls\"]\nenabled = secret(runtime(\"SH_ON\", true))")), src(base, bash("commands = [\"ls\"]\nenabled = secret(runtime(\"SH_ON\", false))")), ""},
		{"an mcp secret's default changed", src(base, sh, httpMCP(`  auth_token = secret(runtime("TOKEN", "t-1"))`)), src(base, sh, httpMCP(`  auth_token = secret(runtime("TOKEN", "t-2"))`)), ""},
		{"a langfuse secret's default changed", src(a(`  prompt = { source = "langfuse", prompt_name = "p", public_key = runtime("LF_PUBLIC"), secret_key = secret(runtime("LF_SECRET", "sk-lf-0")) }`), sh),
			src(a(`  prompt = { source = "langfuse", prompt_name = "p", public_key = runtime("LF_PUBLIC"), secret_key = secret(runtime("LF_SECRET", "sk-lf-1")) }`), sh), ""},
		{"javascript block description unused", with(src(base, sh, jsTool(`  description = "One."`)), jsSource("add", "Adds.")), with(src(base, sh, jsTool(`  description = "Two."`)), jsSource("add", "Adds.")), ""},
		{"javascript file outside the package", with(src(base, sh, jsTool("")), jsSource("add", "Adds.")), with(with(src(base, sh, jsTool("")), jsSource("add", "Adds.")), map[string]string{"README.md": "x"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := planWorkspace(t, tc.before, nil)
			after := planWorkspace(t, tc.after, appliedFrom(before))
			differs := !maps.EqualFunc(artifactOf(t, before), artifactOf(t, after), bytes.Equal)
			rc := actionOf(after, "agent.a")
			if tc.attribute == "" {
				if differs {
					t.Fatalf("the control case changes the artifact: %s", artifactDiff(artifactOf(t, before), artifactOf(t, after)))
				}
				if !slices.Equal(rc.Actions, []string{ActionNoOp}) {
					t.Errorf("agent.a: %+v; want no change", rc)
				}
				return
			}
			if !differs {
				t.Fatal("the case does not change the artifact")
			}
			if !slices.Equal(rc.Actions, []string{ActionUpdate}) || !slices.Contains(rc.ChangedAttributes, tc.attribute) {
				t.Errorf("agent.a: %+v; want an update that changes %s\nartifact: %s", rc, tc.attribute, artifactDiff(artifactOf(t, before), artifactOf(t, after)))
			}
		})
	}
}

// TestSecretDefaultNotInAttributes: a secret whose default is given
// shows as one in the attributes, which state stores and plan prints,
// and its default does not show at all.
func TestSecretDefaultNotInAttributes(t *testing.T) {
	const src = `
agent "a" {
  capabilities      = ["shell"]
  capability_policy = secret(runtime("POLICY", "locked"))
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = secret(runtime("MODEL", "hunter2-model"))
  }
  prompt = { source = "langfuse", prompt_name = "p", public_key = runtime("LF_PUBLIC"), secret_key = secret(runtime("LF_SECRET", "hunter2-lf")) }
}
tool "gh" {
  kind       = "mcp"
  transport  = "stdio"
  command    = secret(runtime("CMD", "hunter2-cmd"))
  args       = ["--token", secret(runtime("ARG", "hunter2-arg"))]
}
tool "peer" {
  kind       = "a2a"
  url        = secret(runtime("PEER", "https://hunter2.example.com/a2a"))
  auth_token = secret(runtime("PEER_TOKEN", "hunter2-peer"))
}
`
	p := planSrc(t, src, nil)
	withheld := 0
	for _, ad := range p.Addresses {
		for k, v := range ad.Attributes {
			if strings.Contains(v, "hunter2") {
				t.Errorf("%s %s shows a secret's default: %s", ad.Address, k, v)
			}
			withheld += strings.Count(v, "(default withheld)")
		}
	}
	if withheld < 7 {
		t.Errorf("%d attributes mark a secret's default as withheld, want one for each of the 7 secrets", withheld)
	}
}

// TestListAttributeReadsOneList: a list attribute is one list's, and
// gives its items back, whatever its items hold.
func TestListAttributeReadsOneList(t *testing.T) {
	lists := [][]string{{}, {""}, {"", ""}, {"ls", "cat"}, {"ls, cat"}, {"ls,", "cat"}, {"a", ""}, {"a, "}, {`["a",""]`}, {"[x"}, {"[x", "y"}}
	seen := map[string][]string{}
	for _, l := range lists {
		got := list(manifest.StringList{Values: l, Set: true})
		if prev, dup := seen[got]; dup {
			t.Errorf("%q and %q both read %q", prev, l, got)
		}
		seen[got] = l
		if items := listItems(got); len(l) > 0 && !slices.Equal(items, l) {
			t.Errorf("%q: attribute %q gives back %q", l, got, items)
		}
	}
	// An item that reads as a reference is not one.
	ref := manifest.StringList{Values: []string{""}, ElemRuntime: []*manifest.RuntimeRef{{Env: "X"}}, Set: true}
	for _, v := range []string{`runtime("X")`, `(literal) runtime("X")`} {
		if lit := list(manifest.StringList{Values: []string{v}, Set: true}); lit == list(ref) || lit == list(manifest.StringList{Values: []string{literalMark + v}, Set: true}) {
			t.Errorf("%q reads %q, as another list does", v, lit)
		}
	}
	// A list without such items keeps the attribute earlier states hold.
	if got := list(manifest.StringList{Values: []string{"ls", "cat"}}); got != "ls, cat" {
		t.Errorf("got %q, want %q", got, "ls, cat")
	}
}

// artifactDiff names the files two artifacts differ in, with agent.json's
// first differing line.
func artifactDiff(a, b map[string][]byte) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(a)) {
		if bb, ok := b[name]; !ok {
			out = append(out, "- "+name)
		} else if !bytes.Equal(a[name], bb) {
			line := ""
			al, bl := strings.Split(string(a[name]), "\n"), strings.Split(string(bb), "\n")
			for i := range min(len(al), len(bl)) {
				if al[i] != bl[i] {
					line = ": " + strings.TrimSpace(al[i]) + " → " + strings.TrimSpace(bl[i])
					break
				}
			}
			out = append(out, "~ "+name+line)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			out = append(out, "+ "+name)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
