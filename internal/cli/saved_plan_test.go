package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/internal/version"
)

// savedPlanWorkspace is a workspace made by init, in a temporary
// directory.
func savedPlanWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if code, _, stderr := run(t, "", "-chdir="+dir, "init"); code != ExitOK {
		t.Fatalf("init: exit %d\n%s", code, stderr)
	}
	return dir
}

// TestSavedPlanOutDir checks that apply of a saved plan writes where the
// plan said (-out-dir is saved with it), and refuses an -out-dir that
// disagrees instead of writing elsewhere.
func TestSavedPlanOutDir(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out-dir=build", "-out=p"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-no-color", "p"); code != ExitOK || !strings.Contains(stdout, "Apply complete!") {
		t.Fatalf("apply p: exit %d\n%s%s", code, stdout, stderr)
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "build", "*.agent.tgz")); len(got) == 0 {
		t.Errorf("artifacts in build/\ngot:  none\nwant: the agents' artifacts, where the plan said")
	}
	if _, err := os.Stat(filepath.Join(dir, "dist")); err == nil {
		t.Errorf("dist/\ngot:  created\nwant: nothing written outside the plan's -out-dir")
	}

	fresh := savedPlanWorkspace(t)
	if code, _, stderr := run(t, "", "-chdir="+fresh, "plan", "-no-color", "-out=q"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "", "-chdir="+fresh, "apply", "-no-color", "-out-dir=elsewhere", "q")
	if code != ExitError || !strings.Contains(stderr, "the plan was made with no -out-dir, and this apply has -out-dir=elsewhere") || strings.Contains(stdout, "Apply complete!") {
		t.Errorf("apply -out-dir=elsewhere q\ngot:  exit %d\n%s%s\nwant: exit 1, the disagreement named, nothing applied", code, stdout, stderr)
	}
	if entries, _ := filepath.Glob(filepath.Join(fresh, "*", "*.agent.tgz")); len(entries) != 0 {
		t.Errorf("artifacts after the refusal\ngot:  %v\nwant: none", entries)
	}
	if strings.Contains(stderr, "configuration changed") {
		t.Errorf("apply -out-dir=elsewhere q\ngot:  %s\nwant: not blamed on the configuration", stderr)
	}
	// The same -out-dir again, however spelled, is what the plan said.
	if code, _, stderr := run(t, "", "-chdir="+fresh, "plan", "-no-color", "-out-dir=b2", "-out=q2"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+fresh, "apply", "-no-color", "-out-dir=./b2/", "q2"); code != ExitOK {
		t.Errorf("apply -out-dir=./b2/ q2\ngot:  exit %d\n%s%s\nwant: applied", code, stdout, stderr)
	}
}

// TestSavedPlanLockfileEdited: apply of a saved plan refuses a lockfile
// edited since the plan read it, which it would overwrite without a word;
// one only reformatted is the same lockfile.
func TestSavedPlanLockfileEdited(t *testing.T) {
	dir := copyTree(t, quickstart)
	lockPath := filepath.Join(dir, "agentform.lock.hcl")
	orig, err := os.ReadFile(lockPath)
	must(t, err)
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=p"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	// A comment and blank lines: no entry changed.
	must(t, os.WriteFile(lockPath, append([]byte("# reviewed\n\n"), orig...), 0o644))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "show", "p"); code != ExitOK {
		t.Fatalf("show: exit %d\n%s%s", code, stdout, stderr)
	}
	edited := strings.Replace(string(orig), `source = "h1:R`, `source = "h1:S`, 1)
	if edited == string(orig) {
		t.Fatalf("the quick start lockfile has no h1 source to edit:\n%s", orig)
	}
	must(t, os.WriteFile(lockPath, []byte(edited), 0o644))
	code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-no-color", "p")
	if code != ExitError || !strings.Contains(stderr, "the workspace changed since the plan was saved: agentform.lock.hcl was edited") || strings.Contains(stdout, "Apply complete!") {
		t.Errorf("apply p after the lockfile was edited\ngot:  exit %d\n%s%s\nwant: refused, naming the lockfile", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(lockPath); string(after) != edited {
		t.Errorf("the refused apply rewrote the lockfile")
	}
	// Reformatting only: the same entries, applied.
	must(t, os.WriteFile(lockPath, append([]byte("# reviewed\n\n"), orig...), 0o644))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-no-color", "p"); code != ExitOK {
		t.Errorf("apply p after a comment was added\ngot:  exit %d\n%s%s\nwant: applied", code, stdout, stderr)
	}

	// The plan writes the lockfile (a source changed); agentform lock
	// writes the same before the apply: what the plan would write is no
	// edit.
	must(t, os.WriteFile(filepath.Join(dir, "tools", "word_count", "index.ts"), append(mustReadFile(t, filepath.Join(dir, "tools", "word_count", "index.ts")), []byte("\n// counted\n")...), 0o644))
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=q"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "lock"); code != ExitOK || !strings.Contains(stdout, "~ tool.word_count") {
		t.Fatalf("lock: exit %d\n%s%s\nwant: word_count's entry written", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-no-color", "q"); code != ExitOK {
		t.Errorf("apply q after agentform lock wrote what it would\ngot:  exit %d\n%s%s\nwant: applied", code, stdout, stderr)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return b
}

// TestSavedPlanShowJSON checks that show -json FILE prints the document
// byte for byte as plan -json printed it.
func TestSavedPlanShowJSON(t *testing.T) {
	dir := savedPlanWorkspace(t)
	code, want, stderr := run(t, "", "-chdir="+dir, "plan", "-json")
	if code != ExitOK {
		t.Fatalf("plan -json: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=p"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	code, got, stderr := run(t, "", "-chdir="+dir, "show", "-json", "p")
	if code != ExitOK || got != want {
		t.Errorf("show -json p\ngot:  exit %d\n%s%s\nwant: plan -json's output\n%s", code, got, stderr, want)
	}
}

// TestSavedPlanShowPrintable: the text of a plan file from elsewhere
// (a CI artifact, edited) cannot drive the terminal through show.
func TestSavedPlanShowPrintable(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=p"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	path := filepath.Join(dir, "p")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var saved map[string]any
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	// Control characters after the plan's own text (which must agree
	// with its document, so is kept).
	text := saved["text"].(string)
	saved["text"] = text + "\x1b]0;PWNED\x07\x1b[2J\tdone\n"
	if b, err = json.Marshal(saved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, got, stderr := run(t, "", "-chdir="+dir, "show", "p")
	if want := "\\x1b]0;PWNED\\a\\x1b[2J\tdone\n"; code != ExitOK || !strings.HasSuffix(got, want) || strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("show p\ngot:  exit %d\n%q%s\nwant: ending %q, nothing unescaped", code, got, stderr, want)
	}
}

// TestSavedPlanWrongFile checks that apply and show of a file that is not
// a saved plan say what the file is, not where JSON broke in it.
func TestSavedPlanWrongFile(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if err := os.WriteFile(filepath.Join(dir, "x.agent.tgz"), []byte{0x1f, 0x8b, 8, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"list.json": "[]", "null.json": "null", "typed.json": `{"format_version": 1}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, doc, stderr := run(t, "", "-chdir="+dir, "plan", "-json")
	if code != ExitOK {
		t.Fatalf("plan -json: exit %d\n%s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{"agent.acl", "agent.acl is not a saved agentform plan: it is not JSON; agentform plan -out=FILE writes one"},
		{"x.agent.tgz", "is not a saved agentform plan: it is a gzip archive (an artifact?)"},
		{"list.json", "list.json is not a saved agentform plan: it is JSON, but not an object"},
		{"null.json", "null.json is not a saved agentform plan: it is JSON without a saved plan's fields"},
		{"plan.json", "plan.json is not a saved agentform plan: it is a JSON plan document (plan -json), which shows a plan but cannot be applied"},
		// Neither Go's JSON error nor the file system's.
		{"typed.json", `typed.json is not a saved agentform plan: it is JSON whose "format_version" is a number, which no saved plan has; agentform plan -out=FILE writes one`},
		{"missing.plan", "missing.plan; agentform plan -out=FILE writes a saved plan"},
	} {
		for _, sub := range []string{"apply", "show"} {
			code, _, stderr := run(t, "", "-chdir="+dir, sub, tc.file)
			if code != ExitError || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s %s\ngot:  exit %d\n%s\nwant: exit 1 and %q", sub, tc.file, code, stderr, tc.want)
			}
		}
	}
}

// TestSavedPlanOtherVersion: a saved plan is applied (or shown) only by
// the agentform version that made it, as Terraform does; another version
// could resolve or build differently from what the plan showed.
func TestSavedPlanOtherVersion(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-out=x.plan"); code != ExitOK {
		t.Fatalf("plan -out: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "x.plan"))
	must(t, err)
	var doc map[string]any
	must(t, json.Unmarshal(b, &doc))
	for v, want := range map[string]string{
		"9.9.9": `x.plan was made by agentform "9.9.9", and this is agentform "` + version.Version + `": a saved plan is applied and shown only by the version that made it.`,
		"":      `x.plan was made by an unknown version of agentform, and this is agentform "` + version.Version + `"`,
	} {
		doc["agentform_version"] = v
		edited, err := json.Marshal(doc)
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, "x.plan"), edited, 0o644))
		for _, sub := range []string{"apply", "show"} {
			code, _, stderr := run(t, "", "-chdir="+dir, sub, "x.plan")
			if code != ExitError || !strings.Contains(stderr, want) {
				t.Errorf("%s of a plan by %q\ngot:  exit %d\n%s\nwant: exit 1 and %q", sub, v, code, stderr, want)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "dist")); !os.IsNotExist(err) {
			t.Errorf("apply of a plan by %q wrote artifacts: %v", v, err)
		}
	}
}

// TestSavedPlanTextMatchesDocument: show prints a saved plan's text and
// apply checks its document, so the two must agree: a text edited to show
// less than the document (and apply) holds, or a document that is no plan
// document, is refused by both.
func TestSavedPlanTextMatchesDocument(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-out=x.plan"); code != ExitOK {
		t.Fatalf("plan -out: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "x.plan"))
	must(t, err)
	var saved map[string]any
	must(t, json.Unmarshal(b, &saved))
	text := saved["text"].(string)
	for name, edit := range map[string]func(map[string]any){
		"no changes": func(m map[string]any) { m["text"] = "No changes. Artifacts match the configuration.\n" },
		"a line less": func(m map[string]any) {
			m["text"] = regexp.MustCompile(`(?m)^  \+ agent\.\S+ will be created\n`).ReplaceAllString(text, "")
		},
		"null document":   func(m map[string]any) { m["document"] = nil },
		"number document": func(m map[string]any) { m["document"] = 123 },
	} {
		edited := map[string]any{}
		for k, v := range saved {
			edited[k] = v
		}
		edit(edited)
		out, err := json.Marshal(edited)
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, "x.plan"), out, 0o644))
		for _, sub := range [][]string{{"show", "x.plan"}, {"show", "-json", "x.plan"}, {"apply", "x.plan"}} {
			code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, sub...)...)
			if code != ExitError || !strings.Contains(stderr, "x.plan is not a plan as agentform plan -out wrote it") || strings.Contains(stdout, "Apply complete") {
				t.Errorf("%s, %v\ngot:  exit %d\n%s%s\nwant: refused", name, sub, code, stdout, stderr)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "dist")); !os.IsNotExist(err) {
		t.Errorf("a refused apply wrote artifacts: %v", err)
	}
	// The file as written is shown and applied.
	must(t, os.WriteFile(filepath.Join(dir, "x.plan"), b, 0o644))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "x.plan"); code != ExitOK || !strings.Contains(stdout, "Apply complete") {
		t.Errorf("apply of the plan as written: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestLockWaitsForApply checks that lock holds the state's lock: with an
// apply holding it, lock is refused (or waits, with -lock-timeout) instead
// of writing a lockfile the apply would then replace.
func TestLockWaitsForApply(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	lockPath := filepath.Join(dir, "agentform.lock.hcl")
	before, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	// A local change the lockfile must record.
	src, _ := filepath.Glob(filepath.Join(dir, "tools", "*", "index.*"))
	if len(src) == 0 {
		t.Fatal("init made no javascript tool")
	}
	f, err := os.OpenFile(src[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n// edited\n")
	f.Close()

	db, err := state.Open(dir, state.Options{Operation: "apply", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "-chdir="+dir, "lock", "-no-color")
	db.Close()
	if code != ExitError || !strings.Contains(stderr, "Error acquiring the state lock") {
		t.Errorf("lock while an apply holds the state\ngot:  exit %d\n%s%s\nwant: exit 1, the state lock error", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(lockPath); string(after) != string(before) {
		t.Errorf("lockfile\ngot:  rewritten while the state was locked\nwant: unchanged")
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "lock", "-no-color"); code != ExitOK || !strings.Contains(stdout, "updated") {
		t.Errorf("lock after the apply\ngot:  exit %d\n%s%s\nwant: the lockfile updated", code, stdout, stderr)
	}
}

// TestApplyNoChangesRemovesStaleTemps checks that an apply with nothing to
// do still removes the temporary files a killed apply left.
func TestApplyNoChangesRemovesStaleTemps(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	stale := []string{filepath.Join(dir, ".agentform.lock.hcl.tmp123"), filepath.Join(dir, "dist", ".assistant.agent.tgz.tmp456")}
	for _, p := range stale {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK || !strings.Contains(stdout, "No changes.") {
		t.Fatalf("apply: exit %d\n%s%s\nwant: no changes", code, stdout, stderr)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s\ngot:  %v\nwant: removed", p, err)
		}
	}
}

// TestApplyOutDirThroughLink checks that moving the artifacts to an
// -out-dir that is a symbolic link to the directory they are in rewrites
// them in place instead of removing what it just wrote.
func TestApplyOutDirThroughLink(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	if err := os.Symlink("dist", filepath.Join(dir, "link")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	before, _ := filepath.Glob(filepath.Join(dir, "dist", "*.agent.tgz"))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color", "-out-dir=link"); code != ExitOK {
		t.Fatalf("apply -out-dir=link: exit %d\n%s%s", code, stdout, stderr)
	}
	after, _ := filepath.Glob(filepath.Join(dir, "dist", "*.agent.tgz"))
	if len(before) == 0 || len(after) != len(before) {
		t.Errorf("artifacts in dist/\ngot:  %d after the move, %d before\nwant: all kept", len(after), len(before))
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-detailed-exitcode"); code != ExitOK {
		t.Errorf("plan after the move\ngot:  exit %d\n%s%s\nwant: no changes", code, stdout, stderr)
	}
	// The same directory spelled absolute.
	abs := filepath.Join(dir, "dist")
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color", "-out-dir="+abs); code != ExitOK {
		t.Fatalf("apply -out-dir=%s: exit %d\n%s%s", abs, code, stdout, stderr)
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "dist", "*.agent.tgz")); len(got) != len(before) {
		t.Errorf("artifacts in dist/ after -out-dir=%s\ngot:  %d\nwant: %d, all kept", abs, len(got), len(before))
	}
}

// TestOutDirInSource checks that plan and apply refuse an -out-dir inside
// a skill's directory, which the skill's hash would take the artifacts
// into, however it is spelled, and name the flag and the block; nothing
// is written.
func TestOutDirInSource(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if err := os.Symlink(filepath.Join("skills", "greeting"), filepath.Join(dir, "link")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	for _, outDir := range []string{"skills/greeting/out", "./tools/../skills/greeting/out", "link/out", filepath.Join(dir, "skills", "greeting")} {
		want := `The artifact directory "` + outDir + `" (-out-dir) is inside the source of skill.greeting ("./skills/greeting")`
		for _, cmd := range [][]string{{"plan", "-no-color"}, {"apply", "-auto-approve", "-no-color"}} {
			args := append([]string{"-chdir=" + dir}, append(cmd, "-out-dir="+outDir)...)
			code, stdout, stderr := run(t, "", args...)
			if code != ExitError || !strings.Contains(stderr, "Artifact directory inside a source") || !strings.Contains(stderr, want) {
				t.Errorf("%s -out-dir=%s\ngot:  exit %d\n%s%s\nwant: exit 1 and an error containing %q", cmd[0], outDir, code, stdout, stderr, want)
			}
		}
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "skills", "greeting", "*", "*.agent.tgz")); len(got) != 0 {
		t.Errorf("artifacts in the skill\ngot:  %v\nwant: none", got)
	}
	// Inside the skill's dist, which its hash leaves out, converges.
	for i := range 2 {
		if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color", "-out-dir=skills/greeting/dist"); code != ExitOK || i == 1 && !strings.Contains(stdout, "No changes") {
			t.Fatalf("apply %d -out-dir=skills/greeting/dist\ngot:  exit %d\n%s%s\nwant: applied, then no changes", i+1, code, stdout, stderr)
		}
	}
}

// TestSkillAtWorkspaceRoot: a skill whose source is the workspace itself
// holds what apply writes there (the state under .agentform, the
// lockfile, dist): its hash leaves them out, so the plan after an apply
// is empty.
func TestSkillAtWorkspaceRoot(t *testing.T) {
	dir := savedPlanWorkspace(t)
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: root\ndescription: The workspace as a skill.\n---\nRead the manifests.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "agent.acl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\nskill \"root\" {\n  source = \".\"\n}\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply\ngot:  exit %d\n%s%s", code, stdout, stderr)
	}
	for i := range 2 {
		if code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color"); code != ExitOK || !strings.Contains(stdout, "No changes") {
			t.Fatalf("plan %d after apply\ngot:  exit %d\n%s%s\nwant: no changes", i+1, code, stdout, stderr)
		}
		// The runtime database serve writes is under .agentform too.
		if err := os.WriteFile(filepath.Join(dir, ".agentform", "runtime.db"), []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlanOutKeepsOtherFiles: plan -out naming the manifest (or any file
// that is not a saved plan) is refused before it replaces it; a new file
// and an earlier plan are written.
func TestPlanOutKeepsOtherFiles(t *testing.T) {
	dir := savedPlanWorkspace(t)
	manifest := filepath.Join(dir, "agent.acl")
	before, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-out=agent.acl")
	if want := "Error: -out=agent.acl names the manifest file agent.acl; write the plan to another file, like -out=agents.plan."; code != ExitError || !strings.Contains(stderr, want) {
		t.Errorf("plan -out=agent.acl\ngot:  exit %d\n%s\nwant: exit 1 and %q", code, stderr, want)
	}
	if after, _ := os.ReadFile(manifest); !bytes.Equal(after, before) {
		t.Errorf("plan -out=agent.acl changed the manifest:\n%s", after)
	}
	notes := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(notes, []byte("my notes"), 0o644))
	code, _, stderr = run(t, "", "-chdir="+dir, "plan", "-out=notes.txt")
	if want := "Error: -out=notes.txt names a file that is not a saved plan, which the plan would replace; name a new file, like -out=agents.plan."; code != ExitError || !strings.Contains(stderr, want) {
		t.Errorf("plan -out=notes.txt\ngot:  exit %d\n%s\nwant: exit 1 and %q", code, stderr, want)
	}
	if after, _ := os.ReadFile(notes); string(after) != "my notes" {
		t.Errorf("plan -out=notes.txt changed the file: %q", after)
	}
	for range 2 { // a new file, then over the plan it wrote
		if code, _, stderr := run(t, "", "-chdir="+dir, "plan", "-out=agents.plan"); code != ExitOK {
			t.Errorf("plan -out=agents.plan: exit %d\n%s", code, stderr)
		}
	}
}

// TestOutInsideSource: plan -out and audit -out refuse a file inside the
// source of a tool or skill, which agentform hashes and packages (the
// saved plan would change what it planned, so apply would always refuse
// it), naming the block; a directory the hash leaves out is fine. A saved
// plan that lies in a source anyway is named when apply refuses it.
func TestOutInsideSource(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(`agent "a" {
  capabilities = ["skills"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

skill "notes" {
  source = "."
}
`), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\ndescription: Takes notes.\n---\n\n# Notes\n"), 0o644))
	named := `would be a file of the source of skill.notes (source = ".", agent.acl:13), whose files agentform hashes and packages`

	code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=x.plan")
	if code != ExitError || !strings.Contains(stderr, "Error: -out=x.plan "+named) || !strings.Contains(stderr, "like -out=../x.plan.") {
		t.Errorf("plan -out=x.plan\ngot:  exit %d\n%s%s\nwant: exit 1, the block named", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "", "-chdir="+dir, "audit", "-no-color", "-out=report.txt")
	if code != exitUsage || !strings.Contains(stderr, "Error: -out=report.txt "+named) {
		t.Errorf("audit -out=report.txt\ngot:  exit %d\n%s%s\nwant: exit 2, the block named", code, stdout, stderr)
	}
	for _, name := range []string{"x.plan", "report.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s: got %v, want not written", name, err)
		}
	}

	// dist/ is left out of the hash: a plan saved there applies.
	must(t, os.Mkdir(filepath.Join(dir, "dist"), 0o755))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=dist/x.plan"); code != ExitOK {
		t.Fatalf("plan -out=dist/x.plan: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-no-color", "dist/x.plan"); code != ExitOK {
		t.Fatalf("apply dist/x.plan: exit %d\n%s%s", code, stdout, stderr)
	}

	// A plan moved into the source is refused, and apply says why.
	must(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\ndescription: Takes notes, briefly.\n---\n\n# Notes\n"), 0o644))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=dist/y.plan"); code != ExitOK {
		t.Fatalf("plan -out=dist/y.plan: exit %d\n%s%s", code, stdout, stderr)
	}
	must(t, os.Rename(filepath.Join(dir, "dist", "y.plan"), filepath.Join(dir, "y.plan")))
	code, stdout, stderr = run(t, "", "-chdir="+dir, "apply", "-no-color", "y.plan")
	if code != ExitError || !strings.Contains(stderr, "the workspace changed since the plan was saved") ||
		!strings.Contains(stderr, `The saved plan y.plan is itself a file of the source of skill.notes (source = ".", agent.acl:13)`) {
		t.Errorf("apply y.plan\ngot:  exit %d\n%s%s\nwant: exit 1, the plan's place named", code, stdout, stderr)
	}
}

// TestSavedPlanDoesOnlyWhatItShows: apply of a saved plan refuses to do
// what the plan does not show: rebuild an artifact removed since the plan
// ("No changes"), or grant access the document was edited to hide.
func TestSavedPlanDoesOnlyWhatItShows(t *testing.T) {
	dir := copyTree(t, quickstart)
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=p"); code != ExitOK || !strings.Contains(stdout, "No changes") {
		t.Fatalf("plan: exit %d\n%s%s\nwant: no changes", code, stdout, stderr)
	}
	art := filepath.Join(dir, "dist", "assistant.agent.tgz")
	must(t, os.Remove(art))
	code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-no-color", "p")
	if code != ExitError || !strings.Contains(stderr, "saved plan is stale: apply would now update agent.assistant, which the plan does not show") || strings.Contains(stdout, "Apply complete!") {
		t.Errorf("apply p after the artifact was removed\ngot:  exit %d\n%s%s\nwant: refused, naming agent.assistant", code, stdout, stderr)
	}
	if _, err := os.Stat(art); !os.IsNotExist(err) {
		t.Errorf("the refused apply rebuilt the artifact: %v", err)
	}
	if code, _, stderr := run(t, "", "-chdir="+dir, "apply", "-auto-approve", "-no-color"); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}

	// A grant, hidden by editing the saved document.
	acl := filepath.Join(dir, "agent.acl")
	src := string(mustReadFile(t, acl))
	edited := strings.Replace(src, `capabilities      = ["text", "skills"]`, `capabilities      = ["text", "skills", "a2a"]`, 1)
	if edited == src {
		t.Fatalf("the quick start manifest has no assistant capabilities to widen:\n%s", src)
	}
	must(t, os.WriteFile(acl, []byte(edited), 0o644))
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=q"); code != ExitOK || !strings.Contains(stdout, "assistant") {
		t.Fatalf("plan: exit %d\n%s%s", code, stdout, stderr)
	}
	var saved map[string]json.RawMessage
	must(t, json.Unmarshal(mustReadFile(t, filepath.Join(dir, "q")), &saved))
	var doc map[string]json.RawMessage
	must(t, json.Unmarshal(saved["document"], &doc))
	if string(doc["capability_changes"]) == "[]" {
		t.Fatalf("the plan grants nothing: %s", doc["capability_changes"])
	}
	doc["capability_changes"] = json.RawMessage("[]")
	saved["document"], _ = json.Marshal(doc)
	// And its text, so that the two agree (ReadSaved compares them).
	var text string
	must(t, json.Unmarshal(saved["text"], &text))
	text = regexp.MustCompile(`Capabilities: \d+ granted`).ReplaceAllString(text, "Capabilities: 0 granted")
	saved["text"], _ = json.Marshal(text)
	b, _ := json.Marshal(saved)
	must(t, os.WriteFile(filepath.Join(dir, "q"), b, 0o600))
	code, stdout, stderr = run(t, "", "-chdir="+dir, "apply", "-no-color", "q")
	if code != ExitError || !strings.Contains(stderr, "apply would now grant assistant → a2a_research_cancel_task, which the plan does not show") || strings.Contains(stdout, "Apply complete!") {
		t.Errorf("apply of a document edited to hide a grant\ngot:  exit %d\n%s%s\nwant: refused, naming the grant", code, stdout, stderr)
	}
}
