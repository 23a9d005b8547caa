package search_test

import (
	"math"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/search"
)

func TestVectorHelpers(t *testing.T) {
	v := []float32{1.5, -2, 0, 3.25}
	if got := kindex.DecodeVector(kindex.EncodeVector(v)); !slices.Equal(got, v) {
		t.Fatalf("round trip: %v", got)
	}
	for _, c := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1},
		{[]float32{1, 0}, []float32{0, 1}, 0},
		{[]float32{1, 0}, []float32{-1, 0}, -1},
		{[]float32{0, 0}, []float32{1, 1}, 0},
	} {
		if got := kindex.Cosine(c.a, c.b); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("cosine %v %v = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestFuse(t *testing.T) {
	hits := func(ids ...string) []kindex.Hit {
		var out []kindex.Hit
		for _, id := range ids {
			out = append(out, kindex.Hit{Chunk: kindex.Chunk{ID: id}})
		}
		return out
	}
	ids := func(hs []kindex.Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		lists [][]kindex.Hit
		limit int
		want  []string
	}{
		{"agreement lifts", [][]kindex.Hit{hits("a", "b", "c"), hits("c", "d", "b")}, 10, []string{"c", "b", "a", "d"}},
		{"one list keeps its order", [][]kindex.Hit{hits("x", "y"), nil}, 10, []string{"x", "y"}},
		{"limit", [][]kindex.Hit{hits("a", "b", "c"), hits("c", "b", "a")}, 2, []string{"a", "c"}},
		{"nothing", nil, 5, nil},
	} {
		if got := ids(search.Fuse(c.limit, c.lists...)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
