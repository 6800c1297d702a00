package spectral

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"streamer/online/eigen"
	"streamer/online/linalg"
	"streamer/online/model"
)

// srGramMaxCols is the widest dense window (columns plus the bias) whose
// SR regressions are solved through one shared Gram matrix: every response
// has the same costs, so λI + X̃ᵀCX̃ is formed and factored once (a BLAS-3
// pass, n·d² flops) and all responses are back-substituted, instead of
// iterating (ridgeBlock: two passes over X per iteration, some tens of
// iterations per solve).
const srGramMaxCols = 2049

// srGramBlock is the number of rows packed per rank-k update.
const srGramBlock = 256

// sharedFactor is the Cholesky factor of λI + X̃ᵀCX̃ (X̃ with the bias
// column, C = 1 on labeled rows and γ² on unlabeled ones) that ridgeShared
// solves with. It does not depend on the eigenvectors, so it is computed
// on its own goroutine while they are solved.
type sharedFactor struct {
	done  chan struct{}
	gram  *srGram
	chol  mat.Cholesky
	ok    bool  // false when the factorization failed
	err   error // the context's, when it was done before the factor
	scale []float64
}

// startFactor starts computing the shared factor of a dense window narrow
// enough for ridgeShared, from prev's X̃ᵀCX̃ updated by the rows that
// changed when prev kept it (srGram); nil for other windows. The caller
// owns the goroutine and waits for it (wait) before returning; it stops
// early when ctx is done, and err says so.
func (p *srProblem) startFactor(ctx context.Context, warm *State) *sharedFactor {
	x, ok := p.data.X.(*linalg.Dense)
	if !ok || x.Cols()+1 > srGramMaxCols {
		return nil
	}
	var prevGram *srGram
	if warm != nil {
		prevGram = warm.gram
	}
	f := &sharedFactor{done: make(chan struct{}), scale: p.rowScales()}
	go func() {
		defer close(f.done)
		if f.gram, f.err = p.gramFor(ctx, x, f.scale, prevGram); f.err != nil {
			return
		}
		d := x.Cols() + 1
		a := mat.NewSymDense(d, nil)
		a.CopySym(f.gram.g)
		for j := range d {
			a.SetSym(j, j, a.At(j, j)+p.params.Alpha)
		}
		f.ok = f.chol.Factorize(a)
	}()
	return f
}

// wait waits for the factor; a nil factor has nothing to wait for.
func (f *sharedFactor) wait() {
	if f != nil {
		<-f.done
	}
}

// ridgeShared solves every response's ridge regression at once on a dense
// window through the shared factor f (targets y and y/γ). It returns false
// when there is no factor (the window is not dense, or too wide) or the
// factorization failed; the caller then solves them by block CG
// (ridgeBlock). Its error is the context's, when the factor stopped early.
func (p *srProblem) ridgeShared(ys [][]float64, f *sharedFactor) ([]model.Solution, bool, error) {
	if f == nil || len(ys) == 0 {
		return nil, false, nil
	}
	f.wait()
	if f.err != nil {
		return nil, false, f.err
	}
	if !f.ok {
		return nil, false, nil
	}
	p.gram = f.gram
	x := p.data.X.(*linalg.Dense)
	rhs := p.rightHandSides(x, ys, f.scale)
	var a mat.Dense
	if err := f.chol.SolveTo(&a, rhs); err != nil {
		return nil, false, nil
	}
	space := linalg.NewColumnSpace(x)
	sols := make([]model.Solution, len(ys))
	for k, y := range ys {
		w, b := mat.Col(nil, k, &a), mat.Col(nil, k, rhs)
		sols[k] = model.Solution{W: space.Expand(w)}
		sols[k].Stats = model.Stats{Objective: ridgeOptimum(y, f.scale, w, b), NewtonSteps: 1, Runs: 1}
	}
	return sols, true, nil
}

// ridgeOptimum returns the ridge objective ½(α‖w‖² + Σ_i (s_i x̃_i·w - y_i)²)
// (the rows of scale s_i = 0 left out) at its minimizer w, where
// (X̃ᵀCX̃ + αI) w = b = X̃ᵀ√C y: there it equals ½(Σ y_i² - wᵀb), which costs
// no pass over the rows.
func ridgeOptimum(y, scale, w, b []float64) float64 {
	var yy float64
	for i, v := range y {
		if scale[i] != 0 {
			yy += v * v
		}
	}
	return (yy - linalg.Dot(w, b)) / 2
}

// rowScales returns √C per row: 1 labeled, γ unlabeled.
func (p *srProblem) rowScales() []float64 {
	s := make([]float64, len(p.class))
	for i, c := range p.class {
		s[i] = 1
		if c < 0 {
			s[i] = p.params.Gamma
		}
	}
	return s
}

// rightHandSides returns X̃ᵀ√C·Y (d × r; the unlabeled targets y/γ
// scaled by √C = γ are y again; rows of scale 0 add nothing): Xᵀ(√C·Y)
// by x's transposed block product, with the bias row Σ_i √C_i·y_i.
func (p *srProblem) rightHandSides(x *linalg.Dense, ys [][]float64, scale []float64) *mat.Dense {
	n, d, r := x.Rows(), x.Cols()+1, len(ys)
	t := make([]float64, n*r)
	out := make([]float64, d*r)
	bias := out[(d-1)*r:]
	for i := range n {
		for k, y := range ys {
			t[i*r+k] = scale[i] * y[i]
			bias[k] += t[i*r+k]
		}
	}
	x.MulTransBlock(out[:(d-1)*r], t, r)
	return mat.NewDense(d, r, out)
}

// ridgeBlock solves every response's ridge regression at once, in the
// dual, by block CG (docs/MATH.md, "How online/ computes it"). With
// S = diag(√C) and K̂ = S X̃ X̃ᵀ S, the weights of all responses are
// A = X̃ᵀ S V where
//
//	(K̂ + αI) V = S·T
//
// (T the targets, y on labeled rows and y/γ on unlabeled ones, so S·T is
// Y). The n × r system has the window's size whatever the number of
// features, each product with K̂ is two passes over X for all r
// responses, and the shared Krylov space takes some three times fewer
// products per response than a CGLS run each. The weighted outputs
// S·X̃·A = K̂V differ from the optimum's by K̂(K̂ + αI)⁻¹ times the
// residual, at most the residual's norm: the solve stops when every
// column's residual is within 10·Settings.Tolerance of ‖S t‖, which
// puts the outputs that close to the optimum's. It starts from prev's
// duals for the rows still in the window (0 for new rows), and sets
// p.duals.
func (p *srProblem) ridgeBlock(ctx context.Context, ys [][]float64, warm *State) ([]model.Solution, error) {
	x := p.data.X
	n, s := x.Rows(), len(ys)
	scale := p.rowScales()
	rhs, tol := dualTargets(ys, scale, 10*p.params.withDefaults().Tolerance)
	op := newDualRidge(x, scale, p.params.Alpha, s)
	v := p.warmDuals(warm, s, scale)
	iters, err := p.solveDual(ctx, op, v, rhs, tol)
	if err != nil {
		return nil, err
	}
	sols := op.solutions(v, rhs)
	for k := range sols {
		sols[k].Stats.CGLSIters = iters
	}
	p.duals = v
	for i := range n {
		floats.Scale(scale[i], v[i*s:(i+1)*s]) // c = S·v
	}
	return sols, nil
}

// dualTargets returns the right-hand sides S·T of the dual system (n × r,
// row-major: y, or 0 on the rows of cost 0) and each column's tolerance,
// eps·‖S·t‖.
func dualTargets(ys [][]float64, scale []float64, eps float64) (rhs, tol []float64) {
	s := len(ys)
	rhs, tol = make([]float64, len(scale)*s), make([]float64, s)
	for i := range scale {
		for k, y := range ys {
			if scale[i] != 0 {
				rhs[i*s+k] = y[i]
			}
			tol[k] += rhs[i*s+k] * rhs[i*s+k]
		}
	}
	for k := range tol {
		tol[k] = eps * math.Sqrt(tol[k])
	}
	return rhs, tol
}

// solveDual solves op's system for the right-hand sides rhs from v, in
// place, by block CG, or column by column if the block breaks down, and
// returns the iterations. A solve that reaches MaxCGLS iterations keeps
// the weights it has, as a CGLS run does.
func (p *srProblem) solveDual(ctx context.Context, op *dualRidge, v, rhs, tol []float64) (int, error) {
	maxIter := p.params.withDefaults().MaxIter
	apply, b := op.apply, rhs
	defl := newBiasDeflation(op)
	if defl != nil {
		apply, b = defl.apply, defl.project(rhs)
	}
	cg := eigen.BlockCG{Apply: apply, N: op.n, S: op.s, Tol: tol, MaxIter: maxIter, Workers: linalg.Workers(op.matrix)}
	iters, _, err := cg.Solve(ctx, v, b)
	if defl != nil {
		defl.complete(v, rhs)
	}
	if !errors.Is(err, eigen.ErrBlockBreakdown) {
		return iters, err
	}
	more, _, err := solveColumns(ctx, op, v, rhs, tol, maxIter)
	return iters + more, err
}

// biasDeflation deflates the dual system A·V = B (A = K̂ + αI) by the
// bias direction z = S·1: the bias feature of X̃ puts z·zᵀ into K̂, an
// eigenvalue of about Σ C_i far above the others. With w = A·z and
// e = zᵀ·w, block CG solves the projected system
//
//	(A − w·wᵀ/e)·V̂ = B − w·zᵀB/e
//
// whose operator has z in its null space and otherwise A's spectrum
// without that eigenvalue, and V = V̂ + z·(zᵀB − wᵀV̂)/e. The residual
// B − A·V is then exactly the projected system's, so its stopping rule
// still bounds the outputs; a start V̂ = V that solves A·V = B is left
// as it is. (Deflated CG, Saad, Yeung, Erhel and Guyomarc'h, 2000.) A
// cold solve then takes a few block iterations fewer
// (BenchmarkTrainSparseSR).
type biasDeflation struct {
	op   *dualRidge
	z, w []float64
	e    float64
}

// newBiasDeflation returns op's deflation, or nil when no row has a cost.
func newBiasDeflation(op *dualRidge) *biasDeflation {
	d := &biasDeflation{op: op, z: op.scale, w: make([]float64, op.n)}
	newDualRidge(op.matrix, op.scale, op.alpha, 1).apply(d.w, d.z)
	if d.e = linalg.Dot(d.z, d.w); !(d.e > 0) {
		return nil
	}
	return d
}

// apply sets dst = (A − w·wᵀ/e)·p.
func (d *biasDeflation) apply(dst, p []float64) {
	d.op.apply(dst, p)
	d.rankOne(dst, d.w, d.w, p, -1)
}

// project returns B − w·zᵀB/e.
func (d *biasDeflation) project(b []float64) []float64 {
	out := append([]float64(nil), b...)
	d.rankOne(out, d.w, d.z, b, -1)
	return out
}

// complete turns the projected system's solution v into A·V = B's, in
// place: V = V̂ + z·(zᵀB − wᵀV̂)/e.
func (d *biasDeflation) complete(v, b []float64) {
	d.rankOne(v, d.z, d.w, v, -1) // wᵀV̂ is summed before v changes
	d.rankOne(v, d.z, d.z, b, 1)
}

// rankOne adds sign·u·(yᵀx)/e to dst (n × s blocks, row-major).
func (d *biasDeflation) rankOne(dst, u, y, x []float64, sign float64) {
	s := d.op.s
	c := make([]float64, s)
	for i := range d.op.n {
		linalg.AddScaled(c, y[i], x[i*s:(i+1)*s])
	}
	for k := range c {
		c[k] *= sign / d.e
	}
	for i := range d.op.n {
		linalg.AddScaled(dst[i*s:(i+1)*s], u[i], c)
	}
}

// solveColumns solves op's system one column at a time (block CG of one
// column is CG), from v, in place.
func solveColumns(ctx context.Context, op *dualRidge, v, rhs, tol []float64, maxIter int) (iters int, converged bool, err error) {
	n, s := op.n, op.s
	one := newDualRidge(op.matrix, op.scale, op.alpha, 1)
	col, b := make([]float64, n), make([]float64, n)
	converged = true
	for k := range s {
		for i := range n {
			col[i], b[i] = v[i*s+k], rhs[i*s+k]
		}
		cg := eigen.BlockCG{Apply: one.apply, N: n, S: 1, Tol: tol[k : k+1], MaxIter: maxIter, Workers: linalg.Workers(op.matrix)}
		it, ok, err := cg.Solve(ctx, col, b)
		if err != nil {
			return iters, false, fmt.Errorf("response %d: %w", k+1, err)
		}
		for i := range n {
			v[i*s+k] = col[i]
		}
		iters, converged = iters+it, converged && ok
	}
	return iters, converged, nil
}

// dualRidge applies K̂ + αI to n × s blocks, K̂·P = S·X̃·(X̃ᵀ·S·P) with
// S = diag(scale) and X̃ = [X 1]: two block products with X.
type dualRidge struct {
	matrix linalg.Matrix
	x      linalg.BlockMatrix
	n, d   int
	scale  []float64
	alpha  float64
	s      int
	sp, u  []float64 // S·P (n × s) and X̃ᵀ·S·P ((d+1) × s)
}

func newDualRidge(x linalg.Matrix, scale []float64, alpha float64, s int) *dualRidge {
	n, d := x.Rows(), x.Cols()
	return &dualRidge{matrix: x, x: linalg.BlockProducts(x), n: n, d: d, scale: scale, alpha: alpha, s: s,
		sp: make([]float64, n*s), u: make([]float64, (d+1)*s)}
}

// apply sets dst = (K̂ + αI)·p.
func (r *dualRidge) apply(dst, p []float64) {
	s := r.s
	r.weightsTo(r.u, p)
	r.x.MulBlock(dst, r.u, s)
	bias := r.u[r.d*s:]
	for i := range r.n {
		out, in := dst[i*s:(i+1)*s], p[i*s:(i+1)*s]
		for k := range out {
			out[k] = r.scale[i]*(out[k]+bias[k]) + r.alpha*in[k]
		}
	}
}

// weights returns X̃ᵀ·S·v ((d+1) × s): the regressions' weights, bias
// last, when v solves the system.
func (r *dualRidge) weights(v []float64) []float64 {
	a := make([]float64, (r.d+1)*r.s)
	r.weightsTo(a, v)
	return a
}

func (r *dualRidge) weightsTo(dst, v []float64) {
	s := r.s
	bias := dst[r.d*s : (r.d+1)*s]
	clear(bias)
	for i := range r.n {
		sp, in := r.sp[i*s:(i+1)*s], v[i*s:(i+1)*s]
		for k := range sp {
			sp[k] = r.scale[i] * in[k]
			bias[k] += sp[k]
		}
	}
	r.x.MulTransBlock(dst[:r.d*s], r.sp, s)
}

// solutions returns each response's weights over the feature space,
// A = X̃ᵀ·S·v, with its objective ½(α‖a‖² + Σ_i C_i(t_i − x̃_i·a)²).
func (r *dualRidge) solutions(v, rhs []float64) []model.Solution {
	s, d := r.s, r.d
	a := r.weights(v)
	out := make([]float64, r.n*s)
	r.x.MulBlock(out, a, s)
	space := linalg.NewColumnSpace(r.matrix)
	sols := make([]model.Solution, s)
	for k := range sols {
		w := make([]float64, d+1)
		for j := range w {
			w[j] = a[j*s+k]
		}
		var loss float64
		for i := range r.n {
			e := r.scale[i]*(out[i*s+k]+w[d]) - rhs[i*s+k]
			loss += e * e
		}
		sols[k] = model.Solution{W: space.Expand(w)}
		sols[k].Stats = model.Stats{Objective: (r.alpha*linalg.Dot(w, w) + loss) / 2, NewtonSteps: 1, Runs: 1}
	}
	return sols
}
