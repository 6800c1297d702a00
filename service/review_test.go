package service

import (
	"math"
	"slices"
	"testing"

	"streamer/ingest"
	"streamer/online"
	"streamer/online/model"
	"streamer/pipeline"
	"streamer/snapshot"
	"streamer/vector"
)

// TestScorerRoutesByPublishedThresholds: the snapshot a learner builds of
// its model carries the model's review thresholds, and a scorer of the
// same target precision that puts the snapshot in force routes by them,
// where a model without them has every prediction reviewed. Nothing
// connects: the snapshot goes from one service to the other by hand.
func TestScorerRoutesByPublishedThresholds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		thresholds []float64
		review     bool
	}{
		{"with thresholds", []float64{0, 0}, false},
		{"without thresholds", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			learner := newUnconnected(t, "role=learner")
			dim := learner.cfg.ModelDim()
			m := &model.Model{Classes: []string{"ham", "spam"}, Dim: dim, Problems: []model.Solution{{W: make([]float64, dim+1)}}}
			solved := online.Solved{Model: m, Stamp: model.Stamp{Epoch: 1, Version: 4}}
			if tc.thresholds != nil {
				solved.Thresholds, solved.ThresholdsTarget = tc.thresholds, 0.9
			}
			learner.pipe.SetModel(solved)
			data, err := snapshot.Encode(learner.buildSnapshot())
			if err != nil {
				t.Fatal(err)
			}

			scorer := newUnconnected(t, "role=scorer")
			scorer.offerSnapshot(snapshot.Complete{Epoch: 1, Version: 4, Data: data})
			if got := scorer.pipe.Learner().InForce(); got.Stamp.Version != 4 || len(got.Thresholds) != len(tc.thresholds) {
				t.Fatalf("scorer holds version %d with thresholds %v, want 4 with %v", got.Stamp.Version, got.Thresholds, tc.thresholds)
			}
			ex := ingest.Example{ID: "x", Vector: vector.Sparse([]int32{3}, []float64{1})}
			preds, err := scorer.pipe.Score([]ingest.Example{ex}, pipeline.Source{})
			if err != nil {
				t.Fatal(err)
			}
			if preds[0].Review != tc.review {
				t.Fatalf("prediction %+v: review %v, want %v", preds[0], preds[0].Review, tc.review)
			}
		})
	}
}

// newUnconnected returns a service of target precision 0.9 that is never
// run.
func newUnconnected(t *testing.T, role string) *Service {
	t.Helper()
	svc, err := New(testConfig(t, nil, role, "review.target_precision=0.9"), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestReviewGradesSurviveARestart: the graded predictions the review
// thresholds are chosen on go into the snapshot, and a restarted service
// chooses the thresholds of its first solves on them, rather than on the
// few labels graded since it started, which would send every prediction
// to review.
func TestReviewGradesSurviveARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4)
	cfg := testConfig(t, f.addrs, "review.target_precision=0.95")
	svc, stop := runService(t, cfg)
	f.feed(t, svc, 6, 100, true)
	before := svc.Pipeline().Learner().Grades()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if len(before) < 50 {
		t.Fatalf("%d grades before the restart, want some 50 at least", len(before))
	}

	svc2, _ := runService(t, cfg)
	<-svc2.Started()
	resumed := svc2.Pipeline().Learner().Grades()
	if len(resumed) < len(before) {
		t.Fatalf("%d grades after the restart, %d before", len(resumed), len(before))
	}
	for i, g := range before {
		r := resumed[i]
		if r.Class != g.Class || r.Correct != g.Correct || math.Abs(r.Prob-g.Prob) > 1e-6 {
			t.Fatalf("grade %d: %+v after the restart, %+v before", i, r, g)
		}
	}
	f.feed(t, svc2, 1, 20, true)
	s := svc2.Pipeline().Learner().InForce()
	if !slices.ContainsFunc(s.Thresholds, func(x float64) bool { return !math.IsInf(x, 1) }) {
		t.Fatalf("the first solve after the restart sends every class to review: thresholds %v", s.Thresholds)
	}
}
