// Package memtune sets the garbage collector for a short-lived command.
//
// agentform allocates most of what it ever holds up front (the manifest,
// bundles, the matrix) and exits. Collecting at 4× the live heap instead
// of Go's 2× spends a quarter less time in the collector on such runs, and
// a soft memory limit keeps the heap of a large plan small. But a soft
// limit below what a run needs to keep (esbuild holds every parsed file
// of a build until it ends: hundreds of MB for tools with npm
// dependencies) makes the collector run almost continuously, up to half
// the CPU. So the settings hold while the heap is small: when a
// collection leaves more than half the limit live, Go's defaults (2×, no
// limit) take over, and when one leaves less than a quarter live (the
// build is over), the small-heap settings come back.
package memtune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Small-heap settings.
const (
	// GCPercent is GOGC while the heap is small.
	GCPercent = 400
	// MemoryLimit is the soft memory limit while the heap is small.
	MemoryLimit = 256 << 20
)

// Start applies GCPercent and MemoryLimit while the heap is small and Go's
// defaults while it is not. GOGC or GOMEMLIMIT in the environment leave
// the collector as the environment set it.
func Start() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	start(GCPercent, MemoryLimit)
}

// large is whether Go's defaults are in force.
var large atomic.Bool

func start(percent int, limit int64) {
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
	watch(percent, limit)
}

// watch checks the live heap after every collection, through a cleanup
// attached to an object that only the collector frees, and switches
// between the settings.
func watch(percent int, limit int64) {
	type sentinel struct{ _ *sentinel } // holds a pointer: never tiny-allocated
	runtime.AddCleanup(&sentinel{}, func(struct{}) {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			switch live := sample[0].Value.Uint64(); {
			case !large.Load() && live > uint64(limit/2):
				debug.SetMemoryLimit(math.MaxInt64)
				debug.SetGCPercent(100)
				large.Store(true)
			case large.Load() && live < uint64(limit/4):
				debug.SetGCPercent(percent)
				debug.SetMemoryLimit(limit)
				large.Store(false)
			}
		}
		watch(percent, limit)
	}, struct{}{})
}
