package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// run runs the CLI in-process and returns its exit code and output.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(args, Streams{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr})
	return code, stdout.String(), stderr.String()
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// snapshot renders every path, mode and content under dir.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d\n", path, info.Mode(), info.ModTime().UnixNano())
		if d.Type().IsRegular() {
			content, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b.Write(content)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// tree renders every path, mode and content under dir, as snapshot does
// but without modification times, which creating and removing entries
// changes in a directory.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v\n", path, info.Mode())
		if d.Type().IsRegular() {
			content, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%q\n", content)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHelpOnEveryCommand(t *testing.T) {
	for _, cmd := range []string{"fmt", "init", "validate", "version"} {
		t.Run(cmd, func(t *testing.T) {
			code, stdout, _ := run(t, "", cmd, "-help")
			if code != ExitOK {
				t.Errorf("got: exit %d\nwant: exit 0", code)
			}
			if !strings.Contains(stdout, "Usage: agentform") {
				t.Errorf("got:\n%s\nwant: a usage text", stdout)
			}
		})
	}
	code, stdout, _ := run(t, "", "-help")
	if code != ExitOK || !strings.Contains(stdout, "validate") || !strings.Contains(stdout, "-chdir=DIR") {
		t.Errorf("got: exit %d\n%s\nwant: the command list", code, stdout)
	}
}

// TestHelpListsEveryOption: "agentform CMD -help" names every option CMD
// accepts, for every command in the command list.
func TestHelpListsEveryOption(t *testing.T) {
	_, top, _ := run(t, "", "-help")
	var commands []string
	for _, line := range strings.Split(top[strings.Index(top, "Commands:"):], "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 0 {
			break
		}
		commands = append(commands, f[0])
	}
	if len(commands) < 10 {
		t.Fatalf("got commands %v\nwant: the command list of agentform -help", commands)
	}
	for _, cmd := range commands {
		t.Run(cmd, func(t *testing.T) {
			var seen int
			flagSetSeen = func(fs *flag.FlagSet, help string) {
				seen++
				fs.VisitAll(func(f *flag.Flag) {
					// "-out" must not be found in "-out-dir".
					if !regexp.MustCompile(`(?m)^\s*-` + regexp.QuoteMeta(f.Name) + `(=|\s|$)`).MatchString(help) {
						t.Errorf("%s -help does not list -%s", cmd, f.Name)
					}
				})
			}
			defer func() { flagSetSeen = nil }()
			// -help is answered before the command runs; an unknown
			// option makes it parse its flags and show the same help.
			args := []string{cmd, "-no-such-option"}
			if cmd == "state" {
				args = []string{cmd, "list", "-no-such-option"}
			}
			_, _, stderr := run(t, "", args...)
			if _, stdout, _ := run(t, "", cmd, "-help"); !strings.Contains(stderr, strings.TrimSpace(stdout)) {
				t.Errorf("the usage error shows\n%s\nwant: the -help text\n%s", stderr, stdout)
			}
			if seen == 0 {
				t.Errorf("%s parsed no flags", cmd)
			}
		})
	}
}

func TestHelpCommand(t *testing.T) {
	if code, stdout, _ := run(t, "", "help"); code != ExitOK || !strings.Contains(stdout, "Commands:") {
		t.Errorf("agentform help got: exit %d\n%s\nwant: the command list", code, stdout)
	}
	if code, stdout, _ := run(t, "", "help", "help"); code != ExitOK || !strings.Contains(stdout, "Commands:") {
		t.Errorf("agentform help help got: exit %d\n%s\nwant: the command list", code, stdout)
	}
	if code, stdout, _ := run(t, "", "help", "plan"); code != ExitOK || !strings.HasPrefix(stdout, "Usage: agentform [-chdir=DIR] plan") {
		t.Errorf("agentform help plan got: exit %d\n%s\nwant: plan's help", code, stdout)
	}
}

func TestUnknownCommand(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"plna", `agentform has no command named "plna". Did you mean "plan"?`},
		{"nosuch", `agentform has no command named "nosuch".` + "\n"},
	} {
		code, stdout, stderr := run(t, "", tc.name)
		if code != ExitError || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "agentform -help") || stdout != "" {
			t.Errorf("agentform %s got: exit %d\n%s%s\nwant: exit 1 and %q", tc.name, code, stdout, stderr, tc.want)
		}
	}
}

// TestUnknownGlobalOption checks that an option before the command that
// agentform does not have is an error naming it, not the bare usage.
func TestUnknownGlobalOption(t *testing.T) {
	for _, args := range [][]string{{"-foo"}, {"-no-color", "plan"}, {"-chdir=.", "-json", "plan"}} {
		code, stdout, stderr := run(t, "", args...)
		if code != ExitError || !strings.Contains(stderr, "agentform has no global option") || stdout != "" {
			t.Errorf("agentform %s got: exit %d\n%s%s\nwant: exit 1 and an error naming the option", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if code, _, stderr := run(t, "", "-version", "plan"); code != ExitError || !strings.Contains(stderr, "-version takes nothing after it") {
		t.Errorf("agentform -version plan got: exit %d\n%s\nwant: exit 1, -version takes nothing after it", code, stderr)
	}
	for _, args := range [][]string{{"-help"}, {"-h"}, {"--help"}, {"-version"}} {
		if code, _, stderr := run(t, "", args...); code != ExitOK {
			t.Errorf("agentform %s got: exit %d\n%s\nwant: exit 0", strings.Join(args, " "), code, stderr)
		}
	}
}

func TestUnknownFlagIsUsageError(t *testing.T) {
	code, _, stderr := run(t, "", "validate", "-bogus")
	if code != ExitError || !strings.Contains(stderr, "flag provided but not defined: -bogus") || !strings.Contains(stderr, "Usage:") {
		t.Errorf("got: exit %d\n%s\nwant: exit 1 with the error and usage", code, stderr)
	}
}

func TestValidateDiagnosticsGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		color bool
	}{{"nocolor", false}, {"color", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run([]string{"-chdir=testdata/diagnostics", "validate"}, Streams{Stdout: &stdout, Stderr: &stderr, StderrTTY: tc.color, StdoutTTY: tc.color})
			if code != ExitError {
				t.Errorf("got: exit %d\nwant: exit 1", code)
			}
			checkGolden(t, filepath.Join("testdata", "diagnostics", tc.name+".golden"), stderr.String())
		})
	}
	// -no-color wins over a terminal.
	var stderr bytes.Buffer
	Run([]string{"-chdir=testdata/diagnostics", "validate", "-no-color"}, Streams{Stdout: &bytes.Buffer{}, Stderr: &stderr, StderrTTY: true})
	if strings.Contains(stderr.String(), "\x1b[") {
		t.Errorf("got: escape sequences with -no-color\nwant: none")
	}
}

func TestValidateJSON(t *testing.T) {
	code, stdout, stderr := run(t, "", "-chdir=testdata/diagnostics", "validate", "-json")
	if code != ExitError || stderr != "" {
		t.Fatalf("got: exit %d, stderr %q\nwant: exit 1, empty stderr", code, stderr)
	}
	var doc struct {
		Valid       bool `json:"valid"`
		Diagnostics []struct {
			Severity string `json:"severity"`
			Summary  string `json:"summary"`
			Range    struct {
				Filename string `json:"filename"`
				Start    struct{ Line, Column int }
			} `json:"range"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if doc.Valid || len(doc.Diagnostics) == 0 {
		t.Fatalf("got: valid=%v with %d diagnostics\nwant: invalid with diagnostics", doc.Valid, len(doc.Diagnostics))
	}
	first := doc.Diagnostics[0]
	if first.Severity != "error" || first.Summary != "Invalid capability tag" || first.Range.Filename != "agent.acl" || first.Range.Start.Line != 2 || first.Range.Start.Column != 24 {
		t.Errorf("got: %+v\nwant: the capability tag error at agent.acl:2:24", first)
	}

	code, stdout, _ = run(t, "", "-chdir=../../examples/quickstart", "validate", "-json")
	if code != ExitOK || !strings.Contains(stdout, `"valid": true`) {
		t.Errorf("got: exit %d\n%s\nwant: valid", code, stdout)
	}
}

// TestValidateBadFixturesChangeNothing runs validate on every invalid
// manifest fixture: exit 1, and the directory is byte-for-byte unchanged.
func TestValidateBadFixturesChangeNothing(t *testing.T) {
	dirs, _ := filepath.Glob("../manifest/testdata/invalid/*")
	if len(dirs) == 0 {
		t.Fatal("no invalid fixtures")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			before := snapshot(t, dir)
			code, _, stderr := run(t, "", "-chdir="+dir, "validate")
			if code != ExitError {
				t.Errorf("got: exit %d\nwant: exit 1", code)
			}
			if !strings.Contains(stderr, "Error: ") {
				t.Errorf("got:\n%s\nwant: an error", stderr)
			}
			if snapshot(t, dir) != before {
				t.Errorf("validate changed %s", dir)
			}
		})
	}
}

func TestValidateNoManifest(t *testing.T) {
	code, _, stderr := run(t, "", "-chdir="+t.TempDir(), "validate")
	if code != ExitError || !strings.Contains(stderr, "No manifest files") {
		t.Errorf("got: exit %d\n%s\nwant: exit 1, No manifest files", code, stderr)
	}
}

func TestInitScaffoldsAValidWorkspace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "support-bot")
	code, stdout, stderr := run(t, "", "init", dir)
	if code != ExitOK {
		t.Fatalf("got: exit %d\n%s%s\nwant: exit 0", code, stdout, stderr)
	}
	for _, f := range []string{"agent.acl", ".gitignore", "tools/greet/package.json", "tools/greet/index.ts", "skills/greeting/SKILL.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	src, _ := os.ReadFile(filepath.Join(dir, "agent.acl"))
	if !strings.Contains(string(src), `agent "support-bot"`) {
		t.Errorf("got:\n%s\nwant: an agent named after the directory", src)
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "validate"); code != ExitOK {
		t.Errorf("scaffold does not validate:\n%s", stderr)
	}
	if code, out, _ := run(t, "", "-chdir="+dir, "fmt", "-check"); code != ExitOK {
		t.Errorf("scaffold is not formatted: %s", out)
	}

	before := snapshot(t, dir)
	code, _, stderr = run(t, "", "init", dir)
	if code != ExitError || !strings.Contains(stderr, "already has") {
		t.Errorf("got: exit %d\n%s\nwant: refusal to overwrite", code, stderr)
	}
	if snapshot(t, dir) != before {
		t.Errorf("a refused init changed the directory")
	}

	// A file instead of a directory, named or in the way, is refused with
	// what init expects, and nothing is created.
	file := filepath.Join(dir, "agent.acl")
	for _, tc := range []struct{ arg, want string }{
		{file, "is a file; init creates a workspace in a directory"},
		{filepath.Join(dir, "other.acl"), "looks like a manifest file; init takes a directory"},
		{filepath.Join(file, "sub"), "Error: " + file + " is not a directory, but init needs a directory there.\ninit changed nothing.\n"},
	} {
		code, _, stderr := run(t, "", "init", tc.arg)
		if code != ExitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("init %s got: exit %d\n%s\nwant: %q", tc.arg, code, stderr, tc.want)
		}
	}
	if snapshot(t, dir) != before {
		t.Errorf("a refused init changed the directory")
	}
}

// TestInitChecksEverythingFirst: init finds every reason it cannot make
// the workspace before it writes anything, names the path of each, and
// changes nothing: a file where it needs a directory (inside the
// workspace, where creating the directory would have failed after
// agent.acl was written), a symbolic link that leads nowhere, a file it
// would write, and a manifest file the directory already has (the new
// agent.acl would be merged with it, and the workspace need not
// validate). Once the conflict is gone, init works.
// TestInitAgentNames: a directory whose name makes no agent name (a
// digit first, longer than 64 characters) gives the default "assistant";
// a -agent name that long is an error that says so; the next steps name
// the workspace with -chdir.
func TestInitAgentNames(t *testing.T) {
	for _, base := range []string{"7days", strings.Repeat("a", 70)} {
		dir := filepath.Join(t.TempDir(), base)
		if code, stdout, stderr := run(t, "", "init", dir); code != ExitOK || !strings.Contains(stdout, `workspace for agent "assistant"`) {
			t.Errorf("init %s…: got exit %d\n%s%s\nwant: agent \"assistant\"", base[:5], code, stdout, stderr)
		}
	}
	code, _, stderr := run(t, "", "init", "-agent="+strings.Repeat("b", 65), t.TempDir())
	if code != ExitError || !strings.Contains(stderr, "is 65 characters long; an agent name has at most 64") {
		t.Errorf("init -agent with 65 characters: got exit %d\n%s\nwant: the length named", code, stderr)
	}
	dir := t.TempDir()
	code, stdout, _ := run(t, "", "-chdir="+dir, "init")
	if code != ExitOK || !strings.Contains(stdout, "-chdir="+dir) {
		t.Errorf("init under -chdir: got exit %d\n%s\nwant: next steps with -chdir", code, stdout)
	}
}

func TestInitChecksEverythingFirst(t *testing.T) {
	quickstartManifest, err := os.ReadFile(filepath.Join(quickstart, "agent.acl"))
	must(t, err)
	for _, tc := range []struct {
		name   string
		setup  func(dir string) error
		want   string
		remove string
	}{
		{"file where a directory goes", func(dir string) error {
			must(t, os.MkdirAll(filepath.Join(dir, "tools"), 0o755))
			return os.WriteFile(filepath.Join(dir, "tools", "greet"), nil, 0o644)
		}, "Error: {dir}/tools/greet is not a directory, but init needs a directory there.\ninit changed nothing.\n", "tools/greet"},
		{"link that leads nowhere", func(dir string) error {
			return os.Symlink("nowhere", filepath.Join(dir, "skills"))
		}, "Error: {dir}/skills is a symbolic link that leads nowhere, but init needs a directory there.\ninit changed nothing.\n", "skills"},
		{"a file init writes", func(dir string) error {
			must(t, os.MkdirAll(filepath.Join(dir, "tools", "greet"), 0o755))
			return os.WriteFile(filepath.Join(dir, "tools", "greet", "index.ts"), nil, 0o644)
		}, "Error: {dir} already has tools/greet/index.ts: init never overwrites; remove it or run init in an empty directory.\ninit changed nothing.\n", "tools/greet/index.ts"},
		{"a manifest", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "main.acl"), quickstartManifest, 0o644)
		}, "Error: {dir} already has the manifest file main.acl, and every *.acl and *.acl.json file of a directory belongs to its workspace: init's agent.acl would be merged with it; run init in a directory without manifest files.\ninit changed nothing.\n", "main.acl"},
		{"JSON manifests", func(dir string) error {
			must(t, os.WriteFile(filepath.Join(dir, "a.acl.json"), []byte("{}"), 0o644))
			return os.WriteFile(filepath.Join(dir, "b.acl"), nil, 0o644)
		}, "Error: {dir} already has the manifest files a.acl.json, b.acl, and every *.acl and *.acl.json file of a directory belongs to its workspace: init's agent.acl would be merged with them; run init in a directory without manifest files.\ninit changed nothing.\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ws")
			must(t, os.Mkdir(dir, 0o755))
			if err := tc.setup(dir); err != nil {
				t.Skip("cannot set up:", err)
			}
			before := snapshot(t, dir)
			code, stdout, stderr := run(t, "", "init", dir)
			if want := strings.ReplaceAll(tc.want, "{dir}", dir); code != ExitError || stderr != want {
				t.Errorf("got: exit %d\n%s%s\nwant: exit 1\n%s", code, stdout, stderr, want)
			}
			if snapshot(t, dir) != before {
				t.Errorf("a refused init changed the directory:\n%s\nwas:\n%s", snapshot(t, dir), before)
			}
			if tc.remove == "" {
				return
			}
			must(t, os.Remove(filepath.Join(dir, tc.remove)))
			if code, _, stderr := run(t, "", "init", dir); code != ExitOK {
				t.Fatalf("init once %s is removed got: exit %d\n%s\nwant: exit 0", tc.remove, code, stderr)
			}
			if code, _, stderr := run(t, "", "-chdir="+dir, "validate"); code != ExitOK {
				t.Errorf("the workspace does not validate:\n%s", stderr)
			}
		})
	}
}

// TestInitUndoesAFailedWrite: when a write fails after init has created
// files and directories (here a directory that was already there refuses
// new files), init removes what it created, and only that, so the
// directory is as it was and init works once the cause is gone.
func TestInitUndoesAFailedWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	greeting := filepath.Join(dir, "skills", "greeting")
	must(t, os.MkdirAll(greeting, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	writable := makeReadOnly(t, greeting)
	before := tree(t, dir)
	// tools/ and tools/greet are created, and .gitignore and agent.acl
	// written, before skills/greeting/SKILL.md fails.
	code, stdout, stderr := run(t, "", "init", dir)
	want := "Error: writing " + filepath.Join(greeting, "SKILL.md") + ": "
	if code != ExitError || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, "init removed what it had created; "+dir+" is as it was.\n") {
		t.Errorf("got: exit %d\n%s%s\nwant: exit 1\n%s...", code, stdout, stderr, want)
	}
	if got := tree(t, dir); got != before {
		t.Errorf("a failed init left:\n%s\nwant: the directory as it was:\n%s", got, before)
	}
	writable()
	if code, _, stderr := run(t, "", "init", dir); code != ExitOK {
		t.Fatalf("init again got: exit %d\n%s\nwant: exit 0", code, stderr)
	}
}

const unformatted = `agent "a" {
graph {
type = "react"
}
  model {
      provider = "anthropic"
    name = "claude-haiku-4-5"
  }
}
`

const formatted = `agent "a" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`

func TestFmt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.acl")
	if err := os.WriteFile(path, []byte(unformatted), 0o600); err != nil {
		t.Fatal(err)
	}

	code, stdout, _ := run(t, "", "-chdir="+dir, "fmt", "-check", "-diff")
	if code != ExitUnformatted {
		t.Errorf("fmt -check: got exit %d\nwant: exit %d", code, ExitUnformatted)
	}
	if !strings.Contains(stdout, "+    name     = \"claude-haiku-4-5\"") || !strings.Contains(stdout, "agent.acl") {
		t.Errorf("fmt -check -diff output:\n%s\nwant: a unified diff naming agent.acl", stdout)
	}
	if b, _ := os.ReadFile(path); string(b) != unformatted {
		t.Errorf("fmt -check changed the file")
	}

	code, stdout, _ = run(t, "", "-chdir="+dir, "fmt")
	if code != ExitOK || strings.TrimSpace(stdout) != "agent.acl" {
		t.Errorf("fmt: got exit %d, %q\nwant: exit 0 listing agent.acl", code, stdout)
	}
	if b, _ := os.ReadFile(path); string(b) != formatted {
		t.Errorf("got:\n%s\nwant:\n%s", b, formatted)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("got mode %v\nwant: 0600 kept", info.Mode().Perm())
	}
	if code, _, _ := run(t, "", "-chdir="+dir, "fmt", "-check"); code != ExitOK {
		t.Errorf("formatted file: got exit %d\nwant: 0", code)
	}

	// A syntax error is reported with its location and nothing is written.
	bad := "agent \"a\" {\n  graph {\n"
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "", "-chdir="+dir, "fmt")
	if code != ExitError || !strings.Contains(stderr, "on agent.acl line") {
		t.Errorf("got: exit %d\n%s\nwant: a located syntax error", code, stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Errorf("fmt changed a file with a syntax error")
	}

	// A file named explicitly must be an .acl file: JSON manifests are
	// not formatted, and parsing one as native syntax gave a false error.
	json := filepath.Join(dir, "extra.acl.json")
	must(t, os.WriteFile(json, []byte(`{"locals":{"x":1}}`), 0o644))
	code, _, stderr = run(t, "", "-chdir="+dir, "fmt", "-check", "extra.acl.json")
	if code != ExitError || !strings.Contains(stderr, "extra.acl.json is not a .acl file") || strings.Contains(stderr, "Argument or block definition required") {
		t.Errorf("fmt of a JSON manifest got: exit %d\n%s\nwant: refused as not a .acl file", code, stderr)
	}

	// stdin to stdout.
	code, stdout, _ = run(t, unformatted, "fmt", "-")
	if code != ExitOK || stdout != formatted {
		t.Errorf("fmt -: got exit %d\n%s\nwant:\n%s", code, stdout, formatted)
	}
	// With -diff, the change instead; with -check too, exit 3.
	for _, args := range [][]string{{"fmt", "-diff", "-"}, {"fmt", "-check", "-diff", "-"}} {
		code, stdout, _ = run(t, unformatted, args...)
		want := map[bool]int{true: ExitUnformatted, false: ExitOK}[args[1] == "-check"]
		if code != want || !strings.HasPrefix(stdout, "--- old/<stdin>\n+++ new/<stdin>\n@@ ") || !strings.Contains(stdout, "+    name     = \"claude-haiku-4-5\"") {
			t.Errorf("%v: got exit %d\n%s\nwant: exit %d, a unified diff of stdin", args, code, stdout, want)
		}
	}

	// A byte order mark is kept: formatted input with one is formatted.
	bom := "\ufeff" + formatted
	if code, stdout, _ = run(t, bom, "fmt", "-"); code != ExitOK || stdout != bom {
		t.Errorf("fmt - of formatted text with a byte order mark: got exit %d\n%q\nwant it unchanged", code, stdout)
	}
	if code, _, _ = run(t, bom, "fmt", "-check", "-"); code != ExitOK {
		t.Errorf("fmt -check - of formatted text with a byte order mark: got exit %d, want 0", code)
	}

	// Under -chdir, every name relative to the workspace, outside it too.
	sub := filepath.Join(dir, "sub")
	must(t, os.Mkdir(sub, 0o755))
	must(t, os.WriteFile(path, []byte(unformatted), 0o644))
	must(t, os.WriteFile(filepath.Join(sub, "agent.acl"), []byte(unformatted), 0o644))
	code, stdout, _ = run(t, "", "-chdir="+sub, "fmt", "-write=false", "../agent.acl", "agent.acl", ".", filepath.Join(sub, "agent.acl"))
	if code != ExitOK || stdout != "../agent.acl\nagent.acl\n" {
		t.Errorf("fmt under -chdir got: exit %d\n%q\nwant: ../agent.acl and agent.acl, each once", code, stdout)
	}
}

// TestFmtDiffLineNumbers: the hunks of fmt -diff name the lines they
// change. Alignment changes no line count, so every hunk starts at the
// same line on both sides (go-udiff before v0.4.2 miscounted the new
// side after a hunk with unchanged lines between its changes: here the
// longest key, which alignment leaves alone).
func TestFmtDiffLineNumbers(t *testing.T) {
	block := func(name string) string {
		return fmt.Sprintf("tool %q {\n  kind = \"bash\"\n  capabilities = [\"x\"]\n  commands = [\"ls\"]\n  description = \"d\"\n}\n", name)
	}
	src := block("t1") + strings.Repeat("# filler\n", 10) + block("t2")
	code, stdout, _ := run(t, src, "fmt", "-diff", "-")
	if code != ExitOK {
		t.Fatalf("fmt -diff -: exit %d\n%s", code, stdout)
	}
	hunks := regexp.MustCompile(`(?m)^@@ -(\d+),\d+ \+(\d+),\d+ @@`).FindAllStringSubmatch(stdout, -1)
	if len(hunks) != 2 {
		t.Fatalf("got:\n%s\nwant: two hunks", stdout)
	}
	for _, h := range hunks {
		if h[1] != h[2] {
			t.Errorf("hunk %s: old side starts at line %s, new side at %s; want the same line\n%s", h[0], h[1], h[2], stdout)
		}
	}
}

func TestFmtRecursive(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/agent.acl", "a/node_modules/x.acl", "b/c/agent.acl"} {
		full := filepath.Join(dir, p)
		_ = os.MkdirAll(filepath.Dir(full), 0o755)
		_ = os.WriteFile(full, []byte(unformatted), 0o644)
	}
	code, stdout, _ := run(t, "", "-chdir="+dir, "fmt", "-recursive", "-check")
	want := "a/agent.acl\nb/c/agent.acl\n"
	if code != ExitUnformatted || stdout != want {
		t.Errorf("got: exit %d\n%s\nwant: exit 3\n%s", code, stdout, want)
	}
}

// TestFmtSymlinks: fmt formats the files manifest.Load reads, a symbolic
// link to a manifest file included (and a dot file, which the loader
// skips, not), in a workspace directory that may itself be a link. A file
// reached through a link is written through it, as gofmt and terraform
// fmt do: the target is formatted and keeps its mode, the link stays a
// link, and no temporary file is left in either directory.
func TestFmtSymlinks(t *testing.T) {
	root, ext := t.TempDir(), t.TempDir()
	ws := filepath.Join(root, "ws")
	must(t, os.Mkdir(ws, 0o755))
	target := filepath.Join(ext, "shared.acl")
	link := filepath.Join(ws, "agent.acl")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	must(t, os.Symlink("ws", filepath.Join(root, "wslink")))
	draft := filepath.Join(ws, ".draft.acl")
	must(t, os.WriteFile(draft, []byte(unformatted), 0o644))

	check := func(what string) {
		t.Helper()
		if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: agent.acl got %v, %v\nwant: still a symbolic link", what, info.Mode(), err)
		}
		if b, _ := os.ReadFile(target); string(b) != formatted {
			t.Errorf("%s: the link's target got:\n%s\nwant:\n%s", what, b, formatted)
		}
		if info, _ := os.Stat(target); info.Mode().Perm() != 0o600 {
			t.Errorf("%s: the link's target got mode %v\nwant: 0600 kept", what, info.Mode().Perm())
		}
		if entries, _ := os.ReadDir(ext); len(entries) != 1 {
			t.Errorf("%s: %s holds %v\nwant: only shared.acl, no temporary left", what, ext, entries)
		}
		if b, _ := os.ReadFile(draft); string(b) != unformatted {
			t.Errorf("%s: fmt formatted .draft.acl, which is no part of the workspace", what)
		}
	}
	for _, tc := range []struct {
		args []string
		list string
	}{
		{[]string{"-chdir=" + ws, "fmt"}, "agent.acl\n"},
		{[]string{"-chdir=" + ws, "fmt", "agent.acl"}, "agent.acl\n"},
		{[]string{"-chdir=" + filepath.Join(root, "wslink"), "fmt"}, "agent.acl\n"},
		// A link to a directory is not followed.
		{[]string{"-chdir=" + root, "fmt", "-recursive"}, filepath.Join("ws", "agent.acl") + "\n"},
	} {
		what := strings.Join(tc.args[1:], " ")
		must(t, os.WriteFile(target, []byte(unformatted), 0o600))
		if code, stdout, stderr := run(t, "", append(tc.args, "-check")...); code != ExitUnformatted || stdout != tc.list {
			t.Errorf("%s -check got: exit %d\n%s%s\nwant: exit 3\n%s", what, code, stdout, stderr, tc.list)
		}
		if code, stdout, stderr := run(t, "", tc.args...); code != ExitOK || stdout != tc.list {
			t.Errorf("%s got: exit %d\n%s%s\nwant: exit 0\n%s", what, code, stdout, stderr, tc.list)
		}
		check(what)
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := run(t, "", "version")
	if code != ExitOK || !strings.HasPrefix(stdout, "agentform v") {
		t.Errorf("got: exit %d %q\nwant: agentform vX", code, stdout)
	}
}

// TestChdirPaths: with -chdir, a relative file on the command line is
// relative to the workspace for every command, as plan -out's is.
func TestChdirPaths(t *testing.T) {
	dir := copyTree(t, quickstart)
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-out=saved.plan", "-no-color"); code != ExitOK {
		t.Fatalf("plan -out: exit %d\n%s", code, stderr)
	}
	if _, _, stderr := run(t, "", "-chdir="+dir, "plan", "-out=nodir/saved.plan", "-no-color"); !strings.Contains(stderr, "Error: saving the plan: writing "+filepath.Join(dir, "nodir", "saved.plan")+": cannot create a file in") {
		t.Errorf("plan -out into a missing directory got:\n%s\nwant: the file named once, and why", stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "show", "-no-color", "saved.plan"); code != ExitOK || !strings.Contains(stdout, "agent.assistant") {
		t.Errorf("show saved.plan got: exit %d\n%s%s\nwant: the saved plan", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-no-color", "saved.plan"); code != ExitOK {
		t.Fatalf("apply saved.plan got: exit %d\n%s\nwant: the saved plan applied", code, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "verify", "dist/assistant.agent.tgz"); code != ExitOK || !strings.Contains(stdout, "OK") {
		t.Errorf("verify got: exit %d\n%s%s\nwant: OK", code, stdout, stderr)
	}
	// Options may follow an address, as they may follow invoke's operands.
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "state", "show", "agent.assistant", "-json"); code != ExitOK || !json.Valid([]byte(stdout)) {
		t.Errorf("state show ADDRESS -json got: exit %d\n%s%s\nwant: the address as JSON", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "state", "list", "agent.assistant"); code != ExitError || !strings.Contains(stderr, "state list takes no address") {
		t.Errorf("state list ADDRESS got: exit %d\n%s\nwant: refused", code, stderr)
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "verify", "dist/nobody.agent.tgz"); code != ExitError || !strings.Contains(stderr, "there is no artifact at "+filepath.Join(dir, "dist", "nobody.agent.tgz")) {
		t.Errorf("verify of a missing file got: exit %d\n%s\nwant: there is no artifact at the resolved path", code, stderr)
	}
}

// TestDeeplyNestedInput: a manifest given to fmt, or a lockfile, nested far
// deeper than HCL's recursive parsers can take is refused with a located
// error, never a stack overflow (which no recover catches), and nothing is
// written. The lockfile is parsed a second time to show its source lines
// in diagnostics; that must not recurse either.
func TestDeeplyNestedInput(t *testing.T) {
	const depth = 200000
	deep := "x = " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "deep.acl"), []byte(deep), 0o600); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	code, _, stderr := run(t, "", "-chdir="+dir, "fmt", "-check")
	if code != ExitError || !strings.Contains(stderr, "Manifest nested too deeply") || !strings.Contains(stderr, "deep.acl line 1") {
		t.Errorf("fmt -check of a deeply nested file: exit %d\n%s\nwant: exit %d, Manifest nested too deeply at deep.acl line 1", code, stderr, ExitError)
	}
	code, _, stderr = run(t, deep, "fmt", "-")
	if code != ExitError || !strings.Contains(stderr, "Manifest nested too deeply") {
		t.Errorf("fmt - of a deeply nested file: exit %d\n%s\nwant: Manifest nested too deeply", code, stderr)
	}
	if snapshot(t, dir) != before {
		t.Errorf("fmt changed the directory")
	}

	ws := copyTree(t, quickstart)
	lock := `tool "grep" {` + "\n  kind = \"bash\"\n  source = " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n}\n"
	if err := os.WriteFile(filepath.Join(ws, "agentform.lock.hcl"), []byte(lock), 0o600); err != nil {
		t.Fatal(err)
	}
	before = snapshot(t, ws)
	for _, cmd := range []string{"plan", "lock"} {
		code, _, stderr := run(t, "", "-chdir="+ws, cmd)
		if code != ExitError || !strings.Contains(stderr, "Lockfile nested too deeply") || !strings.Contains(stderr, "agentform.lock.hcl line 3") {
			t.Errorf("%s with a deeply nested lockfile: exit %d\n%s\nwant: exit %d, Lockfile nested too deeply at line 3", cmd, code, stderr, ExitError)
		}
	}
	if snapshot(t, ws) != before {
		t.Errorf("plan or lock changed the workspace")
	}
}

// TestMistypedChdirAndNoState: a -chdir that names no directory is an
// error for every command but init (which creates its directory), instead
// of reading as an empty workspace; commands that only read, and state rm
// with nothing to remove, create nothing; lock and version take no
// operands (a flag after one would be read as an operand, silently).
func TestMistypedChdirAndNoState(t *testing.T) {
	parent := t.TempDir()
	typo := filepath.Join(parent, "typo")
	for _, args := range [][]string{{"state", "list"}, {"state", "rm", "tool.x"}, {"show"}, {"calls"}, {"plan"}, {"lock"}, {"audit"}} {
		code, _, stderr := run(t, "", append([]string{"-chdir=" + typo}, args...)...)
		want := ExitError
		if args[0] == "audit" {
			want = exitUsage // audit's usage errors are 2
		}
		if code != want || !strings.Contains(stderr, "there is no directory "+typo) {
			t.Errorf("%v in a missing -chdir: exit %d\n%s\nwant: exit %d, there is no directory", args, code, stderr, want)
		}
	}
	// -chdir written after the command name, which every command takes.
	for _, args := range [][]string{{"state", "list", "-chdir=" + typo}, {"calls", "-chdir=" + typo}, {"invoke", "-chdir=" + typo, "x.agent.tgz", "t"}, {"plan", "-chdir=" + typo}} {
		code, _, stderr := run(t, "", args...)
		if code != ExitError || !strings.Contains(stderr, "there is no directory "+typo) {
			t.Errorf("%v: exit %d\n%s\nwant: exit %d, there is no directory", args, code, stderr, ExitError)
		}
	}
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "", "-chdir="+file, "validate"); code != ExitError || !strings.Contains(stderr, "is a file, not a directory") {
		t.Errorf("validate with -chdir naming a file: exit %d\n%s", code, stderr)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("commands in a missing -chdir created %v", entries)
	}
	if code, _, stderr := run(t, "", "-chdir="+filepath.Join(parent, "new"), "init"); code != ExitOK {
		t.Errorf("init with -chdir naming a new directory: exit %d\n%s", code, stderr)
	}

	ws := copyTree(t, quickstart)
	_ = os.RemoveAll(filepath.Join(ws, ".agentform"))
	before := snapshot(t, ws)
	if code, _, stderr := run(t, "", "-chdir="+ws, "state", "rm", "tool.grep"); code != ExitError || !strings.Contains(stderr, "nothing has been applied") {
		t.Errorf("state rm without state: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+ws, "calls"); code != ExitOK || !strings.Contains(stdout, "No calls recorded") {
		t.Errorf("calls without a runtime database: exit %d\n%s%s", code, stdout, stderr)
	}
	if snapshot(t, ws) != before {
		t.Errorf("state rm or calls without state created files")
	}
	for _, args := range [][]string{{"lock", "extra"}, {"lock", ".", "-upgrade"}, {"version", "extra"}} {
		code, _, stderr := run(t, "", append([]string{"-chdir=" + ws}, args...)...)
		if code != ExitError || !strings.Contains(stderr, "takes no arguments") {
			t.Errorf("%v: exit %d\n%s\nwant: exit %d, takes no arguments", args, code, stderr, ExitError)
		}
	}
	if snapshot(t, ws) != before {
		t.Errorf("lock with operands changed the workspace")
	}
}

// TestCLIOddities: options after an operand are read as options; an empty
// -out is an error, not "no -out"; -last is not negative; fmt's "-" stands
// alone; -version prints what version does; init's suggested commands
// quote a directory a shell would split; writing over a directory says so.
func TestCLIOddities(t *testing.T) {
	ws := copyTree(t, quickstart)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"verify", "missing.agent.tgz", "-no-color"}, ExitError, "there is no artifact at"},
		{[]string{"show", "missing.plan", "-json"}, ExitError, "reading the saved plan"},
		{[]string{"plan", "-out="}, ExitError, "-out needs a value: -out=PATH"},
		{[]string{"plan", "-out-dir="}, ExitError, "-out-dir needs a value"},
		{[]string{"audit", "-out="}, exitUsage, "-out needs a value: -out=FILE"},
		{[]string{"audit", "-baseline="}, exitUsage, "-against and -baseline need a value"},
		{[]string{"audit", "-against="}, exitUsage, "-against and -baseline need a value"},
		{[]string{"apply", "-auto-approve", "-out-dir="}, ExitError, "-out-dir needs a value"},
		{[]string{"calls", "-last=-3"}, ExitError, "-last must be 0 (every call) or more, not -3"},
		{[]string{"fmt", "-", "agent.acl"}, ExitError, `"-" (standard input) must be fmt's only target`},
		{[]string{"plan", "-out=dist"}, ExitError, "it is a directory; name a file"},
	} {
		if tc.args[0] == "plan" && strings.HasPrefix(tc.args[1], "-out=dist") {
			if err := os.MkdirAll(filepath.Join(ws, "dist"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		code, stdout, stderr := run(t, "", append([]string{"-chdir=" + ws}, tc.args...)...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("%v: exit %d\n%s%s\nwant: exit %d, %q", tc.args, code, stdout, stderr, tc.code, tc.want)
		}
	}
	if code, _, stderr := run(t, "", "-chdir="+ws, "plan", "-capability-override=extend:*"); code != ExitOK || !strings.Contains(stderr, `Warning: -capability-override: capability tag "*" is not a wildcard`) {
		t.Errorf("plan -capability-override=extend:*: exit %d\n%s\nwant: the warning that * is not a wildcard", code, stderr)
	}
	if code, _, stderr := run(t, "", "-chdir="+ws, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	// The "*" warning comes with an override that applies (the extensible
	// researcher), not with one a locked agent ignores.
	t.Setenv("RESEARCH_AGENT_URL", "http://127.0.0.1:1")
	t.Setenv("RESEARCH_AGENT_TOKEN", "test-token-not-used")
	star := `Warning: -capability-override: capability tag "*" is not a wildcard`
	if _, _, stderr := run(t, "", "-chdir="+ws, "invoke", "-capability-override=extend:*", "dist/researcher.agent.tgz", "word_count", "-args", `{"text": "a b"}`); !strings.Contains(stderr, star) {
		t.Errorf("invoke -capability-override=extend:* of an extensible agent:\n%s\nwant: the warning that * is not a wildcard", stderr)
	}
	if _, _, stderr := run(t, "", "-chdir="+ws, "invoke", "-capability-override=extend:*", "dist/assistant.agent.tgz", "grep", "-args", "{}"); strings.Contains(stderr, star) || !strings.Contains(stderr, "ignored") {
		t.Errorf("invoke -capability-override=extend:* of a locked agent:\n%s\nwant: the override ignored, and no word about *", stderr)
	}
	_, version, _ := run(t, "", "version")
	for _, flag := range []string{"-version", "--version", "-v"} {
		if code, got, _ := run(t, "", flag); code != ExitOK || got != version {
			t.Errorf("agentform %s: exit %d, %q\nwant: what agentform version prints, %q", flag, code, got, version)
		}
	}
	for _, tc := range []struct {
		dir    string
		quoted bool
	}{{"plain-dir", false}, {"9 bad dir", true}, {"it's", true}} {
		dir := filepath.Join(t.TempDir(), tc.dir)
		code, stdout, stderr := run(t, "", "init", dir)
		word := shellWord(dir)
		if code != ExitOK || !strings.Contains(stdout, `"agentform -chdir=`+word+` validate"`) || strings.HasPrefix(word, "'") != tc.quoted {
			t.Errorf("init %q: exit %d\n%s%s\nwant the directory as %s (quoted: %v)", dir, code, stdout, stderr, word, tc.quoted)
		}
	}
	for in, want := range map[string]string{"a/b-c_d.e": "a/b-c_d.e", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "x$y": "'x$y'"} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestStateDiagnosticPermission checks that a state that cannot be
// created or opened for want of permission is not called unreadable, and
// that the advice names what to check.
func TestStateDiagnosticPermission(t *testing.T) {
	err := fmt.Errorf("creating state directory: %w", &fs.PathError{Op: "mkdir", Path: ".agentform", Err: fs.ErrPermission})
	d := stateDiagnostic(err)
	if d.Summary != "Cannot open the state" || !strings.Contains(d.Detail, "permission denied") || !strings.Contains(d.Detail, "Check the permissions and owner") {
		t.Errorf("got:  %s: %s\nwant: Cannot open the state, the cause and what to check", d.Summary, d.Detail)
	}
}

// TestValidateReportsWhatPlanRejectsStatically: tool names two blocks
// register and agents a check names that do not exist need no resolution,
// so validate reports them, and every command that plans reports each once,
// in the same words.
func TestValidateReportsWhatPlanRejectsStatically(t *testing.T) {
	dir := t.TempDir()
	src := `agent "a" {
  capabilities = ["x"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude"
  }
}
tool "list_skills" {
  kind     = "bash"
  commands = ["ls"]
}
tool "a2a_r_send" {
  kind     = "bash"
  commands = ["ls"]
}
tool "r" {
  kind = "a2a"
  url  = "http://127.0.0.1:1"
}
skill "s" {
  description = "d"
  content     = "c"
}
check "c" {
  assert {
    condition     = !can_call("aa", "t")
    error_message = "x"
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	wants := []string{
		"Error: Duplicate registered tool\n\n  on agent.acl line 19, in tool \"r\":",
		`This block registers a tool named "a2a_r_send", which is already registered by the block at agent.acl:15,1-18.`,
		"Error: Duplicate registered tool\n\n  on agent.acl line 11, in tool \"list_skills\":",
		`This block registers a tool named "list_skills", which a workspace with skills registers for them (describe_skill, get_skill, list_skills, read_skill_file and run_skill_script; the first skill is at agent.acl:23,1-10). Rename this tool block.`,
		"Error: Invalid function argument\n\n  on agent.acl line 29, in check \"c\":",
		`Invalid value for "agent" parameter: there is no agent named "aa" (agents: "a").`,
	}
	for _, args := range [][]string{
		{"validate"},
		{"plan", "-refresh=false"},
		{"graph", "-refresh=false"},
		{"audit", "-refresh=false"},
	} {
		t.Run(args[0], func(t *testing.T) {
			code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
			if code != ExitError {
				t.Errorf("got: exit %d\nwant: 1", code)
			}
			if strings.Contains(stdout, "Success!") {
				t.Errorf("got:\n%s\nwant: no success", stdout)
			}
			for _, w := range wants {
				if n := strings.Count(stderr, w); n != 1 {
					t.Errorf("got: %d times %q in\n%s\nwant: once", n, w, stderr)
				}
			}
			if n := strings.Count(stderr, "Error: "); n != 3 {
				t.Errorf("got: %d errors in\n%s\nwant: 3", n, stderr)
			}
		})
	}
}

// TestFailedApplyChangesNothing: an apply of a workspace that loads but
// does not resolve (a javascript tool that does not build) fails with the
// located error and leaves the workspace as it was: no lockfile, no
// artifact, no cache, and not the state database it opened for the lock.
func TestFailedApplyChangesNothing(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"agent.acl": `agent "a" {
  capabilities = ["x"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude"
  }
}
tool "t" {
  kind         = "javascript"
  source       = "./tools/t"
  capabilities = ["x"]
}
`,
		"tools/t/package.json": `{"name": "t", "version": "1.0.0"}`,
		"tools/t/index.ts":     "export default {{{\n",
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := tree(t, dir)
	code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve")
	if code != ExitError || !strings.Contains(stderr, "on agent.acl line 13, in tool \"t\":") {
		t.Errorf("got: exit %d\n%s\nwant: exit 1, the error located at the source", code, stderr)
	}
	if after := tree(t, dir); after != before {
		// Names only: the state database is binary.
		var names []string
		_ = filepath.WalkDir(dir, func(path string, _ fs.DirEntry, _ error) error {
			names = append(names, path)
			return nil
		})
		t.Errorf("the failed apply changed the workspace; it holds:\n%s", strings.Join(names, "\n"))
	}
}

// TestTimeoutFlags checks the checks -resolve-timeout and -lock-timeout
// share with the provider's resolve_timeout and lock_timeout: a
// resolution timeout must be positive, a lock timeout must not be
// negative (0 fails at once).
func TestTimeoutFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string // "" for accepted
	}{
		{args: []string{"plan", "-resolve-timeout=0s"}, want: "Error: -resolve-timeout must be positive."},
		{args: []string{"plan", "-resolve-timeout=-1s"}, want: "Error: -resolve-timeout must be positive."},
		{args: []string{"plan", "-lock-timeout=-1s"}, want: `invalid value "-1s" for flag -lock-timeout: must not be negative`},
		{args: []string{"apply", "-lock-timeout=-5m"}, want: `invalid value "-5m" for flag -lock-timeout: must not be negative`},
		{args: []string{"show", "-lock-timeout=soon"}, want: `invalid value "soon" for flag -lock-timeout: parse error`},
		{args: []string{"invoke", "-lock-timeout=-1s", "x.agent.tgz", "t"}, want: `invalid value "-1s" for flag -lock-timeout: must not be negative`},
		{args: []string{"serve", "-lock-timeout=-1s", "x.agent.tgz"}, want: `invalid value "-1s" for flag -lock-timeout: must not be negative`},
		{args: []string{"plan", "-lock-timeout=0s"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, tc.args...)...)
			if tc.want == "" {
				// Accepted: what fails is the empty workspace.
				if strings.Contains(stderr, "-lock-timeout") || strings.Contains(stderr, "-resolve-timeout") {
					t.Errorf("got:\n%s%s\nwant:\nthe flag accepted", stdout, stderr)
				}
				return
			}
			if code != ExitError || !strings.Contains(stderr, tc.want) {
				t.Errorf("got:\nexit %d\n%s%s\nwant:\nexit 1 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// TestExtraArgumentsShowUsage: every command given arguments it does not
// take says so and prints its usage, as Terraform's commands do.
func TestExtraArgumentsShowUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"validate", "x"}, {"plan", "x"}, {"apply", "x", "y"}, {"audit", "x"}, {"lock", "x"},
		{"show", "x", "y"}, {"state", "x"}, {"state", "list", "x"}, {"state", "show", "a", "b"}, {"state", "rm"},
		{"graph", "x"}, {"calls", "x"}, {"init", "x", "y"}, {"fmt", "-", "x"},
		{"verify", "x", "y"}, {"version", "x"},
	} {
		code, _, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
		if code == ExitOK || !strings.HasPrefix(stderr, "Error: ") || !strings.Contains(stderr, "\n\nUsage: agentform ") {
			t.Errorf("%v: got exit %d\n%s\nwant: an error, then the usage", args, code, stderr)
		}
	}
}

// TestChdirOnce: -chdir names the workspace once, before the command or
// among its options; a second one is refused, whichever form each takes,
// rather than one of them silently winning.
func TestChdirOnce(t *testing.T) {
	dir := copyTree(t, quickstart)
	for _, args := range [][]string{
		{"-chdir=" + dir, "-chdir=" + dir, "validate"},
		{"-chdir=" + dir, "validate", "-chdir=" + dir},
		{"validate", "-chdir=" + dir, "-chdir=" + dir},
	} {
		code, _, stderr := run(t, "", args...)
		if code != ExitError || !strings.Contains(stderr, "-chdir="+dir+" was given already: give the workspace once") {
			t.Errorf("%q\ngot:  exit %d\n%s\nwant: refused", args, code, stderr)
		}
	}
	if code, _, stderr := run(t, "", "validate", "-chdir="+dir); code != ExitOK {
		t.Errorf("one -chdir among the options: exit %d\n%s", code, stderr)
	}
}

// TestInitDirectoryPrintable: the directory init names in its output is
// escaped, never written to the terminal as control sequences.
func TestInitDirectoryPrintable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bad\x1b[31m")
	code, stdout, stderr := run(t, "", "-chdir="+dir, "init")
	if code != ExitOK || strings.ContainsAny(stdout, "\x1b") || !strings.Contains(stdout, `bad\x1b[31m`) {
		t.Errorf("init in %q: exit %d\n%q%s\nwant: the name escaped", dir, code, stdout, stderr)
	}
}
