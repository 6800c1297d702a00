package online

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// cglsSystem is the weighted, regularized least-squares problem of one
// Newton step (thesis eq. 6.4, with the graph term of docs/MATH.md):
//
//	min_w  λ‖w‖² + Σ_k C_k (Y_k - x_k·w)² + κ‖B X w‖²
//
// over the product rows k. Its normal equations are
// (λI + XᵀCX + κXᵀBᵀBX) w = XᵀCY. With a graph term the product rows are
// all rows (C_k = 0 where a row is inactive), so that BXw is defined.
type cglsSystem struct {
	rows   []int     // matrix rows of the products; nil means all rows
	cost   []float64 // C_k per product row
	target []float64 // Y_k per product row
}

// cglsResult says how a CGLS run ended.
type cglsResult struct {
	iters     int
	converged bool
}

// cgls solves sys by conjugate gradients on the normal equations (CGLS),
// seeded with w (thesis §6.2.1). On entry o holds X·w on the product rows
// and, with a graph term, bo holds B·X·w; all three are updated in place.
// It stops when ‖r‖ ≤ ε‖g‖, where r = Xᵀg - λw is the residual of the normal
// equations and g = C(Y - o) - κBᵀBo the output-space part of the gradient,
// as SVMlin does; a seed that already satisfies this returns at once.
// Without a graph term an iteration is one pass over the rows (cglsFused);
// with one it is two (cglsTwoPass).
func (s *newton) cgls(sys cglsSystem, w, o, bo []float64, eps float64, maxIter int) cglsResult {
	if s.lap != nil {
		return s.cglsTwoPass(sys, w, o, bo, eps, maxIter)
	}
	return s.cglsFused(sys, w, o, eps, maxIter)
}

// residualReplacement is the number of fused CGLS iterations after which
// the residual, updated by recurrence, is recomputed from z: the recurrence
// accumulates rounding errors that the two-pass form does not.
const residualReplacement = 50

// cglsFused is CGLS with one pass over the rows per iteration. The pass
// computes q = Xp and s = XᵀCq together (each row's q_k is all that its
// share of s needs), and the residual follows by recurrence,
// r ← r - α(s + λp), instead of from z by a second pass. As CG on the
// normal equations drifts, r is recomputed from z every residualReplacement
// iterations and whenever the recurrence says it has converged, so that
// the stopping test is always passed on the true residual.
func (s *newton) cglsFused(sys cglsSystem, w, o []float64, eps float64, maxIter int) cglsResult {
	ws := &s.work
	m := len(sys.cost)
	z := grow(&ws.z, m)
	for k := range z {
		z[k] = sys.cost[k] * (sys.target[k] - o[k])
	}
	r := grow(&ws.r, len(w))
	zNorm2 := s.normalResidual(r, sys.rows, z, nil, w)
	gamma := dot(r, r)
	if gamma <= eps*eps*zNorm2 {
		return cglsResult{converged: true}
	}
	p := grow(&ws.p, len(w))
	copy(p, r)
	q := grow(&ws.q, m)
	sp := grow(&ws.sp, len(w))
	res := cglsResult{}
	recurred := 0 // iterations since r was last computed from z
	for res.iters < maxIter {
		res.iters++
		s.mulGram(sp, q, sys.rows, sys.cost, p)
		denom := s.lambda * dot(p, p)
		for k, c := range sys.cost {
			denom += c * q[k] * q[k]
		}
		alpha := gamma / denom
		axpy(w, alpha, p)
		axpy(o, alpha, q)
		for k, c := range sys.cost {
			z[k] -= alpha * c * q[k]
		}
		recurred++
		if recurred < residualReplacement {
			for j := range r {
				r[j] -= alpha * (sp[j] + s.lambda*p[j])
			}
			zNorm2 = dot(z, z)
		} else {
			zNorm2 = s.normalResidual(r, sys.rows, z, nil, w)
			recurred = 0
		}
		gammaNext := dot(r, r)
		if gammaNext <= eps*eps*zNorm2 && recurred > 0 {
			zNorm2 = s.normalResidual(r, sys.rows, z, nil, w)
			recurred = 0
			gammaNext = dot(r, r)
		}
		if gammaNext <= eps*eps*zNorm2 || gammaNext == 0 {
			res.converged = true
			break
		}
		beta := gammaNext / gamma
		for j := range p {
			p[j] = r[j] + beta*p[j]
		}
		gamma = gammaNext
	}
	return res
}

// cglsTwoPass is CGLS as SVMlin runs it: per iteration one pass for q = Xp
// and one for r = Xᵀg - λw, from g.
func (s *newton) cglsTwoPass(sys cglsSystem, w, o, bo []float64, eps float64, maxIter int) cglsResult {
	ws := &s.work
	m := len(sys.cost)
	z := grow(&ws.z, m)
	for k := range z {
		z[k] = sys.cost[k] * (sys.target[k] - o[k])
	}
	r := grow(&ws.r, len(w))
	gNorm2 := s.normalResidual(r, sys.rows, z, bo, w)
	gamma := dot(r, r)
	if gamma <= eps*eps*gNorm2 {
		return cglsResult{converged: true}
	}
	p := grow(&ws.p, len(w))
	copy(p, r)
	q := grow(&ws.q, m)
	var t []float64
	if s.lap != nil {
		t = grow(&ws.t, s.lap.FactorRows())
	}
	res := cglsResult{}
	for res.iters < maxIter {
		res.iters++
		s.mulVec(q, sys.rows, p)
		denom := s.lambda * dot(p, p)
		for k, c := range sys.cost {
			denom += c * q[k] * q[k]
		}
		if t != nil {
			s.lap.MulFactor(t, q)
			denom += s.kappa * dot(t, t)
		}
		alpha := gamma / denom
		axpy(w, alpha, p)
		axpy(o, alpha, q)
		for k, c := range sys.cost {
			z[k] -= alpha * c * q[k]
		}
		if t != nil {
			axpy(bo, alpha, t)
		}
		gNorm2 = s.normalResidual(r, sys.rows, z, bo, w)
		gammaNext := dot(r, r)
		if gammaNext <= eps*eps*gNorm2 || gammaNext == 0 {
			res.converged = true
			break
		}
		beta := gammaNext / gamma
		for j := range p {
			p[j] = r[j] + beta*p[j]
		}
		gamma = gammaNext
	}
	return res
}

// normalResidual sets r = Xᵀg - λw with g = z - κBᵀbo (g = z without a graph
// term) and returns ‖g‖².
func (s *newton) normalResidual(r []float64, rows []int, z, bo, w []float64) float64 {
	g := z
	if s.lap != nil {
		g = grow(&s.work.g, len(z))
		s.lap.MulFactorTrans(g, bo)
		for k := range g {
			g[k] = z[k] - s.kappa*g[k]
		}
	}
	s.mulTransVec(r, rows, g)
	for j := range r {
		r[j] -= s.lambda * w[j]
	}
	return dot(g, g)
}

func dot(a, b []float64) float64 { return floats.Dot(a, b) }

// axpy sets dst += a·x.
func axpy(dst []float64, a float64, x []float64) { floats.AddScaled(dst, a, x) }

// grow returns (*buf)[:n], reallocating when the buffer is too short.
func grow(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }
