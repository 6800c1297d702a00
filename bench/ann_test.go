package bench

import (
	"context"
	"os"
	"strconv"
	"testing"

	"streamer/anngraph"
	"streamer/synth"
	"streamer/vector"
)

// envInt reads a benchmark size from the environment, for long runs.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

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
	window := envInt("ANN_WINDOW", 2000)
	xs, _ := synth.Clusters(synth.ClusterConfig{Points: 6 * window, Dim: envInt("ANN_DIM", 784), Seed: 1})
	runSliding(b, xs, anngraph.Config{MaxExamples: window, Metric: anngraph.Euclidean})
}

// BenchmarkSlidingSparse is BenchmarkSlidingDense for sparse text-like rows
// of 2^18 dimensions (ANN_WINDOW default 5000; acceptance 50000).
func BenchmarkSlidingSparse(b *testing.B) {
	window := envInt("ANN_WINDOW", 5000)
	xs := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 6 * window, Seed: 1}).Rows
	runSliding(b, xs, anngraph.Config{MaxExamples: window, Metric: anngraph.Cosine})
}

// runSliding streams xs through a window of cfg, one by one, or with
// ANN_BATCH set in batches of that many placed by ANN_WORKERS goroutines
// (default GOMAXPROCS).
func runSliding(b *testing.B, xs []vector.Vector, cfg anngraph.Config) {
	cfg.InsertWorkers = envInt("ANN_WORKERS", 0)
	cfg.EfConstruction = envInt("ANN_EFC", 0)
	cfg.M = envInt("ANN_M", 0)
	var r ANNReport
	for b.Loop() {
		var err error
		r, err = streamANN(context.Background(), ANNConfig{Window: cfg, Sample: envInt("ANN_SAMPLE", 500), Batch: envInt("ANN_BATCH", 0)}, xs)
		if err != nil {
			b.Fatal(err)
		}
	}
	reportANN(b, r)
}
