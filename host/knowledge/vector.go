package knowledge

import (
	"encoding/binary"
	"math"
	"slices"
)

// EncodeVector stores a vector as little-endian float32s.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector reads what EncodeVector wrote.
func DecodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Cosine is the cosine similarity of two vectors of one length (0 for a zero
// vector).
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// rrfK is reciprocal rank fusion's constant: it damps the weight of the very
// first ranks (60 is the value of the method's authors).
const rrfK = 60

// Fuse merges ranked lists by reciprocal rank fusion: a chunk scores the sum
// of 1/(k + rank) over the lists it appears in, so agreement between the
// lexical and the vector ranking lifts a chunk, and neither list's raw
// scores (incomparable) matter. The result keeps at most limit hits, their
// Score the fused one.
func Fuse(limit int, lists ...[]Hit) []Hit {
	score := map[string]float64{}
	first := map[string]Hit{}
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
	out := make([]Hit, 0, min(limit, len(order)))
	for _, id := range order[:min(limit, len(order))] {
		h := first[id]
		h.Score = score[id]
		out = append(out, h)
	}
	return out
}
