package okfops

import (
	"runtime"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

// BenchmarkManifestCacheMemory fills every slot of a fresh manifest cache
// for 10,000 concepts (list, validate, search, neighbours and a revision)
// and reports the heap it keeps after a GC, in MiB. The cache's clock runs
// an hour ahead so the fresh files are cached without waiting.
func BenchmarkManifestCacheMemory(b *testing.B) {
	dir := genBundle(b, 10000)
	for b.Loop() {
		b.StopTimer()
		c := agedCache()
		reg, err := registry.New(Operations(Config{Cache: c})...)
		if err != nil {
			b.Fatal(err)
		}
		ex, err := executor.New(reg, executor.DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		benchCall(b, ex, "list_concepts", map[string]any{"bundle_path": dir, "limit": 1000})
		benchCall(b, ex, "validate_bundle", map[string]any{"bundle_path": dir})
		benchCall(b, ex, "search_concepts", map[string]any{"bundle_path": dir, "query": "no such words"})
		benchCall(b, ex, "get_neighbors", map[string]any{"bundle_path": dir, "concept_id": "group000/concept00001"})
		benchCall(b, ex, "preview_concept_patch", map[string]any{"bundle_path": dir, "operations": []any{
			map[string]any{"op": "set_lifecycle", "concept_id": "group000/concept00001", "status": "deprecated"}}})
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		root, err := safefs.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		files := c.ForRoot(root).Len()
		root.Close()
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MiB")
		b.ReportMetric(float64(files), "files")
		runtime.KeepAlive(ex)
		b.StartTimer()
	}
}
