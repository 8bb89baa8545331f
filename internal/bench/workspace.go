package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// The generated workspaces spread capabilities the same way as the Go
// benchmarks in internal/apply: agent i holds ns<i%50> and
// ns<(i+7)%50>::op<i%40>, tool i requires ns<i%50>::op<i%40>, so every
// agent is granted some tools and denied most.

// GenerateBash writes agent.acl to dir: agents agents and tools bash tools
// (commands = ["ls"]). Resolving a bash tool only looks its commands up on
// PATH, so planning it measures the engine, not a resolver.
func GenerateBash(dir string, tools, agents int) error {
	return writeFile(filepath.Join(dir, "agent.acl"), func(w io.Writer) {
		writeAgents(w, agents)
		for i := range tools {
			fmt.Fprintf(w, "tool \"tool%d\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"ns%d::op%d\"]\n}\n\n", i, i%50, i%40)
		}
	})
}

// GenerateJavaScript writes agent.acl to dir with agents agents and js
// javascript tools, each its own TypeScript package tools/js<i>
// (package.json and index.ts, no dependencies) exporting the tool object
// js<i>. The packages differ in their text, so no two bundle alike.
func GenerateJavaScript(dir string, js, agents int) error {
	if err := writeJSManifest(dir, "js", js, agents); err != nil {
		return err
	}
	for i := range js {
		pkg := filepath.Join(dir, "tools", fmt.Sprintf("js%d", i))
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			return fmt.Errorf("generating javascript tool %d: %w", i, err)
		}
		if err := writeFile(filepath.Join(pkg, "package.json"), func(w io.Writer) {
			fmt.Fprintf(w, "{\n  \"name\": \"js%d\",\n  \"version\": \"0.1.0\",\n  \"private\": true,\n  \"type\": \"module\",\n  \"main\": \"index.ts\"\n}\n", i)
		}); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(pkg, "index.ts"), func(w io.Writer) { fmt.Fprintf(w, jsSource, i) }); err != nil {
			return err
		}
	}
	return nil
}

// jsSource is a javascript tool's index.ts; %[1]d is the tool number.
const jsSource = `interface Args {
  text: string;
  limit?: number;
}

const SEPARATOR_%[1]d = /\s+/;

function words(text: string): string[] {
  const parts = text.trim().split(SEPARATOR_%[1]d);
  return parts[0] === "" ? [] : parts;
}

function summarise(text: string, limit: number): string {
  const all = words(text);
  const counts = new Map<string, number>();
  for (const w of all) {
    counts.set(w.toLowerCase(), (counts.get(w.toLowerCase()) ?? 0) + 1);
  }
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
  return "tool %[1]d: " + all.length + " words; " + top.map(([w, n]) => w + "=" + n).join(", ");
}

export const js%[1]d = {
  name: "js%[1]d",
  description: "Counts the words in a text and lists the most frequent ones (tool %[1]d).",
  parameters: {
    type: "object",
    properties: {
      text: { type: "string", description: "The text to read." },
      limit: { type: "integer", description: "How many words to list.", minimum: 1 },
    },
    required: ["text"],
  },
  async execute({ args }: { args: Args }) {
    return { output: summarise(args.text, args.limit ?? 5) };
  },
};
`

// GenerateJavaScriptDeps writes agent.acl to dir with agents agents and js
// javascript tools, each its own TypeScript package tools/dep<i> that
// depends on an npm package, benchdep, installed in its own node_modules
// and pinned by a package-lock.json (without the registry metadata npm
// would add, which agentform does not read). benchdep is
// generated, so no registry is needed: modules ES modules under lib/,
// each importing the one before it and building a table at load time,
// all of them reachable from the function the tool calls. The tool's
// description uses a benchdep export, so reading its definition runs all
// of benchdep's top-level code, as reading a real tool's runs its
// libraries'.
func GenerateJavaScriptDeps(dir string, js, agents, modules int) error {
	if modules < 1 {
		return fmt.Errorf("%w: a dependency needs at least one module, got %d", ErrInvalidConfig, modules)
	}
	if err := writeJSManifest(dir, "dep", js, agents); err != nil {
		return err
	}
	for i := range js {
		pkg := filepath.Join(dir, "tools", fmt.Sprintf("dep%d", i))
		lib := filepath.Join(pkg, "node_modules", "benchdep", "lib")
		if err := os.MkdirAll(lib, 0o755); err != nil {
			return fmt.Errorf("generating javascript tool %d: %w", i, err)
		}
		files := map[string]func(io.Writer){
			"package.json": func(w io.Writer) {
				fmt.Fprintf(w, "{\n  \"name\": \"dep%d\",\n  \"version\": \"0.1.0\",\n  \"private\": true,\n  \"type\": \"module\",\n  \"main\": \"index.ts\",\n  \"dependencies\": {\n    \"benchdep\": \"1.0.0\"\n  }\n}\n", i)
			},
			"package-lock.json": func(w io.Writer) {
				fmt.Fprintf(w, "{\n  \"name\": \"dep%[1]d\",\n  \"version\": \"0.1.0\",\n  \"lockfileVersion\": 3,\n  \"requires\": true,\n  \"packages\": {\n    \"\": {\n      \"name\": \"dep%[1]d\",\n      \"version\": \"0.1.0\",\n      \"dependencies\": {\n        \"benchdep\": \"1.0.0\"\n      }\n    },\n    \"node_modules/benchdep\": {\n      \"version\": \"1.0.0\"\n    }\n  }\n}\n", i)
			},
			"index.ts": func(w io.Writer) { fmt.Fprintf(w, depToolSource, i) },
			filepath.Join("node_modules", "benchdep", "package.json"): func(w io.Writer) {
				io.WriteString(w, "{\n  \"name\": \"benchdep\",\n  \"version\": \"1.0.0\",\n  \"type\": \"module\",\n  \"main\": \"index.js\"\n}\n")
			},
			filepath.Join("node_modules", "benchdep", "index.js"): func(w io.Writer) {
				fmt.Fprintf(w, depIndexSource, modules-1)
			},
		}
		for m := range modules {
			files[filepath.Join("node_modules", "benchdep", "lib", fmt.Sprintf("m%d.js", m))] = func(w io.Writer) {
				if m == 0 {
					io.WriteString(w, "const step = (x) => x;\n")
				} else {
					fmt.Fprintf(w, "import { step%[1]d as step } from \"./m%[1]d.js\";\n", m-1)
				}
				fmt.Fprintf(w, depModuleSource, m)
			}
		}
		for name, write := range files {
			if err := writeFile(filepath.Join(pkg, name), write); err != nil {
				return err
			}
		}
	}
	return nil
}

// depToolSource is a dependent tool's index.ts; %[1]d is the tool number.
const depToolSource = `import { checksum, VERSION } from "benchdep";

interface Args {
  text: string;
}

export const dep%[1]d = {
  name: "dep%[1]d",
  description: "Checksums a text with benchdep " + VERSION + " (tool %[1]d).",
  parameters: {
    type: "object",
    properties: {
      text: { type: "string", description: "The text to checksum." },
    },
    required: ["text"],
  },
  async execute({ args }: { args: Args }) {
    return { output: "tool %[1]d: " + checksum(args.text) };
  },
};
`

// depIndexSource is benchdep's index.js; %[1]d is its last module.
const depIndexSource = `import { step%[1]d } from "./lib/m%[1]d.js";

export const VERSION = "1.0.0";

export function checksum(text) {
  let h = 0;
  for (const c of text) {
    h = step%[1]d(h + c.charCodeAt(0));
  }
  return h.toString(16);
}
`

// depModuleSource is the body of benchdep's module lib/m<N>.js, after its
// import of step; %[1]d is N.
const depModuleSource = `
const TABLE_%[1]d = Array.from({ length: 64 }, (_, i) => (i * %[1]d + 7) %% 251);

export class Codec%[1]d {
  constructor(seed) {
    this.seed = seed >>> 0;
    this.table = TABLE_%[1]d;
  }

  encode(value) {
    let h = (value ^ this.seed) >>> 0;
    for (const v of this.table) {
      h = (Math.imul(h, 31) + v) >>> 0;
    }
    return h;
  }

  describe() {
    return "codec %[1]d (seed " + this.seed + ", " + this.table.length + " entries)";
  }
}

export function step%[1]d(x) {
  return step(new Codec%[1]d(%[1]d).encode(x));
}
`

// GenerateTerraform writes main.tf to dir: one terraform_data resource per
// bash tool of GenerateBash(dir, tools, _), named the same and carrying the
// same data as input = { kind, commands, capabilities }. terraform_data is
// built into Terraform, so init downloads nothing.
func GenerateTerraform(dir string, tools int) error {
	return writeFile(filepath.Join(dir, "main.tf"), func(w io.Writer) {
		for i := range tools {
			fmt.Fprintf(w, "resource \"terraform_data\" \"tool%d\" {\n  input = {\n    kind         = \"bash\"\n    commands     = [\"ls\"]\n    capabilities = [\"ns%d::op%d\"]\n  }\n}\n\n", i, i%50, i%40)
		}
	})
}

// writeJSManifest writes dir/agent.acl: agents agents and js javascript
// tools <prefix><i>, each with its package at ./tools/<prefix><i>.
func writeJSManifest(dir, prefix string, js, agents int) error {
	return writeFile(filepath.Join(dir, "agent.acl"), func(w io.Writer) {
		writeAgents(w, agents)
		for i := range js {
			fmt.Fprintf(w, "tool \"%[1]s%[2]d\" {\n  kind         = \"javascript\"\n  source       = \"./tools/%[1]s%[2]d\"\n  capabilities = [\"ns%[3]d::op%[4]d\"]\n}\n\n", prefix, i, i%50, i%40)
		}
	})
}

func writeAgents(w io.Writer, agents int) {
	for i := range agents {
		fmt.Fprintf(w, "agent \"agent%d\" {\n  capabilities = [\"ns%d\", \"ns%d::op%d\"]\n\n  graph {\n    type = \"react\"\n  }\n\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n\n", i, i%50, (i+7)%50, i%40)
	}
}

// writeFile creates path with what write produces. Generated inputs need
// no atomic rename: a failed generation fails the run.
func writeFile(path string, write func(io.Writer)) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("generating %s: %w", path, err)
	}
	bw := bufio.NewWriter(f)
	write(bw)
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("generating %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("generating %s: %w", path, err)
	}
	return nil
}
