// Package filecache is the process-wide manifest cache of OKF bundles: per
// visible file, values derived from its content (digest, frontmatter
// summary, conformance problems, search fields, links), keyed by the file's
// stat. It is an optimisation, never the authority: a value is returned
// only when every stat field matches, files changed within RacyWindow of
// the caller's clock are never stored (a write within the same timestamp
// tick could keep the stat unchanged), and commits re-hash the files they
// replace from disk whatever the cache says.
//
// Bundles are keyed by the device and inode of their pinned root
// directory, so a path replaced by another directory gets a fresh cache.
// A bundle's entries are dropped after TTL without use, and only the
// MaxBundles most recently used bundles are kept.
package filecache

import (
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/statkey"
	"github.com/notebridge/notebridge/pkg/okf/fwatch"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"golang.org/x/sys/unix"
)

// Slot names one kind of derived value. Each user owns its slot and
// stores immutable values only: readers share them.
type Slot int

// Slots.
const (
	Digest     Slot = iota // hex SHA-256 of the content (store)
	Summary                // list_concepts row
	Problems               // validate_bundle result
	Searchable             // search_concepts fields
	Links                  // get_neighbors out-links
	numSlots
)

// Options bound a Cache.
type Options struct {
	TTL        time.Duration    // a bundle unused this long is dropped
	MaxBundles int              // most bundles kept (least recently used go first)
	MaxFiles   int              // entries per bundle before it is cleared
	RacyWindow time.Duration    // files changed this recently are not stored
	Clock      func() time.Time // time source (tests inject one)
}

// DefaultOptions are the process-wide cache's bounds.
var DefaultOptions = Options{TTL: 10 * time.Minute, MaxBundles: 4, MaxFiles: 200_000, RacyWindow: 2 * time.Second, Clock: time.Now}

// Default is the process-wide cache.
var Default = New(DefaultOptions)

// Cache holds the per-file entries of recently used bundles.
type Cache struct {
	opt     Options
	mu      sync.Mutex
	bundles map[rootID]*Bundle
}

type rootID struct{ dev, ino uint64 }

// New returns an empty cache; zero options take their defaults.
func New(opt Options) *Cache {
	if opt.TTL <= 0 {
		opt.TTL = DefaultOptions.TTL
	}
	if opt.MaxBundles <= 0 {
		opt.MaxBundles = DefaultOptions.MaxBundles
	}
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = DefaultOptions.MaxFiles
	}
	if opt.RacyWindow <= 0 {
		opt.RacyWindow = DefaultOptions.RacyWindow
	}
	if opt.Clock == nil {
		opt.Clock = time.Now
	}
	return &Cache{opt: opt, bundles: map[rootID]*Bundle{}}
}

// ForRoot returns the cache of the bundle whose root root pins, marking it
// used. A nil cache, or a root that cannot be stat'ed, yields a nil
// *Bundle, which caches nothing.
func (c *Cache) ForRoot(root *safefs.Root) *Bundle {
	if c == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(root.FD(), &st); err != nil {
		return nil
	}
	return c.forID(rootID{dev: uint64(st.Dev), ino: st.Ino})
}

func (c *Cache) forID(id rootID) *Bundle {
	now := c.opt.Clock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, b := range c.bundles {
		if now.Sub(b.lastUsed) >= c.opt.TTL {
			b.dropListing()
			delete(c.bundles, k)
		}
	}
	b := c.bundles[id]
	if b == nil {
		for len(c.bundles) >= c.opt.MaxBundles {
			c.dropOldestLocked()
		}
		b = &Bundle{opt: &c.opt, files: map[string]*entry{}}
		c.bundles[id] = b
	}
	b.lastUsed = now
	return b
}

func (c *Cache) dropOldestLocked() {
	var oldest rootID
	var at time.Time
	first := true
	for k, b := range c.bundles {
		if first || b.lastUsed.Before(at) {
			oldest, at, first = k, b.lastUsed, false
		}
	}
	c.bundles[oldest].dropListing()
	delete(c.bundles, oldest)
}

// Len returns how many bundles the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.bundles)
}

// Bundle is the cache of one bundle. Its methods are safe for concurrent
// use; on a nil *Bundle they cache nothing.
type Bundle struct {
	opt      *Options
	lastUsed time.Time // guarded by the Cache's mu

	mu    sync.RWMutex
	files map[string]*entry

	lmu     sync.Mutex
	listing any           // the last whole listing, while watch saw no change
	watch   *fwatch.Watch // nil when the listing is not kept
}

type entry struct {
	key  statkey.Key
	vals [numSlots]any
}

// Now returns the cache clock's time. Take it once, before reading any
// file, and pass it to Put.
func (b *Bundle) Now() time.Time {
	if b == nil {
		return time.Now()
	}
	return b.opt.Clock()
}

// Get returns the value stored in slot for rel when the file still has key.
func (b *Bundle) Get(rel string, key statkey.Key, slot Slot) (any, bool) {
	if b == nil {
		return nil, false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	e := b.files[rel]
	if e == nil || e.key != key {
		return nil, false
	}
	v := e.vals[slot]
	return v, v != nil
}

// Put stores v in slot for the file version key, read at or after now.
// Values of other slots stay only if they were derived from the same key.
// A file changed within RacyWindow before now is not stored.
func (b *Bundle) Put(rel string, key statkey.Key, slot Slot, v any, now time.Time) {
	if b == nil || v == nil || key.Racy(now, b.opt.RacyWindow) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.files[rel]
	if e == nil || e.key != key {
		if e == nil && len(b.files) >= b.opt.MaxFiles {
			clear(b.files)
		}
		e = &entry{key: key}
		b.files[rel] = e
	}
	e.vals[slot] = v
}

// Retain drops the entries of files for which present is false: call it
// after a full listing so deleted files leave the cache.
func (b *Bundle) Retain(present func(rel string) bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for rel := range b.files {
		if !present(rel) {
			delete(b.files, rel)
		}
	}
}

// Len returns how many files have entries.
func (b *Bundle) Len() int {
	if b == nil {
		return 0
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.files)
}

// Listing returns the whole listing kept by SetListing while its watch has
// seen no change since the walk that produced it began.
func (b *Bundle) Listing() (any, bool) {
	if b == nil {
		return nil, false
	}
	b.lmu.Lock()
	defer b.lmu.Unlock()
	if b.watch == nil || b.watch.Changed() {
		return nil, false
	}
	return b.listing, true
}

// WatchForListing starts the watch for a walk whose result will go to
// SetListing; the walk must pass every directory to its AddDir before
// reading it. It returns nil (walk unwatched) when the bundle's filesystem
// cannot report every change or inotify is unavailable.
func (b *Bundle) WatchForListing(rootFD int) *fwatch.Watch {
	if b == nil {
		return nil
	}
	w, err := fwatch.New(rootFD)
	if err != nil {
		return nil
	}
	return w
}

// SetListing keeps v, the immutable result of a walk watched by w, in place
// of the previous listing. A nil w only drops the previous listing.
func (b *Bundle) SetListing(v any, w *fwatch.Watch) {
	if b == nil {
		if w != nil {
			w.Close()
		}
		return
	}
	b.lmu.Lock()
	defer b.lmu.Unlock()
	if b.watch != nil {
		b.watch.Close()
	}
	b.listing, b.watch = v, w
	if w == nil {
		b.listing = nil
	}
}

func (b *Bundle) dropListing() { b.SetListing(nil, nil) }
