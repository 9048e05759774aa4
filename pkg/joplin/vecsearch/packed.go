package vecsearch

import "math/bits"

// The scan's int8 dot products, four lanes to a multiply. Pure Go has no
// vector instructions, so the store keeps each vector packed for them:
// four values, offset by 128 to [0, 255], 18 bits apart in one uint64
// (u0 + u1·2¹⁸ + u2·2³⁶ + u3·2⁵⁴). The query is packed in reverse order
// (v3 + v2·2¹⁸ + v1·2³⁶ + v0·2⁵⁴), so that in the 128-bit product the
// coefficient of 2⁵⁴ is u0v0 + u1v1 + u2v2 + u3v3: four products of at
// most 255² sum to less than 2¹⁸, and each lower coefficient, a sum of at
// most three, stays below 2¹⁸ and never carries into it. The offsets come
// off with the sums of each side:
//
//	Σ a·q = Σ (u−128)(v−128) = Σ u·v − 128·Σu − 128·Σv + n·128²
//
// Exact, not an approximation: the same integer the plain loop computes,
// at about a third of its instructions, for twice the memory of int8.
const (
	laneBits = 18
	laneMask = 1<<laneBits - 1
	lanes    = 4
	offset   = 128
)

// packedLen is the number of words a vector of dim values packs into.
func packedLen(dim int) int { return (dim + lanes - 1) / lanes }

// pack writes v, offset and in lane order (reversed for a query), into
// dst (packedLen(len(v)) words; missing values of the last word are 0,
// packed as 128) and returns the sum of the offset values, padding
// included.
func pack(dst []uint64, v []int8, reversed bool) int64 {
	var sum int64
	for w := range dst {
		var word uint64
		for l := range lanes {
			u := uint64(offset)
			if i := w*lanes + l; i < len(v) {
				u = uint64(int(v[i]) + offset)
			}
			sum += int64(u)
			shift := l * laneBits
			if reversed {
				shift = (lanes - 1 - l) * laneBits
			}
			word |= u << shift
		}
		dst[w] = word
	}
	return sum
}

// packedDot is Σ a·q of two int8 vectors from their packed forms: a
// stored (sum sa), q reversed (sum sq), of n padded values (4·words).
func packedDot(a, q []uint64, sa, sq int64) int32 {
	q = q[:len(a)]
	var uv uint64
	for i := range a {
		hi, lo := bits.Mul64(a[i], q[i])
		uv += (hi<<(64-3*laneBits) | lo>>(3*laneBits)) & laneMask
	}
	n := int64(len(a) * lanes)
	return int32(int64(uv) - offset*sa - offset*sq + n*offset*offset)
}
