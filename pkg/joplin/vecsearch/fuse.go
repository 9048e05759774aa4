package vecsearch

import "sort"

// RRFK is the constant of reciprocal rank fusion (Cormack et al., 2009):
// a document at rank r (1-based) of a list scores 1/(RRFK+r).
const RRFK = 60

// Fuse merges ranked lists of ids by reciprocal rank fusion: each id
// scores the sum of 1/(RRFK+rank) over the lists it is in. Ties go to the
// id with the better single rank, then to the earlier list, then by id.
func Fuse(lists ...[]string) []string {
	type acc struct {
		score    float64
		bestRank int
		list     int
	}
	all := map[string]*acc{}
	var order []string
	for li, l := range lists {
		for r, id := range l {
			a, ok := all[id]
			if !ok {
				a = &acc{bestRank: r, list: li}
				all[id] = a
				order = append(order, id)
			}
			a.score += 1 / float64(RRFK+r+1)
			if r < a.bestRank {
				a.bestRank, a.list = r, li
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := all[order[i]], all[order[j]]
		switch {
		case a.score != b.score:
			return a.score > b.score
		case a.bestRank != b.bestRank:
			return a.bestRank < b.bestRank
		case a.list != b.list:
			return a.list < b.list
		}
		return order[i] < order[j]
	})
	return order
}
