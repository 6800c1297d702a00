package online

import (
	"fmt"

	"streamer/anngraph"
	"streamer/online/model"
	"streamer/online/propagate"
	"streamer/online/train"
	"streamer/vector"
)

// VoteConfig says whether and how the learner blends its model with the
// vote of an arrival's nearest window rows (package propagate).
type VoteConfig struct {
	// Off scores with the model alone. Otherwise, after each solve over
	// a kNN graph of dense rows whose labeled edges do not show that it
	// ignores the labels (train.DeniesLabels), the learner spreads the
	// window's labels over the graph and scores an example by
	// (1-Weight)·the model's calibrated probabilities plus Weight·the
	// vote of its nearest window rows.
	// Sparse rows (text) never vote: a bag of words' nearest rows carry
	// its label less often than a linear model does, and finding them
	// costs many times the model's scoring (BenchmarkVoteText).
	Off bool
	// Weight is the vote's share; 0 means 0.5.
	Weight float64
	// Spread sets the spreading and the number of neighbours that vote.
	Spread propagate.Settings
}

func (c VoteConfig) withDefaults() VoteConfig {
	if c.Weight == 0 {
		c.Weight = 0.5
	}
	return c
}

// Validate names the first bad field.
func (c VoteConfig) Validate() error {
	switch {
	case c.Weight < 0 || c.Weight > 1:
		return fmt.Errorf("vote_weight must be in [0, 1], got %v", c.Weight)
	case c.Spread.Alpha < 0 || c.Spread.Alpha >= 1:
		return fmt.Errorf("vote alpha must be in [0, 1), got %v", c.Spread.Alpha)
	case c.Spread.Neighbours < 0:
		return fmt.Errorf("vote neighbours must be >= 0, got %d", c.Spread.Neighbours)
	}
	return nil
}

// vote returns the vote of the view's spread labels that a model solved
// on it scores with, and its weight, or nil and 0: without a graph, with
// the vote off, or where the graph's labeled edges show that it does not
// follow the labels. Labeled edges are few (a row's k neighbours hold
// some k·p labeled ones at a label rate p, fewer where label requests
// spread the labels apart), so the vote blends until they show
// otherwise. It reports the graph's labeled edges in rep.
func (l *Learner) vote(view *anngraph.View, lap *anngraph.Laplacian, labels []string, m *model.Model, rep *SolveReport) (*propagate.Vote, float64) {
	if view == nil || lap == nil || l.cfg.Vote.Off {
		return nil, 0
	}
	same, edges, denies := train.DeniesLabels(lap, labels)
	rep.LabeledEdges, rep.AgreeingEdges = edges, same
	if denies || !view.Vector(0).IsDense() {
		return nil, 0
	}
	index := make(map[string]int, len(m.Classes))
	for k, c := range m.Classes {
		index[c] = k
	}
	class := make([]int, len(labels))
	for i, lab := range labels {
		class[i] = -1
		if k, ok := index[lab]; ok && lab != "" {
			class[i] = k
		}
	}
	return propagate.Spread(view, class, len(m.Classes), l.cfg.Vote.Spread), l.cfg.Vote.Weight
}

// Predict scores x with the model, blended with the vote of x's nearest
// window rows when the solve left one. The scores stay the model's; the
// class is the one of highest blended probability, and Prob that
// probability.
func (s Solved) Predict(x vector.Vector) model.Prediction {
	return s.Score(x, false).Prediction
}

// Scored is a prediction with the rows of the window solved on nearest
// the example, when they were searched.
type Scored struct {
	model.Prediction
	// Near holds the nearest rows, nearest first, and Rows the length of
	// their window (anngraph.View rows: 0 the oldest); nil and 0 when
	// they were not searched.
	Near []anngraph.Neighbor
	Rows int
}

// Score is Predict, and also returns the rows of the window solved on
// nearest x: those the vote searched, or, when it did not vote and
// search is set, as many found by a search of the view
// (LearnerConfig.KeepView) with as few candidates.
func (s Solved) Score(x vector.Vector, search bool) Scored {
	p := s.Model.Predict(x)
	var near []anngraph.Neighbor
	switch {
	case s.Vote != nil && s.VoteWeight > 0:
		near = s.Vote.Search(x)
	case search && s.View != nil:
		near = s.View.Search(x, nearRows, nearRows)
	}
	out := Scored{Prediction: p, Near: near}
	if near != nil {
		out.Rows = s.viewLen()
	}
	if s.Vote == nil || s.VoteWeight == 0 {
		return out
	}
	votes, ok := s.Vote.DistributionOf(near, nil)
	if !ok {
		return out
	}
	blend := s.Model.Distribution(p.Scores)
	best := 0
	for k := range blend {
		blend[k] = (1-s.VoteWeight)*blend[k] + s.VoteWeight*votes[k]
		if blend[k] > blend[best] {
			best = k
		}
	}
	out.Class, out.Prob = best, blend[best]
	return out
}

// nearRows is the number of window rows Score searches for when the vote
// does not, and its candidates: the vote's default neighbours, and a
// search as cheap as one can be.
const nearRows = 10

func (s Solved) viewLen() int {
	if s.View != nil {
		return s.View.Len()
	}
	return s.Vote.View().Len()
}
