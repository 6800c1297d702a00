package train

import (
	"fmt"
	"slices"
	"strings"

	"streamer/online/newton"
	"streamer/online/spectral"
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

// Params are the hyper-parameters of a solve: its algorithm, those of the
// finite Newton objectives, which every binary problem shares, and Spectral
// Regression's. The zero value of a field means the default written beside
// it.
type Params struct {
	Algorithm Algorithm // default DefaultAlgorithm (SVM)
	Lambda    float64   // λ, weight of ‖w‖²/2, and SR's ridge α; default 1e-3
	LambdaU   float64   // λ_u, weight of the unlabeled loss (tsvm, da); default 1; Solve scales it by 2/c for the one-versus-rest tsvm problems of c classes
	LambdaI   float64   // λ_I, weight of the graph term; laprls and lapsvm need it > 0, tsvm and da use the graph when it is > 0
	// LambdaSearch is the number of decades above Lambda that a solve of
	// two classes (not sr) also tries, keeping the λ whose supervised fit
	// on the older labels errs least on the newest (searchLambda); 0 tries
	// none.
	LambdaSearch int
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
	// Spectral holds Spectral Regression's own settings; its Alpha and
	// MaxIter, when 0, are Lambda and Tolerances.MaxCGLS.
	Spectral spectral.Settings
	newton.Tolerances
	// labelHalfLife, set by searchLambda for one solve, is the half-life
	// in window positions of the labeled rows' weights in the binary
	// problems (recencyWeights); 0 weighs them alike.
	labelHalfLife float64
}

// WithDefaults returns p with each zero field set to its default.
func (p Params) WithDefaults() Params {
	if p.Algorithm == "" {
		p.Algorithm = DefaultAlgorithm
	}
	b := p.Binary().WithDefaults()
	p.Lambda, p.LambdaU, p.PositiveCost, p.NegativeCost = b.Lambda, b.LambdaU, b.PositiveCost, b.NegativeCost
	p.Tolerances = b.Tolerances
	return p
}

// Binary returns the parameters of the binary finite Newton problems of a
// solve with p: p less Spectral Regression's settings.
func (p Params) Binary() newton.Params {
	return newton.Params{
		Objective: newton.Objective(p.Algorithm), Lambda: p.Lambda, LambdaU: p.LambdaU, LambdaI: p.LambdaI,
		R: p.R, MaxSwitch: p.MaxSwitch, PositiveCost: p.PositiveCost, NegativeCost: p.NegativeCost,
		Tolerances: p.Tolerances,
	}
}

// spectralSettings returns Spectral Regression's settings of a solve with
// p (defaulted): Spectral, with α = λ and the block CG iterations capped as
// CGLS's unless it sets them.
func (p Params) spectralSettings() spectral.Settings {
	s := p.Spectral
	if s.Alpha == 0 {
		s.Alpha = p.Lambda
	}
	if s.MaxIter == 0 {
		s.MaxIter = p.Tolerances.MaxCGLS
	}
	return s
}

// Validate names the first bad field.
func (p Params) Validate() error {
	if _, err := ParseAlgorithm(string(p.Algorithm)); err != nil {
		return fmt.Errorf("algorithm: %w", err)
	}
	b := p.Binary()
	if !slices.Contains(newton.Objectives(), b.Objective) {
		b.Objective = newton.SVM // sr and auto: the fields they share
	}
	if err := b.Validate(); err != nil {
		return err
	}
	if p.LambdaSearch < 0 || p.LambdaSearch > 6 {
		return fmt.Errorf("lambda_search must be in [0, 6], got %d", p.LambdaSearch)
	}
	switch s := p.Spectral; {
	case s.Delta < 0 || s.Delta > 1:
		return fmt.Errorf("sr_delta must be in (0, 1], got %v", s.Delta)
	case s.Neighbours < 0:
		return fmt.Errorf("sr_k must be >= 0, got %d", s.Neighbours)
	case s.Gamma < 0 || s.Gamma > 1:
		return fmt.Errorf("sr_gamma must be in (0, 1], got %v", s.Gamma)
	}
	return nil
}
