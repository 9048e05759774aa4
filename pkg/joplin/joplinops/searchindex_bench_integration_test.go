//go:build integration

package joplinops_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
	"github.com/notebridge/notebridge/pkg/testkit/searchcorpus"
)

// TestRealJoplinSearchBench10k seeds a real Joplin with the 10,000-note
// benchmark corpus, restarts it (its search indexes at start), builds
// notebridge's index from it, then times every query of the mix (top 20)
// through notebridge's search tool and through Joplin's /search, side by
// side. It takes minutes (seeding), so it runs only with
// NOTEBRIDGE_SEARCH_BENCH=1 (see docs/benchmarks.md); it is a test rather
// than a benchmark because the real-Joplin helpers take a *testing.T.
func TestRealJoplinSearchBench10k(b *testing.T) {
	if os.Getenv("NOTEBRIDGE_SEARCH_BENCH") != "1" {
		b.Skip("set NOTEBRIDGE_SEARCH_BENCH=1 to run the 10,000-note real-Joplin search benchmark")
	}
	j := joplintc.Start(b, mcptest.ModuleRoot(b))
	c := newClient(b, j)
	ctx := context.Background()
	var nb struct {
		ID string `json:"id"`
	}
	if err := c.Write(ctx, "POST", "/folders", nil, map[string]any{"title": "Bench"}, &nb); err != nil {
		b.Fatal(err)
	}
	notes := searchcorpus.Notes(10_000)
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := c.Write(ctx, "POST", "/notes", nil, map[string]any{"title": notes[i].Title, "body": notes[i].Body, "parent_id": nb.ID}, nil); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := range notes {
		work <- i
	}
	close(work)
	wg.Wait()
	b.Logf("seeded 10,000 notes in %v", time.Since(start).Round(time.Second))
	j.Restart(b)
	start = time.Now()
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(time.Second) {
		if len(joplinSearchIDs(b, c, strconv.Itoa(len(notes)-1))) > 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("Joplin's search never indexed the corpus")
		}
	}
	b.Logf("Joplin's own index was ready %v after its restart", time.Since(start).Round(time.Second))

	br := newIndexedBridge(b, c, filepath.Join(b.TempDir(), "index.db"))
	start = time.Now()
	br.x.Start()
	br.waitFor(b, "built")
	b.Logf("notebridge's index built from the real Joplin in %v", time.Since(start).Round(100*time.Millisecond))

	var ours, theirs []time.Duration
	for _, q := range searchcorpus.Queries() {
		var o, j []time.Duration
		for k := 0; k < 15; k++ {
			s := time.Now()
			if _, derr := br.ex.Call(ctx, principal.Stdio(), registry.MCPStdio, "search", []byte(fmt.Sprintf(`{"query":%q,"limit":20}`, q))); derr != nil {
				b.Fatal(derr)
			}
			o = append(o, time.Since(s))
			s = time.Now()
			var page struct{}
			if err := c.Get(ctx, "/search", url.Values{"query": {q}, "limit": {"20"}, "fields": {"id,title,parent_id,deleted_time"}}, &page); err != nil {
				b.Fatal(err)
			}
			j = append(j, time.Since(s))
		}
		mo, mj := median(o), median(j)
		b.Logf("%-26q notebridge %8v  Joplin %8v  ratio %.2f", q, mo.Round(10*time.Microsecond), mj.Round(10*time.Microsecond), float64(mo)/float64(mj))
		ours, theirs = append(ours, o...), append(theirs, j...)
	}
	b.Logf("all queries: notebridge median %v, Joplin median %v, ratio %.2f", median(ours).Round(10*time.Microsecond),
		median(theirs).Round(10*time.Microsecond), float64(median(ours))/float64(median(theirs)))
}
