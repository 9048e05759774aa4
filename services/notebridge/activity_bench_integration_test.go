//go:build integration

package main

import (
	"flag"
	"os"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// TestRealJoplinActivityLogBench runs BenchmarkActivityLogGetNote against
// a real Joplin container and logs its figures (docs/benchmarks.md). It is
// a test rather than a benchmark because the real-Joplin helpers take a
// *testing.T, and runs only with NOTEBRIDGE_ACTIVITY_BENCH=1.
func TestRealJoplinActivityLogBench(t *testing.T) {
	if os.Getenv("NOTEBRIDGE_ACTIVITY_BENCH") != "1" {
		t.Skip("set NOTEBRIDGE_ACTIVITY_BENCH=1 to run the activity log's real-Joplin benchmark")
	}
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	if err := flag.Set("test.benchtime", "2000x"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r := testing.Benchmark(func(b *testing.B) { benchActivityGetNote(b, j.URL(), j.TokenFile) })
		if r.N == 0 {
			t.Fatal("the benchmark failed")
		}
		t.Logf("%d calls each: log %.0f ns, noop %.0f ns, none %.0f ns per call; log vs noop %+.2f %%, vs none %+.2f %%; %.0f log bytes per 10,000 calls",
			r.N, r.Extra["log-ns/call"], r.Extra["noop-ns/call"], r.Extra["none-ns/call"], r.Extra["log-vs-noop-%"], r.Extra["log-vs-none-%"], r.Extra["log-bytes/10k-calls"])
	}
}
