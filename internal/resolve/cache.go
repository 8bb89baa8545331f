package resolve

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// CacheFile is the resolution cache's database, relative to the workspace.
var CacheFile = filepath.Join(".agentform", "cache", "resolve.db")

// cacheLockTimeout is how long the cache waits for another process's
// lock on the database before it does without: a reader treats every
// entry as a miss, a writer drops what it would have written.
const cacheLockTimeout = 500 * time.Millisecond

// Cache stores resolution results in one bbolt database (CacheFile): a
// bucket per kind, keyed by a digest of everything the result depends on,
// each value a JSON document, or what MarshalBinary returns for a value
// that implements encoding.BinaryMarshaler (and Get reads it back with
// UnmarshalBinary). Nothing in an entry comes from the environment, so
// the cache never holds a secret.
//
// Put keeps entries in memory, where Get finds them at once; Flush writes
// them to the database in one transaction (Run flushes before it
// returns), so a cold plan of 200 javascript tools writes one file, not
// 200. The database is opened for reading by the first Get that needs it
// and closed by Release (when a resolver's lookups are done) or Flush.
//
// A cache that cannot be used — missing, locked by another agentform for
// longer than cacheLockTimeout, damaged — only costs a rebuild: a Get
// misses, a Flush drops its entries. A damaged database is replaced by the
// next Flush. A Cache is safe for concurrent use.
type Cache struct {
	path string

	mu      sync.Mutex
	pending map[cacheID][]byte
	reader  *bbolt.DB // open for reading; nil before the first Get or when unusable
	tried   bool      // a Get tried to open reader since the last Flush
	damaged bool      // reading found the database damaged
}

type cacheID struct{ kind, key string }

// NewCache returns the cache of a workspace directory.
func NewCache(workspace string) *Cache {
	return &Cache{path: filepath.Join(workspace, CacheFile)}
}

var cacheKey = regexp.MustCompile(`^[a-z0-9_-]+$`)

func validCacheID(kind, key string) bool {
	return cacheKey.MatchString(kind) && cacheKey.MatchString(key)
}

// Get loads the entry for kind and key into v; false when there is none or
// it cannot be read (a damaged entry is a miss, never an error).
func (c *Cache) Get(kind, key string, v any) bool {
	if c == nil || !validCacheID(kind, key) {
		return false
	}
	c.mu.Lock()
	if b, ok := c.pending[cacheID{kind, key}]; ok {
		c.mu.Unlock()
		return decodeCacheValue(b, v)
	}
	defer c.mu.Unlock()
	return c.read(kind, key, func(b []byte) bool { return decodeCacheValue(b, v) })
}

// decodeCacheValue reads b into v, as Put encoded it. Both decoders copy
// what they keep, so b may be the database's own memory.
func decodeCacheValue(b []byte, v any) bool {
	if u, ok := v.(encoding.BinaryUnmarshaler); ok {
		return u.UnmarshalBinary(b) == nil
	}
	return json.Unmarshal(b, v) == nil
}

// Release closes the database until the next Get needs it. The readers'
// shared lock would otherwise keep a writer (another agentform's Flush)
// waiting for as long as this one resolves: resolvers release it when
// their lookups are done.
func (c *Cache) Release() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeReader()
}

// closeReader closes the reader, if open. c.mu is held.
func (c *Cache) closeReader() {
	if c.reader != nil {
		_ = c.reader.Close()
		c.reader = nil
	}
	c.tried = false
}

// read calls decode with the stored value, in the read transaction (the
// bytes are the database's and valid only there), and returns what it
// returns; false when there is no value. c.mu is held.
func (c *Cache) read(kind, key string, decode func([]byte) bool) (hit bool) {
	if !c.tried {
		c.tried = true
		c.reader = c.openReader()
	}
	if c.reader == nil {
		return false
	}
	ok := cacheGuard(func() {
		_ = c.reader.View(func(tx *bbolt.Tx) error {
			if b := tx.Bucket([]byte(kind)); b != nil {
				if value := b.Get([]byte(key)); value != nil {
					hit = decode(value)
				}
			}
			return nil
		})
	})
	if !ok {
		c.damaged = true
		c.closeReader()
		c.tried = true // not again before the next Flush
		return false
	}
	return hit
}

// openReader opens the database for reading; nil when there is none or it
// cannot be opened. c.mu is held.
func (c *Cache) openReader() *bbolt.DB {
	// bbolt would try to initialise an empty file through a read-only
	// descriptor: a file a writer has only just created is no database yet.
	fi, err := os.Stat(c.path)
	if err != nil || fi.Size() == 0 {
		return nil
	}
	var db *bbolt.DB
	if !cacheGuard(func() {
		db, err = bbolt.Open(c.path, 0o644, &bbolt.Options{ReadOnly: true, Timeout: cacheLockTimeout})
	}) {
		c.damaged = true
		return nil
	}
	if err != nil {
		c.damaged = !errors.Is(err, berrors.ErrTimeout)
		return nil
	}
	if !cacheFits(db) {
		_ = db.Close()
		c.damaged = true
		return nil
	}
	return db
}

// cacheFits reports whether the database's pages are all in its file: a
// truncated file would make bbolt read past the end of its memory map,
// which faults.
func cacheFits(db *bbolt.DB) bool {
	fits := false
	cacheGuard(func() {
		_ = db.View(func(tx *bbolt.Tx) error {
			fi, err := os.Stat(db.Path())
			fits = err == nil && tx.Size() <= fi.Size()
			return nil
		})
	})
	return fits
}

// cacheGuard runs f, turning a panic — bbolt panics on some damaged pages,
// and a read through a memory map past the end of a truncated file faults
// (made a panic here) — into false.
func cacheGuard(f func()) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f()
	return true
}

// Put stores v as the entry for kind and key: at once for Get, in the
// database at the next Flush.
func (c *Cache) Put(kind, key string, v any) error {
	if c == nil || !validCacheID(kind, key) {
		return nil
	}
	var b []byte
	var err error
	if m, ok := v.(encoding.BinaryMarshaler); ok {
		b, err = m.MarshalBinary()
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = map[cacheID][]byte{}
	}
	c.pending[cacheID{kind, key}] = b
	return nil
}

// Flush writes the entries Put since the last Flush in one transaction
// and closes the database. Without entries it writes nothing. An error
// means the entries were dropped; the next resolution rebuilds them.
func (c *Cache) Flush() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeReader()
	pending := c.pending
	c.pending = nil
	damaged := c.damaged
	c.damaged = false
	if len(pending) == 0 {
		return nil
	}
	if damaged {
		_ = os.Remove(c.path)
	}
	err := c.write(pending)
	if err != nil && !damaged && !errors.Is(err, berrors.ErrTimeout) {
		// A database that cannot be opened or written is replaced, once.
		_ = os.Remove(c.path)
		err = c.write(pending)
	}
	if err != nil {
		return fmt.Errorf("writing the resolution cache %s: %w", c.path, err)
	}
	// Entries of the cache's earlier layout, one file per entry, are
	// never read again.
	for _, kind := range []string{"javascript", "python"} {
		if dir := filepath.Join(filepath.Dir(c.path), kind); dirExists(dir) {
			_ = os.RemoveAll(dir)
		}
	}
	return nil
}

func dirExists(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

// errCacheDamaged reports a database whose pages are not all in its file.
var errCacheDamaged = errors.New("the database file is truncated")

func (c *Cache) write(pending map[cacheID][]byte) (err error) {
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return err
	}
	ids := make([]cacheID, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	// In key order, bbolt fills its pages densely.
	slices.SortFunc(ids, func(a, b cacheID) int {
		return cmp.Or(strings.Compare(a.kind, b.kind), strings.Compare(a.key, b.key))
	})
	var db *bbolt.DB
	if !cacheGuard(func() { db, err = bbolt.Open(c.path, 0o644, &bbolt.Options{Timeout: cacheLockTimeout}) }) {
		return errCacheDamaged
	}
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	if !cacheFits(db) {
		return errCacheDamaged
	}
	if !cacheGuard(func() {
		err = db.Update(func(tx *bbolt.Tx) error {
			for _, id := range ids {
				b, err := tx.CreateBucketIfNotExists([]byte(id.kind))
				if err != nil {
					return err
				}
				if err := b.Put([]byte(id.key), pending[id]); err != nil {
					return err
				}
			}
			return nil
		})
	}) {
		return errCacheDamaged
	}
	return err
}

// CacheEntries returns the keys and values of a kind's entries in a
// workspace's cache database, for tools that inspect the cache (the
// benchmark harness); an empty map when there is no database.
func CacheEntries(workspace, kind string) (map[string][]byte, error) {
	path := filepath.Join(workspace, CacheFile)
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return map[string][]byte{}, nil
	}
	db, err := bbolt.Open(path, 0o644, &bbolt.Options{ReadOnly: true, Timeout: cacheLockTimeout})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if !cacheFits(db) {
		return nil, fmt.Errorf("%s: %w", path, errCacheDamaged)
	}
	out := map[string][]byte{}
	err = db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte(kind))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			out[string(k)] = bytes.Clone(v)
			return nil
		})
	})
	return out, err
}

// Key derives a cache key from parts (input digests, versions, options).
func Key(parts ...string) string {
	h := SHA256([]byte(joinParts(parts)))
	return h[len("sha256:"):]
}

func joinParts(parts []string) string {
	b, _ := json.Marshal(parts)
	return string(b)
}
