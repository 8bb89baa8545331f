package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/state"
)

// TestLockInfoTimes: the lock info's Created line is RFC 3339 in UTC, as
// the "since" of the message above it, whatever the holder's zone; and a
// command that waited for the lock says how long.
func TestLockInfoTimes(t *testing.T) {
	created := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	var stderr bytes.Buffer
	m := &Meta{Streams: Streams{Stderr: &stderr}}
	m.showStateError(&state.LockError{Path: "state.db", Err: errors.New("timeout"), Waited: 3 * time.Second,
		Info: &state.LockInfo{ID: "id", Operation: "apply", Who: "u@h", PID: 7, Version: "0.1.0", Created: created}})
	for _, want := range []string{"since 2026-03-04T04:06:07Z; waited 3s for it\n", "  Created:   2026-03-04T04:06:07Z\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("got:\n%s\nwant: a line with %q", stderr.String(), want)
		}
	}
}
