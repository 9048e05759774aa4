package vecsearch

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestSplitAtHeadingsOutsideFences(t *testing.T) {
	body := "intro line\n\n# Budget\nwe agreed 12k\n```\n# not a heading\n```\n## Schedule\nMarch\n"
	cs := Split("Kitchen", body)
	var heads []string
	for _, c := range cs {
		heads = append(heads, c.Heading)
		if !strings.HasPrefix(c.Text, "Kitchen\n") {
			t.Errorf("chunk %q lacks the title", c.Text)
		}
		if c.Start > c.End || c.End > len(body) {
			t.Errorf("bad span %d..%d", c.Start, c.End)
		}
	}
	if want := []string{"", "Budget", "Schedule"}; !slices.Equal(heads, want) {
		t.Fatalf("headings %q, want %q", heads, want)
	}
	if !strings.Contains(cs[1].Text, "# not a heading") {
		t.Errorf("a fenced # line split the section: %q", cs[1].Text)
	}
}

func TestSplitLongSectionsAndEmptyNotes(t *testing.T) {
	para := strings.Repeat("word ", 100) // 500 bytes
	body := strings.Join([]string{para, para, para, para}, "\n\n")
	cs := Split("t", body)
	if len(cs) < 2 {
		t.Fatalf("%d chunks for %d bytes", len(cs), len(body))
	}
	end := 0
	for _, c := range cs {
		if c.End-c.Start > MaxChunkBytes {
			t.Errorf("chunk of %d bytes", c.End-c.Start)
		}
		if c.Start != end {
			t.Errorf("gap or overlap at %d (chunk starts %d)", end, c.Start)
		}
		end = c.End
	}
	if end != len(body) {
		t.Errorf("chunks end at %d of %d", end, len(body))
	}
	// No space at all: cut at a rune boundary.
	for _, c := range Split("", strings.Repeat("é", 2000)) {
		if !strings.HasPrefix(strings.Repeat("é", 2000)[c.Start:], "é") {
			t.Errorf("cut inside a rune at %d", c.Start)
		}
	}
	if cs := Split("Only a title", ""); len(cs) != 1 || cs[0].Text != "Only a title" {
		t.Errorf("title-only note: %+v", cs)
	}
	if cs := Split("", "  \n"); len(cs) != 1 || cs[0].Hash != [16]byte{} {
		t.Errorf("empty note: %+v, want one chunk with no hash", cs)
	}
}

func TestEditKeepsTheHashesOfUntouchedChunks(t *testing.T) {
	before := Split("Plan", "# A\nalpha\n# B\nbeta\n# C\ngamma\n")
	after := Split("Plan", "# A\nalpha\n# B\nbeta changed\n# C\ngamma\n")
	if before[0].Hash != after[0].Hash || before[2].Hash != after[2].Hash {
		t.Error("an untouched chunk changed hash")
	}
	if before[1].Hash == after[1].Hash {
		t.Error("the edited chunk kept its hash")
	}
	if renamed := Split("Plan v2", "# A\nalpha\n"); renamed[0].Hash == before[0].Hash {
		t.Error("a title change kept the hash (the title is embedded with every chunk)")
	}
}

func TestSearchKnownAnswers(t *testing.T) {
	s := NewStore(3)
	add := func(note int64, vecs ...[]float32) {
		var es []Entry
		for i, v := range vecs {
			q, sc := Quantize(v)
			es = append(es, Entry{Seq: i, Vec: q, Scale: sc})
		}
		s.SetNote(note, es)
	}
	add(1, []float32{1, 0, 0}, []float32{0, 0, 1}) // best chunk for z: seq 1
	add(2, []float32{0, 1, 0})
	add(3, []float32{1, 1, 0})
	add(4, []float32{-1, 0, 0})
	got := s.Search([]float32{1, 0.1, 0}, 3, nil)
	if len(got) != 3 || got[0].Note != 1 || got[1].Note != 3 || got[2].Note != 2 {
		t.Fatalf("x-ish query: %+v, want notes 1, 3, 2", got)
	}
	if math.Abs(float64(got[0].Score)-0.995) > 0.02 {
		t.Errorf("cosine %v, want about 0.995", got[0].Score)
	}
	if got := s.Search([]float32{0, 0, 5}, 1, nil); got[0].Note != 1 || got[0].Seq != 1 {
		t.Errorf("z query: %+v, want note 1 chunk 1", got)
	}
	if got := s.Search([]float32{1, 0, 0}, 2, func(n int64) bool { return n != 1 }); got[0].Note != 3 {
		t.Errorf("filtered: %+v, want note 3 first", got)
	}
	add(1) // removed
	s.SetNote(5, []Entry{{Vec: make([]int8, 2)}})
	if s.Len() != 3 || len(s.Search([]float32{0, 0, 1}, 10, nil)) != 3 {
		t.Errorf("after removal: %d chunks", s.Len())
	}
	add(6, []float32{0, 0, 1}) // reuses freed slots
	if got := s.Search([]float32{0, 0, 1}, 1, nil); got[0].Note != 6 {
		t.Errorf("reused slot: %+v", got)
	}
}

func TestFuseKnownAnswers(t *testing.T) {
	// b: ranks 2 and 1 → 1/62 + 1/61; a: rank 1 only → 1/61; c: 1/63 + 1/62.
	got := Fuse([]string{"a", "b", "c"}, []string{"b", "c", "d"})
	if want := []string{"b", "c", "a", "d"}; !slices.Equal(got, want) {
		t.Fatalf("fused %q, want %q", got, want)
	}
	// Equal scores: the better single rank wins, then the earlier list.
	if got := Fuse([]string{"x", "y"}, []string{"y", "x"}); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("tie: %q", got)
	}
	if got := Fuse(nil, []string{"s"}); !slices.Equal(got, []string{"s"}) {
		t.Errorf("one list: %q", got)
	}
}

// TestQuantisedRecall measures recall@10 of the int8 scan against exact
// float32 cosine on clustered vectors, like embeddings of related notes.
func TestQuantisedRecall(t *testing.T) {
	const n, dim, queries = 3000, 256, 50
	vecs, qs := clustered(n, dim, queries, 1)
	s := NewStore(dim)
	for i, v := range vecs {
		q, sc := Quantize(v)
		s.SetNote(int64(i+1), []Entry{{Vec: q, Scale: sc}})
	}
	if r := recallAt10(s, vecs, qs); r < 0.95 {
		t.Errorf("recall@10 %.3f, want ≥ 0.95", r)
	}
}

func recallAt10(s *Store, vecs, qs [][]float32) float64 {
	found := 0
	for _, q := range qs {
		exact := exactTop(vecs, q, 10)
		for _, m := range s.Search(q, 10, nil) {
			if slices.Contains(exact, m.Note) {
				found++
			}
		}
	}
	return float64(found) / float64(10*len(qs))
}

func exactTop(vecs [][]float32, q []float32, k int) []int64 {
	type sc struct {
		note  int64
		score float64
	}
	all := make([]sc, len(vecs))
	for i, v := range vecs {
		all[i] = sc{int64(i + 1), cosine(v, q)}
	}
	slices.SortFunc(all, func(a, b sc) int {
		if a.score > b.score {
			return -1
		}
		if a.score < b.score {
			return 1
		}
		return 0
	})
	out := make([]int64, k)
	for i := range out {
		out[i] = all[i].note
	}
	return out
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// clustered returns n vectors around n/30 random centres and queries near
// random vectors' centres.
func clustered(n, dim, queries int, seed int64) (vecs, qs [][]float32) {
	r := rand.New(rand.NewSource(seed))
	centres := make([][]float32, max(n/30, 1))
	for i := range centres {
		centres[i] = gauss(r, dim, 1)
	}
	near := func(c []float32, spread float64) []float32 {
		v := gauss(r, dim, spread)
		for i := range v {
			v[i] += c[i]
		}
		return v
	}
	for range n {
		vecs = append(vecs, near(centres[r.Intn(len(centres))], 0.6))
	}
	for range queries {
		qs = append(qs, near(centres[r.Intn(len(centres))], 0.8))
	}
	return vecs, qs
}

func gauss(r *rand.Rand, dim int, sd float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64() * sd)
	}
	return v
}
