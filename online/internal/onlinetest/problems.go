// Package onlinetest holds the test problems and comparisons that the tests
// of several packages under online share. Only tests import it.
package onlinetest

import (
	"math"
	"math/rand/v2"
	"slices"

	"streamer/vector"
)

// RandomProblem returns a small dense problem with l labeled rows of n and
// a separable-ish structure.
func RandomProblem(seed uint64, n, d, l int) ([]vector.Vector, []float64) {
	r := rand.New(rand.NewPCG(seed, 99))
	truth := make([]float64, d)
	for j := range truth {
		truth[j] = r.NormFloat64()
	}
	rows := make([]vector.Vector, n)
	y := make([]float64, n)
	for i := range rows {
		x := make([]float64, d)
		for j := range x {
			x[j] = r.NormFloat64()
		}
		rows[i] = vector.Dense(x)
		if i < l {
			y[i] = 1
			if vector.DenseDot(x, truth)+0.3*r.NormFloat64() < 0 {
				y[i] = -1
			}
		}
	}
	return rows, y
}

// SparseProblem is like RandomProblem with sparse non-negative rows.
func SparseProblem(seed uint64, n, d, nnz, l int) ([]vector.Vector, []float64) {
	r := rand.New(rand.NewPCG(seed, 7))
	truth := make([]float64, d)
	for j := range truth {
		truth[j] = r.NormFloat64()
	}
	rows := make([]vector.Vector, n)
	y := make([]float64, n)
	for i := range rows {
		dense := make([]float64, d)
		for range nnz {
			dense[r.IntN(d)] = r.Float64()
		}
		var idx []int32
		var val []float64
		for j, v := range dense {
			if v != 0 {
				idx = append(idx, int32(j))
				val = append(val, v)
			}
		}
		v := vector.Sparse(idx, val)
		v.Normalize()
		rows[i] = v
		if i < l {
			y[i] = 1
			if v.DotDense(truth) < 0 {
				y[i] = -1
			}
		}
	}
	return rows, y
}

// CloseSlices reports whether a and b have the same length and agree entry
// by entry to tol relative to b.
func CloseSlices(a, b []float64, tol float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*(1+math.Abs(b[i])) {
			return false
		}
	}
	return len(a) == len(b)
}

// RandomSparseRows returns n rows of a d-dimensional space with nnz
// distinct random features each, of float32-exact values.
func RandomSparseRows(seed uint64, n, d, nnz int) []vector.Vector {
	r := rand.New(rand.NewPCG(seed, 11))
	rows := make([]vector.Vector, n)
	for i := range rows {
		idx := make([]int32, 0, nnz)
		for len(idx) < nnz {
			j := int32(r.IntN(d))
			if !slices.Contains(idx, j) {
				idx = append(idx, j)
			}
		}
		slices.Sort(idx)
		val := make([]float64, nnz)
		for k := range val {
			val[k] = float64(float32(r.Float64()))
		}
		rows[i] = vector.Sparse(idx, val)
	}
	return rows
}

// RelDiff returns ‖a - b‖ / ‖b‖.
func RelDiff(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}
