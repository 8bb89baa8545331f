package mcpwire

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/mcpwire/mcpwiretest"
)

// TestLimit: Limit hands on an answer of Max bytes as it is, and of a
// longer one Max bytes and one more, then fails with ErrTooLarge, telling
// Over once, however small the reads.
func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size     int
		wantRead int
		wantErr  error
	}{
		{"exactly the bound", 10, 10, nil},
		{"one byte more", 11, 11, ErrTooLarge},
		{"far more", 1000, 11, ErrTooLarge},
	} {
		for _, chunk := range []int{1, 3, 4096} {
			overs := 0
			l := &Limit{R: strings.NewReader(strings.Repeat("x", tc.size)), Max: 10, Over: func() { overs++ }}
			got, err := io.ReadAll(&mcpwiretest.Chunked{R: l, N: chunk})
			if len(got) != tc.wantRead || !errors.Is(err, tc.wantErr) {
				t.Errorf("%s, reads of %d\ngot:  %d bytes, %v\nwant: %d bytes, %v", tc.name, chunk, len(got), err, tc.wantRead, tc.wantErr)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.wantErr != nil]; overs != want {
				t.Errorf("%s, reads of %d: Over told\ngot:  %d times\nwant: %d", tc.name, chunk, overs, want)
			}
			if _, err := l.Read(make([]byte, 8)); tc.wantErr != nil && !errors.Is(err, ErrTooLarge) {
				t.Errorf("%s: a read after the bound\ngot:  %v\nwant: ErrTooLarge", tc.name, err)
			}
		}
	}
	if got, want := ErrTooLarge.Error(), "the MCP server's answer was larger than 16 MiB"; got != want {
		t.Errorf("ErrTooLarge\ngot:  %s\nwant: %s", got, want)
	}
}
