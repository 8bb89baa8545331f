package memtune

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestStart: small heaps keep the small-heap settings; a live heap past
// half the limit switches to Go's defaults.
func TestStart(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	const limit = 64 << 20
	start(GCPercent, limit)
	for range 3 {
		runtime.GC()
	}
	time.Sleep(50 * time.Millisecond)
	if large.Load() {
		t.Fatal("switched to the defaults with a small heap")
	}
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Errorf("GOGC with a small heap\ngot:  %d\nwant: %d", got, GCPercent)
	}

	live := make([][]byte, 0, 48)
	for range 48 {
		live = append(live, make([]byte, 1<<20)) // 48 MiB live, past half of 64
	}
	waitLarge(true)
	runtime.KeepAlive(live)
	if !large.Load() {
		t.Fatal("still on the small-heap settings with 48 MiB live")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC with a large heap\ngot:  %d\nwant: 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit with a large heap\ngot:  %d\nwant: none", got)
	}

	// The heap shrinks again: the small-heap settings come back.
	live = nil
	waitLarge(false)
	if large.Load() {
		t.Fatal("still on the defaults after the heap shrank")
	}
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Errorf("GOGC after the heap shrank\ngot:  %d\nwant: %d", got, GCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("memory limit after the heap shrank\ngot:  %d\nwant: %d", got, limit)
	}
}

// waitLarge collects garbage until the watcher's large is want, or five
// seconds have passed.
func waitLarge(want bool) {
	for deadline := time.Now().Add(5 * time.Second); large.Load() != want && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
