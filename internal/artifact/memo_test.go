package artifact

import (
	"fmt"
	"strings"
	"testing"
)

// TestCanonicalMemo checks that remembered canonical forms are the same as
// computed ones, that callers cannot change what is remembered, and that
// the memo stays bounded.
func TestCanonicalMemo(t *testing.T) {
	in := JSON(`{ "b": 1, "a": [2, 1.0, {"d": null, "c": "<x>"}] }`)
	const want = `{"a":[2,1.0,{"c":"<x>","d":null}],"b":1}`
	for i := range 3 {
		got, err := in.MarshalJSON()
		if err != nil || string(got) != want {
			t.Fatalf("call %d: got %s, %v; want %s", i, got, err, want)
		}
		got[0] = 'X' // must not reach the memo
	}
	pad := strings.Repeat("x", 60<<10)
	for i := range canonicalMemoTotal/(120<<10) + 10 {
		if _, err := JSON(fmt.Sprintf(`{"n": %d, "pad": %q}`, i, pad)).MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	}
	canonicalMemo.mu.Lock()
	n := canonicalMemo.bytes
	canonicalMemo.mu.Unlock()
	if n > canonicalMemoTotal {
		t.Errorf("memo holds %d bytes, more than %d", n, canonicalMemoTotal)
	}
	if _, err := JSON(`{"a": }`).MarshalJSON(); err == nil {
		t.Error("invalid JSON marshalled")
	}
}
