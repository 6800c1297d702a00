package train_test

import (
	"context"
	"fmt"
	"math"

	"streamer/anngraph"
	"streamer/online/kernel"
	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/online/train"
	"streamer/vector"
)

// Two interleaved half-moons with one label each: no line splits them, and
// one label a class does not show where they bend. Spectral Regression over
// a Nyström kernel map follows them through the kNN graph of the unlabeled
// rows; a supervised svm over the same map, from the two labeled rows
// alone, cannot.
func Example_spectralRegression() {
	rows, truth := moons(200)
	labels := make([]string, len(rows))
	for _, i := range []int{100, 300} {
		labels[i] = truth[i]
	}
	km, err := kernel.NewMap(kernel.SampleLandmarks(rows, 100, 1), 0)
	if err != nil {
		panic(err)
	}
	view, err := anngraph.Build(rows, anngraph.Config{MaxExamples: len(rows), Metric: anngraph.Euclidean, Exhaustive: true, Seed: 1})
	if err != nil {
		panic(err)
	}
	graph, err := view.Laplacian(anngraph.LaplacianConfig{Normalized: true})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	mapped, err := km.ApplyAll(ctx, rows)
	if err != nil {
		panic(err)
	}

	sr, _, err := train.Solve(ctx, train.Window{
		X: linalg.NewMatrix(mapped, km.Dim()), Labels: labels, Graph: graph,
	}, train.Params{Algorithm: train.SR}, nil)
	if err != nil {
		panic(err)
	}
	sr.Map = km

	var labeled []vector.Vector
	var names []string
	for i, l := range labels {
		if l != "" {
			labeled, names = append(labeled, mapped[i]), append(names, l)
		}
	}
	svm, _, err := train.Solve(ctx, train.Window{
		X: linalg.NewMatrix(labeled, km.Dim()), Labels: names,
	}, train.Params{Algorithm: train.SVM}, nil)
	if err != nil {
		panic(err)
	}
	svm.Map = km

	fmt.Printf("sr:  %.2f of the rows right\n", accuracy(sr, rows, truth))
	fmt.Printf("svm: %.2f\n", accuracy(svm, rows, truth))
	// Output:
	// sr:  1.00 of the rows right
	// svm: 0.83
}

// moons returns n points on each of two interleaved half circles, the
// upper one of class "a", the lower one, shifted, of class "b".
func moons(n int) ([]vector.Vector, []string) {
	rows := make([]vector.Vector, 0, 2*n)
	truth := make([]string, 0, 2*n)
	for c, class := range []string{"a", "b"} {
		for i := range n {
			t := math.Pi * float64(i) / float64(n-1)
			wobble := 0.08 * math.Sin(float64(7*i+3*c))
			x, y := math.Cos(t), math.Sin(t)
			if c == 1 {
				x, y = 1-x, 0.5-y
			}
			rows = append(rows, vector.Dense([]float64{x + wobble, y - wobble}))
			truth = append(truth, class)
		}
	}
	return rows, truth
}

// accuracy returns the fraction of rows m puts in their true class.
func accuracy(m *model.Model, rows []vector.Vector, truth []string) float64 {
	m.Pack()
	right := 0
	for i, x := range rows {
		if m.Classes[m.Predict(x).Class] == truth[i] {
			right++
		}
	}
	return float64(right) / float64(len(rows))
}
