package joplinindex

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/testkit/embedtest"
	"github.com/notebridge/notebridge/pkg/testkit/searchcorpus"
)

// BenchmarkMeaning10k embeds the 10,000-note corpus with the stub
// provider at 768 dimensions (nomic-embed-text's), restarts without
// re-embedding, and measures hybrid and semantic queries: CPU per query
// (getrusage, the whole process, the indexer idle), the disk the vectors
// add, the heap the loaded vectors take, and how long a note written
// through notebridge takes to be found by meaning. Run with -benchtime=1x.
func BenchmarkMeaning10k(b *testing.B) {
	e := openBuilt(b)
	before := fileBytes(e.path)
	p := embedtest.New()
	defer p.Close()
	p.Dim = 768
	provider, err := embed.New(embed.Config{BaseURL: p.BaseURL(), Model: "stub-768"})
	if err != nil {
		b.Fatal(err)
	}
	start := func() *Indexer {
		x := New(e.c, Config{Path: e.path, Poll: 100 * time.Millisecond, Reconcile: time.Hour,
			Applied: func(w string) { e.applied <- w }, Meaning: MeaningConfig{Provider: provider}})
		x.Start()
		return x
	}
	for b.Loop() {
		t0 := time.Now()
		x := start()
		e.waitAny("meaning ready")
		b.ReportMetric(time.Since(t0).Seconds(), "embed-s")
		st := x.Status().Meaning
		b.ReportMetric(float64(st.Done), "chunks")
		x.Close()
		b.ReportMetric(float64(fileBytes(e.path)-before)/1e6, "vectors-disk-MB")

		reqs, _ := p.Count()
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		t0 = time.Now()
		x = start()
		e.waitAny("meaning ready")
		b.ReportMetric(ms(time.Since(t0)), "resume-ms")
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(int64(m1.HeapInuse)-int64(m0.HeapInuse))/1e6, "vectors-heap-MB")
		if again, _ := p.Count(); again != reqs {
			b.Fatalf("the restart sent %d embedding requests", again-reqs)
		}
		for _, mode := range []string{ModeKeyword, ModeHybrid, ModeSemantic} {
			cpu, wall := queryCost(b, x, mode)
			b.ReportMetric(cpu, mode+"-cpu-ms/query")
			b.ReportMetric(wall, mode+"-median-ms")
		}
		b.ReportMetric(ms(writeToMeaning(b, e)), "write-to-meaning-ms")
		x.Close()
	}
}

// queryCost runs the corpus queries in mode, their embeddings cached by
// a first round, and returns the CPU per query and the median wall time.
func queryCost(b *testing.B, x *Indexer, mode string) (cpuMS, medianMS float64) {
	queries := searchcorpus.Queries()
	opts := searchindex.Options{Limit: 20}
	for _, q := range queries {
		if _, err := x.SearchByMeaning(context.Background(), q, opts, mode); err != nil {
			b.Fatal(err)
		}
	}
	const rounds = 20
	var walls []time.Duration
	u0 := cpuTime()
	for range rounds {
		for _, q := range queries {
			t := time.Now()
			r, err := x.SearchByMeaning(context.Background(), q, opts, mode)
			if err != nil || r.Mode != mode {
				b.Fatalf("%q: %v, mode %s (%s)", q, err, r.Mode, r.Semantic)
			}
			walls = append(walls, time.Since(t))
		}
	}
	return ms(cpuTime()-u0) / float64(rounds*len(queries)), ms(median(walls))
}

// writeToMeaning creates a note through the indexer's client and returns
// the time until its chunks are embedded (searchable by meaning).
func writeToMeaning(b *testing.B, e *env) time.Duration {
	var out map[string]any
	t := time.Now()
	if err := e.c.Write(context.Background(), "POST", "/notes", nil, map[string]any{"title": "fresh", "body": "kitchen renovation budget"}, &out); err != nil {
		b.Fatal(err)
	}
	e.waitAny("embedded")
	return time.Since(t)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
