package train

import (
	"context"
	"fmt"
	"math"
	"testing"

	"streamer/anngraph"
	"streamer/internal/testlevel"
	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/online/spectral"
	"streamer/synth"
	"streamer/vector"
)

// TestSRWarmStartOnUnchangedWindow checks that a re-solve of an unchanged
// window, warm-started from the last model, costs no eigensolver and no
// CGLS iteration, and returns the same classifier.
func TestSRWarmStartOnUnchangedWindow(t *testing.T) {
	data, _, _ := srData(t, 800, 8, 5, 0.03, 21)
	data.Keys = make([]uint64, data.X.Rows())
	for i := range data.Keys {
		data.Keys[i] = uint64(1000 + i)
	}
	params := Params{Algorithm: SR}
	cold, coldSt, err := Solve(context.Background(), data, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	if coldSt.EigenIters == 0 || coldSt.NewtonSteps == 0 {
		t.Fatalf("cold solve did no work: %+v", coldSt)
	}
	warm, warmSt, err := Solve(context.Background(), data, params, cold)
	if err != nil {
		t.Fatal(err)
	}
	// A Newton step per response is the check that the seed solves its
	// system; it factors nothing and iterates nothing.
	if warmSt.EigenIters != 0 || warmSt.CGLSIters > 1 || warmSt.NewtonSteps > warmSt.Problems {
		t.Errorf("warm re-solve of an unchanged window: %d eigen iterations, %d Newton steps, %d CGLS iterations (cold %d, %d, %d)",
			warmSt.EigenIters, warmSt.NewtonSteps, warmSt.CGLSIters, coldSt.EigenIters, coldSt.NewtonSteps, coldSt.CGLSIters)
	}
	probe, _ := synth.Clusters(synth.ClusterConfig{Points: 50, Dim: 8, Clusters: 5, Spread: 0.6, Seed: 5})
	for _, x := range probe {
		a, b := cold.Scores(x, nil), warm.Scores(x, nil)
		for c := range a {
			if math.Abs(a[c]-b[c]) > 1e-4*(1+math.Abs(a[c])) {
				t.Fatalf("scores moved: %v then %v", a, b)
			}
		}
	}
}

// TestSRWarmStartAfterSlide checks that when a few rows leave and enter
// the window, a warm re-solve needs fewer eigensolver iterations than a
// cold one, and agrees with it.
func TestSRWarmStartAfterSlide(t *testing.T) {
	full, _, _ := srData(t, 1000, 8, 5, 0.03, 31)
	window := func(lo, hi int) Window {
		rows := make([]vector.Vector, 0, hi-lo)
		keys := make([]uint64, 0, hi-lo)
		for i := lo; i < hi; i++ {
			v := make([]float64, 8)
			full.X.MulTransVec(v, []int{i}, []float64{1})
			rows = append(rows, vector.Dense(v))
			keys = append(keys, uint64(i))
		}
		lap := onlinetest.AnnLaplacian(t, rows, anngraph.Config{K: 8, Metric: anngraph.Euclidean, Exhaustive: true}, anngraph.LaplacianConfig{})
		return Window{X: linalg.NewMatrix(rows, 8), Labels: full.Labels[lo:hi], Keys: keys, Laplacian: lap, Graph: lap}
	}
	params := Params{Algorithm: SR}
	first, _, err := Solve(context.Background(), window(0, 900), params, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := window(20, 920)
	_, coldSt, err := Solve(context.Background(), next, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, warmSt, err := Solve(context.Background(), next, params, first)
	if err != nil {
		t.Fatal(err)
	}
	if warmSt.EigenIters >= coldSt.EigenIters {
		t.Errorf("warm eigensolve took %d iterations, cold %d", warmSt.EigenIters, coldSt.EigenIters)
	}
	t.Logf("eigen iterations cold %d warm %d; CGLS cold %d warm %d", coldSt.EigenIters, warmSt.EigenIters, coldSt.CGLSIters, warmSt.CGLSIters)
}

// TestSRBeatsSupervisedOnClusters checks what SR is for: with a few labels
// of several classes whose rows form clusters, the graph's eigenvectors
// carry the labels to the unlabeled rows, and SR classifies the unlabeled
// rows better than the same ridge learner on the labeled rows alone.
func TestSRBeatsSupervisedOnClusters(t *testing.T) {
	testlevel.Long(t, "numerical; no concurrency to race")
	var srAcc, rlsAcc []float64
	for seed := range uint64(3) {
		data, truth, _ := srData(t, 1500, 10, 8, 0.005, 40+seed)
		for _, algo := range []Algorithm{SR, RLS} {
			m, _, err := Solve(context.Background(), data, Params{Algorithm: algo, Lambda: 1e-2}, nil)
			if err != nil {
				t.Fatal(err)
			}
			acc := transductiveAccuracy(t, m, data, truth)
			if algo == SR {
				srAcc = append(srAcc, acc)
			} else {
				rlsAcc = append(rlsAcc, acc)
			}
		}
	}
	t.Logf("sr %v, supervised rls %v", srAcc, rlsAcc)
	var gain float64
	for i := range srAcc {
		if srAcc[i] <= rlsAcc[i] {
			t.Errorf("seed %d: sr %.3f does not beat supervised %.3f", i, srAcc[i], rlsAcc[i])
		}
		gain += (srAcc[i] - rlsAcc[i]) / float64(len(srAcc))
	}
	if gain < 0.02 {
		t.Errorf("sr beats supervised by %.1f points on average, not 2", 100*gain)
	}
}

func transductiveAccuracy(t testing.TB, m *model.Model, data Window, truth []string) float64 {
	ok, total := 0, 0
	row := make([]float64, data.X.Cols())
	for i, l := range data.Labels {
		if l != "" {
			continue
		}
		clear(row)
		data.X.MulTransVec(row, []int{i}, []float64{1})
		if m.Classes[m.Predict(vector.Dense(row)).Class] == truth[i] {
			ok++
		}
		total++
	}
	return float64(ok) / float64(total)
}

// TestSRBinary checks that two classes work: one response, two
// centroids, probabilities in (0, 1].
func TestSRBinary(t *testing.T) {
	data, truth, _ := srData(t, 400, 5, 2, 0.05, 8)
	m, st, err := Solve(context.Background(), data, Params{Algorithm: SR}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Problems != 1 || len(m.Centroids) != 2 || m.Binary() {
		t.Fatalf("binary SR: %d problems, %d centroids, Binary() = %v", st.Problems, len(m.Centroids), m.Binary())
	}
	if acc := transductiveAccuracy(t, m, data, truth); acc < 0.9 {
		t.Errorf("accuracy %.3f on two separated clusters", acc)
	}
	x := make([]float64, 5)
	data.X.MulTransVec(x, []int{0}, []float64{1})
	pred := m.Predict(vector.Dense(x))
	if pred.Prob <= 0 || pred.Prob > 1 {
		t.Errorf("probability %v", pred.Prob)
	}
}

// TestSRNeedsGraph checks the error without a graph.
func TestSRNeedsGraph(t *testing.T) {
	data, _, _ := srData(t, 50, 3, 3, 0.2, 1)
	data.Graph = nil
	if _, _, err := Solve(context.Background(), data, Params{Algorithm: SR}, nil); err == nil {
		t.Fatal("sr without a graph: no error")
	}
}

// sparseSRWindow returns rows [lo, hi) of text-like rows as a window with
// its exact cosine kNN graph, keyed by row index; rows of 2^12 features,
// the class is the topic modulo 4, and every tenth row is labeled.
func sparseSRWindow(t *testing.T, text synth.SparseText, lo, hi int) Window {
	t.Helper()
	rows := text.Rows[lo:hi]
	keys := make([]uint64, 0, hi-lo)
	labels := make([]string, 0, hi-lo)
	for i := lo; i < hi; i++ {
		keys = append(keys, uint64(i))
		label := ""
		if i%10 == 0 {
			label = fmt.Sprint(text.Topics[i] % 4)
		}
		labels = append(labels, label)
	}
	lap := onlinetest.AnnLaplacian(t, rows, anngraph.Config{K: 10, Metric: anngraph.Cosine, Exhaustive: true}, anngraph.LaplacianConfig{})
	return Window{X: linalg.NewMatrix(rows, 1<<12), Labels: labels, Keys: keys, Laplacian: lap, Graph: lap, Rows: rows}
}

// TestSRDualsReproduceTheWeights checks the warm state of a sparse SR
// model: at the optimum of each ridge regression the weights are the sum
// of the rows weighted by their dual coefficients, a = Σ c_i x̃_i (the
// bias's row entry is 1).
func TestSRDualsReproduceTheWeights(t *testing.T) {
	text := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 400, Dim: 1 << 12, NNZ: 30, Topics: 8, Seed: 3})
	data := sparseSRWindow(t, text, 0, 400)
	params := Params{Algorithm: SR, Spectral: spectral.Settings{Tolerance: 1e-11}}
	m, _, err := Solve(context.Background(), data, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	sp := warmOf(m).spectral
	if sp == nil || sp.Responses != len(m.Problems) || len(sp.Duals) != len(sp.Keys)*sp.Responses {
		t.Fatalf("no dual coefficients kept for %d responses", len(m.Problems))
	}
	for k, p := range m.Problems {
		c := make([]float64, len(sp.Keys))
		var bias float64
		for i := range c {
			c[i] = sp.Duals[i*sp.Responses+k]
			bias += c[i]
		}
		a := make([]float64, 1<<12)
		for i, x := range data.Rows {
			x.AddScaledTo(a, c[i])
		}
		a = append(a, bias)
		var diff, norm2 float64
		for j, w := range p.W {
			diff += (w - a[j]) * (w - a[j])
			norm2 += w * w
		}
		if math.Sqrt(diff) > 1e-6*math.Sqrt(norm2) {
			t.Errorf("response %d: ‖a - Σ c_i x̃_i‖ = %.3g, ‖a‖ = %.3g", k, math.Sqrt(diff), math.Sqrt(norm2))
		}
	}
}

// TestSRSparseWarmStartAfterSlide checks the warm start of the regressions
// on a sparse window (block CG in the dual): after 2% of the rows slide, a
// re-solve from the dual coefficients of the rows still in the window
// takes fewer iterations than a cold one and classifies alike.
func TestSRSparseWarmStartAfterSlide(t *testing.T) {
	text := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 620, Dim: 1 << 12, NNZ: 30, Topics: 8, Seed: 5})
	params := Params{Algorithm: SR}
	first, _, err := Solve(context.Background(), sparseSRWindow(t, text, 0, 600), params, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := sparseSRWindow(t, text, 12, 612)
	cold, coldSt, err := Solve(context.Background(), next, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	warm, warmSt, err := Solve(context.Background(), next, params, first)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iterations: cold %d, warm %d", coldSt.CGLSIters, warmSt.CGLSIters)
	if warmSt.CGLSIters >= coldSt.CGLSIters {
		t.Errorf("warm regressions took %d iterations, cold %d", warmSt.CGLSIters, coldSt.CGLSIters)
	}
	agree := 0
	for _, x := range next.Rows {
		if cold.Classes[cold.Predict(x).Class] == warm.Classes[warm.Predict(x).Class] {
			agree++
		}
	}
	if agree < len(next.Rows)*99/100 {
		t.Errorf("warm and cold models agree on %d of %d rows", agree, len(next.Rows))
	}
}

// TestSRSparseWarmStartOnUnchangedWindow: with every row of the last solve
// still in the window, the regressions start from the last duals, which
// already solve them: no iteration.
func TestSRSparseWarmStartOnUnchangedWindow(t *testing.T) {
	text := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 400, Dim: 1 << 12, NNZ: 30, Topics: 8, Seed: 7})
	data := sparseSRWindow(t, text, 0, 400)
	params := Params{Algorithm: SR}
	cold, coldSt, err := Solve(context.Background(), data, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, warmSt, err := Solve(context.Background(), data, params, cold)
	if err != nil {
		t.Fatal(err)
	}
	if warmSt.CGLSIters > 0 || coldSt.CGLSIters == 0 {
		t.Errorf("iterations: cold %d, warm on the same window %d (want 0)", coldSt.CGLSIters, warmSt.CGLSIters)
	}
}

// srData draws c Gaussian clusters in dim dimensions, labels a fraction of
// each class (at least two rows), and builds the exact kNN graph.
func srData(t testing.TB, n, dim, c int, labeledFrac float64, seed uint64) (Window, []string, *anngraph.Laplacian) {
	t.Helper()
	xs, labels, truth := onlinetest.LabeledClusters(n, dim, c, labeledFrac, seed)
	lap := onlinetest.AnnLaplacian(t, xs, anngraph.Config{K: 8, Metric: anngraph.Euclidean, Exhaustive: true}, anngraph.LaplacianConfig{})
	return Window{X: linalg.NewMatrix(xs, dim), Labels: labels, Laplacian: lap, Graph: lap}, truth, lap
}
