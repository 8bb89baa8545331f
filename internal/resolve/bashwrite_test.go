package resolve

import (
	"context"
	"github.com/hashicorp/hcl/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/manifest"
)

// TestWritableCommands: a program one tool runs that lies in a bash
// tool's read_write filesystem is an error at the entry that names it,
// whichever tool (and agent) runs it.
func TestWritableCommands(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"bin", "data", "safe"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"bin/helper", "safe/tool", "data/own"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link outside the tree to a program inside it runs that program.
	if err := os.Symlink(filepath.Join(dir, "bin", "helper"), filepath.Join(dir, "safe", "link")); err != nil {
		t.Fatal(err)
	}
	src := `tool "writer" {
  kind        = "bash"
  description = "Writes."
  commands    = ["./data/own"]
  fs {
    kind = "read_write"
    path = "./bin/.."
  }
}

tool "runner" {
  kind        = "bash"
  description = "Runs."
  commands    = ["ls", "./safe/tool", "./safe/link"]
}

tool "server" {
  kind      = "mcp"
  transport = "stdio"
  command   = "./bin/helper"
}

tool "off" {
  kind        = "bash"
  enabled     = false
  description = "Disabled."
  commands    = ["./bin/helper"]
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
	if err := os.WriteFile(filepath.Join(dir, "tools.acl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	// The writer's tree is the whole workspace: every program in it.
	got := checkWritableCommands(cfg, dir)
	type at struct{ line, col int }
	want := map[at]string{
		{4, 18}:  `"./data/own" (` + filepath.Join(dir, "data", "own") + `) is inside this tool's own read_write filesystem ("./bin/..")`,
		{14, 24}: `"./safe/tool" (` + filepath.Join(dir, "safe", "tool") + `) is inside the read_write filesystem of tool "writer"`,
		{14, 39}: `"./safe/link" (` + filepath.Join(dir, "safe", "link") + `, a link to ` + filepath.Join(dir, "bin", "helper") + `) is inside the read_write filesystem of tool "writer"`,
		{20, 15}: `"./bin/helper" (` + filepath.Join(dir, "bin", "helper") + `) is inside the read_write filesystem of tool "writer"`,
	}
	if len(got) != len(want) {
		t.Fatalf("diagnostics\ngot:  %s\nwant: %d errors", got.Error(), len(want))
	}
	for _, d := range got {
		w, ok := want[at{d.Subject.Start.Line, d.Subject.Start.Column}]
		if !ok || d.Summary != "Command inside a read_write filesystem" || !strings.Contains(d.Detail, w) {
			t.Errorf("diagnostic\ngot:  %s:%d,%d: %s: %s\nwant: one of %v", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary, d.Detail, want)
		}
	}

	// Through Run, with the writer's tree narrowed to bin: only the
	// programs there.
	// A link in the tree to a program outside it: the script can replace
	// the link.
	if err := os.Symlink(filepath.Join(dir, "safe", "tool"), filepath.Join(dir, "bin", "out")); err != nil {
		t.Fatal(err)
	}
	narrowed := strings.Replace(src, `"./bin/.."`, `"./bin"`, 1)
	narrowed = strings.Replace(narrowed, `commands    = ["ls", "./safe/tool", "./safe/link"]`, `commands    = ["ls", "./safe/tool", "./safe/link", "./bin/out"]`, 1)
	if err := os.WriteFile(filepath.Join(dir, "tools.acl"), []byte(narrowed), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags = manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	_, all := Run(context.Background(), cfg, Options{Refresh: false})
	var errs []string
	for _, d := range all {
		if d.Summary == "Command inside a read_write filesystem" {
			errs = append(errs, d.Detail[:strings.Index(d.Detail, " is inside")])
		}
	}
	slices.Sort(errs)
	wantRun := []string{
		`"./bin/helper" (` + filepath.Join(dir, "bin", "helper") + `)`,
		`"./bin/out" (` + filepath.Join(dir, "bin", "out") + `, a link to ` + filepath.Join(dir, "safe", "tool") + `)`,
		`"./safe/link" (` + filepath.Join(dir, "safe", "link") + `, a link to ` + filepath.Join(dir, "bin", "helper") + `)`,
	}
	if !slices.Equal(errs, wantRun) {
		t.Errorf("Run's errors\ngot:  %q\nwant: %q", errs, wantRun)
	}
}

// TestWritableServerArgs: a stdio MCP server's argument naming a file in
// a bash tool's read_write tree (the script node runs, say) is a warning,
// located on the argument; flags, directories, files elsewhere, runtime
// arguments and disabled or HTTP servers are not.
func TestWritableServerArgs(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"rw/sub", "safe"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"rw/server.js", "safe/server.js", "safe/elsewhere.js"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("console.log(1)\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A link outside the tree to a file inside it.
	if err := os.Symlink(filepath.Join(dir, "rw", "server.js"), filepath.Join(dir, "safe", "link.js")); err != nil {
		t.Fatal(err)
	}
	src := `tool "writer" {
  kind        = "bash"
  description = "Writes."
  commands    = ["ls"]
  fs {
    kind = "read_write"
    path = "./rw"
  }
}

tool "server" {
  kind      = "mcp"
  transport = "stdio"
  command   = "node"
  args      = ["--stack-size=100", "./rw/server.js", "rw/sub", "./safe/server.js", "safe/link.js", runtime("EXTRA"), "-", "` + filepath.Join(dir, "rw", "server.js") + `"]
}

tool "off" {
  kind      = "mcp"
  transport = "stdio"
  enabled   = false
  command   = "node"
  args      = ["./rw/server.js"]
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
	if err := os.WriteFile(filepath.Join(dir, "tools.acl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := manifest.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	got := checkWritableCommands(cfg, dir)
	type at struct{ line, col int }
	server := filepath.Join(dir, "rw", "server.js")
	want := map[at]string{
		{15, 36}:  `The argument "./rw/server.js" (` + server + `) names a file inside the read_write filesystem of tool "writer" ("./rw")`,
		{15, 84}:  `The argument "safe/link.js" (` + filepath.Join(dir, "safe", "link.js") + `, a link to ` + server + `) names a file inside`,
		{15, 123}: `The argument "` + server + `" (` + server + `) names a file inside`,
	}
	if len(got) != len(want) {
		t.Fatalf("diagnostics\ngot:  %s\nwant: %d warnings", got.Error(), len(want))
	}
	for _, d := range got {
		w, ok := want[at{d.Subject.Start.Line, d.Subject.Start.Column}]
		if !ok || d.Severity != hcl.DiagWarning || d.Summary != "Server file inside a read_write filesystem" || !strings.Contains(d.Detail, w) {
			t.Errorf("diagnostic\ngot:  %s:%d,%d: %s: %s\nwant: one of %v", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary, d.Detail, want)
		}
	}
}
