package newton

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"streamer/online/linalg"
	"streamer/online/model"
)

// Objective names one of the binary objectives of docs/MATH.md that
// Solve minimizes.
type Objective string

// The objectives. They follow docs/MATH.md's normalization exactly.
const (
	RLS    Objective = "rls"    // regularized least squares on the labeled rows
	SVM    Objective = "svm"    // L2-SVM-MFN on the labeled rows
	LapRLS Objective = "laprls" // RLS plus the graph term
	LapSVM Objective = "lapsvm" // L2-SVM plus the graph term
	TSVM   Objective = "tsvm"   // multi-switch transductive L2-SVM (thesis §6.3)
	DA     Objective = "da"     // deterministic annealing S3VM (thesis §6.4)
)

// Objectives returns the objectives in the order of docs/MATH.md.
func Objectives() []Objective {
	return []Objective{RLS, SVM, LapRLS, LapSVM, TSVM, DA}
}

func (o Objective) transductive() bool { return o == TSVM || o == DA }

// UsesGraph reports whether the objective has the graph term, given λ_I.
func (o Objective) UsesGraph(lambdaI float64) bool {
	switch o {
	case LapRLS, LapSVM:
		return true
	case TSVM, DA:
		return lambdaI > 0
	}
	return false
}

// Params are the hyper-parameters of one binary solve. The zero value
// of a field means the default written beside it.
type Params struct {
	Objective Objective // default SVM
	Lambda    float64   // λ, weight of ‖w‖²/2; default 1e-3
	LambdaU   float64   // λ_u, weight of the unlabeled loss (tsvm, da); default 1
	LambdaI   float64   // λ_I, weight of the graph term; laprls and lapsvm need it > 0, tsvm and da use the graph when it is > 0
	// R is the fraction of unlabeled rows that are positive (tsvm, da);
	// 0 means the fraction of positives among the labeled rows.
	R float64
	// MaxSwitch is S, the most label pairs TSVM switches per round; 0 means u/2.
	MaxSwitch int
	// PositiveCost and NegativeCost are the costs c_i of labeled rows of
	// each class, for imbalanced data; 0 means 1.
	PositiveCost, NegativeCost float64
	Tolerances

	// Reanneal makes a warm TSVM solve anneal λ_u again instead of running
	// at its final value at once, and a warm DA solve walk its temperatures
	// again. Training sets it for one-versus-rest problems: their
	// transductive labels, set while a class had one or two labels, are
	// mostly wrong, and at the final λ_u (or temperature) they stay wrong.
	Reanneal bool

	// trace, for tests, sees every finite Newton run's objectives.
	trace func(start bool, objective float64)
}

// WithDefaults returns p with each zero field set to its default.
func (p Params) WithDefaults() Params {
	if p.Objective == "" {
		p.Objective = SVM
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
	p.Tolerances = p.Tolerances.withDefaults()
	return p
}

// Validate names the first bad field.
func (p Params) Validate() error {
	if !slices.Contains(Objectives(), p.Objective) {
		names := make([]string, 0, 6)
		for _, o := range Objectives() {
			names = append(names, string(o))
		}
		return fmt.Errorf("objective: unknown objective %q (want one of %s)", p.Objective, strings.Join(names, ", "))
	}
	switch {
	case p.Lambda <= 0:
		return fmt.Errorf("lambda must be > 0, got %v", p.Lambda)
	case p.LambdaU < 0:
		return fmt.Errorf("lambda_u must be >= 0, got %v", p.LambdaU)
	case p.LambdaI < 0:
		return fmt.Errorf("lambda_i must be >= 0, got %v", p.LambdaI)
	case (p.Objective == LapRLS || p.Objective == LapSVM) && p.LambdaI == 0:
		return fmt.Errorf("lambda_i must be > 0 for %s", p.Objective)
	case p.R < 0 || p.R >= 1:
		return fmt.Errorf("r must be in [0, 1), got %v", p.R)
	case p.MaxSwitch < 0:
		return fmt.Errorf("max_switch must be >= 0, got %d", p.MaxSwitch)
	case p.PositiveCost < 0:
		return fmt.Errorf("cost_pos must be >= 0, got %v", p.PositiveCost)
	case p.NegativeCost < 0:
		return fmt.Errorf("cost_neg must be >= 0, got %v", p.NegativeCost)
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
	// GraphGram is X̃ᵀMX̃ shared by the binary problems of one window (nil:
	// a problem forms its own when its window is dense and narrow).
	GraphGram *GraphGram
	// Weights, when not nil, scale each labeled row's cost c_i; the
	// labeled terms are then divided by the weights' sum instead of the
	// number of labeled rows, so that λ keeps its meaning.
	Weights []float64
}

// weight returns row's weight: 1 without Weights.
func (p Problem) weight(row int) float64 {
	if p.Weights == nil {
		return 1
	}
	return p.Weights[row]
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

// Solve minimizes the objective of params.Objective over prob. A non-nil
// warm solution seeds the weights (and the TSVM/DA state of rows still
// present); rows new to the window take theirs from the current outputs.
// A warm solution whose length does not fit the feature space is ignored.
// Weights are over the feature space: X's columns, or its ColumnMap.
func Solve(ctx context.Context, prob Problem, params Params, warm *model.Solution) (*model.Solution, error) {
	start := time.Now()
	params = params.WithDefaults()
	if err := params.Validate(); err != nil {
		return nil, err
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
	switch params.Objective {
	case RLS, LapRLS:
		sol = b.supervised(ctx, squaredLoss, warm)
	case SVM, LapSVM:
		sol = b.supervised(ctx, hingeLoss, warm)
	case TSVM:
		sol, err = b.tsvm(ctx, warm)
	case DA:
		sol, err = b.da(ctx, warm)
	}
	if err == nil {
		err = ctx.Err() // a solve stopped early is not a solution
	}
	if err != nil {
		return nil, err
	}
	sol.W = space.Expand(sol.W)
	sol.Stats.Seconds = time.Since(start).Seconds()
	return sol, nil
}
