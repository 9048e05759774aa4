package vecsearch

import (
	"fmt"
	"testing"
)

// BenchmarkSearch30k scans 30,000 chunks (about 10,000 notes of three
// chunks) for the top 50 notes, at the dimensions of common embedding
// models; it reports recall@10 against exact float32 cosine and the bytes
// of vectors held.
func BenchmarkSearch30k(b *testing.B) {
	for _, dim := range []int{384, 768, 1024} {
		b.Run(fmt.Sprintf("dim%d", dim), func(b *testing.B) {
			const chunks, notes = 30_000, 10_000
			vecs, qs := clustered(chunks, dim, 20, 2)
			s := NewStore(dim)
			for n := range notes {
				var es []Entry
				for c := range 3 {
					q, sc := Quantize(vecs[n*3+c])
					es = append(es, Entry{Seq: c, Vec: q, Scale: sc})
				}
				s.SetNote(int64(n+1), es)
			}
			recall := chunkRecall(s, vecs, qs)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				s.Search(qs[i%len(qs)], 50, nil)
			}
			b.ReportMetric(recall, "recall@10")
			b.ReportMetric(float64(8*len(s.packed)+8*len(s.sums)+4*len(s.scales)+8*len(s.notes)+4*len(s.seqs))/1e6, "MB")
		})
	}
}

// chunkRecall is recall@10 of notes, a note scoring its best chunk.
func chunkRecall(s *Store, vecs, qs [][]float32) float64 {
	found := 0
	for _, q := range qs {
		best := map[int64]float64{}
		for i, v := range vecs {
			n := int64(i/3 + 1)
			if c := cosine(v, q); c > best[n] || best[n] == 0 {
				best[n] = c
			}
		}
		var top []int64
		for range 10 {
			var bn int64
			for n, c := range best {
				if bn == 0 || c > best[bn] || (c == best[bn] && n < bn) {
					bn = n
				}
			}
			top = append(top, bn)
			delete(best, bn)
		}
		for _, m := range s.Search(q, 10, nil) {
			for _, t := range top {
				if t == m.Note {
					found++
				}
			}
		}
	}
	return float64(found) / float64(10*len(qs))
}
