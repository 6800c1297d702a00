package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamer/anngraph"
	"streamer/synth"
)

// TestANNSmall streams six window lengths of small generated points, one
// by one and in batches, dense and sparse, and checks every figure of the
// report: the lists and the searches find the exact neighbours, the window
// slid five times, and the rates and sizes are filled in.
func TestANNSmall(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      ANNConfig
		workers  int
		metric   string
		minBytes float64
	}{
		{"dense", ANNConfig{Generate: "dense", Dim: 8}, 1, "euclidean", 8 * 8},
		{"dense in batches", ANNConfig{Generate: "dense", Dim: 8, Batch: 16, Window: anngraph.Config{InsertWorkers: 2}}, 2, "euclidean", 8 * 8},
		{"sparse", ANNConfig{Generate: "sparse", Dim: 1 << 12, NNZ: 10}, 1, "cosine", 10 * 12},
		{"sparse, euclidean", ANNConfig{Generate: "sparse", Dim: 1 << 12, NNZ: 10, Metric: "euclidean"}, 1, "euclidean", 10 * 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Window.MaxExamples, cfg.Window.K, cfg.Sample, cfg.Seed = 100, 5, 40, 1
			rep, err := ANN(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Points != 600 || rep.Window != 100 || rep.K != 5 || rep.Sample != 40 || rep.Metric != tc.metric ||
				rep.InsertWorkers != tc.workers || rep.Batch != max(cfg.Batch, 0) {
				t.Errorf("report %+v", rep)
			}
			if rep.RecallAtK < 0.9 || rep.SearchRecallAtK < 0.9 || rep.RecallAtK > 1 || rep.SearchRecallAtK > 1 {
				t.Errorf("recall@5: lists %.3f, searches %.3f", rep.RecallAtK, rep.SearchRecallAtK)
			}
			if rep.WindowsSlid != 5 {
				t.Errorf("windows slid %v, want 5", rep.WindowsSlid)
			}
			for name, v := range map[string]float64{"inserts/s": rep.InsertsPerSec, "evictions/s": rep.EvictionsPerSec,
				"fill inserts/s": rep.FillInsertsPerSec, "queries/s": rep.QueriesPerSec, "stream points/s": rep.StreamPointsPerSec,
				"distances/insert": rep.DistancesPerInsert} {
				if v <= 0 {
					t.Errorf("%s = %v", name, v)
				}
			}
			if rep.VectorBytesPerPoint < tc.minBytes || rep.BytesPerPoint != rep.IndexBytesPerPoint+rep.VectorBytesPerPoint {
				t.Errorf("bytes per point: %v vectors, %v index, %v in all", rep.VectorBytesPerPoint, rep.IndexBytesPerPoint, rep.BytesPerPoint)
			}
		})
	}
}

// TestANNReadsAndExportsPoints streams the points of a LIBSVM file and
// writes them for the hnswlib reference on the way.
func TestANNReadsAndExportsPoints(t *testing.T) {
	dir := t.TempDir()
	rows := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 300, Dim: 1 << 10, NNZ: 8, Seed: 3}).Rows
	var svm strings.Builder
	for _, x := range rows {
		svm.WriteString("0")
		for k, j := range x.Indices {
			fmt.Fprintf(&svm, " %d:%g", j+1, x.Values[k])
		}
		svm.WriteByte('\n')
	}
	data, export := filepath.Join(dir, "points.svm"), filepath.Join(dir, "points.bin")
	if err := os.WriteFile(data, []byte(svm.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := ANN(context.Background(), ANNConfig{Data: data, Export: export, Sample: 20, Seed: 1,
		Window: anngraph.Config{MaxExamples: 50, K: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Points != 300 || rep.Metric != "cosine" || rep.RecallAtK < 0.9 {
		t.Errorf("report %+v", rep)
	}
	var want bytes.Buffer
	if err := WritePoints(&want, rows); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(export); err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("exported %d bytes (%v), want the %d WritePoints writes", len(got), err, want.Len())
	}
}

// TestANNRefusesBadConfigs names what is wrong before streaming anything.
func TestANNRefusesBadConfigs(t *testing.T) {
	window := anngraph.Config{MaxExamples: 10, K: 3}
	for _, c := range []struct {
		cfg  ANNConfig
		want string
	}{
		{ANNConfig{Data: "x.svm", Generate: "dense", Window: window}, "exclude each other"},
		{ANNConfig{Generate: "gaussian", Window: window}, "want dense or sparse"},
		{ANNConfig{Window: window}, "want dense or sparse"},
		{ANNConfig{Generate: "dense", Dim: 4, Metric: "manhattan", Window: window}, "manhattan"},
		{ANNConfig{Generate: "dense", Dim: 4, Sample: -1, Window: window}, "Sample"},
	} {
		if _, err := ANN(context.Background(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.cfg, err, c.want)
		}
	}
}
