package review

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestThresholdsReachTheTarget draws grades from a calibrated classifier
// (a prediction of probability p is right with probability p) and checks
// that what each class's threshold lets through is right about the target
// of the time on fresh draws (within a point: the cut is the lowest of
// many that pass, which favours a lucky one),.
func TestThresholdsReachTheTarget(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, class string) []Grade {
		g := make([]Grade, n)
		for i := range g {
			p := 0.5 + 0.5*r.Float64()
			g[i] = Grade{Class: class, Prob: p, Correct: r.Float64() < p}
		}
		return g
	}
	grades := append(draw(3000, "a"), draw(5, "b")...)
	th := Thresholds(grades, []string{"a", "b", "c"}, 0.95)
	if th[1] != th[2] || th[1] != threshold(grades, 0.95) {
		t.Fatalf("classes with 5 and no grades: thresholds %v, want the pooled cut %v", th[1:], threshold(grades, 0.95))
	}
	if few := Thresholds(draw(10, "a"), []string{"a"}, 0.95); few[0] != ReviewAll {
		t.Fatalf("10 grades in all: threshold %v, want all reviewed", few[0])
	}
	if th[0] < 0.85 || th[0] > 0.95 {
		t.Fatalf("class a: threshold %v, want about 0.9 (precision above t is (1+t)/2)", th[0])
	}
	var right, auto int
	for _, g := range draw(20000, "a") {
		if g.Prob >= th[0] {
			auto++
			if g.Correct {
				right++
			}
		}
	}
	if prec := float64(right) / float64(auto); prec < 0.94 {
		t.Fatalf("precision of the automatic decisions %.4f, want >= 0.94", prec)
	}
}

// TestPrecisionBound checks Wilson's lower bound against values worked by
// hand.
func TestPrecisionBound(t *testing.T) {
	for _, tc := range []struct {
		right, n int
		want     float64
	}{{0, 0, 0}, {10, 10, 10.0 / 11}, {20, 20, 20.0 / 21}, {0, 5, 0}} {
		if got := precisionBound(tc.right, tc.n); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("bound(%d, %d) = %v, want %v", tc.right, tc.n, got, tc.want)
		}
	}
}
