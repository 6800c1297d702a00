package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamer/internal/testlevel"
	"streamer/online/train"
)

func TestSolveSmall(t *testing.T) {
	testlevel.Long(t, "numerical; no concurrency to race")
	for _, a := range []train.Algorithm{train.SVM, train.TSVM, train.DA} {
		cfg := SolveConfig{
			Rows: 3000, Features: 1 << 14, NNZ: 30, LabeledFrac: 0.05, Noise: 0.02, Seed: 1,
			Params: train.Params{Algorithm: a, Lambda: 1e-3},
		}
		if a == train.SVM {
			cfg.Repeats = 3
		}
		rep, err := Solve(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Labeled == 0 || rep.Objective <= 0 || rep.WarmObjective <= 0 || rep.NewtonSteps == 0 ||
			rep.ColdSeconds <= 0 || rep.WarmSeconds <= 0 || rep.Repeats != max(1, cfg.Repeats) {
			t.Fatalf("%s: report %+v", a, rep)
		}
		if rep.UnlabeledAccuracy < 0.8 {
			t.Errorf("%s: unlabeled accuracy %.3f", a, rep.UnlabeledAccuracy)
		}
	}
}

// BenchmarkSolve measures cold solves of a text-like problem; run with
// -bench Solve -benchtime 1x for one of each.
func BenchmarkSolve(b *testing.B) {
	for _, a := range []train.Algorithm{train.SVM, train.TSVM, train.DA} {
		b.Run(string(a), func(b *testing.B) {
			for b.Loop() {
				rep, err := Solve(context.Background(), SolveConfig{
					Rows: 20000, Features: 1 << 18, NNZ: 80, LabeledFrac: 0.01, Noise: 0.05, Seed: 1,
					Params: train.Params{Algorithm: a, Lambda: 1e-4},
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(rep.RowsPerSecond, "rows/s")
				b.ReportMetric(rep.WarmSeconds/rep.ColdSeconds, "warm/cold")
				b.ReportMetric(rep.UnlabeledAccuracy, "accuracy")
			}
		})
	}
}

// TestClassesSmall runs the multi-class bench on small dense and sparse
// windows and checks that every figure of its report is filled in: the
// three cold solves, the warm one and the accuracies on the unlabeled rows
// (at least twice chance). The sparse one runs each solve three times and
// reports medians.
func TestClassesSmall(t *testing.T) {
	testlevel.Long(t, "numerical; no concurrency to race")
	for _, dense := range []bool{true, false} {
		cfg := ClassesConfig{Rows: 800, Classes: 4, Dense: dense, Dim: 16, NNZ: 20, LabeledFrac: 0.05, Seed: 2,
			Params: train.Params{Algorithm: train.SR, Lambda: 1e-3}}
		if !dense {
			cfg.Dim, cfg.Repeats = 1<<12, 3
		}
		rep, err := Classes(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Labeled == 0 || rep.ColdSeconds <= 0 || rep.SVMColdSeconds <= 0 || rep.AllLabeledSVMSeconds <= 0 || rep.WarmSeconds <= 0 || rep.Repeats != max(1, cfg.Repeats) {
			t.Fatalf("dense %v: report %+v", dense, rep)
		}
		if rep.ColdOverAllLabeled != rep.ColdSeconds/rep.AllLabeledSVMSeconds || rep.WarmOverCold != rep.WarmSeconds/rep.ColdSeconds {
			t.Errorf("dense %v: ratios %+v", dense, rep)
		}
		if chance := 1.0 / float64(cfg.Classes); rep.UnlabeledAccuracy < 2*chance || rep.SVMAccuracy < 2*chance {
			t.Errorf("dense %v: accuracy on the unlabeled rows: sr %.3f, svm %.3f", dense, rep.UnlabeledAccuracy, rep.SVMAccuracy)
		}
		t.Logf("dense %v: %+v", dense, rep)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := slices.Clone(c.xs)
		if got := median(c.xs); got != c.want || !slices.Equal(in, c.xs) {
			t.Errorf("median(%v) = %v, want %v (input now %v)", in, got, c.want, c.xs)
		}
	}
}

// TestExportProblemFiles writes the cold solve's rows and labels to two
// files: a LIBSVM line and a label per row, the revealed labels among the
// planted ones.
func TestExportProblemFiles(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "p")
	cfg := SolveConfig{Rows: 200, Features: 256, NNZ: 10, LabeledFrac: 0.2, Seed: 4}
	got, err := ExportProblemFiles(cfg, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if got != (ExportedProblem{Data: prefix + ".svm", Labels: prefix + ".labels", Rows: 200}) {
		t.Errorf("ExportProblemFiles = %+v", got)
	}
	data, err := os.ReadFile(got.Data)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := os.ReadFile(got.Labels)
	if err != nil {
		t.Fatal(err)
	}
	rows, ys := strings.Split(strings.TrimSpace(string(data)), "\n"), strings.Fields(string(labels))
	if len(rows) != 200 || len(ys) != 200 {
		t.Fatalf("%d rows and %d labels, want 200 of each", len(rows), len(ys))
	}
	revealed := 0
	for i, y := range ys {
		if y == "0" {
			continue
		}
		revealed++
		if planted := strings.Fields(rows[i])[0]; planted != y {
			t.Errorf("row %d: label %s revealed, %s planted", i, y, planted)
		}
	}
	if revealed == 0 || revealed == 200 {
		t.Errorf("%d of 200 labels revealed at 0.2", revealed)
	}
	if _, err := ExportProblemFiles(SolveConfig{}, prefix); err == nil {
		t.Error("an empty problem was exported")
	}
	if _, err := ExportProblemFiles(cfg, filepath.Join(prefix, "no", "dir")); err == nil {
		t.Error("an export into a missing directory: no error")
	}
}
