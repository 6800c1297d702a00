package newton

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/vector"
)

// testCase is one problem of the shared table the solver tests run over.
type testCase struct {
	name   string
	rows   []vector.Vector
	y      []float64
	params Params
	graph  bool
	csr    bool
	// packed holds the rows in a Dense matrix, whose Newton systems are
	// solved directly (with the graph term through GraphGram).
	packed bool
	// weighted gives the rows weights from 0.25 to 1 (Problem.Weights).
	weighted bool
}

func (tc testCase) problem() Problem {
	var x linalg.Matrix = linalg.NewVectorRows(tc.rows, dimOf(tc.rows), 1)
	if tc.csr {
		x = linalg.NewCSR(tc.rows, dimOf(tc.rows)+3, 1)
	}
	if tc.packed {
		x = linalg.NewDense(tc.rows, dimOf(tc.rows)+2, 1)
	}
	p := Problem{X: x, Y: tc.y}
	if tc.weighted {
		p.Weights = make([]float64, len(tc.y))
		for i := range p.Weights {
			p.Weights[i] = 0.25 + 0.75*float64(i)/float64(len(tc.y))
		}
	}
	if tc.graph {
		p.Laplacian = exactKNNLaplacian(tc.rows, 4, false)
	}
	return p
}

func dimOf(rows []vector.Vector) int {
	d := 0
	for _, r := range rows {
		if r.IsDense() {
			d = max(d, len(r.Values))
		} else if len(r.Indices) > 0 {
			d = max(d, int(r.Indices[len(r.Indices)-1])+1)
		}
	}
	return d
}

func testCases() []testCase {
	dense, dy := onlinetest.RandomProblem(1, 60, 5, 20)
	sparse, sy := onlinetest.SparseProblem(2, 80, 30, 6, 25)
	base := Params{Lambda: 0.05, LambdaU: 0.5}
	with := func(a Objective) Params { p := base; p.Objective = a; return p }
	withGraph := func(a Objective) Params { p := with(a); p.LambdaI = 0.3; return p }
	var cases []testCase
	for _, a := range Objectives() {
		graph := a == LapRLS || a == LapSVM
		p := with(a)
		if graph {
			p = withGraph(a)
		}
		cases = append(cases,
			testCase{"dense/" + string(a), dense, dy, p, graph, false, false, false},
			testCase{"sparse/" + string(a), sparse, sy, p, graph, false, false, false},
			testCase{"csr/" + string(a), sparse, sy, p, graph, true, false, false},
			testCase{"packed/" + string(a), dense, dy, p, graph, false, true, false},
			testCase{"packed-sparse/" + string(a), sparse, sy, p, graph, false, true, false},
		)
	}
	// Fewer rows than columns: the direct solver with the graph term on a
	// window still narrow.
	wide, wy := onlinetest.SparseProblem(3, 40, 60, 8, 12)
	cases = append(cases,
		testCase{"packed-wide/lapsvm", wide, wy, withGraph(LapSVM), true, false, true, false},
		testCase{"packed-wide/tsvm+graph", wide, wy, withGraph(TSVM), true, false, true, false},
		testCase{"dense/tsvm+graph", dense, dy, withGraph(TSVM), true, false, false, false},
		testCase{"dense/da+graph", dense, dy, withGraph(DA), true, false, false, false},
		testCase{"packed/tsvm+graph", dense, dy, withGraph(TSVM), true, false, true, false},
		testCase{"packed/da+graph", dense, dy, withGraph(DA), true, false, true, false},
	)
	costly := with(SVM)
	costly.PositiveCost = 3
	cases = append(cases,
		testCase{"dense/svm+costs", dense, dy, costly, false, false, false, false},
		testCase{"packed/svm+costs", dense, dy, costly, false, false, true, false},
		testCase{"dense/svm+weights", dense, dy, with(SVM), false, false, false, true},
		testCase{"sparse/tsvm+weights", sparse, sy, with(TSVM), false, false, false, true},
		testCase{"packed/lapsvm+weights", dense, dy, withGraph(LapSVM), true, false, true, true},
	)
	return cases
}

// innerNewton returns a finite Newton solver for the objective that tc's
// algorithm minimizes with fixed labels, with some unlabeled terms: TSVM
// labels ±1 or DA soft labels.
func innerNewton(t *testing.T, tc testCase) *newton {
	t.Helper()
	return fixedLabels(t, tc, tc.problem(), func(j, _ int) float64 {
		if tc.params.Objective == TSVM {
			return float64(1 - 2*(j%2))
		}
		return float64(j%5) / 4
	})
}

// fixedLabels builds the objective of tc's algorithm over prob with the
// unlabeled row j (matrix row `row`) labeled label(j, row): a TSVM label
// ±1, or a DA soft label p.
func fixedLabels(t *testing.T, tc testCase, prob Problem, label func(j, row int) float64) *newton {
	t.Helper()
	b, err := newBinary(prob, tc.params.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	kind := hingeLoss
	if tc.params.Objective == RLS || tc.params.Objective == LapRLS {
		kind = squaredLoss
	}
	s := b.newton(kind, tc.params.Objective.transductive())
	b.addLabeledTerms(s)
	u := float64(len(b.unlabeled))
	for j, row := range b.unlabeled {
		v := label(j, row)
		switch tc.params.Objective {
		case TSVM:
			s.terms.add(row, v, b.par.LambdaU/u)
		case DA:
			s.terms.add(row, 1, b.par.LambdaU*v/u)
			s.terms.add(row, -1, b.par.LambdaU*(1-v)/u)
		}
	}
	return s
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := innerNewton(t, tc)
			w := make([]float64, s.d+1)
			for j := range w {
				w[j] = 0.3 * math.Sin(float64(3*j+1))
			}
			s.setWeights(w)
			grad := make([]float64, len(w))
			s.gradient(grad)
			const h = 1e-6
			for j := range w {
				f := func(x float64) float64 {
					v := append([]float64(nil), w...)
					v[j] = x
					s.setWeights(v)
					return s.objective()
				}
				fd := (f(w[j]+h) - f(w[j]-h)) / (2 * h)
				if math.Abs(fd-grad[j]) > 1e-6*math.Max(1, math.Abs(fd)) {
					t.Errorf("∂J/∂w[%d] = %.9g, finite difference %.9g", j, grad[j], fd)
				}
			}
		})
	}
}

func TestObjectiveDecreasesAtEveryNewtonStep(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			var prev float64
			steps := 0
			tc.params.trace = func(start bool, f float64) {
				if !start {
					steps++
					if f > prev*(1+1e-12)+1e-15 {
						t.Errorf("objective rose from %.12g to %.12g", prev, f)
					}
				}
				prev = f
			}
			if _, err := Solve(context.Background(), tc.problem(), tc.params, nil); err != nil {
				t.Fatal(err)
			}
			if steps == 0 {
				t.Fatal("no Newton step was traced")
			}
		})
	}
}

// TestInnerSolutionMatchesDenseSolve checks the finite Newton solution of
// each fixed-label objective against a dense direct solve. The objective is
// strictly convex and piecewise quadratic, so w is its minimizer exactly
// when w solves the normal equations of its own active set; the dense
// solution must reproduce that active set.
func TestInnerSolutionMatchesDenseSolve(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := innerNewton(t, tc)
			s.setWeights(make([]float64, s.d+1))
			if st := s.minimize(context.Background(), false); !st.converged {
				t.Fatalf("finite Newton did not converge: %+v", st)
			}
			want := denseSolve(s)
			if rel := onlinetest.RelDiff(s.w, want); rel > 1e-6 {
				t.Fatalf("relative difference to the dense solve %.3g", rel)
			}
			ref := *s
			ref.setWeights(want)
			for k, p := range s.terms.pos {
				if s.terms.active(k, s.o[p]) != s.terms.active(k, ref.o[p]) && math.Abs(s.terms.y[k]*ref.o[p]-1) > 1e-6 {
					t.Fatalf("term %d: active set differs from the dense solution's", k)
				}
			}
		})
	}
}

// denseSolve solves (λI + X̂ᵀCX̂ + κX̂ᵀMX̂) w = X̂ᵀCY densely, with X̂ the
// data matrix plus bias column, for the active set at s's current point.
func denseSolve(s *newton) []float64 {
	n, d := s.positions(), s.d+1
	xh := mat.NewDense(n, d, nil)
	rows := make([]int, n)
	for p := range rows {
		rows[p] = s.matrixRow(p)
	}
	col := make([]float64, n)
	for j := range d - 1 {
		e := make([]float64, d-1)
		e[j] = 1
		s.x.MulVec(col, rows, e)
		xh.SetCol(j, col)
	}
	for p := range n {
		xh.Set(p, d-1, 1)
	}
	cost := make([]float64, n)
	target := make([]float64, n)
	s.terms.aggregate(s.o, cost, target)
	a := mat.NewDense(d, d, nil)
	rhs := mat.NewVecDense(d, nil)
	for p := range n {
		for i := range d {
			rhs.SetVec(i, rhs.AtVec(i)+cost[p]*target[p]*xh.At(p, i))
			for j := range d {
				a.Set(i, j, a.At(i, j)+cost[p]*xh.At(p, i)*xh.At(p, j))
			}
		}
	}
	for i := range d {
		a.Set(i, i, a.At(i, i)+s.lambda)
	}
	if s.lap != nil {
		var xm, xmx mat.Dense
		xm.Mul(xh.T(), s.lap.(*factorLaplacian).matrix())
		xmx.Mul(&xm, xh)
		xmx.Scale(s.kappa, &xmx)
		a.Add(a, &xmx)
	}
	var w mat.VecDense
	if err := w.SolveVec(a, rhs); err != nil {
		panic(err)
	}
	return w.RawVector().Data
}

func TestSolutionsAreOptimal(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			prob := tc.problem()
			sol, err := Solve(context.Background(), prob, tc.params, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := reconstruct(t, tc, prob, sol)
			grad := make([]float64, len(s.w))
			s.gradient(grad)
			if g := linalg.Norm(grad); g > 1e-5*math.Max(1, linalg.Norm(sol.W)) {
				t.Fatalf("‖∇J‖ = %.3g at the solution", g)
			}
			if tc.params.Objective == TSVM {
				b, _ := newBinary(prob, tc.params.WithDefaults())
				if n := b.switchLabels(s); n != 0 {
					t.Fatalf("%d label pairs could still be switched", n)
				}
			}
		})
	}
}

// reconstruct builds the fixed-label objective that sol's weights minimize:
// the labeled terms and, for tsvm and da, the unlabeled terms of sol's
// labels.
func reconstruct(t *testing.T, tc testCase, prob Problem, sol *model.Solution) *newton {
	t.Helper()
	s := fixedLabels(t, tc, prob, func(_, row int) float64 { return sol.Unlabeled[prob.key(row)] })
	s.setWeights(linalg.NewColumnSpace(prob.X).Compact(sol.W))
	return s
}

func TestTransductiveBalance(t *testing.T) {
	for _, tc := range testCases() {
		if !tc.params.Objective.transductive() {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []float64{0, 0.3, 0.5, 0.8} {
				tc.params.R = r
				prob := tc.problem()
				sol, err := Solve(context.Background(), prob, tc.params, nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := newBinary(prob, tc.params.WithDefaults())
				u := len(b.unlabeled)
				var sum float64
				for _, v := range sol.Unlabeled {
					if tc.params.Objective == TSVM {
						v = (v + 1) / 2
					}
					sum += v
				}
				switch tc.params.Objective {
				case TSVM:
					if want := math.Round(b.r * float64(u)); sum != want {
						t.Errorf("r=%v: %v positive labels, want %v", r, sum, want)
					}
				case DA:
					if mean := sum / float64(u); math.Abs(mean-b.r) > 1e-9 {
						t.Errorf("r=%v: mean p = %.12f, want %.12f", r, mean, b.r)
					}
				}
			}
		})
	}
}

func TestWarmStartFromOptimumReturnsAtOnce(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			prob := tc.problem()
			sol, err := Solve(context.Background(), prob, tc.params, nil)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Solve(context.Background(), prob, tc.params, sol)
			if err != nil {
				t.Fatal(err)
			}
			st := again.Stats
			if st.CGLSIters > 0 || st.Switches > 0 {
				t.Fatalf("warm start from the optimum worked: %+v (cold: %+v)", st, sol.Stats)
			}
			if rel := onlinetest.RelDiff(again.W, sol.W); rel > 1e-9 {
				t.Fatalf("weights moved by %.3g", rel)
			}
		})
	}
}

func TestSolveRejectsBadInput(t *testing.T) {
	rows, y := onlinetest.RandomProblem(3, 10, 3, 4)
	x := linalg.NewVectorRows(rows, 3, 1)
	tests := []struct {
		name   string
		prob   Problem
		params Params
	}{
		{"no labels", Problem{X: x, Y: make([]float64, 10)}, Params{}},
		{"label count", Problem{X: x, Y: y[:5]}, Params{}},
		{"bad label", Problem{X: x, Y: append([]float64{2}, y[1:]...)}, Params{}},
		{"laprls without graph", Problem{X: x, Y: y}, Params{Objective: LapRLS, LambdaI: 1}},
		{"lapsvm without lambda_i", Problem{X: x, Y: y}, Params{Objective: LapSVM}},
		{"unknown algorithm", Problem{X: x, Y: y}, Params{Objective: "svn"}},
		{"negative lambda", Problem{X: x, Y: y}, Params{Lambda: -1}},
		{"r out of range", Problem{X: x, Y: y}, Params{R: 1.5}},
		{"weight count", Problem{X: x, Y: y, Weights: []float64{1}}, Params{}},
		{"zero weight", Problem{X: x, Y: y, Weights: make([]float64, 10)}, Params{}},
	}
	for _, tt := range tests {
		if _, err := Solve(context.Background(), tt.prob, tt.params, nil); err == nil {
			t.Errorf("%s: Solve succeeded", tt.name)
		}
	}
	if _, err := Solve(context.Background(), Problem{X: x, Y: make([]float64, 10)}, Params{}, nil); !errors.Is(err, ErrNoLabels) {
		t.Errorf("no labels: err = %v, want ErrNoLabels", err)
	}
}

// TestSolveStopsOnCancel: every objective returns ctx's error, not a
// solution, once ctx has ended (a service stopping during a long solve
// does not wait for it).
func TestSolveStopsOnCancel(t *testing.T) {
	rows, y := onlinetest.RandomProblem(4, 50, 4, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, a := range []Objective{RLS, SVM, TSVM, DA} {
		_, err := Solve(ctx, Problem{X: linalg.NewVectorRows(rows, 4, 1), Y: y}, Params{Objective: a}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", a, err)
		}
	}
}

// TestSwitchLabelsOrder holds switchLabels to the thesis's rule written
// plainly: sort the violating positives by output, lowest first, and the
// negatives highest first, ties by term (a stable sort), then switch pairs
// while the positive's output is below the negative's. Outputs are drawn
// from a few values so that ties are common.
func TestSwitchLabelsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		const labeled, unlabeled = 3, 60
		tm := &terms{}
		o := make([]float64, labeled+unlabeled)
		for k := range labeled + unlabeled {
			tm.add(k, float64(2*r.IntN(2)-1), 1)
			o[k] = float64(r.IntN(9)-4) / 2
		}
		b := &binary{labeled: make([]int, labeled), unlabeled: make([]int, unlabeled), par: Params{MaxSwitch: r.IntN(4) * 5}}
		want := slices.Clone(tm.y)
		var plus, minus []int
		for k := labeled; k < tm.len(); k++ {
			switch {
			case want[k] > 0 && o[k] < 1:
				plus = append(plus, k)
			case want[k] < 0 && o[k] > -1:
				minus = append(minus, k)
			}
		}
		slices.SortStableFunc(plus, func(i, j int) int { return cmp.Compare(o[i], o[j]) })
		slices.SortStableFunc(minus, func(i, j int) int { return cmp.Compare(o[j], o[i]) })
		limit := b.par.MaxSwitch
		if limit == 0 {
			limit = unlabeled / 2
		}
		n := 0
		for n < len(plus) && n < len(minus) && n < limit && o[plus[n]] < o[minus[n]] {
			want[plus[n]], want[minus[n]] = -1, 1
			n++
		}
		if got := b.switchLabels(&newton{terms: tm, o: o}); got != n || !slices.Equal(tm.y, want) {
			t.Fatalf("trial %d: switched %d, labels %v; want %d, %v", trial, got, tm.y, n, want)
		}
	}
}

// TestWeightsActAsCopies: a labeled row of weight 2, the others of weight
// 1, gives the solution of the problem in which that row comes twice.
func TestWeightsActAsCopies(t *testing.T) {
	rows, y := onlinetest.RandomProblem(3, 60, 5, 20)
	for _, obj := range []Objective{SVM, RLS} {
		t.Run(string(obj), func(t *testing.T) {
			par := Params{Lambda: 0.05, Objective: obj, PositiveCost: 2}
			var first int
			for y[first] == 0 {
				first++
			}
			weights := make([]float64, len(y))
			for i := range weights {
				weights[i] = 1
			}
			weights[first] = 2
			weighted, err := Solve(context.Background(), Problem{X: linalg.NewVectorRows(rows, 5, 1), Y: y, Weights: weights}, par, nil)
			if err != nil {
				t.Fatal(err)
			}
			copied, err := Solve(context.Background(), Problem{
				X: linalg.NewVectorRows(append(slices.Clone(rows), rows[first]), 5, 1),
				Y: append(slices.Clone(y), y[first]),
			}, par, nil)
			if err != nil {
				t.Fatal(err)
			}
			for j := range weighted.W {
				if math.Abs(weighted.W[j]-copied.W[j]) > 1e-7 {
					t.Fatalf("weights %v, with the row copied %v", weighted.W, copied.W)
				}
			}
		})
	}
}
