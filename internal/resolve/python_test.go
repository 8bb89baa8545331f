package resolve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
)

// resolveTestPreamble makes a manifest loadable: a workspace needs an agent.
const resolveTestPreamble = `
providers {
  anthropic {
    models = ["claude-haiku-4-5"]
  }
}
agent "a" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`

// pythonFixtures is the absolute path of testdata/python.
func pythonFixtures(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "python"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// loadTestTool loads a manifest made of the preamble and tools (which must
// start on line 1 of main.acl, so that tests can name lines) and returns the
// named tool block.
func loadTestTool(t testing.TB, dir, tools, name string) *manifest.Tool {
	t.Helper()
	cfg, diags := manifest.LoadSources(dir, map[string][]byte{"main.acl": []byte(tools + resolveTestPreamble)})
	if diags.HasErrors() {
		t.Fatalf("loading the manifest: %s", diags.Error())
	}
	tool := cfg.Tool(name)
	if tool == nil {
		t.Fatalf("no tool %q in the manifest", name)
	}
	return tool
}

// pythonRequest builds a request for a python tool block written in HCL,
// with the fixtures (or dir, when not "") as the workspace.
func pythonRequest(t testing.TB, dir, block, name string) Request {
	t.Helper()
	if dir == "" {
		dir = pythonFixtures(t)
	}
	return Request{
		Dir:     dir,
		Root:    ProjectRoot(dir),
		Tool:    loadTestTool(t, dir, block, name),
		Timeout: 20 * time.Second,
		Refresh: true,
	}
}

// copyPythonFixture copies testdata/python/<name> into a new temporary
// workspace and returns the workspace directory.
func copyPythonFixture(t *testing.T, name string) string {
	t.Helper()
	ws := t.TempDir()
	src := filepath.Join(pythonFixtures(t), name)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(ws, name, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func errorsOnly(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}

func TestResolvePythonSchemas(t *testing.T) {
	tests := []struct {
		name        string
		block       string
		tool        string
		description string
		schema      string
		warnings    []string // substrings, one per warning, in order
	}{
		{
			name: "tdk class found by snake case of the block name",
			block: `tool "daily_forecast" {
  kind   = "python"
  source = "./tdk"
}`,
			tool:        "daily_forecast",
			description: "Forecast for the next days.",
			schema:      `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city","days"]}`,
		},
		{
			name: "tdk class found by its name attribute, schema from a module constant",
			block: `tool "weather" {
  kind   = "python"
  source = "./tdk"
  export = "current_weather"
}`,
			tool:        "weather",
			description: "Current weather for a city (temperature and conditions).",
			schema:      `{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. Paris."},"units":{"type":"string","enum":["celsius","fahrenheit"],"default":"celsius"}},"required":["city"]}`,
		},
		{
			name: "tdk class found by class name, tests not searched",
			block: `tool "weather" {
  kind   = "python"
  source = "./tdk"
  export = "Weather"
}`,
			tool:        "weather",
			description: "Current weather for a city (temperature and conditions).",
			schema:      `{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. Paris."},"units":{"type":"string","enum":["celsius","fahrenheit"],"default":"celsius"}},"required":["city"]}`,
		},
		{
			name: "tdk class with a triple-quoted description",
			block: `tool "alerts" {
  kind   = "python"
  source = "./tdk"
}`,
			tool:        "alerts",
			description: "Weather alerts for a region.\nSevere ones first.",
			schema:      `{"type":"object","properties":{},"additionalProperties":false}`,
		},
		{
			name: "tdk generic class: schema from its dataclass parameters",
			block: `tool "greeter" {
  kind   = "python"
  source = "./generic"
}`,
			tool:        "greeter",
			description: "Greets someone by name.",
			schema:      `{"type":"object","properties":{"name":{"type":"string"},"tone":{"type":"string","enum":["friendly","formal"],"default":"friendly"},"tags":{"type":"array","items":{"type":"string"}},"options":{"anyOf":[{"type":"object","properties":{"shout":{"type":"boolean"},"repeat":{"type":"integer"}}},{"type":"null"}]}},"required":["name"]}`,
		},
		{
			name: "function with Annotated, defaults, Literal, optional list",
			block: `tool "search" {
  kind   = "python"
  source = "./functions"
}`,
			tool:        "search",
			description: "Search the notes.",
			schema:      `{"type":"object","properties":{"query":{"type":"string","description":"What to look for (<= 200 characters & no HTML)."},"limit":{"type":"integer","description":"How many results to return at most.","default":10},"sort":{"type":"string","enum":["relevance","date"],"default":"relevance"},"tags":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}]},"exact":{"type":"boolean","default":false},"score":{"type":"number","default":0.5}},"required":["query"],"additionalProperties":false}`,
		},
		{
			name: "async function with Optional, keyword-only and Sphinx docs",
			block: `tool "translate" {
  kind   = "python"
  source = "./functions"
}`,
			tool:        "translate",
			description: "Translate text into another language.",
			schema:      `{"type":"object","properties":{"text":{"type":"string","description":"The text to translate."},"target":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"Language code; the user's language when omitted."},"formal":{"anyOf":[{"type":"boolean"},{"type":"null"}]},"glossary":{"type":"object","additionalProperties":{"type":"string"},"default":{}}},"required":["text"],"additionalProperties":false}`,
		},
		{
			name: "function with string annotations, tuples, integer Literal, *args and **kwargs (any other argument)",
			block: `tool "stats" {
  kind   = "python"
  source = "./functions"
}`,
			tool:        "stats",
			description: "Summary statistics.",
			schema:      `{"type":"object","properties":{"values":{"type":"array","items":{"type":"number"}},"weights":{"type":"array","items":{"type":"integer"}},"pair":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"minItems":2,"maxItems":2},"mode":{"type":"integer","enum":[1,2,3],"default":1}},"required":["values","weights","pair"]}`,
		},
		{
			name: "defaults that are not JSON are left out",
			block: `tool "cleanup" {
  kind   = "python"
  source = "./functions"
  export = "broken_default"
}`,
			tool:        "cleanup",
			description: "Defaults that are not JSON are left out.",
			schema:      `{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"},"uniqueItems":true},"ratio":{"type":"number"}},"additionalProperties":false}`,
		},
		{
			name: "the tool's own description wins over the block's, with a warning",
			block: `tool "daily_forecast" {
  kind        = "python"
  description = "Forecasts."
  source      = "./tdk"
}`,
			tool:        "daily_forecast",
			description: "Forecast for the next days.",
			schema:      `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city","days"]}`,
			warnings:    []string{`The tool in "./tdk" has a description of its own, which is what the model is told. The description of tool "daily_forecast" is not used`},
		},
		{
			name: "untyped parameters warn; manifest description is the fallback",
			block: `tool "loose" {
  kind        = "python"
  source      = "./functions"
  description = "Loosely typed."
}`,
			tool:        "loose",
			description: "Loosely typed.",
			schema:      `{"type":"object","properties":{"anything":{},"data":{"type":"object"},"when":{}},"required":["anything","data","when"],"additionalProperties":false}`,
			warnings: []string{
				"text_tools.py:42: parameter anything of loose has no type annotation",
				"text_tools.py:42: unknown type datetime.datetime",
			},
		},
		{
			// None is a value of Optional[T] (and of a Union with None):
			// the schema lets the call pass null, which the function takes.
			name: "Optional and Union with None allow null",
			block: `tool "nullable" {
  kind   = "python"
  source = "./functions"
}`,
			tool:        "nullable",
			description: "None is a value of each parameter.",
			schema: `{"type":"object","properties":{` +
				`"note":{"anyOf":[{"type":"string"},{"type":"null"}]},` +
				`"count":{"anyOf":[{"type":"integer"},{"type":"null"}]},` +
				`"key":{"anyOf":[{"type":"integer"},{"type":"string"},{"type":"null"}]},` +
				`"scores":{"type":"array","items":{"anyOf":[{"type":"number"},{"type":"null"}]},"default":[]},` +
				`"mode":{"anyOf":[{"type":"string","enum":["a","b"]},{"type":"null"}],"default":"a"},` +
				`"label":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"A label."},` +
				`"limits":{"type":"object","additionalProperties":{"anyOf":[{"type":"integer"},{"type":"null"}]},"default":{}},` +
				`"nothing":{"type":"null"},` +
				`"whatever":{}},"additionalProperties":false}`,
		},
		{
			name: "a function taking the request (ctx) has no argument schema of its own",
			block: `tool "by_request" {
  kind   = "python"
  source = "./functions"
}`,
			tool:        "by_request",
			description: "Reads its arguments from the request.",
			schema:      `{"type":"object"}`,
		},
		{
			name: "a file with a syntax error is skipped with a warning",
			block: `tool "echo" {
  kind   = "python"
  source = "./syntax"
}`,
			tool:        "echo",
			description: "Echo the text back.",
			schema:      `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
			// The message after the line number is Python's own, which
			// differs between versions.
			warnings: []string{"bad.py:1: "},
		},
		{
			name: "function beside a pure uv.lock",
			block: `tool "notes" {
  kind   = "python"
  source = "./pure"
  export = "lookup"
}`,
			tool:        "notes",
			description: "Find a note by its title.",
			schema:      `{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := pythonRequest(t, "", tt.block, tt.tool)
			res, diags := ResolvePython(context.Background(), req)
			if diags.HasErrors() {
				t.Fatalf("unexpected errors:\n%s", diags.Error())
			}
			if len(res.Tools) != 1 {
				t.Fatalf("got %d tools, want 1", len(res.Tools))
			}
			got := res.Tools[0]
			if got.Name != tt.tool {
				t.Errorf("name\ngot:  %q\nwant: %q", got.Name, tt.tool)
			}
			if got.Description != tt.description {
				t.Errorf("description\ngot:  %q\nwant: %q", got.Description, tt.description)
			}
			if fromBlock := strings.Contains(tt.block, strconv.Quote(tt.description)); res.DescriptionUnused == fromBlock {
				t.Errorf("DescriptionUnused = %v, but the description is the block's: %v", res.DescriptionUnused, fromBlock)
			}
			if string(got.InputSchema) != tt.schema {
				t.Errorf("schema\ngot:  %s\nwant: %s", got.InputSchema, tt.schema)
			}
			if len(diags) != len(tt.warnings) {
				t.Fatalf("diagnostics\ngot:  %v\nwant: %d warnings %q", diags, len(tt.warnings), tt.warnings)
			}
			for i, w := range tt.warnings {
				d := diags[i]
				if d.Severity != hcl.DiagWarning || !strings.Contains(d.Detail, w) {
					t.Errorf("warning %d\ngot:  %s: %s\nwant: a warning containing %q", i, d.Summary, d.Detail, w)
				}
				if d.Subject == nil || d.Subject.Start.Line != 3 {
					t.Errorf("warning %d subject\ngot:  %v\nwant: main.acl line 3 (source)", i, d.Subject)
				}
			}
		})
	}
}

func TestResolvePythonPinAndOutputs(t *testing.T) {
	fixtures := pythonFixtures(t)
	tests := []struct {
		name        string
		block       string
		tool        string
		fixture     string
		interpreter string
		uvLock      bool
		files       []string
	}{
		{
			name: "no uv.lock",
			block: `tool "daily_forecast" {
  kind   = "python"
  source = "./tdk"
}`,
			tool:        "daily_forecast",
			fixture:     "tdk",
			interpreter: "embedded",
			files:       []string{"pyproject.toml", "src/forecast/__init__.py", "src/forecast/tool.py", "tests/test_tool.py"},
		},
		{
			name: "static interpreter with a uv.lock",
			block: `tool "mean" {
  kind        = "python"
  source      = "./native"
  interpreter = "static"
}`,
			tool:        "mean",
			fixture:     "native",
			interpreter: "static",
			uvLock:      true,
			files:       []string{"pyproject.toml", "src/stats/__init__.py", "uv.lock"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, diags := ResolvePython(context.Background(), pythonRequest(t, "", tt.block, tt.tool))
			if diags.HasErrors() {
				t.Fatalf("unexpected errors:\n%s", diags.Error())
			}
			pkg := filepath.Join(fixtures, tt.fixture)
			h1, err := HashPackage(pkg)
			if err != nil {
				t.Fatal(err)
			}
			wantLock := ""
			if tt.uvLock {
				if wantLock, err = SHA256File(filepath.Join(pkg, "uv.lock")); err != nil {
					t.Fatal(err)
				}
			}
			pin := res.Pin
			if pin == nil {
				t.Fatal("got no pin, want one")
			}
			if pin.Kind != "python" || pin.Source != h1 || pin.UVLock != wantLock || pin.Interpreter != tt.interpreter || !strings.HasPrefix(pin.Source, "h1:") {
				t.Errorf("pin\ngot:  %+v\nwant: kind python, source %s, uv_lock %q, interpreter %s", *pin, h1, wantLock, tt.interpreter)
			}
			var keys []string
			for k := range res.Outputs {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var want []string
			for _, f := range tt.files {
				want = append(want, "src/"+f)
			}
			if !reflect.DeepEqual(keys, want) {
				t.Fatalf("outputs\ngot:  %q\nwant: %q", keys, want)
			}
			for _, f := range tt.files {
				disk, err := os.ReadFile(filepath.Join(pkg, filepath.FromSlash(f)))
				if err != nil {
					t.Fatal(err)
				}
				if string(res.Outputs["src/"+f]) != string(disk) {
					t.Errorf("output src/%s differs from the file on disk", f)
				}
			}
			if res.FromLock || res.Unresolved {
				t.Errorf("got FromLock=%v Unresolved=%v, want both false", res.FromLock, res.Unresolved)
			}
		})
	}
}

func TestResolvePythonUVLock(t *testing.T) {
	type wantErr struct {
		detail string // substring
		line   int
	}
	tests := []struct {
		name  string
		block string
		tool  string
		want  []wantErr
	}{
		{
			name: "embedded by default: C extensions reported at source",
			block: `tool "mean" {
  kind   = "python"
  source = "./native"
}`,
			tool: "mean",
			want: []wantErr{
				{detail: "locks numpy 2.0.1, which ships only platform-specific wheels (numpy-2.0.1-cp311-cp311-macosx_14_0_arm64.whl and 2 more)", line: 3},
				{detail: "locks pydantic-core 2.20.1, which ships only platform-specific wheels (pydantic_core-2.20.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl and 1 more)", line: 3},
			},
		},
		{
			name: "embedded written out: reported at interpreter",
			block: `tool "mean" {
  kind        = "python"
  source      = "./native"
  interpreter = "embedded"
}`,
			tool: "mean",
			want: []wantErr{
				{detail: "numpy 2.0.1", line: 4},
				{detail: "pydantic-core 2.20.1", line: 4},
			},
		},
		{
			name: "static accepts C extensions",
			block: `tool "mean" {
  kind        = "python"
  source      = "./native"
  interpreter = "static"
}`,
			tool: "mean",
		},
		{
			name: "pure dependencies, sdist-only, git, and a native dev dependency",
			block: `tool "notes" {
  kind   = "python"
  source = "./pure"
  export = "lookup"
}`,
			tool: "notes",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, diags := ResolvePython(context.Background(), pythonRequest(t, "", tt.block, tt.tool))
			errs := errorsOnly(diags)
			if len(errs) != len(tt.want) {
				t.Fatalf("errors\ngot:  %v\nwant: %d errors", diags, len(tt.want))
			}
			for i, w := range tt.want {
				d := errs[i]
				if d.Summary != "Dependency needs a native interpreter" || !strings.Contains(d.Detail, w.detail) || !strings.Contains(d.Detail, `interpreter = "static"`) {
					t.Errorf("error %d\ngot:  %s: %s\nwant: containing %q and the static advice", i, d.Summary, d.Detail, w.detail)
				}
				if d.Subject == nil || d.Subject.Filename != "main.acl" || d.Subject.Start.Line != w.line {
					t.Errorf("error %d subject\ngot:  %v\nwant: main.acl line %d", i, d.Subject, w.line)
				}
			}
			if len(tt.want) == 0 && (res == nil || res.Pin == nil) {
				t.Errorf("got no result, want a pinned tool")
			}
			if len(tt.want) > 0 && res != nil {
				t.Errorf("got a result with errors, want nil")
			}
		})
	}
}

func TestResolvePythonErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, ws string) // edits a copy of the fixture
		fixture string
		block   string
		tool    string
		summary string
		detail  string // substring
		line    int
	}{
		{
			name:    "missing pyproject.toml",
			fixture: "nopyproject",
			block: `tool "tool" {
  kind   = "python"
  source = "./nopyproject"
}`,
			tool:    "tool",
			summary: "Missing pyproject.toml",
			detail:  `There is no pyproject.toml in "./nopyproject"`,
			line:    3,
		},
		{
			name:    "source not found",
			fixture: "tdk",
			block: `tool "tool" {
  kind   = "python"

  source = "./nowhere"
}`,
			tool:    "tool",
			summary: "Source not found",
			line:    4,
		},
		{
			name:    "export not found, located at export",
			fixture: "tdk",
			block: `tool "tool" {
  kind   = "python"
  source = "./tdk"
  export = "missing"
}`,
			tool:    "tool",
			summary: "Python tool not found",
			detail:  "no class or function 'missing' in the package's Python files",
			line:    4,
		},
		{
			name:    "schema that is not a literal",
			fixture: "tdk",
			block: `tool "untyped" {
  kind   = "python"
  source = "./tdk"
  export = "Untyped"
}`,
			tool:    "untyped",
			summary: "Python tool cannot be read statically",
			detail:  "the schema of class Untyped (src/forecast/tool.py:47) is not a literal",
			line:    4,
		},
		{
			name:    "schema that is not an object schema",
			fixture: "syntax",
			setup: func(t *testing.T, ws string) {
				writeTestFile(t, filepath.Join(ws, "syntax", "good.py"), "class Lister:\n    description = \"Lists.\"\n    schema = {\"type\": \"array\"}\n")
			},
			block: `tool "lister" {
  kind   = "python"
  source = "./syntax"
  export = "Lister"
}`,
			tool:    "lister",
			summary: "Invalid tool schema",
			detail:  `its "type" is "array"`,
			line:    4,
		},
		{
			name:    "schema that does not compile",
			fixture: "syntax",
			setup: func(t *testing.T, ws string) {
				writeTestFile(t, filepath.Join(ws, "syntax", "good.py"), "class Lister:\n    schema = {\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integr\"}}}\n")
			},
			block: `tool "lister" {
  kind   = "python"
  source = "./syntax"
  export = "Lister"
}`,
			tool:    "lister",
			summary: "Invalid tool schema",
			detail:  "good.py:1",
			line:    4,
		},
		{
			name:    "two definitions",
			fixture: "syntax",
			setup: func(t *testing.T, ws string) {
				writeTestFile(t, filepath.Join(ws, "syntax", "other.py"), "def echo(x: int):\n    pass\n")
			},
			block: `tool "echo" {
  kind   = "python"
  source = "./syntax"
}`,
			tool:    "echo",
			summary: "Ambiguous python tool",
			detail:  "'echo' is defined more than once (good.py:1, other.py:1)",
			line:    3,
		},
		{
			name:    "invalid uv.lock",
			fixture: "pure",
			setup: func(t *testing.T, ws string) {
				writeTestFile(t, filepath.Join(ws, "pure", "uv.lock"), "version = 1\n[[package]\n")
			},
			block: `tool "notes" {
  kind   = "python"
  source = "./pure"
  export = "lookup"
}`,
			tool:    "notes",
			summary: "Invalid uv.lock",
			detail:  "Run uv lock in ./pure",
			line:    3,
		},
		{
			name:    "invalid pyproject.toml",
			fixture: "pure",
			setup: func(t *testing.T, ws string) {
				writeTestFile(t, filepath.Join(ws, "pure", "pyproject.toml"), "[project\nname = 1\n")
			},
			block: `tool "notes" {
  kind   = "python"
  source = "./pure"
  export = "lookup"
}`,
			tool:    "notes",
			summary: "Invalid pyproject.toml",
			line:    3,
		},
		{
			// Nested deep enough to exhaust the TOML parser's stack (a
			// fatal error no recover catches), were it parsed.
			name:    "deeply nested pyproject.toml",
			fixture: "pure",
			setup: func(t *testing.T, ws string) {
				writeTestFile(t, filepath.Join(ws, "pure", "pyproject.toml"), "[project]\nname = "+strings.Repeat("[", 3_000_000)+strings.Repeat("]", 3_000_000)+"\n")
			},
			block: `tool "notes" {
  kind   = "python"
  source = "./pure"
  export = "lookup"
}`,
			tool:    "notes",
			summary: "Invalid pyproject.toml",
			detail:  "its arrays and inline tables nest more than 256 levels deep (line 2)",
			line:    3,
		},
		{
			name:    "deeply nested uv.lock",
			fixture: "pure",
			setup: func(t *testing.T, ws string) {
				writeTestFile(t, filepath.Join(ws, "pure", "uv.lock"), "version = 1\n# [[[\nx = \"[[[\"\ny = '''\n[[[\n'''\nz = "+strings.Repeat("{a = ", 3_000_000)+"1"+strings.Repeat("}", 3_000_000)+"\n")
			},
			block: `tool "notes" {
  kind   = "python"
  source = "./pure"
  export = "lookup"
}`,
			tool:    "notes",
			summary: "Invalid uv.lock",
			detail:  "nest more than 256 levels deep (line 7)",
			line:    3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := copyPythonFixture(t, tt.fixture)
			if tt.setup != nil {
				tt.setup(t, ws)
			}
			res, diags := ResolvePython(context.Background(), pythonRequest(t, ws, tt.block, tt.tool))
			if res != nil {
				t.Errorf("got a result, want nil")
			}
			errs := errorsOnly(diags)
			if len(errs) != 1 {
				t.Fatalf("errors\ngot:  %v\nwant: one %q", diags, tt.summary)
			}
			d := errs[0]
			if d.Summary != tt.summary || !strings.Contains(d.Detail, tt.detail) {
				t.Errorf("error\ngot:  %s: %s\nwant: %s: ...%s...", d.Summary, d.Detail, tt.summary, tt.detail)
			}
			if d.Subject == nil || d.Subject.Filename != "main.acl" || d.Subject.Start.Line != tt.line {
				t.Errorf("subject\ngot:  %v\nwant: main.acl line %d", d.Subject, tt.line)
			}
		})
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolvePythonWithoutPython3(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	block := `tool "daily_forecast" {
  kind        = "python"
  source      = "./tdk"
  description = "From the manifest."
}`
	res, diags := ResolvePython(context.Background(), pythonRequest(t, "", block, "daily_forecast"))
	if diags.HasErrors() {
		t.Fatalf("unexpected errors:\n%s", diags.Error())
	}
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "python3 not found" || diags[0].Subject == nil || diags[0].Subject.Start.Line != 3 {
		t.Fatalf("diagnostics\ngot:  %v\nwant: one warning \"python3 not found\" at main.acl line 3", diags)
	}
	want := Tool{Name: "daily_forecast", Description: "From the manifest."}
	if !reflect.DeepEqual(res.Tools, []Tool{want}) {
		t.Errorf("tools\ngot:  %+v\nwant: %+v", res.Tools, []Tool{want})
	}
	if res.Pin == nil || !strings.HasPrefix(res.Pin.Source, "h1:") || len(res.Outputs) != 4 {
		t.Errorf("got pin %+v and %d outputs, want a pinned package with 4 files", res.Pin, len(res.Outputs))
	}
}

func TestResolvePythonCache(t *testing.T) {
	ws := copyPythonFixture(t, "functions")
	block := `tool "search" {
  kind   = "python"
  source = "./functions"
}`
	req := pythonRequest(t, ws, block, "search")
	req.Cache = NewCache(ws)
	first, diags := ResolvePython(context.Background(), req)
	if diags.HasErrors() {
		t.Fatalf("unexpected errors:\n%s", diags.Error())
	}
	if err := req.Cache.Flush(); err != nil {
		t.Fatal(err)
	}
	entries, err := CacheEntries(ws, "python")
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache entries\ngot:  %d (%v)\nwant: one", len(entries), err)
	}

	// Without python3 the schema can only come from the cache.
	t.Setenv("PATH", t.TempDir())
	second, diags := ResolvePython(context.Background(), req)
	if len(diags) != 0 {
		t.Fatalf("diagnostics\ngot:  %v\nwant: none (a cache hit)", diags)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("cached result\ngot:  %+v\nwant: %+v", second, first)
	}

	// A changed source is a different key: a miss, which now needs python3.
	writeTestFile(t, filepath.Join(ws, "functions", "extra.py"), "X = 1\n")
	third, diags := ResolvePython(context.Background(), req)
	if len(diags) != 1 || diags[0].Summary != "python3 not found" {
		t.Fatalf("diagnostics\ngot:  %v\nwant: the python3 warning (a cache miss)", diags)
	}
	if third.Tools[0].InputSchema != nil || third.Pin.Source == first.Pin.Source {
		t.Errorf("got schema %s and source %s after a change, want no schema and a new hash", third.Tools[0].InputSchema, third.Pin.Source)
	}
}

func TestResolvePythonDeterministic(t *testing.T) {
	t.Parallel()
	block := `tool "mean" {
  kind        = "python"
  source      = "./native"
  interpreter = "static"
}`
	var results []*Resolved
	for range 2 {
		ws := copyPythonFixture(t, "native")
		res, diags := ResolvePython(context.Background(), pythonRequest(t, ws, block, "mean"))
		if diags.HasErrors() {
			t.Fatalf("unexpected errors:\n%s", diags.Error())
		}
		results = append(results, res)
	}
	a, _ := json.Marshal(results[0])
	b, _ := json.Marshal(results[1])
	if string(a) != string(b) {
		t.Errorf("results in two directories differ\ngot:  %s\nwant: %s", b, a)
	}
}

func TestResolvePythonTimeout(t *testing.T) {
	block := `tool "search" {
  kind   = "python"
  source = "./functions"
}`
	req := pythonRequest(t, "", block, "search")
	req.Timeout = time.Nanosecond
	_, diags := ResolvePython(context.Background(), req)
	if len(diags) != 1 || diags[0].Summary != "Reading python tool timed out" {
		t.Fatalf("diagnostics\ngot:  %v\nwant: one \"Reading python tool timed out\" error", diags)
	}
}

func TestPureWheel(t *testing.T) {
	tests := []struct {
		file string
		want bool
	}{
		{"six-1.16.0-py2.py3-none-any.whl", true},
		{"certifi-2024.7.4-py3-none-any.whl", true},
		{"pkg-1.0-1build-py3-none-any.whl", true},
		{"numpy-2.0.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", false},
		{"pydantic_core-2.20.1-cp311-none-win_amd64.whl", false},
		{"maturin-1.12.4-py3-none-linux_armv6l.whl", false},
		{"cryptography-43.0.0-cp39-abi3-macosx_10_9_universal2.whl", false},
		{"odd-1.0-cp311-cp311-any.whl", false},
		{"not-a-wheel.whl", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if got := pureWheel(tt.file); got != tt.want {
				t.Errorf("pureWheel(%q)\ngot:  %v\nwant: %v", tt.file, got, tt.want)
			}
		})
	}
}

func TestUVRuntimePackages(t *testing.T) {
	lock := `
[[package]]
name = "app"
version = "1.0"
source = { editable = "." }
dependencies = [
    { name = "a", extra = ["x"] },
    { name = "winonly", marker = "sys_platform == 'win32' or platform_system == 'Darwin'" },
    { name = "both", marker = "sys_platform != 'win32'" },
]

[package.optional-dependencies]
all = [{ name = "never" }]

[[package]]
name = "a"
version = "1"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "app" }]

[package.optional-dependencies]
x = [{ name = "b", extra = ["y"] }]

[[package]]
name = "b"
version = "2"
source = { registry = "https://pypi.org/simple" }

[package.optional-dependencies]
y = [{ name = "a", extra = ["x"] }]

[[package]]
name = "both"
version = "3"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "never"
version = "4"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "winonly"
version = "5"
source = { registry = "https://pypi.org/simple" }
`
	tests := []struct {
		project string
		want    []string
	}{
		{"app", []string{"a", "b", "both"}},
		{"APP", []string{"a", "b", "both"}},
		// A lock without the project: every package is checked.
		{"other", []string{"a", "app", "b", "both", "never", "winonly"}},
	}
	for _, tt := range tests {
		t.Run(tt.project, func(t *testing.T) {
			var l uvLock
			if err := toml.Unmarshal([]byte(lock), &l); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range uvRuntimePackages(&l, normalizePythonName(tt.project)) {
				got = append(got, p.Name)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("packages\ngot:  %q\nwant: %q", got, tt.want)
			}
		})
	}
}

// BenchmarkResolvePython measures a python tool read by python3 (a cache
// miss) and one answered from the cache.
func BenchmarkResolvePython(b *testing.B) {
	block := `tool "search" {
  kind   = "python"
  source = "./functions"
}`
	req := pythonRequest(b, "", block, "search")
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, diags := ResolvePython(context.Background(), req); diags.HasErrors() {
				b.Fatal(diags.Error())
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		cached := req
		cached.Cache = NewCache(b.TempDir())
		if _, diags := ResolvePython(context.Background(), cached); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
		for b.Loop() {
			if _, diags := ResolvePython(context.Background(), cached); diags.HasErrors() {
				b.Fatal(diags.Error())
			}
		}
	})
}

// TestTOMLNesting: the guard in front of the TOML parser skips strings as
// TOML reads them (a multi-line string may end in four or five quotes,
// keeping one or two) and counts the lines it reports.
func TestTOMLNesting(t *testing.T) {
	deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
	rows := strings.Repeat(`  ["""a"""", '''b'''''],`+"\n", 300)
	for _, tc := range []struct {
		name, src string
		want      string // "" = accepted
	}{
		{"quotes ending a multi-line string", "x = [\n" + rows + "]\n", ""},
		{"deep after a four-quote string", `z = ["""a"""", ` + deep + "]\n", "(line 1)"},
		{"brackets in strings and comments", "a = \"[[[\" # [[[\nb = '[[['\nc = \"\"\"\n[[[\n\"\"\"\nd = " + deep + "\n", "(line 6)"},
		{"escaped quote", `a = "\"[[["` + "\n", ""},
	} {
		err := tomlNesting([]byte(tc.src))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}
