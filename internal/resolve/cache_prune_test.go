package resolve

import (
	"bytes"
	"errors"
	"fmt"
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

// seedCache writes ws's cache database directly, with fill, as another
// version of agentform (or another clock) might have left it.
func seedCache(t *testing.T, ws string, fill func(tx *bbolt.Tx) error) {
	t.Helper()
	path := filepath.Join(ws, CacheFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fill); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
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

// TestCachePrune checks that entries not used for cacheMaxAge go (their
// use time is up to a day behind, so one more day is allowed), that
// finding an entry keeps it, and that use times are written about once a
// day.
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

	// 31 days after b and c were last found, a plan that finds c and adds
	// d deletes b only.
	at(31 * day)
	use(t, ws, []string{"c"}, []string{"d"})
	if got, want := cacheKeys(t, ws, "javascript"), []string{"a", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("after 31 days: entries %q, want %q", got, want)
	}
	if got, want := cacheStamps(t, ws), map[string]float64{"javascript/a": 10, "javascript/c": 31, "javascript/d": 31}; !equalStamps(got, want) {
		t.Errorf("after 31 days: use times %v, want %v", got, want)
	}

	// A plan that only finds entries prunes too, once a day is over.
	at(41*day + time.Hour)
	use(t, ws, []string{"d"}, nil)
	if got, want := cacheKeys(t, ws, "javascript"), []string{"c", "d"}; !slices.Equal(got, want) {
		t.Errorf("after 41 days: entries %q, want %q", got, want)
	}
}

// TestCachePruneDue checks that a Flush prunes once a day is over even
// when every use time it found is recent, and that a Flush that writes
// brings up to date the use times found an hour old or more, which keeps
// entries used together in step.
func TestCachePruneDue(t *testing.T) {
	at := cacheClock(t)
	ws := t.TempDir()
	use(t, ws, nil, []string{"x", "y"})

	// y is found 30.5 days on: the prune then keeps x, which is not yet
	// 31 days old.
	at(30*day + 12*time.Hour)
	use(t, ws, []string{"y"}, nil)
	// 20 hours later z is added (no prune: the last was 20 hours ago),
	// and y, found again, is brought up to date with it.
	at(31*day + 8*time.Hour)
	use(t, ws, []string{"y"}, []string{"z"})
	if got, want := cacheKeys(t, ws, "javascript"), []string{"x", "y", "z"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if got, want := cacheStamps(t, ws), map[string]float64{"javascript/x": 0, "javascript/y": 31 + 8.0/24, "javascript/z": 31 + 8.0/24}; !equalStamps(got, want) {
		t.Errorf("use times %v, want %v", got, want)
	}
	// Five hours later a plan finds only z, whose use time is recent, but
	// the last prune is more than a day ago: x goes.
	at(31*day + 13*time.Hour)
	use(t, ws, []string{"z"}, nil)
	if got, want := cacheKeys(t, ws, "javascript"), []string{"y", "z"}; !slices.Equal(got, want) {
		t.Errorf("after the prune: entries %q, want %q", got, want)
	}
}

// TestCachePruneDamaged checks that a database damaged where no lookup
// goes, which makes every prune fail, is replaced rather than tried
// again by every plan.
func TestCachePruneDamaged(t *testing.T) {
	at := cacheClock(t)
	ws := t.TempDir()
	path := filepath.Join(ws, CacheFile)
	c := NewCache(ws)
	_ = c.Put("javascript", "a", cacheTestEntry{"a"})
	for i := range 20 {
		_ = c.Put("python", fmt.Sprintf("p%02d", i), cacheTestEntry{fmt.Sprintf("MARK%02d", i) + strings.Repeat("x", 1000)})
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	// Break the header of the page holding one python entry.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := bytes.Index(raw, []byte("MARK10"))
	if off < 0 {
		t.Fatal("entry not found in the file")
	}
	page := off &^ (os.Getpagesize() - 1)
	copy(raw[page:page+16], bytes.Repeat([]byte{0xff}, 16))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	at(2 * day)
	d := NewCache(ws)
	var e cacheTestEntry
	if !d.Get("javascript", "a", &e) {
		t.Fatal("a: a miss; the damage was meant to be elsewhere")
	}
	if err := d.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the damaged database is still there (%v)", err)
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
	seedCache(t, ws, func(tx *bbolt.Tx) error {
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
	at(32 * day)
	use(t, ws, []string{"new"}, nil)
	if got, want := cacheKeys(t, ws, "javascript"), []string{"new"}; !slices.Equal(got, want) {
		t.Errorf("32 days on: entries %q, want %q", got, want)
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
	if _, err := os.Stat(filepath.Join(ws, CacheFile)); err != nil {
		t.Errorf("the database another process holds is gone: %v", err)
	}
}

// TestCacheWritesOncePerDay runs a plan every ten minutes for a week,
// one of which (at 23:30) adds an entry: after the first day the cache is
// written once a day, the prune and the use times in step.
func TestCacheWritesOncePerDay(t *testing.T) {
	at := cacheClock(t)
	ws := t.TempDir()
	path := filepath.Join(ws, CacheFile)
	use(t, ws, nil, []string{"a", "b"})
	writes := map[int]int{}
	for m := 10; m <= 7*24*60; m += 10 {
		at(time.Duration(m) * time.Minute)
		before, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if m == 23*60+30 {
			use(t, ws, []string{"a", "b"}, []string{"c"})
		} else {
			use(t, ws, []string{"a", "b"}, nil)
		}
		after, _ := os.Stat(path)
		if !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
			writes[m/(24*60)]++
		}
	}
	for d := 1; d < 7; d++ {
		if writes[d] != 1 {
			t.Errorf("day %d: %d writes, want 1 (all days: %v)", d+1, writes[d], writes)
		}
	}
}

// TestCacheRefreshesInStep checks that a Flush that writes brings up to
// date the use times it found an hour old or more, and only those.
func TestCacheRefreshesInStep(t *testing.T) {
	at := cacheClock(t)
	ws := t.TempDir()
	use(t, ws, nil, []string{"a"})
	// 40 minutes on, a is not brought up to date.
	at(40 * time.Minute)
	use(t, ws, []string{"a"}, []string{"b"})
	// 90 minutes on, a is; b, 50 minutes old, is not.
	at(90 * time.Minute)
	use(t, ws, []string{"a", "b"}, []string{"c"})
	h := 1.0 / 24
	if got, want := cacheStamps(t, ws), map[string]float64{"javascript/a": 1.5 * h, "javascript/b": 40.0 / 60 * h, "javascript/c": 1.5 * h}; !equalStamps(got, want) {
		t.Errorf("use times %v, want %v", got, want)
	}
}

// TestCacheFutureUseTime checks that a use time after now (a clock set
// back since) makes a Flush write, even with no prune due.
func TestCacheFutureUseTime(t *testing.T) {
	cacheClock(t)
	ws := t.TempDir()
	seedCache(t, ws, func(tx *bbolt.Tx) error {
		b, _ := tx.CreateBucketIfNotExists([]byte("javascript"))
		_ = b.Put([]byte("a"), []byte(`{"name":"a"}`))
		used, _ := tx.CreateBucketIfNotExists(cacheUsedBucket)
		_ = used.Put(cacheUsedKey("javascript", "a"), cacheTime(cacheNow().Add(10*day)))
		meta, _ := tx.CreateBucketIfNotExists(cacheMetaBucket)
		return meta.Put(cachePrunedKey, cacheTime(cacheNow().Add(-time.Hour)))
	})
	use(t, ws, []string{"a"}, nil)
	if got, want := cacheStamps(t, ws), map[string]float64{"javascript/a": 0}; !equalStamps(got, want) {
		t.Errorf("use times %v, want %v", got, want)
	}
}

// TestRemoveIfSame checks that a damaged database is removed only while
// it is still the file at the path, not one written there since.
func TestRemoveIfSame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	old, _ := os.Stat(path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// The new file may get the old one's inode number.
	if err := os.WriteFile(path, []byte("newer"), 0o644); err != nil {
		t.Fatal(err)
	}
	removeIfSame(path, old)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the file written since was removed: %v", err)
	}
	removeIfSame(path, nil)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("removed with no file found: %v", err)
	}
	cur, _ := os.Stat(path)
	removeIfSame(path, cur)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the same file was not removed: %v", err)
	}
}
