package anngraph

import (
	"context"
	"math"
	"testing"

	"streamer/anngraph/anngraphtest"
	"streamer/synth"
	"streamer/vector"
)

// TestExactDistances holds the brute force of bench ann against the
// tests' own, dense and sparse.
func TestExactDistances(t *testing.T) {
	dense, _ := synth.Clusters(synth.ClusterConfig{Points: 300, Dim: 8, Seed: 2})
	sparse := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 300, Dim: 1 << 12, NNZ: 15, Seed: 2}).Rows
	for _, tc := range []struct {
		name   string
		rows   []vector.Vector
		metric Metric
	}{{"dense", dense, Euclidean}, {"sparse", sparse, Cosine}} {
		v, err := Build(tc.rows, Config{MaxExamples: len(tc.rows), K: 5, Metric: tc.metric, Exhaustive: true})
		if err != nil {
			t.Fatal(err)
		}
		rows := anngraphtest.SampleRows(v.Len(), 40, 3)
		got, err := v.ExactDistances(context.Background(), rows, 5)
		if err != nil {
			t.Fatal(err)
		}
		for s, i := range rows {
			want := exactNeighbors(v, i, 5)
			if len(got[s]) != len(want) {
				t.Fatalf("%s: row %d: %d distances, want %d", tc.name, i, len(got[s]), len(want))
			}
			for r := range want {
				if math.Abs(got[s][r]-want[r].Distance) > 1e-9 {
					t.Fatalf("%s: row %d, rank %d: %v, want %v", tc.name, i, r, got[s][r], want[r].Distance)
				}
			}
		}
	}
}
