package eigen

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
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
		cg := BlockCG{Apply: denseOperator(a, s), N: n, S: s, Tol: tol, MaxIter: 10 * n, Workers: workers}
		x := make([]float64, n*s)
		iters, ok, err := cg.Solve(context.Background(), x, rhs)
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
		if again, _, _ := cg.Solve(context.Background(), x, rhs); again != 0 {
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
	b := BlockCG{N: n, S: s, Workers: 2}
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
	cg := BlockCG{Apply: denseOperator(a, s), N: n, S: s, Tol: []float64{1e-10, 1e-10}, MaxIter: 100}
	if _, _, err := cg.Solve(context.Background(), make([]float64, n*s), rhs); !errors.Is(err, ErrBlockBreakdown) {
		t.Errorf("indefinite operator: err = %v, want a breakdown", err)
	}
	// A right-hand side that is not a number is not solved either.
	for i := range n {
		a.SetSym(i, i, 1)
	}
	rhs[3] = math.NaN()
	if _, ok, err := cg.Solve(context.Background(), make([]float64, n*s), rhs); err == nil || ok {
		t.Errorf("NaN right-hand side: converged %v, err %v", ok, err)
	}
}

// diagonal is the operator diag(d).
type diagonal []float64

func (d diagonal) Dim() int { return len(d) }

func (d diagonal) MulBlock(dst, src *mat.Dense) {
	for i, v := range d {
		for j := range src.RawMatrix().Cols {
			dst.Set(i, j, v*src.At(i, j))
		}
	}
}

// TestTopEigenStopsOnCancel: an eigensolve whose context is done stops
// before its first iteration with the context's error; the same solve
// with a live context converges.
func TestTopEigenStopsOnCancel(t *testing.T) {
	d := make(diagonal, 200)
	for i := range d {
		d[i] = 1 / float64(i+1)
	}
	if res, err := TopEigen(context.Background(), d, nil, 3, 5, nil, Settings{Tol: 1e-8}); err != nil || !res.Converged || res.Iters == 0 {
		t.Fatalf("live: converged %v in %d iterations, err %v", res.Converged, res.Iters, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := TopEigen(ctx, d, nil, 3, 5, nil, Settings{Tol: 1e-8}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
