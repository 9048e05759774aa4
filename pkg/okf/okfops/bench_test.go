package okfops

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

var benchSizes = []int{1000, 10000}

func benchExec(b *testing.B) *executor.Executor { return benchExecWith(b, Config{}) }

// coldExec is an executor with an empty manifest cache of its own, for
// figures of a call with nothing cached.
func coldExec(b *testing.B) *executor.Executor {
	return benchExecWith(b, Config{Cache: filecache.New(filecache.DefaultOptions)})
}

func benchExecWith(b *testing.B, cfg Config) *executor.Executor {
	reg, err := registry.New(Operations(cfg)...)
	if err != nil {
		b.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		b.Fatal(err)
	}
	return ex
}

func benchCall(b *testing.B, ex *executor.Executor, name string, args map[string]any) json.RawMessage {
	raw, _ := json.Marshal(args)
	out, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, raw)
	if derr != nil {
		b.Fatalf("%s: %v", name, derr)
	}
	return out
}

// BenchmarkListConcepts is list_concepts over a whole bundle, first page,
// each iteration a fresh call with an empty manifest cache (the warm
// figures are BenchmarkCacheReads).
func BenchmarkListConcepts(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("concepts=%d", n), func(b *testing.B) {
			dir := genBundle(b, n)
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				ex := coldExec(b)
				b.StartTimer()
				benchCall(b, ex, "list_concepts", map[string]any{"bundle_path": dir})
			}
		})
	}
}

// BenchmarkValidateBundle is validate_bundle over a whole bundle, each
// iteration with an empty manifest cache.
func BenchmarkValidateBundle(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("concepts=%d", n), func(b *testing.B) {
			dir := genBundle(b, n)
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				ex := coldExec(b)
				b.StartTimer()
				benchCall(b, ex, "validate_bundle", map[string]any{"bundle_path": dir})
			}
		})
	}
}

// BenchmarkRevision computes the bundle revision: "hash" hashes every file,
// "cached" reuses the stat-keyed digest cache for unchanged files.
func BenchmarkRevision(b *testing.B) {
	for _, n := range benchSizes {
		dir := genBundle(b, n)
		// Age the files past the cache's racy window so "cached" can trust them.
		time.Sleep(2100 * time.Millisecond)
		root, err := safefs.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []string{"hash", "cached"} {
			b.Run(fmt.Sprintf("concepts=%d/%s", n, mode), func(b *testing.B) {
				if _, err := store.Snapshot(root, store.DefaultLimits, true); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if _, err := store.Snapshot(root, store.DefaultLimits, mode == "cached"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		root.Close()
	}
}

// BenchmarkWriteConcept is write_concept end to end through the executor,
// fsyncs included, each iteration new content for one concept. It reports
// the median as p50-ms.
func BenchmarkWriteConcept(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("concepts=%d", n), func(b *testing.B) {
			dir, ex := genBundle(b, n), benchExec(b)
			// Steady state: files older than the digest cache's racy window,
			// and one write to warm the process (as a long-lived server is).
			time.Sleep(2100 * time.Millisecond)
			benchCall(b, ex, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "group000/concept00042", "content": "---\ntype: Metric\n---\n"})
			var took []time.Duration
			i := 0
			b.ResetTimer()
			for b.Loop() {
				i++
				content := fmt.Sprintf("---\ntype: Metric\ntitle: Rewritten %d\nstale_after: 2027-01-01T00:00:00Z\n---\n\n# Definition\n\nVersion %d.\n", i, i)
				start := time.Now()
				benchCall(b, ex, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "group000/concept00042", "content": content})
				took = append(took, time.Since(start))
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

// dropPageCache empties the kernel page cache so the next read comes from
// the disk. It needs root; benchmarks that use it skip without.
func dropPageCache(b *testing.B) {
	syscall.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200); err != nil {
		b.Skipf("cannot drop the page cache (needs root): %v", err)
	}
}

// BenchmarkColdDisk runs list_concepts and validate_bundle on 10,000
// concepts with the page cache dropped and an empty manifest cache before
// every call: every file is read from the disk.
func BenchmarkColdDisk(b *testing.B) {
	dir := genBundle(b, 10000)
	for _, name := range []string{"list_concepts", "validate_bundle"} {
		b.Run(name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				b.StopTimer()
				ex := coldExec(b)
				dropPageCache(b)
				b.StartTimer()
				start := time.Now()
				benchCall(b, ex, name, map[string]any{"bundle_path": dir})
				took = append(took, time.Since(start))
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}
