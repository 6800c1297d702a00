package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/internal/testlevel"
	"streamer/online"
	"streamer/online/train"
	"streamer/pipeline"
	"streamer/snapshot"
	"streamer/synth"
)

// writeLIBSVM writes g50c-like data: the first labeled rows carry ±1, the
// rest 0 (unlabeled); truth gets every row's class.
func writeLIBSVM(t *testing.T, n, labeled int) (path string, truth []string) {
	t.Helper()
	xs, ys := synth.G50C(4)
	var b strings.Builder
	for i := range n {
		lab := 0
		if i < labeled {
			lab = int(ys[i])
		}
		fmt.Fprintf(&b, "%d", lab)
		for j, v := range xs[i].Values {
			fmt.Fprintf(&b, " %d:%g", j+1, v)
		}
		b.WriteByte('\n')
		truth = append(truth, fmt.Sprint(int(ys[i])))
	}
	path = filepath.Join(t.TempDir(), "g50c.svm")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, truth
}

func TestFitAndPredictLIBSVM(t *testing.T) {
	path, truth := writeLIBSVM(t, 550, 50)
	for _, a := range []train.Algorithm{train.SVM, train.TSVM, train.DA, train.LapSVM, train.LapRLS, train.Auto} {
		cfg := FitConfig{Data: path, Params: train.Params{Algorithm: a, Lambda: 300, LambdaU: 3, LambdaI: 1, R: 0.5},
			Graph: GraphConfig{K: 10, Laplacian: anngraph.LaplacianConfig{Normalized: true}}}
		fit, err := RunFit(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		r := fit.Report
		if r.Rows != 550 || r.Labeled != 50 || r.Features != 50 || len(r.Classes) != 2 || r.NewtonSteps == 0 {
			t.Fatalf("%s: report %+v", a, r)
		}
		errs := 0
		for i := 50; i < 550; i++ {
			if fit.Predictions[i] != truth[i] {
				errs++
			}
		}
		if rate := float64(errs) / 500; rate > 0.12 {
			t.Errorf("%s: transductive error %.3f", a, rate)
		}
		// The degree left at 0 is recorded as the one the fit used.
		if d, want := fit.Snapshot.Window.Degree, train.GraphDegree(a, 0); d != want || want < 1 {
			t.Errorf("%s: snapshot records degree %d, want %d", a, d, want)
		}
		// The model file predicts what the fit predicted.
		model := filepath.Join(t.TempDir(), "m.snap")
		if err := snapshot.WriteFile(model, fit.Snapshot); err != nil {
			t.Fatal(err)
		}
		snap, err := snapshot.ReadFile(model)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		rep, err := Predict(snap, path, &out)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Rows != 550 || rep.Labeled != 50 || rep.Accuracy == nil {
			t.Fatalf("%s: predict report %+v", a, rep)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		for i, line := range lines {
			var p struct{ Label string }
			if err := json.Unmarshal([]byte(line), &p); err != nil || p.Label != fit.Predictions[i] {
				t.Fatalf("%s: line %d predicts %q, fit %q (%v)", a, i, p.Label, fit.Predictions[i], err)
			}
		}
	}
}

func TestFitLabelsFileOverrides(t *testing.T) {
	path, _ := writeLIBSVM(t, 100, 100)
	labels := filepath.Join(t.TempDir(), "labels")
	var b strings.Builder
	for i := range 100 {
		l := "0"
		if i < 10 {
			l = []string{"1", "-1"}[i%2]
		}
		b.WriteString(l + "\n")
	}
	os.WriteFile(labels, []byte(b.String()), 0o644)
	fit, err := RunFit(context.Background(), FitConfig{Data: path, Labels: labels, Params: train.Params{Algorithm: train.SVM}})
	if err != nil {
		t.Fatal(err)
	}
	if fit.Report.Labeled != 10 {
		t.Fatalf("%d labeled rows, want the labels file's 10", fit.Report.Labeled)
	}
	os.WriteFile(labels, []byte("1\n-1\n"), 0o644)
	if _, err := RunFit(context.Background(), FitConfig{Data: path, Labels: labels, Params: train.Params{Algorithm: train.SVM}}); err == nil {
		t.Fatal("a labels file of the wrong length was accepted")
	}
}

// writeStream writes a JSONL stream of generated text with a bad line.
func writeStream(t *testing.T, n int) string {
	t.Helper()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 8, Topics: 3})
	var b bytes.Buffer
	for i := range n {
		d := gen.Next()
		v, _ := json.Marshal(map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "label": d.Label, "text": d.Text})
		b.Write(append(v, '\n'))
		if i == n/2 {
			b.WriteString("{\"id\": \"broken\", \"text\": \n")
		}
	}
	path := filepath.Join(t.TempDir(), "stream.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEval(t *testing.T) {
	testlevel.Long(t, "evaluates a stream end to end, slow under the race detector")
	path := writeStream(t, 1500)
	cfg := EvalConfig{
		Data: path, LabelRate: 0.1, LabelDelay: 50, Seed: 1,
		Pipeline: pipeline.Config{
			Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 14}},
			Learner: online.LearnerConfig{
				Features: 1 << 14, Window: anngraph.Config{MaxExamples: 500, K: 5},
				Params: train.Params{Algorithm: train.TSVM, LambdaU: 0.1}, SolveExamples: 100, SolveLabels: 10,
			},
		},
	}
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Examples != 1500 || rep.BadRecords != 1 || rep.Solves == 0 {
		t.Fatalf("report %+v", rep)
	}
	if rep.LabelsRevealed < 100 || rep.LabelsRevealed > 200 {
		t.Fatalf("%d labels revealed at rate 0.1 of 1500", rep.LabelsRevealed)
	}
	if rep.SSL.Accuracy < 0.8 || rep.Supervised.Accuracy == 0 || len(rep.Curve) == 0 {
		t.Fatalf("scores ssl %+v supervised %+v, %d curve points", rep.SSL, rep.Supervised, len(rep.Curve))
	}
	again, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again.SSL != rep.SSL || again.Supervised != rep.Supervised {
		t.Fatal("eval is not deterministic")
	}
	var svg bytes.Buffer
	if err := WritePlot(&svg, "test", rep.Curve, rep.BaselineCurve); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(svg.String(), "<svg") || strings.Count(svg.String(), "<polyline") != 4 {
		t.Fatalf("plot:\n%s", svg.String())
	}
}

// writeClasses writes n dense rows of three clusters as LIBSVM with the
// classes 0, 1 and 2.
func writeClasses(t *testing.T, n int) (path string, zeros int) {
	t.Helper()
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: n, Dim: 5, Clusters: 3, Spread: 0.1, Seed: 3})
	var b strings.Builder
	for i, x := range xs {
		if cs[i] == 0 {
			zeros++
		}
		fmt.Fprintf(&b, "%d", cs[i])
		for j, v := range x.Values {
			fmt.Fprintf(&b, " %d:%g", j+1, v)
		}
		b.WriteByte('\n')
	}
	path = filepath.Join(t.TempDir(), "three.svm")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, zeros
}

// TestFitHintsAtMinusOne checks that fit warns when -1 is the most
// frequent of three classes or more under the automatic rule, and only
// then.
func TestFitHintsAtMinusOne(t *testing.T) {
	three, _ := writeClasses(t, 150)
	marked, _ := markUnlabeled(t, three, 3)
	svmlin, _ := writeLIBSVM(t, 200, 50)
	minusOne := ingest.UnlabeledLabel{Rule: ingest.UnlabeledMark, Value: -1}
	for _, tt := range []struct {
		name string
		path string
		rule ingest.UnlabeledLabel
		warn bool
	}{
		{"-1 the most frequent of four classes", marked, ingest.UnlabeledLabel{}, true},
		{"-1 said to mark unlabeled rows", marked, minusOne, false},
		{"no -1", three, ingest.UnlabeledLabel{}, false},
		{"a ±1 file", svmlin, ingest.UnlabeledLabel{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var warnings bytes.Buffer
			_, err := RunFit(context.Background(), FitConfig{Data: tt.path, Unlabeled: tt.rule, Warnings: &warnings, Params: train.Params{Algorithm: train.SVM}})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(warnings.String(), "--unlabeled-label -1"); got != tt.warn {
				t.Fatalf("warned %v (%q), want %v", got, warnings.String(), tt.warn)
			}
		})
	}
}

// markUnlabeled copies the LIBSVM file at path with the label of every
// every-th row replaced by -1, scikit-learn's mark of an unlabeled row, and
// returns the copy's path and how many rows it marked.
func markUnlabeled(t *testing.T, path string, every int) (string, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	marked := 0
	for i, line := range lines {
		if i%every == 0 {
			_, features, _ := strings.Cut(line, " ")
			lines[i] = "-1 " + features
			marked++
		}
	}
	out := filepath.Join(t.TempDir(), "marked.svm")
	if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return out, marked
}

// TestFitLIBSVMClassZero checks what a label of 0 means to fit and
// predict: a class in a multi-class file, unlabeled in a ±1 file, and
// unlabeled wherever --unlabeled-label 0 says so; and that -1 marks the
// unlabeled rows of a multi-class file with --unlabeled-label -1.
func TestFitLIBSVMClassZero(t *testing.T) {
	three, zeros := writeClasses(t, 150)
	marked, unmarked := markUnlabeled(t, three, 3)
	svmlin, _ := writeLIBSVM(t, 200, 50)
	tests := []struct {
		name     string
		path     string
		rule     ingest.UnlabeledLabel
		labeled  int
		classes  string
		accuracy float64 // least accuracy of predict on the file's labeled rows
	}{
		{"three classes with 0", three, ingest.UnlabeledLabel{}, 150, "[0 1 2]", 0.95},
		{"three classes, --unlabeled-label 0", three, ingest.ZeroUnlabeled(), 150 - zeros, "[1 2]", 0.95},
		{"three classes, --unlabeled-label -1", marked, ingest.UnlabeledLabel{Rule: ingest.UnlabeledMark, Value: -1}, 150 - unmarked, "[0 1 2]", 0.95},
		{"plus and minus one with 0", svmlin, ingest.UnlabeledLabel{}, 50, "[-1 1]", 0.8},
		{"plus and minus one, --unlabeled-label none", svmlin, ingest.UnlabeledLabel{Rule: ingest.UnlabeledNone}, 200, "[-1 0 1]", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fit, err := RunFit(context.Background(), FitConfig{Data: tt.path, Unlabeled: tt.rule, Params: train.Params{Algorithm: train.SVM}})
			if err != nil {
				t.Fatal(err)
			}
			classes := append([]string(nil), fit.Report.Classes...)
			slices.Sort(classes)
			if fit.Report.Labeled != tt.labeled || fmt.Sprint(classes) != tt.classes {
				t.Fatalf("%d labeled rows of classes %v, want %d of %s", fit.Report.Labeled, classes, tt.labeled, tt.classes)
			}
			var out bytes.Buffer
			rep, err := Predict(fit.Snapshot, tt.path, &out, WithUnlabeledLabel(tt.rule))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Labeled != tt.labeled || *rep.Accuracy < tt.accuracy {
				t.Fatalf("predict: %d labeled rows, accuracy %.3f; want %d, at least %.2f", rep.Labeled, *rep.Accuracy, tt.labeled, tt.accuracy)
			}
		})
	}
}
