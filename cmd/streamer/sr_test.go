package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamer/synth"
)

// writeClusters writes a 4-class LIBSVM file of clustered rows, every row
// labeled; class 0 is a class, since the file's labels are not ±1.
func writeClusters(t *testing.T, dir string) string {
	t.Helper()
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 400, Dim: 6, Clusters: 4, Spread: 0.5, Seed: 12})
	var b strings.Builder
	for i, x := range xs {
		fmt.Fprintf(&b, "%d", cs[i])
		for j, v := range x.Values {
			fmt.Fprintf(&b, " %d:%g", j+1, v)
		}
		b.WriteByte('\n')
	}
	data := filepath.Join(dir, "clusters.svm")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestFitSpectralRegressionAndKernel runs fit with sr, auto and a kernel
// map on a multi-class file, writes the model, and checks that predict
// reads the map and centroids back from it and scores the file alike.
func TestFitSpectralRegressionAndKernel(t *testing.T) {
	dir := t.TempDir()
	data := writeClusters(t, dir)
	for _, tc := range []struct {
		name string
		args []string
		algo string
	}{
		{"sr", []string{"--algo", "sr"}, "sr"},
		{"auto", []string{"--algo", "auto"}, "sr"},
		{"sr+kernel", []string{"--algo", "sr", "--kernel", "rbf", "--landmarks", "50"}, "sr"},
		{"svm+kernel", []string{"--algo", "svm", "--kernel", "rbf", "--landmarks", "50"}, "svm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := filepath.Join(dir, tc.name+".snap")
			args := append([]string{"fit", "--data", data, "--out", model, "--knn", "8"}, tc.args...)
			var fit struct {
				Algo    string   `json:"algo"`
				Classes []string `json:"classes"`
				Rows    int      `json:"rows"`
			}
			if err := json.Unmarshal([]byte(run(t, args...)), &fit); err != nil {
				t.Fatal(err)
			}
			if fit.Algo != tc.algo || len(fit.Classes) != 4 || fit.Rows != 400 {
				t.Fatalf("fit reported %+v, want algorithm %s over 4 classes and 400 rows", fit, tc.algo)
			}
			out := run(t, "predict", "--model", model, "--data", data, "--out", filepath.Join(dir, tc.name+".jsonl"))
			var rep struct {
				Accuracy float64 `json:"accuracy"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("predict printed %q: %v", out, err)
			}
			if rep.Accuracy < 0.9 {
				t.Errorf("predict with the saved model: accuracy %.3f on the training file", rep.Accuracy)
			}
		})
	}
}
