package newton

import "streamer/online/linalg"

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

// cglsStop says when a CGLS run has converged: when the normal residual
// r satisfies ‖r‖ ≤ rel·‖g‖ (SVMlin's test) or ‖r‖ ≤ abs.
type cglsStop struct{ rel, abs float64 }

// met reports whether ‖r‖² = rr and ‖g‖² = gg meet the test.
func (c cglsStop) met(rr, gg float64) bool {
	return rr <= c.rel*c.rel*gg || rr <= c.abs*c.abs
}

// cglsResult says how a CGLS run ended.
type cglsResult struct {
	iters     int
	converged bool
}

// cgls solves sys by conjugate gradients on the normal equations (CGLS),
// seeded with w (thesis §6.2.1). On entry o holds X·w on the product rows
// and, with a graph term, bo holds B·X·w; all three are updated in place.
// It stops when stop is met (‖r‖ ≤ ε‖g‖ as SVMlin does, or an absolute
// bound), where r = Xᵀg - λw is the residual of the normal equations and
// g = C(Y - o) - κBᵀBo the output-space part of the gradient; a seed that
// already meets it returns at once.
//
// Between the two products of an iteration, the vector updates are fused
// into one pass over the outputs (o, z and the sums they feed) and one over
// the weights (w, r, then p), each on the matrix's workers when the vectors
// are long (reduce): on a two-core solve they were the work left on one
// core.
func (s *newton) cgls(sys cglsSystem, w, o, bo []float64, stop cglsStop, maxIter int) cglsResult {
	ws := &s.work
	m := len(sys.cost)
	if m == 0 && s.lap == nil {
		// No active row: the normal equations are λw = 0. Iterating
		// would measure the residual against ‖g‖ = 0, a test that only an
		// exact zero meets, and rounding leaves a residual whose next step
		// divides zero by zero.
		clear(w)
		return cglsResult{converged: true}
	}
	z := linalg.Grow(&ws.z, m)
	zSum, zSq := s.reduce(m, func(lo, hi int) (sum, sq float64) {
		for k := lo; k < hi; k++ {
			z[k] = sys.cost[k] * (sys.target[k] - o[k])
			sum += z[k]
			sq += z[k] * z[k]
		}
		return sum, sq
	})
	r := linalg.Grow(&ws.r, len(w))
	p := linalg.Grow(&ws.p, len(w))
	gNorm2, gamma := s.normalResidual(r, sys.rows, z, zSum, zSq, bo, w, 0, nil)
	if stop.met(gamma, gNorm2) {
		return cglsResult{converged: true}
	}
	copy(p, r)
	pp := gamma
	q := linalg.Grow(&ws.q, m)
	var t []float64
	if s.lap != nil {
		t = linalg.Grow(&ws.t, s.lap.FactorRows())
	}
	res := cglsResult{}
	for res.iters < maxIter {
		res.iters++
		s.x.MulVec(q, sys.rows, p[:s.d])
		bias := p[s.d]
		qc, _ := s.reduce(m, func(lo, hi int) (qc, _ float64) {
			for k := lo; k < hi; k++ {
				q[k] += bias
				qc += sys.cost[k] * q[k] * q[k]
			}
			return qc, 0
		})
		denom := s.lambda*pp + qc
		if t != nil {
			s.lap.MulFactor(t, q)
			denom += s.kappa * linalg.Dot(t, t)
		}
		alpha := gamma / denom
		zSum, zSq = s.reduce(m, func(lo, hi int) (sum, sq float64) {
			for k := lo; k < hi; k++ {
				o[k] += alpha * q[k]
				z[k] -= alpha * sys.cost[k] * q[k]
				sum += z[k]
				sq += z[k] * z[k]
			}
			return sum, sq
		})
		if t != nil {
			linalg.Axpy(bo, alpha, t)
		}
		var gammaNext float64
		gNorm2, gammaNext = s.normalResidual(r, sys.rows, z, zSum, zSq, bo, w, alpha, p)
		if stop.met(gammaNext, gNorm2) || gammaNext == 0 {
			res.converged = true
			break
		}
		beta := gammaNext / gamma
		pp, _ = s.reduce(len(p), func(lo, hi int) (pp, _ float64) {
			for j := lo; j < hi; j++ {
				p[j] = r[j] + beta*p[j]
				pp += p[j] * p[j]
			}
			return pp, 0
		})
		gamma = gammaNext
	}
	return res
}

// normalResidual first moves w by alpha·p, then sets r = Xᵀg - λw with
// g = z - κBᵀbo (g = z without a graph term; zSum and zSq are z's sum and
// sum of squares), and returns ‖g‖² and ‖r‖².
func (s *newton) normalResidual(r []float64, rows []int, z []float64, zSum, zSq float64, bo, w []float64, alpha float64, p []float64) (gNorm2, rNorm2 float64) {
	g, gSum := z, zSum
	gNorm2 = zSq
	if s.lap != nil {
		g = linalg.Grow(&s.work.g, len(z))
		s.lap.MulFactorTrans(g, bo)
		gSum, gNorm2 = s.reduce(len(g), func(lo, hi int) (sum, sq float64) {
			for k := lo; k < hi; k++ {
				g[k] = z[k] - s.kappa*g[k]
				sum += g[k]
				sq += g[k] * g[k]
			}
			return sum, sq
		})
	}
	s.x.MulTransVec(r[:s.d], rows, g)
	r[s.d] = gSum
	rNorm2, _ = s.reduce(len(r), func(lo, hi int) (rr, _ float64) {
		for j := lo; j < hi; j++ {
			if alpha != 0 {
				w[j] += alpha * p[j]
			}
			r[j] -= s.lambda * w[j]
			rr += r[j] * r[j]
		}
		return rr, 0
	})
	return gNorm2, rNorm2
}

// reduce calls fn on chunks of [0, n), on the matrix's workers when n is at
// least VectorMinLen, and returns the sums of its two results, added in
// chunk order (the same for every run on as many workers).
func (s *newton) reduce(n int, fn func(lo, hi int) (a, b float64)) (float64, float64) {
	workers := 1
	if n >= linalg.VectorMinLen {
		workers = linalg.Workers(s.x)
	}
	if workers <= 1 {
		return fn(0, n)
	}
	parts := make([][2]float64, workers)
	linalg.ParallelRange(n, workers, func(w, lo, hi int) {
		parts[w][0], parts[w][1] = fn(lo, hi)
	})
	var a, b float64
	for _, part := range parts {
		a += part[0]
		b += part[1]
	}
	return a, b
}
