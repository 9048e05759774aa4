package vecsearch

import (
	"math/rand"
	"testing"
)

// plainDot is the int8 dot product written out: the reference packedDot
// must equal.
func plainDot(a, b []int8) int32 {
	var s int32
	for i := range a {
		s += int32(a[i]) * int32(b[i])
	}
	return s
}

func packPair(a, q []int8) (pa, pq []uint64, sa, sq int64) {
	pa, pq = make([]uint64, packedLen(len(a))), make([]uint64, packedLen(len(q)))
	return pa, pq, pack(pa, a, false), pack(pq, q, true)
}

// TestPackedDotIsExact: over random vectors of every length from 1 to 70
// and the common model dimensions, and the extremes (every value −128 or
// 127, where the lanes come closest to carrying), the packed product is
// the plain one exactly.
func TestPackedDotIsExact(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	random := func(n int) []int8 {
		v := make([]int8, n)
		for i := range v {
			v[i] = int8(r.Intn(256) - 128)
		}
		return v
	}
	same := func(n int, v int8) []int8 {
		out := make([]int8, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	check := func(a, q []int8) {
		t.Helper()
		pa, pq, sa, sq := packPair(a, q)
		if got, want := packedDot(pa, pq, sa, sq), plainDot(a, q); got != want {
			t.Fatalf("dim %d: packed %d, plain %d", len(a), got, want)
		}
	}
	dims := []int{384, 512, 768, 1024, 1536, 3072}
	for n := 1; n <= 70; n++ {
		dims = append(dims, n)
	}
	for _, n := range dims {
		for range 20 {
			check(random(n), random(n))
		}
		for _, x := range []int8{-128, 127, 0, -1} {
			for _, y := range []int8{-128, 127, 0, 1} {
				check(same(n, x), same(n, y))
			}
		}
	}
}

func FuzzPackedDot(f *testing.F) {
	f.Add([]byte{0x80, 0x7f, 0x00, 0x01, 0xff}, []byte{0x7f, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, x, y []byte) {
		n := min(len(x), len(y))
		a, q := make([]int8, n), make([]int8, n)
		for i := range n {
			a[i], q[i] = int8(x[i]), int8(y[i])
		}
		pa, pq, sa, sq := packPair(a, q)
		if got, want := packedDot(pa, pq, sa, sq), plainDot(a, q); got != want {
			t.Fatalf("packed %d, plain %d for %v · %v", got, want, a, q)
		}
	})
}

// BenchmarkDot768 sets the packed product beside the plain loop, at 768
// dimensions, in one run.
func BenchmarkDot768(b *testing.B) {
	r := rand.New(rand.NewSource(4))
	a, q := make([]int8, 768), make([]int8, 768)
	for i := range a {
		a[i], q[i] = int8(r.Intn(256)-128), int8(r.Intn(256)-128)
	}
	var sink int32
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			sink += plainDot(a, q)
		}
	})
	b.Run("eight-lanes", func(b *testing.B) {
		for b.Loop() {
			sink += eightLaneDot(a, q)
		}
	})
	b.Run("packed", func(b *testing.B) {
		pa, pq, sa, sq := packPair(a, q)
		for b.Loop() {
			sink += packedDot(pa, pq, sa, sq)
		}
	})
	_ = sink
}

// eightLaneDot is the scan's product before packing (eight values a
// round, four sums), kept here to measure against.
func eightLaneDot(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += int32(aa[0])*int32(bb[0]) + int32(aa[4])*int32(bb[4])
		s1 += int32(aa[1])*int32(bb[1]) + int32(aa[5])*int32(bb[5])
		s2 += int32(aa[2])*int32(bb[2]) + int32(aa[6])*int32(bb[6])
		s3 += int32(aa[3])*int32(bb[3]) + int32(aa[7])*int32(bb[7])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}
