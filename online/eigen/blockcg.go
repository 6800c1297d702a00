package eigen

import (
	"context"
	"errors"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"streamer/online/linalg"
)

// ErrBlockBreakdown is returned when block CG's search directions lose
// their rank, which exact arithmetic rules out for a positive definite
// operator; the caller then solves the columns one at a time.
var ErrBlockBreakdown = errors.New("block CG: search directions lost rank")

// BlockCG solves A·X = B for a symmetric positive definite operator A of
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
// and column j of the residual has norm ‖C e_j‖. The iteration keeps its
// blocks by columns, each n long, so that these steps are s² long vector
// operations (SIMD) split by rows between the workers, rather than n
// products of s-long rows; only the products with A see rows.
type BlockCG struct {
	Apply   func(dst, p []float64) // dst = A·p, both n × s row-major
	N, S    int
	Tol     []float64 // column j is solved when its residual is at most tol[j]
	MaxIter int
	Workers int // goroutines of the vector steps; 0 means one
}

// solve improves x (n × s row-major, the start) in place until every
// column's residual B − A·x meets tol, and returns the iterations it took
// and whether it got there within maxIter.
func (b BlockCG) Solve(ctx context.Context, x, rhs []float64) (iters int, converged bool, err error) {
	n, s := b.N, b.S
	rows := make([]float64, n*s) // the row-major block the operator sees
	b.Apply(rows, x)
	for i := range rows {
		rows[i] = rhs[i] - rows[i]
	}
	q, xc := b.columns(rows), b.columns(x)
	c := b.orthonormalize(q)
	if !b.met(c) {
		iters, converged, err = b.iterate(ctx, xc, q, c, rows)
	} else {
		converged = true
	}
	b.toRows(x, xc)
	return iters, converged, err
}

// iterate runs BCGrQ from the solution xc and the residual q·c (columns),
// with rows as the row-major scratch block of the products.
func (b BlockCG) iterate(ctx context.Context, xc, q []float64, c *mat.Dense, rows []float64) (iters int, converged bool, err error) {
	n, s := b.N, b.S
	p := append([]float64(nil), q...)
	z, tmp, out := make([]float64, n*s), make([]float64, n*s), make([]float64, n*s)
	ptz := mat.NewSymDense(s, nil)
	xi, xiC := mat.NewDense(s, s, nil), mat.NewDense(s, s, nil)
	var chol mat.Cholesky
	for iters < b.MaxIter {
		if err := ctx.Err(); err != nil {
			return iters, false, err
		}
		iters++
		b.toRows(rows, p)
		b.Apply(out, rows)
		b.columnsTo(z, out)
		b.symGram(ptz, p, z)
		if !chol.Factorize(ptz) || chol.InverseTo(ptz) != nil {
			return iters, false, ErrBlockBreakdown
		}
		xi.Copy(ptz)
		xiC.Mul(xi, c)
		b.mulAdd(xc, p, xiC, 1)
		b.mulAdd(q, z, xi, -1)
		zeta := b.orthonormalize(q)
		c.Mul(zeta, mat.DenseCopyOf(c))
		clear(tmp)
		b.mulAdd(tmp, p, zeta.T(), 1) // p = q + p·ζᵀ
		floats.AddTo(p, q, tmp)
		if b.met(c) {
			return iters, true, nil
		}
	}
	return iters, false, nil
}

// met reports whether every column of the residual Q·C is within its
// tolerance: ‖Q·C e_j‖ = ‖C e_j‖. A norm that is not a number is not.
func (b BlockCG) met(c *mat.Dense) bool {
	for j := range b.S {
		if !(mat.Norm(c.ColView(j), 2) <= b.Tol[j]) {
			return false
		}
	}
	return true
}

// rowRange calls fn on each worker's contiguous share of the rows.
func (b BlockCG) rowRange(fn func(w, lo, hi int)) {
	linalg.ParallelRange(b.N, max(1, min(b.Workers, b.N)), fn)
}

// columns returns the row-major block rows by columns.
func (b BlockCG) columns(rows []float64) []float64 {
	out := make([]float64, b.N*b.S)
	b.columnsTo(out, rows)
	return out
}

func (b BlockCG) columnsTo(cols, rows []float64) {
	n, s := b.N, b.S
	b.rowRange(func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			for j, v := range rows[i*s : (i+1)*s] {
				cols[j*n+i] = v
			}
		}
	})
}

func (b BlockCG) toRows(rows, cols []float64) {
	n, s := b.N, b.S
	b.rowRange(func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			out := rows[i*s : (i+1)*s]
			for j := range out {
				out[j] = cols[j*n+i]
			}
		}
	})
}

// gram returns the s × s matrix of dot products of a's and c's columns,
// each worker's share of the rows summed apart and the shares added in
// order.
func (b BlockCG) gram(a, c []float64) *mat.Dense {
	n, s := b.N, b.S
	parts := make([]*mat.Dense, max(1, min(b.Workers, n)))
	b.rowRange(func(w, lo, hi int) {
		g := mat.NewDense(s, s, nil)
		for j := range s {
			for k := range s {
				g.Set(j, k, floats.Dot(a[j*n+lo:j*n+hi], c[k*n+lo:k*n+hi]))
			}
		}
		parts[w] = g
	})
	for _, g := range parts[1:] {
		if g != nil {
			parts[0].Add(parts[0], g)
		}
	}
	return parts[0]
}

// symGram sets g to the symmetric part of pᵀz.
func (b BlockCG) symGram(g *mat.SymDense, p, z []float64) {
	m := b.gram(p, z)
	for i := range b.S {
		for j := i; j < b.S; j++ {
			g.SetSym(i, j, (m.At(i, j)+m.At(j, i))/2)
		}
	}
}

// mulAdd adds alpha·a·m to dst (columns; m s × s): column j of dst gets
// alpha·Σ_k m_kj·a_k.
func (b BlockCG) mulAdd(dst, a []float64, m mat.Matrix, alpha float64) {
	n, s := b.N, b.S
	b.rowRange(func(_, lo, hi int) {
		for j := range s {
			out := dst[j*n+lo : j*n+hi]
			for k := range s {
				if f := alpha * m.At(k, j); f != 0 {
					floats.AddScaled(out, f, a[k*n+lo:k*n+hi])
				}
			}
		}
	})
}

// cholQRMaxCond is the largest condition number of a block's Gram matrix
// (the block's own, squared) that orthonormalize factors through it.
const cholQRMaxCond = 1e12

// orthonormalize overwrites the columns q (n × s, n ≥ s) with an
// orthonormal basis Q of them and returns R (s × s), q = Q·R: by
// CholeskyQR2 (the Cholesky factor of qᵀq, twice: as accurate as
// Householder's for such condition numbers, in long vector steps), or by
// Householder when the columns are close to dependent, whose Q stays
// orthonormal where CholeskyQR's cannot.
func (b BlockCG) orthonormalize(q []float64) *mat.Dense {
	r, ok := b.cholQR(q)
	if !ok {
		return b.householderQR(q)
	}
	r2, ok := b.cholQR(q)
	if !ok {
		r2 = b.householderQR(q)
	}
	r2.Mul(r2, r)
	return r2
}

// cholQR sets q = q·R⁻¹ with R the Cholesky factor of qᵀq and returns R;
// false, q untouched, when qᵀq is not safely positive definite.
func (b BlockCG) cholQR(q []float64) (*mat.Dense, bool) {
	n, s := b.N, b.S
	sym := mat.NewSymDense(s, nil)
	b.symGram(sym, q, q)
	var chol mat.Cholesky
	if !chol.Factorize(sym) || chol.Cond() > cholQRMaxCond {
		return nil, false
	}
	var u mat.TriDense
	chol.UTo(&u)
	// q_j = (a_j − Σ_{k<j} R_kj q_k)/R_jj, column after column.
	b.rowRange(func(_, lo, hi int) {
		for j := range s {
			out := q[j*n+lo : j*n+hi]
			for k := range j {
				floats.AddScaled(out, -u.At(k, j), q[k*n+lo:k*n+hi])
			}
			floats.Scale(1/u.At(j, j), out)
		}
	})
	return mat.DenseCopyOf(&u), true
}

// householderQR orthonormalizes the columns q by Householder's QR (on a
// row-major copy, as LAPACK takes it) and returns R.
func (b BlockCG) householderQR(q []float64) *mat.Dense {
	n, s := b.N, b.S
	a := make([]float64, n*s)
	b.toRows(a, q)
	g := linalg.General(a, n, s)
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
	b.columnsTo(q, a)
	return r
}
