package online

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"streamer/synth"
	"streamer/vector"
)

// denseOperator returns the apply function of the symmetric matrix a on
// n × s row-major blocks.
func denseOperator(a *mat.SymDense, s int) func(dst, p []float64) {
	n := a.SymmetricDim()
	return func(dst, p []float64) {
		var out mat.Dense
		out.Mul(a, mat.NewDense(n, s, p))
		copy(dst, out.RawMatrix().Data)
	}
}

// TestBlockCGMatchesDenseSolve solves a positive definite system with a
// block of right-hand sides of which two are equal and one is zero (a
// residual block without full rank, which plain block CG divides by) and
// compares with a Cholesky solve; a start at the solution takes no
// iteration.
func TestBlockCGMatchesDenseSolve(t *testing.T) {
	const n, s = 60, 5
	r := rand.New(rand.NewPCG(1, 2))
	m := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			m.Set(i, j, r.NormFloat64())
		}
	}
	a := mat.NewSymDense(n, nil)
	a.SymOuterK(1, m)
	for i := range n {
		a.SetSym(i, i, a.At(i, i)+0.1)
	}
	rhs := make([]float64, n*s)
	for i := range n {
		for k := range 3 {
			rhs[i*s+k] = r.NormFloat64()
		}
		rhs[i*s+3] = rhs[i*s+1] // column 4 equals column 2; column 5 is zero
	}
	tol := make([]float64, s)
	for k := range tol {
		tol[k] = 1e-10
	}
	var chol mat.Cholesky
	if !chol.Factorize(a) {
		t.Fatal("not positive definite")
	}
	var want mat.Dense
	if err := chol.SolveTo(&want, mat.NewDense(n, s, rhs)); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		cg := blockCG{apply: denseOperator(a, s), n: n, s: s, tol: tol, maxIter: 10 * n, workers: workers}
		x := make([]float64, n*s)
		iters, ok, err := cg.solve(context.Background(), x, rhs)
		if err != nil || !ok {
			t.Fatalf("%d workers: converged %v after %d iterations, %v", workers, ok, iters, err)
		}
		for i := range n {
			for k := range s {
				if d := math.Abs(x[i*s+k] - want.At(i, k)); d > 1e-6*(1+math.Abs(want.At(i, k))) {
					t.Fatalf("%d workers: x[%d][%d] = %g, want %g", workers, i, k, x[i*s+k], want.At(i, k))
				}
			}
		}
		t.Logf("%d workers: %d block iterations for %d unknowns", workers, iters, n)
		if again, _, _ := cg.solve(context.Background(), x, rhs); again != 0 {
			t.Errorf("%d workers: a start at the solution took %d iterations", workers, again)
		}
	}
}

// TestOrthonormalize checks both ways of block CG's thin QR: columns far
// from dependent (CholeskyQR2) and dependent ones (Householder, as the
// Cholesky factor of their Gram matrix does not exist): Q has orthonormal
// columns, R is upper triangular, and Q·R is the block.
func TestOrthonormalize(t *testing.T) {
	const n, s = 40, 4
	r := rand.New(rand.NewPCG(3, 3))
	b := blockCG{n: n, s: s, workers: 2}
	random := make([]float64, n*s)
	for i := range random {
		random[i] = r.NormFloat64()
	}
	dependent := append([]float64(nil), random...)
	copy(dependent[2*n:3*n], dependent[:n]) // column 3 is column 1
	clear(dependent[3*n:])                  // column 4 is zero
	for name, a := range map[string][]float64{"independent": random, "dependent": dependent} {
		q := append([]float64(nil), a...)
		rr := b.orthonormalize(q)
		qm := mat.NewDense(s, n, q) // row j is column j of Q
		var qtq, qr mat.Dense
		qtq.Mul(qm, qm.T())
		if !mat.EqualApprox(&qtq, eye(s), 1e-12) {
			t.Errorf("%s: QᵀQ = %v", name, mat.Formatted(&qtq))
		}
		qr.Mul(rr.T(), qm) // (Q·R)ᵀ = Rᵀ·Qᵀ, row j is column j of Q·R
		if !mat.EqualApprox(&qr, mat.NewDense(s, n, a), 1e-12) {
			t.Errorf("%s: Q·R differs from the block", name)
		}
		for i := range s {
			for j := range i {
				if rr.At(i, j) != 0 {
					t.Errorf("%s: R[%d][%d] = %g below the diagonal", name, i, j, rr.At(i, j))
				}
			}
		}
	}
}

func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}

// TestBlockCGStopsOnIndefiniteOperator: directions along which the
// operator is not positive are a breakdown, reported as such for the
// caller to fall back, not a division by a singular matrix; so is a
// residual that is not a number, which no iteration can meet.
func TestBlockCGStopsOnIndefiniteOperator(t *testing.T) {
	const n, s = 8, 2
	a := mat.NewSymDense(n, nil)
	for i := range n {
		a.SetSym(i, i, float64(i)-3)
	}
	rhs := make([]float64, n*s)
	for i := range rhs {
		rhs[i] = 1
	}
	rhs[1] = -1
	cg := blockCG{apply: denseOperator(a, s), n: n, s: s, tol: []float64{1e-10, 1e-10}, maxIter: 100}
	if _, _, err := cg.solve(context.Background(), make([]float64, n*s), rhs); !errors.Is(err, errBlockBreakdown) {
		t.Errorf("indefinite operator: err = %v, want a breakdown", err)
	}
	// A right-hand side that is not a number is not solved either.
	for i := range n {
		a.SetSym(i, i, 1)
	}
	rhs[3] = math.NaN()
	if _, ok, err := cg.solve(context.Background(), make([]float64, n*s), rhs); err == nil || ok {
		t.Errorf("NaN right-hand side: converged %v, err %v", ok, err)
	}
}

// TestBlockProductsMatchColumns checks the block products of every matrix
// type against their vector products, column by column; the sparse rows
// hold enough values for the products to run on two goroutines.
func TestBlockProductsMatchColumns(t *testing.T) {
	rows, _ := sparseProblem(5, 3000, 500, 30, 0)
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
	b := blockProducts(x)
	xp, xz := make([]float64, n*s), make([]float64, d*s)
	b.mulBlock(xp, p, s)
	b.mulTransBlock(xz, z, s)
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
		if got := col(xp, n, k); !closeSlices(got, want, 1e-12) {
			t.Errorf("%s, %d vectors: column %d of X·P differs from X·p", name, s, k)
		}
		want = make([]float64, d)
		x.MulTransVec(want, nil, col(z, n, k))
		if got := col(xz, d, k); !closeSlices(got, want, 1e-12) {
			t.Errorf("%s, %d vectors: column %d of Xᵀ·Z differs from Xᵀ·z", name, s, k)
		}
	}
}

func closeSlices(a, b []float64, tol float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*(1+math.Abs(b[i])) {
			return false
		}
	}
	return len(a) == len(b)
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
		x.mulTransBlock(p, z, s)
		x.mulBlock(out, p, s)
	}
}
