package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
)

// TestSecretsNeverWritten resolves tools that need runtime secrets to be
// reached — an A2A agent behind a secret URL, bearer token and header, an
// MCP server whose subprocess environment and arguments carry secrets —
// then runs plan, plan -json and lock, and searches every output and every
// file under the workspace for the secret values.
func TestSecretsNeverWritten(t *testing.T) {
	const (
		token  = "tok-SECRET-4f1c9a"
		header = "hdr-SECRET-77ab02"
		envVal = "env-SECRET-d3e5f7"
		argVal = "arg-SECRET-90c1e2"
	)
	var sawAuth, sawHeader bool
	card := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth = sawAuth || r.Header.Get("Authorization") == "Bearer "+token
		sawHeader = sawHeader || r.Header.Get("X-Key") == header
		if r.URL.Path != "/.well-known/agent-card.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name": "Researcher", "version": "1.0.0", "description": "Finds things.", "url": %q, "skills": []}`, "http://"+r.Host+"/")
	}))
	t.Cleanup(func() { card.CloseClientConnections(); card.Close() })

	bin := filepath.Join(t.TempDir(), "mcpserver")
	build := exec.Command("go", "build", "-o", bin, "../resolve/testdata/mcpserver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", err, out)
	}

	dir := t.TempDir()
	manifest := fmt.Sprintf(`
agent "assistant" {
  capabilities = ["a2a", "search"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}

tool "research" {
  kind         = "a2a"
  url          = secret(runtime("RESEARCH_URL"))
  auth_token   = secret(runtime("RESEARCH_TOKEN"))
  headers      = { X-Key = secret(runtime("RESEARCH_KEY")) }
  capabilities = ["a2a::research"]
}

tool "search" {
  kind         = "mcp"
  transport    = "stdio"
  command      = %q
  args         = ["-tools=2", "-report-env=SEARCH_KEY", secret(runtime("SEARCH_ARG"))]
  config       = { SEARCH_KEY = secret(runtime("SEARCH_ENV")) }
  capabilities = ["search"]
}
`, bin)
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RESEARCH_URL", card.URL)
	t.Setenv("RESEARCH_TOKEN", token)
	t.Setenv("RESEARCH_KEY", header)
	t.Setenv("SEARCH_ENV", envVal)
	t.Setenv("SEARCH_ARG", argVal)
	secrets := []string{token, header, envVal, argVal, strings.TrimPrefix(card.URL, "http://")}

	var outputs []string
	for _, args := range [][]string{{"plan", "-no-color"}, {"plan", "-json"}, {"lock"}, {"plan", "-json", "-lockfile=readonly"}} {
		code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
		if code != ExitOK {
			t.Fatalf("%v: got exit %d\n%s%s\nwant: 0", args, code, stdout, stderr)
		}
		outputs = append(outputs, stdout, stderr)
	}
	if !sawAuth || !sawHeader {
		t.Fatalf("got: token seen %v, header seen %v\nwant: the A2A server reached with both", sawAuth, sawHeader)
	}

	// The MCP server saw its secret environment (it serves has_SEARCH_KEY).
	var doc struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(outputs[2]), &doc); err != nil {
		t.Fatal(err)
	}
	names := fmt.Sprint(doc.Tools)
	if !strings.Contains(names, "search__has_SEARCH_KEY") {
		t.Errorf("got tools: %s\nwant: search__has_SEARCH_KEY (the server received its environment)", names)
	}

	var files []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	lock, err := os.ReadFile(filepath.Join(dir, "agentform.lock.hcl"))
	if err != nil || !strings.Contains(string(lock), `card_name    = "Researcher"`) || !strings.Contains(string(lock), `"has_SEARCH_KEY"`) {
		t.Fatalf("got lockfile %q (%v)\nwant: the card and the served tools pinned", lock, err)
	}
	for _, s := range secrets {
		for i, out := range outputs {
			if strings.Contains(out, s) {
				t.Errorf("output %d contains the secret %q:\n%s", i, s, out)
			}
		}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if strings.Contains(string(b), s) && filepath.Base(f) != "agent.acl" {
				t.Errorf("%s contains the secret %q", f, s)
			}
		}
	}
}

// TestSecretInServedToolNames: warnings that name served tools (one whose
// name the lockfile cannot hold, the list of served tools for an expose
// entry that matches none) never print a runtime value a name quotes.
func TestSecretInServedToolNames(t *testing.T) {
	bin := testMCPServer(t)
	dir := t.TempDir()
	mcpTestWorkspace(t, dir, `"-tools=1", "-add-nfd", secret(runtime("NFD_SECRET"))`, "", fmt.Sprintf(`
tool "n" {
  kind         = "mcp"
  transport    = "stdio"
  command      = %q
  args         = ["-tools=1", "-add", secret(runtime("ADD_SECRET"))]
  expose       = ["tool1", "missing"]
  capabilities = ["search"]
}
`, bin))
	const nfdSecret, addSecret = "nfd-SECRET-7731", "add-SECRET-8842"
	t.Setenv("NFD_SECRET", nfdSecret)
	t.Setenv("ADD_SECRET", addSecret)
	for _, args := range [][]string{{"plan", "-no-color"}, {"plan", "-json"}} {
		code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
		out := stdout + stderr
		if strings.Contains(out, nfdSecret) || strings.Contains(out, addSecret) {
			t.Errorf("%s printed a secret (exit %d):\n%s", strings.Join(args, " "), code, out)
		}
		if !strings.Contains(out, "(value of NFD_SECRET)") || !strings.Contains(out, "(value of ADD_SECRET)") {
			t.Errorf("%s: want both warnings, with the values replaced (exit %d):\n%s", strings.Join(args, " "), code, out)
		}
	}
}

// TestSecretInLockNotShownByDrift: a lock entry that quotes a secret the
// block now gives (pinned before agentform refused such text, or by hand)
// is shown by drift with that text left out, since with the server reached
// the values are the real ones (a 6-byte one counts); lock -upgrade then
// replaces it. Without the server it is refused rather than built from,
// for whole values of 8 bytes or more (placeholders are common in CI).
func TestSecretInLockNotShownByDrift(t *testing.T) {
	for _, tc := range []struct {
		secret string
		// refusedFromLock: apply -refresh=false refuses the entry.
		refusedFromLock bool
	}{{"lock-SECRET-5521", true}, {"hunt3r", false}} {
		t.Run(tc.secret, func(t *testing.T) {
			dir := t.TempDir()
			mcpTestWorkspace(t, dir, `"-tools=2"`, "  expose       = [\"tool1\", \"gone\"]\n  config       = { TOK = secret(runtime(\"LOCK_SECRET\")) }\n", "")
			t.Setenv("LOCK_SECRET", tc.secret)
			if code, _, stderr := run(t, "", "-chdir="+dir, "lock"); code != ExitOK {
				t.Fatalf("lock: exit %d\n%s", code, stderr)
			}
			f, diags := lockfile.Load(dir)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			def := `{"description":"Uses the key ` + tc.secret + `.","name":"gone"}`
			_, digest, err := resolve.MCPToolDigest(json.RawMessage(def))
			must(t, err)
			f.Tools["m"].Served["gone"], f.Tools["m"].Definitions["gone"] = digest, def
			must(t, os.WriteFile(filepath.Join(dir, lockfile.FileName), f.Bytes(), 0o644))

			if tc.refusedFromLock {
				code, stdout, stderr := run(t, "", "-chdir="+dir, "apply", "-refresh=false", "-auto-approve", "-no-color")
				if strings.Contains(stdout+stderr, tc.secret) || code == ExitOK || !strings.Contains(stderr, "Lock entry quotes a secret") {
					t.Errorf("apply -refresh=false: exit %d, want the entry refused, the secret not printed\n%s%s", code, stdout, stderr)
				}
				if _, err := os.Stat(filepath.Join(dir, "dist")); !os.IsNotExist(err) {
					t.Errorf("dist/ was written (%v)", err)
				}
			}
			for _, args := range [][]string{{"plan", "-no-color"}, {"plan", "-json"}} {
				code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
				if strings.Contains(stdout+stderr, tc.secret) {
					t.Errorf("%s printed the secret (exit %d):\n%s%s", strings.Join(args, " "), code, stdout, stderr)
				}
				if code == ExitOK || !strings.Contains(stdout+stderr, "removed since lock") || !strings.Contains(stdout+stderr, "not shown: it quotes the value of LOCK_SECRET") {
					t.Errorf("%s: exit %d, want the removal as drift, its text left out\n%s%s", strings.Join(args, " "), code, stdout, stderr)
				}
			}
			if code, _, stderr := run(t, "", "-chdir="+dir, "lock", "-upgrade"); code != ExitOK {
				t.Fatalf("lock -upgrade: exit %d\n%s", code, stderr)
			}
			if b, err := os.ReadFile(filepath.Join(dir, lockfile.FileName)); err != nil || bytes.Contains(b, []byte(tc.secret)) {
				t.Errorf("after lock -upgrade the lockfile still quotes the secret (%v):\n%s", err, b)
			}
		})
	}
}

// TestSecretInLockNamesAndOddDefinitions: a lock entry whose tool name
// quotes a secret the block gives is refused with the server reached too,
// since names show in drift and lock changes as they are; a definition
// that is no object is shown with a quoted value left out, like any.
func TestSecretInLockNamesAndOddDefinitions(t *testing.T) {
	const secret = "name-SECRET-6630"
	for _, tc := range []struct {
		name, want string
		edit       func(m *lockfile.Tool)
	}{
		{"tool name", "Lock entry quotes a secret", func(m *lockfile.Tool) {
			m.Served["x_"+secret] = "sha256:" + strings.Repeat("1", 64)
		}},
		{"definition key with no digest", "Lock entry quotes a secret", func(m *lockfile.Tool) {
			m.Definitions["x_"+secret] = `{"name":"x"}`
		}},
		{"definition that is a string", "not shown: it quotes the value of LOCK_SECRET", func(m *lockfile.Tool) {
			m.Served["gone"], m.Definitions["gone"] = "sha256:"+strings.Repeat("2", 64), `"Uses the key `+secret+`."`
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mcpTestWorkspace(t, dir, `"-tools=1"`, "  config       = { TOK = secret(runtime(\"LOCK_SECRET\")) }\n", "")
			t.Setenv("LOCK_SECRET", secret)
			if code, _, stderr := run(t, "", "-chdir="+dir, "lock"); code != ExitOK {
				t.Fatalf("lock: exit %d\n%s", code, stderr)
			}
			f, diags := lockfile.Load(dir)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			tc.edit(f.Tools["m"])
			must(t, os.WriteFile(filepath.Join(dir, lockfile.FileName), f.Bytes(), 0o644))
			for _, args := range [][]string{{"plan", "-no-color"}, {"plan", "-json"}, {"plan", "-lockfile=readonly", "-no-color"}, {"audit"}} {
				code, stdout, stderr := run(t, "", append([]string{"-chdir=" + dir}, args...)...)
				if strings.Contains(stdout+stderr, secret) {
					t.Errorf("%s printed the secret (exit %d):\n%s%s", strings.Join(args, " "), code, stdout, stderr)
				}
				if code == ExitOK || !strings.Contains(stdout+stderr, tc.want) {
					t.Errorf("%s: exit %d, want a failure with %q\n%s%s", strings.Join(args, " "), code, tc.want, stdout, stderr)
				}
			}
		})
	}
}
