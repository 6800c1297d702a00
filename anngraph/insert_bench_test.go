package anngraph

import (
	"testing"
	"time"

	"streamer/anngraph/anngraphtest"
	"streamer/synth"
	"streamer/vector"
)

// benchCase is a set of points and the metric that suits them.
type benchCase struct {
	name   string
	xs     []vector.Vector
	metric Metric
}

// benchCases returns n clustered dense points of 784 dimensions and n
// 2^18-dimensional text-like rows.
func benchCases(n int) []benchCase {
	dense, _ := synth.Clusters(synth.ClusterConfig{Points: n, Dim: 784, Seed: 1})
	sparse := synth.GenerateSparseText(synth.SparseTextConfig{Rows: n, Seed: 1}).Rows
	return []benchCase{{"dense", dense, Euclidean}, {"sparse", sparse, Cosine}}
}

// BenchmarkFill fills an empty window, as hnswlib's fill rate is measured
// (scripts/hnswlib): one op is one insert, ANN_WINDOW points (default
// 5,000) of 784 clustered dense dimensions or 2^18-dimensional text-like
// rows.
func BenchmarkFill(b *testing.B) {
	n := anngraphtest.EnvInt("ANN_WINDOW", 5000)
	for _, tc := range benchCases(n) {
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

// BenchmarkSearch queries a full window of ANN_WINDOW points (default
// 5,000) for the K nearest of its own points: one op is one query.
func BenchmarkSearch(b *testing.B) {
	n := anngraphtest.EnvInt("ANN_WINDOW", 5000)
	for _, tc := range benchCases(n) {
		b.Run(tc.name, func(b *testing.B) {
			w, err := New(Config{MaxExamples: n, Metric: tc.metric, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			for i, x := range tc.xs {
				if _, err := w.Insert(uint64(i), time.Time{}, x); err != nil {
					b.Fatal(err)
				}
			}
			k := w.Config().K
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.Search(tc.xs[i%n], k); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkSlideByAge streams points through a window bounded by MaxAge
// that holds ANN_WINDOW of them (default 2,000): one op is one insert and,
// the window full, one eviction by age with its list repairs, the oldest
// found by the age heap.
func BenchmarkSlideByAge(b *testing.B) {
	n := anngraphtest.EnvInt("ANN_WINDOW", 2000)
	for _, tc := range benchCases(2 * n) {
		b.Run(tc.name, func(b *testing.B) {
			w, err := New(Config{MaxExamples: 4 * n, MaxAge: time.Duration(n) * time.Millisecond, Metric: tc.metric, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			insert := func(i int) {
				if _, err := w.Insert(uint64(i), time.UnixMilli(int64(i)), tc.xs[i%len(tc.xs)]); err != nil {
					b.Fatal(err)
				}
			}
			for i := range n {
				insert(i)
			}
			i, before := n, w.Stats()
			b.ReportAllocs()
			for b.Loop() {
				insert(i)
				i++
			}
			st := w.Stats()
			b.ReportMetric(float64(st.Evictions-before.Evictions)/float64(st.Inserts-before.Inserts), "evictions/insert")
		})
	}
}
