package okfops

import (
	"encoding/json"
	"fmt"
	"sort"
	"syscall"
	"testing"
	"time"
)

// The benchmarks below measure the manifest cache (issue 14 item 5) on a
// 10,000-concept bundle whose files are older than the cache's racy
// window, as a long-lived server sees them. They call only operations, so
// the same file runs unchanged against the code before the cache, which is
// how the before/after figures in docs/benchmarks.md are taken.

// agedBundle is genBundle(10000) aged past the 2 s racy window.
func agedBundle(b *testing.B) string {
	dir := genBundle(b, 10000)
	time.Sleep(2100 * time.Millisecond)
	return dir
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuTime is the process's user plus system CPU time so far: on a shared
// machine it moves less with other load than wall time does.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// listAllPages lists every concept in pages of 1,000.
func listAllPages(b *testing.B, call func(map[string]any) map[string]any, dir string) {
	for offset := 0; ; offset += 1000 {
		res := call(map[string]any{"bundle_path": dir, "limit": 1000, "offset": offset})
		if more, _ := res["has_more"].(bool); !more {
			return
		}
	}
}

// BenchmarkCacheReads is each cached read on 10,000 concepts: first-ms is
// the first call in the process (cache empty), ns/op the steady state and
// cpu-ms/op its CPU time (all threads). list_all_pages is all ten pages of
// 1,000.
func BenchmarkCacheReads(b *testing.B) {
	dir := agedBundle(b)
	for _, name := range []string{"list_all_pages", "validate_bundle", "search_concepts", "get_neighbors"} {
		b.Run(name, func(b *testing.B) {
			ex, op := benchExec(b), name
			if name == "list_all_pages" {
				op = "list_concepts"
			}
			call := func(args map[string]any) map[string]any {
				var m map[string]any
				if err := json.Unmarshal(benchCall(b, ex, op, args), &m); err != nil {
					b.Fatal(err)
				}
				return m
			}
			once := func() {
				switch name {
				case "list_all_pages":
					listAllPages(b, call, dir)
				case "search_concepts":
					call(map[string]any{"bundle_path": dir, "query": "no such words anywhere"})
				case "get_neighbors":
					call(map[string]any{"bundle_path": dir, "concept_id": "group050/concept05000"})
				default:
					call(map[string]any{"bundle_path": dir})
				}
			}
			start := time.Now()
			once()
			first := time.Since(start)
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for b.Loop() {
				once()
			}
			b.ReportMetric(ms(first), "first-ms")
			b.ReportMetric(ms(cpuTime(b)-cpu0)/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkWriteSeries is 20 write_concept calls in a fresh process (run
// it with -benchtime 1x: one series per process), reporting the first
// call, and the median and worst including the first.
func BenchmarkWriteSeries(b *testing.B) {
	for _, warm := range []string{"none", "validate_first"} {
		b.Run("warm="+warm, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				dir := agedBundle(b)
				ex := benchExec(b)
				if warm == "validate_first" {
					benchCall(b, ex, "validate_bundle", map[string]any{"bundle_path": dir})
				}
				b.StartTimer()
				var took []time.Duration
				for i := range 20 {
					content := fmt.Sprintf("---\ntype: Metric\ntitle: Rewritten %d\nstale_after: 2027-01-01T00:00:00Z\n---\n\n# Definition\n\nVersion %d.\n", i, i)
					start := time.Now()
					benchCall(b, ex, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "group000/concept00042", "content": content})
					took = append(took, time.Since(start))
				}
				b.ReportMetric(ms(took[0]), "first-ms")
				sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
				b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
				b.ReportMetric(ms(took[len(took)-1]), "max-ms")
			}
		})
	}
}
