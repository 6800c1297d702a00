package newton

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/vector"
)

// TestWarmStartWithNoActiveRow re-solves from weights that put every
// labeled row beyond the margin: the first Newton system has no active row
// (an empty product, not a product over every row), and the solve must
// still reach the cold solve's objective.
func TestWarmStartWithNoActiveRow(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	xs := make([]vector.Vector, 200)
	y := make([]float64, len(xs))
	for i := range xs {
		x := make([]float64, 6)
		for j := range x {
			x[j] = r.NormFloat64()
		}
		if i%4 == 0 { // a quarter labeled, separable along x_0
			y[i] = float64(1 - 2*(i/4%2))
			x[0] = 4 * y[i]
		}
		xs[i] = vector.Dense(x)
	}
	for _, x := range []linalg.Matrix{linalg.NewDense(xs, 6, 1), linalg.NewVectorRows(xs, 6, 1), linalg.NewCSR(xs, 6, 1)} {
		prob := Problem{X: x, Y: y}
		for _, a := range []Objective{SVM, TSVM} {
			cold, err := Solve(context.Background(), prob, Params{Objective: a}, nil)
			if err != nil {
				t.Fatal(err)
			}
			warm := &model.Solution{W: make([]float64, len(cold.W)), Unlabeled: cold.Unlabeled}
			for j, w := range cold.W {
				warm.W[j] = 1e3 * w
			}
			sol, err := Solve(context.Background(), prob, Params{Objective: a, Reanneal: true}, warm)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(sol.Stats.Objective - cold.Stats.Objective); d > 1e-6*cold.Stats.Objective {
				t.Errorf("%T %s: warm objective %.10g, cold %.10g", x, a, sol.Stats.Objective, cold.Stats.Objective)
			}
		}
	}
}

// TestTSVMAnnealsAgainWhenLabelsGrew: a warm start anneals λ_u again once
// the rows labeled since it are at least half as many as those labeled
// before, and not while they are fewer.
func TestTSVMAnnealsAgainWhenLabelsGrew(t *testing.T) {
	xs := make([]vector.Vector, 12)
	keys := make([]uint64, len(xs))
	for i := range xs {
		xs[i], keys[i] = vector.Dense([]float64{float64(i)}), uint64(100+i)
	}
	// The warm solve held rows 0-3 labeled and the others unlabeled.
	warm := &model.Solution{Unlabeled: map[uint64]float64{}}
	for i := 4; i < len(xs); i++ {
		warm.Unlabeled[keys[i]] = 1
	}
	for _, tc := range []struct {
		labeled int // rows 0..labeled-1 are labeled now
		grew    bool
	}{{4, false}, {5, false}, {6, true}, {12, true}} {
		y := make([]float64, len(xs))
		for i := range tc.labeled {
			y[i] = float64(1 - 2*(i%2))
		}
		b, err := newBinary(Problem{X: linalg.NewDense(xs, 1, 1), Y: y, Keys: keys}, Params{Objective: TSVM}.WithDefaults())
		if err != nil {
			t.Fatal(err)
		}
		if got := b.labelsGrew(warm); got != tc.grew {
			t.Errorf("%d rows labeled, 4 at the warm solve: labelsGrew %v, want %v", tc.labeled, got, tc.grew)
		}
	}
}
