package newton

import (
	"context"
	"math"

	"streamer/online/linalg"
)

// Tolerances are the stopping rules of the finite Newton method. The zero
// value means the defaults of SVMlin and the thesis (§6.2.3).
type Tolerances struct {
	// Epsilon is CGLS's relative residual tolerance; 0 means 1e-6.
	Epsilon float64
	// Tau is the tolerance to which the active set must be stable
	// (thesis §6.2.3, τ); 0 means Epsilon.
	Tau float64
	// MaxNewton caps the Newton steps of one run; 0 means 50.
	MaxNewton int
	// MaxCGLS caps the CGLS iterations of one Newton step; 0 means 10000.
	MaxCGLS int
}

const (
	// A cold start first solves to a loose tolerance with few CGLS
	// iterations (SVMlin's speed-up heuristic): the line search then lands
	// on a point whose active set is small, and later steps work on it.
	coldEpsilon = 1e-2
	coldMaxCGLS = 10
	// relativeStop ends a run whose objective no longer moves (SVMlin's
	// RELATIVE_STOP_EPS); it guards against cycling on inexact steps.
	relativeStop = 1e-9
)

func (t Tolerances) withDefaults() Tolerances {
	if t.Epsilon <= 0 {
		t.Epsilon = 1e-6
	}
	if t.Tau <= 0 {
		t.Tau = t.Epsilon
	}
	if t.MaxNewton <= 0 {
		t.MaxNewton = 50
	}
	if t.MaxCGLS <= 0 {
		t.MaxCGLS = 10000
	}
	return t
}

// newton minimizes one binary objective with fixed terms,
//
//	J(w) = λ/2‖w‖² + Σ_k c_k/2 · loss(y_k, o_{pos_k}) + κ/2‖B o‖²,  o = Xw + b,
//
// by the modified finite Newton method (thesis §6.2, SVMlin's L2_SVM_MFN).
// The weight vector has a last entry for the constant bias feature, which is
// regularized with the rest. κ = λ_I/s; the graph term needs outputs on all
// rows, so with it every row is an output position.
type newton struct {
	x      linalg.Matrix
	d      int // columns of x; weights have d+1 entries
	lambda float64
	lap    Laplacian
	kappa  float64
	rows   []int // matrix row of each output position; nil: every row
	terms  *terms
	tol    Tolerances
	// direct, when set, solves the Newton systems exactly instead of by
	// CGLS (narrow dense problems, see gram and GraphGram).
	direct *gram
	// trace, when set, sees the objective at the start of every run
	// (start = true) and after every Newton step.
	trace func(start bool, objective float64)

	w, o, bo []float64 // the current point, its outputs and B·o
	work     workspace
}

type workspace struct {
	z, r, p, q, g, t              []float64
	cost, target                  []float64
	wBar, oBar, boBar             []float64
	prodCost, prodTarget, prodOut []float64
	prodPos, prodRows, restPos    []int
	restRows                      []int
	restOut                       []float64
	breakpoints                   []breakpoint
}

// runStats describes one finite Newton run.
type runStats struct {
	newtonSteps int
	cglsIters   int
	active      int
	converged   bool
}

func (s *newton) positions() int {
	if s.rows == nil {
		return s.x.Rows()
	}
	return len(s.rows)
}

func (s *newton) matrixRow(pos int) int {
	if s.rows == nil {
		return pos
	}
	return s.rows[pos]
}

// mulVec sets dst = X_rows·w plus the bias.
func (s *newton) mulVec(dst []float64, rows []int, w []float64) {
	s.x.MulVec(dst, rows, w[:s.d])
	b := w[s.d]
	for k := range dst {
		dst[k] += b
	}
}

// mulTransVec sets dst = X_rowsᵀ·z, the bias entry being Σz.
func (s *newton) mulTransVec(dst []float64, rows []int, z []float64) {
	s.x.MulTransVec(dst[:s.d], rows, z)
	var sum float64
	for _, v := range z {
		sum += v
	}
	dst[s.d] = sum
}

// setWeights makes w (copied) the current point and computes its outputs.
func (s *newton) setWeights(w []float64) {
	s.w = append(s.w[:0], w...)
	s.o = linalg.Grow(&s.o, s.positions())
	s.mulVec(s.o, s.rows, s.w)
	if s.lap != nil {
		s.bo = linalg.Grow(&s.bo, s.lap.FactorRows())
		s.lap.MulFactor(s.bo, s.o)
	}
}

// objective returns J at the current point.
func (s *newton) objective() float64 {
	f := s.lambda/2*linalg.Dot(s.w, s.w) + s.terms.value(s.o)
	if s.lap != nil {
		f += s.kappa / 2 * linalg.Dot(s.bo, s.bo)
	}
	return f
}

// gradient sets dst = ∇J at the current point:
// λw - Xᵀ Σ_active c_k(y_k - o) + κXᵀBᵀBo.
func (s *newton) gradient(dst []float64) {
	n := s.positions()
	g := make([]float64, n)
	t := s.terms
	for k, p := range t.pos {
		if t.active(k, s.o[p]) {
			g[p] -= t.c[k] * (t.y[k] - s.o[p])
		}
	}
	if s.lap != nil {
		bt := make([]float64, n)
		s.lap.MulFactorTrans(bt, s.bo)
		linalg.Axpy(g, s.kappa, bt)
	}
	s.mulTransVec(dst, s.rows, g)
	linalg.Axpy(dst, s.lambda, s.w)
}

// minimize runs finite Newton steps from the current point. A warm run
// trusts the point and solves to the final tolerance at once; a cold one
// starts loose (coldEpsilon, coldMaxCGLS) and tightens when it converges.
// With a direct solver every Newton point is exact, and CGLS only stands
// in should a factorization fail. It stops before the next Newton step
// once ctx ends, leaving the point where it is.
func (s *newton) minimize(ctx context.Context, warm bool) runStats {
	tol := s.tol.withDefaults()
	eps, tau, cgMax := tol.Epsilon, tol.Tau, tol.MaxCGLS
	if !warm && s.direct == nil {
		eps, tau, cgMax = coldEpsilon, coldEpsilon, coldMaxCGLS
	}
	var st runStats
	f := s.objective()
	if s.trace != nil {
		s.trace(true, f)
	}
	for st.newtonSteps < tol.MaxNewton && ctx.Err() == nil {
		st.newtonSteps++
		sys := s.newtonSystem()
		wBar, oBar, boBar := s.trialPoint()
		var res cglsResult
		if warm && st.newtonSteps == 1 && s.direct != nil {
			// A warm seed that already solves the system to the tolerance
			// needs no factorization (CGLS checks this before iterating).
			res = s.cgls(sys, wBar, s.work.prodOut, boBar, cglsStop{rel: eps}, 0)
		}
		switch {
		case res.converged:
			s.completeOutputs(oBar, wBar)
		case s.direct != nil && s.direct.solve(s, s.work.cost, s.work.target, wBar):
			s.mulVec(oBar, s.rows, wBar)
			if s.lap != nil {
				s.lap.MulFactor(boBar, oBar)
			}
			res.converged = true
		default:
			res = s.cgls(sys, wBar, s.work.prodOut, boBar, cglsStop{rel: eps}, cgMax)
			st.cglsIters += res.iters
			cgMax = tol.MaxCGLS
			s.completeOutputs(oBar, wBar)
		}
		if res.converged && s.stable(oBar, tau) {
			if eps > tol.Epsilon {
				eps, tau = tol.Epsilon, tol.Tau
			} else {
				s.accept(wBar, oBar, boBar)
				st.converged = true
				if s.trace != nil {
					s.trace(false, s.objective())
				}
				break
			}
		}
		delta := s.lineSearch(s.w, wBar, s.o, oBar, s.bo, boBar)
		s.step(delta, wBar, oBar, boBar)
		prev := f
		f = s.objective()
		if s.trace != nil {
			s.trace(false, f)
		}
		if eps == tol.Epsilon && math.Abs(f-prev) < relativeStop*math.Abs(prev) {
			break
		}
	}
	st.active = s.countActive()
	return st
}

// newtonSystem aggregates the active terms at the current outputs into the
// least-squares system of eq. 6.4. Without a graph term only active rows
// enter the products; with one, every row does.
func (s *newton) newtonSystem() cglsSystem {
	ws := &s.work
	n := s.positions()
	cost := linalg.Grow(&ws.cost, n)
	target := linalg.Grow(&ws.target, n)
	s.terms.aggregate(s.o, cost, target)
	if s.lap != nil {
		ws.prodOut = append(ws.prodOut[:0], s.o...)
		return cglsSystem{rows: s.rows, cost: cost, target: target}
	}
	ws.prodPos, ws.prodRows, ws.restPos = ws.prodPos[:0], ws.prodRows[:0], ws.restPos[:0]
	ws.prodCost, ws.prodTarget, ws.prodOut = ws.prodCost[:0], ws.prodTarget[:0], ws.prodOut[:0]
	for p, c := range cost {
		if c == 0 {
			ws.restPos = append(ws.restPos, p)
			continue
		}
		ws.prodPos = append(ws.prodPos, p)
		ws.prodRows = append(ws.prodRows, s.matrixRow(p))
		ws.prodCost = append(ws.prodCost, c)
		ws.prodTarget = append(ws.prodTarget, target[p])
		ws.prodOut = append(ws.prodOut, s.o[p])
	}
	if ws.prodRows == nil {
		ws.prodRows = []int{} // no active row; nil would mean every row
	}
	return cglsSystem{rows: ws.prodRows, cost: ws.prodCost, target: ws.prodTarget}
}

// trialPoint returns the buffers for w̄, ō and Bō, seeded with the current
// point (CGLS seeding, thesis §6.2.1).
func (s *newton) trialPoint() (wBar, oBar, boBar []float64) {
	ws := &s.work
	wBar = append(linalg.Grow(&ws.wBar, 0), s.w...)
	ws.wBar = wBar
	oBar = linalg.Grow(&ws.oBar, len(s.o))
	if s.lap != nil {
		boBar = append(linalg.Grow(&ws.boBar, 0), s.bo...)
		ws.boBar = boBar
	}
	return wBar, oBar, boBar
}

// completeOutputs fills ō on every position: CGLS kept it on the product
// rows; the other rows need one product with w̄.
func (s *newton) completeOutputs(oBar, wBar []float64) {
	ws := &s.work
	if s.lap != nil {
		copy(oBar, ws.prodOut)
		return
	}
	for k, p := range ws.prodPos {
		oBar[p] = ws.prodOut[k]
	}
	if len(ws.restPos) == 0 {
		return
	}
	ws.restRows = ws.restRows[:0]
	for _, p := range ws.restPos {
		ws.restRows = append(ws.restRows, s.matrixRow(p))
	}
	out := linalg.Grow(&ws.restOut, len(ws.restPos))
	s.mulVec(out, ws.restRows, wBar)
	for k, p := range ws.restPos {
		oBar[p] = out[k]
	}
}

// stable reports whether the active set at ō is the one the Newton system
// was built on, to tolerance τ (thesis §6.2.3; §6.4.1 for DA rows).
func (s *newton) stable(oBar []float64, tau float64) bool {
	t := s.terms
	if t.kind == squaredLoss {
		return true
	}
	for k, p := range t.pos {
		yo := t.y[k] * oBar[p]
		if t.active(k, s.o[p]) {
			if yo > 1+tau {
				return false
			}
		} else if yo < 1-tau {
			return false
		}
	}
	return true
}

func (s *newton) accept(wBar, oBar, boBar []float64) {
	copy(s.w, wBar)
	copy(s.o, oBar)
	copy(s.bo, boBar)
}

// step moves the current point to w + δ(w̄ - w).
func (s *newton) step(delta float64, wBar, oBar, boBar []float64) {
	for j := range s.w {
		s.w[j] += delta * (wBar[j] - s.w[j])
	}
	for p := range s.o {
		s.o[p] += delta * (oBar[p] - s.o[p])
	}
	for e := range s.bo {
		s.bo[e] += delta * (boBar[e] - s.bo[e])
	}
}

func (s *newton) countActive() int {
	n := 0
	for k, p := range s.terms.pos {
		if s.terms.c[k] > 0 && s.terms.active(k, s.o[p]) {
			n++
		}
	}
	return n
}
