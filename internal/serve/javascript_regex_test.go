package serve

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestJavaScriptCatastrophicRegex: a backtracking regular expression
// cannot be interrupted like other code; the engine's match timeout stops
// it, so the call fails instead of pinning a core for ever.
func TestJavaScriptCatastrophicRegex(t *testing.T) {
	dir := jsWorkspace(t, map[string]string{
		"redos": jsTool("redos", "", `    return { output: String(/^(?=x*)(a+)+$/.test(args.s)) };`),
	}, "")
	f := newJSFixture(t, dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err, _ := f.call(t, ctx, "redos", `{"s": "`+strings.Repeat("a", 38)+`b"}`)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the catastrophic match returned without an error")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not return a minute after its deadline")
	}
}
