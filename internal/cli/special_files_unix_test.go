//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFileArguments: a named pipe or a link to a device given where
// a file is read (an artifact, a saved plan, the lockfile) is refused at
// once with the path named; it once blocked on the pipe, or read /dev/zero
// until memory ran out.
func TestSpecialFileArguments(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../examples/quickstart/agent.acl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "agentform.lock.hcl")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "pipe"}, "Error: pipe is a named pipe, not a regular file."},
		{[]string{"verify", "zero"}, "Error: zero is a character device, not a regular file."},
		{[]string{"serve", "pipe"}, "Error: cannot start: pipe is a named pipe, not a regular file."},
		{[]string{"show", "zero"}, "zero is a character device, not a regular file"},
		{[]string{"apply", "pipe"}, "pipe is a named pipe, not a regular file"},
		{[]string{"plan", "-refresh=false"}, "agentform.lock.hcl is a character device, not a regular file."},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			type result struct {
				code   int
				stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, _, stderr := run(t, "", append([]string{"-chdir=" + dir}, tc.args...)...)
				done <- result{code, stderr}
			}()
			select {
			case r := <-done:
				if r.code != ExitError || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("got: exit %d\n%s\nwant: exit %d with %q", r.code, r.stderr, ExitError, tc.want)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("blocked")
			}
		})
	}
}

// TestFmtHostileFiles: fmt -diff masks a secret's default on both sides,
// a file name with an escape sequence is listed escaped, a named pipe is
// refused without blocking, and stdin is bounded like a manifest file.
func TestFmtHostileFiles(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte("tool \"m\" {\n  auth_token = secret(runtime(\"TOK\", \"tok-DEFAULTSECRET2\"))\n  kind=\"mcp\"\n}\n"), 0o644))
	code, stdout, stderr := run(t, "", "-chdir="+dir, "fmt", "-diff", "-write=false")
	if code != ExitOK || strings.Contains(stdout, "DEFAULTSECRET") || !strings.Contains(stdout, `   auth_token = secret(runtime("TOK", (redacted)))`) || !strings.Contains(stdout, `+  kind       = "mcp"`) {
		t.Errorf("fmt -diff: got exit %d\n%s%s\nwant: the diff with the default masked", code, stdout, stderr)
	}

	odd := t.TempDir()
	must(t, os.WriteFile(filepath.Join(odd, "\x1b[31mred.acl"), []byte("x=1\n"), 0o644))
	code, stdout, _ = run(t, "", "-chdir="+odd, "fmt", "-write=false")
	if code != ExitOK || stdout != `\x1b[31mred.acl`+"\n" {
		t.Errorf("fmt -write=false: got exit %d %q\nwant: the name escaped", code, stdout)
	}

	pipe := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(pipe, "p.acl"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		_, _, stderr := run(t, "", "-chdir="+pipe, "fmt", "p.acl")
		done <- stderr
	}()
	select {
	case stderr := <-done:
		if !strings.Contains(stderr, "Error: p.acl is a named pipe, not a regular file.") {
			t.Errorf("fmt p.acl: got %s\nwant: refused as a named pipe", stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fmt blocked on a named pipe")
	}

	code, _, stderr = run(t, strings.Repeat(" ", 8<<20+1), "fmt", "-")
	if code != ExitError || !strings.Contains(stderr, "standard input holds more than 8388608 bytes") {
		t.Errorf("fmt - of 8 MiB + 1: got exit %d %s\nwant: refused", code, stderr)
	}
}

// TestFmtDiffLocalSecret: a local that another file reads into a secret
// is masked in fmt -diff as plan masks it, on both sides.
func TestFmtDiffLocalSecret(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte("tool \"m\" {\n  kind       = \"mcp\"\n  transport  = \"stdio\"\n  command    = \"srv\"\n  auth_token = secret(runtime(\"TOK\", locals.tokdef))\n}\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "locals.acl"), []byte("locals {\n  tokdef      =    \"hunter2-SECRET\"\n}\n"), 0o644))
	code, stdout, stderr := run(t, "", "-chdir="+dir, "fmt", "-diff", "-write=false")
	if code != ExitOK || strings.Contains(stdout, "hunter2") || !strings.Contains(stdout, `+  tokdef = (redacted)`) {
		t.Errorf("fmt -diff: got exit %d\n%s%s\nwant: the local masked on both sides", code, stdout, stderr)
	}
	// The same text on standard input, one file.
	one := "locals {\n  tokdef      =    \"hunter2-SECRET\"\n}\ntool \"m\" {\n  kind       = \"mcp\"\n  auth_token = secret(runtime(\"TOK\", locals.tokdef))\n}\n"
	code, stdout, stderr = run(t, one, "fmt", "-diff", "-")
	if code != ExitOK || strings.Contains(stdout, "hunter2") || !strings.Contains(stdout, `+  tokdef = (redacted)`) {
		t.Errorf("fmt -diff -: got exit %d\n%s%s\nwant: the local masked on both sides", code, stdout, stderr)
	}
	// Also while another file of the workspace does not parse (being
	// edited): fmt refuses that one and diffs the rest.
	must(t, os.WriteFile(filepath.Join(dir, "broken.acl"), []byte("agent \"x\" {\n oops = \n}\n"), 0o644))
	code, stdout, stderr = run(t, "", "-chdir="+dir, "fmt", "-diff", "-write=false")
	if code != ExitError || strings.Contains(stdout+stderr, "hunter2") || !strings.Contains(stdout, `+  tokdef = (redacted)`) {
		t.Errorf("fmt -diff with a broken file: got exit %d\n%s%s\nwant: the local masked, the broken file refused", code, stdout, stderr)
	}
	// And when the file that reads the local into a secret is the broken
	// one: what it reads cannot be told, so every local is hidden.
	must(t, os.Remove(filepath.Join(dir, "broken.acl")))
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte("tool \"m\" {\n  kind       = \"mcp\"\n  auth_token = secret(runtime(\"TOK\", locals.tokdef))\n  oops = \n}\n"), 0o644))
	code, stdout, stderr = run(t, "", "-chdir="+dir, "fmt", "-diff", "-write=false")
	if code != ExitError || strings.Contains(stdout+stderr, "hunter2") || !strings.Contains(stdout, `+  tokdef = (redacted)`) {
		t.Errorf("fmt -diff with the secret's file broken: got exit %d\n%s%s\nwant: the local masked", code, stdout, stderr)
	}
}

// TestInitCreatesNewFilesOnly: a file that appears between init's checks
// and its writes is neither overwritten nor removed: createNew refuses it.
func TestInitCreatesNewFilesOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.acl")
	must(t, os.WriteFile(path, []byte("theirs"), 0o644))
	if err := createNew(path, []byte("init's")); err == nil || !strings.Contains(err.Error(), "file exists") {
		t.Errorf("got: %v\nwant: the existing file refused", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "theirs" {
		t.Errorf("got: %q\nwant: the file as it was", b)
	}
	fresh := filepath.Join(filepath.Dir(path), "new.acl")
	if err := createNew(fresh, []byte("init's")); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(fresh); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("got: %v, %v\nwant: a new file of mode 0644", info, err)
	}
	if b, _ := os.ReadFile(fresh); string(b) != "init's" {
		t.Errorf("got: %q\nwant: init's data", b)
	}
	wantEntries(t, filepath.Dir(path), "agent.acl", "new.acl")
}

// TestInitCreatesNewFilesWhole: createNew's file appears complete or not
// at all, linked from a synced temporary file in its directory, so that
// init killed midway leaves no part of a file for the next init to report
// as a conflict.
func TestInitCreatesNewFilesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.acl")
	linked := false
	stubLink(t, func(oldname, newname string) error {
		linked = true
		if _, err := os.Lstat(path); err == nil {
			t.Errorf("%s exists before its data is complete", path)
		}
		info, err := os.Stat(oldname)
		if b, _ := os.ReadFile(oldname); filepath.Dir(oldname) != dir || !strings.HasPrefix(filepath.Base(oldname), ".agent.acl.tmp") ||
			err != nil || info.Mode().Perm() != 0o644 || string(b) != "init's" {
			t.Errorf("linked %s (%v, %v, %q)\nwant: a complete temporary file .agent.acl.tmp* of mode 0644 in %s", oldname, info, err, b, dir)
		}
		return os.Link(oldname, newname)
	})
	if err := createNew(path, []byte("init's")); err != nil {
		t.Fatal(err)
	}
	if !linked {
		t.Errorf("createNew wrote %s in place; want: linked from a complete temporary file", path)
	}
	if b, _ := os.ReadFile(path); string(b) != "init's" {
		t.Errorf("got: %q\nwant: init's data", b)
	}
	wantEntries(t, dir, "agent.acl")
}

// TestInitCreatesNewFilesWithoutHardLinks: on a file system without hard
// links createNew creates the file with O_EXCL instead: still never over
// an existing file, and without a temporary file left behind.
func TestInitCreatesNewFilesWithoutHardLinks(t *testing.T) {
	stubLink(t, func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	})
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.acl")
	must(t, os.WriteFile(path, []byte("theirs"), 0o644))
	if err := createNew(path, []byte("init's")); err == nil || !strings.Contains(err.Error(), "file exists") {
		t.Errorf("got: %v\nwant: the existing file refused", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "theirs" {
		t.Errorf("got: %q\nwant: the file as it was", b)
	}
	fresh := filepath.Join(dir, "new.acl")
	if err := createNew(fresh, []byte("init's")); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(fresh); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("got: %v, %v\nwant: a new file of mode 0644", info, err)
	}
	if b, _ := os.ReadFile(fresh); string(b) != "init's" {
		t.Errorf("got: %q\nwant: init's data", b)
	}
	wantEntries(t, dir, "agent.acl", "new.acl")
}

// TestInitCreateNewFails: a link that fails for another reason is an
// error naming the file, with neither the file nor a temporary file left.
func TestInitCreateNewFails(t *testing.T) {
	stubLink(t, func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EIO}
	})
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.acl")
	want := "writing " + path + ": " + syscall.EIO.Error()
	if err := createNew(path, []byte("init's")); err == nil || err.Error() != want {
		t.Errorf("got: %v\nwant: %s", err, want)
	}
	wantEntries(t, dir)
}

// stubLink replaces createNew's link for the test.
func stubLink(t *testing.T, link func(oldname, newname string) error) {
	t.Helper()
	saved := linkFile
	linkFile = link
	t.Cleanup(func() { linkFile = saved })
}

// wantEntries checks that dir holds exactly the names given: no
// temporary file.
func wantEntries(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %q; want %q", dir, got, names)
	}
}

// TestFmtHidesEscapedSecrets: a secret's default written with escapes or
// as a heredoc is hidden in fmt -diff (by its source range: its text is
// not its value), and a file that does not parse shows its lines masked
// as validate shows them.
func TestFmtHidesEscapedSecrets(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), []byte("tool \"m\" {\n  kind       = \"mcp\"\n  auth_token = secret(runtime(\"TOK\", locals.pw))\n}\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "locals.acl"), []byte("locals {\n  pw      =    \"Tr0ub4dor\\\"&3-xy\"\n  note =   \"ok\"\n}\n"), 0o644))
	_, stdout, stderr := run(t, "", "-chdir="+dir, "fmt", "-diff", "-write=false")
	if strings.Contains(stdout+stderr, "Tr0ub4dor") || !strings.Contains(stdout, "+  pw   = (redacted)") {
		t.Errorf("fmt -diff of an escaped secret:\n%s%s\nwant: it masked", stdout, stderr)
	}
	broken := t.TempDir()
	must(t, os.WriteFile(filepath.Join(broken, "agent.acl"), []byte("locals {\n  tok = \"hunter2-SECRET\" x\n}\ntool \"m\" {\n  kind       = \"mcp\"\n  auth_token = secret(runtime(\"TOK\", locals.tok))\n}\n"), 0o644))
	code, stdout, stderr := run(t, "", "-chdir="+broken, "fmt", "-diff")
	if code != ExitError || strings.Contains(stdout+stderr, "hunter2") {
		t.Errorf("fmt of a file that does not parse: got exit %d\n%s%s\nwant: its lines masked", code, stdout, stderr)
	}
}

// TestFmtDiffBrokenSecretFileEscaped: when the file that reads a local
// into a secret does not parse, every local's value is hidden by its
// source range, so an escaped value is hidden too; a change that is all
// inside hidden values is said, not shown as an empty diff; a masked
// value over several lines keeps the lines' numbers.
func TestFmtDiffBrokenSecretFileEscaped(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "tool.acl"), []byte("tool \"j\" {\n  kind       = \"mcp\"\n  auth_token = secret(runtime(\"TOK4\", locals.pw))\n  oops =\n}\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "loc.acl"), []byte("locals {\n  pw    = \"Tr0ub4dor\\\"&3-xy\"\n  note =   \"ok\"\n}\n"), 0o644))
	_, stdout, stderr := run(t, "", "-chdir="+dir, "fmt", "-diff", "-write=false")
	if strings.Contains(stdout+stderr, "Tr0ub4dor") || !strings.Contains(stdout, "+  pw   = (redacted)") {
		t.Errorf("got:\n%s%s\nwant: pw masked", stdout, stderr)
	}

	obj := t.TempDir()
	must(t, os.WriteFile(filepath.Join(obj, "agent.acl"), []byte("tool \"j\" {\n  kind       = \"mcp\"\n  auth_token = secret(runtime(\"TOK4\", locals.creds))\n}\nlocals {\n  creds = <<EOT\nline one OBJTOKEN12345\n    line two\nEOT\n}\n"), 0o644))
	_, stdout, stderr = run(t, "", "-chdir="+obj, "fmt", "-diff", "-write=false")
	if strings.Contains(stdout+stderr, "OBJTOKEN") {
		t.Errorf("got:\n%s%s\nwant: the heredoc masked", stdout, stderr)
	}

	inside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(inside, "agent.acl"), []byte("tool \"j\" {\n  kind = \"mcp\"\n  auth_token = secret(runtime(\"TOK4\", locals.creds.token))\n}\nlocals {\n  creds = {\n        token = \"OBJTOKEN12345\"\n  }\n}\n"), 0o644))
	code, stdout, stderr := run(t, "", "-chdir="+inside, "fmt", "-diff", "-check")
	if code != ExitUnformatted || strings.Contains(stdout+stderr, "OBJTOKEN") || !strings.Contains(stdout, "+++ new/agent.acl") {
		t.Errorf("got: exit %d\n%s%s\nwant: the change shown or said, the token hidden", code, stdout, stderr)
	}
}

// TestPlanOutNamedPipe: plan -out naming a named pipe neither waits for a
// writer while it checks that the file is not something else (a manifest)
// nor writes into the pipe: the saved plan replaces it, as any other
// file -out names that is no regular file with content.
func TestPlanOutNamedPipe(t *testing.T) {
	dir := copyTree(t, quickstart)
	pipe := filepath.Join(dir, "p.plan")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		code, _, _ := run(t, "", "-chdir="+dir, "plan", "-no-color", "-out=p.plan")
		done <- code
	}()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("plan -out=<named pipe>: exit %d, want 0", code)
		}
		if info, err := os.Lstat(pipe); err != nil || !info.Mode().IsRegular() {
			t.Errorf("p.plan after the plan: %v %v, want the saved plan, a regular file", info, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("plan -out=<named pipe> blocked")
	}
}
