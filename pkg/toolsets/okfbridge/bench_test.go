package okfbridge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkExport5000 exports a notebook of 5,000 notes of about 2 KB
// (every tenth linking the next) from the fake Joplin over HTTP into a
// fresh bundle through the OKF store, then again unchanged (nothing is
// written), then previews the import back; it reports each step's time.
//
//	go test ./pkg/toolsets/okfbridge -run '^$' -bench Export5000 -benchtime 1x
func BenchmarkExport5000(b *testing.B) {
	h, _ := newHarness(b, nil)
	nb := h.folder(b, "Research", "")
	body := strings.Repeat("A line of a long research note about sources and findings.\n", 34)
	var prev string
	for i := range 5000 {
		text := body
		if i%10 == 1 {
			text += "See [the previous note](:/" + prev + ").\n"
		}
		prev = h.note(b, nb, fmt.Sprintf("Note %04d", i), text, nil)
	}
	round := 0
	for b.Loop() {
		// A fresh bundle under the same allowed root each round.
		round++
		h2 := *h
		h2.bundle = filepath.Join(filepath.Dir(h.bundle), fmt.Sprintf("bundle-%d", round))
		if err := os.Mkdir(h2.bundle, 0o700); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		first := h2.export(b, nb)
		b.ReportMetric(time.Since(t0).Seconds(), "first-export-s")
		t0 = time.Now()
		second := h2.export(b, nb)
		b.ReportMetric(time.Since(t0).Seconds(), "unchanged-export-s")
		t0 = time.Now()
		h2.preview(b, nb)
		b.ReportMetric(time.Since(t0).Seconds(), "import-preview-s")
		if first.Notes != 5000 || second.Changed {
			b.Fatalf("first export %d notes, second changed %v", first.Notes, second.Changed)
		}
	}
}
