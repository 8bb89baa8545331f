package resolve

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// cacheClock sets the cache's clock to t0 for the test and returns a
// function that moves it to t0 + d.
func cacheClock(t *testing.T) func(d time.Duration) {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	old := cacheNow
	now := t0
	cacheNow = func() time.Time { return now }
	t.Cleanup(func() { cacheNow = old })
	return func(d time.Duration) { now = t0.Add(d) }
}

const day = 24 * time.Hour

// cacheKeys returns the sorted keys of a kind's entries in ws's cache.
func cacheKeys(t *testing.T, ws, kind string) []string {
	t.Helper()
	entries, err := CacheEntries(ws, kind)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// cacheStamps returns the use times in ws's cache, in days after t0.
func cacheStamps(t *testing.T, ws string) map[string]float64 {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	db, err := bbolt.Open(filepath.Join(ws, CacheFile), 0o644, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]float64{}
	_ = db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(cacheUsedBucket); b != nil {
			return b.ForEach(func(k, v []byte) error {
				at, ok := cacheParseTime(v)
				if !ok {
					t.Errorf("use time of %s: %x is not one", k, v)
				}
				out[string(k)] = at.Sub(t0).Hours() / 24
				return nil
			})
		}
		return nil
	})
	return out
}

// use is one command's use of the cache: Get every key in hits (each must
// hit), Put every key in puts, Flush.
func use(t *testing.T, ws string, hits, puts []string) {
	t.Helper()
	c := NewCache(ws)
	for _, k := range hits {
		var e cacheTestEntry
		if !c.Get("javascript", k, &e) || e.Name != k {
			t.Fatalf("%s: a miss (got %+v)", k, e)
		}
	}
	for _, k := range puts {
		var e cacheTestEntry
		c.Get("javascript", k, &e)
		if err := c.Put("javascript", k, cacheTestEntry{k}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestCachePrune checks that entries not used for cacheMaxAge go, that
// finding an entry keeps it, and that use times are written at most once
// per cacheTouchAfter.
func TestCachePrune(t *testing.T) {
	at := cacheClock(t)
	ws := t.TempDir()
	path := filepath.Join(ws, CacheFile)

	use(t, ws, nil, []string{"a", "b", "c"})
	if got, want := cacheStamps(t, ws), map[string]float64{"javascript/a": 0, "javascript/b": 0, "javascript/c": 0}; !equalStamps(got, want) {
		t.Errorf("after the first Flush: use times %v, want %v", got, want)
	}

	// Found within a day: nothing is written.
	at(12 * time.Hour)
	before, _ := os.Stat(path)
	use(t, ws, []string{"a", "b"}, nil)
	if after, _ := os.Stat(path); !before.ModTime().Equal(after.ModTime()) || !os.SameFile(before, after) {
		t.Error("finding entries used half a day ago rewrote the database")
	}

	// Found ten days later: a's use time moves.
	at(10 * day)
	use(t, ws, []string{"a"}, nil)
	if got, want := cacheStamps(t, ws), map[string]float64{"javascript/a": 10, "javascript/b": 0, "javascript/c": 0}; !equalStamps(got, want) {
		t.Errorf("after finding a: use times %v, want %v", got, want)
	}

	// 30 days after b and c were last used, a plan that uses c and adds d
	// deletes b only.
	at(30 * day)
	use(t, ws, []string{"c"}, []string{"d"})
	if got, want := cacheKeys(t, ws, "javascript"), []string{"a", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("after 30 days: entries %q, want %q", got, want)
	}
	if got, want := cacheStamps(t, ws), map[string]float64{"javascript/a": 10, "javascript/c": 30, "javascript/d": 30}; !equalStamps(got, want) {
		t.Errorf("after 30 days: use times %v, want %v", got, want)
	}

	// A plan that only finds entries prunes too, once a day is over.
	at(40*day + time.Hour)
	use(t, ws, []string{"d"}, nil)
	if got, want := cacheKeys(t, ws, "javascript"), []string{"c", "d"}; !slices.Equal(got, want) {
		t.Errorf("after 40 days: entries %q, want %q", got, want)
	}
}

func equalStamps(got, want map[string]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g < v-0.01 || g > v+0.01 {
			return false
		}
	}
	return true
}

// TestCachePruneUnstamped checks that entries stored before use times
// existed (or under a clock since set back) age from the first prune
// rather than going at once, and that an earlier version's other
// buckets are left alone.
func TestCachePruneUnstamped(t *testing.T) {
	at := cacheClock(t)
	ws := t.TempDir()
	path := filepath.Join(ws, CacheFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, _ := tx.CreateBucketIfNotExists([]byte("javascript"))
		for _, k := range []string{"old", "future"} {
			_ = b.Put([]byte(k), []byte(`{"name":"`+k+`"}`))
		}
		used, _ := tx.CreateBucketIfNotExists(cacheUsedBucket)
		_ = used.Put(cacheUsedKey("javascript", "future"), cacheTime(cacheNow().Add(365*day)))
		_ = used.Put(cacheUsedKey("javascript", "gone"), cacheTime(cacheNow()))
		meta, _ := tx.CreateBucketIfNotExists(cacheMetaBucket)
		return meta.Put(cachePrunedKey, cacheTime(cacheNow().Add(365*day)))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// The last prune "in a year" is a clock set back: prune now.
	at(time.Hour)
	use(t, ws, nil, []string{"new"})
	if got, want := cacheKeys(t, ws, "javascript"), []string{"future", "new", "old"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	hour := 1.0 / 24
	if got, want := cacheStamps(t, ws), map[string]float64{"javascript/future": hour, "javascript/new": hour, "javascript/old": hour}; !equalStamps(got, want) {
		t.Errorf("use times %v, want %v", got, want)
	}
	at(31 * day)
	use(t, ws, []string{"new"}, nil)
	if got, want := cacheKeys(t, ws, "javascript"), []string{"new"}; !slices.Equal(got, want) {
		t.Errorf("31 days on: entries %q, want %q", got, want)
	}
}

// TestCacheCompacts checks that a prune that frees most of a large
// database gives the space back, and keeps what it did not prune.
func TestCacheCompacts(t *testing.T) {
	at := cacheClock(t)
	ws := t.TempDir()
	path := filepath.Join(ws, CacheFile)
	c := NewCache(ws)
	big := strings.Repeat("x", 1<<20)
	for i := range 8 {
		_ = c.Put("javascript", "big"+string(rune('a'+i)), cacheTestEntry{big})
	}
	_ = c.Put("javascript", "keep", cacheTestEntry{"keep"})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	if before.Size() < 8<<20 {
		t.Fatalf("the database is %d bytes, want at least 8 MiB", before.Size())
	}

	at(30 * day)
	use(t, ws, []string{"keep"}, nil)
	after, _ := os.Stat(path)
	if after.Size() >= 1<<20 {
		t.Errorf("after pruning 8 MiB of entries the database is still %d bytes", after.Size())
	}
	if after.Mode().Perm() != before.Mode().Perm() {
		t.Errorf("compacting changed the mode from %v to %v", before.Mode(), after.Mode())
	}
	if got, want := cacheKeys(t, ws, "javascript"), []string{"keep"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if got := cacheStamps(t, ws); !equalStamps(got, map[string]float64{"javascript/keep": 30}) {
		t.Errorf("use times %v", got)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".resolve-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %q", leftovers)
	}
}

// TestCacheTouchWhileLocked checks that a Flush with only use times to
// write, and the database held by another writer, is not an error: no
// result is lost, so Run has nothing to warn about.
func TestCacheTouchWhileLocked(t *testing.T) {
	at := cacheClock(t)
	ws := t.TempDir()
	use(t, ws, nil, []string{"a"})
	at(2 * day)
	c := NewCache(ws)
	var e cacheTestEntry
	if !c.Get("javascript", "a", &e) {
		t.Fatal("a miss")
	}
	c.Release() // as resolvers do once their lookups are done
	holder, err := bbolt.Open(filepath.Join(ws, CacheFile), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := c.Flush(); err != nil {
		t.Errorf("Flush of use times while locked: %v", err)
	}
}
