package online

import (
	"math"
	"math/rand/v2"
	"testing"

	"streamer/vector"
)

func TestDensityIsTheCosineToTheMeanDirection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const dim = 12
	for trial := range 20 {
		vecs := make([]vector.Vector, 2+rng.IntN(20))
		for i := range vecs {
			var idx []int32
			var val []float64
			for j := range dim {
				if rng.IntN(3) == 0 {
					idx, val = append(idx, int32(j)), append(val, rng.Float64())
				}
			}
			vecs[i] = vector.Sparse(idx, val)
		}
		mean := make([]float64, dim)
		for _, x := range vecs {
			if n := x.Norm(); n > 0 {
				for k, j := range x.Indices {
					mean[j] += x.Values[k] / n
				}
			}
		}
		got := density(vecs, dim)
		for i, x := range vecs {
			var dot, xx, mm float64
			dense := make([]float64, dim)
			for k, j := range x.Indices {
				dense[j] = x.Values[k]
			}
			for j := range dim {
				dot, xx, mm = dot+dense[j]*mean[j], xx+dense[j]*dense[j], mm+mean[j]*mean[j]
			}
			want := 0.0
			if xx > 0 && mm > 0 {
				want = dot / math.Sqrt(xx*mm)
			}
			if math.Abs(got[i]-want) > 1e-9 {
				t.Fatalf("trial %d row %d: density %v, want %v", trial, i, got[i], want)
			}
		}
	}
}

func TestDensityRanksAClusterAboveAnOutlier(t *testing.T) {
	vecs := []vector.Vector{
		vector.Sparse([]int32{0, 1}, []float64{1, 1}),
		vector.Sparse([]int32{0, 1}, []float64{1, 0.9}),
		vector.Sparse([]int32{0, 1, 2}, []float64{1, 1, 0.1}),
		vector.Sparse([]int32{5}, []float64{3}),
	}
	d := density(vecs, 6)
	for i := range 3 {
		if d[i] <= d[3] {
			t.Errorf("row %d of the cluster has density %v, the outlier %v", i, d[i], d[3])
		}
	}
}
