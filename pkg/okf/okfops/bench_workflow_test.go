package okfops

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

// benchDirs returns a fresh directory on the disk (fsyncs cost what they
// cost) and, when /dev/shm is a tmpfs, one in memory (fsync is free there,
// which is how the "fsyncs excluded" figures are taken).
func benchDirs(b *testing.B) map[string]string {
	dirs := map[string]string{"disk": b.TempDir()}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "okfbench")
		if err == nil {
			b.Cleanup(func() { os.RemoveAll(d) })
			dirs["tmpfs"] = d
		}
	}
	return dirs
}

func reportMedian(b *testing.B, took []time.Duration) {
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}

// benchPatchOps is a 10-operation patch over ten concepts of a genBundle;
// round makes every call's verification time new, so it always applies.
func benchPatchOps(dir string, round int) map[string]any {
	var ops []map[string]any
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("group%03d/concept%05d", i*7%100, (i*7%100)*100+i)
		ops = append(ops, map[string]any{"op": "ensure_verification", "concept_id": id, "by": "process:bench",
			"at": fmt.Sprintf("2026-08-01T%02d:%02d:%02dZ", i, round/60%60, round%60)})
	}
	return patchArgs(dir, ops...)
}

var benchRound int

// BenchmarkConceptPatch previews and applies a 10-operation patch on a
// 10,000-concept bundle, on disk and on tmpfs, reporting each median.
func BenchmarkConceptPatch(b *testing.B) {
	for place, root := range benchDirs(b) {
		dir := genBundleIn(b, root, 10000)
		time.Sleep(2100 * time.Millisecond) // past the digest cache's racy window
		h := newHarness(b, Config{})
		h.mustCall(b, "list_concepts", map[string]any{"bundle_path": dir})
		for _, phase := range []string{"preview", "apply"} {
			b.Run(place+"/"+phase, func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					benchRound++
					args := benchPatchOps(dir, benchRound)
					start := time.Now()
					prev := h.mustCall(b, "preview_concept_patch", args)
					mid := time.Now()
					if prev["status"] != "applicable" {
						b.Fatalf("preview: %v", prev["status"])
					}
					res := h.mustCall(b, "apply_concept_patch", applyArgs(prev, args))
					end := time.Now()
					if res["status"] != "applied" {
						b.Fatalf("apply: %v", res)
					}
					if phase == "preview" {
						took = append(took, mid.Sub(start))
					} else {
						took = append(took, end.Sub(mid))
					}
				}
				reportMedian(b, took)
			})
		}
	}
}

// BenchmarkMigration previews and applies the v0.1 → v0.2 migration of
// the largest v0.1 fixture (the spec authors' when NOTEBRIDGE_OKF_FIXTURES
// names them, otherwise the project's own) and of a generated
// 5,000-concept v0.1 bundle (preview + apply per iteration, each on a
// fresh copy).
func BenchmarkMigration(b *testing.B) {
	fsys := okftest.ForBenchmark(b)
	largest := ""
	best := 0
	names, err := okftest.Bundles(fsys)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range names {
		if !strings.HasPrefix(name, "v0.1/") {
			continue
		}
		dir := okftest.Copy(b, fsys, name)
		if n := len(conceptIDs(b, dir)); n > best {
			largest, best = name, n
		}
	}
	h := newHarness(b, Config{})
	cases := []struct {
		name string
		make func() string
	}{
		{fmt.Sprintf("fixture-%s-%d", path.Base(largest), best), func() string { return okftest.Copy(b, fsys, largest) }},
		{"generated-5000", func() string { return genV01Bundle(b, b.TempDir(), 5000) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var prevT, applyT []time.Duration
			for b.Loop() {
				b.StopTimer()
				dir := c.make()
				b.StartTimer()
				start := time.Now()
				prev, args := migrateFully(b, h, dir)
				mid := time.Now()
				res := h.mustCall(b, "apply_v02_migration", migrateApply(prev, args))
				end := time.Now()
				if res["status"] != "applied" {
					b.Fatalf("apply: %v", res)
				}
				prevT, applyT = append(prevT, mid.Sub(start)), append(applyT, end.Sub(mid))
			}
			sort.Slice(prevT, func(i, j int) bool { return prevT[i] < prevT[j] })
			b.ReportMetric(float64(prevT[len(prevT)/2].Microseconds())/1000, "preview-p50-ms")
			reportMedian(b, applyT)
		})
	}
}
