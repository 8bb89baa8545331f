package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.etcd.io/bbolt"
)

type cacheTestEntry struct {
	Name string `json:"name"`
}

func TestCache(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, CacheFile)
	get := func(c *Cache, key string) (string, bool) {
		var e cacheTestEntry
		ok := c.Get("javascript", key, &e)
		return e.Name, ok
	}

	c := NewCache(ws)
	if _, ok := get(c, "a"); ok {
		t.Fatal("a hit in an empty cache")
	}
	if err := c.Put("javascript", "a", cacheTestEntry{"first"}); err != nil {
		t.Fatal(err)
	}
	if name, ok := get(c, "a"); !ok || name != "first" {
		t.Errorf("before Flush: got %q, %v; want the entry just put", name, ok)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database exists before Flush: %v", err)
	}
	// Invalid kinds and keys are neither stored nor found.
	_ = c.Put("Java Script", "a", cacheTestEntry{"x"})
	_ = c.Put("javascript", "../a", cacheTestEntry{"x"})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	entries, err := CacheEntries(ws, "javascript")
	if err != nil || len(entries) != 1 || string(entries["a"]) != `{"name":"first"}` {
		t.Errorf("after Flush: %q, %v; want the one valid entry", entries, err)
	}

	// Another Cache (another command) reads it from the database.
	d := NewCache(ws)
	if name, ok := get(d, "a"); !ok || name != "first" {
		t.Errorf("from the database: got %q, %v", name, ok)
	}
	if _, ok := get(d, "b"); ok {
		t.Error("a hit for a key never put")
	}
	// A Flush with nothing to write writes nothing.
	before, _ := os.Stat(path)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) || before.Size() != after.Size() {
		t.Error("a Flush without entries rewrote the database")
	}

	// A second Flush adds to the database, and a later Put replaces.
	_ = d.Put("javascript", "b", cacheTestEntry{"second"})
	_ = d.Put("javascript", "a", cacheTestEntry{"replaced"})
	_ = d.Put("python", "a", cacheTestEntry{"python"})
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	e := NewCache(ws)
	for key, want := range map[string]string{"a": "replaced", "b": "second"} {
		if name, ok := get(e, key); !ok || name != want {
			t.Errorf("%s: got %q, %v; want %q", key, name, ok, want)
		}
	}
	var p cacheTestEntry
	if !e.Get("python", "a", &p) || p.Name != "python" {
		t.Errorf("python a: got %+v", p)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}

	// A nil Cache does nothing.
	var none *Cache
	if none.Get("javascript", "a", &p) || none.Put("javascript", "a", p) != nil || none.Flush() != nil {
		t.Error("a nil Cache did something")
	}
}

// TestCacheDamaged checks that a database that is not one is a miss, and
// that the next Flush replaces it.
func TestCacheDamaged(t *testing.T) {
	for name, content := range map[string]string{"garbage": strings.Repeat("this is not a bbolt database. ", 400), "short": "x"} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			path := filepath.Join(ws, CacheFile)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			c := NewCache(ws)
			var e cacheTestEntry
			if c.Get("javascript", "a", &e) {
				t.Fatal("a hit in a damaged database")
			}
			_ = c.Put("javascript", "a", cacheTestEntry{"fresh"})
			if err := c.Flush(); err != nil {
				t.Fatalf("Flush over a damaged database: %v", err)
			}
			if !NewCache(ws).Get("javascript", "a", &e) || e.Name != "fresh" {
				t.Errorf("after replacing the damaged database: %+v", e)
			}
		})
	}
}

// TestCacheLocked checks that a database another process holds is done
// without: Gets miss and Flush drops its entries with an error, after a
// bounded wait.
func TestCacheLocked(t *testing.T) {
	ws := t.TempDir()
	c := NewCache(ws)
	_ = c.Put("javascript", "a", cacheTestEntry{"first"})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	// An open writer holds the exclusive lock (flock is per open file, so
	// this process's own handle locks it out too).
	holder, err := bbolt.Open(filepath.Join(ws, CacheFile), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	d := NewCache(ws)
	var e cacheTestEntry
	if d.Get("javascript", "a", &e) {
		t.Error("a hit while another process holds the database")
	}
	_ = d.Put("javascript", "b", cacheTestEntry{"second"})
	if err := d.Flush(); err == nil {
		t.Error("Flush succeeded while another process holds the database")
	}
}

func TestCacheConcurrent(t *testing.T) {
	ws := t.TempDir()
	c := NewCache(ws)
	_ = c.Put("javascript", "seed", cacheTestEntry{"seed"})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var e cacheTestEntry
			for j := range 50 {
				c.Get("javascript", "seed", &e)
				_ = c.Put("javascript", string(rune('a'+i))+string(rune('a'+j%26)), cacheTestEntry{"x"})
			}
		}()
	}
	wg.Wait()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	entries, err := CacheEntries(ws, "javascript")
	if err != nil || len(entries) != 1+8*26 {
		t.Errorf("entries: %d, %v; want %d", len(entries), err, 1+8*26)
	}
}
