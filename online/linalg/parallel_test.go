package linalg

import (
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"streamer/online/internal/onlinetest"
)

func TestBalancedRangeCoversEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 2}, {1, 2}, {5, 3}, {31, 2}, {1000, 2}, {1000, 3}, {7, 1}} {
		seen := make([]atomic.Int32, tc.n)
		BalancedRange(tc.n, tc.workers, func(w, lo, hi int) {
			if w < 0 || w >= max(tc.workers, 1) || lo > hi {
				t.Errorf("n=%d workers=%d: call (%d, %d, %d)", tc.n, tc.workers, w, lo, hi)
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d workers=%d: index %d taken %d times", tc.n, tc.workers, i, c)
			}
		}
	}
}

// TestProductsOnWorkersAreDeterministic checks, on products large enough
// to be split, that MulVec on several workers is bitwise what one worker
// computes, and that MulTransVec on several workers gives bitwise the same
// result on every run (the order of its sums depends only on the number of
// workers) and one worker's within rounding.
func TestProductsOnWorkersAreDeterministic(t *testing.T) {
	const n, d = 5000, 700
	rows := onlinetest.RandomSparseRows(5, n, d, 20)
	subset := make([]int, 0, n/2)
	for i := n - 1; i >= 0; i -= 2 {
		subset = append(subset, i)
	}
	w := make([]float64, d)
	for j := range w {
		w[j] = math.Cos(float64(j))
	}
	for _, build := range []func(workers int) Matrix{
		func(workers int) Matrix { return NewCSR(rows, d, workers) },
		func(workers int) Matrix { return NewDense(rows, d, workers) },
		func(workers int) Matrix { return NewVectorRows(rows, d, workers) },
	} {
		one, three := build(1), build(3)
		for _, sel := range [][]int{nil, subset} {
			count := n
			if sel != nil {
				count = len(sel)
			}
			a, b := make([]float64, count), make([]float64, count)
			one.MulVec(a, sel, w[:one.Cols()])
			three.MulVec(b, sel, w[:three.Cols()])
			if !slices.Equal(a, b) {
				t.Fatalf("%T: MulVec on three workers differs from one worker's", one)
			}
			z := make([]float64, count)
			for k := range z {
				z[k] = math.Sin(float64(k))
			}
			ref := make([]float64, one.Cols())
			one.MulTransVec(ref, sel, z)
			first, again := make([]float64, three.Cols()), make([]float64, three.Cols())
			three.MulTransVec(first, sel, z)
			for range 5 {
				three.MulTransVec(again, sel, z)
				if !slices.Equal(first, again) {
					t.Fatalf("%T: MulTransVec on three workers differs between runs", one)
				}
			}
			if rel := onlinetest.RelDiff(first, ref); rel > 1e-14 {
				t.Fatalf("%T: MulTransVec on three workers is %.3g from one worker's", one, rel)
			}
		}
	}
}

// TestBlockProductsOnWorkersAreDeterministic: each entry of a sparse block
// product is summed by one goroutine in a fixed order, so three workers
// compute bitwise what one does; a dense one (gonum's Gemm) is bitwise the
// same on every run.
func TestBlockProductsOnWorkersAreDeterministic(t *testing.T) {
	const n, d, s = 5000, 700, 4
	rows := onlinetest.RandomSparseRows(7, n, d, 20)
	p, z := make([]float64, d*s), make([]float64, n*s)
	for i := range p {
		p[i] = math.Cos(float64(i))
	}
	for i := range z {
		z[i] = math.Sin(float64(i))
	}
	products := func(x BlockMatrix, cols int) ([]float64, []float64) {
		xp, xz := make([]float64, n*s), make([]float64, cols*s)
		x.MulBlock(xp, p, s)
		x.MulTransBlock(xz, z, s)
		return xp, xz
	}
	one := NewCSR(rows, d, 1)
	a, b := products(one, one.Cols())
	c, e := products(NewCSR(rows, d, 3), one.Cols())
	if !slices.Equal(a, c) || !slices.Equal(b, e) {
		t.Errorf("CSR block products on three workers differ from one worker's")
	}
	dense := NewDense(rows, d, 2)
	a, b = products(dense, dense.Cols())
	for range 3 {
		c, e = products(dense, dense.Cols())
		if !slices.Equal(a, c) || !slices.Equal(b, e) {
			t.Fatalf("dense block products differ between runs")
		}
	}
}
