package resolve

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/binary"
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

	"github.com/agentform/agentform/internal/boltfile"
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
// next Flush that has entries to write, or that finds the damage while
// pruning. A Cache is safe for concurrent use.
//
// Entries not used for cacheMaxAge are deleted (cachePrune). Every entry
// carries the time it was last written or found: a Flush writes when a
// use time found is cacheTouchAfter old or more, or when a prune is due
// (once per cachePruneEvery). Then it brings up to date every use time
// found that is cacheRefreshAfter old or more, or, when it prunes, every
// use time found: the use times of entries used together, and the prune,
// stay in step, and a plan that finds everything it needs writes to the
// database about once a day.
type Cache struct {
	path string

	mu      sync.Mutex
	pending map[cacheID][]byte
	found   map[cacheID]time.Time // entries found in the database: their use times (zero: none)
	reader  *bbolt.DB             // open for reading; nil before the first Get or when unusable
	opened  os.FileInfo           // the file reader opened
	tried   bool                  // a Get tried to open reader since the last Flush
	damaged os.FileInfo           // the file reading found damaged, if any
	due     bool                  // reading found the database due to be pruned
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
			if hit {
				if c.found == nil {
					c.found = map[cacheID]time.Time{}
				}
				c.found[cacheID{kind, key}], _ = cacheUsed(tx, kind, key)
			}
			return nil
		})
	})
	if !ok {
		c.damaged = c.opened
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
		c.damaged = fi
		return nil
	}
	if err != nil {
		if !errors.Is(err, berrors.ErrTimeout) {
			c.damaged = fi
		}
		return nil
	}
	if !cacheFits(db) {
		_ = db.Close()
		c.damaged = fi
		return nil
	}
	cacheGuard(func() {
		_ = db.View(func(tx *bbolt.Tx) error {
			c.due = cachePruneDue(tx, cacheNow())
			return nil
		})
	})
	c.opened = fi
	return db
}

// cacheFits reports whether the database's pages are all in its file
// (boltfile.Fits).
func cacheFits(db *bbolt.DB) bool { return boltfile.Fits(db) }

// cacheGuard runs f, turning a panic — bbolt panics on some damaged pages,
// and a read through a memory map past the end of a truncated file faults
// (made a panic here) — into false (boltfile.Guard).
func cacheGuard(f func()) bool { return boltfile.Guard(f) }

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

// Flush writes the entries Put since the last Flush in one transaction,
// with the use times of entries found, and prunes the database when that
// is due; then it closes the database. With nothing to write it writes
// nothing. An error means the entries were dropped; the next resolution
// rebuilds them.
func (c *Cache) Flush() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeReader()
	pending, found, due := c.pending, c.found, c.due
	c.pending, c.found, c.due = nil, nil, false
	damaged := c.damaged
	c.damaged = nil
	if damaged != nil {
		// Nothing found in a damaged database is worth keeping.
		found, due = nil, false
	}
	now := cacheNow()
	stale := false
	for _, used := range found {
		stale = stale || cacheOlder(now, used, cacheTouchAfter)
	}
	if len(pending) == 0 && !due && !stale {
		return nil
	}
	if damaged != nil {
		removeIfSame(c.path, damaged)
	}
	opened, err := c.write(pending, found)
	if err != nil && len(pending) == 0 {
		// Only use times and pruning were lost; the next Flush that can
		// write does both, and no result is resolved again for it. A
		// database damaged where no lookup went (pruning walks all of it)
		// would fail every such Flush: it is replaced like any other.
		if errors.Is(err, errCacheDamaged) {
			removeIfSame(c.path, opened)
		}
		return nil
	}
	if err != nil && damaged == nil && !errors.Is(err, berrors.ErrTimeout) {
		// A database that cannot be opened or written is replaced, once.
		removeIfSame(c.path, opened)
		_, err = c.write(pending, nil)
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

// errCacheDamaged reports a database bbolt cannot use: its pages are not
// all in its file, or one of them made bbolt panic.
var errCacheDamaged = errors.New("the database file is damaged")

// removeIfSame removes path if it is still the file fi describes (nil:
// none), and not one another agentform has written there since: same
// file, size and modification time, since a new file may be given the
// inode number of one just removed. It is a check, not a lock: another
// agentform can still replace the file between it and the removal, which
// costs that agentform's entries, a rebuild.
func removeIfSame(path string, fi os.FileInfo) {
	cur, err := os.Stat(path)
	if err == nil && fi != nil && os.SameFile(cur, fi) && cur.Size() == fi.Size() && cur.ModTime().Equal(fi.ModTime()) {
		_ = os.Remove(path)
	}
}

// write stores pending and the use times of pending and of found (see
// Cache) in one transaction, which also prunes the database when that is
// due. It returns the file it opened (nil when there was none).
func (c *Cache) write(pending map[cacheID][]byte, found map[cacheID]time.Time) (opened os.FileInfo, err error) {
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return nil, err
	}
	opened, _ = os.Stat(c.path)
	ids := make([]cacheID, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	// In key order, bbolt fills its pages densely.
	slices.SortFunc(ids, func(a, b cacheID) int {
		return cmp.Or(strings.Compare(a.kind, b.kind), strings.Compare(a.key, b.key))
	})
	var db *bbolt.DB
	if !cacheGuard(func() {
		db, err = boltfile.OpenWriter(c.path, 0o644, bbolt.Options{Timeout: cacheLockTimeout})
	}) {
		return opened, errCacheDamaged
	}
	if err != nil {
		return opened, err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	if !cacheFits(db) {
		return opened, errCacheDamaged
	}
	now := cacheNow()
	if !cacheGuard(func() {
		err = db.Update(func(tx *bbolt.Tx) error {
			prune := cachePruneDue(tx, now)
			for _, id := range ids {
				b, err := tx.CreateBucketIfNotExists([]byte(id.kind))
				if err != nil {
					return err
				}
				if err := b.Put([]byte(id.key), pending[id]); err != nil {
					return err
				}
			}
			used, err := tx.CreateBucketIfNotExists(cacheUsedBucket)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if err := used.Put(cacheUsedKey(id.kind, id.key), cacheTime(now)); err != nil {
					return err
				}
			}
			for id, at := range found {
				if !prune && !cacheOlder(now, at, cacheRefreshAfter) {
					continue
				}
				// Only an entry still there: another agentform may have
				// pruned it since it was found.
				if b := tx.Bucket([]byte(id.kind)); b != nil && b.Get([]byte(id.key)) != nil {
					if err := used.Put(cacheUsedKey(id.kind, id.key), cacheTime(now)); err != nil {
						return err
					}
				}
			}
			if prune {
				err = cachePrune(tx, now)
			}
			return err
		})
	}) {
		return opened, errCacheDamaged
	}
	return opened, err
}

// cacheMaxAge is how long an entry is kept without being used; the
// workspace's own tools are used by every plan, so what goes is the
// results for versions of tools that no longer exist. A use time lags
// the last use by up to cacheTouchAfter, so cachePrune deletes an entry
// whose use time is cacheMaxAge + cacheTouchAfter old.
const cacheMaxAge = 30 * 24 * time.Hour

// cacheTouchAfter is how old a use time found gets before a Flush writes
// to bring it up to date; cacheRefreshAfter how old one gets before a
// Flush that writes anyway brings it up to date too; cachePruneEvery how
// often a Flush looks for entries to delete.
const (
	cacheTouchAfter   = 24 * time.Hour
	cacheRefreshAfter = time.Hour
	cachePruneEvery   = 24 * time.Hour
)

// cacheOlder reports whether the use time used is age old or more at now,
// or missing (zero), or after now (a clock since set back).
func cacheOlder(now, used time.Time, age time.Duration) bool {
	return used.IsZero() || now.Sub(used) >= age || used.After(now)
}

// cacheNow is the cache's clock (tests move it).
var cacheNow = time.Now

// The cache's own buckets; a kind cannot be named like them (validCacheID).
var (
	// cacheUsedBucket holds each entry's use time: key kind "/" key, value
	// cacheTime.
	cacheUsedBucket = []byte("~used")
	// cacheMetaBucket holds the time of the last prune under cachePrunedKey.
	cacheMetaBucket = []byte("~meta")
	cachePrunedKey  = []byte("pruned")
)

func cacheUsedKey(kind, key string) []byte { return []byte(kind + "/" + key) }

// cacheTime is t as the database stores it: Unix seconds, big-endian.
func cacheTime(t time.Time) []byte { return binary.BigEndian.AppendUint64(nil, uint64(t.Unix())) }

// cacheParseTime reads cacheTime; false for anything else.
func cacheParseTime(b []byte) (time.Time, bool) {
	if len(b) != 8 {
		return time.Time{}, false
	}
	return time.Unix(int64(binary.BigEndian.Uint64(b)), 0), true
}

// cacheUsed returns the use time of an entry; false (and the zero time)
// when it has none.
func cacheUsed(tx *bbolt.Tx, kind, key string) (time.Time, bool) {
	b := tx.Bucket(cacheUsedBucket)
	if b == nil {
		return time.Time{}, false
	}
	return cacheParseTime(b.Get(cacheUsedKey(kind, key)))
}

// cachePruneDue reports whether the database was last pruned
// cachePruneEvery ago or more, or never (a clock set back counts as due).
func cachePruneDue(tx *bbolt.Tx, now time.Time) bool {
	var last time.Time
	ok := false
	if b := tx.Bucket(cacheMetaBucket); b != nil {
		last, ok = cacheParseTime(b.Get(cachePrunedKey))
	}
	return !ok || now.Sub(last) >= cachePruneEvery || last.After(now)
}

// cachePrune deletes the entries whose use time is cacheMaxAge +
// cacheTouchAfter old or more, and use times of entries that are gone. An
// entry without a use time (stored by a version of agentform before use
// times), or with one after now (a clock since set back), gets now.
func cachePrune(tx *bbolt.Tx, now time.Time) error {
	used, err := tx.CreateBucketIfNotExists(cacheUsedBucket)
	if err != nil {
		return err
	}
	var kinds [][]byte
	if err := tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
		if validCacheID(string(name), "k") {
			kinds = append(kinds, bytes.Clone(name))
		}
		return nil
	}); err != nil {
		return err
	}
	live := map[string]bool{}
	for _, kind := range kinds {
		b := tx.Bucket(kind)
		var old [][]byte
		err := b.ForEach(func(key, _ []byte) error {
			uk := cacheUsedKey(string(kind), string(key))
			t, ok := cacheParseTime(used.Get(uk))
			switch {
			case !ok || t.After(now):
				if err := used.Put(uk, cacheTime(now)); err != nil {
					return err
				}
			case now.Sub(t) >= cacheMaxAge+cacheTouchAfter:
				old = append(old, bytes.Clone(key))
				return nil
			}
			live[string(uk)] = true
			return nil
		})
		if err != nil {
			return err
		}
		for _, key := range old {
			if err := b.Delete(key); err != nil {
				return err
			}
		}
	}
	var gone [][]byte
	if err := used.ForEach(func(uk, _ []byte) error {
		if !live[string(uk)] {
			gone = append(gone, bytes.Clone(uk))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, uk := range gone {
		if err := used.Delete(uk); err != nil {
			return err
		}
	}
	meta, err := tx.CreateBucketIfNotExists(cacheMetaBucket)
	if err != nil {
		return err
	}
	return meta.Put(cachePrunedKey, cacheTime(now))
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
