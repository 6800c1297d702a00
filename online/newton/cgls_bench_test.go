package newton

import (
	"fmt"
	"testing"

	"streamer/online/linalg"
	"streamer/synth"
)

// BenchmarkCGLS runs ten CGLS iterations (a Newton step's typical number
// on the 200,000-row problem of docs/RESULTS.md) over two thirds of the
// rows of a text-like window of 200,000 rows × 80 non-zeros, on one and
// two workers.
func BenchmarkCGLS(b *testing.B) {
	data := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 200000, Seed: 1})
	const iters = 10
	for _, workers := range []int{1, 2} {
		x := linalg.NewCSR(data.Rows, 1<<18, workers)
		var sys cglsSystem
		for i, y := range data.Labels {
			if i%3 != 0 {
				sys.rows = append(sys.rows, i)
				sys.cost = append(sys.cost, 1/float64(len(data.Labels)))
				sys.target = append(sys.target, y)
			}
		}
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			s := &newton{x: x, d: x.Cols(), lambda: 1e-3}
			w := make([]float64, s.d+1)
			o := make([]float64, len(sys.rows))
			b.ResetTimer()
			for range b.N {
				clear(w)
				clear(o)
				if res := s.cgls(sys, w, o, nil, cglsStop{}, iters); res.iters != iters {
					b.Fatalf("%d iterations, want %d", res.iters, iters)
				}
			}
			b.ReportMetric(float64(b.N*iters)/b.Elapsed().Seconds(), "iterations/s")
		})
	}
}
