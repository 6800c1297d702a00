package anngraph

import (
	"testing"
	"time"

	"streamer/synth"
	"streamer/vector"
)

// BenchmarkFill fills an empty window, as hnswlib's fill rate is measured
// (scripts/hnswlib): one op is one insert, ANN_WINDOW points (default
// 5,000) of 784 clustered dense dimensions or 2^18-dimensional text-like
// rows.
func BenchmarkFill(b *testing.B) {
	n := envInt("ANN_WINDOW", 5000)
	dense, _ := synth.Clusters(synth.ClusterConfig{Points: n, Dim: 784, Seed: 1})
	sparse := synth.GenerateSparseText(synth.SparseTextConfig{Rows: n, Seed: 1}).Rows
	for _, tc := range []struct {
		name   string
		xs     []vector.Vector
		metric Metric
	}{{"dense", dense, Euclidean}, {"sparse", sparse, Cosine}} {
		b.Run(tc.name, func(b *testing.B) {
			var w *Window
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if i%n == 0 {
					b.StopTimer()
					var err error
					if w, err = New(Config{MaxExamples: n, Metric: tc.metric, Seed: 1}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if _, err := w.Insert(uint64(i), time.Time{}, tc.xs[i%n]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(w.Stats().Distances)/float64(w.Stats().Inserts), "distances/insert")
		})
	}
}
