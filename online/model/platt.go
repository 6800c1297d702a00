package model

import (
	"math"

	"streamer/online/linalg"
)

// Platt maps a classifier output o to a probability 1/(1 + exp(A·o + B))
// (Platt 1999), fitted on labeled outputs.
type Platt struct {
	A, B float64
}

// Prob returns the calibrated probability that the output o is positive.
func (p Platt) Prob(o float64) float64 {
	return linalg.Logistic(-(p.A*o + p.B))
}

// FitPlatt fits A and B to outputs with ±1 labels by Newton's method with
// backtracking on the regularized targets of Platt (Lin, Lin and Weng 2007).
// Without both classes it returns the identity-like A = -1, B = 0.
func FitPlatt(outputs, labels []float64) Platt {
	target, npos, nneg := plattTargets(labels)
	if npos == 0 || nneg == 0 {
		return Platt{A: -1}
	}
	a, b := 0.0, math.Log((nneg+1)/(npos+1))
	f := plattLoss(outputs, target, a, b)
	const sigma = 1e-12 // keeps the Hessian positive definite
	for range 100 {
		var h11, h22, h21, g1, g2 float64
		for i, o := range outputs {
			p, q := plattPQ(a*o + b)
			d2 := p * q
			h11 += o * o * d2
			h22 += d2
			h21 += o * d2
			d1 := target(i) - p
			g1 += o * d1
			g2 += d1
		}
		if math.Abs(g1) < 1e-5 && math.Abs(g2) < 1e-5 {
			break
		}
		h11 += sigma
		h22 += sigma
		det := h11*h22 - h21*h21
		da := -(h22*g1 - h21*g2) / det
		db := -(-h21*g1 + h11*g2) / det
		gd := g1*da + g2*db
		step := 1.0
		for step >= 1e-10 {
			na, nb := a+step*da, b+step*db
			if nf := plattLoss(outputs, target, na, nb); nf < f+1e-4*step*gd {
				a, b, f = na, nb, nf
				break
			}
			step /= 2
		}
		if step < 1e-10 {
			break
		}
	}
	return Platt{A: a, B: b}
}

// FitPlattSlope fits Platt's A with B pinned at 0, so that an output of 0,
// the solver's decision point, maps to 1/2: the probability then agrees
// with the solver's decision instead of moving it. A fitted B moves it by
// -B/A, and costs accuracy (on the mail stream of docs/RESULTS.md, the
// model's and the supervised baseline's): B is fitted on the labeled rows'
// training outputs, which the solve has pushed past the margins. A stays
// ≤ 0: a sigmoid that falls with the output would reverse the decision.
func FitPlattSlope(outputs, labels []float64) Platt {
	target, npos, nneg := plattTargets(labels)
	if npos == 0 || nneg == 0 {
		return Platt{A: -1}
	}
	a := 0.0
	f := plattLoss(outputs, target, a, 0)
	for range 100 {
		var h, g float64
		for i, o := range outputs {
			p, q := plattPQ(a * o)
			h += o * o * p * q
			g += o * (target(i) - p)
		}
		if math.Abs(g) < 1e-5 {
			break
		}
		d := -g / (h + 1e-12)
		step := 1.0
		for ; step >= 1e-10; step /= 2 {
			if nf := plattLoss(outputs, target, a+step*d, 0); nf < f+1e-4*step*g*d {
				a, f = a+step*d, nf
				break
			}
		}
		if step < 1e-10 {
			break
		}
	}
	return Platt{A: min(a, 0)}
}

// plattTargets counts the positive and negative labels and returns Platt's
// regularized target of each row: (n₊+1)/(n₊+2) for a positive one,
// 1/(n₋+2) for a negative one.
func plattTargets(labels []float64) (target func(i int) float64, npos, nneg float64) {
	for _, y := range labels {
		if y > 0 {
			npos++
		} else {
			nneg++
		}
	}
	hi, lo := (npos+1)/(npos+2), 1/(nneg+2)
	target = func(i int) float64 {
		if labels[i] > 0 {
			return hi
		}
		return lo
	}
	return target, npos, nneg
}

// plattPQ returns p = 1/(1+exp(z)) and q = 1 - p without overflow.
func plattPQ(z float64) (p, q float64) {
	if z >= 0 {
		e := math.Exp(-z)
		return e / (1 + e), 1 / (1 + e)
	}
	e := math.Exp(z)
	return 1 / (1 + e), e / (1 + e)
}

// plattLoss is the negative log-likelihood of the targets.
func plattLoss(outputs []float64, target func(int) float64, a, b float64) float64 {
	var f float64
	for i, o := range outputs {
		z := a*o + b
		t := target(i)
		if z >= 0 {
			f += t*z + math.Log1p(math.Exp(-z))
		} else {
			f += (t-1)*z + math.Log1p(math.Exp(z))
		}
	}
	return f
}
