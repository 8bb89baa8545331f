package artifact

import (
	"fmt"
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
	for i := range canonicalMemoEntries + 10 {
		if _, err := JSON(fmt.Sprintf(`{"n": %d}`, i)).MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	}
	canonicalMemo.mu.Lock()
	n := len(canonicalMemo.m)
	canonicalMemo.mu.Unlock()
	if n > canonicalMemoEntries {
		t.Errorf("memo holds %d values, more than %d", n, canonicalMemoEntries)
	}
	if _, err := JSON(`{"a": }`).MarshalJSON(); err == nil {
		t.Error("invalid JSON marshalled")
	}
}
