package online

import (
	"context"
	"time"
)

// autoMemory is the number of disagreements over which auto's trial
// remembers which candidate was right: each new one weighs the older ones
// down by 1 − 1/autoMemory.
const autoMemory = 8

// autoTrailing is the lead, in the record, beyond which the rival keeps sr
// from being solved again (see trainTrialSR).
const autoTrailing = 2

// autoTrial is what auto remembers of a solve at which both sr and its
// rival (lapsvm or svm) were candidates: the candidate it did not serve, the rows
// labeled then, and the record of both candidates on the labels revealed
// since earlier trials. It lives in the served model and is not part of a
// snapshot: a restored model starts a new record.
type autoTrial struct {
	other   *Model
	labeled map[uint64]bool
	record  trialRecord
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

// trainAuto solves what auto stands for (chooseAuto). When the graph
// follows the labels well enough for sr to be a candidate, it solves both
// sr and its rival (chooseAuto's), and serves the one that was right more often
// where the two disagreed on the labels revealed since, as the models of
// the earlier solves predicted them; without such a record it keeps
// chooseAuto's choice.
func trainAuto(ctx context.Context, data TrainData, params Params, classes []string, labeled int, prev *Model) (*Model, TrainStats, error) {
	start := time.Now()
	choice, rival, trial := chooseAuto(data, params)
	if !trial || data.Rows == nil || data.Keys == nil {
		return trainWith(ctx, data, choice, classes, labeled, prev)
	}
	prevSR, prevRival := trialPair(prev)
	record := revealedRecord(prev, prevSR, prevRival, data)
	srModel, srStats, err := trainTrialSR(ctx, data, params, classes, labeled, prevSR, record)
	if err != nil {
		return nil, TrainStats{}, err
	}
	rivalModel, rivalStats, err := trainWith(ctx, data, rival, classes, labeled, prevRival)
	if err != nil {
		return nil, TrainStats{}, err
	}
	served, other, st := rivalModel, srModel, rivalStats
	if record.SR > record.Rival || record.SR == record.Rival && choice.Algorithm == SR {
		served, other, st = srModel, rivalModel, srStats
	}
	served.trial = &autoTrial{other: other, labeled: labeledKeys(data), record: record}
	st.Seconds = time.Since(start).Seconds()
	return served, st, nil
}

// trainTrialSR solves sr for the trial, or, while sr trails its rival in
// the record by more than autoTrailing, returns its last model unsolved: a
// window on which the graph does not carry the labels (short text) then
// costs a solve of the rival and a scoring of the new labels, and a
// stale sr model that becomes right more often is solved again.
func trainTrialSR(ctx context.Context, data TrainData, params Params, classes []string, labeled int, prev *Model, record trialRecord) (*Model, TrainStats, error) {
	if prev != nil && prev.Centroids != nil && record.Rival-record.SR > autoTrailing {
		stale := *prev
		stale.trial = nil
		return &stale, TrainStats{Algorithm: SR}, nil
	}
	params.Algorithm = SR
	return trainWith(ctx, data, params, classes, labeled, prev)
}

// trialPair returns prev's sr and rival candidates when prev served one
// of them after a trial, else prev as the warm start of both.
func trialPair(prev *Model) (sr, rival *Model) {
	if prev == nil || prev.trial == nil {
		return prev, prev
	}
	if prev.Centroids != nil {
		return prev, prev.trial.other
	}
	return prev.trial.other, prev
}

// revealedRecord adds to prev's record the rows labeled in data that were
// not at prev's trial, as its sr and rival candidates classify them.
func revealedRecord(prev, sr, rival *Model, data TrainData) trialRecord {
	if prev == nil || prev.trial == nil {
		return trialRecord{}
	}
	record := prev.trial.record
	srRows, rivalRows := *sr, *rival
	srRows.Map, rivalRows.Map = nil, nil // data's rows are mapped already
	for i, label := range data.Labels {
		if label == "" || prev.trial.labeled[data.Keys[i]] {
			continue
		}
		x := data.Rows[i]
		record.add(srRows.Classes[srRows.Predict(x).Class] == label, rivalRows.Classes[rivalRows.Predict(x).Class] == label)
	}
	return record
}

// labeledKeys returns the keys of data's labeled rows.
func labeledKeys(data TrainData) map[uint64]bool {
	keys := make(map[uint64]bool)
	for i, label := range data.Labels {
		if label != "" {
			keys[data.Keys[i]] = true
		}
	}
	return keys
}
