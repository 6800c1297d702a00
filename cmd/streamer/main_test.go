package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamer/pipeline"
	"streamer/synth"
)

// run executes the command line with args and returns its standard output.
func run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("streamer %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

func writeSVM(t *testing.T, dir string) string {
	t.Helper()
	xs, ys := synth.G50C(4)
	var b strings.Builder
	for i, x := range xs {
		lab := 0
		if i < 50 {
			lab = int(ys[i])
		}
		fmt.Fprintf(&b, "%d", lab)
		for j, v := range x.Values {
			fmt.Fprintf(&b, " %d:%g", j+1, v)
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, "g50c.svm")
	os.WriteFile(path, []byte(b.String()), 0o644)
	return path
}

func TestFitPredictInspect(t *testing.T) {
	dir := t.TempDir()
	data := writeSVM(t, dir)
	model := filepath.Join(dir, "model.snap")
	trans := filepath.Join(dir, "trans.txt")
	out := run(t, "fit", "--data", data, "--algo", "tsvm", "--lambda", "300", "--lambda-u", "3", "--r", "0.5",
		"--out", model, "--transductive-out", trans)
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("fit printed %q: %v", out, err)
	}
	for _, key := range []string{"algo", "rows", "labeled", "classes", "objective", "newton_steps", "cgls_iters", "seconds", "solve_seconds"} {
		if _, ok := rep[key]; !ok {
			t.Errorf("fit output lacks %q: %s", key, out)
		}
	}
	lines, _ := os.ReadFile(trans)
	if n := strings.Count(string(lines), "\n"); n != 550 {
		t.Fatalf("%d transductive labels, want 550", n)
	}
	preds := filepath.Join(dir, "preds.jsonl")
	out = run(t, "predict", "--model", model, "--data", data, "--out", preds)
	if !strings.Contains(out, `"accuracy"`) || !strings.Contains(out, `"macro_f1"`) {
		t.Fatalf("predict printed %q", out)
	}
	if out := run(t, "snapshot", "inspect", model); !strings.Contains(out, "tsvm") || !strings.Contains(out, "version") {
		t.Fatalf("inspect printed %q", out)
	}
	run(t, "fit", "--data", data, "--algo", "lapsvm", "--lambda", "1", "--lambda-i", "1", "--knn", "8",
		"--laplacian", "unnormalized", "--laplacian-degree", "2", "--weights", "binary")
}

func TestBenchSolveCommand(t *testing.T) {
	out := run(t, "bench", "solve", "--rows", "2000", "--features", "4096", "--nnz", "20", "--labeled-frac", "0.05", "--algo", "svm")
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"cold_seconds", "warm_seconds", "objective", "newton_steps", "cgls_iters", "rows_per_second"} {
		if _, ok := rep[key]; !ok {
			t.Errorf("bench solve output lacks %q", key)
		}
	}
}

// TestBenchSolveExport checks that the exported problem is the one bench
// solve measures: fit on the exported files reaches the same objective.
func TestBenchSolveExport(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "bench")
	problem := []string{"--rows", "1500", "--features", "2048", "--nnz", "20", "--labeled-frac", "0.05",
		"--algo", "tsvm", "--lambda", "0.01", "--lambda-u", "0.5", "--r", "0.4"}
	run(t, append([]string{"bench", "solve", "--export", prefix}, problem...)...)
	var bench, fit struct {
		Objective float64 `json:"objective"`
		Labeled   int     `json:"labeled"`
	}
	if err := json.Unmarshal([]byte(run(t, append([]string{"bench", "solve"}, problem...)...)), &bench); err != nil {
		t.Fatal(err)
	}
	out := run(t, "fit", "--data", prefix+".svm", "--labels", prefix+".labels",
		"--algo", "tsvm", "--lambda", "0.01", "--lambda-u", "0.5", "--r", "0.4")
	if err := json.Unmarshal([]byte(out), &fit); err != nil {
		t.Fatal(err)
	}
	if fit.Labeled != bench.Labeled || math.Abs(fit.Objective-bench.Objective) > 1e-9*bench.Objective {
		t.Fatalf("fit on the export: %d labeled, objective %v; bench solve: %d labeled, objective %v",
			fit.Labeled, fit.Objective, bench.Labeled, bench.Objective)
	}
}

func TestBadFlagsAreErrors(t *testing.T) {
	for _, args := range [][]string{
		{"fit", "--data", "x.svm", "--algo", "svn"},
		{"run", "--set", "window.max_examples=-3"},
		{"replay", "--from", "0", "--out-file", "x"},
	} {
		cmd := newRootCommand()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(args)
		if err := cmd.ExecuteContext(context.Background()); err == nil {
			t.Errorf("streamer %s succeeded", strings.Join(args, " "))
		}
	}
}

// runErr executes the command line with args and returns its standard
// error and error.
func runErr(args ...string) (string, error) {
	cmd := newRootCommand()
	var errOut bytes.Buffer
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return errOut.String(), err
}

// TestFitValidatesParamsFirst: lapsvm with the default λ_I = 0 fails
// before the data is read (the file does not even exist).
func TestFitValidatesParamsFirst(t *testing.T) {
	_, err := runErr("fit", "--data", filepath.Join(t.TempDir(), "missing.svm"), "--algo", "lapsvm")
	if err == nil || !strings.Contains(err.Error(), "lambda_i") {
		t.Fatalf("err = %v, want it to name lambda_i before reading the data", err)
	}
}

// runBoth executes the command line with args and returns its standard
// output and standard error.
func runBoth(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("streamer %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String()
}

// TestFitAndPredictSayWhatIsWrong: fit names the bad lines; predict warns
// of labels that are no class of the model, and leaves out the time of
// LIBSVM rows, which have none.
func TestFitAndPredictSayWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "small.svm")
	os.WriteFile(data, []byte("1 1:1 2:0.5\n1 x:1\n-1 1:-1 2:-0.5\n-1 3:nan\n1 1:0.8\n-1 1:-0.9\n"), 0o644)
	model := filepath.Join(dir, "model.snap")
	out, stderr := runBoth(t, "fit", "--data", data, "--out", model)
	if !strings.Contains(out, `"bad_records":2`) {
		t.Fatalf("fit printed %s", out)
	}
	for _, want := range []string{data + " line 2:", data + " line 4:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("fit's standard error does not name %q:\n%s", want, stderr)
		}
	}

	other := filepath.Join(dir, "other.svm")
	os.WriteFile(other, []byte("3 1:1\n4 1:-1\n"), 0o644)
	preds := filepath.Join(dir, "preds.jsonl")
	_, stderr = runBoth(t, "predict", "--model", model, "--data", other, "--out", preds)
	if !strings.Contains(stderr, "warning: 2 of 2 labeled records") || !strings.Contains(stderr, "3, 4") {
		t.Errorf("predict with foreign labels warned %q", stderr)
	}
	lines, _ := os.ReadFile(preds)
	if len(lines) == 0 || bytes.Contains(lines, []byte(`"ts"`)) {
		t.Errorf("LIBSVM predictions carry a time:\n%s", lines)
	}
	if _, stderr = runBoth(t, "predict", "--model", model, "--data", data, "--out", preds); strings.Contains(stderr, "warning") {
		t.Errorf("predict on the model's own classes warned %q", stderr)
	}
}

// TestBenchCommandsPrintOneLine: bench solve --export says what it wrote,
// and bench ann prints one JSON line like every other command.
func TestBenchCommandsPrintOneLine(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "bench")
	for _, args := range [][]string{
		{"bench", "solve", "--export", prefix, "--rows", "300", "--features", "256", "--nnz", "10", "--labeled-frac", "0.1"},
		{"bench", "ann", "--generate", "dense", "--points", "600", "--dim", "8", "--window", "200", "--k", "5", "--sample", "50"},
		{"bench", "ann", "--generate", "sparse", "--points", "600", "--window", "200", "--sample", "50", "--batch", "64", "--workers", "2"},
	} {
		out := run(t, args...)
		var rep map[string]any
		if strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &rep) != nil {
			t.Errorf("streamer %s printed %q, want one JSON line", strings.Join(args, " "), out)
		}
		if args[1] == "solve" && rep["data"] != prefix+".svm" {
			t.Errorf("bench solve --export printed %q", out)
		}
		if slices.Contains(args, "--batch") && (rep["batch"] != 64.0 || rep["insert_workers"] != 2.0 || rep["recall_at_k"].(float64) < 0.9) {
			t.Errorf("bench ann in batches printed %q", out)
		}
	}
}

// TestRetrainedReplayKeepsOffThePredictionsTopic: a retrained replay's
// models are its own, and their stamps must not read as the service's on
// its predictions topic.
func TestRetrainedReplayKeepsOffThePredictionsTopic(t *testing.T) {
	_, err := runErr("replay", "--from", "0", "--retrain", "--out-topic", "predictions", "--set", "kafka.brokers=127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "--out-topic predictions") || !strings.Contains(err.Error(), "kafka.topics.predictions") {
		t.Fatalf("replay --retrain to the predictions topic: err = %v", err)
	}
}

// TestFitAndPredictReadATeamsSchema: with --config, fit and predict read
// JSONL rows where the configuration's input.examples says, as the
// service reads its messages, and fit hashes them as features.* says;
// without it the same rows have no id.
func TestFitAndPredictReadATeamsSchema(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "team.yaml")
	os.WriteFile(conf, []byte(`input:
  examples:
    id: /post_id
    id_numbers: true
    text: [/title, /body]
    feature_fields: [followers=/author/followers]
    text_with_features: true
    label: /verdict
features:
  dim: 4096
  normalize: true
`), 0o644)
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 7, Topics: 2})
	var b strings.Builder
	for i := range 400 {
		d := gen.Next()
		title, body, _ := strings.Cut(d.Text, " ")
		row, _ := json.Marshal(map[string]any{"post_id": i, "title": title, "body": body, "author": map[string]int{"followers": i % 7}, "verdict": d.Label})
		fmt.Fprintf(&b, "%s\n", row)
	}
	data := filepath.Join(dir, "posts.jsonl")
	os.WriteFile(data, []byte(b.String()), 0o644)
	model := filepath.Join(dir, "seed.snap")
	var fit struct {
		Rows, Labeled, Features int
	}
	if err := json.Unmarshal([]byte(run(t, "fit", "--data", data, "--config", conf, "--out", model)), &fit); err != nil {
		t.Fatal(err)
	}
	if fit.Rows != 400 || fit.Labeled != 400 || fit.Features != 4096 {
		t.Fatalf("fit read %+v, want 400 labeled rows in 4,096 features", fit)
	}
	var pred struct {
		Rows       int
		Accuracy   float64
		BadRecords int `json:"bad_records"`
	}
	for _, tc := range []struct {
		args []string
		rows int
	}{{[]string{"--config", conf}, 400}, {nil, 0}} {
		out := run(t, append([]string{"predict", "--model", model, "--data", data, "--out", filepath.Join(dir, "p.jsonl")}, tc.args...)...)
		if err := json.Unmarshal([]byte(out), &pred); err != nil {
			t.Fatal(err)
		}
		if pred.Rows != tc.rows || pred.BadRecords != 400-tc.rows || tc.rows > 0 && pred.Accuracy < 0.9 {
			t.Errorf("predict %v: %+v, want %d rows scored", tc.args, pred, tc.rows)
		}
	}

	// With review routing and explanations in the configuration, predict
	// marks and explains as the service would.
	out := filepath.Join(dir, "routed.jsonl")
	run(t, "predict", "--model", model, "--data", data, "--out", out, "--config", conf, "--set", "review.thresholds=spam=1", "--set", "predictions.explain=2")
	lines, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	routed := 0
	for _, line := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var p pipeline.Prediction
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		if want := *p.Label == "spam" && *p.Prob < 1; p.Review != want {
			t.Fatalf("%s: %s at %v, review %v", p.ID, *p.Label, *p.Prob, p.Review)
		}
		if p.Review {
			routed++
		}
		if e := p.Explanation; e == nil || len(e.Terms) != 2 || !slices.ContainsFunc(e.Terms, func(t pipeline.Term) bool { return len(t.Names) > 0 }) {
			t.Fatalf("%s: explanation %+v, want 2 terms, named", p.ID, e)
		}
	}
	if routed == 0 {
		t.Error("no spam prediction routed to review")
	}
}
