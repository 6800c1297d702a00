package online

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"streamer/online/linalg"
	"streamer/online/model"
	"strings"
	"time"
)

// Algorithm names one of the objectives of docs/MATH.md.
type Algorithm string

// The algorithms. Their objectives follow docs/MATH.md's normalization exactly.
const (
	RLS    Algorithm = "rls"    // regularized least squares on the labeled rows
	SVM    Algorithm = "svm"    // L2-SVM-MFN on the labeled rows
	LapRLS Algorithm = "laprls" // RLS plus the graph term
	LapSVM Algorithm = "lapsvm" // L2-SVM plus the graph term
	TSVM   Algorithm = "tsvm"   // multi-switch transductive L2-SVM (thesis §6.3)
	DA     Algorithm = "da"     // deterministic annealing S3VM (thesis §6.4)
	SR     Algorithm = "sr"     // Spectral Regression (Cai, He and Han), multi-class by nature
	// Auto is tsvm for two classes; for three or more, sr when the
	// window's kNN graph follows the labels, lapsvm when it follows them
	// better than chance, and tsvm otherwise (see chooseAuto); where sr is
	// a candidate against svm or lapsvm, the labels that arrive may
	// promote it (see trainAuto).
	Auto Algorithm = "auto"
)

// DefaultAlgorithm is the algorithm of Params whose Algorithm is empty.
const DefaultAlgorithm = SVM

// objectives returns the binary objectives that Solve minimizes, in the
// order of docs/MATH.md; multi-class models are one versus rest over them.
func objectives() []Algorithm { return []Algorithm{RLS, SVM, LapRLS, LapSVM, TSVM, DA} }

// algorithms returns every algorithm a model can be trained with: the
// objectives, then Spectral Regression and the automatic choice.
func algorithms() []Algorithm { return append(objectives(), SR, Auto) }

// ParseAlgorithm returns the algorithm named s.
func ParseAlgorithm(s string) (Algorithm, error) {
	all := algorithms()
	if slices.Contains(all, Algorithm(s)) {
		return Algorithm(s), nil
	}
	names := make([]string, len(all))
	for i, a := range all {
		names[i] = string(a)
	}
	return "", fmt.Errorf("unknown algorithm %q (want one of %s)", s, strings.Join(names, ", "))
}

func (a Algorithm) transductive() bool { return a == TSVM || a == DA }

// GrowsGraph reports whether the algorithm needs the kNN graph only once
// labels name three classes (auto): a window starts without one.
func (a Algorithm) GrowsGraph() bool { return a == Auto }

// UsesGraph reports whether the algorithm's objective has the graph term.
func (a Algorithm) UsesGraph(lambdaI float64) bool {
	switch a {
	case LapRLS, LapSVM, SR:
		return true
	case TSVM, DA:
		return lambdaI > 0
	}
	return false
}

// Params are the hyper-parameters of one binary solve. The zero value of a
// field means the default written beside it.
type Params struct {
	Algorithm Algorithm // default DefaultAlgorithm (SVM)
	Lambda    float64   // λ, weight of ‖w‖²/2; default 1e-3
	LambdaU   float64   // λ_u, weight of the unlabeled loss (tsvm, da); default 1; Train scales it by 2/c for the one-versus-rest tsvm problems of c classes
	LambdaI   float64   // λ_I, weight of the graph term; laprls and lapsvm need it > 0, tsvm and da use the graph when it is > 0
	// R is the fraction of unlabeled rows that are positive (tsvm, da);
	// 0 means the fraction of positives among the labeled rows. In a
	// binary Model the positive class is the larger of two numeric
	// classes ("1" of 1/-1), and otherwise the class seen second.
	R float64
	// MaxSwitch is S, the most label pairs TSVM switches per round; 0 means u/2.
	MaxSwitch int
	// PositiveCost and NegativeCost are the costs c_i of labeled rows of
	// each class, for imbalanced data; 0 means 1.
	PositiveCost, NegativeCost float64
	// SRDelta is δ of Spectral Regression, the weight of the kNN edges
	// against the label block; 0 means 0.05.
	SRDelta float64
	// SRNeighbours is p of Spectral Regression: its graph joins two rows
	// when either is among the other's p nearest neighbours in the
	// window's kNN graph (all of them when p is at least its k); 0 means 5.
	SRNeighbours int
	// SRGamma is γ of Spectral Regression, the weight of unlabeled rows
	// in its ridge regressions (0 < γ ≤ 1); 0 means 1. SR's ridge α is
	// Lambda.
	SRGamma float64
	Tolerances

	// reanneal makes a warm TSVM solve anneal λ_u again instead of running
	// at its final value at once, and a warm DA solve walk its temperatures
	// again. Train sets it for one-versus-rest problems: their transductive
	// labels, set while a class had one or two labels, are mostly wrong,
	// and at the final λ_u (or temperature) they stay wrong.
	reanneal bool

	// trace, for tests, sees every finite Newton run's objectives.
	trace func(start bool, objective float64)
}

func (p Params) withDefaults() Params {
	if p.Algorithm == "" {
		p.Algorithm = DefaultAlgorithm
	}
	if p.Lambda == 0 {
		p.Lambda = 1e-3
	}
	if p.LambdaU == 0 {
		p.LambdaU = 1
	}
	if p.PositiveCost == 0 {
		p.PositiveCost = 1
	}
	if p.NegativeCost == 0 {
		p.NegativeCost = 1
	}
	if p.SRDelta == 0 {
		p.SRDelta = 0.05
	}
	if p.SRNeighbours == 0 {
		p.SRNeighbours = 5
	}
	if p.SRGamma == 0 {
		p.SRGamma = 1
	}
	p.Tolerances = p.Tolerances.withDefaults()
	return p
}

// Validate names the first bad field.
func (p Params) Validate() error {
	if _, err := ParseAlgorithm(string(p.Algorithm)); err != nil {
		return fmt.Errorf("algorithm: %w", err)
	}
	switch {
	case p.Lambda <= 0:
		return fmt.Errorf("lambda must be > 0, got %v", p.Lambda)
	case p.LambdaU < 0:
		return fmt.Errorf("lambda_u must be >= 0, got %v", p.LambdaU)
	case p.LambdaI < 0:
		return fmt.Errorf("lambda_i must be >= 0, got %v", p.LambdaI)
	case (p.Algorithm == LapRLS || p.Algorithm == LapSVM) && p.LambdaI == 0:
		return fmt.Errorf("lambda_i must be > 0 for %s", p.Algorithm)
	case p.R < 0 || p.R >= 1:
		return fmt.Errorf("r must be in [0, 1), got %v", p.R)
	case p.MaxSwitch < 0:
		return fmt.Errorf("max_switch must be >= 0, got %d", p.MaxSwitch)
	case p.PositiveCost < 0:
		return fmt.Errorf("cost_pos must be >= 0, got %v", p.PositiveCost)
	case p.NegativeCost < 0:
		return fmt.Errorf("cost_neg must be >= 0, got %v", p.NegativeCost)
	case p.SRDelta < 0 || p.SRDelta > 1:
		return fmt.Errorf("sr_delta must be in (0, 1], got %v", p.SRDelta)
	case p.SRNeighbours < 0:
		return fmt.Errorf("sr_k must be >= 0, got %d", p.SRNeighbours)
	case p.SRGamma < 0 || p.SRGamma > 1:
		return fmt.Errorf("sr_gamma must be in (0, 1], got %v", p.SRGamma)
	}
	return nil
}

// Problem is one binary problem over a window of rows.
type Problem struct {
	X linalg.Matrix
	// Y holds +1 or -1 for a labeled row and 0 for an unlabeled one.
	Y []float64
	// Keys identify rows across windows, so that a warm start can hand a
	// row that is still present its transductive state; nil matches rows by
	// index.
	Keys []uint64
	// Laplacian is the graph over X's rows, in the same order; it is needed
	// by laprls and lapsvm, and by tsvm and da when λ_I > 0.
	Laplacian Laplacian
	// graphGram is X̃ᵀMX̃ shared by the binary problems of one window (nil:
	// a problem forms its own when its window is dense and narrow).
	graphGram *graphGram
}

func (p Problem) key(row int) uint64 {
	if p.Keys == nil {
		return uint64(row)
	}
	return p.Keys[row]
}

// addRun adds a finite Newton run's counts to s.
func addRun(s *model.Stats, r runStats) {
	s.NewtonSteps += r.newtonSteps
	s.CGLSIters += r.cglsIters
	s.Active = r.active
	s.Runs++
}

// ErrNoLabels is returned for a problem without a labeled row.
var ErrNoLabels = errors.New("no labeled rows")

// Solve minimizes the objective of params.Algorithm over prob. A non-nil
// warm solution seeds the weights (and the TSVM/DA state of rows still
// present); rows new to the window take theirs from the current outputs.
// A warm solution whose length does not fit the feature space is ignored.
// Weights are over the feature space: X's columns, or its ColumnMap.
func Solve(ctx context.Context, prob Problem, params Params, warm *model.Solution) (*model.Solution, error) {
	start := time.Now()
	params = params.withDefaults()
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if params.Algorithm == SR || params.Algorithm == Auto {
		return nil, fmt.Errorf("%s solves every class at once: use Train", params.Algorithm)
	}
	b, err := newBinary(prob, params)
	if err != nil {
		return nil, err
	}
	space := linalg.NewColumnSpace(prob.X)
	if warm != nil {
		if len(warm.W) != space.Features+1 {
			warm = nil
		} else {
			w := *warm
			w.W = space.Compact(warm.W)
			warm = &w
		}
	}
	var sol *model.Solution
	switch params.Algorithm {
	case RLS, LapRLS:
		sol = b.supervised(squaredLoss, warm)
	case SVM, LapSVM:
		sol = b.supervised(hingeLoss, warm)
	case TSVM:
		sol, err = b.tsvm(ctx, warm)
	case DA:
		sol, err = b.da(ctx, warm)
	}
	if err != nil {
		return nil, err
	}
	sol.W = space.Expand(sol.W)
	sol.Stats.Seconds = time.Since(start).Seconds()
	return sol, nil
}
