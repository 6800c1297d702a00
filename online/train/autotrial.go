package train

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"streamer/online/model"
)

// autoMemory is the number of disagreements over which auto's trial
// remembers which candidate was right: each new one weighs the older ones
// down by 1 − 1/autoMemory.
const autoMemory = 8

// autoDoubtZ is how many standard deviations a graph candidate's record
// must lead sr's by for a trial to go on where the rule would choose sr
// outright (doubtedSR).
const autoDoubtZ = 2

// autoMaxEvery bounds the interval, in solves, at which auto's trial solves
// the candidates it does not serve (see trainAuto).
const autoMaxEvery = 16

// autoTrial is what auto remembers of a solve at which it weighed
// candidates against its rule's choice (chooseAuto): the algorithm it
// served, the models of the candidates it did not serve, the rows labeled
// then, and the record of every candidate on the labels revealed since
// earlier trials. It lives in the served model and is not part of a
// snapshot: a restored model starts a new record.
type autoTrial struct {
	served  Algorithm
	others  map[Algorithm]*model.Model
	labeled map[uint64]bool
	record  trialRecord
	// age is the number of solves since the others were solved; every is
	// the interval at which they are.
	age, every int
}

// trialRecord counts, decayed, each candidate's revealed labels that it
// got right where another candidate did not.
type trialRecord map[Algorithm]float64

// add records a revealed label, right saying which candidates classified
// it correctly; a label they all got right, or all wrong, tells nothing.
func (r trialRecord) add(right map[Algorithm]bool) {
	var rights int
	for _, ok := range right {
		if ok {
			rights++
		}
	}
	if rights == 0 || rights == len(right) {
		return
	}
	for a := range r {
		r[a] *= 1 - 1.0/autoMemory
	}
	for a, ok := range right {
		if ok {
			r[a]++
		}
	}
}

// serve returns the candidate the record puts first. On a tie it serves sr
// where preferSR, asked only then, says so (the last model was sr's or the
// few labeled kNN edges lean to it, leansSR): without a label to go by, a
// model that served sr is not switched because the rule's homophily dipped;
// otherwise the rule's choice, candidates[0], where it is among the first.
// The supervised svm, where it guards a choice that uses the graph, is
// served only once its record is ahead.
func (r trialRecord) serve(candidates []Algorithm, preferSR func() bool) Algorithm {
	best := r[candidates[0]]
	for _, a := range candidates {
		best = max(best, r[a])
	}
	var top []Algorithm
	for _, a := range candidates {
		if r[a] == best {
			top = append(top, a)
		}
	}
	switch {
	case len(top) == 1:
		return top[0]
	case slices.Contains(top, SR) && preferSR():
		return SR
	}
	return top[0]
}

// trainAuto solves what auto stands for (chooseAuto). Where the rule's
// choice has candidates against it (sr, and the supervised svm beside a
// choice that uses the graph), it serves the candidate that was right
// most often where they disagreed on the labels revealed since, as the
// models of the earlier solves predicted them (trialRecord.serve breaks
// ties). It keeps the candidates not served for the next comparison. The
// served candidate is solved afresh, the others at the 1st, 2nd, 4th, 8th
// … solve after a switch (at most every autoMaxEvery-th) and otherwise
// kept as they were: where one candidate keeps winning, or they agree,
// the trial costs a few solves of the others. A candidate new to the trial
// is solved at once and starts from the served one's record.
func trainAuto(ctx context.Context, data Window, params Params, classes []string, labeled int, prev *model.Model) (*model.Model, Stats, error) {
	start := time.Now()
	choice, against := chooseAuto(data, params)
	if len(against) == 0 {
		choice, against = doubtedSR(prev, data, choice)
	}
	if len(against) == 0 || data.Rows == nil || data.Keys == nil {
		return trainWith(ctx, data, choice, classes, labeled, prev)
	}
	candidates := append([]Algorithm{choice.Algorithm}, against...)
	kept := keptModels(prev)
	record := revealedRecord(prev, kept, data, candidates)
	served := record.serve(candidates, func() bool { return servedSR(prev) || leansSR(data) })
	next := nextTrial(prev, served)
	next.others, next.labeled, next.record = map[Algorithm]*model.Model{}, labeledKeys(data), record
	var out *model.Model
	var st Stats
	for _, a := range candidates {
		p := choice
		p.Algorithm = a
		m, s, err := trainCandidate(ctx, data, p, classes, labeled, prev, kept[a], a == served || next.age == 0)
		if err != nil {
			return nil, Stats{}, err
		}
		if a != served {
			next.others[a] = m
			continue
		}
		out, st = m, s
	}
	out.Warm = &warmState{spectral: warmOf(out).spectral, trial: next}
	st.Trial = record
	st.Seconds = time.Since(start).Seconds()
	return out, st, nil
}

// doubtedSR returns the rule's choice of sr tried against the candidates
// of prev's trial, where one of them that uses the graph (lapsvm) is
// clearly ahead of sr on its record (clearlyAhead): the rule judges the
// graph by its labeled edges, which near-copies of a text make agree, and
// the labels that arrived are better evidence. The trial serves the
// candidate its record puts first; once no lead is clear, the rule's
// choice stands alone again. Any other choice, or a record without a
// clear lead over sr, is returned as it was.
func doubtedSR(prev *model.Model, data Window, choice Params) (Params, []Algorithm) {
	t := warmOf(prev).trial
	if choice.Algorithm != SR || t == nil || data.Laplacian == nil {
		return choice, nil
	}
	if _, tried := t.record[SR]; !tried {
		return choice, nil
	}
	var against []Algorithm
	doubted := false
	for _, a := range slices.Sorted(maps.Keys(keptModels(prev))) {
		if a == SR {
			continue
		}
		against = append(against, a)
		doubted = doubted || (a.UsesGraph(autoLambdaI) && clearlyAhead(t.record[a], t.record[SR]))
	}
	if !doubted {
		return choice, nil
	}
	choice.LambdaI = cmp.Or(choice.LambdaI, autoWeight(data.Laplacian))
	return choice, against
}

// clearlyAhead reports whether a record of a right answers where b's
// candidate was wrong is ahead of b's by autoDoubtZ standard deviations
// of a sign test (the decayed counts standing in for counts).
func clearlyAhead(a, b float64) bool {
	return a > b && a-b >= autoDoubtZ*math.Sqrt(a+b)
}

// servedSR reports whether the last model, prev, was sr's.
func servedSR(prev *model.Model) bool {
	return prev != nil && prev.Centroids != nil
}

// nextTrial returns the trial that a solve serving served leaves, but for
// its models, labels and record: the solves since the candidates not
// served were solved (0: at this solve) and the interval between their
// solves.
func nextTrial(prev *model.Model, served Algorithm) *autoTrial {
	t := warmOf(prev).trial
	if t == nil || t.served != served {
		return &autoTrial{served: served, every: 1} // a first trial or a switch: solve all
	}
	if t.age+1 < t.every {
		return &autoTrial{served: served, age: t.age + 1, every: t.every}
	}
	return &autoTrial{served: served, every: min(2*t.every, autoMaxEvery)}
}

// trainCandidate solves a candidate of the trial when solve is set or it
// has no model kept from the last trial (kept), warm started from kept or
// else from prev; otherwise it returns kept as it was.
func trainCandidate(ctx context.Context, data Window, params Params, classes []string, labeled int, prev, kept *model.Model, solve bool) (*model.Model, Stats, error) {
	if solve || kept == nil {
		return trainWith(ctx, data, params, classes, labeled, cmp.Or(kept, prev))
	}
	same := *kept
	same.Warm = &warmState{spectral: warmOf(kept).spectral}
	return &same, Stats{Algorithm: params.Algorithm}, nil
}

// keptModels returns the models of prev's trial by algorithm, prev itself
// as the one it served; none when prev holds no trial.
func keptModels(prev *model.Model) map[Algorithm]*model.Model {
	t := warmOf(prev).trial
	if t == nil {
		return nil
	}
	kept := maps.Clone(t.others)
	kept[t.served] = prev
	return kept
}

// revealedRecord adds to prev's record the rows labeled in data that were
// not at prev's trial, as the models kept from it classify them, and
// returns the record of each of candidates: a candidate new to the trial
// starts where the one served then stands.
func revealedRecord(prev *model.Model, kept map[Algorithm]*model.Model, data Window, candidates []Algorithm) trialRecord {
	record := trialRecord{}
	t := warmOf(prev).trial
	if t != nil {
		record = maps.Clone(t.record)
		addRevealed(record, t.labeled, kept, data)
	}
	out := make(trialRecord, len(candidates))
	for _, a := range candidates {
		r, ok := record[a]
		if !ok && t != nil {
			r = record[t.served]
		}
		out[a] = r
	}
	return out
}

// addRevealed adds to record the rows labeled in data but not in labeled,
// as each of the kept models classifies them.
func addRevealed(record trialRecord, labeled map[uint64]bool, kept map[Algorithm]*model.Model, data Window) {
	rows := make(map[Algorithm]*model.Model, len(kept))
	for a, m := range kept {
		rows[a] = m.OverMappedRows() // data's rows are mapped already
	}
	right := make(map[Algorithm]bool, len(rows)) // every key set at each row
	for i, label := range data.Labels {
		if label == "" || labeled[data.Keys[i]] {
			continue
		}
		for a, m := range rows {
			right[a] = m.Classes[m.Predict(data.Rows[i]).Class] == label
		}
		record.add(right)
	}
}

// labeledKeys returns the keys of data's labeled rows.
func labeledKeys(data Window) map[uint64]bool {
	keys := make(map[uint64]bool)
	for i, label := range data.Labels {
		if label != "" {
			keys[data.Keys[i]] = true
		}
	}
	return keys
}
