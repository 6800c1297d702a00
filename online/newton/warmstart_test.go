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
