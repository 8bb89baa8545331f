package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadManifest feeds arbitrary bytes to the loader as native and JSON
// syntax. Loading must never panic, and a manifest without errors must
// have at least one agent.
func FuzzLoadManifest(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*/*/*.acl")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"agent": {"a": {"graph": {"type": "react"}, "model": {"provider": "openai", "name": "x"}}}}`))
	f.Add([]byte(`locals { a = locals.b, b = locals.a }`))
	f.Add([]byte(`agent "a" { capabilities = runtime("X", ["a::b"]) }`))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, name := range []string{"agent.acl", "agent.acl.json"} {
			cfg, diags := LoadSources("", map[string][]byte{name: src})
			if cfg == nil {
				t.Fatal("nil config")
			}
			if !diags.HasErrors() && len(cfg.Agents) == 0 {
				t.Fatalf("no errors and no agents for %q", src)
			}
		}
	})
}

// TestDeepNesting checks that hostile nesting is a located error, not a
// stack overflow.
func TestDeepNesting(t *testing.T) {
	for name, src := range map[string]string{
		"brackets": "locals {\n  x = " + repeat("[", 100000) + "\n}\n",
		"parens":   "locals {\n  x = " + repeat("(", 100000) + "1\n}\n",
		"unary":    "locals {\n  x = " + repeat("!", 100000) + "true\n}\n",
		"template": "locals {\n  x = \"" + repeat("${\"", 50000) + "\n}\n",
		"json":     repeat("[", 100000),
	} {
		t.Run(name, func(t *testing.T) {
			file := "agent.acl"
			if name == "json" {
				file = "agent.acl.json"
			}
			_, diags := LoadSources("", map[string][]byte{file: []byte(src)})
			if !diags.HasErrors() || diags[0].Summary != "Manifest nested too deeply" {
				t.Fatalf("got: %v\nwant: Manifest nested too deeply", diags)
			}
			if diags[0].Subject == nil || diags[0].Subject.Filename != file {
				t.Errorf("got: %v\nwant: a range in %s", diags[0].Subject, file)
			}
		})
	}
	// Nesting that real manifests use stays fine.
	ok := "locals {\n  x = " + repeat("[", 50) + repeat("]", 50) + "\n}\n" + minimalAgent
	if _, diags := LoadSources("", map[string][]byte{"agent.acl": []byte(ok)}); diags.HasErrors() {
		t.Fatalf("got: %v\nwant: no errors", diags)
	}
}

func TestLargeAndBinaryFiles(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, MaxFileSize+1)
	if err := os.WriteFile(filepath.Join(dir, "big.acl"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags := Load(dir)
	if !diags.HasErrors() || diags[0].Summary != "Manifest file too large" {
		t.Fatalf("got: %v\nwant: Manifest file too large", diags)
	}
	garbage := []byte{0, 0xff, 0xfe, '{', '"', 0x80, '\n', '}', 0x01}
	if _, diags := LoadSources("", map[string][]byte{"agent.acl": garbage}); !diags.HasErrors() {
		t.Fatal("binary garbage loaded without errors")
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for i := 0; i < n; i++ {
		b = append(b, s...)
	}
	return string(b)
}

const minimalAgent = `
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
