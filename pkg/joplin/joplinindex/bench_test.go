package joplinindex

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/testkit/searchcorpus"
)

// benchNotes is the corpus size of the 10k benchmarks: 10,000 notes, or
// NOTEBRIDGE_BENCH_NOTES to measure another scale (e.g. 50000).
func benchNotes(b *testing.B) int {
	v := os.Getenv("NOTEBRIDGE_BENCH_NOTES")
	if v == "" {
		return 10_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("NOTEBRIDGE_BENCH_NOTES=%q is no positive number", v)
	}
	return n
}

// seedBench fills the fake with the benchmark corpus (benchNotes) in 5
// notebooks and returns the text size (titles and bodies).
func seedBench(b *testing.B, e *env) int64 {
	var folders []string
	for i := 0; i < 5; i++ {
		var out map[string]any
		if err := e.c.Write(context.Background(), "POST", "/folders", nil, map[string]any{"title": "Notebook " + strconv.Itoa(i)}, &out); err != nil {
			b.Fatal(err)
		}
		folders = append(folders, out["id"].(string))
	}
	var text int64
	for i, n := range searchcorpus.Notes(benchNotes(b)) {
		if err := e.c.Write(context.Background(), "POST", "/notes", nil, map[string]any{"title": n.Title, "body": n.Body, "parent_id": folders[i%5]}, nil); err != nil {
			b.Fatal(err)
		}
		text += int64(len(n.Title) + len(n.Body))
	}
	return text
}

// procKB reads a Vm line of /proc/self/status, in KiB.
func procKB(b *testing.B, field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("needs /proc")
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// fileBytes sums the index file and its -wal and -shm companions.
func fileBytes(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkBuild10k builds the index of 10,000 notes of about 2 KB from
// the in-process fake (HTTP included) and reports the build time, the peak
// RSS above the RSS just before the build (the fake and its corpus are in
// both; the fake's answer encoding is counted against the build) and the
// index size on disk against the text size. Run with -benchtime=1x.
func BenchmarkBuild10k(b *testing.B) {
	e := newBenchEnv(b)
	text := seedBench(b, e)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e.path = filepath.Join(b.TempDir(), "index.db")
		runtime.GC()
		debug.FreeOSMemory()
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Logf("cannot reset the peak RSS: %v", err)
		}
		idle := procKB(b, "VmRSS")
		x := New(e.c, Config{Path: e.path, Poll: time.Hour, Reconcile: time.Hour, Applied: func(w string) { e.applied <- w }})
		start := time.Now()
		b.StartTimer()
		x.Start()
		e.waitAny("built")
		b.StopTimer()
		b.ReportMetric(time.Since(start).Seconds(), "build-s")
		b.ReportMetric(float64(procKB(b, "VmHWM")-idle)/1024, "peakMiB-above-idle")
		b.ReportMetric(float64(fileBytes(e.path))/float64(text), "disk/text")
		b.ReportMetric(float64(text)/(1<<20), "text-MiB")
		x.Close()
	}
}

// newBenchEnv is newEnv for a benchmark.
func newBenchEnv(b *testing.B) *env {
	t := &testing.T{}
	e := newEnvAt(t, b.TempDir(), b.Cleanup)
	return e
}

// openBuilt builds the corpus index once and returns its environment.
func openBuilt(b *testing.B) *env {
	e := newBenchEnv(b)
	seedBench(b, e)
	x := New(e.c, Config{Path: e.path, Poll: time.Hour, Reconcile: time.Hour, Applied: func(w string) { e.applied <- w }})
	x.Start()
	e.waitAny("built")
	x.Close()
	return e
}

// BenchmarkQuery10k runs the query mix (top 20, with snippets) against
// the built index and reports the median and the slowest query's median.
func BenchmarkQuery10k(b *testing.B) {
	e := openBuilt(b)
	ix, err := searchindex.Open(context.Background(), e.path)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	queries := searchcorpus.Queries()
	var all []time.Duration
	per := map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, qs := range queries {
			q, err := searchindex.Parse(qs, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if _, err := ix.Search(context.Background(), q, searchindex.Options{Limit: 20}); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			all, per[qs] = append(all, d), append(per[qs], d)
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(median(all)), "median-ms")
	worst := time.Duration(0)
	for _, qs := range queries {
		m := median(per[qs])
		b.Logf("%-26q median %v", qs, m)
		worst = max(worst, m)
	}
	b.ReportMetric(ms(worst), "worst-query-median-ms")
}

// BenchmarkResume10k opens a built 10,000-note index as a restarted bridge
// does, until it answers searches.
func BenchmarkResume10k(b *testing.B) {
	e := openBuilt(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x := New(e.c, Config{Path: e.path, Poll: time.Hour, Reconcile: time.Hour, Applied: func(w string) { e.applied <- w }})
		start := time.Now()
		x.Start()
		if got := e.waitAny("resumed", "built"); got != "resumed" {
			b.Fatalf("rebuilt instead of resuming")
		}
		b.ReportMetric(ms(time.Since(start)), "resume-ms")
		b.StopTimer()
		x.Close()
		b.StartTimer()
	}
}

func (e *env) waitAny(want ...string) string {
	for s := range e.applied {
		if slices.Contains(want, s) {
			return s
		}
	}
	return ""
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
