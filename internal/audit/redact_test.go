package audit

import (
	"testing"
)

// TestJSONSecretRanges: in JSON syntax, a string that calls secret() is
// covered whole, and so is the rest of a file the JSON reader cannot
// follow when that rest calls secret().
func TestJSONSecretRanges(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"strings", `{"a": "${secret(runtime(\"A\", \"x\"))}", "b": "${runtime(\"B\", \"y\")}"}`,
			[]string{`"${secret(runtime(\"A\", \"x\"))}"`}},
		{"unreadable", `{"a": 1 "b": "${secret(runtime(\"B\", \"y\"))}"}`,
			[]string{` "b": "${secret(runtime(\"B\", \"y\"))}"}`}},
		{"none", `{"a": "${runtime(\"A\", \"x\")}"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range jsonSecretRanges("x.acl.json", []byte(tc.src)) {
				got = append(got, tc.src[r.Start.Byte:r.End.Byte])
			}
			if len(got) != len(tc.want) || len(got) > 0 && got[0] != tc.want[0] {
				t.Errorf("covered\ngot:  %q\nwant: %q", got, tc.want)
			}
		})
	}
}
