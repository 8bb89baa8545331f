package resolve

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/mcpwire"
)

// FuzzA2ACard feeds arbitrary bytes, as an agent could serve them, through
// everything resolution does with a card body: decoding, the shape check,
// scrubbing runtime values and the canonical JSON the lockfile records.
// Nothing may panic; the scrubbed card quotes no runtime value and is the
// same bytes however often it is made (its digest is pinned); and the
// canonical form is a fixed point: decoding it and encoding it again gives
// the same bytes, or the recorded card would not match its own digest on
// the next plan.
func FuzzA2ACard(f *testing.F) {
	f.Add([]byte(a2aTestCard))
	f.Add([]byte(`{"name":"A","skills":[{"id":"x","name":"X","tags":["t"]}],"url":"http://agent.internal:8443/a2a"}`))
	f.Add([]byte(`{"name":"\u00e9\ud800","version":1e400,"skills":null}`))
	f.Add([]byte(`[1, 2.50, -0, 1E+2, "s"]`))
	f.Add([]byte(`{"name":"A"} trailing`))
	// Two keys that scrub to one.
	f.Add([]byte(`{"name":"A","s3cr3t-t0ken":1,"${TOKEN}":2,"x":{"agent.internal:8443":"a","${HOST}":"b"}}`))
	f.Add([]byte(`{"name":"Bearer s3cr3t-t0ken at https://agent.internal:8443/a2a"}`))
	secrets := []a2aSecret{
		{value: "https://agent.internal:8443", env: "URL"},
		{value: "agent.internal:8443", env: "HOST"},
		{value: "s3cr3t-t0ken", env: "TOKEN", secret: true},
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tree, err := a2aDecodeJSON(body)
		if err != nil {
			return
		}
		_, _ = a2aParseCard(tree)
		_ = jsonKind(tree)
		scrubbed := a2aScrub(tree, secrets)
		_, _ = a2aParseCard(scrubbed)
		canon, err := mcpwire.CanonicalJSON(scrubbed)
		if err != nil {
			return
		}
		for _, sec := range secrets {
			if bytes.Contains(canon, []byte(sec.value)) {
				t.Fatalf("the scrubbed card quotes %s:\n%s", sec.env, canon)
			}
		}
		for range 3 {
			if again, err := mcpwire.CanonicalJSON(a2aScrub(tree, secrets)); err != nil || !bytes.Equal(again, canon) {
				t.Fatalf("scrubbing the same card twice gave different bytes (%v):\n%s\n%s", err, canon, again)
			}
		}
		back, err := a2aDecodeJSON(canon)
		if err != nil {
			t.Fatalf("the canonical form does not decode: %v\n%s", err, canon)
		}
		again, err := mcpwire.CanonicalJSON(back)
		if err != nil {
			t.Fatalf("the canonical form does not encode again: %v\n%s", err, canon)
		}
		if !bytes.Equal(canon, again) {
			t.Fatalf("the canonical form is not a fixed point:\n%s\n%s", canon, again)
		}
	})
}

// FuzzSkillFrontMatter feeds arbitrary SKILL.md text through the front
// matter reader: nothing may panic, and what it reads is what the caller
// relies on: the description trimmed, the allowed tools each named once,
// none empty or padded.
func FuzzSkillFrontMatter(f *testing.F) {
	matches, _ := filepath.Glob(filepath.Join("testdata", "skills", "*", "SKILL.md"))
	for _, m := range matches {
		if b, err := os.ReadFile(m); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("---\nname: s\ndescription: d\nallowed-tools: Bash(git add:*), Read\n---\nbody\n"))
	f.Add([]byte("\ufeff\n---yaml\ndescription: [1, 2]\n---\n"))
	f.Add([]byte("---\n&a [*a]\n---\n"))
	f.Add([]byte("---\ndescription: d\nallowed-tools:\n  - Read\n  - {x: 1}\n---\n"))
	f.Add([]byte("---\ndescription: \"  padded  \"\n---\n"))
	f.Add([]byte("---\ndescription: |\n  first\n  second\n\n---\n"))
	f.Fuzz(func(t *testing.T, md []byte) {
		fm, problem := parseSkillFrontMatter(md)
		if problem != "" {
			return
		}
		if fm.description != strings.TrimSpace(fm.description) {
			t.Fatalf("description not trimmed: %q", fm.description)
		}
		seen := map[string]bool{}
		for _, tool := range fm.allowedTools {
			if tool == "" || tool != strings.TrimSpace(tool) || seen[tool] {
				t.Fatalf("allowed tools %q: an entry empty, padded or repeated", fm.allowedTools)
			}
			seen[tool] = true
		}
	})
}

// FuzzMCPServedTool feeds arbitrary bytes, as a server could send one tool
// of its tools/list answer, through what resolution and serve make of it:
// the definition agentform pins, its canonical JSON and its digest.
// Nothing may panic, and the canonical form is a fixed point, or serve
// would find a locked tool changed that the server did not change.
func FuzzMCPServedTool(f *testing.F) {
	f.Add([]byte(`{"name":"t1","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"number","minimum":1.50}}}}`))
	f.Add([]byte(`{"name":"e\u0301","annotations":{"readOnlyHint":true},"title":"T","_meta":{"x":1e999}}`))
	f.Add([]byte(`{"name":"","inputSchema":[]}`))
	f.Add([]byte(`["not", "an", "object"]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		st, err := mcpParseServedTool(raw)
		if err != nil {
			return
		}
		name, digest, err := MCPToolDigest(raw)
		if err != nil || name != st.name || digest != SHA256(st.canon) {
			t.Fatalf("MCPToolDigest: %q %q %v, want %q and the digest of %s", name, digest, err, st.name, st.canon)
		}
		back, err := mcpwire.DecodeJSON(st.canon)
		if err != nil {
			t.Fatalf("the canonical form does not decode: %v\n%s", err, st.canon)
		}
		again, err := mcpwire.CanonicalJSON(back)
		if err != nil || !bytes.Equal(again, st.canon) {
			t.Fatalf("the canonical form is not a fixed point (%v):\n%s\n%s", err, st.canon, again)
		}
	})
}
