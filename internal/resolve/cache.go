package resolve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/agentform/agentform/internal/safefile"
)

// Cache stores resolution results under .agentform/cache/<kind>/<key>.json,
// keyed by a digest of everything the result depends on. Entries are
// written atomically and only after a successful resolution. Nothing in an
// entry comes from the environment, so the cache never holds a secret.
type Cache struct {
	dir string
	// made holds the kind directories this Cache created or found, so that
	// each is made once, not once per entry.
	made sync.Map
}

// NewCache returns the cache of a workspace directory.
func NewCache(workspace string) *Cache {
	return &Cache{dir: filepath.Join(workspace, ".agentform", "cache")}
}

var cacheKey = regexp.MustCompile(`^[a-z0-9_-]+$`)

func (c *Cache) path(kind, key string) (string, bool) {
	if c == nil || !cacheKey.MatchString(kind) || !cacheKey.MatchString(key) {
		return "", false
	}
	return filepath.Join(c.dir, kind, key+".json"), true
}

// Get loads the entry for kind and key into v; false when there is none or
// it cannot be read (a corrupt entry is a miss, never an error).
func (c *Cache) Get(kind, key string, v any) bool {
	p, ok := c.path(kind, key)
	if !ok {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// Put stores v as the entry for kind and key.
func (c *Cache) Put(kind, key string, v any) error {
	p, ok := c.path(kind, key)
	if !ok {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, ok := c.made.Load(kind); !ok {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		c.made.Store(kind, true)
	}
	// A lost or empty entry is a miss (Get), so the entry is not synced.
	return safefile.WriteUnsynced(p, b, 0o644)
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
