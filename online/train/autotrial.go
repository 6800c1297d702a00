package train

import (
	"context"
	"time"

	"streamer/online/model"
)

// autoMemory is the number of disagreements over which auto's trial
// remembers which candidate was right: each new one weighs the older ones
// down by 1 − 1/autoMemory.
const autoMemory = 8

// autoMaxEvery bounds the interval, in solves, at which auto's trial solves
// the candidate it does not serve (see trainAuto).
const autoMaxEvery = 16

// autoTrial is what auto remembers of a solve at which sr was a candidate
// against its choice (the rival: svm or lapsvm): the candidate it did not
// serve, the rows labeled then, and the record of both candidates on the
// labels revealed since earlier trials. It lives in the served model and
// is not part of a snapshot: a restored model starts a new record.
type autoTrial struct {
	other   *model.Model
	labeled map[uint64]bool
	record  trialRecord
	// age is the number of solves since other was solved; every is the
	// interval at which it is.
	age, every int
}

// trialRecord counts, decayed, the revealed labels on which exactly one
// candidate was right.
type trialRecord struct {
	SR, Rival float64
}

// add records a revealed label that sr got right (srRight) or not, and
// the rival got right or not; a label both got right or wrong tells
// nothing.
func (r *trialRecord) add(srRight, rivalRight bool) {
	if srRight == rivalRight {
		return
	}
	r.SR *= 1 - 1.0/autoMemory
	r.Rival *= 1 - 1.0/autoMemory
	if srRight {
		r.SR++
	} else {
		r.Rival++
	}
}

// trainAuto solves what auto stands for (chooseAuto). Where sr is a
// candidate against that choice (the rival), it serves sr once sr was
// right more often than the rival where the two disagreed on the labels
// revealed since, as the models of the earlier solves predicted them, or
// while the record is tied (at a trial's first solve) when the last model
// served sr or the few labeled kNN edges lean to sr (leansSR): without a
// label to go by, a model that served sr is not switched to its rival
// because the rule's homophily dipped. It keeps the candidate not served
// for the next comparison. The served candidate is solved afresh, the
// other at the 1st, 2nd, 4th, 8th … solve after a switch (at most every
// autoMaxEvery-th) and otherwise kept as it was: where one candidate
// keeps winning, or the two agree, the trial costs a few solves of the
// other.
func trainAuto(ctx context.Context, data Window, params Params, classes []string, labeled int, prev *model.Model) (*model.Model, Stats, error) {
	start := time.Now()
	rival, trial := chooseAuto(data, params)
	if !trial || data.Rows == nil || data.Keys == nil {
		return trainWith(ctx, data, rival, classes, labeled, prev)
	}
	prevSR, prevRival := trialPair(prev)
	record := revealedRecord(prev, prevSR, prevRival, data)
	serveSR := record.SR > record.Rival || record.SR == record.Rival && (leansSR(data) || servedSR(prev))
	next := nextTrial(prev, serveSR)
	sr := params
	sr.Algorithm = SR
	srModel, srStats, err := trainCandidate(ctx, data, sr, classes, labeled, prevSR, serveSR || next.age == 0)
	if err != nil {
		return nil, Stats{}, err
	}
	rivalModel, rivalStats, err := trainCandidate(ctx, data, rival, classes, labeled, prevRival, !serveSR || next.age == 0)
	if err != nil {
		return nil, Stats{}, err
	}
	served, st := rivalModel, rivalStats
	next.other = srModel
	if serveSR {
		served, st = srModel, srStats
		next.other = rivalModel
	}
	next.labeled, next.record = labeledKeys(data), record
	served.Warm = &warmState{spectral: warmOf(served).spectral, trial: next}
	st.Rival, st.TrialSR, st.TrialRival = rival.Algorithm, record.SR, record.Rival
	st.Seconds = time.Since(start).Seconds()
	return served, st, nil
}

// servedSR reports whether the last model, prev, was sr's.
func servedSR(prev *model.Model) bool {
	return prev != nil && prev.Centroids != nil
}

// nextTrial returns the trial that a solve serving sr (serveSR) or its
// rival leaves, but for its models, labels and record: the solves since
// the candidate not served was solved (0: at this solve) and the interval
// between its solves.
func nextTrial(prev *model.Model, serveSR bool) *autoTrial {
	t := warmOf(prev).trial
	if t == nil || (prev.Centroids != nil) != serveSR {
		return &autoTrial{every: 1} // a first trial or a switch: solve both
	}
	if t.age+1 < t.every {
		return &autoTrial{age: t.age + 1, every: t.every}
	}
	return &autoTrial{every: min(2*t.every, autoMaxEvery)}
}

// trainCandidate solves a candidate of the trial when solve is set, else
// returns its last model (prev, when of the same kind) as it was.
func trainCandidate(ctx context.Context, data Window, params Params, classes []string, labeled int, prev *model.Model, solve bool) (*model.Model, Stats, error) {
	if solve || prev == nil || (prev.Centroids != nil) != (params.Algorithm == SR) {
		return trainWith(ctx, data, params, classes, labeled, prev)
	}
	kept := *prev
	kept.Warm = &warmState{spectral: warmOf(prev).spectral}
	return &kept, Stats{Algorithm: params.Algorithm}, nil
}

// trialPair returns prev's sr and rival candidates when prev served one
// of them after a trial, else prev as the warm start of both.
func trialPair(prev *model.Model) (sr, rival *model.Model) {
	t := warmOf(prev).trial
	if t == nil {
		return prev, prev
	}
	if prev.Centroids != nil {
		return prev, t.other
	}
	return t.other, prev
}

// revealedRecord adds to prev's record the rows labeled in data that were
// not at prev's trial, as its sr and rival candidates classify them.
func revealedRecord(prev, sr, rival *model.Model, data Window) trialRecord {
	t := warmOf(prev).trial
	if t == nil {
		return trialRecord{}
	}
	record := t.record
	srRows, rivalRows := sr.OverMappedRows(), rival.OverMappedRows() // data's rows are mapped already
	for i, label := range data.Labels {
		if label == "" || t.labeled[data.Keys[i]] {
			continue
		}
		x := data.Rows[i]
		record.add(srRows.Classes[srRows.Predict(x).Class] == label, rivalRows.Classes[rivalRows.Predict(x).Class] == label)
	}
	return record
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
