package train

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/online/newton"
	"streamer/online/spectral"
	"streamer/vector"
)

// Window is a window of rows for a multi-class solve.
type Window struct {
	X linalg.Matrix
	// Labels holds each row's class name, "" for an unlabeled row.
	Labels []string
	// Chosen, when set, marks the labeled rows whose labels were chosen
	// for what they would teach (label requests) rather than drawn as the
	// stream came. TSVM and DA hold a share of the unlabeled rows to each
	// class (Params.R); on two classes with chosen labels Solve estimates
	// it by a supervised fit (unlabeledShares), not from the labels.
	Chosen []bool
	// Keys identify rows across windows for warm starts (see Problem.Keys).
	Keys []uint64
	// Rows, when set, are the vectors X was built from, in order; a warm
	// Spectral Regression solve of a dense window then updates its sums
	// over rows by the rows that changed instead of summing them again.
	// They must not change while a model built from them lives.
	Rows      []vector.Vector
	Laplacian newton.Laplacian
	// Graph is the kNN graph over X's rows; Spectral Regression needs it.
	Graph spectral.WeightedGraph
}

// Stats describes a multi-class solve: the sums over its problems.
type Stats struct {
	model.Stats
	Problems int
	Labeled  int
	// Algorithm is the algorithm that ran: auto's choice.
	Algorithm Algorithm
	// Trial, set when auto weighed candidates against its rule's choice,
	// holds each candidate's record (see trainAuto).
	Trial map[Algorithm]float64
	// Lambda is the λ the solve ran with: Params.Lambda, or the one
	// searchLambda chose; LabelHalfLife the half-life of the labeled
	// rows' weights it chose, 0 for none.
	Lambda, LabelHalfLife float64
}

// ErrNotFinite is returned for a solve whose model holds a value that is
// not a finite number: it is not put in force.
var ErrNotFinite = errors.New("solve gave a model that is not finite")

// ErrOneClass is returned while the labels name fewer than two classes.
var ErrOneClass = spectral.ErrOneClass

// Solve solves every binary problem of the window, warm-started from prev
// when it is non-nil. Classes keep prev's order; new ones are appended in
// order of first appearance, so a class that first appears later is added.
// Problems run in parallel on up to GOMAXPROCS goroutines.
func Solve(ctx context.Context, data Window, params Params, prev *model.Model) (*model.Model, Stats, error) {
	if len(data.Labels) != data.X.Rows() {
		return nil, Stats{}, fmt.Errorf("%d rows but %d labels", data.X.Rows(), len(data.Labels))
	}
	classes, labeled := Classes(prev, data.Labels)
	if len(classes) < 2 {
		return nil, Stats{}, ErrOneClass
	}
	params = params.WithDefaults()
	var record []float64
	if params.Algorithm != SR {
		params.Lambda, params.labelHalfLife, record = searchLambda(ctx, data, params, classes, warmOf(prev).lambdaRecord)
	}
	if len(classes) == 2 && params.R == 0 && usesShares(params.Algorithm) {
		shares, err := unlabeledShares(ctx, data, params, classes, labeled)
		if err != nil {
			return nil, Stats{}, err
		}
		if share, ok := shares[paramsPositive(classes)]; ok {
			params.R = share
		}
	}
	var m *model.Model
	var st Stats
	var err error
	if params.Algorithm == Auto {
		m, st, err = trainAuto(ctx, data, params, classes, labeled, prev)
	} else {
		m, st, err = trainWith(ctx, data, params, classes, labeled, prev)
	}
	if err != nil {
		return nil, Stats{}, err
	}
	if err := m.Finite(); err != nil {
		return nil, Stats{}, fmt.Errorf("%w: %w", ErrNotFinite, err)
	}
	if record != nil {
		w := warmOf(m)
		w.lambdaRecord = record
		m.Warm = &w
	}
	st.Lambda, st.LabelHalfLife = params.Lambda, params.labelHalfLife
	return m, st, nil
}

// trainWith solves params.Algorithm (not auto) for classes, warm-started
// from prev.
func trainWith(ctx context.Context, data Window, params Params, classes []string, labeled int, prev *model.Model) (*model.Model, Stats, error) {
	start := time.Now()
	if params.Algorithm == SR {
		prob := spectral.Problem{X: data.X, Labels: data.Labels, Keys: data.Keys, Rows: data.Rows, Graph: data.Graph}
		m, sp, st, err := spectral.Solve(ctx, prob, params.spectralSettings(), classes, warmOf(prev).spectral)
		if err != nil {
			return nil, Stats{}, err
		}
		m.Warm = &warmState{spectral: sp}
		return m, Stats{Stats: st, Problems: len(m.Problems), Labeled: labeled, Algorithm: SR}, nil
	}
	m := &model.Model{Classes: classes, Dim: linalg.NewColumnSpace(data.X).Features}
	nprob := len(classes)
	if m.Binary() {
		nprob = 1
	}
	m.Problems = make([]model.Solution, nprob)
	errs := make([]error, nprob)
	var graph *newton.GraphGram // X̃ᵀMX̃, formed once for every class
	if params.Algorithm.UsesGraph(params.LambdaI) {
		graph = newton.NewGraphGram(data.X, data.Laplacian)
	}
	forEachProblem(nprob, func(k int) {
		sol, err := solveClass(ctx, data, params, m, k, prev, graph)
		if err != nil {
			errs[k] = fmt.Errorf("class %q: %w", classes[m.ProblemClass(k)], err)
			return
		}
		m.Problems[k] = *sol
	})
	if err := errors.Join(errs...); err != nil {
		return nil, Stats{}, err
	}
	st := Stats{Problems: nprob, Labeled: labeled, Algorithm: params.Algorithm}
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

// Classes returns prev's classes followed by the new ones in labels, and
// the number of labeled rows.
func Classes(prev *model.Model, labels []string) ([]string, int) {
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

func solveClass(ctx context.Context, data Window, params Params, m *model.Model, k int, prev *model.Model, graph *newton.GraphGram) (*model.Solution, error) {
	pos := m.Classes[m.ProblemClass(k)]
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
	binary := params.Binary()
	switch {
	case !m.Binary():
		binary.R = 0 // one versus rest estimates each class's fraction
		binary.Reanneal = true
		if params.Algorithm == TSVM {
			binary.LambdaU = ovrLambdaU(params, len(m.Classes))
		}
	case mirrored(m):
		binary = mirror(binary)
	}
	prob := newton.Problem{X: data.X, Y: y, Keys: data.Keys, Laplacian: data.Laplacian, GraphGram: graph, Weights: recencyWeights(data.Keys, y, params.labelHalfLife)}
	return newton.Solve(ctx, prob, binary, warmFor(prev, m, k))
}

// usesShares reports whether algorithm a may solve TSVM or DA, which
// hold a share of the unlabeled rows to each class. Solve estimates the
// shares (unlabeledShares) for two classes only: one versus rest over
// many classes of short text lost more with them than it gained
// (docs/RESULTS.md, "Label requests").
func usesShares(a Algorithm) bool {
	return a == TSVM || a == DA || a == Auto
}

// unlabeledShares estimates each class's share of data's unlabeled rows
// when some labels were chosen (Window.Chosen): the mean calibrated
// probability of the class over those rows, as a supervised svm fitted on
// every label gives it. Labels drawn as the stream came hold the classes
// in the stream's shares, and TSVM and DA take the share of the labels;
// labels chosen near the boundary hold them nearer even. It returns nil
// when no label was chosen, or without data.Rows to score.
func unlabeledShares(ctx context.Context, data Window, params Params, classes []string, labeled int) (map[string]float64, error) {
	if !slices.Contains(data.Chosen, true) || data.Rows == nil {
		return nil, nil
	}
	params.Algorithm = SVM
	m, _, err := trainWith(ctx, data, params, classes, labeled, nil)
	if err != nil {
		return nil, fmt.Errorf("the supervised fit that estimates the classes' shares: %w", err)
	}
	sum := make([]float64, len(classes))
	var n float64
	for i, l := range data.Labels {
		if l != "" {
			continue
		}
		for k, p := range m.Distribution(m.Scores(data.Rows[i], nil)) {
			sum[k] += p
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	shares := make(map[string]float64, len(classes))
	for k, c := range m.Classes {
		shares[c] = min(0.99, max(0.01, sum[k]/n))
	}
	return shares, nil
}

// ovrLambdaU returns λ_u for each one-versus-rest TSVM problem among c classes:
// λ_u·2/c, which is λ_u itself for two classes. It is measured, not
// derived: hard transductive labels weigh on c problems at once, each with
// a positive fraction r estimated from a few labels, and at the binary
// λ_u tsvm fell below supervised on many-class text
// (TestOneVersusRestLambdaU, TestMultiClassStreamTSVMNotBelowSupervised).
func ovrLambdaU(p Params, c int) float64 {
	return p.WithDefaults().LambdaU * 2 / float64(c)
}

// paramsPositive returns the class of a binary model of classes that
// Params call positive (R, PositiveCost).
func paramsPositive(classes []string) string {
	m := &model.Model{Classes: classes}
	if mirrored(m) {
		return classes[0]
	}
	return classes[m.ProblemClass(0)]
}

// mirrored reports whether the binary problem of m has as its positive
// class the one that Params call negative. The problem's positive class is
// the model's second; Params's positive class is the larger of two numeric
// classes ("1" of 1/-1 or 1/0), and the second class otherwise.
func mirrored(m *model.Model) bool {
	a, errA := strconv.ParseFloat(m.Classes[0], 64)
	b, errB := strconv.ParseFloat(m.Classes[1], 64)
	return errA == nil && errB == nil && b < a
}

// mirror returns p for the binary problem with the classes swapped.
func mirror(p newton.Params) newton.Params {
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
func warmFor(prev *model.Model, m *model.Model, k int) *model.Solution {
	if prev == nil || !prev.Ready() || prev.Dim != m.Dim || prev.Centroids != nil {
		return nil
	}
	class := m.ProblemClass(k)
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
func negated(s *model.Solution) *model.Solution {
	n := &model.Solution{W: make([]float64, len(s.W)), Temperature: s.Temperature}
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

// calibrate fits one Platt sigmoid per problem on the labeled rows, its
// midpoint pinned at the output 0 (FitPlattSlope).
func calibrate(m *model.Model, data Window) []model.Platt {
	var rows []int
	for i, l := range data.Labels {
		if l != "" {
			rows = append(rows, i)
		}
	}
	out := make([]float64, len(rows))
	ys := make([]float64, len(rows))
	cal := make([]model.Platt, len(m.Problems))
	space := linalg.NewColumnSpace(data.X)
	d := data.X.Cols()
	for k := range m.Problems {
		w := space.Compact(m.Problems[k].W)
		data.X.MulVec(out, rows, w[:d])
		pos := m.Classes[m.ProblemClass(k)]
		for j, i := range rows {
			out[j] += w[d]
			ys[j] = -1
			if data.Labels[i] == pos {
				ys[j] = 1
			}
		}
		cal[k] = model.FitPlattSlope(out, ys)
	}
	return cal
}
