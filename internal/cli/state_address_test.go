package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentform/agentform/internal/state"
)

// TestStateAddresses: state show and rm check the address's form before
// looking it up, and everything they and list print shows control
// characters, bidirectional overrides and invalid UTF-8 escaped.
func TestStateAddresses(t *testing.T) {
	dir := t.TempDir()
	db, err := state.Open(dir, state.Options{Operation: "apply"})
	must(t, err)
	odd := "x\x1b]0;pwned\x07\u202e"
	if _, err := db.Commit(state.Commit{Resources: []state.Resource{
		{Address: "tool." + odd, Type: "tool", Name: odd, Kind: "bash", Fingerprint: "f"},
		{Address: "tool.plain", Type: "tool", Name: "plain", Kind: "bash", Fingerprint: "f"},
	}}); err != nil {
		t.Fatal(err)
	}
	must(t, db.Close())
	// Invalid UTF-8 prints as U+FFFD, as invoke and calls print it.
	raw := func(s string) bool { return strings.ContainsAny(s, "\x1b\x07\u202e") || !utf8.ValidString(s) }

	for _, sub := range []string{"show", "rm"} {
		for _, addr := range []string{"", "nonsense", "tool.", ".x", "module.x", "\x1b[2J", "\xff.x"} {
			code, stdout, stderr := run(t, "", "-chdir="+dir, "state", sub, addr)
			if code != ExitError || !strings.Contains(stderr, "is not a state address: an address is agent.NAME, tool.NAME or skill.NAME") || raw(stderr) || stdout != "" {
				t.Errorf("state %s %q got: exit %d\n%s%q\nwant: exit 1, the address's form, escaped", sub, addr, code, stdout, stderr)
			}
		}
		code, _, stderr := run(t, "", "-chdir="+dir, "state", sub, "tool.y\u202e\xff")
		if code != ExitError || !strings.Contains(stderr, "tool.y\\u202e\ufffd is not in state") || raw(stderr) {
			t.Errorf("state %s of an address not in state got: exit %d\n%q\nwant: it escaped", sub, code, stderr)
		}
	}
	code, stdout, _ := run(t, "", "-chdir="+dir, "state", "list")
	if code != ExitOK || raw(stdout) || !strings.Contains(stdout, `tool.x\x1b]0;pwned\a\u202e`) {
		t.Errorf("state list got: exit %d\n%q\nwant: the odd address escaped", code, stdout)
	}
	code, stdout, _ = run(t, "", "-chdir="+dir, "state", "show", "tool."+odd)
	if code != ExitOK || raw(stdout) {
		t.Errorf("state show of the odd address got: exit %d\n%q\nwant: it escaped", code, stdout)
	}
	code, stdout, _ = run(t, "", "-chdir="+dir, "state", "rm", "tool."+odd)
	if code != ExitOK || raw(stdout) || !strings.Contains(stdout, `Removed tool.x\x1b]0;pwned\a\u202e from state`) {
		t.Errorf("state rm of the odd address got: exit %d\n%q\nwant: it removed, escaped", code, stdout)
	}
}

// TestStateSubcommandFlags: a subcommand refuses the options it does not
// take (-json is show's), rather than ignoring them.
func TestStateSubcommandFlags(t *testing.T) {
	dir := stateWithToolA(t)
	for _, args := range [][]string{{"list", "-json"}, {"rm", "-json", "tool.a"}, {"rm", "tool.a", "-json"}} {
		code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir, "state"}, args...)...)
		if code != ExitError || !strings.Contains(stderr, "flag provided but not defined: -json") || stdout != "" {
			t.Errorf("state %v got: exit %d\n%s%s\nwant: -json refused", args, code, stdout, stderr)
		}
	}
	if code, stdout, stderr := run(t, "", "-chdir="+dir, "state", "show", "tool.a", "-json"); code != ExitOK || !strings.Contains(stdout, `"address": "tool.a"`) {
		t.Errorf("state show -json got: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := run(t, "", "-chdir="+dir, "state", "list"); code != ExitOK || stdout != "tool.a\n" {
		t.Errorf("state list after the refused rm got: exit %d\n%s\nwant: tool.a still there", code, stdout)
	}
}

// TestStateOptionsBeforeSubcommand: options may come before the
// subcommand as well as after it (state -chdir=DIR list), as every
// command takes them among its options; an option's value there is not
// taken for the subcommand.
func TestStateOptionsBeforeSubcommand(t *testing.T) {
	dir := stateWithToolA(t)
	for _, args := range [][]string{{"state", "-chdir=" + dir, "list"}, {"state", "-lock-timeout", "1s", "-chdir=" + dir, "list"}, {"-chdir=" + dir, "state", "-no-color", "list"}} {
		if code, stdout, stderr := run(t, "", args...); code != ExitOK || stdout != "tool.a\n" {
			t.Errorf("%v got: exit %d\n%s%s\nwant: tool.a", args, code, stdout, stderr)
		}
	}
	if code, stdout, stderr := run(t, "", "state", "-json", "-chdir="+dir, "show", "tool.a"); code != ExitOK || !strings.Contains(stdout, `"address": "tool.a"`) {
		t.Errorf("state -json show got: exit %d\n%s%s", code, stdout, stderr)
	}
	for msg, args := range map[string][]string{
		"state needs a subcommand: list, show or rm": {"state", "-chdir=" + dir},
		`unknown state subcommand "lst"`:             {"state", "-chdir=" + dir, "lst"},
	} {
		if code, _, stderr := run(t, "", args...); code != ExitError || !strings.Contains(stderr, msg) {
			t.Errorf("%v got: exit %d\n%s\nwant: %q", args, code, stderr, msg)
		}
	}
}

// stateWithToolA returns a workspace directory whose state records one
// resource, tool.a.
func stateWithToolA(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := state.Open(dir, state.Options{Operation: "apply"})
	must(t, err)
	if _, err := db.Commit(state.Commit{Resources: []state.Resource{{Address: "tool.a", Type: "tool", Name: "a", Kind: "bash", Fingerprint: "f"}}}); err != nil {
		t.Fatal(err)
	}
	must(t, db.Close())
	return dir
}
