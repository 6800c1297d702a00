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
// 10^params.LambdaSearch, whose supervised L2-SVM fitted on the older half
// of the window's labeled rows errs least on the newest half. Those
// errors add to the earlier solves' (record), weighed down by
// 1 − 1/lambdaMemory at each solve, so that one solve's few newest labels
// do not swing the choice; ties go to the smaller λ. The record lives in
// the model: a restored model starts a new one. The newest rows stand for
// the stream as it is now: a model that fits old labels too closely, on a
// stream that moved or with few labels in many directions, errs on them.
// It returns params.Lambda, and no record, where there is nothing to
// search: not two classes, LambdaSearch 0 or a window without its rows;
// and params.Lambda with record as it was below lambdaSearchMin labeled
// rows.
func searchLambda(ctx context.Context, data Window, params Params, classes []string, record []float64) (float64, []float64) {
	lambda := params.Lambda
	if params.LambdaSearch <= 0 || len(classes) != 2 || data.Rows == nil || data.Keys == nil {
		return lambda, nil
	}
	fit, hold := splitNewest(data)
	if len(fit)+len(hold) < lambdaSearchMin {
		return lambda, record
	}
	pos := classes[(&model.Model{Classes: classes}).ProblemClass(0)]
	fitRows, y := make([]vector.Vector, len(fit)), make([]float64, len(fit))
	for k, i := range fit {
		fitRows[k], y[k] = data.Rows[i], sign(data.Labels[i] == pos)
	}
	x := linalg.NewMatrix(fitRows, linalg.NewColumnSpace(data.X).Features)
	next := make([]float64, params.LambdaSearch+1)
	bp := params.Binary()
	bp.Objective = newton.SVM
	for d := range next {
		if d < len(record) {
			next[d] = record[d] * (1 - 1.0/lambdaMemory)
		}
		bp.Lambda = lambda * math.Pow(10, float64(d))
		sol, err := newton.Solve(ctx, newton.Problem{X: x, Y: y}, bp, nil)
		if err != nil {
			return lambda, record
		}
		errs := 0
		for _, i := range hold {
			if (score(sol.W, data.Rows[i]) > 0) != (data.Labels[i] == pos) {
				errs++
			}
		}
		next[d] += float64(errs) / float64(len(hold))
	}
	best := 0
	for d, e := range next {
		if e < next[best] {
			best = d
		}
	}
	return lambda * math.Pow(10, float64(best)), next
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
