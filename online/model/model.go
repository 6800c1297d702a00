package model

import (
	"fmt"
	"math"

	"streamer/online/kernel"
	"streamer/online/linalg"
	"streamer/vector"
)

// Model is a linear classifier over named classes. With two classes it is
// one binary problem, Classes[1] against Classes[0]; with more it is one
// versus rest, one problem per class. Its fields are plain data so that
// snapshots can carry it.
type Model struct {
	Classes []string
	// Dim is the feature space; every weight vector has Dim+1 entries, the
	// last one the bias.
	Dim int
	// Problems holds one solution per binary problem: one for two classes,
	// one per class otherwise. The weights are Problems[k].W.
	Problems []Solution
	// Calibration maps each problem's output to a probability (Platt);
	// for a centroid model, each class's score.
	Calibration []Platt
	// Centroids, set for a Spectral Regression model, holds each class's
	// centroid in the embedding z = Aᵀx whose axes are the Problems'
	// weights (nil for a class without labeled rows at the solve); rows
	// are classified by the nearest centroid.
	Centroids [][]float64
	// Warm is what training keeps in the model for the next solve's warm
	// start (Spectral Regression's eigenvectors, auto's trial). The model
	// neither reads nor writes it, and it is not part of a snapshot.
	Warm any
	// Map, when set, maps every input vector before the weights apply
	// (a Nyström kernel map); Dim is then the map's dimension.
	Map *kernel.Map
	// packed, set by Pack, holds the weights feature-major for Scores.
	packed *packedWeights
	// folded, set by Pack when Map is, holds the weights carried over to
	// the landmarks' kernel values (kernel.Map.Fold), which Scores reads
	// instead of mapping its input.
	folded *kernel.Folded
}

// Binary reports whether the model is a single two-class problem.
func (m *Model) Binary() bool { return len(m.Classes) == 2 && m.Centroids == nil }

// Ready reports whether the model can classify: it needs two classes.
func (m *Model) Ready() bool { return m != nil && len(m.Classes) >= 2 && len(m.Problems) > 0 }

// Scores sets dst[c] to the output of class c for x and returns dst (grown
// when too short). For a binary model the scores are -o and o.
func (m *Model) Scores(x vector.Vector, dst []float64) []float64 {
	dst = linalg.Grow(&dst, len(m.Classes))
	if m.folded != nil {
		m.foldedScores(x, dst)
		return dst
	}
	if m.Map != nil {
		x = m.Map.Apply(x)
	}
	if m.Centroids != nil {
		z := make([]float64, len(m.Problems))
		m.embed(x, z)
		m.CentroidScores(z, dst)
		return dst
	}
	if m.Binary() {
		o := output(m.Problems[0].W, x, m.Dim)
		dst[0], dst[1] = -o, o
		return dst
	}
	if m.packed != nil && m.packed.p == len(m.Classes) {
		m.packed.outputs(x, m.Dim, dst)
		return dst
	}
	for c := range m.Classes {
		dst[c] = output(m.Problems[c].W, x, m.Dim)
	}
	return dst
}

// foldedScores sets dst as Scores does, from the problems' outputs over
// the kernel values of x (m.folded) rather than over φ(x).
func (m *Model) foldedScores(x vector.Vector, dst []float64) {
	z := make([]float64, m.folded.P)
	m.Map.FoldedOutputs(m.folded, x, z)
	switch {
	case m.Centroids != nil:
		m.CentroidScores(z, dst)
	case m.Binary():
		dst[0], dst[1] = -z[0], z[0]
	default:
		copy(dst, z)
	}
}

func output(w []float64, x vector.Vector, dim int) float64 {
	if x.IsDense() && len(x.Values) > dim {
		x = vector.Dense(x.Values[:dim])
	}
	if !x.IsDense() && len(x.Indices) > 0 && int(x.Indices[len(x.Indices)-1]) >= dim {
		x = clipSparse(x, dim)
	}
	return x.DotDense(w) + w[dim]
}

// clipSparse drops the indices of x that lie outside a dim-sized space.
func clipSparse(x vector.Vector, dim int) vector.Vector {
	n := len(x.Indices)
	for n > 0 && int(x.Indices[n-1]) >= dim {
		n--
	}
	return vector.Sparse(x.Indices[:n], x.Values[:n])
}

// OverMappedRows returns a copy of m that scores rows already mapped by
// m's kernel map: without the map, and so without the weights folded
// onto its landmarks.
func (m *Model) OverMappedRows() *Model {
	c := *m
	c.Map, c.folded = nil, nil
	return &c
}

// Prediction is the model's answer for one example.
type Prediction struct {
	// Class indexes Classes: the class of largest calibrated probability,
	// or of largest score when the model has no calibration.
	Class  int
	Scores []float64 // one per class
	Prob   float64   // calibrated probability of Class
}

// Predict classifies x: the class of largest calibrated probability, so
// that Prob is never the probability of a class less likely than another.
// Training pins the calibration at the solver's decision point (see
// FitPlattSlope), so for a binary model the class is also the sign of the
// output.
func (m *Model) Predict(x vector.Vector) Prediction {
	scores := m.Scores(x, nil)
	best, prob := m.probability(scores)
	return Prediction{Class: best, Scores: scores, Prob: prob}
}

// probability returns the class of largest calibrated probability and its
// probability: Platt's sigmoid of the binary output, or for one versus rest
// each class's sigmoid normalized over the classes. Ties, and a model
// without calibration (probability 0), go to the largest score.
func (m *Model) probability(scores []float64) (int, float64) {
	best := 0
	for c, s := range scores {
		if s > scores[best] {
			best = c
		}
	}
	if len(m.Calibration) != m.calibrations() {
		return best, 0
	}
	if m.Binary() {
		p := m.Calibration[0].Prob(scores[1])
		switch {
		case p > 0.5:
			return 1, p
		case p < 0.5:
			return 0, 1 - p
		}
		return best, 0.5
	}
	var sum, pbest float64
	for k, s := range scores {
		p := m.Calibration[k].Prob(s)
		sum += p
		if p > pbest || p == pbest && s > scores[best] {
			best, pbest = k, p
		}
	}
	if sum == 0 {
		return best, 0
	}
	return best, pbest / sum
}

// Distribution returns the calibrated probability of each class for the
// model's scores, normalized to sum to 1 (for one versus rest and
// centroids, each class's sigmoid over their sum); a model without
// calibration puts all of it on the class Predict names.
func (m *Model) Distribution(scores []float64) []float64 {
	p := make([]float64, len(scores))
	if len(m.Calibration) != m.calibrations() {
		best, _ := m.probability(scores)
		p[best] = 1
		return p
	}
	if m.Binary() {
		p[1] = m.Calibration[0].Prob(scores[1])
		p[0] = 1 - p[1]
		return p
	}
	var sum float64
	for k, s := range scores {
		p[k] = m.Calibration[k].Prob(s)
		sum += p[k]
	}
	if sum == 0 {
		best, _ := m.probability(scores)
		p[best] = 1
		return p
	}
	for k := range p {
		p[k] /= sum
	}
	return p
}

// calibrations returns the number of Platt sigmoids the model needs: one
// per problem, or one per class for a centroid model.
func (m *Model) calibrations() int {
	if m.Centroids != nil {
		return len(m.Classes)
	}
	return len(m.Problems)
}

// ProblemClass returns the class that problem k labels +1: the second
// class of a binary model, class k of one versus rest.
func (m *Model) ProblemClass(k int) int {
	if m.Binary() {
		return 1
	}
	return k
}

// embed sets z to the embedding Aᵀx of an SR model.
func (m *Model) embed(x vector.Vector, z []float64) {
	if m.packed != nil {
		m.packed.outputs(x, m.Dim, z)
		return
	}
	for k := range m.Problems {
		z[k] = output(m.Problems[k].W, x, m.Dim)
	}
}

// CentroidScores sets dst[c] to minus the distance of the embedding z to
// class c's centroid; a class without a centroid scores below every other.
func (m *Model) CentroidScores(z, dst []float64) {
	worst := 0.0
	for c, mu := range m.Centroids {
		if mu == nil {
			continue
		}
		var d2 float64
		for k, v := range z {
			e := v - mu[k]
			d2 += e * e
		}
		dst[c] = -math.Sqrt(d2)
		worst = min(worst, dst[c])
	}
	for c, mu := range m.Centroids {
		if mu == nil {
			dst[c] = worst - 1
		}
	}
}

// Finite returns an error naming the first problem whose weights, or the
// first class whose calibration or centroid, holds a value that is not a
// finite number: such a model must not score.
func (m *Model) Finite() error {
	for k, p := range m.Problems {
		if !allFinite(p.W) {
			return fmt.Errorf("problem %d: weights not finite", k)
		}
	}
	for k, c := range m.Calibration {
		if !allFinite([]float64{c.A, c.B}) {
			return fmt.Errorf("problem %d: calibration not finite", k)
		}
	}
	for c, z := range m.Centroids {
		if !allFinite(z) {
			return fmt.Errorf("class %d: centroid not finite", c)
		}
	}
	return nil
}

func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
