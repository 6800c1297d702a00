package online

import (
	"context"
	"errors"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// errBlockBreakdown is returned when block CG's search directions lose
// their rank, which exact arithmetic rules out for a positive definite
// operator; the caller then solves the columns one at a time.
var errBlockBreakdown = errors.New("block CG: search directions lost rank")

// blockCG solves A·X = B for a symmetric positive definite operator A of
// order n and s right-hand sides (n × s blocks, row-major) by block
// conjugate gradients: one Krylov space shared by every column, s new
// directions an iteration, so that each column converges in fewer
// iterations than alone and every product with A serves s vectors.
// The residual is kept as Q·C with Q orthonormal (Dubrulle's BCGrQ,
// 2001): columns that become alike, or one solved before the others, do
// not make the recurrence divide by a singular matrix.
//
// Each iteration, with P the directions and Z = A·P:
//
//	ξ = (PᵀZ)⁻¹,  X += P·ξ·C,  Q·ζ = Q − Z·ξ (thin QR),  C = ζ·C,
//	P = Q + P·ζᵀ
//
// and column j of the residual has norm ‖C e_j‖.
type blockCG struct {
	apply   func(dst, p []float64) // dst = A·p, both n × s
	n, s    int
	tol     []float64 // column j is solved when its residual is at most tol[j]
	maxIter int
}

// solve improves x (n × s, the start) in place until every column's
// residual B − A·x meets tol, and returns the iterations it took and
// whether it got there within maxIter.
func (b blockCG) solve(ctx context.Context, x, rhs []float64) (iters int, converged bool, err error) {
	n, s := b.n, b.s
	q := make([]float64, n*s)
	b.apply(q, x)
	for i := range q {
		q[i] = rhs[i] - q[i]
	}
	c := thinQR(q, n, s)
	if b.met(c) {
		return 0, true, nil
	}
	p := append([]float64(nil), q...)
	z, tmp := make([]float64, n*s), make([]float64, n*s)
	ptz := mat.NewSymDense(s, nil)
	xi, xiC, zeta := mat.NewDense(s, s, nil), mat.NewDense(s, s, nil), mat.NewDense(s, s, nil)
	var chol mat.Cholesky
	for iters < b.maxIter {
		if err := ctx.Err(); err != nil {
			return iters, false, err
		}
		iters++
		b.apply(z, p)
		blockGram(ptz, p, z, n, s)
		if !chol.Factorize(ptz) {
			return iters, false, errBlockBreakdown
		}
		if err := chol.InverseTo(ptz); err != nil {
			return iters, false, errBlockBreakdown
		}
		xi.Copy(ptz)
		xiC.Mul(xi, c)
		gemm(x, p, xiC.RawMatrix(), 1, n, s)
		gemm(q, z, xi.RawMatrix(), -1, n, s)
		r := thinQR(q, n, s)
		zeta.Copy(r)
		c.Mul(zeta, mat.DenseCopyOf(c))
		// p = q + p·ζᵀ
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, general(p, n, s), zeta.RawMatrix(), 0, general(tmp, n, s))
		floats.AddTo(p, q, tmp)
		if b.met(c) {
			return iters, true, nil
		}
	}
	return iters, false, nil
}

// met reports whether every column of the residual Q·C is within its
// tolerance: ‖Q·C e_j‖ = ‖C e_j‖. A norm that is not a number is not.
func (b blockCG) met(c *mat.Dense) bool {
	for j := range b.s {
		if !(mat.Norm(c.ColView(j), 2) <= b.tol[j]) {
			return false
		}
	}
	return true
}

// general views data as an n × s row-major BLAS matrix.
func general(data []float64, n, s int) blas64.General {
	return blas64.General{Rows: n, Cols: s, Stride: s, Data: data}
}

// gemm adds alpha·a·m to dst, with a and dst n × s and m s × s.
func gemm(dst, a []float64, m blas64.General, alpha float64, n, s int) {
	blas64.Gemm(blas.NoTrans, blas.NoTrans, alpha, general(a, n, s), m, 1, general(dst, n, s))
}

// blockGram sets g to the symmetric part of pᵀz (p, z n × s).
func blockGram(g *mat.SymDense, p, z []float64, n, s int) {
	var m mat.Dense
	m.Mul(mat.NewDense(n, s, p).T(), mat.NewDense(n, s, z))
	for i := range s {
		for j := i; j < s; j++ {
			g.SetSym(i, j, (m.At(i, j)+m.At(j, i))/2)
		}
	}
}

// thinQR overwrites a (n × s, n ≥ s) with the first s columns of the Q of
// its Householder QR and returns R (s × s): Q stays orthonormal when a's
// columns are dependent. (CholeskyQR through gonum's Syrk and Trsm took
// twice as long on 5,000 × 15 blocks.)
func thinQR(a []float64, n, s int) *mat.Dense {
	g := general(a, n, s)
	tau := make([]float64, s)
	qf, qg := []float64{0}, []float64{0}
	lapack64.Geqrf(g, tau, qf, -1)
	lapack64.Orgqr(g, tau, qg, -1)
	work := make([]float64, max(int(qf[0]), int(qg[0]), s))
	lapack64.Geqrf(g, tau, work, len(work))
	r := mat.NewDense(s, s, nil)
	for i := range s {
		for j := i; j < s; j++ {
			r.Set(i, j, a[i*s+j])
		}
	}
	lapack64.Orgqr(g, tau, work, len(work))
	return r
}
