package resolve

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

func TestResolveBash(t *testing.T) {
	type wantWarning struct {
		summary string
		detail  string // substring
		line    int
		column  int
	}
	tests := []struct {
		name  string
		block string
		want  []wantWarning
	}{
		{
			name: "commands on PATH",
			block: `tool "shell" {
  kind        = "bash"
  description = "Runs a few commands."
  commands    = ["ls", "sh"]
}`,
		},
		{
			name: "a missing command warns at its element",
			block: `tool "shell" {
  kind        = "bash"
  description = "Runs a few commands."
  commands = [
    "ls",
    "agentform-no-such-command",
  ]
}`,
			want: []wantWarning{{
				summary: "Command not found",
				detail:  `"agentform-no-such-command" is not on this host's PATH. Bash tools run with the listed commands only, and hosts differ`,
				line:    6, column: 5,
			}},
		},
		{
			name: "paths are checked as files",
			block: `tool "shell" {
  kind        = "bash"
  description = "Runs a few commands."
  commands    = ["./bin/run.sh", "./bin/data.txt", "./bin", "./bin/missing.sh", "/bin/sh"]
}`,
			want: []wantWarning{
				{summary: "Relative command path", detail: `"./bin/run.sh" is found relative to the workspace here, but agentform serve and invoke resolve it against their workspace (-chdir, or the directory they run in)`, line: 4, column: 18},
				{summary: "Command not executable", detail: `"./bin/data.txt" exists but is not executable`, line: 4, column: 34},
				{summary: "Command is a directory", detail: `"./bin" is a directory`, line: 4, column: 52},
				{summary: "Command not found", detail: `There is no file at "./bin/missing.sh"`, line: 4, column: 61},
			},
		},
		{
			name: "a filesystem path that is no directory warns at the path",
			block: `tool "shell" {
  kind        = "bash"
  description = "Runs a few commands."
  commands    = ["ls"]
  fs {
    kind = "read_write"
    path = "./data"
  }
}`,
			want: []wantWarning{{summary: "Filesystem path not found", detail: `There is no directory at "./data" on this host`, line: 7, column: 12}},
		},
		{
			name: "a filesystem path that is a file warns",
			block: `tool "shell" {
  kind        = "bash"
  description = "Runs a few commands."
  commands    = ["ls"]
  fs {
    kind = "overlay"
    path = "bin/data.txt"
  }
}`,
			want: []wantWarning{{summary: "Filesystem path is a file", detail: `"bin/data.txt" is a file, not a directory`, line: 7, column: 12}},
		},
		{
			name: "an existing filesystem path",
			block: `tool "shell" {
  kind        = "bash"
  description = "Runs a few commands."
  commands    = ["ls"]
  fs {
    kind = "read_write"
    path = "bin"
  }
}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.MkdirAll(filepath.Join(ws, "bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeTestFile(t, filepath.Join(ws, "bin", "data.txt"), "data\n")
			if err := os.WriteFile(filepath.Join(ws, "bin", "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			req := Request{Dir: ws, Root: ws, Tool: loadTestTool(t, ws, tt.block, "shell"), Refresh: true}
			res, diags := ResolveBash(context.Background(), req)
			if len(diags) != len(tt.want) {
				t.Fatalf("diagnostics\ngot:  %v\nwant: %d warnings", diags, len(tt.want))
			}
			for i, w := range tt.want {
				d := diags[i]
				if d.Severity != hcl.DiagWarning || d.Summary != w.summary || !strings.Contains(d.Detail, w.detail) {
					t.Errorf("warning %d\ngot:  %v %s: %s\nwant: warning %s: ...%s...", i, d.Severity, d.Summary, d.Detail, w.summary, w.detail)
				}
				if d.Subject == nil || d.Subject.Filename != "main.acl" || d.Subject.Start.Line != w.line || d.Subject.Start.Column != w.column {
					t.Errorf("warning %d subject\ngot:  %v\nwant: main.acl:%d,%d", i, d.Subject, w.line, w.column)
				}
			}
			want := &Resolved{Tools: []Tool{{Name: "shell", Description: "Runs a few commands."}}}
			if !reflect.DeepEqual(res, want) {
				t.Errorf("result\ngot:  %+v\nwant: %+v", res, want)
			}
		})
	}
}

func TestResolveBashUsesThisHostsPath(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "agentform-test-tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	block := `tool "shell" {
  kind     = "bash"
  commands = ["agentform-test-tool"]
}`
	ws := t.TempDir()
	req := Request{Dir: ws, Root: ws, Tool: loadTestTool(t, ws, block, "shell")}

	t.Setenv("PATH", t.TempDir())
	if _, diags := ResolveBash(context.Background(), req); len(diags) != 1 || diags[0].Subject.Start.Line != 3 {
		t.Fatalf("without the command on PATH\ngot:  %v\nwant: one warning at line 3", diags)
	}
	t.Setenv("PATH", bin)
	if res, diags := ResolveBash(context.Background(), req); len(diags) != 0 || res.Pin != nil {
		t.Fatalf("with the command on PATH\ngot:  %v, pin %v\nwant: no diagnostics, no pin", diags, res.Pin)
	}
}
