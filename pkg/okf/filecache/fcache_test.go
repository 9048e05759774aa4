package filecache

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/statkey"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

// clock is an injected time source tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// aged is a file key last changed an hour before t0.
func aged(size int64) statkey.Key {
	old := t0.Add(-time.Hour).UnixNano()
	return statkey.Key{Dev: 1, Ino: 7, Size: size, MtimeNs: old, CtimeNs: old}
}

func newTest(opt Options) (*Cache, *clock) {
	c := &clock{t: t0}
	opt.Clock = c.now
	return New(opt), c
}

// openRoot pins a fresh directory.
func openRoot(t *testing.T, dir string) *safefs.Root {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	r, err := safefs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestGetNeedsEveryStatField(t *testing.T) {
	c, _ := newTest(Options{})
	b := c.ForRoot(openRoot(t, ""))
	k := aged(100)
	b.Put("a.md", k, Summary, "v1", b.Now())
	if v, ok := b.Get("a.md", k, Summary); !ok || v != "v1" {
		t.Fatalf("hit = %v, %v", v, ok)
	}
	for name, mut := range map[string]func(*statkey.Key){
		"dev": func(k *statkey.Key) { k.Dev++ }, "ino": func(k *statkey.Key) { k.Ino++ }, "size": func(k *statkey.Key) { k.Size++ },
		"mtime": func(k *statkey.Key) { k.MtimeNs++ }, "ctime": func(k *statkey.Key) { k.CtimeNs++ },
	} {
		k2 := k
		mut(&k2)
		if _, ok := b.Get("a.md", k2, Summary); ok {
			t.Errorf("a different %s still hits", name)
		}
	}
	if _, ok := b.Get("b.md", k, Summary); ok {
		t.Error("another path hits")
	}
	if _, ok := b.Get("a.md", k, Problems); ok {
		t.Error("an unfilled slot hits")
	}
	// A new version of the file drops the old version's other slots.
	k3 := k
	k3.CtimeNs++
	b.Put("a.md", k3, Problems, "p", b.Now())
	if _, ok := b.Get("a.md", k3, Summary); ok {
		t.Error("a slot of the old version survived a new version")
	}
}

func TestRacyFilesAreNotStored(t *testing.T) {
	c, _ := newTest(Options{RacyWindow: 2 * time.Second})
	b := c.ForRoot(openRoot(t, ""))
	recent := t0.Add(-time.Second).UnixNano()
	future := t0.Add(time.Hour).UnixNano()
	for name, k := range map[string]statkey.Key{
		"mtime recent": {Size: 1, MtimeNs: recent, CtimeNs: aged(1).CtimeNs},
		"ctime recent": {Size: 1, MtimeNs: aged(1).MtimeNs, CtimeNs: recent},
		"mtime future": {Size: 1, MtimeNs: future, CtimeNs: aged(1).CtimeNs},
	} {
		b.Put(name, k, Summary, "v", b.Now())
		if _, ok := b.Get(name, k, Summary); ok {
			t.Errorf("%s: stored", name)
		}
	}
}

func TestIdleBundlesAreDropped(t *testing.T) {
	c, clk := newTest(Options{TTL: 10 * time.Minute})
	ra, rb := openRoot(t, ""), openRoot(t, "")
	a := c.ForRoot(ra)
	a.Put("x.md", aged(1), Summary, "v", a.Now())
	clk.add(9 * time.Minute)
	if got := c.ForRoot(ra); got != a || got.Len() != 1 {
		t.Fatal("a bundle used within its TTL was dropped")
	}
	clk.add(9 * time.Minute) // 9 minutes since the last use
	c.ForRoot(rb)
	if c.Len() != 2 {
		t.Fatalf("bundles = %d, want 2", c.Len())
	}
	clk.add(10 * time.Minute)
	c.ForRoot(rb) // any use sweeps idle bundles
	if c.Len() != 1 {
		t.Fatalf("bundles = %d after the TTL, want 1", c.Len())
	}
	if got := c.ForRoot(ra); got == a || got.Len() != 0 {
		t.Fatal("an idle bundle's entries survived its TTL")
	}
}

func TestLeastRecentlyUsedBundleGoes(t *testing.T) {
	c, clk := newTest(Options{MaxBundles: 2})
	ra, rb, rc := openRoot(t, ""), openRoot(t, ""), openRoot(t, "")
	a := c.ForRoot(ra)
	a.Put("x.md", aged(1), Summary, "v", a.Now())
	clk.add(time.Second)
	b := c.ForRoot(rb)
	clk.add(time.Second)
	c.ForRoot(ra) // a is now more recent than b
	clk.add(time.Second)
	c.ForRoot(rc)
	if c.Len() != 2 {
		t.Fatalf("bundles = %d, want 2", c.Len())
	}
	if c.ForRoot(ra) != a {
		t.Fatal("the most recently used bundle was dropped")
	}
	if c.ForRoot(rb) == b {
		t.Fatal("the least recently used bundle was kept")
	}
}

// TestReplacedRootGetsAFreshCache: a bundle path replaced by another
// directory is another bundle, keyed by the new root's device and inode.
func TestReplacedRootGetsAFreshCache(t *testing.T) {
	c, _ := newTest(Options{})
	base := t.TempDir()
	path := filepath.Join(base, "bundle")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	old := c.ForRoot(openRoot(t, path))
	old.Put("x.md", aged(1), Summary, "old", old.Now())
	// The old directory stays (renamed), so its inode cannot be reused.
	if err := os.Rename(path, filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	fresh := c.ForRoot(openRoot(t, path))
	if fresh == old || fresh.Len() != 0 {
		t.Fatal("the replacing directory shares the replaced one's cache")
	}
	if c.ForRoot(openRoot(t, filepath.Join(base, "moved"))) != old {
		t.Fatal("the moved directory lost its cache")
	}
}

func TestRetainDropsDeletedFiles(t *testing.T) {
	c, _ := newTest(Options{})
	b := c.ForRoot(openRoot(t, ""))
	for _, rel := range []string{"a.md", "b.md", "c.md"} {
		b.Put(rel, aged(1), Summary, rel, b.Now())
	}
	b.Retain(func(rel string) bool { return rel != "b.md" })
	if b.Len() != 2 {
		t.Fatalf("entries = %d, want 2", b.Len())
	}
	if _, ok := b.Get("b.md", aged(1), Summary); ok {
		t.Fatal("a deleted file is still cached")
	}
}

func TestMaxFilesClearsTheBundle(t *testing.T) {
	c, _ := newTest(Options{MaxFiles: 3})
	b := c.ForRoot(openRoot(t, ""))
	for i := range 4 {
		b.Put(fmt.Sprintf("%d.md", i), aged(1), Summary, "v", b.Now())
	}
	if b.Len() > 3 {
		t.Fatalf("entries = %d, bound 3", b.Len())
	}
}

func TestNilCachesNothing(t *testing.T) {
	var c *Cache
	b := c.ForRoot(openRoot(t, ""))
	b.Put("a.md", aged(1), Summary, "v", b.Now())
	if _, ok := b.Get("a.md", aged(1), Summary); ok || b.Len() != 0 {
		t.Fatal("a nil cache stored a value")
	}
	b.Retain(func(string) bool { return false })
}

// TestConcurrentUse is for -race: bundles, entries and eviction used from
// many goroutines at once.
func TestConcurrentUse(t *testing.T) {
	c, clk := newTest(Options{MaxBundles: 2, TTL: time.Minute})
	roots := []*safefs.Root{openRoot(t, ""), openRoot(t, ""), openRoot(t, "")}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				b := c.ForRoot(roots[(g+i)%len(roots)])
				rel := fmt.Sprintf("%d.md", i%17)
				b.Put(rel, aged(int64(i%3)), Slot(i%int(numSlots)), i, b.Now())
				b.Get(rel, aged(int64(i%3)), Slot(i%int(numSlots)))
				if i%50 == 0 {
					b.Retain(func(r string) bool { return r != rel })
					clk.add(time.Second)
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 2 {
		t.Fatalf("bundles = %d, bound 2", c.Len())
	}
}
