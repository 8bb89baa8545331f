package cli

import (
	"encoding/json"
	"testing"
)

// invoke prints a tool's output as the tool wrote its numbers and text:
// an integer beyond 2^53 (an id) is not rounded through a float64, and
// <, > and & are not shown as \u003c, \u003e and \u0026.
func TestIndentJSONKeepsNumbersAndText(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"id":9007199254740993,"n":1.50}`, "{\n  \"id\": 9007199254740993,\n  \"n\": 1.50\n}"},
		{`{"note":"\u003cb\u003e \u0026 é"}`, "{\n  \"note\": \"<b> & é\"\n}"},
		{`"plain <text>"`, "plain <text>"},
		{`[1e400]`, "[\n  1e400\n]"},
		{`not json`, "not json"},
	} {
		if got := indentJSON(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("indentJSON(%s)\ngot:  %q\nwant: %q", tc.raw, got, tc.want)
		}
	}
}
