package linalg

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"streamer/online/internal/onlinetest"
	"streamer/synth"
	"streamer/vector"
)

// TestBlockProductsMatchColumns checks the block products of every matrix
// type against their vector products, column by column; the sparse rows
// hold enough values for the products to run on two goroutines.
func TestBlockProductsMatchColumns(t *testing.T) {
	rows, _ := onlinetest.SparseProblem(5, 3000, 500, 30, 0)
	dense := make([]vector.Vector, 50)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range dense {
		v := make([]float64, 7)
		for j := range v {
			v[j] = r.NormFloat64()
		}
		dense[i] = vector.Dense(v)
	}
	for name, x := range map[string]Matrix{
		"csr":         NewCSR(rows, 500, 2),
		"csr, 1 core": NewCSR(rows, 500, 1),
		"dense":       NewDense(dense, 7, 2),
		"vector rows": NewVectorRows(rows, 500, 2),
	} {
		for _, s := range []int{1, 3, 5, 9, 12} {
			checkBlockProducts(t, name, x, s, r)
		}
	}
}

// checkBlockProducts checks x's block products with s vectors against its
// vector products.
func checkBlockProducts(t *testing.T, name string, x Matrix, s int, r *rand.Rand) {
	t.Helper()
	n, d := x.Rows(), x.Cols()
	p, z := make([]float64, d*s), make([]float64, n*s)
	for i := range p {
		p[i] = r.NormFloat64()
	}
	for i := range z {
		z[i] = r.NormFloat64()
	}
	b := BlockProducts(x)
	xp, xz := make([]float64, n*s), make([]float64, d*s)
	b.MulBlock(xp, p, s)
	b.MulTransBlock(xz, z, s)
	col := func(m []float64, rows, k int) []float64 {
		c := make([]float64, rows)
		for i := range c {
			c[i] = m[i*s+k]
		}
		return c
	}
	for k := range s {
		want := make([]float64, n)
		x.MulVec(want, nil, col(p, d, k))
		if got := col(xp, n, k); !onlinetest.CloseSlices(got, want, 1e-12) {
			t.Errorf("%s, %d vectors: column %d of X·P differs from X·p", name, s, k)
		}
		want = make([]float64, d)
		x.MulTransVec(want, nil, col(z, n, k))
		if got := col(xz, d, k); !onlinetest.CloseSlices(got, want, 1e-12) {
			t.Errorf("%s, %d vectors: column %d of Xᵀ·Z differs from Xᵀ·z", name, s, k)
		}
	}
}

// BenchmarkBlockProducts measures X·P and Xᵀ·Z with a block of 12 vectors
// on the rows of a sparse window the size of the bench's (20,000 text-like
// rows, 2^18 features, 80 non-zeros): block CG's two products per
// iteration in a dual SR regression of 10 classes.
func BenchmarkBlockProducts(b *testing.B) {
	const n, features, s = 20000, 1 << 18, 12
	text := synth.GenerateSparseText(synth.SparseTextConfig{Rows: n, Dim: features, NNZ: 80, Topics: 20, Seed: 1})
	x := NewCSR(text.Rows, features, 0)
	r := rand.New(rand.NewPCG(1, 2))
	p, z, out := make([]float64, x.Cols()*s), make([]float64, n*s), make([]float64, n*s)
	for i := range z {
		z[i] = r.NormFloat64()
	}
	x.transpose()
	for b.Loop() {
		x.MulTransBlock(p, z, s)
		x.MulBlock(out, p, s)
	}
}

// BenchmarkDenseBlockProducts measures a dense window's block products
// with 12 vectors, the size of a dual SR regression of 10 classes over
// 20,000 rows of 784 pixels: Xᵀ·Z as MulTransBlock sums it, against
// gonum's Gemm with the transposed rows as first factor, and X·P.
func BenchmarkDenseBlockProducts(b *testing.B) {
	const n, d, s = 20000, 784, 12
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]vector.Vector, n)
	for i := range rows {
		v := make([]float64, d)
		for j := range v {
			v[j] = r.Float64()
		}
		rows[i] = vector.Dense(v)
	}
	x := NewDense(rows, d, 0)
	p, z, out := make([]float64, d*s), make([]float64, n*s), make([]float64, n*s)
	for i := range z {
		z[i] = r.NormFloat64()
	}
	b.Run("trans", func(b *testing.B) {
		for b.Loop() {
			x.MulTransBlock(p, z, s)
		}
	})
	b.Run("trans-gemm", func(b *testing.B) {
		for b.Loop() {
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, x.block(0, n), General(z, n, s), 0, General(p, d, s))
		}
	})
	b.Run("mul", func(b *testing.B) {
		for b.Loop() {
			x.MulBlock(out, p, s)
		}
	})
}
