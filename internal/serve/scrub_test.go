package serve

import (
	"testing"

	"github.com/agentform/agentform/internal/artifact"
)

func TestScrubber(t *testing.T) {
	env := map[string]string{
		"DSN":    "postgres://app:Xk9%40pL2@db.internal:5432/app",
		"HOOK":   "https://hooks.example/services/T0K-PATH-99?sig=SIG-abcdef123&fmt=json",
		"PLAIN":  "https://api.example/v1/search?fmt=json",
		"HDR":    `Token tok"en/5e6f7a8b`,
		"SHORT":  "abc",
		"FLAG":   "true",
		"REGION": "east",
		"SEKRIT": "SEKRIT-77",
		"PEM":    "-----BEGIN KEY-----\nFIRST-LINE-OF-KEY-00\nANOTHER-LINE-OF-KEY-99\n-----END KEY-----",
		"UNUSED": "never-read-1234",
	}
	s := newScrubber(NewEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }), []artifact.RuntimeRef{
		{Env: "DSN"}, {Env: "HOOK", Secret: true}, {Env: "PLAIN"}, {Env: "HDR", Secret: true}, {Env: "SHORT", Secret: true}, {Env: "FLAG"}, {Env: "REGION"}, {Env: "SEKRIT", Secret: true}, {Env: "PEM", Secret: true}, {Env: "MISSING"},
	})
	for _, tc := range []struct{ in, want string }{
		// Whole values first, then what is inside them.
		{"dial " + env["DSN"], "dial (value of DSN)"},
		{"auth failed for Xk9@pL2 at db.internal:5432", "auth failed for (part of DSN) at (part of DSN)"},
		// A secret URL's path and every query value; a plain URL's host
		// only.
		{"POST /services/T0K-PATH-99?sig=SIG-abcdef123&fmt=json", "POST (part of HOOK)?sig=(part of HOOK)&fmt=json"},
		{"GET /v1/search?fmt=xml on api.example", "GET /v1/search?fmt=xml on (part of PLAIN)"},
		// Query values shorter than a token are words of messages: left.
		{"invalid json in jsonschema", "invalid json in jsonschema"},
		// A secret header's token; re-encoded forms of either.
		{"bad token tok\"en/5e6f7a8b", "bad token (part of HDR)"},
		{`{"auth": "Token tok\"en/5e6f7a8b"}`, `{"auth": "(value of HDR)"}`},
		{"auth=Token+tok%22en%2F5e6f7a8b", "auth=(value of HDR)"},
		// A line of a secret of several, on its own (a cut stderr tail).
		{"…ANOTHER-LINE-OF-KEY-99\nend", "…(part of PEM)\nend"},
		// Too short to scrub, or a flag's value.
		{"abc", "abc"},
		{"allow_loopback is not true", "allow_loopback is not true"},
		{"enabled: True", "enabled: True"},
		// A plain value only as a whole word; a secret wherever it is.
		{"northeast of the east coast", "northeast of the (value of REGION) coast"},
		{"tokenSEKRIT-77end", "token(value of SEKRIT)end"},
	} {
		if got := s.text(tc.in); got != tc.want {
			t.Errorf("text(%q)\ngot:  %s\nwant: %s", tc.in, got, tc.want)
		}
	}
	// Values added later (an executor's) are scrubbed too.
	s.add("late-value-77", "LATE", false)
	if got, want := s.text("x late-value-77"), "x (value of LATE)"; got != want {
		t.Errorf("after add\ngot:  %s\nwant: %s", got, want)
	}
}

// TestScrubberJSON: in a JSON value (a failed call's output), strings,
// keys and numbers that are runtime values are scrubbed, and keys that
// scrub to the same text stay apart.
func TestScrubberJSON(t *testing.T) {
	env := map[string]string{"PIN": "48151623", "TOKEN": "tok-secret-99"}
	s := newScrubber(NewEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }), []artifact.RuntimeRef{
		{Env: "PIN", Secret: true}, {Env: "TOKEN", Secret: true},
	})
	for _, tc := range []struct{ in, want string }{
		{`{"pin":48151623,"n":7}`, `{"n":7,"pin":"(value of PIN)"}`},
		// A number that only holds the PIN's digits is another number.
		{`{"n":1481516230}`, `{"n":1481516230}`},
		{`["tok-secret-99",1.5]`, `["(value of TOKEN)",1.5]`},
		{`{"48151623":1,"(value of PIN)":2}`, `{"(value of PIN)":2,"(value of PIN) (2)":1}`},
	} {
		if got := string(s.json([]byte(tc.in))); got != tc.want {
			t.Errorf("json(%s)\ngot:  %s\nwant: %s", tc.in, got, tc.want)
		}
	}
}

// TestScrubberKeepsOwnNames: a runtime URL's host that is also one of
// the agent's own names (a block, a skill) is not hidden where messages
// quote that name; the host with its port, and the whole URL, are.
func TestScrubberKeepsOwnNames(t *testing.T) {
	env := map[string]string{"RESEARCH_AGENT_URL": "http://research:8080"}
	s := newScrubber(NewEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }), []artifact.RuntimeRef{{Env: "RESEARCH_AGENT_URL"}})
	s.keepNames(agentNames(&artifact.Agent{Name: "researcher", Blocks: []artifact.Block{{Name: "research"}}}))
	for _, tc := range []struct{ in, want string }{
		{`the A2A agent of block "research" could not be reached`, `the A2A agent of block "research" could not be reached`},
		{"dial tcp research:8080: refused", "dial tcp (part of RESEARCH_AGENT_URL): refused"},
		{"GET http://research:8080 failed", "GET (value of RESEARCH_AGENT_URL) failed"},
	} {
		if got := s.text(tc.in); got != tc.want {
			t.Errorf("text(%q)\ngot:  %s\nwant: %s", tc.in, got, tc.want)
		}
	}
	// Added later (an executor's), kept too.
	s.add("http://research:9090", "OTHER", false)
	if got := s.text(`skill "research" has no file`); got != `skill "research" has no file` {
		t.Errorf("after add: %s", got)
	}
}
