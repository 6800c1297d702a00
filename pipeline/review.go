package pipeline

import (
	"fmt"
	"math"

	"streamer/ingest"
	"streamer/online"
	"streamer/online/model"
)

// ReviewConfig says which predictions go to review: those whose
// probability is below their class's threshold. A class's threshold is
// Thresholds[class] when given, else the one the learner chose with its
// model for online.ReviewConfig.TargetPrecision; without either, the
// class's predictions are not reviewed.
type ReviewConfig struct {
	Thresholds map[string]float64
}

// Validate names the first bad threshold.
func (c ReviewConfig) Validate() error {
	for class, t := range c.Thresholds {
		if t < 0 || t > 1 {
			return fmt.Errorf("threshold of class %q must be in [0, 1], got %v", class, t)
		}
	}
	return nil
}

// forReview reports whether a prediction of class with probability prob,
// made by s, goes to review.
func (p *Pipeline) forReview(s online.Solved, class int, prob float64) bool {
	t, routed := p.reviewThreshold(s, class)
	return routed && prob < t
}

// reviewThreshold returns the probability from which s's predictions of
// class are decided without review, and whether they are routed at all: a
// fixed threshold for the class, else the one the learner chose with s
// for the target precision. A model without thresholds chosen for this
// target (one published before it, or for another target, or solved
// before any prediction was graded) routes every prediction of such a
// class to review (+Inf): nothing says they reach the target.
func (p *Pipeline) reviewThreshold(s online.Solved, class int) (float64, bool) {
	fixed, target := p.cfg.Review.Thresholds, p.cfg.Learner.Review.TargetPrecision
	if t, ok := fixed[s.Model.Classes[class]]; ok {
		return t, true
	}
	switch {
	case target <= 0:
		return 0, false
	case class >= len(s.Thresholds) || s.ThresholdsTarget != target:
		return math.Inf(1), true
	}
	return s.Thresholds[class], true
}

// ReviewThresholds returns, for each class of the model that scores now,
// the probability from which its predictions are decided without review
// (+Inf: every one goes to review); a class not routed has none. It
// returns nil while no model scores or without review routing.
func (p *Pipeline) ReviewThresholds() map[string]float64 {
	s := p.learner.Scoring()
	if len(p.cfg.Review.Thresholds) == 0 && p.cfg.Learner.Review.TargetPrecision <= 0 || !s.Model.Ready() {
		return nil
	}
	out := make(map[string]float64, len(s.Model.Classes))
	for class, name := range s.Model.Classes {
		if t, routed := p.reviewThreshold(s, class); routed {
			out[name] = t
		}
	}
	return out
}

// newPrediction is NewPrediction for a model the learner holds, with
// review routing and, for k > 0, an explanation of k terms and
// neighbours.
func (p *Pipeline) newPrediction(ex ingest.Example, src Source, s online.Solved, pred model.Prediction, k int) Prediction {
	out := NewPrediction(ex, src, s.Model, s.Stamp, pred)
	out.Review = p.forReview(s, pred.Class, pred.Prob)
	if k > 0 {
		out.Explanation = explain(s, ex, pred.Class, k, p.cfg.Decoder.Featurizer)
	}
	return out
}

// explain explains s's score of class for ex: the k terms of largest
// contribution (named by what the decoder kept of ex: Names and Text), the
// bias, the rest, and the k labeled window rows nearest to ex when s was
// solved over a kNN graph.
func explain(s online.Solved, ex ingest.Example, class, k int, f ingest.Featurizer) *Explanation {
	a := s.Model.Attribute(ex.Vector, class)
	top, rest := a.Top(k)
	var names ingest.Names
	if a.Space == model.Features {
		indices := make([]int32, len(top))
		for n, i := range top {
			indices[n] = a.Index[i]
		}
		names = f.ExampleNames(ex, indices...)
	}
	e := &Explanation{
		Class: s.Model.Classes[class], Score: a.Score, Bias: a.Bias, Space: a.Space.String(), Rest: rest,
		Terms: make([]Term, 0, len(top)),
	}
	for _, i := range top {
		t := Term{Index: a.Index[i], Value: a.Value[i], Contribution: a.Contribution[i]}
		if a.Space == model.Features {
			t.Names = names[a.Index[i]]
		}
		e.Terms = append(e.Terms, t)
	}
	for _, nb := range s.Neighbours.Nearest(ex.Vector, k) {
		e.Neighbours = append(e.Neighbours, Neighbour{ID: nb.ID, Label: nb.Label, Similarity: nb.Similarity})
	}
	return e
}
