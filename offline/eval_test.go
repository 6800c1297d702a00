package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamer/anngraph"
	"streamer/ingest"
	"streamer/internal/testlevel"
	"streamer/online"
	"streamer/online/kernel"
	"streamer/online/train"
	"streamer/pipeline"
	"streamer/snapshot"
	"streamer/synth"
)

// writeSeparable writes n dense examples of two classes far apart, "a"
// and "b" in turn, so that any model trained on one label of each predicts
// every later example right. unlabeledEvery > 0 leaves every such row of
// the file without its label.
func writeSeparable(t *testing.T, name string, n, unlabeledEvery int, seed uint64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	for i := range n {
		class, x := "a", 3.0
		if i%2 == 1 {
			class, x = "b", -3.0
		}
		m := map[string]any{"id": fmt.Sprintf("%s-%d", name, i), "vector": []float64{x + 0.3*r.NormFloat64(), 0.3 * r.NormFloat64(), 1}}
		if unlabeledEvery == 0 || (i+1)%unlabeledEvery != 0 {
			m["label"] = class
		}
		line, _ := json.Marshal(m)
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), name+".jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// separableConfig solves after every two new labels, with an algorithm
// that ignores the unlabeled rows, so that the scores follow by hand.
func separableConfig(data string) EvalConfig {
	return EvalConfig{
		Data: data, Seed: 1,
		Pipeline: pipeline.Config{
			Learner: online.LearnerConfig{
				Features: 3, Window: anngraph.Config{MaxExamples: 200, K: 5},
				Params: train.Params{Algorithm: train.SVM}, SolveExamples: 1000, SolveLabels: 2,
			},
		},
	}
}

// f1 is 2TP/(2TP+FP+FN).
func f1(tp, fp, fn int) float64 { return float64(2*tp) / float64(2*tp+fp+fn) }

// TestEvalAllAccuracy checks all_accuracy and all_macro_f1 on streams
// whose values follow by hand: with every label revealed at once, the
// first model exists after the first two examples (a solve every two
// labels), which are counted wrong, and predicts every later example
// right; without labels there is never a model.
func TestEvalAllAccuracy(t *testing.T) {
	tests := []struct {
		name           string
		n, unlabeled   int
		rate           float64
		delay          int
		noModel        int
		acc, macroF1   float64
		prequentialAcc float64
		unscored       int
	}{
		// a: 20 rows, the first wrong; b: 20 rows, the first wrong.
		{name: "every label at once", n: 40, rate: 1, noModel: 2, acc: 38.0 / 40, macroF1: f1(19, 0, 1), prequentialAcc: 1, unscored: 2},
		// Rows 4, 9, 14, ... (0-based) carry no label: 32 labeled rows,
		// 16 of each class; the model comes after rows 0 and 1.
		{name: "unlabeled rows do not count", n: 40, unlabeled: 5, rate: 1, noModel: 2, acc: 30.0 / 32, macroF1: f1(15, 0, 1), prequentialAcc: 1, unscored: 2},
		// Labels 10 examples late: row i's label arrives after example
		// i+11, so the model comes after example 12 and rows 0..11 (6 of
		// each class) are wrong.
		{name: "late labels", n: 40, rate: 1, delay: 10, noModel: 12, acc: 28.0 / 40, macroF1: f1(14, 0, 6), prequentialAcc: 1, unscored: 12},
		{name: "no labels, no model", n: 40, rate: 0, noModel: 40, acc: 0, macroF1: 0, prequentialAcc: 0, unscored: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := separableConfig(writeSeparable(t, "s", tt.n, tt.unlabeled, 1))
			cfg.LabelRate, cfg.LabelDelay = tt.rate, tt.delay
			rep, err := Eval(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []struct {
				name    string
				sc      Scores
				noModel int
			}{{"ssl", rep.SSL, rep.NoModel}, {"supervised", rep.Supervised, rep.SupervisedNoModel}} {
				if s.noModel != tt.noModel || !near(s.sc.AllAccuracy, tt.acc) || !near(s.sc.AllMacroF1, tt.macroF1) || !near(s.sc.Accuracy, tt.prequentialAcc) {
					t.Errorf("%s: no_model %d all_accuracy %.4f all_macro_f1 %.4f accuracy %.4f; want %d %.4f %.4f %.4f",
						s.name, s.noModel, s.sc.AllAccuracy, s.sc.AllMacroF1, s.sc.Accuracy, tt.noModel, tt.acc, tt.macroF1, tt.prequentialAcc)
				}
			}
			if rep.Unscored != tt.unscored {
				t.Errorf("unscored %d, want %d", rep.Unscored, tt.unscored)
			}
			last := rep.AllCurve[len(rep.AllCurve)-1]
			if last.Examples != tt.n || !near(last.Accuracy, tt.acc) {
				t.Errorf("all-examples curve ends at %+v, want %d examples and %.4f", last, tt.n, tt.acc)
			}
		})
	}
}

// TestEvalAllAccuracyCountsEveryExample checks all_accuracy on a text
// stream against its definition: it lies between the prequential accuracy
// with the unscored labels counted wrong, over the revealed labels, and
// it counts one prediction per labeled example.
func TestEvalAllAccuracyCountsEveryExample(t *testing.T) {
	cfg := textConfig(writeStream(t, 800))
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	last := rep.AllCurve[len(rep.AllCurve)-1]
	if last.Labels != 800 || last.Examples != 800 {
		t.Fatalf("all-examples curve ends at %+v, want 800 labels of 800 examples", last)
	}
	if rep.SSL.AllAccuracy <= 0.5 || rep.SSL.AllAccuracy > 1 || rep.Supervised.AllAccuracy <= 0.3 {
		t.Fatalf("all_accuracy ssl %.3f supervised %.3f", rep.SSL.AllAccuracy, rep.Supervised.AllAccuracy)
	}
	// The examples before the first model are wrong: at most the others
	// are right.
	if bound := float64(800-rep.NoModel) / 800; rep.SSL.AllAccuracy > bound+1e-12 {
		t.Fatalf("all_accuracy %.4f above %.4f, the share of examples with a model", rep.SSL.AllAccuracy, bound)
	}
}

func textConfig(data string) EvalConfig {
	return EvalConfig{
		Data: data, LabelRate: 0.1, LabelDelay: 20, Seed: 1,
		Pipeline: pipeline.Config{
			Decoder: ingest.Decoder{Featurizer: ingest.Featurizer{Dim: 1 << 14}},
			Learner: online.LearnerConfig{
				Features: 1 << 14, Window: anngraph.Config{MaxExamples: 500, K: 5},
				Params: train.Params{Algorithm: train.TSVM, LambdaU: 0.1}, SolveExamples: 100, SolveLabels: 10,
			},
		},
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestEvalTestFile checks --test and --test-every: the test points fall
// every TestEvery examples and at the end, a point before the first model
// scores 0 (every row wrong), and the final figures are the last point's.
func TestEvalTestFile(t *testing.T) {
	tests := []struct {
		name      string
		every     int
		points    []int // examples at each test point
		firstAcc  float64
		finalAcc  float64
		wantCurve bool
	}{
		{name: "final model only", every: 0, finalAcc: 1},
		{name: "every example", every: 1, points: seq(1, 30, 1), firstAcc: 0, finalAcc: 1, wantCurve: true},
		{name: "every 7 and the end", every: 7, points: []int{7, 14, 21, 28, 30}, firstAcc: 1, finalAcc: 1, wantCurve: true},
		{name: "every 10", every: 10, points: []int{10, 20, 30}, firstAcc: 1, finalAcc: 1, wantCurve: true},
	}
	data := writeSeparable(t, "train", 30, 0, 1)
	test := writeSeparable(t, "test", 25, 5, 2) // 20 labeled rows
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := separableConfig(data)
			cfg.LabelRate, cfg.Test, cfg.TestEvery = 1, test, tt.every
			rep, err := Eval(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.TestRows != 20 {
				t.Fatalf("%d test rows, want the 20 labeled ones", rep.TestRows)
			}
			if rep.SSL.TestAccuracy == nil || rep.Supervised.TestMacroF1 == nil {
				t.Fatalf("no test figures: %+v", rep)
			}
			if *rep.SSL.TestAccuracy != tt.finalAcc || *rep.Supervised.TestAccuracy != tt.finalAcc || *rep.SSL.TestMacroF1 != tt.finalAcc {
				t.Errorf("test accuracy ssl %v supervised %v, want %v", *rep.SSL.TestAccuracy, *rep.Supervised.TestAccuracy, tt.finalAcc)
			}
			if (len(rep.TestCurve) > 0) != tt.wantCurve {
				t.Fatalf("%d test points, want a curve: %v", len(rep.TestCurve), tt.wantCurve)
			}
			if !tt.wantCurve {
				return
			}
			var at []int
			for _, p := range rep.TestCurve {
				at = append(at, p.Examples)
			}
			if fmt.Sprint(at) != fmt.Sprint(tt.points) {
				t.Fatalf("test points at %v, want %v", at, tt.points)
			}
			first, last := rep.TestCurve[0], rep.TestCurve[len(rep.TestCurve)-1]
			if first.SSLAccuracy != tt.firstAcc || first.SupervisedAccuracy != tt.firstAcc {
				t.Errorf("first test point %+v, want accuracy %v", first, tt.firstAcc)
			}
			if last.SSLAccuracy != *rep.SSL.TestAccuracy || last.SupervisedMacroF1 != *rep.Supervised.TestMacroF1 {
				t.Errorf("last test point %+v differs from the final figures", last)
			}
		})
	}
}

func seq(from, to, step int) []int {
	var s []int
	for i := from; i <= to; i += step {
		s = append(s, i)
	}
	return s
}

// TestEvalSeeds checks --seeds: one run per seed, each as a run with
// --seed alone would give, and the summary's means and standard deviations
// recomputed from the per-seed figures.
func TestEvalSeeds(t *testing.T) {
	testlevel.Long(t, "evaluates a stream for three seeds, slow under the race detector")
	data := writeStream(t, 600)
	test := writeStream(t, 200)
	cfg := textConfig(data)
	cfg.Seeds, cfg.Test, cfg.TestEvery = 3, test, 200
	var calls []EvalProgress
	cfg.Progress = func(p EvalProgress) { calls = append(calls, p) }
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rep.Seeds) != "[1 2 3]" || len(rep.PerSeed) != 3 {
		t.Fatalf("seeds %v, %d runs", rep.Seeds, len(rep.PerSeed))
	}
	if rep.PerSeed[0].LabelsRevealed == rep.PerSeed[1].LabelsRevealed && rep.PerSeed[1].LabelsRevealed == rep.PerSeed[2].LabelsRevealed {
		t.Errorf("every seed revealed %d labels: the seeds do not vary", rep.PerSeed[0].LabelsRevealed)
	}
	figures := []struct {
		name        string
		mean, std   float64
		ssl, sup    func(SeedReport) float64
		fromSupMean bool
	}{
		{name: "ssl accuracy", mean: rep.SSL.Accuracy, std: rep.SSLStd.Accuracy, ssl: func(r SeedReport) float64 { return r.SSL.Accuracy }},
		{name: "ssl all_accuracy", mean: rep.SSL.AllAccuracy, std: rep.SSLStd.AllAccuracy, ssl: func(r SeedReport) float64 { return r.SSL.AllAccuracy }},
		{name: "supervised all_macro_f1", mean: rep.Supervised.AllMacroF1, std: rep.SupervisedStd.AllMacroF1, ssl: func(r SeedReport) float64 { return r.Supervised.AllMacroF1 }},
		{name: "ssl test_accuracy", mean: *rep.SSL.TestAccuracy, std: *rep.SSLStd.TestAccuracy, ssl: func(r SeedReport) float64 { return *r.SSL.TestAccuracy }},
		{name: "gain all_accuracy", mean: rep.Gain.AllAccuracy, std: rep.GainStd.AllAccuracy, ssl: func(r SeedReport) float64 { return r.SSL.AllAccuracy - r.Supervised.AllAccuracy }},
		{name: "test curve, first point", mean: rep.TestCurve[0].SSLAccuracy, std: rep.TestCurveStd[0].SSLAccuracy, ssl: func(r SeedReport) float64 { return r.TestCurve[0].SSLAccuracy }},
	}
	for _, f := range figures {
		var xs []float64
		for _, r := range rep.PerSeed {
			xs = append(xs, f.ssl(r))
		}
		mean := (xs[0] + xs[1] + xs[2]) / 3
		var ss float64
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		std := math.Sqrt(ss / 2)
		if !near(f.mean, mean) || !near(f.std, std) {
			t.Errorf("%s: mean %.6f std %.6f, want %.6f %.6f from the seeds' %v", f.name, f.mean, f.std, mean, std, xs)
		}
	}
	if rep.SSLStd.AllAccuracy == 0 {
		t.Errorf("all_accuracy does not vary over the seeds: %+v", rep.PerSeed)
	}
	// A seed's run is the run of --seed alone.
	one := cfg
	one.Seeds, one.Seed, one.Progress = 0, 2, nil
	alone, err := Eval(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(alone.PerSeed[0].SSL.values()), fmt.Sprint(rep.PerSeed[1].SSL.values()); got != want || alone.LabelsRevealed != rep.PerSeed[1].LabelsRevealed {
		t.Errorf("--seed 2 gives %s, --seeds 3 gives %s for seed 2", got, want)
	}
	if fmt.Sprint(alone.SSLStd.values()) != fmt.Sprint([]float64{0, 0, 0, 0, 0, 0}) {
		t.Errorf("one seed has a spread: %+v", alone.SSLStd)
	}
	// Progress: every example of every run, in order.
	if len(calls) != 3*600 {
		t.Fatalf("%d progress calls, want %d", len(calls), 3*600)
	}
	end := calls[len(calls)-1]
	if end.Run != 3 || end.Runs != 3 || end.Seed != 3 || end.Examples != 600 || end.Total != 601 || end.Solves != rep.PerSeed[2].Solves {
		t.Errorf("last progress %+v", end)
	}
}

func TestMeanStd(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name      string
		rows      [][]float64
		mean, std []float64
	}{
		{"one row", [][]float64{{0.5, nan}}, []float64{0.5, nan}, []float64{0, nan}},
		{"two rows", [][]float64{{1, 2}, {3, 2}}, []float64{2, 2}, []float64{math.Sqrt2, 0}},
		{"three rows", [][]float64{{1}, {2}, {3}}, []float64{2}, []float64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mean, std := meanStd(tt.rows)
			if fmt.Sprint(mean) != fmt.Sprint(tt.mean) || fmt.Sprint(std) != fmt.Sprint(tt.std) {
				t.Fatalf("meanStd = %v, %v; want %v, %v", mean, std, tt.mean, tt.std)
			}
		})
	}
}

// TestEvalPlot checks that the plot draws the stream's lines and, with a
// test curve, a second chart.
func TestEvalPlot(t *testing.T) {
	for _, tc := range []struct {
		seeds               int
		polylines, polygons int
		title               string
	}{
		// One seed: its six stream curves and two test curves.
		{1, 8, 0, "Accuracy on the test file"},
		// Several: the mean every-example curves (four) with two bands,
		// and the test curves with theirs.
		{2, 6, 4, "mean ± std of 2 seeds"},
	} {
		cfg := separableConfig(writeSeparable(t, "s", 30, 0, 1))
		cfg.LabelRate, cfg.Seeds = 1, tc.seeds
		cfg.Test, cfg.TestEvery = writeSeparable(t, "t", 10, 0, 2), 5
		rep, err := Eval(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var svg bytes.Buffer
		if err := WriteEvalPlot(&svg, "test", rep); err != nil {
			t.Fatal(err)
		}
		s := svg.String()
		if strings.Count(s, "<polyline") != tc.polylines || strings.Count(s, "<polygon") != tc.polygons || !strings.Contains(s, tc.title) || strings.Contains(s, "NaN") {
			t.Fatalf("%d seeds: plot:\n%s", tc.seeds, s)
		}
	}
}

// TestEvalEmptyStream checks that a stream without a usable record still
// reports: no model, so every test row wrong.
func TestEvalEmptyStream(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, []byte("{\"id\": \"broken\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := separableConfig(empty)
	cfg.Test, cfg.TestEvery = writeSeparable(t, "t", 10, 0, 2), 5
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Examples != 0 || rep.BadRecords != 1 || rep.SSL.TestAccuracy == nil || *rep.SSL.TestAccuracy != 0 || len(rep.TestCurve) != 1 {
		t.Fatalf("report %+v", rep)
	}
}

// TestEvalAutoOverKernelMap runs auto over a kernel map on a stream of
// five classes, three clusters each, where auto weighs sr against its
// rule's choice: the trial scores rows already mapped with copies of
// models that carry the map (a copy without its map once scored those
// rows through weights folded for the map, and crashed).
func TestEvalAutoOverKernelMap(t *testing.T) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 900, Dim: 8, Clusters: 15, Spread: 0.8, Seed: 7})
	var b bytes.Buffer
	for i, x := range xs {
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "label": fmt.Sprintf("c%d", cs[i]%5), "vector": x.Values})
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "clusters.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := EvalConfig{
		Data: path, Seed: 1, LabelRate: 0.1, LabelDelay: 20,
		Pipeline: pipeline.Config{
			Learner: online.LearnerConfig{
				Features: 8, Window: anngraph.Config{MaxExamples: 900, K: 10, Metric: anngraph.Euclidean},
				Params: train.Params{Algorithm: train.Auto, Lambda: 1e-3}, SolveExamples: 100, SolveLabels: 5,
				Kernel: kernel.Config{Kind: "rbf", Landmarks: 60},
			},
		},
	}
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.SSL.AllAccuracy <= 0.4 {
		t.Errorf("all_accuracy %.3f over five classes, want above 0.4", rep.SSL.AllAccuracy)
	}
}

// TestEvalReportsTenthsAndSolves: the report scores the stream tenth by
// tenth and logs every solve: the tenths cover the labeled examples, their
// examples before any model add up to no_model, and the log has a line per
// solve, versions in order, with what auto served and whether it voted.
func TestEvalReportsTenthsAndSolves(t *testing.T) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 1000, Dim: 8, Clusters: 4, Spread: 0.4, Seed: 3})
	var b bytes.Buffer
	for i, x := range xs {
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "label": fmt.Sprintf("c%d", cs[i]), "vector": x.Values})
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "clusters.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := EvalConfig{
		Data: path, Seeds: 2, LabelRate: 0.1, LabelDelay: 20,
		Pipeline: pipeline.Config{
			Learner: online.LearnerConfig{
				Features: 8, Window: anngraph.Config{MaxExamples: 1000, K: 10, Metric: anngraph.Euclidean},
				Params: train.Params{Algorithm: train.Auto}, SolveExamples: 200, SolveLabels: 10,
			},
		},
	}
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tenths) != 10 || rep.Tenths[9].Examples != 1000 {
		t.Fatalf("tenths %+v: want ten, the last at example 1000", rep.Tenths)
	}
	for _, run := range rep.PerSeed {
		noModel := 0
		for k, tenth := range run.Tenths {
			noModel += tenth.NoModel
			if k > 0 && tenth.Examples <= run.Tenths[k-1].Examples {
				t.Fatalf("seed %d: tenth %d ends at %d, before the one before", run.Seed, k, tenth.Examples)
			}
		}
		if noModel != run.NoModel {
			t.Errorf("seed %d: tenths count %d examples before any model, the run %d", run.Seed, noModel, run.NoModel)
		}
		if int64(len(run.SolveLog)) != run.Solves {
			t.Fatalf("seed %d: %d solves logged of %d", run.Seed, len(run.SolveLog), run.Solves)
		}
		voted := false
		for k, s := range run.SolveLog {
			if s.Version != uint64(k+1) || s.Algorithm == "" || s.Window < s.Labeled || s.Classes < 2 {
				t.Fatalf("seed %d: solve %d logged as %+v", run.Seed, k, s)
			}
			voted = voted || s.VoteWeight > 0
		}
		if !voted {
			t.Errorf("seed %d: no solve voted on well separated clusters", run.Seed)
		}
	}
	mean := (rep.PerSeed[0].Tenths[4].SSLAccuracy + rep.PerSeed[1].Tenths[4].SSLAccuracy) / 2
	if !near(rep.Tenths[4].SSLAccuracy, mean) {
		t.Errorf("mean of the fifth tenth %v, the runs' mean %v", rep.Tenths[4].SSLAccuracy, mean)
	}
}

// TestEvalActive plays the labelers of the learner's requests: as many
// labels as the rate would reveal, each for an example requested once,
// beside the random reveals of the same seeds, with both curves against
// the labels spent in the report and the plot.
func TestEvalActive(t *testing.T) {
	cfg := separableConfig(writeSeparable(t, "s", 200, 0, 1))
	cfg.LabelRate, cfg.LabelDelay, cfg.Seeds = 0.1, 5, 2
	cfg.Active, cfg.CompareRandom = true, true
	cfg.Pipeline.Requests.RandomShare = 0.2
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Strategy != "active" || rep.Random == nil || rep.Random.Strategy != "random" {
		t.Fatalf("strategies %q and %+v", rep.Strategy, rep.Random)
	}
	for _, run := range rep.PerSeed {
		if run.LabelsRevealed != 20 {
			t.Errorf("seed %d: %d labels for 200 examples at 0.1", run.Seed, run.LabelsRevealed)
		}
		sent := uint64(0)
		for _, n := range run.Requests.Sent {
			sent += n
		}
		if sent != uint64(run.LabelsRevealed) || run.Requests.Sent["random"] == 0 {
			t.Errorf("seed %d: requests %+v for %d labels", run.Seed, run.Requests, run.LabelsRevealed)
		}
	}
	if len(rep.SpentCurve) == 0 || len(rep.Random.SpentCurve) == 0 || rep.SpentCurve[len(rep.SpentCurve)-1].Labels != 20 {
		t.Fatalf("spent curves %+v and %+v", rep.SpentCurve, rep.Random.SpentCurve)
	}
	t.Logf("all_accuracy %v, random %v", rep.SSL.AllAccuracy, rep.Random.SSL.AllAccuracy)
	if rep.SSL.AllAccuracy < 0.8 {
		t.Errorf("all_accuracy %v on a separable stream", rep.SSL.AllAccuracy)
	}
	var svg bytes.Buffer
	if err := WriteEvalPlot(&svg, "test", rep); err != nil {
		t.Fatal(err)
	}
	if s := svg.String(); !strings.Contains(s, "labels spent") || !strings.Contains(s, "random reveals") {
		t.Fatalf("plot without the labels spent:\n%s", s)
	}
}

// TestEvalReviewPrecision: on a separable stream with every label
// revealed, the predictions are right and confident, so that once enough
// are graded the routing decides most examples automatically, all right;
// the examples before that are routed, and the coverage curve rises to
// the share of examples predicted.
func TestEvalReviewPrecision(t *testing.T) {
	cfg := separableConfig(writeSeparable(t, "s", 400, 0, 1))
	cfg.LabelRate, cfg.ReviewPrecision = 1, 0.95
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Review
	if r == nil || r.Precision == nil {
		t.Fatalf("review scores %+v, want some decided", r)
	}
	if *r.Precision != 1 || r.Decided < 0.5 || r.Routed == 0 {
		t.Fatalf("decided %.3f at precision %.3f, routed %d; want most decided, all right, and the first routed", r.Decided, *r.Precision, r.Routed)
	}
	var decided, routed int
	for _, c := range r.Classes {
		if c.Class != "a" && c.Class != "b" || c.Right != c.Decided {
			t.Fatalf("class %+v: want a or b, every decision right", c)
		}
		decided, routed = decided+c.Decided, routed+c.Routed
	}
	if len(r.Classes) != 2 || routed != r.Routed || math.Abs(float64(decided)/400-r.Decided) > 1e-12 {
		t.Fatalf("classes %+v: want a and b, adding up to %d routed and %.4f of 400 decided", r.Classes, r.Routed, r.Decided)
	}
	c := r.Curve
	if len(c) == 0 || c[len(c)-1].Coverage > 1 || c[len(c)-1].Coverage < r.Decided {
		t.Fatalf("curve %v ends below the share decided %.3f", c, r.Decided)
	}
	var svg bytes.Buffer
	if err := WriteEvalPlot(&svg, "t", rep); err != nil || !bytes.Contains(svg.Bytes(), []byte("Review routing")) {
		t.Fatalf("plot without the review panel (error %v)", err)
	}
}

// TestSumClassesAddsTheSeedsClassByClass: classes one seed lacks count
// from the others alone, and the sums come sorted by class.
func TestSumClassesAddsTheSeedsClassByClass(t *testing.T) {
	got := sumClasses([][]ClassReview{
		{{Class: "b", Decided: 3, Right: 2, Routed: 1}, {Class: "c", Decided: 1, Right: 1}},
		{{Class: "a", Routed: 4}, {Class: "b", Decided: 5, Right: 5, Routed: 2}},
	})
	want := []ClassReview{{Class: "a", Routed: 4}, {Class: "b", Decided: 8, Right: 7, Routed: 3}, {Class: "c", Decided: 1, Right: 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("sums %+v, want %+v", got, want)
	}
}

// TestMeanReviewPoolsTheDecidedPredictions: over seeds, the precision is
// that of every decided prediction together, so that a seed that decided
// few weighs little; a seed that decided none adds nothing to it.
func TestMeanReviewPoolsTheDecidedPredictions(t *testing.T) {
	run := func(decided, right int) SeedReport {
		var p *float64
		if decided > 0 {
			v := float64(right) / float64(decided)
			p = &v
		}
		return SeedReport{Review: &ReviewScores{Decided: float64(decided) / 1000, Precision: p, Classes: []ClassReview{{Class: "a", Decided: decided, Right: right}}}}
	}
	mean, std := meanReview([]SeedReport{run(0, 0), run(182, 169), run(31, 31)})
	if mean.Precision == nil || math.Abs(*mean.Precision-200.0/213) > 1e-12 {
		t.Fatalf("precision %v, want 200/213 of the decided predictions, not the mean of the seeds' 0.929 and 1", mean.Precision)
	}
	if want := math.Sqrt(((1.0 - 169.0/182) * (1.0 - 169.0/182)) / 2); std.Precision == nil || math.Abs(*std.Precision-want) > 1e-12 {
		t.Errorf("spread %v, want the seeds' precisions' %v", std.Precision, want)
	}
	if none, _ := meanReview([]SeedReport{run(0, 0)}); none.Precision != nil {
		t.Errorf("nothing decided: precision %v, want none", *none.Precision)
	}
}

// TestEvalPlotMarksAlarms: each drift alarm is a vertical line at its
// example, a color by detector, each detector named once in the legend.
func TestEvalPlotMarksAlarms(t *testing.T) {
	curve := []snapshot.CurvePoint{{Examples: 0, Accuracy: 0.5, RecentAccuracy: 0.5}, {Examples: 1000, Accuracy: 0.9, RecentAccuracy: 0.9}}
	rep := EvalReport{Curve: curve, BaselineCurve: curve, Seeds: []uint64{1}, PerSeed: []SeedReport{{Alarms: []AlarmRecord{
		{Examples: 200, Detector: "labels"}, {Examples: 600, Detector: "labels"}, {Examples: 400, Detector: "neighbours"},
	}}}}
	var svg bytes.Buffer
	if err := WriteEvalPlot(&svg, "test", rep); err != nil {
		t.Fatal(err)
	}
	s := svg.String()
	for _, want := range []string{
		`<line x1="196.0" x2="196.0"`, `<line x1="468.0" x2="468.0"`, `<line x1="332.0" x2="332.0"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no mark %s in\n%s", want, s)
		}
	}
	if strings.Count(s, ">drift alarm: labels<") != 1 || strings.Count(s, ">drift alarm: neighbours<") != 1 {
		t.Errorf("legend:\n%s", s)
	}
}

// TestEvalReportsAlarms: on a stream whose two classes swap their labels
// halfway, the report lists the labels detector's alarm soon after the
// swap, with the learner's reactions, and none before it.
func TestEvalReportsAlarms(t *testing.T) {
	const n = 1200
	r := rand.New(rand.NewPCG(4, 1))
	var b bytes.Buffer
	for i := range n {
		class, x := "a", 3.0
		if i%2 == 1 {
			class, x = "b", -3.0
		}
		if i >= n/2 {
			class = map[string]string{"a": "b", "b": "a"}[class]
		}
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "label": class, "vector": []float64{x + 0.3*r.NormFloat64(), 0.3 * r.NormFloat64(), 1}})
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "swap.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := separableConfig(path)
	cfg.LabelRate, cfg.LabelDelay = 0.2, 5
	cfg.Pipeline.Drift.Forget = true
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	alarms := rep.PerSeed[0].Alarms
	if len(alarms) == 0 {
		t.Fatal("no alarm in the report")
	}
	a := alarms[0]
	if a.Detector != "labels" || a.Examples <= n/2 || a.Examples > n/2+150 || !slices.Equal(a.Reactions, []string{"forget", "solve"}) || a.Statistic <= a.Threshold {
		t.Errorf("first alarm %+v; want the labels detector's within 150 examples of the swap at %d, reacting with forget and solve", a, n/2)
	}
}

// TestEvalAskOnAlarm: with --ask-on-alarm, the alarm a new class raises
// without labels raises the labelers' budget, and the run spends more
// labels than the rate gives; without it, the run spends the rate's.
func TestEvalAskOnAlarm(t *testing.T) {
	testlevel.Long(t, "evaluates 8,000 glyph images twice")
	d, err := synth.DriftStream(synth.DriftConfig{Kind: synth.DriftNewClass, Rows: 8000, Change: 0.5, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for i, x := range d.Rows {
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "label": d.Labels[i], "vector": x.Values})
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "newclass.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(ask bool) SeedReport {
		cfg := EvalConfig{
			Data: path, Seed: 1, LabelRate: 0.02, LabelDelay: 50, Active: true, AskOnAlarm: ask,
			Pipeline: pipeline.Config{
				Learner: online.LearnerConfig{
					Features: len(d.Rows[0].Values), Window: anngraph.Config{MaxExamples: 20000, K: 10},
					Params:        train.Params{Algorithm: train.Auto, Lambda: 1e-3, LambdaU: 0.1},
					SolveExamples: 250, SolveLabels: 10,
				},
				Drift: pipeline.DriftConfig{Quicken: true, Ask: true},
			},
		}
		rep, err := Eval(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rep.PerSeed[0]
	}
	asked, plain := run(true), run(false)
	reacted := false
	for _, a := range asked.Alarms {
		reacted = reacted || a.Detector != "labels" && slices.Contains(a.Reactions, "ask")
	}
	if !reacted {
		t.Fatalf("alarms %+v: none without labels asked for more", asked.Alarms)
	}
	if want := int(0.02 * 8000); plain.LabelsRevealed != want {
		t.Errorf("without --ask-on-alarm: %d labels, want the rate's %d", plain.LabelsRevealed, want)
	}
	if asked.LabelsRevealed <= plain.LabelsRevealed {
		t.Errorf("with --ask-on-alarm: %d labels, no more than the rate's %d", asked.LabelsRevealed, plain.LabelsRevealed)
	}
	t.Logf("labels %d asking, %d not; alarms %+v", asked.LabelsRevealed, plain.LabelsRevealed, asked.Alarms)
}
