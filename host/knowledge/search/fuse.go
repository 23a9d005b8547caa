package search

import (
	"slices"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
)

// rrfK is reciprocal rank fusion's constant: it damps the weight of the very
// first ranks (60 is the value of the method's authors).
const rrfK = 60

// Fuse merges ranked lists by reciprocal rank fusion: a chunk scores the sum
// of 1/(k + rank) over the lists it appears in, so agreement between the
// lexical and the vector ranking lifts a chunk, and neither list's raw
// scores (incomparable) matter. The result keeps at most limit hits, their
// Score the fused one.
func Fuse(limit int, lists ...[]kindex.Hit) []kindex.Hit {
	score := map[string]float64{}
	first := map[string]kindex.Hit{}
	var order []string
	for _, list := range lists {
		for rank, h := range list {
			if _, ok := first[h.ID]; !ok {
				first[h.ID] = h
				order = append(order, h.ID)
			}
			score[h.ID] += 1 / float64(rrfK+rank+1)
		}
	}
	slices.SortStableFunc(order, func(a, b string) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	out := make([]kindex.Hit, 0, min(limit, len(order)))
	for _, id := range order[:min(limit, len(order))] {
		h := first[id]
		h.Score = score[id]
		out = append(out, h)
	}
	return out
}
