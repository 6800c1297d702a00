package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"streamer/online/linalg"
	"streamer/online/newton"
	"streamer/vector"
)

// driftingWindow returns n rows of dim Gaussian features, labeled by the
// sign of a direction that turns by turn radians from the oldest row to
// the newest, with noise sd in every feature; the rows come shuffled, their
// keys saying their order. labeled of them carry their label.
func driftingWindow(seed uint64, n, dim, labeled int, turn, sd float64) Window {
	r := rand.New(rand.NewPCG(seed, 1))
	rows, labels, keys := make([]vector.Vector, n), make([]string, n), make([]uint64, n)
	for i, at := range r.Perm(n) {
		a := turn * float64(at) / float64(n)
		v := make([]float64, dim)
		for j := range v {
			v[j] = sd * r.NormFloat64()
		}
		side := r.IntN(2)*2 - 1
		v[0] += float64(side) * math.Cos(a)
		v[1] += float64(side) * math.Sin(a)
		rows[i], keys[i] = vector.Dense(v), uint64(at)
		if at%(n/labeled) == 0 {
			labels[i] = []string{"neg", "pos"}[(side+1)/2]
		}
	}
	return Window{X: linalg.NewMatrix(rows, dim), Labels: labels, Keys: keys, Rows: rows}
}

// newestErrors is a dense reference of searchLambda's judgement: the share
// of the newest half of the labeled rows (by key) that an L2-SVM of λ
// fitted on the rest, weighted by recency at halfLife, classifies wrongly.
func newestErrors(t *testing.T, data Window, lambda, halfLife float64) float64 {
	t.Helper()
	var labeled []int
	for i, l := range data.Labels {
		if l != "" {
			labeled = append(labeled, i)
		}
	}
	slices.SortFunc(labeled, func(a, b int) int { return int(data.Keys[a]) - int(data.Keys[b]) })
	cut := len(labeled) - len(labeled)/2
	var rows []vector.Vector
	var y []float64
	var keys []uint64
	for _, i := range labeled[:cut] {
		rows, y, keys = append(rows, data.Rows[i]), append(y, sign(data.Labels[i] == "pos")), append(keys, data.Keys[i])
	}
	prob := newton.Problem{X: linalg.NewMatrix(rows, len(data.Rows[0].Values)), Y: y, Weights: recencyWeights(keys, y, halfLife)}
	sol, err := newton.Solve(context.Background(), prob, newton.Params{Lambda: lambda}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for _, i := range labeled[cut:] {
		w := sol.W
		out := data.Rows[i].DotDense(w[:len(w)-1]) + w[len(w)-1]
		if (out > 0) != (data.Labels[i] == "pos") {
			wrong++
		}
	}
	return float64(wrong) / float64(len(labeled)-cut)
}

// TestSearchLambdaKeepsTheFewestNewestErrors: the λ and half-life
// searchLambda keeps are those whose fit on the older labels errs least on
// the newest, as a dense reference counts them, its record decays the
// earlier solves' errors, and ties go to no weights and the smaller λ.
func TestSearchLambdaKeepsTheFewestNewestErrors(t *testing.T) {
	params := Params{Lambda: 1e-3, LambdaSearch: 3}.WithDefaults()
	classes := []string{"neg", "pos"}
	var record []float64
	for seed := range uint64(6) {
		data := driftingWindow(seed, 2000, 20, 200, 1.2, 1.5)
		got, half, next := searchLambda(context.Background(), data, params, classes, record)
		halfLives := []float64{0, recencyHalfLife(data)}
		want := make([]float64, 4*len(halfLives))
		best := 0
		for c := range want {
			if c < len(record) {
				want[c] = record[c] * (1 - 1.0/lambdaMemory)
			}
			want[c] += newestErrors(t, data, params.Lambda*math.Pow(10, float64(c%4)), halfLives[c/4])
			if math.Abs(next[c]-want[c]) > 1e-12 {
				t.Fatalf("seed %d: record %v, want %v", seed, next, want)
			}
			if want[c] < want[best] {
				best = c
			}
		}
		if w := params.Lambda * math.Pow(10, float64(best%4)); got != w || half != halfLives[best/4] {
			t.Errorf("seed %d: λ %g and half-life %g, want %g and %g (record %v)", seed, got, half, w, halfLives[best/4], next)
		}
		t.Logf("seed %d: λ %g, half-life %g, record %v", seed, got, half, next)
		record = next
	}
}

// TestRecencyWeights: a labeled row's weight halves every half-life back
// from the newest labeled row; unlabeled rows weigh 1, and no half-life
// weighs nothing. The half-life searched is a quarter of the labeled
// rows' span.
func TestRecencyWeights(t *testing.T) {
	keys := []uint64{10, 40, 50, 70, 90}
	y := []float64{1, -1, 0, 1, 0}
	got := recencyWeights(keys, y, 30)
	want := []float64{0.25, 0.5, 1, 1, 1}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Fatalf("weights %v, want %v", got, want)
		}
	}
	if w := recencyWeights(keys, y, 0); w != nil {
		t.Errorf("weights without a half-life %v", w)
	}
	data := Window{Labels: []string{"a", "", "b", "a"}, Keys: []uint64{100, 5, 20, 60}}
	if h := recencyHalfLife(data); h != 20 {
		t.Errorf("half-life %g over labels at 20 to 100, want 20", h)
	}
}

// TestSearchLambdaOnlyWhereItCan: more than two classes, too few labels, a
// window without its rows or a search of no decade keep λ.
func TestSearchLambdaOnlyWhereItCan(t *testing.T) {
	params := Params{Lambda: 1e-3, LambdaSearch: 2}.WithDefaults()
	ctx := context.Background()
	data := driftingWindow(1, 2000, 5, 200, 1, 1)
	few := driftingWindow(1, 2000, 5, lambdaSearchMin/2, 1, 1)
	noRows := data
	noRows.Rows = nil
	off := params
	off.LambdaSearch = 0
	for name, tc := range map[string]struct {
		data    Window
		params  Params
		classes []string
	}{
		"three classes": {data, params, []string{"a", "neg", "pos"}},
		"few labels":    {few, params, []string{"neg", "pos"}},
		"no rows":       {noRows, params, []string{"neg", "pos"}},
		"no decade":     {data, off, []string{"neg", "pos"}},
	} {
		if got, half, _ := searchLambda(ctx, tc.data, tc.params, tc.classes, nil); got != params.Lambda || half != 0 {
			t.Errorf("%s: λ %g and half-life %g, want %g and none", name, got, half, params.Lambda)
		}
	}
}

// TestSearchLambdaRegularizesATurningBoundary: on overlapping classes
// whose boundary turns across the window (as the rotating stream of
// docs/RESULTS.md), the smallest λ fits the older labels' boundary; over
// solves of fresh windows the search settles on a larger one. Where the
// boundary turns twice as far across the window, it settles on weights
// that favour the newer labels.
func TestSearchLambdaRegularizesATurningBoundary(t *testing.T) {
	params := Params{Lambda: 1e-3, LambdaSearch: 3}.WithDefaults()
	search := func(turn float64) (lambda, half float64, record []float64) {
		for seed := range uint64(8) {
			lambda, half, record = searchLambda(context.Background(), driftingWindow(seed+10, 4000, 20, 400, turn, 1.2), params, []string{"neg", "pos"}, record)
		}
		t.Logf("turn %g: λ %g, half-life %g, record %v", turn, lambda, half, record)
		return lambda, half, record
	}
	if got, _, record := search(0.6); got <= params.Lambda || record[0] <= record[3] {
		t.Errorf("λ %g after 8 solves (record %v); want more than %g", got, record, params.Lambda)
	}
	if _, half, record := search(1.2); half == 0 || slices.Min(record[4:]) >= slices.Min(record[:4]) {
		t.Errorf("no weights after 8 solves (record %v); want the newer labels weighed more", record)
	}
}
