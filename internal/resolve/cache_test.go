package resolve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"
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

// TestCacheTruncated cuts a database short at sizes where bbolt would read
// past the end of its memory map (a fault, not a panic) or refuse the file:
// every lookup misses, and the next Flush replaces the file.
func TestCacheTruncated(t *testing.T) {
	for _, tt := range []struct {
		entries int
		size    int64
	}{{1, 100}, {1, 4096}, {1, 5000}, {1, 8192}, {1, 12288}, {1, 16384}, {1, 20480}, {20, 8192}, {20, 20480}, {20, 40960}} {
		t.Run(fmt.Sprint(tt.entries, "/", tt.size), func(t *testing.T) {
			size := tt.size
			ws := t.TempDir()
			c := NewCache(ws)
			for i := range tt.entries {
				_ = c.Put("javascript", fmt.Sprintf("k%02d", i), cacheTestEntry{strings.Repeat("x", 3000)})
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(ws, CacheFile)
			if fi, _ := os.Stat(path); fi.Size() <= size {
				t.Fatalf("the database has %d bytes, not more than %d", fi.Size(), size)
			}
			if err := os.Truncate(path, size); err != nil {
				t.Fatal(err)
			}
			d := NewCache(ws)
			var e cacheTestEntry
			for i := range tt.entries {
				if d.Get("javascript", fmt.Sprintf("k%02d", i), &e) {
					t.Fatalf("k%02d found in a truncated database", i)
				}
			}
			_ = d.Put("javascript", "fresh", cacheTestEntry{"fresh"})
			if err := d.Flush(); err != nil {
				t.Fatalf("Flush over a truncated database: %v", err)
			}
			if !NewCache(ws).Get("javascript", "fresh", &e) || e.Name != "fresh" {
				t.Errorf("after replacing the truncated database: %+v", e)
			}
		})
	}
}

// TestCacheRelease checks that a Cache that has done its lookups and
// released the database does not keep another from writing it.
func TestCacheRelease(t *testing.T) {
	ws := t.TempDir()
	seed := NewCache(ws)
	_ = seed.Put("javascript", "a", cacheTestEntry{"a"})
	if err := seed.Flush(); err != nil {
		t.Fatal(err)
	}
	reader, writer := NewCache(ws), NewCache(ws)
	var e cacheTestEntry
	if !reader.Get("javascript", "a", &e) {
		t.Fatal("a miss")
	}
	reader.Release()
	_ = writer.Put("javascript", "b", cacheTestEntry{"b"})
	if err := writer.Flush(); err != nil {
		t.Fatalf("Flush while another Cache had released the database: %v", err)
	}
	// The reader opens it again when it needs it.
	if !reader.Get("javascript", "b", &e) || e.Name != "b" {
		t.Errorf("after Release: got %+v, want b", e)
	}
	if err := reader.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestCacheLegacyLayout checks that the first Flush removes the entry
// files of the earlier layout (.agentform/cache/<kind>/<key>.json).
func TestCacheLegacyLayout(t *testing.T) {
	ws := t.TempDir()
	legacy := filepath.Join(ws, ".agentform", "cache", "javascript", "0123.json")
	if err := os.MkdirAll(filepath.Dir(legacy), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacy, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewCache(ws)
	_ = c.Put("javascript", "a", cacheTestEntry{"a"})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(legacy)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the legacy entries are still there: %v", err)
	}
}

// TestRunWarnsWhenCacheNotWritten checks that Run says so when what it
// resolved could not be stored: the next plan resolves it again.
func TestRunWarnsWhenCacheNotWritten(t *testing.T) {
	w := newJSWorkspace(t, t.TempDir(), "js-tool", "echo", "")
	seed := NewCache(w.dir)
	_ = seed.Put("javascript", "seed", cacheTestEntry{"seed"})
	if err := seed.Flush(); err != nil {
		t.Fatal(err)
	}
	holder, err := bbolt.Open(filepath.Join(w.dir, CacheFile), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	ws, diags := Run(context.Background(), w.req.Config, Options{Cache: NewCache(w.dir)})
	if diags.HasErrors() || ws.Tools["echo"] == nil {
		t.Fatalf("resolving: %s", diags.Error())
	}
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "Resolution cache not written" {
		t.Errorf("diagnostics:\ngot:  %v\nwant: one warning that the cache was not written", diags)
	}
}

// TestRunWriteCacheLater: under WriteCacheLater, Run leaves the cache
// unwritten and Workspace.WriteCache writes it, once; its warning is
// WriteCache's to return.
func TestRunWriteCacheLater(t *testing.T) {
	w := newJSWorkspace(t, t.TempDir(), "js-tool", "echo", "")
	ws, diags := Run(context.Background(), w.req.Config, Options{Cache: NewCache(w.dir), WriteCacheLater: true})
	if len(diags) > 0 || ws.Tools["echo"] == nil {
		t.Fatalf("resolving: %v", diags)
	}
	if _, err := os.Stat(filepath.Join(w.dir, CacheFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Run wrote the cache: %v", err)
	}
	if d := ws.WriteCache(); len(d) > 0 {
		t.Fatal(d)
	}
	if got, err := CacheEntries(w.dir, "javascript"); err != nil || len(got) != 1 {
		t.Fatalf("entries after WriteCache: %d, %v", len(got), err)
	}
	if d := ws.WriteCache(); len(d) > 0 {
		t.Fatal(d)
	}

	// The warning of a cache that cannot be written comes from WriteCache.
	w = newJSWorkspace(t, t.TempDir(), "js-tool", "echo", "")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Dir(filepath.Join(w.dir, CacheFile)), 0o755))
	holder, err := bbolt.Open(filepath.Join(w.dir, CacheFile), 0o644, nil)
	must(err)
	defer holder.Close()
	ws, diags = Run(context.Background(), w.req.Config, Options{Cache: NewCache(w.dir), WriteCacheLater: true})
	if len(diags) > 0 {
		t.Fatalf("Run: %v", diags)
	}
	if d := ws.WriteCache(); len(d) != 1 || d[0].Summary != "Resolution cache not written" {
		t.Errorf("WriteCache: %v, want the warning", d)
	}
	if d := ws.WriteCache(); len(d) > 0 {
		t.Errorf("WriteCache again: %v, want nothing", d)
	}
}

// TestJSCacheEntry: javascript entries store the bundle as raw bytes after
// a JSON header, read back whole; an entry of the JSON layout older
// versions wrote, or a damaged one, is a miss.
func TestJSCacheEntry(t *testing.T) {
	bundle := append([]byte("export { x };\n\x00\xff\xfe"), bytes.Repeat([]byte("var a = 1;\n"), 1000)...)
	want := jsCacheEntry{Description: "Adds \"numbers\".", Parameters: json.RawMessage(`{"type":"object"}`), Bundle: bundle}
	c := NewCache(t.TempDir())
	if err := c.Put("javascript", "k", &want); err != nil {
		t.Fatal(err)
	}
	// A value, not only a pointer, is stored in the binary layout.
	if err := c.Put("javascript", "v", want); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"k", "v"} {
		var got jsCacheEntry
		if !c.Get("javascript", key, &got) {
			t.Fatalf("%s: miss after Put and Flush", key)
		}
		if got.Description != want.Description || string(got.Parameters) != string(want.Parameters) || !bytes.Equal(got.Bundle, want.Bundle) {
			t.Errorf("%s: entry read back\ngot:  %q %s (%d bytes of bundle)\nwant: %q %s (%d bytes)", key, got.Description, got.Parameters, len(got.Bundle), want.Description, want.Parameters, len(want.Bundle))
		}
	}

	encoded, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := json.Marshal(map[string]any{"description": "d", "parameters": json.RawMessage(`{}`), "bundle": bundle})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"json layout":     legacy,
		"empty":           nil,
		"magic only":      []byte(jsCacheMagic),
		"header too long": append([]byte(jsCacheMagic), 0xff, 0xff, 0xff, 0xff, 0x0f, '{'),
		"header cut":      encoded[:len(jsCacheMagic)+5],
		"header not json": append(append([]byte(jsCacheMagic), 3), "{no"...),
	} {
		var e jsCacheEntry
		if err := e.UnmarshalBinary(data); err == nil {
			t.Errorf("%s: read as an entry: %+v", name, e)
		}
	}
	// Reading copies: the caller's buffer may be reused.
	var e jsCacheEntry
	if err := e.UnmarshalBinary(encoded); err != nil {
		t.Fatal(err)
	}
	clear(encoded)
	if !bytes.Equal(e.Bundle, bundle) {
		t.Error("the bundle read shares memory with the encoded entry")
	}
}

// FuzzJSCacheEntry: reading any bytes as a javascript cache entry never
// panics, and what it accepts encodes to an entry that reads back to the
// same encoding (absent parameters come back as null, so the first
// round trip may normalise).
func FuzzJSCacheEntry(f *testing.F) {
	good, err := (&jsCacheEntry{Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), Bundle: []byte("export {};\n")}).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"description":"d","parameters":{},"bundle":"YQ=="}`))
	f.Add([]byte(jsCacheMagic + "\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e jsCacheEntry
		if e.UnmarshalBinary(data) != nil {
			return
		}
		again, err := e.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary of an entry read: %v", err)
		}
		var back jsCacheEntry
		if err := back.UnmarshalBinary(again); err != nil {
			t.Fatalf("reading back: %v", err)
		}
		params := []byte("null")
		if len(e.Parameters) > 0 {
			var compact bytes.Buffer
			if err := json.Compact(&compact, e.Parameters); err != nil {
				t.Fatalf("parameters read are not JSON: %v", err)
			}
			params = compact.Bytes()
		}
		if back.Description != e.Description || !bytes.Equal(back.Parameters, params) || !bytes.Equal(back.Bundle, e.Bundle) {
			t.Fatalf("round trip\ngot:  %+v\nwant: %+v", back, e)
		}
		third, err := back.MarshalBinary()
		if err != nil || !bytes.Equal(third, again) {
			t.Fatalf("encoding not stable (%v)\nfirst:  %q\nsecond: %q", err, again, third)
		}
	})
}
