package online

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"streamer/online/linalg"
	"streamer/vector"
)

// TestPredictLabelIsArgmaxOfProbabilities builds models whose calibration
// moves the decision away from the raw scores: the label must follow the
// probabilities, and Prob must be the largest of them.
func TestPredictLabelIsArgmaxOfProbabilities(t *testing.T) {
	x := vector.Dense([]float64{1})
	tests := []struct {
		name      string
		model     Model
		rawBest   int
		wantClass int
	}{
		{
			// Output -0.5: the raw scores say ham; Platt's offset B = -1
			// gives spam 1/(1+exp(-0.5)) = 0.62.
			name: "binary",
			model: Model{Classes: []string{"ham", "spam"}, Dim: 1,
				Problems:    []Solution{{W: []float64{-0.5, 0}}},
				Calibration: []Platt{{A: -1, B: -1}}},
			rawBest: 0, wantClass: 1,
		},
		{
			// Scores 0.3, 0.2, -1: the raw scores say a; b's steeper sigmoid
			// gives it 0.88 against a's 0.57.
			name: "one versus rest",
			model: Model{Classes: []string{"a", "b", "c"}, Dim: 1,
				Problems:    []Solution{{W: []float64{0.3, 0}}, {W: []float64{0.2, 0}}, {W: []float64{-1, 0}}},
				Calibration: []Platt{{A: -1}, {A: -5, B: -1}, {A: -1}}},
			rawBest: 0, wantClass: 1,
		},
		{
			name: "binary without calibration",
			model: Model{Classes: []string{"ham", "spam"}, Dim: 1,
				Problems: []Solution{{W: []float64{-0.5, 0}}}},
			rawBest: 0, wantClass: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.model.Predict(x)
			if raw := argmax(p.Scores); raw != tt.rawBest {
				t.Fatalf("raw argmax %d, the test wants %d", raw, tt.rawBest)
			}
			if p.Class != tt.wantClass {
				t.Fatalf("class %d, want %d (scores %v, prob %v)", p.Class, tt.wantClass, p.Scores, p.Prob)
			}
			probs := referenceProbabilities(&tt.model, p.Scores)
			if probs == nil {
				if p.Prob != 0 {
					t.Fatalf("prob %v without calibration", p.Prob)
				}
				return
			}
			if argmax(probs) != p.Class || math.Abs(probs[p.Class]-p.Prob) > 1e-12 {
				t.Fatalf("class %d prob %v, probabilities %v", p.Class, p.Prob, probs)
			}
		})
	}
}

// referenceProbabilities computes every class's probability the long way.
func referenceProbabilities(m *Model, scores []float64) []float64 {
	if len(m.Calibration) == 0 {
		return nil
	}
	if m.Binary() {
		p := 1 / (1 + math.Exp(m.Calibration[0].A*scores[1]+m.Calibration[0].B))
		return []float64{1 - p, p}
	}
	probs := make([]float64, len(scores))
	var sum float64
	for k, s := range scores {
		probs[k] = 1 / (1 + math.Exp(m.Calibration[k].A*s+m.Calibration[k].B))
		sum += probs[k]
	}
	for k := range probs {
		probs[k] /= sum
	}
	return probs
}

func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// TestTrainedProbabilityAgreesWithTheDecision trains binary and one versus
// rest models and checks that every prediction's class is the largest
// score's and the largest probability's.
func TestTrainedProbabilityAgreesWithTheDecision(t *testing.T) {
	xs, labels, _ := threeClusters(300, 60)
	binary := make([]string, len(labels))
	for i, l := range labels {
		binary[i] = l
		if l == "blue" {
			binary[i] = "green"
		}
	}
	for name, ls := range map[string][]string{"binary": binary, "one versus rest": labels} {
		t.Run(name, func(t *testing.T) {
			m, _, err := Train(context.Background(), TrainData{X: linalg.NewVectorRows(xs, 10, 1), Labels: ls}, Params{Algorithm: SVM}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, c := range m.Calibration {
				if c.B != 0 || c.A > 0 {
					t.Fatalf("calibration %d is %+v, want B = 0 and A ≤ 0", k, c)
				}
			}
			for i, x := range xs {
				p := m.Predict(x)
				probs := referenceProbabilities(m, p.Scores)
				if m.Binary() && p.Class != argmax(p.Scores) {
					t.Fatalf("row %d: class %d, scores %v", i, p.Class, p.Scores)
				}
				if p.Class != argmax(probs) || math.Abs(probs[p.Class]-p.Prob) > 1e-12 {
					t.Fatalf("row %d: class %d prob %v, probabilities %v", i, p.Class, p.Prob, probs)
				}
			}
		})
	}
}

func TestFitPlattSlopeRecoversTheSlope(t *testing.T) {
	// P(y=1|o) = 1/(1+exp(-2o)): the slope fit should find A ≈ -2.
	r := rand.New(rand.NewPCG(2, 2))
	outs := make([]float64, 20000)
	ys := make([]float64, len(outs))
	for i := range outs {
		outs[i] = 3 * (2*r.Float64() - 1)
		ys[i] = -1
		if r.Float64() < 1/(1+math.Exp(-2*outs[i])) {
			ys[i] = 1
		}
	}
	if p := fitPlattSlope(outs, ys); p.B != 0 || math.Abs(p.A+2) > 0.1 {
		t.Fatalf("fitted %+v, want A ≈ -2, B = 0", p)
	}
	// Outputs that fall as the class rises must not reverse the decision.
	for i := range ys {
		ys[i] = -ys[i]
	}
	if p := fitPlattSlope(outs, ys); p.A != 0 {
		t.Fatalf("reversed outputs fitted %+v, want A = 0", p)
	}
}
