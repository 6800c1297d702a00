package online

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

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
	// Spectral is an SR model's warm state for the next solve; it is not
	// part of a snapshot.
	Spectral *Spectral
	// Map, when set, maps every input vector before the weights apply
	// (a Nyström kernel map); Dim is then the map's dimension.
	Map *kernel.Map
	// packed, set by Pack, holds the weights feature-major for Scores.
	packed *packedWeights
	// folded, set by Pack when Map is, holds the weights carried over to
	// the landmarks' kernel values (kernel.Map.Fold), which Scores reads
	// instead of mapping its input.
	folded *kernel.Folded
	// trial, set by auto when it weighed sr against svm or lapsvm, holds the
	// candidate not served and their record (not part of a snapshot).
	trial *autoTrial
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
		m.centroidScores(z, dst)
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
		m.centroidScores(z, dst)
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
// Train pins the calibration at the solver's decision point (see
// fitPlattSlope), so for a binary model the class is also the sign of the
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

// calibrations returns the number of Platt sigmoids the model needs: one
// per problem, or one per class for a centroid model.
func (m *Model) calibrations() int {
	if m.Centroids != nil {
		return len(m.Classes)
	}
	return len(m.Problems)
}

// TrainData is a window of rows for a multi-class solve.
type TrainData struct {
	X linalg.Matrix
	// Labels holds each row's class name, "" for an unlabeled row.
	Labels []string
	// Keys identify rows across windows for warm starts (see Problem.Keys).
	Keys []uint64
	// Rows, when set, are the vectors X was built from, in order; a warm
	// Spectral Regression solve of a dense window then updates its sums
	// over rows by the rows that changed instead of summing them again.
	// They must not change while a model built from them lives.
	Rows      []vector.Vector
	Laplacian Laplacian
	// Graph is the kNN graph over X's rows; Spectral Regression needs it.
	Graph WeightedGraph
}

// TrainStats describes a multi-class solve: the sums over its problems.
type TrainStats struct {
	Stats
	Problems int
	Labeled  int
	// Algorithm is the algorithm that ran: auto's choice.
	Algorithm Algorithm
	// Rival, set when auto weighed sr against svm or lapsvm, names that
	// algorithm; TrialSR and TrialRival are their records (see trainAuto).
	Rival               Algorithm
	TrialSR, TrialRival float64
}

// ErrOneClass is returned while the labels name fewer than two classes.
var ErrOneClass = errors.New("labels of at least two classes are needed")

// Train solves every binary problem of the window, warm-started from prev
// when it is non-nil. Classes keep prev's order; new ones are appended in
// order of first appearance, so a class that first appears later is added.
// Problems run in parallel on up to GOMAXPROCS goroutines.
func Train(ctx context.Context, data TrainData, params Params, prev *Model) (*Model, TrainStats, error) {
	if len(data.Labels) != data.X.Rows() {
		return nil, TrainStats{}, fmt.Errorf("%d rows but %d labels", data.X.Rows(), len(data.Labels))
	}
	classes, labeled := modelClasses(prev, data.Labels)
	if len(classes) < 2 {
		return nil, TrainStats{}, ErrOneClass
	}
	params = params.withDefaults()
	if params.Algorithm == Auto {
		return trainAuto(ctx, data, params, classes, labeled, prev)
	}
	return trainWith(ctx, data, params, classes, labeled, prev)
}

// trainWith solves params.Algorithm (not auto) for classes, warm-started
// from prev.
func trainWith(ctx context.Context, data TrainData, params Params, classes []string, labeled int, prev *Model) (*Model, TrainStats, error) {
	start := time.Now()
	if params.Algorithm == SR {
		m, st, err := trainSR(ctx, data, params, classes, labeled, prev)
		st.Algorithm = SR
		return m, st, err
	}
	m := &Model{Classes: classes, Dim: linalg.NewColumnSpace(data.X).Features}
	nprob := len(classes)
	if m.Binary() {
		nprob = 1
	}
	m.Problems = make([]Solution, nprob)
	errs := make([]error, nprob)
	var graph *graphGram // X̃ᵀMX̃, formed once for every class
	if params.Algorithm.UsesGraph(params.LambdaI) {
		graph = newGraphGram(data.X, data.Laplacian)
	}
	forEachProblem(nprob, func(k int) {
		sol, err := solveClass(ctx, data, params, m, k, prev, graph)
		if err != nil {
			errs[k] = fmt.Errorf("class %q: %w", classes[problemClass(m, k)], err)
			return
		}
		m.Problems[k] = *sol
	})
	if err := errors.Join(errs...); err != nil {
		return nil, TrainStats{}, err
	}
	st := TrainStats{Problems: nprob, Labeled: labeled, Algorithm: params.Algorithm}
	for _, p := range m.Problems {
		st.Objective += p.Stats.Objective
		st.NewtonSteps += p.Stats.NewtonSteps
		st.CGLSIters += p.Stats.CGLSIters
		st.Active += p.Stats.Active
		st.Runs += p.Stats.Runs
		st.Switches += p.Stats.Switches
	}
	m.Calibration = calibrate(m, data)
	st.Seconds = time.Since(start).Seconds()
	return m, st, nil
}

// modelClasses returns prev's classes followed by the new ones in data, and
// the number of labeled rows.
func modelClasses(prev *Model, labels []string) ([]string, int) {
	var classes []string
	seen := map[string]bool{}
	if prev != nil {
		for _, c := range prev.Classes {
			classes = append(classes, c)
			seen[c] = true
		}
	}
	labeled := 0
	for _, l := range labels {
		if l == "" {
			continue
		}
		labeled++
		if !seen[l] {
			seen[l] = true
			classes = append(classes, l)
		}
	}
	return classes, labeled
}

// problemClass returns the class that problem k labels +1.
func problemClass(m *Model, k int) int {
	if m.Binary() {
		return 1
	}
	return k
}

func forEachProblem(n int, fn func(k int)) {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for k := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(k)
		}()
	}
	wg.Wait()
}

func solveClass(ctx context.Context, data TrainData, params Params, m *Model, k int, prev *Model, graph *graphGram) (*Solution, error) {
	pos := m.Classes[problemClass(m, k)]
	y := make([]float64, len(data.Labels))
	for i, l := range data.Labels {
		switch {
		case l == "":
		case l == pos:
			y[i] = 1
		default:
			y[i] = -1
		}
	}
	switch {
	case !m.Binary():
		params.R = 0 // one versus rest estimates each class's fraction
		params.reanneal = true
		if params.Algorithm == TSVM {
			params.LambdaU = ovrLambdaU(params, len(m.Classes))
		}
	case mirrored(m):
		params = mirror(params)
	}
	prob := Problem{X: data.X, Y: y, Keys: data.Keys, Laplacian: data.Laplacian, graphGram: graph}
	return Solve(ctx, prob, params, warmFor(prev, m, k))
}

// ovrLambdaU returns λ_u for each one-versus-rest TSVM problem among c classes:
// λ_u·2/c, which is λ_u itself for two classes. It is measured, not
// derived: hard transductive labels weigh on c problems at once, each with
// a positive fraction r estimated from a few labels, and at the binary
// λ_u = 0.1 tsvm fell about a point below supervised on 13-class text.
func ovrLambdaU(p Params, c int) float64 {
	return p.withDefaults().LambdaU * 2 / float64(c)
}

// mirrored reports whether the binary problem of m has as its positive
// class the one that Params call negative. The problem's positive class is
// the model's second; Params's positive class is the larger of two numeric
// classes ("1" of 1/-1 or 1/0), and the second class otherwise.
func mirrored(m *Model) bool {
	a, errA := strconv.ParseFloat(m.Classes[0], 64)
	b, errB := strconv.ParseFloat(m.Classes[1], 64)
	return errA == nil && errB == nil && b < a
}

// mirror returns p for the binary problem with the classes swapped.
func mirror(p Params) Params {
	if p.R > 0 {
		p.R = 1 - p.R
	}
	p.PositiveCost, p.NegativeCost = p.NegativeCost, p.PositiveCost
	return p
}

// warmFor returns the warm start of problem k of m from the previous model:
// the same problem when the class layout is unchanged, or, when a binary
// model grows a third class, the binary solution (negated for the first
// class). A class new to the model starts cold.
func warmFor(prev *Model, m *Model, k int) *Solution {
	if prev == nil || !prev.Ready() || prev.Dim != m.Dim || prev.Centroids != nil {
		return nil
	}
	class := problemClass(m, k)
	switch {
	case prev.Binary() == m.Binary():
		if k < len(prev.Problems) {
			return &prev.Problems[k]
		}
	case prev.Binary() && class == 1:
		return &prev.Problems[0]
	case prev.Binary() && class == 0:
		return negated(&prev.Problems[0])
	}
	return nil
}

// negated returns the solution of the mirrored binary problem.
func negated(s *Solution) *Solution {
	n := &Solution{W: make([]float64, len(s.W)), Temperature: s.Temperature}
	for j, w := range s.W {
		n.W[j] = -w
	}
	if s.Unlabeled != nil {
		n.Unlabeled = make(map[uint64]float64, len(s.Unlabeled))
		for key, v := range s.Unlabeled {
			if v == 1 || v == -1 {
				n.Unlabeled[key] = -v
			} else {
				n.Unlabeled[key] = 1 - v
			}
		}
	}
	return n
}
