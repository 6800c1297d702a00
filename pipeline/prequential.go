package pipeline

import (
	"streamer/internal/ring"
	"streamer/snapshot"
)

// Prequential scores stored predictions against labels as they arrive
// (docs/MATH.md, streaming evaluation): accuracy and macro-F1 over the whole
// stream and over the last Horizon labels, and a curve of both over time.
// Predictions made before any model existed are counted apart, not scored.
type Prequential struct {
	step     int
	total    Score
	recent   ring.Ring[pair] // the last Horizon scored pairs
	unscored int
	curve    []snapshot.CurvePoint
	// examplesBefore is the count of examples seen before a restore, so
	// that the curve continues where the snapshot left it.
	examplesBefore int
}

type pair struct{ pred, truth string }

// Score holds the counts behind accuracy and macro-F1.
type Score struct {
	Correct int
	Total   int
	// per class: true positives, false positives, false negatives
	tp, fp, fn map[string]int
}

// NewPrequential returns an evaluator with a recent horizon of horizon
// labels (0 means 500) that records a curve point every step labels (0
// means 100).
func NewPrequential(horizon, step int) *Prequential {
	if horizon <= 0 {
		horizon = 500
	}
	if step <= 0 {
		step = 100
	}
	return &Prequential{step: step, total: newScore(), recent: ring.New[pair](horizon)}
}

func newScore() Score {
	return Score{tp: map[string]int{}, fp: map[string]int{}, fn: map[string]int{}}
}

// NewScore returns an empty score.
func NewScore() Score { return newScore() }

// Add scores one prediction against its label. A missing prediction (pred
// "", no model yet) counts as wrong: a false negative of truth and a false
// positive of no class.
func (s *Score) Add(pred, truth string) {
	if pred != "" {
		s.add(pred, truth)
		return
	}
	s.Total++
	s.fn[truth]++
}

// Add scores a prediction (pred "" when there was no model) against its
// label; examples is the number of examples seen so far, for the curve.
func (p *Prequential) Add(pred, truth string, examples int) {
	if pred == "" {
		p.unscored++
		return
	}
	p.total.add(pred, truth)
	p.recent.Add(pair{pred, truth})
	if p.total.Total%p.step == 0 {
		p.curve = append(p.curve, snapshot.CurvePoint{
			Labels: p.total.Total, Examples: p.examplesBefore + examples,
			Accuracy: p.total.Accuracy(), RecentAccuracy: p.Recent().Accuracy(),
		})
	}
}

func (s *Score) add(pred, truth string) {
	s.Total++
	if pred == truth {
		s.Correct++
		s.tp[truth]++
		return
	}
	s.fp[pred]++
	s.fn[truth]++
}

// Accuracy returns the fraction of correct predictions (0 with none).
func (s Score) Accuracy() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Correct) / float64(s.Total)
}

// MacroF1 returns the mean over classes of 2TP/(2TP+FP+FN), over the
// classes that occur as a label or a prediction.
func (s Score) MacroF1() float64 {
	classes := map[string]bool{}
	for _, m := range []map[string]int{s.tp, s.fp, s.fn} {
		for c := range m {
			classes[c] = true
		}
	}
	if len(classes) == 0 {
		return 0
	}
	var sum float64
	for c := range classes {
		if d := 2*s.tp[c] + s.fp[c] + s.fn[c]; d > 0 {
			sum += float64(2*s.tp[c]) / float64(d)
		}
	}
	return sum / float64(len(classes))
}

// Total returns the score over the whole stream.
func (p *Prequential) Total() Score { return p.total }

// Recent returns the score over the last Horizon scored labels.
func (p *Prequential) Recent() Score {
	s := newScore()
	for r := range p.recent.All {
		s.add(r.pred, r.truth)
	}
	return s
}

// Unscored returns how many labels found a prediction made without a model.
func (p *Prequential) Unscored() int { return p.unscored }

// Curve returns the recorded curve points.
func (p *Prequential) Curve() []snapshot.CurvePoint { return p.curve }

// State returns what a snapshot keeps of p after examples examples, so
// that a restored service continues its scores and curve instead of
// starting them again.
func (p *Prequential) State(examples int) snapshot.Prequential {
	st := snapshot.Prequential{
		Correct: p.total.Correct, Total: p.total.Total,
		TruePositives: clone(p.total.tp), FalsePositives: clone(p.total.fp), FalseNegatives: clone(p.total.fn),
		Unscored: p.unscored, Curve: append([]snapshot.CurvePoint(nil), p.curve...),
		Examples: p.examplesBefore + examples,
	}
	for _, r := range p.recent.Items() {
		st.Recent = append(st.Recent, [2]string{r.pred, r.truth})
	}
	return st
}

// Resume puts p in state st, keeping p's horizon and step: the oldest
// recent pairs beyond the horizon are dropped.
func (p *Prequential) Resume(st snapshot.Prequential) {
	p.total = Score{Correct: st.Correct, Total: st.Total,
		tp: clone(st.TruePositives), fp: clone(st.FalsePositives), fn: clone(st.FalseNegatives)}
	recent := make([]pair, len(st.Recent))
	for i, r := range st.Recent {
		recent[i] = pair{r[0], r[1]}
	}
	p.recent.Reset(recent)
	p.unscored, p.curve, p.examplesBefore = st.Unscored, append([]snapshot.CurvePoint(nil), st.Curve...), st.Examples
}

func clone(m map[string]int) map[string]int {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
