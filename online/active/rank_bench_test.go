package active

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"streamer/vector"
)

// textPool returns a pool ranked by uncertainty of n short texts (20
// terms of a vocabulary of 5,000, unit length), a share labeled, with
// the rows' cosine as their likeness.
func textPool(rng *rand.Rand, n int, labeled float64) *Pool {
	p := randomPool(rng, n, 0, 13, labeled)
	rows := make([]vector.Vector, n)
	for i := range rows {
		seen := map[int32]bool{}
		for len(seen) < 20 {
			seen[int32(rng.IntN(5000))] = true
		}
		idx := slices.Sorted(maps.Keys(seen))
		val := make([]float64, len(idx))
		for k := range val {
			val[k] = 1 / math.Sqrt(20)
		}
		rows[i] = vector.Sparse(idx, val)
	}
	p.Uncertainty, p.Density = true, make([]float64, n)
	for i := range p.Density {
		p.Density[i] = rng.Float64()
	}
	p.Likeness = func(i, j int) float64 { return vector.Dot(rows[i], rows[j]) }
	return p
}

// BenchmarkChooseText chooses 10 requests, one by one, from a window of
// 20,000 short texts of which 5% are labeled, with and without weighing
// the scores by likeness to the labeled and requested rows.
func BenchmarkChooseText(b *testing.B) {
	for _, likeness := range []bool{false, true} {
		b.Run(fmt.Sprintf("likeness=%v", likeness), func(b *testing.B) {
			p := textPool(rand.New(rand.NewPCG(1, 2)), 20000, 0.05)
			if !likeness {
				p.Likeness = nil
			}
			taken := make([]bool, p.Len())
			for i, l := range p.Labels {
				taken[i] = l != ""
			}
			b.ResetTimer()
			for range b.N {
				r := newRanker(p, slices.Clone(taken))
				for range 10 {
					i, _ := r.best()
					r.take(i)
				}
			}
		})
	}
}
