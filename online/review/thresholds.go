package review

import (
	"cmp"
	"math"
	"slices"

	"streamer/internal/binomial"
)

// Grade is a prediction scored against its label: the class predicted,
// the calibrated probability it was predicted with, and whether the label
// agreed.
type Grade struct {
	Class   string
	Prob    float64
	Correct bool
}

// ReviewAll is the threshold of a class whose predictions all go to
// review: no probability reaches it.
var ReviewAll = math.Inf(1)

// Thresholds returns, for each class, the lowest threshold t such that
// the class's grades of probability ≥ t are right at least target of the
// time with confidence (precisionBound), or ReviewAll where no such t
// exists. A class's predictions of probability ≥ its threshold are
// decided automatically; taken together, they then reach the target as
// each class does.
//
// A class with fewer than ownGrades grades cannot show that alone (some
// 20 right grades in a row are needed): it takes the cut chosen the same
// way on the grades of every class, which the classes' calibration makes
// comparable.
func Thresholds(grades []Grade, classes []string, target float64) []float64 {
	byClass := make(map[string][]Grade, len(classes))
	for _, g := range grades {
		byClass[g.Class] = append(byClass[g.Class], g)
	}
	pooled := threshold(slices.Clone(grades), target)
	out := make([]float64, len(classes))
	for c, name := range classes {
		out[c] = pooled
		if len(byClass[name]) >= ownGrades {
			out[c] = threshold(byClass[name], target)
		}
	}
	return out
}

// ownGrades is the number of grades from which a class's threshold is
// chosen on its own grades alone.
const ownGrades = 50

// threshold returns the lowest probability cut whose grades above it
// reach the target by precisionBound; cuts fall between distinct
// probabilities.
func threshold(grades []Grade, target float64) float64 {
	slices.SortFunc(grades, func(a, b Grade) int { return cmp.Compare(b.Prob, a.Prob) })
	best := ReviewAll
	var right int
	for i, g := range grades {
		if g.Correct {
			right++
		}
		if i+1 < len(grades) && grades[i+1].Prob == g.Prob {
			continue
		}
		if precisionBound(right, i+1) >= target {
			best = g.Prob
		}
	}
	return best
}

// confidenceZ is the normal quantile of the one-sided bound on a cut's
// precision: about 84% confidence, so that a class needs some 20 right
// grades in a row before its predictions at 0.95 are decided without
// review.
const confidenceZ = 1.0

// precisionBound returns the lower end of Wilson's score interval for
// right successes in n trials.
func precisionBound(right, n int) float64 {
	lower, _ := binomial.Wilson(right, n, confidenceZ)
	return lower
}
