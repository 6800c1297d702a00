package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamer/internal/testlevel"
	"streamer/synth"
)

// TestFitG50CKernelLapSVM runs the thesis's g50c protocol (Table 2.6: 550
// points, 10 random splits with l = 50 labeled, transductive error on the
// other 500) through `streamer fit` as a user would: LapSVM over the
// Nyström map of a Gaussian kernel with every row a landmark (the exact
// kernel machine), the kNN graph on the input rows. The splits are those
// of the online package's TestG50C; the class is the model's (Platt's
// probability above ½), not the sign of the output. γ is the default
// (median heuristic); k = 50, p = 8 and λ_I were chosen on other samples
// (seeds 1 and 2). This sample (Bayes error 5.1%)
// measures 5.46%; over nine samples the same command averages 6.1%
// against their mean Bayes error of 4.9% (docs/RESULTS.md, "g50c").
func TestFitG50CKernelLapSVM(t *testing.T) {
	testlevel.Long(t, "ten fits of 550 rows")
	dir := t.TempDir()
	data, ys := writeG50C(t, dir, 4)
	args := []string{"--algo", "lapsvm", "--kernel", "rbf", "--landmarks", "550",
		"--knn", "50", "--laplacian-degree", "8", "--lambda", "1e-6", "--lambda-i", "100"}
	r := rand.New(rand.NewPCG(11, 5))
	var errRate float64
	for split := range 10 {
		labels := writeG50CSplit(t, dir, split, ys, r.Perm(550)[:50])
		var rep struct {
			Accuracy float64 `json:"transductive_accuracy"`
			Labeled  int     `json:"labeled"`
		}
		out := run(t, append([]string{"fit", "--data", data, "--labels", labels}, args...)...)
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Labeled != 50 {
			t.Fatalf("fit printed %q (%v)", out, err)
		}
		errRate += (1 - rep.Accuracy) / 10
	}
	t.Logf("streamer fit %s: transductive error %.2f%%", strings.Join(args, " "), 100*errRate)
	if errRate > 0.06 {
		t.Errorf("transductive error %.2f%%, above 6%%", 100*errRate)
	}
}

// writeG50C writes the g50c sample of seed as a LIBSVM file with every
// label; the splits hide all but 50 with --labels.
func writeG50C(t *testing.T, dir string, seed uint64) (string, []float64) {
	t.Helper()
	xs, ys := synth.G50C(seed)
	var b strings.Builder
	for i, x := range xs {
		fmt.Fprintf(&b, "%d", int(ys[i]))
		for j, v := range x.Values {
			fmt.Fprintf(&b, " %d:%g", j+1, v)
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, fmt.Sprintf("g50c-%d.svm", seed))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, ys
}

// writeG50CSplit writes an SVMlin labels file that reveals the labels of
// the rows in labeled and hides the others (0).
func writeG50CSplit(t *testing.T, dir string, split int, ys []float64, labeled []int) string {
	t.Helper()
	lines := make([]string, len(ys))
	for i := range lines {
		lines[i] = "0"
	}
	for _, i := range labeled {
		lines[i] = fmt.Sprint(int(ys[i]))
	}
	path := filepath.Join(dir, fmt.Sprintf("split-%d.labels", split))
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
