package resolve

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
// each value a JSON document. Nothing in an entry comes from the
// environment, so the cache never holds a secret.
//
// Put keeps entries in memory, where Get finds them at once; Flush writes
// them to the database in one transaction (Run flushes before it
// returns), so a cold plan of 200 javascript tools writes one file, not
// 200. The database is opened for reading by the first Get that needs it
// and closed by Flush.
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
	b, ok := c.pending[cacheID{kind, key}]
	if !ok {
		b = c.read(kind, key)
	}
	c.mu.Unlock()
	return b != nil && json.Unmarshal(b, v) == nil
}

// read returns a copy of the stored value, or nil. c.mu is held.
func (c *Cache) read(kind, key string) (value []byte) {
	if !c.tried {
		c.tried = true
		c.reader = c.openReader()
	}
	if c.reader == nil {
		return nil
	}
	// bbolt panics on some damaged pages; that is a miss too.
	defer func() {
		if recover() != nil {
			value = nil
			c.damaged = true
		}
	}()
	_ = c.reader.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(kind)); b != nil {
			value = bytes.Clone(b.Get([]byte(key)))
		}
		return nil
	})
	return value
}

// openReader opens the database for reading; nil when there is none or it
// cannot be opened. c.mu is held.
func (c *Cache) openReader() *bbolt.DB {
	// bbolt would try to initialise an empty file through a read-only
	// descriptor: a file a writer has only just created is no database yet.
	if fi, err := os.Stat(c.path); err != nil || fi.Size() == 0 {
		return nil
	}
	db, err := bbolt.Open(c.path, 0o644, &bbolt.Options{ReadOnly: true, Timeout: cacheLockTimeout})
	if err != nil {
		c.damaged = cacheDamaged(err)
		return nil
	}
	return db
}

// Put stores v as the entry for kind and key: at once for Get, in the
// database at the next Flush.
func (c *Cache) Put(kind, key string, v any) error {
	if c == nil || !validCacheID(kind, key) {
		return nil
	}
	b, err := json.Marshal(v)
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
	if c.reader != nil {
		_ = c.reader.Close()
		c.reader = nil
	}
	c.tried = false
	pending := c.pending
	c.pending = nil
	if len(pending) == 0 {
		return nil
	}
	damaged := c.damaged
	c.damaged = false
	if damaged {
		_ = os.Remove(c.path)
	}
	err := c.write(pending)
	if err != nil && !damaged && cacheDamaged(err) {
		// Replace a damaged database once.
		_ = os.Remove(c.path)
		err = c.write(pending)
	}
	if err != nil {
		return fmt.Errorf("writing the resolution cache %s: %w", c.path, err)
	}
	return nil
}

func (c *Cache) write(pending map[cacheID][]byte) (err error) {
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return err
	}
	db, err := bbolt.Open(c.path, 0o644, &bbolt.Options{Timeout: cacheLockTimeout})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", berrors.ErrInvalid, r)
		}
	}()
	ids := make([]cacheID, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	// In key order, bbolt fills its pages densely.
	slices.SortFunc(ids, func(a, b cacheID) int {
		return cmp.Or(strings.Compare(a.kind, b.kind), strings.Compare(a.key, b.key))
	})
	return db.Update(func(tx *bbolt.Tx) error {
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
}

// cacheDamaged reports whether err says the database file is not a usable
// bbolt database.
func cacheDamaged(err error) bool {
	return errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch) || errors.Is(err, berrors.ErrChecksum)
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
