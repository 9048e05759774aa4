package vecsearch

import (
	"container/heap"
	"math"
	"sort"
	"sync"
)

// Quantize scales v to unit length and rounds it to int8 with one scale
// per vector (v ≈ q·scale). A zero vector quantises to zeros, scale 0.
func Quantize(v []float32) (q []int8, scale float32) {
	var norm, maxAbs float64
	for _, x := range v {
		norm += float64(x) * float64(x)
		maxAbs = math.Max(maxAbs, math.Abs(float64(x)))
	}
	q = make([]int8, len(v))
	if norm == 0 {
		return q, 0
	}
	norm = math.Sqrt(norm)
	s := maxAbs / norm / 127
	for i, x := range v {
		q[i] = int8(math.Round(float64(x) / norm / s))
	}
	return q, float32(s)
}

// Entry is one embedded chunk of a note.
type Entry struct {
	Seq   int
	Vec   []int8
	Scale float32
}

// Match is a note's best chunk for a query.
type Match struct {
	Note  int64 // the note's row id in the index
	Seq   int   // its best chunk
	Score float32
}

// Store holds every embedded chunk in memory, one contiguous int8 array,
// for a brute-force scan. It is safe for concurrent use.
type Store struct {
	mu    sync.RWMutex
	dim   int
	words int // packedLen(dim)
	// packed holds slot i's vector at [i*words, (i+1)*words), packed for
	// packedDot; sums its sum of offset values.
	packed []uint64
	sums   []int64
	scales []float32
	notes  []int64 // 0: free slot
	seqs   []int32
	byNote map[int64][]int32
	free   []int32
}

// NewStore returns an empty store of vectors of dim dimensions.
func NewStore(dim int) *Store {
	return &Store{dim: dim, words: packedLen(dim), byNote: map[int64][]int32{}}
}

// Dim is the vector length.
func (s *Store) Dim() int { return s.dim }

// Len is the number of chunks held.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.notes) - len(s.free)
}

// Notes returns the row ids of the notes held.
func (s *Store) Notes() []int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]int64, 0, len(s.byNote))
	for n := range s.byNote {
		out = append(out, n)
	}
	return out
}

// SetNote replaces the chunks of note (none: removes it). Entries whose
// vector is not of the store's length are left out.
func (s *Store) SetNote(note int64, entries []Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, slot := range s.byNote[note] {
		s.notes[slot] = 0
		s.free = append(s.free, slot)
	}
	delete(s.byNote, note)
	var slots []int32
	for _, e := range entries {
		if len(e.Vec) != s.dim {
			continue
		}
		var slot int32
		if n := len(s.free); n > 0 {
			slot, s.free = s.free[n-1], s.free[:n-1]
		} else {
			slot = int32(len(s.notes))
			s.notes, s.scales, s.seqs, s.sums = append(s.notes, 0), append(s.scales, 0), append(s.seqs, 0), append(s.sums, 0)
			s.packed = append(s.packed, make([]uint64, s.words)...)
		}
		s.sums[slot] = pack(s.packed[int(slot)*s.words:(int(slot)+1)*s.words], e.Vec, false)
		s.notes[slot], s.scales[slot], s.seqs[slot] = note, e.Scale, int32(e.Seq)
		slots = append(slots, slot)
	}
	if len(slots) > 0 {
		s.byNote[note] = slots
	}
}

// Search returns the k notes whose best chunk is most similar to query
// (cosine similarity), best first, among the notes keep accepts (nil:
// all). Ties go to the lower note id.
func (s *Store) Search(query []float32, k int, keep func(note int64) bool) []Match {
	if len(query) != s.dim || k <= 0 {
		return nil
	}
	q8, qs := Quantize(query)
	q := make([]uint64, s.words)
	qsum := pack(q, q8, true)
	s.mu.RLock()
	defer s.mu.RUnlock()
	// One pass in slot order reads the vectors sequentially; a second,
	// note by note, keeps each note's best chunk.
	skipped := float32(math.Inf(-1))
	scores := make([]float32, len(s.notes))
	for slot, note := range s.notes {
		if note == 0 || (keep != nil && !keep(note)) {
			scores[slot] = skipped
			continue
		}
		i := slot * s.words
		scores[slot] = float32(packedDot(s.packed[i:i+s.words], q, s.sums[slot], qsum)) * qs * s.scales[slot]
	}
	h := &matchHeap{}
	for note, slots := range s.byNote {
		best := Match{Note: note, Score: skipped}
		for _, slot := range slots {
			if scores[slot] > best.Score {
				best.Seq, best.Score = int(s.seqs[slot]), scores[slot]
			}
		}
		switch {
		case best.Score == skipped: // not kept
		case h.Len() < k:
			heap.Push(h, best)
		case less((*h)[0], best):
			(*h)[0] = best
			heap.Fix(h, 0)
		}
	}
	out := []Match(*h)
	sort.Slice(out, func(i, j int) bool { return less(out[j], out[i]) })
	return out
}

// less orders matches by score, then by note id descending (so that the
// lower id ranks first).
func less(a, b Match) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Note > b.Note
}

type matchHeap []Match

func (h matchHeap) Len() int           { return len(h) }
func (h matchHeap) Less(i, j int) bool { return less(h[i], h[j]) }
func (h matchHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *matchHeap) Push(x any)        { *h = append(*h, x.(Match)) }
func (h *matchHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	*h = old[:len(old)-1]
	return m
}
