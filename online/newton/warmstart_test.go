package newton

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/synth"
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

// TestTSVMStartsAfreshWhenLabelsGrew: a warm start sets its transductive
// labels afresh once the labeled rows are half as many again as when they
// were last set, and not before.
func TestTSVMStartsAfreshWhenLabelsGrew(t *testing.T) {
	xs := make([]vector.Vector, 12)
	for i := range xs {
		xs[i] = vector.Dense([]float64{float64(i)})
	}
	warm := &model.Solution{W: make([]float64, 2), LabeledAtStart: 4}
	for _, tc := range []struct {
		labeled int // rows 0..labeled-1 are labeled now
		grew    bool
	}{{4, false}, {5, false}, {6, true}, {11, true}} {
		y := make([]float64, len(xs))
		for i := range tc.labeled {
			y[i] = float64(1 - 2*(i%2))
		}
		b, err := newBinary(Problem{X: linalg.NewDense(xs, 1, 1), Y: y}, Params{Objective: TSVM}.WithDefaults())
		if err != nil {
			t.Fatal(err)
		}
		if got := b.labelsGrew(warm); got != tc.grew {
			t.Errorf("%d rows labeled, 4 when last set afresh: labelsGrew %v, want %v", tc.labeled, got, tc.grew)
		}
		sol, err := b.tsvm(context.Background(), warm)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: tc.labeled, false: 4}[tc.grew]; sol.LabeledAtStart != want {
			t.Errorf("%d rows labeled: the solution says %d at its start, want %d", tc.labeled, sol.LabeledAtStart, want)
		}
	}
}

// TestWarmStartOnFewLabelsBeyondTheMargin: a wide sparse problem (solved
// by CGLS, not a factorization) warm-started from a model of many labels
// where the few labels left all lie beyond its margin, as after drift
// forgot the older labels: the first Newton system has no active row, and
// the solve reaches the cold solve's objective in a few steps, finite.
func TestWarmStartOnFewLabelsBeyondTheMargin(t *testing.T) {
	d := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 3000, Dim: 1 << 16, NNZ: 30, Topics: 4, TopicWords: 300, Seed: 9})
	x := linalg.NewMatrix(d.Rows, 1<<16)
	many := make([]float64, len(d.Rows))
	for i := 0; i < 1000; i += 5 {
		many[i] = d.Labels[i]
	}
	prev, err := Solve(context.Background(), Problem{X: x, Y: many}, Params{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 10} {
		few := make([]float64, len(d.Rows))
		for k := range n {
			few[1000+10*k] = d.Labels[1000+10*k]
		}
		warm, err := Solve(context.Background(), Problem{X: x, Y: few}, Params{}, prev)
		if err != nil {
			t.Fatal(err)
		}
		cold, err := Solve(context.Background(), Problem{X: x, Y: few}, Params{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, want := warm.Stats.Objective, cold.Stats.Objective
		if math.IsNaN(got) || math.Abs(got-want) > 1e-6*want || warm.Stats.NewtonSteps > 10 {
			t.Errorf("%d labels: warm objective %.10g in %d Newton steps, cold %.10g", n, got, warm.Stats.NewtonSteps, want)
		}
	}
}
