package bench

import (
	"context"
	"testing"

	"streamer/anngraph"
	"streamer/anngraph/anngraphtest"
	"streamer/synth"
	"streamer/vector"
)

func reportANN(b *testing.B, r ANNReport) {
	b.ReportMetric(r.RecallAtK, "recall@k")
	b.ReportMetric(r.InsertsPerSec, "inserts/s")
	b.ReportMetric(r.FillInsertsPerSec, "fill-inserts/s")
	b.ReportMetric(r.EvictionsPerSec, "evictions/s")
	b.ReportMetric(r.QueriesPerSec, "queries/s")
	b.ReportMetric(r.BytesPerPoint, "bytes/point")
	b.ReportMetric(r.DistancesPerInsert, "distances/insert")
}

// BenchmarkSlidingDense streams clustered dense points through a window for
// six window lengths. ANN_WINDOW sets the window (default 2000); the
// acceptance run is ANN_WINDOW=20000.
func BenchmarkSlidingDense(b *testing.B) {
	window := anngraphtest.EnvInt("ANN_WINDOW", 2000)
	xs, _ := synth.Clusters(synth.ClusterConfig{Points: 6 * window, Dim: anngraphtest.EnvInt("ANN_DIM", 784), Seed: 1})
	runSliding(b, xs, anngraph.Config{MaxExamples: window, Metric: anngraph.Euclidean})
}

// BenchmarkSlidingSparse is BenchmarkSlidingDense for sparse text-like rows
// of 2^18 dimensions (ANN_WINDOW default 5000; acceptance 50000).
func BenchmarkSlidingSparse(b *testing.B) {
	window := anngraphtest.EnvInt("ANN_WINDOW", 5000)
	xs := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 6 * window, Seed: 1}).Rows
	runSliding(b, xs, anngraph.Config{MaxExamples: window, Metric: anngraph.Cosine})
}

// runSliding streams xs through a window of cfg, one by one, or with
// ANN_BATCH set in batches of that many placed by ANN_WORKERS goroutines
// (default GOMAXPROCS).
func runSliding(b *testing.B, xs []vector.Vector, cfg anngraph.Config) {
	cfg.InsertWorkers = anngraphtest.EnvInt("ANN_WORKERS", 0)
	cfg.EfConstruction = anngraphtest.EnvInt("ANN_EFC", 0)
	cfg.M = anngraphtest.EnvInt("ANN_M", 0)
	var r ANNReport
	for b.Loop() {
		var err error
		r, err = streamANN(context.Background(), ANNConfig{Window: cfg, Sample: anngraphtest.EnvInt("ANN_SAMPLE", 500), Batch: anngraphtest.EnvInt("ANN_BATCH", 0)}, xs)
		if err != nil {
			b.Fatal(err)
		}
	}
	reportANN(b, r)
}
