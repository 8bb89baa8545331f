package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/agentform/agentform/lockfile"
)

// sample is a complete, consistent artifact: its files, the lockfile
// they were built against, and the agent.json that describes them. It is
// also the full example in docs/agent-json.md.
type sample struct {
	files []File
	lock  *lockfile.File
	agent *Agent
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// h1 is dirhash Hash1 over the files under dir, named relative to it.
func h1(t testing.TB, files []File, dir string) string {
	t.Helper()
	byName := map[string][]byte{}
	var names []string
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f.Path, dir); ok {
			byName[rel] = f.Data
			names = append(names, rel)
		}
	}
	slices.Sort(names)
	h, err := dirhash.Hash1(names, func(n string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(byName[n])), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// fakeH1 is a well-formed h1 hash of a package that is not in the
// artifact (a javascript package's source).
func fakeH1(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "h1:" + base64.StdEncoding.EncodeToString(sum[:])
}

func ref(env string) *RuntimeRef { return &RuntimeRef{Env: env} }

func refDefault(env, def string) *RuntimeRef { return &RuntimeRef{Env: env, Default: JSON(def)} }

func secretRef(env string) *RuntimeRef { return &RuntimeRef{Env: env, Secret: true} }

func intp(v int64) *Int { return &Int{Value: v} }

func newSample(t testing.TB) *sample {
	t.Helper()
	bundle := []byte("const adder = {\n  name: \"adder\",\n  description: \"Add two numbers.\",\n  execute: ({ args }) => ({ output: args.a + args.b }),\n};\nexport { adder };\n")
	card := []byte(`{"capabilities":{"streaming":true},"name":"Planner","skills":[{"id":"plan","name":"Plan"}],"url":"http://localhost:9000","version":"1.2.0"}`)
	createIssue := `{"description":"Create an issue.","inputSchema":{"properties":{"title":{"type":"string"}},"type":"object"},"name":"create_issue"}`
	files := []File{
		{Path: "tools/adder/bundle.js", Data: bundle},
		{Path: "tools/planner/agent-card.json", Data: card},
		{Path: "tools/weather/src/pyproject.toml", Data: []byte("[project]\nname = \"weather\"\nversion = \"0.1.0\"\n")},
		{Path: "tools/weather/src/uv.lock", Data: []byte("version = 1\n")},
		{Path: "tools/weather/src/weather/__init__.py", Data: []byte("def weather(city: str) -> str:\n    \"\"\"Get the weather in a city.\"\"\"\n    return \"sunny\"\n")},
		{Path: "tools/weather/src/bin/run.sh", Data: []byte("#!/bin/sh\nexec python3 -m weather \"$@\"\n"), Executable: true},
		{Path: "skills/arithmetic/SKILL.md", Data: []byte("---\nname: arithmetic\ndescription: Careful arithmetic.\nallowed-tools: adder\n---\nAdd step by step.\n")},
		{Path: "skills/arithmetic/examples/sums.md", Data: []byte("1 + 1 = 2\n")},
	}
	lock := &lockfile.File{
		Tools: map[string]*lockfile.Tool{
			"adder": {Kind: "javascript", Source: fakeH1("adder"), Bundle: digest(bundle), Bundler: "esbuild 0.28.2"},
			"github": {Kind: "mcp", ServerName: "github-mcp", ServerVersion: "1.4.0",
				HashedFields: []string{"name", "description", "inputSchema", "outputSchema", "annotations"},
				Served:       map[string]string{"create_issue": digest([]byte(createIssue))},
				Definitions:  map[string]string{"create_issue": createIssue}},
			"planner": {Kind: "a2a", Card: digest(card), CardName: "Planner", CardVersion: "1.2.0"},
			"weather": {Kind: "python", Source: h1(t, files, "tools/weather/src/"), UVLock: digest([]byte("version = 1\n")), Interpreter: "embedded"},
		},
		Skills: map[string]*lockfile.Skill{
			"arithmetic": {Source: h1(t, files, "skills/arithmetic/")},
		},
	}

	objectSchema := JSON(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)
	taskSchema := JSON(`{"type":"object","properties":{"task_id":{"type":"string"}},"required":["task_id"]}`)
	// The built-in skill tools as plan writes them (planner.skillToolSchema):
	// no description, each its own schema.
	skillSchema := map[string]JSON{
		"list_skills":      JSON(`{"properties":{},"type":"object"}`),
		"get_skill":        JSON(`{"properties":{"skill":{"type":"string"}},"required":["skill"],"type":"object"}`),
		"describe_skill":   JSON(`{"properties":{"skill":{"type":"string"}},"required":["skill"],"type":"object"}`),
		"read_skill_file":  JSON(`{"properties":{"path":{"type":"string"},"skill":{"type":"string"}},"required":["skill","path"],"type":"object"}`),
		"run_skill_script": JSON(`{"properties":{"args":{"items":{"type":"string"},"type":"array"},"script":{"type":"string"},"skill":{"type":"string"}},"required":["skill","script"],"type":"object"}`),
	}
	plannerURL := String{Runtime: refDefault("PLANNER_URL", `"http://localhost:9000"`)}
	plannerToken := &String{Runtime: secretRef("PLANNER_TOKEN")}
	a2aTool := func(op string, params JSON) Tool {
		return Tool{
			Name: "a2a_planner_" + op, Block: "tool.planner", Kind: KindA2A,
			Description: "Delegate to the Planner agent (" + op + ").",
			Parameters:  params, Requires: []string{"a2a::planner"}, Enabled: Bool{Value: true},
			File: "tools/planner/agent-card.json",
			A2A: &A2A{Operation: op, URL: plannerURL, AuthToken: plannerToken,
				Tenant: &Tenant{Policy: "inherit"}, TimeoutSecs: intp(60), CardDigest: digest(card)},
		}
	}
	skillTool := func(name string, requires ...string) Tool {
		return Tool{Name: name, Block: "skills", Kind: KindSkills,
			Parameters: skillSchema[name], Requires: requires, Enabled: Bool{Value: true}}
	}
	agent := &Agent{
		Name:        "assistant",
		Version:     "0.1.0",
		Description: "Answers questions, does sums, files issues.",
		Graph: Graph{Type: "react", Model: &ModelPolicy{
			Timeout: intp(30000),
			Retry:   &Retry{MaxAttempts: Int{Value: 3}, InitialBackoff: Int{Value: 500}, MaxBackoff: Int{Value: 5000}},
		}},
		Model:            Model{Provider: String{Value: "anthropic"}, Name: String{Runtime: refDefault("MODEL_NAME", `"claude-sonnet-4-5"`)}},
		Prompt:           &Prompt{Kind: PromptText, Text: "You are a careful assistant. Use tools when they help."},
		Capabilities:     Literals("weather::get", "math", "skills", "github::read", "a2a::planner"),
		CapabilityPolicy: String{Value: "locked"},
		Runtime: []RuntimeRef{
			*refDefault("PLANNER_URL", `"http://localhost:9000"`),
			*secretRef("PLANNER_TOKEN"),
			*refDefault("MODEL_NAME", `"claude-sonnet-4-5"`),
			*refDefault("WEATHER_ENABLED", `true`),
			*secretRef("GITHUB_TOKEN"),
		},
		Tools: []Tool{
			{Name: "weather", Block: "tool.weather", Kind: KindPython, Description: "Get the weather in a city.",
				Parameters: JSON(`{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}`),
				Requires:   []string{"weather::get"}, Enabled: Bool{Runtime: refDefault("WEATHER_ENABLED", "true")},
				File: "tools/weather/src/", Export: "weather", Entry: &Entry{File: "weather/__init__.py", Attr: "weather"}},
			{Name: "adder", Block: "tool.adder", Kind: KindJavaScript, Description: "Add two numbers.",
				Parameters: JSON(`{"properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"type":"object"}`),
				Requires:   []string{"math::add"}, Enabled: Bool{Value: true}, File: "tools/adder/bundle.js",
				Export: "adder", Config: JSON(`{"precision": 2}`)},
			{Name: "shell", Block: "tool.shell", Kind: KindBash, Description: "Run ls and cat in a sandbox.",
				Parameters: JSON(`{"type":"object","properties":{"script":{"type":"string"}},"required":["script"]}`),
				Requires:   []string{"shell"}, Enabled: Bool{Value: false},
				Bash: &Bash{Commands: []string{"ls", "cat"}, FS: &BashFS{Kind: "in_memory"}, Env: &BashEnv{Kind: "empty"},
					Limits: &BashLimits{MaxExecutionTimeSecs: new(int64(10))}}},
			{Name: "github__create_issue", Block: "tool.github", Kind: KindMCP, Description: "Create an issue.",
				Parameters: JSON(`{"properties":{"title":{"type":"string"}},"type":"object"}`),
				Requires:   []string{"github::write"}, Enabled: Bool{Value: true},
				Config: JSON(`{"GITHUB_TOKEN":{"env":"GITHUB_TOKEN","secret":true}}`),
				MCP: &MCP{Transport: "stdio", Command: &String{Value: "npx"},
					Args:   &Strings{Values: []String{{Value: "-y"}, {Value: "@modelcontextprotocol/server-github"}}},
					Served: "create_issue", Digest: digest([]byte(createIssue))}},
			a2aTool(A2ASend, objectSchema),
			a2aTool(A2AStream, objectSchema),
			a2aTool(A2AGetTask, taskSchema),
			a2aTool(A2ACancelTask, taskSchema),
			skillTool("list_skills", "skills"),
			skillTool("get_skill", "skills"),
			skillTool("describe_skill", "skills"),
			skillTool("read_skill_file", "skills"),
			skillTool("run_skill_script", "skills::execute"),
		},
		Blocks: []Block{
			{Name: "weather", Kind: KindPython, Lock: NewLock(lock.Tools["weather"])},
			{Name: "adder", Kind: KindJavaScript, Lock: NewLock(lock.Tools["adder"])},
			{Name: "shell", Kind: KindBash},
			{Name: "github", Kind: KindMCP, Lock: NewLock(lock.Tools["github"])},
			{Name: "planner", Kind: KindA2A, Lock: NewLock(lock.Tools["planner"])},
		},
		Skills: []Skill{{
			Name: "arithmetic", Description: "Careful arithmetic.", AllowedTools: []string{"adder"},
			Files: []string{"skills/arithmetic/examples/sums.md", "skills/arithmetic/SKILL.md"},
			Lock:  NewSkillLock(lock.Skills["arithmetic"]),
		}},
		LockfileDigest: lock.Digest(),
	}
	allow := func(tool string) Cell { return Cell{Tool: tool, Decision: DecisionAllow} }
	deny := func(tool string, missing ...string) Cell {
		return Cell{Tool: tool, Decision: DecisionDeny, Missing: missing}
	}
	agent.Matrix = []Cell{
		allow("weather"), allow("adder"),
		deny("github__create_issue", "github::write"),
		allow("a2a_planner_send"), allow("a2a_planner_stream"),
		allow("a2a_planner_get_task"), allow("a2a_planner_cancel_task"),
		allow("list_skills"), allow("get_skill"), allow("describe_skill"), allow("read_skill_file"), allow("run_skill_script"),
	}
	return &sample{files: files, lock: lock, agent: agent}
}

// all returns the sample's files with agent.json.
func (s *sample) all(t testing.TB) []File {
	t.Helper()
	data, err := MarshalAgent(s.agent)
	if err != nil {
		t.Fatal(err)
	}
	return append(slices.Clone(s.files), File{Path: AgentName, Data: data})
}

// build returns the sample's artifact.
func (s *sample) build(t testing.TB) []byte {
	t.Helper()
	out, err := Build(s.all(t))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
