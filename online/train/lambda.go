package train

import (
	"cmp"
	"context"
	"math"
	"slices"

	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/online/newton"
	"streamer/vector"
)

// lambdaSearchMin is the fewest labeled rows of a window whose λ is
// searched: below it the newest half judges on too few.
const lambdaSearchMin = 80

// lambdaMemory is the number of solves over which searchLambda remembers
// each λ's errors: each solve weighs the older ones down by
// 1 − 1/lambdaMemory.
const lambdaMemory = 32

// searchLambda returns the λ, among params.Lambda times 1, 10, … up to
// 10^params.LambdaSearch, and the half-life of the labels' weights, none
// or a quarter of the span of the window's labeled rows
// (recencyHalfLife), whose supervised L2-SVM fitted on the older half of
// the window's labeled rows errs least on the newest half. Those errors
// add to the earlier solves' (record), weighed down by 1 − 1/lambdaMemory
// at each solve, so that one solve's few newest labels do not swing the
// choice; ties go to no weights and the smaller λ. The record lives in the
// model: a restored model starts a new one. The newest rows stand for the
// stream as it is now: a model that fits old labels too closely, on a
// stream that moved or with few labels in many directions, errs on them,
// and where the stream keeps moving, the newer of the older labels teach
// more than the oldest.
// It returns params.Lambda, no half-life and no record, where there is
// nothing to search: not two classes, LambdaSearch 0 or a window without
// its rows; and params.Lambda with record as it was below lambdaSearchMin
// labeled rows.
func searchLambda(ctx context.Context, data Window, params Params, classes []string, record []float64) (lambda, halfLife float64, next []float64) {
	lambda = params.Lambda
	if params.LambdaSearch <= 0 || len(classes) != 2 || data.Rows == nil || data.Keys == nil {
		return lambda, 0, nil
	}
	fit, hold := splitNewest(data)
	if len(fit)+len(hold) < lambdaSearchMin {
		return lambda, 0, record
	}
	pos := classes[(&model.Model{Classes: classes}).ProblemClass(0)]
	fitRows, y, keys := make([]vector.Vector, len(fit)), make([]float64, len(fit)), make([]uint64, len(fit))
	for k, i := range fit {
		fitRows[k], y[k], keys[k] = data.Rows[i], sign(data.Labels[i] == pos), data.Keys[i]
	}
	x := linalg.NewMatrix(fitRows, linalg.NewColumnSpace(data.X).Features)
	decades := params.LambdaSearch + 1
	halfLives := []float64{0, recencyHalfLife(data)}
	weights := [][]float64{nil, recencyWeights(keys, y, halfLives[1])}
	next = make([]float64, decades*len(halfLives))
	bp := params.Binary()
	bp.Objective = newton.SVM
	for c := range next {
		if c < len(record) {
			next[c] = record[c] * (1 - 1.0/lambdaMemory)
		}
		bp.Lambda = lambda * math.Pow(10, float64(c%decades))
		prob := newton.Problem{X: x, Y: y, Weights: weights[c/decades]}
		sol, err := newton.Solve(ctx, prob, bp, nil)
		if err != nil {
			return lambda, 0, record
		}
		errs := 0
		for _, i := range hold {
			if (score(sol.W, data.Rows[i]) > 0) != (data.Labels[i] == pos) {
				errs++
			}
		}
		next[c] += float64(errs) / float64(len(hold))
	}
	best := 0
	for c, e := range next {
		if e < next[best] {
			best = c
		}
	}
	return lambda * math.Pow(10, float64(best%decades)), halfLives[best/decades], next
}

// recencyHalfLife is the half-life, in window positions, of the labels'
// weights that searchLambda tries: a quarter of the positions the
// window's labeled rows span, so that the oldest weigh a sixteenth of the
// newest.
func recencyHalfLife(data Window) float64 {
	oldest, newest := uint64(math.MaxUint64), uint64(0)
	for i, l := range data.Labels {
		if l != "" {
			oldest, newest = min(oldest, data.Keys[i]), max(newest, data.Keys[i])
		}
	}
	if newest <= oldest {
		return 0
	}
	return float64(newest-oldest) / 4
}

// recencyWeights returns the weights of labeled rows (y not 0) at keys,
// halved every halfLife positions back from the newest, and 1 for the
// unlabeled rows, whose terms the weights do not scale; nil, all rows
// alike, when halfLife is 0.
func recencyWeights(keys []uint64, y []float64, halfLife float64) []float64 {
	if halfLife <= 0 || keys == nil {
		return nil
	}
	var newest uint64
	for i, k := range keys {
		if y[i] != 0 {
			newest = max(newest, k)
		}
	}
	w := make([]float64, len(keys))
	for i, k := range keys {
		w[i] = 1
		if y[i] != 0 {
			w[i] = math.Exp2(-float64(newest-k) / halfLife)
		}
	}
	return w
}

// splitNewest returns the window's labeled rows, oldest first, split into
// the older half and the newest.
func splitNewest(data Window) (older, newest []int) {
	var labeled []int
	for i, l := range data.Labels {
		if l != "" {
			labeled = append(labeled, i)
		}
	}
	slices.SortFunc(labeled, func(a, b int) int { return cmp.Compare(data.Keys[a], data.Keys[b]) })
	cut := len(labeled) - len(labeled)/2
	return labeled[:cut], labeled[cut:]
}

func sign(pos bool) float64 {
	if pos {
		return 1
	}
	return -1
}

// score is w's output on x: its weights, then its bias.
func score(w []float64, x vector.Vector) float64 {
	return x.DotDense(w[:len(w)-1]) + w[len(w)-1]
}
