package online

import (
	"context"
	"math"
	"testing"

	"streamer/synth"
)

// TestTrialRecordCountsDisagreements checks the record: a label both
// candidates got right, or both wrong, leaves it alone; one that only one
// got right counts 1 for it, and weighs the earlier ones down by
// 1 − 1/autoMemory.
func TestTrialRecordCountsDisagreements(t *testing.T) {
	var r trialRecord
	r.add(true, true)
	r.add(false, false)
	if r != (trialRecord{}) {
		t.Fatalf("agreements recorded: %+v", r)
	}
	r.add(true, false)
	r.add(false, true)
	r.add(false, true)
	keep := 1 - 1.0/autoMemory
	want := trialRecord{SR: keep * keep, Rival: keep + 1}
	if math.Abs(r.SR-want.SR) > 1e-15 || math.Abs(r.Rival-want.Rival) > 1e-15 {
		t.Fatalf("record %+v, want %+v", r, want)
	}
}

// TestAutoServesTheCandidateRightMoreOften checks auto's trial on a
// clustered window where chooseAuto picks sr: a previous solve whose sr
// candidate classified the labels that arrived since correctly and whose
// rival did not has sr served; the other way round the rival is served, sr
// is not solved again while it trails, and the model not served keeps no
// trial of its own.
func TestAutoServesTheCandidateRightMoreOften(t *testing.T) {
	const n, dim, c = 600, 6, 5
	before, truth, _ := srData(t, n, dim, c, 0.2, 4)
	xs, _ := synth.Clusters(synth.ClusterConfig{Points: n, Dim: dim, Clusters: c, Spread: 0.6, Seed: 4})
	before.Rows = xs
	before.Keys = make([]uint64, n)
	for i := range before.Keys {
		before.Keys[i] = uint64(i)
	}
	if choice, _, trial := chooseAuto(before, Params{}); choice.Algorithm != SR || !trial {
		t.Fatalf("chooseAuto: %s, trial %v; want sr and a trial", choice.Algorithm, trial)
	}
	after := before
	after.Labels = append([]string(nil), before.Labels...)
	for i := 1; i < n; i += 20 { // labels that arrive between the solves
		after.Labels[i] = truth[i]
	}
	wrong := before
	wrong.Labels = relabel(before.Labels, 1, c, 5)
	ctx := context.Background()
	train := func(data TrainData, a Algorithm) *Model {
		t.Helper()
		m, _, err := Train(ctx, data, Params{Algorithm: a}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tt := range []struct {
		name        string
		served, sr  *Model // the previous solve's served model and sr candidate
		want        Algorithm
		srSolvedNew bool
	}{
		{"sr right", train(wrong, SVM), train(before, SR), SR, true},
		{"rival right", train(before, SVM), train(wrong, SR), LapSVM, false},
	} {
		prev := *tt.served
		other := tt.sr
		if tt.served.Centroids != nil {
			other = tt.served
			prev = *tt.sr
		}
		prev.trial = &autoTrial{other: other, labeled: labeledKeys(before)}
		m, st, err := Train(ctx, after, Params{Algorithm: Auto}, &prev)
		if err != nil {
			t.Fatal(err)
		}
		if st.Algorithm != tt.want || (m.Centroids != nil) != (tt.want == SR) {
			t.Errorf("%s: served %s (centroids %v), want %s", tt.name, st.Algorithm, m.Centroids != nil, tt.want)
		}
		if m.trial == nil || m.trial.other.trial != nil {
			t.Fatalf("%s: trial %+v: want one, whose other model has none", tt.name, m.trial)
		}
		srModel := m
		if tt.want != SR {
			srModel = m.trial.other
		}
		if solvedNew := &srModel.Problems[0] != &tt.sr.Problems[0]; solvedNew != tt.srSolvedNew {
			t.Errorf("%s: sr solved again = %v, want %v (record %+v)", tt.name, solvedNew, tt.srSolvedNew, m.trial.record)
		}
	}
}
