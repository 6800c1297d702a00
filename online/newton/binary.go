package newton

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"streamer/online/linalg"
	"streamer/online/model"
)

// binary holds what every algorithm needs of one binary problem: the split
// of rows into labeled and unlabeled, the positive fraction r and the graph
// term's coefficient.
type binary struct {
	prob      Problem
	par       Params
	d         int
	labeled   []int
	unlabeled []int
	r         float64
	graph     bool
	kappa     float64 // λ_I / s
}

func newBinary(prob Problem, par Params) (*binary, error) {
	n := prob.X.Rows()
	if len(prob.Y) != n {
		return nil, fmt.Errorf("problem has %d rows but %d labels", n, len(prob.Y))
	}
	if prob.Keys != nil && len(prob.Keys) != n {
		return nil, fmt.Errorf("problem has %d rows but %d keys", n, len(prob.Keys))
	}
	if err := checkWeights(prob.Weights, n); err != nil {
		return nil, err
	}
	b := &binary{prob: prob, par: par, d: prob.X.Cols()}
	if err := b.setGraph(); err != nil {
		return nil, err
	}
	pos := 0
	for i, y := range prob.Y {
		switch y {
		case 0:
			b.unlabeled = append(b.unlabeled, i)
		case 1, -1:
			b.labeled = append(b.labeled, i)
			if y > 0 {
				pos++
			}
		default:
			return nil, fmt.Errorf("row %d: label %v is not +1, -1 or 0", i, y)
		}
	}
	if len(b.labeled) == 0 {
		return nil, ErrNoLabels
	}
	b.r = par.R
	if b.r == 0 {
		b.r = float64(pos) / float64(len(b.labeled))
	}
	return b, nil
}

func (b *binary) setGraph() error {
	b.graph = b.par.Objective.UsesGraph(b.par.LambdaI)
	if !b.graph {
		return nil
	}
	lap := b.prob.Laplacian
	if lap == nil {
		return fmt.Errorf("%s with lambda_i > 0 needs a graph Laplacian", b.par.Objective)
	}
	if lap.Vertices() != b.prob.X.Rows() {
		return fmt.Errorf("laplacian has %d vertices but the problem %d rows", lap.Vertices(), b.prob.X.Rows())
	}
	if s := lap.Scale(); s > 0 {
		b.kappa = b.par.LambdaI / s
	}
	return nil
}

// newton returns a finite Newton solver for this problem with no terms yet.
// Its outputs cover every row when allRows is set or the graph term is on,
// else only the labeled rows.
func (b *binary) newton(kind lossKind, allRows bool) *newton {
	s := &newton{
		x:      b.prob.X,
		d:      b.d,
		lambda: b.par.Lambda,
		tol:    b.par.Tolerances,
		terms:  &terms{kind: kind},
		trace:  b.par.trace,
	}
	if b.graph {
		s.lap, s.kappa = b.prob.Laplacian, b.kappa
		gg := b.prob.GraphGram
		if gg == nil {
			gg = NewGraphGram(b.prob.X, b.prob.Laplacian)
		}
		s.direct = newGraphDirect(gg)
		return s
	}
	if !allRows {
		s.rows = b.labeled
	}
	s.direct = newGram(b.prob.X)
	return s
}

// checkWeights names the first weight of n rows that is not a finite
// number above 0; nil weights are all 1.
func checkWeights(w []float64, n int) error {
	if w == nil {
		return nil
	}
	if len(w) != n {
		return fmt.Errorf("problem has %d rows but %d weights", n, len(w))
	}
	for i, x := range w {
		if !(x > 0) || math.IsInf(x, 1) {
			return fmt.Errorf("row %d: weight %v is not a finite number above 0", i, x)
		}
	}
	return nil
}

// addLabeledTerms adds c_i·w_i/Σw · loss(y_i, o_i) for every labeled row,
// w_i its weight: c_i/l without weights.
func (b *binary) addLabeledTerms(s *newton) {
	l := 0.0
	for _, row := range b.labeled {
		l += b.prob.weight(row)
	}
	for k, row := range b.labeled {
		y := b.prob.Y[row]
		c := b.par.NegativeCost
		if y > 0 {
			c = b.par.PositiveCost
		}
		pos := row
		if s.rows != nil {
			pos = k
		}
		s.terms.add(pos, y, c*b.prob.weight(row)/l)
	}
}

// supervised solves rls, svm, laprls or lapsvm; it stops early when ctx
// ends (Solve returns ctx's error then).
func (b *binary) supervised(ctx context.Context, kind lossKind, warm *model.Solution) *model.Solution {
	s := b.newton(kind, false)
	b.addLabeledTerms(s)
	s.setWeights(b.startWeights(warm))
	sol := &model.Solution{}
	addRun(&sol.Stats, s.minimize(ctx, warm != nil))
	sol.W = s.w
	sol.Stats.Objective = s.objective()
	return sol
}

func (b *binary) startWeights(warm *model.Solution) []float64 {
	if warm != nil {
		return warm.W
	}
	return make([]float64, b.d+1)
}

// transductiveCost is the reported objective of tsvm and da (thesis §6.4.3):
// the labeled terms, max(0, 1-|o|)² on the unlabeled rows, the regularizer
// and the graph term. It expects the labeled terms first in s.terms.
func (b *binary) transductiveCost(s *newton) float64 {
	f := s.lambda / 2 * linalg.Dot(s.w, s.w)
	t := s.terms
	for k := range b.labeled {
		o := s.o[t.pos[k]]
		if t.active(k, o) {
			e := 1 - t.y[k]*o
			f += t.c[k] / 2 * e * e
		}
	}
	var fu float64
	for _, row := range b.unlabeled {
		if e := 1 - math.Abs(s.o[row]); e > 0 {
			fu += e * e
		}
	}
	if u := len(b.unlabeled); u > 0 {
		f += b.par.LambdaU / (2 * float64(u)) * fu
	}
	if s.lap != nil {
		f += s.kappa / 2 * linalg.Dot(s.bo, s.bo)
	}
	return f
}

// positives returns round(r·n), the number of positive labels among n
// unlabeled rows.
func (b *binary) positives(n int) int {
	return int(math.Round(b.r * float64(n)))
}

// thresholdLabels labels rows +1 or -1 by thresholding outputs so that
// round(r·len(rows)) of them are positive: the highest outputs win, ties go
// to the earlier row.
func (b *binary) thresholdLabels(rows []int, o []float64) map[int]float64 {
	order := slices.Clone(rows)
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(o[j], o[i]) })
	labels := make(map[int]float64, len(rows))
	npos := b.positives(len(rows))
	for k, row := range order {
		labels[row] = -1
		if k < npos {
			labels[row] = 1
		}
	}
	return labels
}
