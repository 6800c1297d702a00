package anngraph

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

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

// sampleRows draws up to s distinct rows of n, in increasing order.
func sampleRows(n, s int, seed uint64) []int {
	if s >= n {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	r := rand.New(rand.NewPCG(seed, 0x9b05688c2b3e6c1f))
	rows := r.Perm(n)[:s]
	slices.Sort(rows)
	return rows
}

// recall counts the listed neighbours within the exact K-th distance.
func recall(listed []Neighbor, exact []float64, k int) (hits, total float64) {
	want := min(k, len(exact))
	if want == 0 {
		return 0, 0
	}
	kth := exact[want-1]
	tol := 1e-9 * max(1, math.Abs(kth))
	for _, nb := range listed[:min(len(listed), want)] {
		if nb.Distance <= kth+tol {
			hits++
		}
	}
	return hits, float64(want)
}

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
		rows := sampleRows(v.Len(), 40, 3)
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
