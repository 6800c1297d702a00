package bench

import (
	"context"
	"testing"

	"streamer/online"
)

func TestSolveSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("numerical; no concurrency to race")
	}
	for _, a := range []online.Algorithm{online.SVM, online.TSVM, online.DA} {
		rep, err := Solve(context.Background(), SolveConfig{
			Rows: 3000, Features: 1 << 14, NNZ: 30, LabeledFrac: 0.05, Noise: 0.02, Seed: 1,
			Params: online.Params{Algorithm: a, Lambda: 1e-3},
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Labeled == 0 || rep.Objective <= 0 || rep.WarmObjective <= 0 || rep.NewtonSteps == 0 {
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
	for _, a := range []online.Algorithm{online.SVM, online.TSVM, online.DA} {
		b.Run(string(a), func(b *testing.B) {
			for b.Loop() {
				rep, err := Solve(context.Background(), SolveConfig{
					Rows: 20000, Features: 1 << 18, NNZ: 80, LabeledFrac: 0.01, Noise: 0.05, Seed: 1,
					Params: online.Params{Algorithm: a, Lambda: 1e-4},
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
