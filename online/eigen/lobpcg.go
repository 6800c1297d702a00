package eigen

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Operator is a symmetric n × n operator applied to a block of
// vectors, each column one vector: dst = A·src. dst and src are n × b.
type Operator interface {
	Dim() int
	MulBlock(dst, src *mat.Dense)
}

// Settings say how TopEigen stops. The zero value means the
// defaults written beside each field.
type Settings struct {
	// Tol is the residual ‖A x - θ x‖ below which a wanted Ritz pair has
	// converged; 0 means 1e-6 (the operators here have norm ≤ 1).
	Tol float64
	// MaxIter caps the iterations; 0 means 500, and a negative value none:
	// the seed is only checked.
	MaxIter int
	// Needed, when set, says how many of the leading Ritz pairs of the
	// block x, with Ritz values theta, must meet Tol (at least one, at most
	// nev); nil means all nev. The others are carried along unchecked.
	Needed func(x *mat.Dense, theta []float64) int
}

// needed returns how many leading Ritz pairs of x must meet Tol.
func (s Settings) needed(x *mat.Dense, theta []float64, nev int) int {
	if s.Needed == nil {
		return nev
	}
	return min(max(s.Needed(x, theta), 1), nev)
}

func (s Settings) withDefaults() Settings {
	if s.Tol <= 0 {
		s.Tol = 1e-6
	}
	if s.MaxIter == 0 {
		s.MaxIter = 500
	}
	return s
}

// Result holds the wanted eigenpairs, largest first.
type Result struct {
	// Values holds the block's Ritz values, largest first: the nev
	// wanted ones, then the guard vectors' (not held to the tolerance).
	Values []float64
	// Vectors is n × block: the nev wanted vectors first, then the guard
	// vectors, all orthonormal; a warm start takes the whole block back.
	Vectors   *mat.Dense
	Iters     int
	Converged bool
}

// errEigenSize is returned when the problem is too small for the block.
var errEigenSize = errors.New("eigenproblem smaller than its block")

// TopEigen finds the nev largest eigenpairs of the symmetric operator a on
// the orthogonal complement of the unit vector deflate (nil: no deflation),
// by LOBPCG (Knyazev 2001) without preconditioner: each iteration does a
// Rayleigh–Ritz step over span[X, R, P] — the current block, its residuals
// and the last step — orthonormalized explicitly so that the small dense
// problem is an ordinary symmetric eigenproblem (gonum's EigenSym). The
// block has nev wanted columns and block-nev guard columns, which speed up
// convergence when eigenvalues cluster. x0 (n × block, or nil) seeds the
// block; a seed that already satisfies the tolerance costs no iteration.
// It stops between iterations when ctx is done, returning ctx's error.
func TopEigen(ctx context.Context, a Operator, deflate []float64, nev, block int, x0 *mat.Dense, set Settings) (Result, error) {
	set = set.withDefaults()
	n := a.Dim()
	if nev < 1 || block < nev || n <= block {
		return Result{}, errEigenSize
	}
	x := mat.NewDense(n, block, nil)
	if x0 != nil {
		x.Copy(x0)
	}
	FillRandom(x, 1)
	x = OrthonormalBasis(x, deflate, nil)
	if x == nil || colsOf(x) < block {
		x = mat.NewDense(n, block, nil)
		FillRandom(x, 2)
		if x = OrthonormalBasis(x, deflate, nil); x == nil || colsOf(x) < block {
			return Result{}, errors.New("eigensolver: no basis of the block's size")
		}
	}
	ax := mat.NewDense(n, block, nil)
	a.MulBlock(ax, x)
	theta := rayleighRitz(x, ax, block)
	var p *mat.Dense
	r := mat.NewDense(n, block, nil)
	res := Result{}
	for {
		residuals(r, x, ax, theta)
		if converged(r, set.needed(x, theta, nev), set.Tol) {
			res.Converged = true
			break
		}
		if res.Iters >= set.MaxIter {
			break
		}
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		res.Iters++
		v := OrthonormalBasis(joinCols(r, p), deflate, x)
		basis, av := x, ax
		if v != nil {
			// A·x is known: only the new directions need a product.
			w := mat.NewDense(n, colsOf(v), nil)
			a.MulBlock(w, v)
			basis, av = joinCols(x, v), joinCols(ax, w)
		}
		xNew, axNew, thetaNew := ritzStep(basis, av, block)
		p = stepDirection(x, xNew)
		x, ax, theta = xNew, axNew, thetaNew
	}
	res.Values = theta
	res.Vectors = x
	return res, nil
}

// rayleighRitz rotates the orthonormal block x (and ax = A·x with it) to
// the Ritz vectors of span(x), largest Ritz value first, and returns the
// Ritz values.
func rayleighRitz(x, ax *mat.Dense, keep int) []float64 {
	xn, axn, theta := ritzStep(x, ax, keep)
	x.Copy(xn)
	ax.Copy(axn)
	return theta
}

// ritzStep returns the keep largest Ritz pairs of A over the orthonormal
// basis v, given av = A·v: the vectors v·C, A·v·C and the values.
func ritzStep(v, av *mat.Dense, keep int) (x, ax *mat.Dense, theta []float64) {
	m := colsOf(v)
	h := mat.NewDense(m, m, nil)
	h.Mul(v.T(), av)
	sym := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			sym.SetSym(i, j, (h.At(i, j)+h.At(j, i))/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		panic("online: symmetric eigendecomposition failed") // only for NaN input
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	c := mat.NewDense(m, keep, nil)
	theta = make([]float64, keep)
	for k := range keep {
		src := m - 1 - k // EigenSym orders values ascending
		theta[k] = vals[src]
		for i := range m {
			c.Set(i, k, vecs.At(i, src))
		}
	}
	n, _ := v.Dims()
	x = mat.NewDense(n, keep, nil)
	x.Mul(v, c)
	ax = mat.NewDense(n, keep, nil)
	ax.Mul(av, c)
	return x, ax, theta
}

// residuals sets r = A·x - x·diag(θ).
func residuals(r, x, ax *mat.Dense, theta []float64) {
	n, b := x.Dims()
	for i := range n {
		ri, xi, axi := r.RawRowView(i), x.RawRowView(i), ax.RawRowView(i)
		for k := range b {
			ri[k] = axi[k] - theta[k]*xi[k]
		}
	}
}

// converged reports whether the first nev residual columns are below tol.
func converged(r *mat.Dense, nev int, tol float64) bool {
	norms := colNorms(r)
	for k := range nev {
		if norms[k] > tol {
			return false
		}
	}
	return true
}

// stepDirection returns P = X_new - X_old·(X_oldᵀ X_new), the part of the
// new block that the old one does not span (Hetmaniuk and Lehoucq's
// stable choice of LOBPCG's third block).
func stepDirection(xOld, xNew *mat.Dense) *mat.Dense {
	_, b := xOld.Dims()
	c := mat.NewDense(b, colsOf(xNew), nil)
	c.Mul(xOld.T(), xNew)
	n, _ := xNew.Dims()
	p := mat.NewDense(n, colsOf(xNew), nil)
	p.Mul(xOld, c)
	p.Sub(xNew, p)
	return p
}

// OrthonormalBasis returns an orthonormal basis of the span of v's columns
// after projecting out deflate and the orthonormal columns of against (both
// may be nil). Columns are projected twice (classical Gram–Schmidt with
// reorthogonalization) and scaled to unit norm; a column that was (almost)
// in the projected-out span is dropped. The rest are orthonormalized
// through the eigendecomposition of their Gram matrix, twice, dropping
// numerically dependent directions. It returns nil when nothing is left.
func OrthonormalBasis(v *mat.Dense, deflate []float64, against *mat.Dense) *mat.Dense {
	if v == nil {
		return nil
	}
	n, b := v.Dims()
	before := colNorms(v)
	for range 2 {
		project(v, deflate, against)
	}
	after := colNorms(v)
	var keep []int
	for k := range b {
		if after[k] > 1e-10*before[k] && after[k] > 0 {
			keep = append(keep, k)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	w := mat.NewDense(n, len(keep), nil)
	for i := range n {
		src, dst := v.RawRowView(i), w.RawRowView(i)
		for j, k := range keep {
			dst[j] = src[k] / after[k]
		}
	}
	for range 2 {
		if w = gramOrthonormalize(w); w == nil {
			return nil
		}
	}
	return w
}

// project removes from every column of v its components along deflate and
// along the orthonormal columns of against.
func project(v *mat.Dense, deflate []float64, against *mat.Dense) {
	n, b := v.Dims()
	if deflate != nil {
		u := mat.NewVecDense(n, deflate)
		c := mat.NewVecDense(b, nil)
		c.MulVec(v.T(), u)
		v.RankOne(v, -1, u, c)
	}
	if against != nil {
		_, m := against.Dims()
		c := mat.NewDense(m, b, nil)
		c.Mul(against.T(), v)
		var proj mat.Dense
		proj.Mul(against, c)
		v.Sub(v, &proj)
	}
}

// gramOrthonormalize returns w·Q·Λ^{-1/2} for the eigenpairs (Λ, Q) of
// wᵀw whose eigenvalues are above 1e-10 of the largest: an orthonormal
// basis of w's numerically independent directions.
func gramOrthonormalize(w *mat.Dense) *mat.Dense {
	_, b := w.Dims()
	g := mat.NewSymDense(b, nil)
	g.SymOuterK(1, w.T())
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		return nil
	}
	vals := eig.Values(nil)
	var q mat.Dense
	eig.VectorsTo(&q)
	top := vals[b-1]
	var cols []int
	for k := b - 1; k >= 0; k-- {
		if vals[k] > 1e-10*top && vals[k] > 0 {
			cols = append(cols, k)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	t := mat.NewDense(b, len(cols), nil)
	for j, k := range cols {
		s := 1 / math.Sqrt(vals[k])
		for i := range b {
			t.Set(i, j, q.At(i, k)*s)
		}
	}
	n, _ := w.Dims()
	out := mat.NewDense(n, len(cols), nil)
	out.Mul(w, t)
	return out
}

// joinCols returns [a b]; b may be nil, and then a itself is returned.
func joinCols(a, b *mat.Dense) *mat.Dense {
	if b == nil {
		return a
	}
	n, ca := a.Dims()
	_, cb := b.Dims()
	out := mat.NewDense(n, ca+cb, nil)
	for i := range n {
		row := out.RawRowView(i)
		copy(row, a.RawRowView(i))
		copy(row[ca:], b.RawRowView(i))
	}
	return out
}

func colsOf(m *mat.Dense) int {
	_, c := m.Dims()
	return c
}

func colNorms(m *mat.Dense) []float64 {
	n, b := m.Dims()
	norms := make([]float64, b)
	for i := range n {
		for k, v := range m.RawRowView(i) {
			norms[k] += v * v
		}
	}
	for k := range norms {
		norms[k] = math.Sqrt(norms[k])
	}
	return norms
}

// FillRandom fills the all-zero columns of x with seeded uniform values in
// [-1, 1), so that a cold or partly warm start is deterministic.
func FillRandom(x *mat.Dense, seed uint64) {
	n, b := x.Dims()
	norms := colNorms(x)
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for k := range b {
		if norms[k] > 0 {
			continue
		}
		for i := range n {
			x.Set(i, k, 2*r.Float64()-1)
		}
	}
}
