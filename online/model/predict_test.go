package model_test

import (
	"math"
	"strings"
	"testing"

	"streamer/online/internal/modeltest"
	"streamer/online/model"
	"streamer/vector"
)

// TestPredictLabelIsArgmaxOfProbabilities builds models whose calibration
// moves the decision away from the raw scores: the label must follow the
// probabilities, and Prob must be the largest of them; Distribution gives
// them all, summing to 1, the largest Predict's.
func TestPredictLabelIsArgmaxOfProbabilities(t *testing.T) {
	x := vector.Dense([]float64{1})
	tests := []struct {
		name      string
		model     model.Model
		rawBest   int
		wantClass int
	}{
		{
			// Output -0.5: the raw scores say ham; Platt's offset B = -1
			// gives spam 1/(1+exp(-0.5)) = 0.62.
			name: "binary",
			model: model.Model{Classes: []string{"ham", "spam"}, Dim: 1,
				Problems:    []model.Solution{{W: []float64{-0.5, 0}}},
				Calibration: []model.Platt{{A: -1, B: -1}}},
			rawBest: 0, wantClass: 1,
		},
		{
			// Scores 0.3, 0.2, -1: the raw scores say a; b's steeper sigmoid
			// gives it 0.88 against a's 0.57.
			name: "one versus rest",
			model: model.Model{Classes: []string{"a", "b", "c"}, Dim: 1,
				Problems:    []model.Solution{{W: []float64{0.3, 0}}, {W: []float64{0.2, 0}}, {W: []float64{-1, 0}}},
				Calibration: []model.Platt{{A: -1}, {A: -5, B: -1}, {A: -1}}},
			rawBest: 0, wantClass: 1,
		},
		{
			name: "binary without calibration",
			model: model.Model{Classes: []string{"ham", "spam"}, Dim: 1,
				Problems: []model.Solution{{W: []float64{-0.5, 0}}}},
			rawBest: 0, wantClass: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.model.Predict(x)
			if raw := modeltest.Argmax(p.Scores); raw != tt.rawBest {
				t.Fatalf("raw argmax %d, the test wants %d", raw, tt.rawBest)
			}
			if p.Class != tt.wantClass {
				t.Fatalf("class %d, want %d (scores %v, prob %v)", p.Class, tt.wantClass, p.Scores, p.Prob)
			}
			dist := tt.model.Distribution(p.Scores)
			var sum float64
			for _, q := range dist {
				sum += q
			}
			if math.Abs(sum-1) > 1e-12 || modeltest.Argmax(dist) != p.Class {
				t.Fatalf("distribution %v: sums to %v, largest at %d; want 1 and class %d", dist, sum, modeltest.Argmax(dist), p.Class)
			}
			probs := modeltest.ReferenceProbabilities(&tt.model, p.Scores)
			if probs == nil {
				if p.Prob != 0 {
					t.Fatalf("prob %v without calibration", p.Prob)
				}
				return
			}
			if math.Abs(dist[p.Class]-p.Prob) > 1e-12 {
				t.Fatalf("distribution %v, prob %v", dist, p.Prob)
			}
			if modeltest.Argmax(probs) != p.Class || math.Abs(probs[p.Class]-p.Prob) > 1e-12 {
				t.Fatalf("class %d prob %v, probabilities %v", p.Class, p.Prob, probs)
			}
		})
	}
}

func TestFiniteNamesTheBadPart(t *testing.T) {
	good := func() *model.Model {
		return &model.Model{Classes: []string{"a", "b", "c"}, Dim: 2,
			Problems:    []model.Solution{{W: []float64{1, 2, 0}}, {W: []float64{0, 1, 1}}, {W: []float64{-1, 0, 0}}},
			Calibration: []model.Platt{{A: -1}, {A: -1}, {A: -1}},
			Centroids:   [][]float64{{0}, {1}, {2}}}
	}
	if err := good().Finite(); err != nil {
		t.Fatalf("a finite model: %v", err)
	}
	for _, tc := range []struct {
		spoil func(m *model.Model)
		want  string
	}{
		{func(m *model.Model) { m.Problems[1].W[0] = math.NaN() }, "problem 1: weights"},
		{func(m *model.Model) { m.Problems[2].W[2] = math.Inf(1) }, "problem 2: weights"},
		{func(m *model.Model) { m.Calibration[0].B = math.NaN() }, "problem 0: calibration"},
		{func(m *model.Model) { m.Centroids[2][0] = math.Inf(-1) }, "class 2: centroid"},
	} {
		m := good()
		tc.spoil(m)
		if err := m.Finite(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want it to name %q", err, tc.want)
		}
	}
}
