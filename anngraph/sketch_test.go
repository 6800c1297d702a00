package anngraph

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"streamer/anngraph/anngraphtest"
	"streamer/synth"
	"streamer/vector"
)

// sketchRows projects unit-normalized sparse rows to dim dimensions with a
// random ±1/√dim matrix whose entries come from a hash of (feature, column):
// E[sketch(a)·sketch(b)] = cos(a, b) (Achlioptas, 2003).
func sketchRows(rows []vector.Vector, dim int) [][]float64 {
	out := make([][]float64, len(rows))
	scale := 1 / math.Sqrt(float64(dim))
	for i, x := range rows {
		y := make([]float64, dim)
		inv := 1 / math.Max(x.Norm(), 1e-300)
		for k, j := range x.Indices {
			v := x.Values[k] * inv * scale
			for base := 0; base < dim; base += 64 {
				h := mix64(uint64(j)<<20 ^ uint64(base))
				for b := range min(64, dim-base) {
					if h&(1<<b) != 0 {
						y[base+b] += v
					} else {
						y[base+b] -= v
					}
				}
			}
		}
		out[i] = y
	}
	return out
}

func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// BenchmarkSketchRerankDepth measures how deep a candidate list ranked by a
// low-dimensional sketch of sparse text-like rows must be re-ranked by the
// exact cosine to hold 95% of the exact 10 nearest. Even with an exact scan
// of the sketches, the depth bounds what a sketch-based search saves: the
// re-ranking costs that many exact distances. ANN_WINDOW sets the rows
// (default 20000; the acceptance window is 50000).
func BenchmarkSketchRerankDepth(b *testing.B) {
	n := anngraphtest.EnvInt("ANN_WINDOW", 20000)
	rows := synth.GenerateSparseText(synth.SparseTextConfig{Rows: n, Seed: 1}).Rows
	queries := anngraphtest.SampleRows(n, 100, 5)
	depths := []int{10, 20, 50, 100, 200, 500, 1000, 2000, 5000}
	for _, dim := range []int{64, 128, 256} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			var recallAt []float64
			for b.Loop() {
				sk := sketchRows(rows, dim)
				recallAt = make([]float64, len(depths))
				for _, q := range queries {
					exact := make([]cand, 0, n)
					approx := make([]cand, 0, n)
					for j := range rows {
						if j == q {
							continue
						}
						exact = append(exact, cand{d: -vector.Dot(rows[q], rows[j]), id: int32(j)})
						approx = append(approx, cand{d: -vector.DenseDot(sk[q], sk[j]), id: int32(j)})
					}
					slices.SortFunc(exact, cmpCand)
					slices.SortFunc(approx, cmpCand)
					top := map[int32]bool{}
					for _, c := range exact[:10] {
						top[c.id] = true
					}
					for di, depth := range depths {
						hits := 0
						for _, c := range approx[:depth] {
							if top[c.id] {
								hits++
							}
						}
						recallAt[di] += float64(hits) / 10 / float64(len(queries))
					}
				}
			}
			need := math.NaN()
			for di, depth := range depths {
				b.Logf("sketch dim %d: recall@10 within the top %d by sketch = %.3f", dim, depth, recallAt[di])
				if math.IsNaN(need) && recallAt[di] >= 0.95 {
					need = float64(depth)
				}
			}
			b.ReportMetric(need, "depth@0.95")
		})
	}
}
