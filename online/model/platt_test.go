package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFitPlattIsCalibrated(t *testing.T) {
	// Outputs drawn so that P(y=1|o) = 1/(1+exp(-2o)): Platt should recover
	// A ≈ -2, B ≈ 0.
	r := rand.New(rand.NewPCG(1, 1))
	n := 20000
	outs := make([]float64, n)
	ys := make([]float64, n)
	for i := range outs {
		o := 3 * (r.Float64()*2 - 1)
		outs[i] = o
		ys[i] = -1
		if r.Float64() < 1/(1+math.Exp(-2*o)) {
			ys[i] = 1
		}
	}
	p := FitPlatt(outs, ys)
	if math.Abs(p.A+2) > 0.1 || math.Abs(p.B) > 0.1 {
		t.Fatalf("Platt A=%.3f B=%.3f, want -2, 0", p.A, p.B)
	}
	if q := FitPlatt([]float64{1, 2}, []float64{1, 1}); q.Prob(5) <= q.Prob(-5) {
		t.Fatalf("one-class fit is not increasing: %+v", q)
	}
}

func TestFitPlattSlopeRecoversTheSlope(t *testing.T) {
	// P(y=1|o) = 1/(1+exp(-2o)): the slope fit should find A ≈ -2.
	r := rand.New(rand.NewPCG(2, 2))
	outs := make([]float64, 20000)
	ys := make([]float64, len(outs))
	for i := range outs {
		outs[i] = 3 * (2*r.Float64() - 1)
		ys[i] = -1
		if r.Float64() < 1/(1+math.Exp(-2*outs[i])) {
			ys[i] = 1
		}
	}
	if p := FitPlattSlope(outs, ys); p.B != 0 || math.Abs(p.A+2) > 0.1 {
		t.Fatalf("fitted %+v, want A ≈ -2, B = 0", p)
	}
	// Outputs that fall as the class rises must not reverse the decision.
	for i := range ys {
		ys[i] = -ys[i]
	}
	if p := FitPlattSlope(outs, ys); p.A != 0 {
		t.Fatalf("reversed outputs fitted %+v, want A = 0", p)
	}
}
