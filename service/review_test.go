package service

import (
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
