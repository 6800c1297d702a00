package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"streamer/vector"
)

// randomModel returns a model of p problems over dim features with
// random weights: one-vs-rest over p classes, or with centroids an SR
// model of classes classes.
func randomModel(r *rand.Rand, p, dim, classes int, centroids bool) *Model {
	m := &Model{Dim: dim, Problems: make([]Solution, p)}
	for k := range m.Problems {
		w := make([]float64, dim+1)
		for j := range w {
			w[j] = r.NormFloat64()
		}
		m.Problems[k].W = w
	}
	for c := range classes {
		m.Classes = append(m.Classes, string(rune('a'+c)))
		if centroids {
			mu := make([]float64, p)
			for k := range mu {
				mu[k] = r.NormFloat64()
			}
			m.Centroids = append(m.Centroids, mu)
		}
	}
	return m
}

// TestPackedScoresAreScores: a packed model scores every row as the
// unpacked one does, sparse or dense, with features beyond its space; a
// sparse row to the bit, its products summed in the same order.
func TestPackedScoresAreScores(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const dim = 50
	rows := []vector.Vector{
		vector.Sparse([]int32{0, 3, 17, 49}, []float64{1, -2, 0.5, 3}),
		vector.Sparse([]int32{2, 48, 50, 70}, []float64{1, 1, 9, 9}), // beyond dim
		vector.Sparse(nil, nil),
	}
	dense := make([]float64, dim+5) // longer than dim
	for j := range dense {
		dense[j] = r.NormFloat64()
	}
	rows = append(rows, vector.Dense(dense), vector.Dense(dense[:dim-3]))
	for _, tc := range []struct {
		name             string
		p, classes       int
		centroids, packs bool
	}{
		{"one-vs-rest", 5, 5, false, true},
		{"SR, binary", 4, 2, true, true},
		{"SR, multi-class", 6, 7, true, true},
		{"binary", 1, 2, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := randomModel(r, tc.p, dim, tc.classes, tc.centroids)
			var want [][]float64
			for _, x := range rows {
				want = append(want, m.Scores(x, nil))
			}
			m.Pack()
			if (m.packed != nil) != tc.packs {
				t.Fatalf("packed: %v, want %v", m.packed != nil, tc.packs)
			}
			for i, x := range rows {
				got := m.Scores(x, nil)
				if !slices.EqualFunc(got, want[i], func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }) {
					t.Fatalf("row %d: packed %v, unpacked %v", i, got, want[i])
				}
				if !x.IsDense() && !slices.Equal(got, want[i]) {
					t.Errorf("sparse row %d: packed %v, unpacked %v, not the same bits", i, got, want[i])
				}
			}
		})
	}
}

// BenchmarkScores scores text-like rows (80 of 2^18 features) with a
// binary SR model (4 problems) and a 13-class one-vs-rest model, packed
// and not.
func BenchmarkScores(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const dim = 1 << 18
	rows := make([]vector.Vector, 4096)
	for i := range rows {
		idx := make([]int32, 0, 80)
		for _, j := range r.Perm(dim)[:80] {
			idx = append(idx, int32(j))
		}
		slices.Sort(idx)
		vals := make([]float64, len(idx))
		for k := range vals {
			vals[k] = r.Float64()
		}
		rows[i] = vector.Sparse(idx, vals)
	}
	for _, tc := range []struct {
		name       string
		p, classes int
		centroids  bool
	}{{"sr-binary", 4, 2, true}, {"ovr-13", 13, 13, false}} {
		for _, packed := range []bool{false, true} {
			m := randomModel(r, tc.p, dim, tc.classes, tc.centroids)
			if packed {
				m.Pack()
			}
			b.Run(fmt.Sprintf("%s/packed=%v", tc.name, packed), func(b *testing.B) {
				dst := make([]float64, tc.classes)
				i := 0
				for b.Loop() {
					dst = m.Scores(rows[i%len(rows)], dst)
					i++
				}
			})
		}
	}
}
