package planner

import (
	"strings"
	"testing"
)

// TestHideURLCredentials: a url attribute shows its credentials REDACTED
// with a digest of the whole url (a rotated one is a change), written as
// a literal or as a runtime() default; a url without any, a secret()
// reference and a hidden one stay as they are.
func TestHideURLCredentials(t *testing.T) {
	const u = "http://bob:zzpass1@127.0.0.1:1/a?token=zztok9&page=2"
	got := hideURLCredentials(u)
	if !strings.HasPrefix(got, "http://bob:REDACTED@127.0.0.1:1/a?token=REDACTED&page=2 (sensitive sha256:") || strings.Contains(got, "zz") {
		t.Errorf("literal\ngot:  %s\nwant: REDACTED parts and a digest", got)
	}
	if again := hideURLCredentials(got); again != got {
		t.Errorf("hidden twice\ngot:  %s\nwant: %s", again, got)
	}
	if rotated := hideURLCredentials(strings.Replace(u, "zzpass1", "zzpass2", 1)); rotated == got {
		t.Errorf("a rotated password gives the same attribute %s", got)
	}
	ref := `runtime("PURL", "` + u + `")`
	hidden := hideURLCredentials(ref)
	if !strings.HasPrefix(hidden, `runtime("PURL", "http://bob:REDACTED@127.0.0.1:1/a?token=REDACTED\u0026page=2 (sensitive sha256:`) || strings.Contains(hidden, "zz") {
		t.Errorf("runtime default\ngot:  %s\nwant: the default hidden", hidden)
	}
	if again := hideURLCredentials(hidden); again != hidden {
		t.Errorf("runtime default hidden twice\ngot:  %s\nwant: %s", again, hidden)
	}
	for _, same := range []string{"https://example.com/mcp?page=2", `runtime("PURL")`, `runtime("PURL", "https://example.com/")`, `secret(runtime("PURL", (default withheld)))`, ""} {
		if got := hideURLCredentials(same); got != same {
			t.Errorf("hideURLCredentials(%q) = %q, want it unchanged", same, got)
		}
	}
	// State an earlier agentform wrote reads as a plan computes it now.
	stored := StoredAttributes("tool", map[string]string{"url": u, "kind": "a2a"})
	if stored["url"] != got || stored["kind"] != "a2a" {
		t.Errorf("StoredAttributes\ngot:  %v\nwant: url %s", stored, got)
	}
}
