package train

import (
	"context"
	"math"
	"testing"

	"streamer/online/internal/modeltest"
	"streamer/online/linalg"
)

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
			m, _, err := Solve(context.Background(), Window{X: linalg.NewVectorRows(xs, 10, 1), Labels: ls}, Params{Algorithm: SVM}, nil)
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
				probs := modeltest.ReferenceProbabilities(m, p.Scores)
				if m.Binary() && p.Class != modeltest.Argmax(p.Scores) {
					t.Fatalf("row %d: class %d, scores %v", i, p.Class, p.Scores)
				}
				if p.Class != modeltest.Argmax(probs) || math.Abs(probs[p.Class]-p.Prob) > 1e-12 {
					t.Fatalf("row %d: class %d prob %v, probabilities %v", i, p.Class, p.Prob, probs)
				}
			}
		})
	}
}
