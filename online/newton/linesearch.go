package newton

import "streamer/internal/heap"

// breakpoint is a step δ at which term k enters or leaves the active set.
type breakpoint struct {
	delta float64
	term  int
	sign  float64 // +1: the term enters the active set, -1: it leaves
}

func (a breakpoint) before(b breakpoint) bool {
	return a.delta < b.delta || (a.delta == b.delta && a.term < b.term)
}

// lineSearch returns the exact minimizer over δ ≥ 0 of the piecewise
// quadratic φ(δ) = J(w + δ(w̄ - w)) (thesis §6.2.2, eq. 6.5). φ' is
// continuous and piecewise linear; L and R are φ'(0) and φ'(1) for the
// active set of the current segment, so φ' = L + δ(R - L) on it. Walking the
// sorted breakpoints finds the segment where φ' crosses zero. The graph term
// only adds the fixed quadratic κ/2‖B(o + δΔo)‖².
func (s *newton) lineSearch(w, wBar, o, oBar, bo, boBar []float64) float64 {
	var L, R float64
	for j, x := range w {
		d := wBar[j] - x
		L += x * d
		R += wBar[j] * d
	}
	L *= s.lambda
	R *= s.lambda
	if s.lap != nil {
		var lg, rg float64
		for e, x := range bo {
			d := boBar[e] - x
			lg += x * d
			rg += boBar[e] * d
		}
		L += s.kappa * lg
		R += s.kappa * rg
	}
	t := s.terms
	bps := s.work.breakpoints[:0]
	for k, p := range t.pos {
		yo := t.y[k] * o[p]
		slope := t.y[k] * (oBar[p] - o[p])
		if t.active(k, o[p]) {
			l, r := termSlopes(t, k, o[p], oBar[p])
			L += l
			R += r
			if t.kind == hingeLoss && slope > 0 {
				bps = append(bps, breakpoint{delta: (1 - yo) / slope, term: k, sign: -1})
			}
		} else if slope < 0 {
			bps = append(bps, breakpoint{delta: (1 - yo) / slope, term: k, sign: 1})
		}
	}
	s.work.breakpoints = bps
	// The breakpoints in increasing δ, ties by term, until φ' crosses zero.
	next := heap.New(bps, breakpoint.before)
	for next.Len() > 0 {
		bp := next.Pop()
		if L+bp.delta*(R-L) >= 0 {
			break
		}
		p := t.pos[bp.term]
		l, r := termSlopes(t, bp.term, o[p], oBar[p])
		L += bp.sign * l
		R += bp.sign * r
	}
	if R-L <= 0 || L >= 0 {
		return 0
	}
	return -L / (R - L)
}

// termSlopes returns term k's contribution to φ'(0) and φ'(1) while it is
// active: c_k(o - y)Δo and c_k(ō - y)Δo.
func termSlopes(t *terms, k int, o, oBar float64) (l, r float64) {
	d := t.c[k] * (oBar - o)
	return (o - t.y[k]) * d, (oBar - t.y[k]) * d
}
