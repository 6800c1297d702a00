package train

import (
	"context"
	"math"
	"testing"

	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
	"streamer/online/newton"
)

// TestOneVersusRestLambdaU checks that each one-versus-rest problem of
// Solve is the binary TSVM problem of its class with λ_u scaled by 2/c and r
// the fraction of the class among the labeled rows.
func TestOneVersusRestLambdaU(t *testing.T) {
	const classes = 4
	xs, labels, _ := onlinetest.DenseMultiClass(3, 400, 8, classes, 0.1)
	x := linalg.NewMatrix(xs, 8)
	params := Params{Algorithm: TSVM, LambdaU: 0.4}
	m, _, err := Solve(context.Background(), Window{X: x, Labels: labels}, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, class := range m.Classes {
		y := make([]float64, len(labels))
		for i, l := range labels {
			switch {
			case l == class:
				y[i] = 1
			case l != "":
				y[i] = -1
			}
		}
		p := params
		p.LambdaU = 0.4 * 2 / classes
		sol, err := newton.Solve(context.Background(), newton.Problem{X: x, Y: y}, p.Binary(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, want := m.Problems[k].Stats.Objective, sol.Stats.Objective
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("class %s: objective %.15g, the binary problem with λ_u·2/c %.15g", class, got, want)
		}
	}
}
