package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamer/internal/testlevel"
	"streamer/synth"
)

// writeJSONL writes n generated text examples with their labels.
func writeJSONL(t *testing.T, path string, n int, seed uint64) string {
	t.Helper()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: seed, Classes: []string{"a", "b", "c"}, Topics: 2})
	var b bytes.Buffer
	for range n {
		d := gen.Next()
		line, _ := json.Marshal(map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "label": d.Label, "text": d.Text})
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEvalCommandSeedsAndTest(t *testing.T) {
	testlevel.Long(t, "evaluates a stream for three seeds, slow under the race detector")
	dir := t.TempDir()
	data := writeJSONL(t, filepath.Join(dir, "stream.jsonl"), 400, 5)
	test := writeJSONL(t, filepath.Join(dir, "test.jsonl"), 100, 6)
	report, plot := filepath.Join(dir, "report.json"), filepath.Join(dir, "eval.svg")
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs([]string{"eval", "--data", data, "--label-rate", "0.1", "--label-delay", "20", "--seeds", "2",
		"--test", test, "--test-every", "100", "--report", report, "--plot", plot,
		"--set", "features.dim=16384", "--set", "window.max_examples=500", "--set", "schedule.solve_examples=100"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("eval: %v\n%s", err, errOut.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("eval printed %q: %v", out.String(), err)
	}
	for _, key := range []string{"examples", "labels_revealed", "ssl", "supervised", "ssl_std", "supervised_std", "gain", "gain_std",
		"solves", "seconds", "no_model", "seeds", "test", "test_rows", "per_seed"} {
		if _, ok := rep[key]; !ok {
			t.Errorf("eval output lacks %q", key)
		}
	}
	for _, learner := range []string{"ssl", "supervised", "ssl_std", "supervised_std"} {
		scores, _ := rep[learner].(map[string]any)
		for _, key := range []string{"accuracy", "macro_f1", "all_accuracy", "all_macro_f1", "test_accuracy", "test_macro_f1"} {
			if _, ok := scores[key]; !ok {
				t.Errorf("eval output lacks %s.%s", learner, key)
			}
		}
	}
	if runs, _ := rep["per_seed"].([]any); len(runs) != 2 {
		t.Errorf("per_seed has %d runs, want 2", len(runs))
	}
	if _, ok := rep["curve"]; ok {
		t.Error("the printed line carries the curves")
	}
	full, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"test_curve"`, `"test_curve_std"`, `"all_curve"`, `"supervised_all_curve"`, `"curve"`} {
		if !bytes.Contains(full, []byte(key)) {
			t.Errorf("report lacks %s", key)
		}
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !bytes.Contains(svg, []byte("test file")) {
		t.Errorf("plot lacks the test chart (%v)", err)
	}
	// Standard error is not a terminal: plain progress lines, the last at
	// the end of the last seed.
	if !strings.Contains(errOut.String(), "eval: seed 2 (2 of 2), 400/400 examples") {
		t.Errorf("no final progress line in %q", errOut.String())
	}
}

func TestEvalCommandFlagErrors(t *testing.T) {
	data := writeJSONL(t, filepath.Join(t.TempDir(), "s.jsonl"), 10, 1)
	for _, args := range [][]string{
		{"eval", "--data", data, "--test-every", "10"},
		{"eval", "--data", data, "--unlabeled-label", "seven"},
		{"eval", "--data", data, "--seeds", "-1"},
	} {
		cmd := newRootCommand()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(args)
		if err := cmd.ExecuteContext(context.Background()); err == nil {
			t.Errorf("streamer %s: no error", strings.Join(args, " "))
		}
	}
}
