// Package modeltest holds the reference computations that the tests of
// the model and of the packages that train it share. Only tests import it.
package modeltest

import (
	"math"

	"streamer/online/model"
)

// ReferenceProbabilities computes every class's probability the long way.
func ReferenceProbabilities(m *model.Model, scores []float64) []float64 {
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

// Argmax returns the index of the largest value, the first of equal ones.
func Argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
