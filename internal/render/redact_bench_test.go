package render

import (
	"fmt"
	"testing"
)

// BenchmarkScrub scrubs 1,000 messages with the redaction of 10,000
// credential values, as the audit of 10,000 tools with credentials does:
// the cost must grow with the text, not with values × messages.
func BenchmarkScrub(b *testing.B) {
	var values []string
	for i := range 10_000 {
		if i%4 == 0 {
			values = append(values, fmt.Sprintf("pass%cword%c", 'a'+i%26, 'a'+i/26%26))
		} else {
			values = append(values, fmt.Sprintf("SEKRET-%05d-Xk9", i))
		}
	}
	r := NewRedaction(nil, values)
	var msgs []string
	for i := range 1_000 {
		msgs = append(msgs, fmt.Sprintf("The config key %q of tool \"t%05d\" is written in the manifest as a literal: token SEKRET-%05d-Xk9 and passbwordc, everyone who can read the workspace has the credential.", "API_TOKEN", i, i*10+1))
	}
	b.ResetTimer()
	for range b.N {
		for _, m := range msgs {
			_ = r.Scrub(m)
		}
	}
}
