package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/artifact"
	"github.com/agentform/agentform/lockfile"
)

const quickstart = "../../examples/quickstart"

// copyTree copies a directory tree (regular files only) to a new
// temporary directory and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if d.Name() == ".agentform" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// snapshotWithoutCache renders every file under dir except the
// .agentform directory, which plan may write its cache into.
func snapshotWithoutCache(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".agentform" {
				return filepath.SkipDir
			}
			fmt.Fprintf(&b, "%s/\n", path)
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d\n%s", path, info.Mode(), info.ModTime().UnixNano(), content)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPlanGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		tty  bool
	}{
		{"quickstart.nocolor", []string{"plan"}, false},
		{"quickstart.color", []string{"plan"}, true},
		{"quickstart.json", []string{"plan", "-json"}, false},
		{"quickstart.summary", []string{"plan", "-matrix=summary", "-no-color"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, quickstart)
			t.Setenv("RESEARCH_AGENT_URL", "")
			os.Unsetenv("RESEARCH_AGENT_URL")
			before := snapshotWithoutCache(t, dir)
			var stdout, stderr bytes.Buffer
			code := Run(append([]string{"-chdir=" + dir}, tc.args...), Streams{Stdout: &stdout, Stderr: &stderr, StdoutTTY: false, StderrTTY: tc.tty})
			if code != ExitOK {
				t.Fatalf("got: exit %d\n%s\nwant: exit 0", code, stderr.String())
			}
			// Colour follows the terminal; progress lines are only for an
			// interactive plan, which the golden files do not capture.
			if tc.tty {
				stdout.Reset()
				Run(append([]string{"-chdir=" + dir}, tc.args...), Streams{Stdout: &stdout, Stderr: &bytes.Buffer{}, StdoutTTY: true, StderrTTY: true})
				stdout = *bytes.NewBufferString(stripProgress(stdout.String()))
			}
			checkGolden(t, filepath.Join("testdata", "plan", tc.name+".golden"), stdout.String())
			checkGolden(t, filepath.Join("testdata", "plan", tc.name+".stderr.golden"), stderr.String())
			if snapshotWithoutCache(t, dir) != before {
				t.Errorf("plan changed the workspace")
			}
		})
	}
}

// stripProgress removes the progress lines a plan prints on a terminal.
func stripProgress(out string) string {
	var keep []string
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasSuffix(l, ": Resolving...") || strings.Contains(l, ": Resolved [") || strings.Contains(l, ": Still resolving...") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.TrimPrefix(strings.Join(keep, "\n"), "\n")
}

// TestQuickstartLockIsCurrent keeps examples/quickstart/agentform.lock.hcl
// true to the example: a readonly plan fails when a tool, a skill or the
// bundler changed without "agentform lock".
func TestQuickstartLockIsCurrent(t *testing.T) {
	// The research agent's URL is a runtime() value, unset here as where
	// the lock was written: with it set, the lock lacks its card.
	t.Setenv("RESEARCH_AGENT_URL", "")
	must(t, os.Unsetenv("RESEARCH_AGENT_URL"))
	dir := copyTree(t, quickstart)
	code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-lockfile=readonly", "-no-color")
	if code != ExitOK {
		t.Errorf("got: exit %d\n%s\nwant: the committed lock matches (run agentform -chdir=examples/quickstart lock)", code, stderr)
	}
}

func TestPlanDetailedExitCode(t *testing.T) {
	code, _, _ := run(t, "", "-chdir="+copyTree(t, quickstart), "plan", "-detailed-exitcode")
	if code != ExitChanges {
		t.Errorf("got: exit %d\nwant: 2 (everything is new)", code)
	}
}

// TestLockOnlyChanges: a lockfile that is missing or has a stale entry
// while every artifact is current is a change: plan -detailed-exitcode
// says 2, and apply writes the lockfile the artifacts were built with.
func TestLockOnlyChanges(t *testing.T) {
	dir := copyTree(t, quickstart)
	lockPath := filepath.Join(dir, "agentform.lock.hcl")
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	applied, err := os.ReadFile(lockPath)
	must(t, err)
	for _, tc := range []struct {
		name    string
		edit    func()
		summary string
	}{
		{"deleted", func() { must(t, os.Remove(lockPath)) }, "Lockfile: 2 changes to write."},
		{"stale entry", func() {
			must(t, os.WriteFile(lockPath, append(slices.Clone(applied), "\ntool \"gone\" {\n  kind   = \"javascript\"\n  source = \"h1:RbTrokOmxOcRTVyVAE2JkiGbm2V9c3zMaDx4Uswxb0I=\"\n}\n"...), 0o644))
		}, "Lockfile: 1 change to write."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.edit()
			code, stdout, _ := run(t, "", "-chdir="+dir, "plan", "-detailed-exitcode", "-no-color")
			if code != ExitChanges || !strings.Contains(stdout, "Artifacts match the configuration. "+tc.summary) || strings.Contains(stdout, "perform the following actions") {
				t.Errorf("plan got: exit %d\n%s\nwant: exit 2 and %q, no actions header", code, stdout, tc.summary)
			}
			code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color")
			if code != ExitOK || !strings.Contains(stdout, "Wrote agentform.lock.hcl") {
				t.Errorf("apply got: exit %d\n%s%s\nwant: the lockfile written", code, stdout, stderr)
			}
			if got, _ := os.ReadFile(lockPath); !bytes.Equal(got, applied) {
				t.Errorf("lockfile after apply\ngot:\n%s\nwant:\n%s", got, applied)
			}
			if code, stdout, stderr := run(t, "", "-chdir="+dir, "verify", "dist/assistant.agent.tgz"); code != ExitOK || !strings.Contains(stdout, "matches agentform.lock.hcl") {
				t.Errorf("verify got: exit %d\n%s%s\nwant: the artifact matches the lockfile again", code, stdout, stderr)
			}
			if code, stdout, _ := run(t, "", "-chdir="+dir, "plan", "-detailed-exitcode", "-no-color"); code != ExitOK || !strings.Contains(stdout, "No changes.") {
				t.Errorf("plan after apply got: exit %d\n%s\nwant: no changes", code, stdout)
			}
		})
	}
}

// TestPlanUnreadableState: a state database that cannot be read is a
// located-in-words error with what to do, and plan -json still prints
// its document, unapplyable, with the reason.
func TestPlanUnreadableState(t *testing.T) {
	dir := copyTree(t, quickstart)
	must(t, os.MkdirAll(filepath.Join(dir, ".agentform"), 0o755))
	junk := bytes.Repeat([]byte{0x5a, 0xa5, 0x01}, 1700)
	must(t, os.WriteFile(filepath.Join(dir, ".agentform", "state.db"), junk, 0o600))
	before := snapshot(t, dir)

	code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-json")
	var doc struct {
		Applyable   bool `json:"applyable"`
		Diagnostics []struct{ Severity, Summary, Detail string }
	}
	if code != ExitError || json.Unmarshal([]byte(stdout), &doc) != nil || doc.Applyable || len(doc.Diagnostics) != 1 ||
		doc.Diagnostics[0].Summary != "Cannot read the state" || !strings.Contains(doc.Diagnostics[0].Detail, "state database is corrupt") || stderr != "" {
		t.Errorf("plan -json got: exit %d\n%s\n%s\nwant: exit 1 and a document with the state error", code, stdout, stderr)
	}
	code, _, stderr = run(t, "", "-chdir="+dir, "plan", "-no-color")
	if code != ExitError || !strings.Contains(stderr, "Error: Cannot read the state") || !strings.Contains(stderr, "move it aside") {
		t.Errorf("plan got: exit %d\n%s\nwant: the state error with what to do", code, stderr)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("plan changed the workspace")
	}
}

// TestVerifyAgainstState: an artifact that passes its own checks is still
// refused, by verify and by serve, when it is not what the last apply
// wrote for its path: another agent's artifact under this one's name, or
// one rebuilt with an edited agent.json and fresh SHA256SUMS.
func TestVerifyAgainstState(t *testing.T) {
	dir := copyTree(t, quickstart)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	art := filepath.Join(dir, "dist", "assistant.agent.tgz")
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "verify", "dist/assistant.agent.tgz"); code != ExitOK || !strings.Contains(stdout, "it is the artifact the last apply wrote") || stderr != "" {
		t.Fatalf("verify of the applied artifact got: exit %d\n%s%s", code, stdout, stderr)
	}
	applied, err := os.ReadFile(art)
	must(t, err)

	// Another agent's artifact under the assistant's name.
	researcher, err := os.ReadFile(filepath.Join(dir, "dist", "researcher.agent.tgz"))
	must(t, err)
	must(t, os.WriteFile(art, researcher, 0o644))
	for _, cmd := range [][]string{{"verify", "dist/assistant.agent.tgz"}, {"serve", "dist/assistant.agent.tgz"}} {
		code, _, stderr := run(t, "", append([]string{"-chdir=" + dir}, cmd...)...)
		if code != ExitError || !strings.Contains(stderr, `the last apply wrote the artifact of agent.assistant here, but this file holds agent "researcher"`) {
			t.Errorf("%s of a swapped artifact got: exit %d\n%s\nwant: refused", cmd[0], code, stderr)
		}
	}

	// The assistant's artifact with an edited agent.json, repackaged so
	// that its own digests hold and it agrees with itself (a prompt
	// changed: no lock entry covers it).
	arch, err := artifact.Read(bytes.NewReader(applied))
	must(t, err)
	var files []artifact.File
	for _, p := range arch.Paths() {
		data := arch.Files[p]
		switch p {
		case artifact.SumsName:
			continue
		case artifact.AgentName:
			edited := bytes.Replace(data, []byte(`"prompt": "You are`), []byte(`"prompt": "Edited. You are`), 1)
			if bytes.Equal(edited, data) {
				t.Fatalf("agent.json has no prompt to edit:\n%s", data)
			}
			data = edited
		}
		files = append(files, artifact.File{Path: p, Data: data})
	}
	edited, err := artifact.Build(files)
	must(t, err)
	must(t, os.WriteFile(art, edited, 0o644))
	for _, cmd := range [][]string{{"verify", "dist/assistant.agent.tgz"}, {"serve", "dist/assistant.agent.tgz"}} {
		code, _, stderr := run(t, "", append([]string{"-chdir=" + dir}, cmd...)...)
		if code != ExitError || !strings.Contains(stderr, "it is not the artifact the last apply wrote for agent.assistant") {
			t.Errorf("%s of an edited artifact got: exit %d\n%s\nwant: refused", cmd[0], code, stderr)
		}
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "verify", "-state=false", "dist/assistant.agent.tgz"); code != ExitOK {
		t.Errorf("verify -state=false of the edited artifact got: exit %d\n%s%s\nwant: OK, its own checks only", code, stdout, stderr)
	}
	// Outside the workspace's records, a copy is checked on its own,
	// whatever its name.
	for _, name := range []string{"copy.tgz", "assistant-1.4.0.agent.tgz", "researcher.agent.tgz"} {
		elsewhere := filepath.Join(t.TempDir(), name)
		must(t, os.WriteFile(elsewhere, applied, 0o644))
		if code, stdout, stderr := run(t, "", "-chdir="+dir, "verify", elsewhere); code != ExitOK || strings.Contains(stdout, "last apply") {
			t.Errorf("verify of a copy named %s got: exit %d\n%s%s\nwant: OK, not compared with state", name, code, stdout, stderr)
		}
	}
}

// TestVerifyLockfileMissingOrEmpty: an existing lockfile is compared even
// when it pins nothing (an empty file, a dangling link), so an artifact
// that pins tools fails against it; with no lockfile, such an artifact is
// not compared, with a warning, and one that pins nothing matches.
func TestVerifyLockfileMissingOrEmpty(t *testing.T) {
	dir := appliedQuickstart(t)
	applied, err := os.ReadFile(filepath.Join(dir, "dist", "assistant.agent.tgz"))
	must(t, err)
	elsewhere := t.TempDir()
	must(t, os.WriteFile(filepath.Join(elsewhere, "a.tgz"), applied, 0o644))
	lock := filepath.Join(elsewhere, "agentform.lock.hcl")

	code, stdout, stderr := run(t, "", "-chdir="+elsewhere, "verify", "a.tgz")
	if code != ExitOK || strings.Contains(stdout, "matches") || !strings.Contains(stderr, "Warning: the artifact was not compared with a lockfile: there is no "+lock+", and the artifact pins tools or skills.") {
		t.Errorf("verify without a lockfile got: exit %d\n%s%s\nwant: OK, with a warning that it was not compared", code, stdout, stderr)
	}
	for name, make := range map[string]func(){
		"an empty lockfile":  func() { must(t, os.WriteFile(lock, nil, 0o644)) },
		"only a comment":     func() { must(t, os.WriteFile(lock, []byte("# nothing pinned\n"), 0o644)) },
		"a dangling symlink": func() { must(t, os.Symlink(filepath.Join(elsewhere, "gone"), lock)) },
	} {
		t.Run(name, func(t *testing.T) {
			_ = os.Remove(lock)
			make()
			code, stdout, stderr := run(t, "", "-chdir="+elsewhere, "verify", "a.tgz")
			if code != ExitError || !strings.Contains(stderr, `agent.json pins tool block "word_count", but the lockfile has no entry for it`) ||
				!strings.Contains(stderr, "Error: a.tgz does not match "+lock+":") || !strings.Contains(stderr, "The archive is intact") {
				t.Errorf("got: exit %d\n%s%s\nwant: refused, word_count not in the lockfile, the archive itself intact", code, stdout, stderr)
			}
		})
	}

	// A workspace that pins nothing has no lockfile: its artifacts match.
	bare := t.TempDir()
	must(t, os.WriteFile(filepath.Join(bare, "agent.acl"), []byte(`agent "a" {
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
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["x"]
}
`), 0o644))
	if code, _, stderr := run(t, "", "-chdir="+bare, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(bare, "agentform.lock.hcl")); !os.IsNotExist(err) {
		t.Fatalf("a workspace that pins nothing has a lockfile: %v", err)
	}
	code, stdout, stderr = run(t, "", "-chdir="+bare, "verify", "dist/a.agent.tgz")
	if code != ExitOK || stderr != "" || !strings.Contains(stdout, "and pins nothing, as the workspace has no agentform.lock.hcl") {
		t.Errorf("verify in a workspace that pins nothing got: exit %d\n%s%s\nwant: OK, pins nothing, no warning", code, stdout, stderr)
	}

	// The same artifact with a lock entry written into agent.json, the
	// digest of an empty lockfile kept: it pins something after all.
	arch, err := artifact.Read(bytes.NewReader(mustReadFile(t, filepath.Join(bare, "dist", "a.agent.tgz"))))
	must(t, err)
	agent, err := artifact.ParseAgent(arch.Files[artifact.AgentName])
	must(t, err)
	agent.Blocks[0].Lock = artifact.NewLock(&lockfile.Tool{Kind: "javascript", Source: "h1:RbTrokOmxOcRTVyVAE2JkiGbm2V9c3zMaDx4Uswxb0I="})
	agentJSON, err := artifact.MarshalAgent(agent)
	must(t, err)
	var files []artifact.File
	for _, p := range arch.Paths() {
		switch p {
		case artifact.SumsName:
		case artifact.AgentName:
			files = append(files, artifact.File{Path: p, Data: agentJSON})
		default:
			files = append(files, artifact.File{Path: p, Data: arch.Files[p], Executable: arch.Executable[p]})
		}
	}
	edited, err := artifact.Build(files)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(elsewhere, "pins.tgz"), edited, 0o644))
	must(t, os.Remove(lock))
	code, stdout, stderr = run(t, "", "-chdir="+elsewhere, "verify", "pins.tgz")
	if code != ExitError || !strings.Contains(stderr, `agent.json pins tool block "t", but the lockfile has no entry for it`) {
		t.Errorf("verify of an artifact pinning an entry under an empty lockfile's digest got: exit %d\n%s%s\nwant: refused", code, stdout, stderr)
	}
}

// TestVerifyToolMovedToAnUnpinnedBlock: the assistant's artifact with
// word_count's code replaced and the tool pointed at a block that
// agent.json makes up and pins nothing for, repackaged so that SHA256SUMS
// holds: verify (against the lockfile, or on its own) refuses it, and
// invoke does not run the code.
func TestVerifyToolMovedToAnUnpinnedBlock(t *testing.T) {
	dir := copyTree(t, quickstart)
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply got: exit %d\n%s%s", code, stdout, stderr)
	}
	art := filepath.Join(dir, "dist", "assistant.agent.tgz")
	applied, err := os.ReadFile(art)
	must(t, err)
	arch, err := artifact.Read(bytes.NewReader(applied))
	must(t, err)
	var doc map[string]any
	must(t, json.Unmarshal(arch.Files[artifact.AgentName], &doc))
	for _, tl := range doc["tools"].([]any) {
		if tl := tl.(map[string]any); tl["name"] == "word_count" {
			tl["block"], tl["file"] = "tool.wc2", "tools/wc2/bundle.js"
		}
	}
	doc["blocks"] = append(doc["blocks"].([]any), map[string]any{"name": "wc2", "kind": "javascript", "lock": nil})
	agentJSON, err := json.MarshalIndent(doc, "", "  ")
	must(t, err)
	evil := []byte(`export const word_count = {name: "word_count", description: "x", parameters: {type: "object"}, execute: async () => ({output: "PWNED"})};` + "\n")
	var files []artifact.File
	for _, p := range arch.Paths() {
		switch p {
		case artifact.SumsName, "tools/word_count/bundle.js":
		case artifact.AgentName:
			files = append(files, artifact.File{Path: p, Data: agentJSON})
		default:
			files = append(files, artifact.File{Path: p, Data: arch.Files[p]})
		}
	}
	files = append(files, artifact.File{Path: "tools/wc2/bundle.js", Data: evil})
	edited, err := artifact.Build(files)
	must(t, err)
	copyPath := filepath.Join(t.TempDir(), "copy.agent.tgz")
	must(t, os.WriteFile(copyPath, edited, 0o644))
	const why = `tool "word_count" ships code, but the lock entry of tool block "wc2" records no bundle`
	for _, args := range [][]string{{"verify", copyPath}, {"verify", "-lockfile=false", copyPath}, {"invoke", copyPath, "word_count", "-args", `{"text": "a b"}`}} {
		code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
		if code != ExitError || !strings.Contains(stderr, why) || strings.Contains(stdout+stderr, "PWNED") {
			t.Errorf("%s got: exit %d\n%s%s\nwant: refused, saying %s", strings.Join(args, " "), code, stdout, stderr, why)
		}
	}
}

// TestDisabledPythonToolArtifact: an extensible agent ships every block,
// but a disabled python block is never resolved, so it has no package to
// ship: its tool names no code, and the artifact verifies and serves.
func TestDisabledPythonToolArtifact(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "py"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(`agent "ext" {
  capabilities      = ["shell"]
  capability_policy = "extensible"
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "lookup" {
  kind         = "python"
  source       = "./py"
  enabled      = false
  capabilities = ["lookup"]
}
`), 0o644))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply got: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "verify", "dist/ext.agent.tgz"); code != ExitOK {
		t.Errorf("verify got: exit %d\n%s%s\nwant: OK", code, stdout, stderr)
	}
}

// TestPlanFailedOutput: a plan with errors shows the matrix and checks but
// no changes it could not apply, ends by saying it failed, and prints the
// errors after that.
func TestPlanFailedOutput(t *testing.T) {
	dir := copyTree(t, quickstart)
	must(t, os.Remove(filepath.Join(dir, "skills", "research", "SKILL.md")))
	code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color")
	if code != ExitError || !strings.HasSuffix(stdout, "Plan failed: 1 error (below). Nothing can be applied until it is fixed.\n") ||
		!strings.Contains(stdout, "Capability matrix") || !strings.Contains(stdout, "Checks:") ||
		strings.Contains(stdout, "Lockfile changes") || strings.Contains(stdout, "Plan: ") || strings.Contains(stdout, "+ agent.") {
		t.Errorf("got: exit %d\n%s\nwant: the matrix and checks, no changes, and the failure last", code, stdout)
	}
	if !strings.HasPrefix(stderr, "\nError: Missing SKILL.md") {
		t.Errorf("stderr got:\n%s\nwant: the error after the plan", stderr)
	}
}

// TestPlanFilesDifferingOnlyInCase: a skill source holding two files whose
// names differ only in letter case (one file on macOS and Windows, which
// the artifact builder refuses) fails plan, at the skill's source, rather
// than the apply of a plan that looked clean.
func TestPlanFilesDifferingOnlyInCase(t *testing.T) {
	dir := copyTree(t, quickstart)
	skill := filepath.Join(dir, "skills", "research")
	must(t, os.WriteFile(filepath.Join(skill, "Notes.md"), []byte("one\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(skill, "notes.md"), []byte("two\n"), 0o644))
	if entries, err := os.ReadDir(skill); err != nil || len(entries) != 3 {
		t.Skipf("the file system ignores letter case (%d entries, %v)", len(entries), err)
	}
	code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=x.plan")
	if code != ExitError || !strings.Contains(stdout, "Plan failed: 1 error") {
		t.Fatalf("got: exit %d\n%s%s\nwant: the plan fails", code, stdout, stderr)
	}
	for _, w := range []string{
		"Error: File names differ only in letter case",
		"on agent.acl line 108, in skill \"research\"",
		"skills/research/Notes.md and skills/research/notes.md",
		"Rename or remove one of them.",
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr got:\n%s\nwant: contains %q", stderr, w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.plan")); !os.IsNotExist(err) {
		t.Errorf("saved plan: got %v, want none", err)
	}
}

// TestPlanJSONOverride: a plan that simulates a session override cannot
// be taken for the real one.
func TestPlanJSONOverride(t *testing.T) {
	dir := copyTree(t, quickstart)
	var doc struct {
		Applyable bool   `json:"applyable"`
		Override  string `json:"capability_override"`
	}
	_, stdout, _ := run(t, "", "-chdir="+dir, "plan", "-json")
	if json.Unmarshal([]byte(stdout), &doc) != nil || !doc.Applyable || doc.Override != "" {
		t.Fatalf("plain plan got: %+v\nwant: applyable, no override", doc)
	}
	_, stdout, _ = run(t, "", "-chdir="+dir, "plan", "-json", "-capability-override=extend:shell")
	if json.Unmarshal([]byte(stdout), &doc) != nil || doc.Applyable || doc.Override != "extend:shell" {
		t.Errorf("simulated plan got: %+v\nwant: not applyable, capability_override extend:shell", doc)
	}
}

func TestPlanJSONOnInvalidInput(t *testing.T) {
	dir := "../manifest/testdata/invalid/locals_runtime"
	before := snapshot(t, dir)
	code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-json")
	if code != ExitError {
		t.Errorf("got: exit %d\nwant: 1", code)
	}
	if stderr != "" {
		t.Errorf("got stderr %q\nwant: nothing but JSON on stdout", stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v", err)
	}
	diags, _ := doc["diagnostics"].([]any)
	if doc["applyable"] != false || len(diags) == 0 {
		t.Errorf("got: applyable=%v, %d diagnostics\nwant: false with diagnostics", doc["applyable"], len(diags))
	}
	for _, key := range []string{"resource_changes", "tools", "capability_matrix", "capability_changes", "denials", "checks"} {
		if list, ok := doc[key].([]any); !ok || list == nil {
			t.Errorf("got: %s = %v\nwant: an empty list", key, doc[key])
		}
	}
	if snapshot(t, dir) != before {
		t.Errorf("plan changed an invalid workspace")
	}
}

func TestPlanFailedCheck(t *testing.T) {
	code, stdout, stderr := run(t, "", "-chdir=../../planner/testdata/failing_check", "plan", "-no-color")
	if code != ExitError {
		t.Errorf("got: exit %d\nwant: 1", code)
	}
	if !strings.Contains(stderr, "Error: Check failed") || !strings.Contains(stderr, "on agent.acl line 21") {
		t.Errorf("got:\n%s\nwant: a located Check failed error", stderr)
	}
	if !strings.Contains(stdout, "FAIL assistant_never_shells: assistant must never reach the shell") {
		t.Errorf("got:\n%s\nwant: the failed check in the plan", stdout)
	}
}

func TestPlanBadOverrideFlag(t *testing.T) {
	code, _, stderr := run(t, "", "-chdir="+copyTree(t, quickstart), "plan", "-capability-override=grant:x")
	if code != ExitError || !strings.Contains(stderr, "invalid -capability-override") {
		t.Errorf("got: exit %d\n%s\nwant: a usage error", code, stderr)
	}
}

// TestPlanLargeWorkspaceSummarises checks that more than 40 tools switch
// the matrix to the per-agent summary, and -matrix=full forces the grid.
func TestPlanLargeWorkspaceSummarises(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("agent \"a\" {\n  capabilities = [\"ns1\"]\n  graph {\n    type = \"react\"\n  }\n  model {\n    provider = \"anthropic\"\n    name     = \"claude-haiku-4-5\"\n  }\n}\n")
	for i := 0; i < 45; i++ {
		fmt.Fprintf(&b, "tool \"t%02d\" {\n  kind         = \"bash\"\n  commands     = [\"ls\"]\n  capabilities = [\"ns%d::x\"]\n}\n", i, i%3)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := run(t, "", "-chdir="+dir, "plan")
	if !strings.Contains(stdout, "a  -> may call 15 of 45 tools, 30 denied (locked)") {
		t.Errorf("got:\n%s\nwant: the per-agent summary", stdout)
	}
	if !strings.Contains(stdout, "... and 20 more for a") {
		t.Errorf("got:\n%s\nwant: denials capped per agent", stdout)
	}
	_, stdout, _ = run(t, "", "-chdir="+dir, "plan", "-matrix=full")
	if !strings.Contains(stdout, "TOOL") || !strings.Contains(stdout, "t44") {
		t.Errorf("got:\n%s\nwant: the full grid", stdout)
	}
}

// TestToolDescriptionNotUsed: a tool block's description that the tool's
// own description overrides changes no agent (plan says no changes, and
// warns where it is written); the tool's own description, or the block's
// once it is the one used, does.
func TestToolDescriptionNotUsed(t *testing.T) {
	dir := copyTree(t, quickstart)
	manifestPath := filepath.Join(dir, "agent.acl")
	entryPath := filepath.Join(dir, "tools", "word_count", "index.ts")
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	edit := func(path, old, new string) {
		t.Helper()
		data, err := os.ReadFile(path)
		must(t, err)
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("%s has no %q", path, old)
		}
		must(t, os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644))
	}
	plan := func() (int, string, string) {
		return run(t, "", "-chdir="+dir, "plan", "-detailed-exitcode", "-no-color")
	}
	const warning = "Warning: Tool description not used"

	// The two the same: redundant, no warning.
	if code, stdout, stderr := plan(); code != ExitOK || strings.Contains(stderr, warning) {
		t.Fatalf("plan after apply got: exit %d\n%s%s\nwant: no changes, no warning", code, stdout, stderr)
	}

	edit(manifestPath, `description  = "Counts the words in a text."`, `description  = "Tallies words."`)
	code, stdout, stderr := plan()
	if code != ExitOK || !strings.Contains(stdout, "No changes.") {
		t.Errorf("plan after editing the unused description got: exit %d\n%s\nwant: no changes (the model is told the exported one)", code, stdout)
	}
	for _, want := range []string{warning, "on agent.acl line 75, in tool \"word_count\"", `description  = "Tallies words."`, "The tool object exported by tools/word_count has a description of its own"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("plan's warnings lack %q:\n%s", want, stderr)
		}
	}

	// Removing it, as the warning advises, or adding it back changes
	// nothing either.
	edit(manifestPath, `  description  = "Tallies words."`+"\n", ``)
	if code, stdout, stderr := plan(); code != ExitOK || strings.Contains(stderr, warning) {
		t.Errorf("plan after removing the unused description got: exit %d\n%s%s\nwant: no changes, no warning", code, stdout, stderr)
	}
	edit(manifestPath, `  source       = "./tools/word_count"`+"\n", `  source       = "./tools/word_count"`+"\n"+`  description  = "Tallies words."`+"\n")
	if code, stdout, stderr := plan(); code != ExitOK || !strings.Contains(stderr, warning) {
		t.Errorf("plan after adding an unused description got: exit %d\n%s%s\nwant: no changes, the warning", code, stdout, stderr)
	}

	// The tool's own description is what ships: changing it is a change.
	edit(entryPath, `description: "Counts the words in a text.",`, `description: "Counts words.",`)
	code, stdout, _ = plan()
	if code != ExitChanges || !strings.Contains(stdout, "~ agent.assistant will be updated in place") ||
		!strings.Contains(stdout, "definitions: sha256:") {
		t.Errorf("plan after editing the exported description got: exit %d\n%s\nwant: every agent updated, the definitions changed", code, stdout)
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}

	// Without an exported description the block's is used: a change to it
	// is a change, and nothing warns.
	edit(entryPath, `description: "Counts words.",`, ``)
	code, stdout, stderr = plan()
	if code != ExitChanges || !strings.Contains(stdout, "description: (none) → Tallies words.") || strings.Contains(stderr, warning) {
		t.Errorf("plan with only the block's description got: exit %d\n%s%s\nwant: a change to the block's description, no warning", code, stdout, stderr)
	}
}

// TestPlanOverrideGolden: a plan that simulates a session override, in an
// applied workspace, says so at the top and in its summary, names the
// agents the override counts for and those that ignore it, lists what the
// session would gain or lose apart from what apply would change, prints no
// actions header over nothing, and with -detailed-exitcode exits 2 only
// for the changes apply would make, as the JSON document (not applyable)
// keeps them apart too.
func TestPlanOverrideGolden(t *testing.T) {
	t.Setenv("RESEARCH_AGENT_URL", "")
	must(t, os.Unsetenv("RESEARCH_AGENT_URL"))
	applyQuickstart := func() string {
		dir := copyTree(t, quickstart)
		if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
			t.Fatalf("apply: exit %d\n%s", code, stderr)
		}
		return dir
	}
	applied := applyQuickstart()
	// pending has a change apply would make: the locked assistant may ask
	// the research agent too.
	pending := applyQuickstart()
	manifest := filepath.Join(pending, "agent.acl")
	src, err := os.ReadFile(manifest)
	must(t, err)
	edited := strings.Replace(string(src), `capabilities      = ["text", "skills"]`, `capabilities      = ["text", "skills", "a2a::research"]`, 1)
	if edited == string(src) {
		t.Fatal("the quickstart's assistant has no capabilities to edit")
	}
	must(t, os.WriteFile(manifest, []byte(edited), 0o644))

	for _, tc := range []struct {
		name string
		dir  string
		args []string
		tty  bool
		code int
	}{
		{"override.nocolor", applied, []string{"plan", "-no-color", "-detailed-exitcode", "-capability-override=replace:text"}, false, ExitOK},
		{"override.color", applied, []string{"plan", "-detailed-exitcode", "-capability-override=replace:text"}, true, ExitOK},
		{"override.summary", applied, []string{"plan", "-no-color", "-matrix=summary", "-detailed-exitcode", "-capability-override=replace:text"}, false, ExitOK},
		{"override.pending", pending, []string{"plan", "-no-color", "-detailed-exitcode", "-capability-override=replace:text,skills"}, false, ExitChanges},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(append([]string{"-chdir=" + tc.dir}, tc.args...), Streams{Stdout: &stdout, Stderr: &stderr, StdoutTTY: tc.tty, StderrTTY: tc.tty})
			if code != tc.code {
				t.Errorf("got: exit %d\n%s\nwant: exit %d", code, stderr.String(), tc.code)
			}
			out := stdout.String()
			if tc.tty {
				out = stripProgress(out)
			}
			checkGolden(t, filepath.Join("testdata", "plan", tc.name+".golden"), out)
			checkGolden(t, filepath.Join("testdata", "plan", tc.name+".stderr.golden"), stderr.String())
			if tc.dir == applied && strings.Contains(out, "perform the following actions") {
				t.Errorf("got:\n%s\nwant: no actions header, every resource is as applied", out)
			}
		})
	}

	// The JSON document keeps the session's gains and losses apart from
	// the changes apply would make, and exits as the text plan does.
	for _, tc := range []struct {
		dir      string
		override string
		code     int
		changes  int
	}{
		{applied, "replace:text", ExitOK, 0},
		{pending, "replace:text,skills", ExitChanges, 4},
	} {
		code, stdout, stderr := run(t, "", "-chdir="+tc.dir, "plan", "-json", "-detailed-exitcode", "-capability-override="+tc.override)
		var doc struct {
			Applyable bool   `json:"applyable"`
			Override  string `json:"capability_override"`
			Changes   []any  `json:"capability_changes"`
			Session   []struct {
				Agent, Tool, Change string
			} `json:"session_capability_changes"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("plan -json %s: %v\n%s", tc.override, err, stderr)
		}
		if code != tc.code || doc.Applyable || doc.Override != tc.override || len(doc.Changes) != tc.changes ||
			len(doc.Session) == 0 || doc.Session[0].Agent != "researcher" || doc.Session[0].Change != "revoked" {
			t.Errorf("plan -json -capability-override=%s got: exit %d, %+v\nwant: exit %d, not applyable, %d capability changes, the researcher's losses apart",
				tc.override, code, doc, tc.code, tc.changes)
		}
	}

	// Without the override the same workspaces exit as they did with it.
	for dir, want := range map[string]int{applied: ExitOK, pending: ExitChanges} {
		if code, stdout, _ := run(t, "", "-chdir="+dir, "plan", "-no-color", "-detailed-exitcode"); code != want || strings.Contains(stdout, "Simulated") {
			t.Errorf("plan without the override got: exit %d\n%s\nwant: exit %d, no simulation", code, stdout, want)
		}
	}
}

// TestPlanJSONChangedAttributeNames: plan -json, a saved plan and show
// -json of it list in changed_attributes the names of the attributes that
// changed, sorted, as DESIGN §9 and §10 have it, with how they changed
// apart, in attribute_changes; the plan text shows the same changes.
func TestPlanJSONChangedAttributeNames(t *testing.T) {
	dir := copyTree(t, quickstart)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	src, err := os.ReadFile(filepath.Join(dir, "agent.acl"))
	must(t, err)
	src = []byte(strings.Replace(string(src), `commands     = ["grep", "cat", "wc"]`, `commands     = ["grep", "cat", "wc", "head"]`, 1))
	src = []byte(strings.Replace(string(src), `description = "Answers questions for the ${locals.team} team."`, `description = "Answers questions."`, 1))
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), src, 0o644))

	type document struct {
		ResourceChanges []struct {
			Address           string   `json:"address"`
			ChangedAttributes []string `json:"changed_attributes"`
			AttributeChanges  []struct {
				Name    string   `json:"name"`
				Before  *string  `json:"before"`
				After   *string  `json:"after"`
				Added   []string `json:"added"`
				Changed []string `json:"changed"`
			} `json:"attribute_changes"`
		} `json:"resource_changes"`
	}
	check := func(what, out string) {
		t.Helper()
		var doc document
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s is not JSON: %v\n%s", what, err, out)
		}
		got := map[string][]string{}
		for _, rc := range doc.ResourceChanges {
			if len(rc.ChangedAttributes) > 0 {
				got[rc.Address] = rc.ChangedAttributes
			}
			for _, c := range rc.AttributeChanges {
				switch rc.Address + " " + c.Name {
				case "tool.grep commands":
					if len(c.Added) != 1 || c.Added[0] != "head" {
						t.Errorf("%s: tool.grep commands change\ngot:  %+v\nwant: head added", what, c)
					}
				case "agent.assistant description":
					// Abbreviated from a little before the first difference,
					// as the plan text shows them.
					if c.Before == nil || c.After == nil || *c.Before != "…uestions for the…" || *c.After != "…uestions." {
						t.Errorf("%s: agent.assistant description change\ngot:  %+v\nwant: before and after, abbreviated", what, c)
					}
				case "agent.assistant tools":
					if len(c.Changed) != 1 || c.Changed[0] != "tool.grep" {
						t.Errorf("%s: agent.assistant tools change\ngot:  %+v\nwant: tool.grep changed", what, c)
					}
				}
			}
		}
		want := map[string][]string{
			"agent.assistant":  {"description", "tools"},
			"agent.researcher": {"tools"},
			"tool.grep":        {"commands"},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s changed_attributes\ngot:  %v\nwant: %v", what, got, want)
		}
	}
	_, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-json")
	check("plan -json", stdout+stderr)
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-out=p.plan"); code != ExitOK {
		t.Fatalf("plan -out: exit %d\n%s", code, stderr)
	}
	_, stdout, stderr = run(t, "", "-chdir="+dir, "show", "-json", "p.plan")
	check("show -json p.plan", stdout+stderr)
	_, stdout, _ = run(t, "", "-chdir="+dir, "plan", "-no-color")
	for _, want := range []string{"      commands: + head\n", "      description: …uestions for the… → …uestions.\n", "      tool.grep changed\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan text lacks %q\ngot:\n%s", want, stdout)
		}
	}
}
