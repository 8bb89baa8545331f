package secretparts

import "testing"

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
	}
	s := &Scrubber{}
	for _, r := range []struct {
		env    string
		secret bool
	}{{"DSN", false}, {"HOOK", true}, {"PLAIN", false}, {"HDR", true}, {"SHORT", true}, {"FLAG", false}, {"REGION", false}, {"SEKRIT", true}, {"PEM", true}} {
		s.Add(env[r.env], r.env, r.secret)
	}
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
		{"auth=Token%20tok%22en%2f5e6f7a8b", "auth=(value of HDR)"},
		{"<p>Token tok&#34;en/5e6f7a8b</p>", "<p>(value of HDR)</p>"},
		{"<p>Token tok&quot;en/5e6f7a8b</p>", "<p>(value of HDR)</p>"},
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
		if got := s.Text(tc.in); got != tc.want {
			t.Errorf("text(%q)\ngot:  %s\nwant: %s", tc.in, got, tc.want)
		}
	}
	// Values added later (an executor's) are scrubbed too.
	s.Add("late-value-77", "LATE", false)
	if got, want := s.Text("x late-value-77"), "x (value of LATE)"; got != want {
		t.Errorf("after add\ngot:  %s\nwant: %s", got, want)
	}
}

// TestScrubberJSON: in a JSON value (a failed call's output), strings,
// keys and numbers that are runtime values are scrubbed, and keys that
// scrub to the same text stay apart.
func TestScrubberJSON(t *testing.T) {
	env := map[string]string{"PIN": "48151623", "TOKEN": "tok-secret-99"}
	s := &Scrubber{}
	s.Add(env["PIN"], "PIN", true)
	s.Add(env["TOKEN"], "TOKEN", true)
	for _, tc := range []struct{ in, want string }{
		{`{"pin":48151623,"n":7}`, `{"n":7,"pin":"(value of PIN)"}`},
		// A number that only holds the PIN's digits is another number.
		{`{"n":1481516230}`, `{"n":1481516230}`},
		{`["tok-secret-99",1.5]`, `["(value of TOKEN)",1.5]`},
		{`{"48151623":1,"(value of PIN)":2}`, `{"(value of PIN)":2,"(value of PIN) (2)":1}`},
	} {
		if got := string(s.JSON([]byte(tc.in))); got != tc.want {
			t.Errorf("json(%s)\ngot:  %s\nwant: %s", tc.in, got, tc.want)
		}
	}
}

// TestScrubberNormalForms: a value is found however its accents are
// composed, also in a text mixing composed and decomposed forms, which
// neither of Forms' two normal forms matches; a text with nothing to hide
// is returned as it was, not normalised.
func TestScrubberNormalForms(t *testing.T) {
	s := &Scrubber{}
	s.Add("p\u00e4ss-\u00e9t\u00e9-42", "PASS", true) // päss-été-42, composed
	mixed := "bad p\u00e4ss-e\u0301t\u00e9-42"        // one accent decomposed
	if got, want := s.Text(mixed), "bad (value of PASS)"; got != want {
		t.Errorf("Text(mixed) = %q, want %q", got, want)
	}
	decomposed := "caf" + "e\u0301 is open"
	if got := s.Text(decomposed); got != decomposed {
		t.Errorf("Text changed a text with nothing to hide: %q", got)
	}
	var none *Scrubber
	if none.Text("x") != "x" || !none.Empty() {
		t.Error("a nil Scrubber hides something")
	}
	if _, ok := none.Whole("x"); ok {
		t.Error("a nil Scrubber's Whole found something")
	}
}

// TestScrubberOrder: values added in any order hide the same: one that
// contains another is replaced whole, and equal lengths do not depend on
// the order of Add.
func TestScrubberOrder(t *testing.T) {
	text := "token abcd-1234-efgh and abcd-1234, near wxyz 5678 qrst"
	values := map[string]string{"A": "abcd-1234", "B": "abcd-1234-efgh", "C": "wxyz 5678", "D": "5678 qrst"}
	for _, order := range [][]string{{"A", "B", "C", "D"}, {"D", "C", "B", "A"}, {"B", "D", "A", "C"}} {
		s := &Scrubber{}
		for _, env := range order {
			// C and D are plain values, which overlap in the text: the
			// one first in byte order is hidden, whatever the order of
			// Add.
			s.Add(values[env], env, env < "C")
		}
		if got, want := s.Text(text), "token (value of B) and (value of A), near wxyz (value of D)"; got != want {
			t.Errorf("order %v: Text = %q, want %q", order, got, want)
		}
	}
}
