package online

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"streamer/online/active"
	"streamer/vector"
)

// BenchmarkLinkSample links the pool of a 20,000-row text window with a
// label for one row in twenty, before any model: the cover pool label
// requests are chosen from. Each row holds 80 terms of a vocabulary of
// 50,000 drawn by Zipf's law, hashed into 2^18 features.
func BenchmarkLinkSample(b *testing.B) {
	const rows, features = 20000, 1 << 18
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, 50000)
	hashes := make([]int32, 50001)
	for i := range hashes {
		hashes[i] = rng.Int32N(features)
	}
	vecs := make([]vector.Vector, rows)
	ids, labels := make([]string, rows), make([]string, rows)
	for i := range vecs {
		terms := map[int32]float64{}
		for range 80 {
			terms[hashes[zipf.Uint64()]]++
		}
		idx := make([]int32, 0, len(terms))
		for j := range terms {
			idx = append(idx, j)
		}
		slices.Sort(idx)
		val := make([]float64, len(idx))
		for k, j := range idx {
			val[k] = terms[j]
		}
		vecs[i] = vector.Sparse(idx, val)
		ids[i] = strconv.Itoa(i)
		if i%20 == 0 {
			labels[i] = "a"
		}
	}
	b.ResetTimer()
	for b.Loop() {
		pool := &active.Pool{IDs: ids, Labels: labels, Neighbours: make([][]int32, rows)}
		linkSample(pool, vecs)
	}
}
