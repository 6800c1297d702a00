package train

import (
	"context"
	"fmt"
	"testing"

	"streamer/anngraph"
	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/synth"
)

// BenchmarkTrainDenseMultiClass measures a cold one-versus-rest fit of a
// small dense problem: 1,800 rows × 64 features, 10 classes, 5% labeled
// (the size of `streamer fit` on a digits-like set); lapsvm over the
// exact 10-NN graph, normalized Laplacian.
func BenchmarkTrainDenseMultiClass(b *testing.B) {
	xs, labels, _ := onlinetest.DenseMultiClass(1, 1800, 64, 10, 0.05)
	lap := onlinetest.AnnLaplacian(b, xs, anngraph.Config{K: 10, Metric: anngraph.Euclidean, Exhaustive: true}, anngraph.LaplacianConfig{Normalized: true})
	data := Window{X: linalg.NewMatrix(xs, 64), Labels: labels, Laplacian: lap, Graph: lap}
	for _, p := range []Params{{Algorithm: SVM}, {Algorithm: TSVM}, {Algorithm: DA}, {Algorithm: LapSVM, LambdaI: 1}} {
		b.Run(string(p.Algorithm), func(b *testing.B) {
			var st Stats
			for b.Loop() {
				var err error
				_, st, err = Solve(context.Background(), data, p, nil)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.NewtonSteps), "newton-steps")
			b.ReportMetric(float64(st.CGLSIters), "cgls-iters")
			b.ReportMetric(st.Objective, "objective")
		})
	}
}

// BenchmarkTrainSparseSR measures SR on a sparse text-like window of
// 4,000 rows (2^16 features, 40 non-zeros, 10 classes, 5% labeled): a
// cold solve, and a warm one after 1% of the rows slid, whose regressions
// block CG solves in the dual.
func BenchmarkTrainSparseSR(b *testing.B) {
	const n, slide, classes = 4000, 40, 10
	text := synth.GenerateSparseText(synth.SparseTextConfig{Rows: n + slide, Dim: 1 << 16, NNZ: 40, Topics: 2 * classes, Seed: 3})
	window := func(first int) Window {
		rows := text.Rows[first : first+n]
		keys, labels := make([]uint64, n), make([]string, n)
		for i := range n {
			keys[i] = uint64(first + i)
			if (first+i)%20 == 0 {
				labels[i] = fmt.Sprint(text.Topics[first+i] % classes)
			}
		}
		lap := onlinetest.AnnLaplacian(b, rows, anngraph.Config{K: 10, Metric: anngraph.Cosine, Seed: 1}, anngraph.LaplacianConfig{Normalized: true})
		return Window{X: linalg.NewMatrix(rows, 1<<16), Labels: labels, Keys: keys, Rows: rows, Laplacian: lap, Graph: lap}
	}
	first, next := window(0), window(slide)
	params := Params{Algorithm: SR}
	prev, _, err := Solve(context.Background(), first, params, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		prev *model.Model
	}{{"cold", nil}, {"warm", prev}} {
		b.Run(c.name, func(b *testing.B) {
			var st Stats
			for b.Loop() {
				var err error
				if _, st, err = Solve(context.Background(), next, params, c.prev); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.CGLSIters/st.Problems), "block-iters")
		})
	}
}
