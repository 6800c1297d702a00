package newton

import (
	"cmp"
	"context"
	"slices"

	"streamer/internal/heap"
	"streamer/online/model"
)

const (
	// tsvmLambdaStart is where the annealing of λ_u starts (thesis §6.3.1).
	tsvmLambdaStart = 1e-5
	// tsvmReanneal is the fraction of λ_u from which a warm start anneals
	// again when Params.Reanneal is set (one-versus-rest problems).
	tsvmReanneal = 1e-2
	// tsvmAnnealing multiplies λ_u after each round.
	tsvmAnnealing = 1.5
	// tsvmMaxRounds bounds the switching rounds of one λ_u; the loop ends
	// in finitely many rounds (Proposition 6.3.1), this only guards against
	// cycling on inexact solves.
	tsvmMaxRounds = 10000
)

// tsvm solves the multi-switch transductive L2-SVM (thesis §6.3). A cold
// start trains on the labeled rows, labels the unlabeled rows by
// thresholding at ratio r and anneals λ_u from 1e-5 by ×1.5, switching up
// to S label pairs per round. A warm start keeps the labels of rows still
// present, thresholds the new rows, and runs at the final λ_u at once
// (but once the labeled rows grew by half, it starts as a cold one from
// the warm weights: labelsGrew); with
// Params.Reanneal it first trains on the labeled rows from the warm weights
// and anneals again from λ_u·tsvmReanneal. Switching only swaps pairs inside
// the margin, so at the final λ_u a row labeled confidently wrong keeps its
// label; annealing lets the labeled rows move the weights first.
func (b *binary) tsvm(ctx context.Context, warm *model.Solution) (*model.Solution, error) {
	if len(b.unlabeled) == 0 {
		return b.supervised(ctx, hingeLoss, warm), nil
	}
	s := b.newton(hingeLoss, true)
	b.addLabeledTerms(s)
	sol := &model.Solution{}
	s.setWeights(b.startWeights(warm))
	var labels map[int]float64
	lambdaU := b.par.LambdaU
	if warm == nil || b.labelsGrew(warm) {
		addRun(&sol.Stats, s.minimize(ctx, warm != nil))
		labels = b.thresholdLabels(b.unlabeled, s.o)
		lambdaU = min(tsvmLambdaStart, b.par.LambdaU)
		sol.LabeledAtStart = len(b.labeled)
	} else {
		sol.LabeledAtStart = warm.LabeledAtStart
		labels = b.warmLabels(warm, s.o)
		if b.par.Reanneal {
			addRun(&sol.Stats, s.minimize(ctx, true))
			lambdaU = b.par.LambdaU * tsvmReanneal
		}
	}
	u := float64(len(b.unlabeled))
	for _, row := range b.unlabeled {
		s.terms.add(row, labels[row], lambdaU/u)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		addRun(&sol.Stats, s.minimize(ctx, true))
		if err := b.switchRounds(ctx, s, &sol.Stats); err != nil {
			return nil, err
		}
		if lambdaU >= b.par.LambdaU {
			break
		}
		lambdaU = min(lambdaU*tsvmAnnealing, b.par.LambdaU)
		b.setUnlabeledCosts(s, lambdaU/u)
	}
	sol.W = s.w
	sol.Stats.Objective = b.transductiveCost(s)
	sol.Unlabeled = make(map[uint64]float64, len(b.unlabeled))
	for j, row := range b.unlabeled {
		sol.Unlabeled[b.prob.key(row)] = s.terms.y[len(b.labeled)+j]
	}
	return sol, nil
}

func (b *binary) setUnlabeledCosts(s *newton, c float64) {
	for k := len(b.labeled); k < s.terms.len(); k++ {
		s.terms.c[k] = c
	}
}

// switchRounds switches label pairs and retrains until no pair improves the
// objective.
func (b *binary) switchRounds(ctx context.Context, s *newton, st *model.Stats) error {
	for range tsvmMaxRounds {
		n := b.switchLabels(s)
		if n == 0 {
			return nil
		}
		st.Switches += n
		if err := ctx.Err(); err != nil {
			return err
		}
		addRun(st, s.minimize(ctx, true))
	}
	return nil
}

// switchLabels switches up to S pairs (i positive, j negative) of active
// unlabeled rows with o_i < o_j, taking the most violating first (thesis
// §6.3.2). Each switch lowers the objective and keeps the positive count.
//
// The candidates are taken in the order of a stable sort of the terms by
// output: (output, term) pairs, least first, from a heap, since a round
// mostly switches a handful of pairs out of the whole unlabeled set (a
// stable sort of the terms, with its O(n log² n) merges and two lookups
// per comparison, costs a drain of many classes much of its CPU).
func (b *binary) switchLabels(s *newton) int {
	t := s.terms
	var plus, minus []termOutput
	for k := len(b.labeled); k < t.len(); k++ {
		o := s.o[t.pos[k]]
		switch {
		case t.y[k] > 0 && o < 1:
			plus = append(plus, termOutput{o, k})
		case t.y[k] < 0 && o > -1:
			minus = append(minus, termOutput{-o, k})
		}
	}
	lowest := heap.New(plus, termOutput.less)   // lowest output first
	highest := heap.New(minus, termOutput.less) // highest output first
	maxSwitch := b.par.MaxSwitch
	if maxSwitch == 0 {
		maxSwitch = max(1, len(b.unlabeled)/2)
	}
	n := 0
	for ; n < maxSwitch && lowest.Len() > 0 && highest.Len() > 0; n++ {
		p, m := lowest.Top(), highest.Top()
		if p.o >= -m.o {
			break
		}
		lowest.Pop()
		highest.Pop()
		t.y[p.k], t.y[m.k] = -1, 1
	}
	return n
}

// termOutput is a term and its output (negated for the negatives, so that
// both lists sort the most violating first), ordered by output, then term.
type termOutput struct {
	o float64
	k int
}

func (a termOutput) less(b termOutput) bool {
	return a.o < b.o || (a.o == b.o && a.k < b.k)
}

// warmLabels keeps the labels of unlabeled rows that the warm solution
// knows, labels the new ones by thresholding their outputs at ratio r, and
// then flips the rows nearest the threshold until round(r·u) are positive.
func (b *binary) warmLabels(warm *model.Solution, o []float64) map[int]float64 {
	labels := make(map[int]float64, len(b.unlabeled))
	var fresh []int
	for _, row := range b.unlabeled {
		if y, ok := warm.Unlabeled[b.prob.key(row)]; ok {
			// A TSVM label is ±1, a DA soft label p ∈ [0, 1]: either way
			// the row is positive above ½.
			labels[row] = -1
			if y > 0.5 {
				labels[row] = 1
			}
			continue
		}
		fresh = append(fresh, row)
	}
	for row, y := range b.thresholdLabels(fresh, o) {
		labels[row] = y
	}
	b.balanceLabels(labels, o)
	return labels
}

// labelsGrew reports whether the labeled rows grew by half or more since
// the transductive labels were last set afresh, as a cold start sets them.
// Those labels came from the labeled rows of that solve; in a stream's
// first solves that is two or three rows, and most of them are then
// wrong. Warm solves keep them, switching only pairs inside the margin,
// and the stream stays where its first solves put it. Starting afresh
// whenever the labels grew by half does so a logarithmic number of times.
func (b *binary) labelsGrew(warm *model.Solution) bool {
	return 2*len(b.labeled) >= 3*warm.LabeledAtStart
}

// balanceLabels flips the positives with the lowest outputs (or the
// negatives with the highest) until round(r·u) labels are positive.
func (b *binary) balanceLabels(labels map[int]float64, o []float64) {
	want := b.positives(len(b.unlabeled))
	var pos, neg []int
	for _, row := range b.unlabeled {
		if labels[row] > 0 {
			pos = append(pos, row)
		} else {
			neg = append(neg, row)
		}
	}
	slices.SortStableFunc(pos, func(i, j int) int { return cmp.Compare(o[i], o[j]) })
	slices.SortStableFunc(neg, func(i, j int) int { return cmp.Compare(o[j], o[i]) })
	for k := 0; len(pos)-k > want; k++ {
		labels[pos[k]] = -1
	}
	for k := 0; len(pos)+k < want; k++ {
		labels[neg[k]] = 1
	}
}
