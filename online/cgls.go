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
func (s *newton) cgls(sys cglsSystem, w, o, bo []float64, eps float64, maxIter int) cglsResult {
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
