package spectral

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"streamer/online/eigen"
	"streamer/online/linalg"
	"streamer/online/model"
	"streamer/vector"
)

// Spectral Regression (Cai, He and Han; MATH.md "Spectral Regression"):
// the c-1 leading non-trivial eigenvectors of the label-augmented kNN
// affinity (and, in a window with clusters that no label reached, those
// that share their eigenvalue: responseCount) are regression targets for
// ridge regressions, and a row is classified by the nearest class centroid
// in the embedding they span.

const (
	// srGuard is the number of guard vectors the eigensolver carries
	// beyond the wanted ones.
	srGuard = 4
	// srDenseMax is the window size up to which the eigenproblem is solved
	// densely: below it a dense decomposition is cheaper than iterations.
	srDenseMax = 300
	// srExtra is the number of eigenvectors beyond c-1 that the solve
	// looks at when the window has unlabeled rows. In a stream the graph
	// holds clusters of classes that no label has reached yet (or not in
	// this window); each takes an eigenvector of eigenvalue near 1, and
	// with only the first c-1 eigenvectors a labeled class can lose its
	// direction to such a cluster. Which of them become responses is
	// decided by their eigenvalues (responseCount) and by the labels they
	// carry (pickResponses).
	srExtra = 3
	// srDegenerate is the distance 1 - μ below which responseCount takes
	// eigenvalues as equal: clusters with no edge between them have
	// eigenvalues of 1 to rounding.
	srDegenerate = 1e-6
	// srLabelFree is the share of an eigenvector's mass on the labeled
	// rows, relative to their share of the rows, below which it is taken
	// as a cluster that no label reached: on generated clusters and
	// glyphs at 5% of labels, such clusters lie well below it and most
	// directions of labeled classes above 1.
	srLabelFree = 0.5
	// srEigenTol is the default residual to which the eigenvectors are
	// solved, and ten times it the precision of the regressions' outputs,
	// relative to their targets (Settings.Tolerance, ridgeBlock). They
	// are regression targets for a nearest-centroid classifier, not
	// results in themselves: on clustered rows and on Debian text, these
	// tolerances classify held-out rows as 1e-6 does, with fewer
	// eigensolver iterations, and bounding the outputs instead of SVMlin's
	// relative residual cuts the regressions' iterations further
	// (BenchmarkTrainSparseSR; docs/RESULTS.md, "Several classes").
	srEigenTol = 1e-4
)

// Problem is one Spectral Regression problem: a window of rows,
// their classes, and the kNN graph over them.
type Problem struct {
	X linalg.Matrix
	// Labels holds each row's class name, "" for an unlabeled row.
	Labels []string
	// Keys identify rows across windows, so that a warm start finds the
	// rows still present; nil matches rows by index.
	Keys []uint64
	// Rows, when set, are the vectors X was built from, in order; a warm
	// solve of a dense window then updates its sums over rows by the rows
	// that changed instead of summing them again. They must not change
	// while a state built from them lives.
	Rows []vector.Vector
	// Graph is the kNN graph over X's rows.
	Graph WeightedGraph
}

// ErrOneClass is returned while the window's labels name fewer
// than two classes.
var ErrOneClass = errors.New("labels of at least two classes are needed")

// Settings are Spectral Regression's settings. The zero value of a field
// means the default written beside it.
type Settings struct {
	// Delta is δ, the weight of the kNN edges against the label block; 0
	// means 0.05.
	Delta float64
	// Neighbours is p: the graph joins two rows when either is among the
	// other's p nearest neighbours in the window's kNN graph (all of them
	// when p is at least its k); 0 means 5.
	Neighbours int
	// Gamma is γ, the weight of unlabeled rows in the ridge regressions
	// (0 < γ ≤ 1); 0 means 1.
	Gamma float64
	// Alpha is α, the ridge regressions' weight of ‖a‖²; 0 means 1e-3.
	Alpha float64
	// Tolerance is the residual to which the eigenvectors are solved, and,
	// ten times it, the distance of the regressions' outputs to the
	// optimum's, relative to their targets (ridgeBlock); 0 means
	// srEigenTol.
	Tolerance float64
	// MaxIter caps the block CG iterations of the regressions; 0 means
	// 10000.
	MaxIter int
}

func (s Settings) withDefaults() Settings {
	if s.Delta == 0 {
		s.Delta = 0.05
	}
	if s.Neighbours == 0 {
		s.Neighbours = 5
	}
	if s.Gamma == 0 {
		s.Gamma = 1
	}
	if s.Alpha == 0 {
		s.Alpha = 1e-3
	}
	if s.Tolerance <= 0 {
		s.Tolerance = srEigenTol
	}
	if s.MaxIter <= 0 {
		s.MaxIter = 10000
	}
	return s
}

// State is the warm state of Spectral Regression: the eigensolver's
// last block, one row per window row.
type State struct {
	Keys []uint64
	// Vectors is len(Keys) × Block, row-major: the wanted eigenvectors of
	// S = D^{-1/2} W D^{-1/2} first, then the guard vectors.
	Vectors []float64
	Block   int
	// Duals is len(Keys) × Responses, row-major: each row's dual
	// coefficient in each ridge regression, c_i = C_i(t_i - x̃_i·a)/α, so
	// that a = Σ c_i x̃_i. The next block CG solve of the regressions in
	// the dual starts from them for the rows still in the window (a start
	// from the last weights, in the primal, kept the rows that left, in
	// directions that only α pulls back, and took longer than a cold
	// solve). Nil when the regressions shared one factorization (a dense
	// window, ridgeShared), which needs no start.
	Duals     []float64
	Responses int
	// gram is the regressions' X̃ᵀCX̃ on a dense window, for the next
	// solve to update.
	gram *srGram
}

// rowOf maps each row key of the warm state to its row.
func (sp *State) rowOf() map[uint64]int {
	at := make(map[uint64]int, len(sp.Keys))
	for r, k := range sp.Keys {
		at[k] = r
	}
	return at
}

// srProblem is one SR solve: the window's rows mapped to classes.
type srProblem struct {
	data    Problem
	params  Settings
	classes []string
	class   []int     // per row: index into classes, -1 unlabeled
	labeled int       // rows with a label
	present []int     // classes with a labeled row in the window
	gram    *srGram   // set by ridgeShared
	duals   []float64 // set by ridgeBlock: n × responses, row-major
}

func newSRProblem(data Problem, params Settings, classes []string) (*srProblem, error) {
	if data.Graph == nil {
		return nil, errors.New("sr needs the window's kNN graph")
	}
	if data.Graph.Vertices() != data.X.Rows() {
		return nil, fmt.Errorf("graph has %d vertices but the window %d rows", data.Graph.Vertices(), data.X.Rows())
	}
	p := &srProblem{data: data, params: params, classes: classes, class: make([]int, len(data.Labels))}
	index := make(map[string]int, len(classes))
	for k, c := range classes {
		index[c] = k
	}
	count := make([]int, len(classes))
	for i, l := range data.Labels {
		p.class[i] = -1
		if l != "" {
			p.class[i] = index[l]
			count[index[l]]++
			p.labeled++
		}
	}
	for k, c := range count {
		if c > 0 {
			p.present = append(p.present, k)
		}
	}
	if len(p.present) < 2 {
		return nil, ErrOneClass
	}
	return p, nil
}

// eigenCount returns the number of eigenvectors the responses are chosen
// from: c-1 for the c classes labeled in the window, plus srExtra when some
// rows are unlabeled (with every row labeled the eigenspace of eigenvalue 1
// is exactly the c-1 class directions, and SR is regularized discriminant
// analysis), within what the window's size allows.
func (p *srProblem) eigenCount(n int) int {
	nev := len(p.present) - 1
	if p.labeled < len(p.class) {
		return max(nev, min(nev+srExtra, n-srGuard-2))
	}
	return nev
}

// Solve solves Spectral Regression over the window of prob for
// classes, warm-started from the last solve's state, warm (nil: cold): its
// eigenvectors (rows still in the window; new rows from their neighbours)
// and regressions. It returns the model, calibrated, the state for the
// next solve, and the sums of the regressions' statistics with the
// eigensolver's iterations.
func Solve(ctx context.Context, prob Problem, params Settings, classes []string, warm *State) (*model.Model, *State, model.Stats, error) {
	start := time.Now()
	params = params.withDefaults()
	p, err := newSRProblem(prob, params, classes)
	if err != nil {
		return nil, nil, model.Stats{}, err
	}
	factor := p.startFactor(ctx, warm)
	defer factor.wait()
	aff := newSRAffinity(prob.Graph, p.class, len(classes), params.Delta, params.Neighbours)
	eig, nev, err := p.eigenvectors(ctx, aff, p.eigenCount(prob.X.Rows()), warm)
	if err != nil {
		return nil, nil, model.Stats{}, fmt.Errorf("sr eigenvectors: %w", err)
	}
	responses := p.responses(aff, eig.Vectors, nev)
	m := &model.Model{Classes: classes, Dim: linalg.NewColumnSpace(prob.X).Features, Problems: make([]model.Solution, nev)}
	if err := p.regressions(ctx, m, responses, warm, factor); err != nil {
		return nil, nil, model.Stats{}, err
	}
	rows, z := labeledEmbedding(m, prob)
	m.Centroids = p.centroids(rows, z)
	m.Calibration = calibrateCentroids(m, rows, z, prob.Labels)
	var st model.Stats
	for _, s := range m.Problems {
		st.Objective += s.Stats.Objective
		st.NewtonSteps += s.Stats.NewtonSteps
		st.CGLSIters += s.Stats.CGLSIters
		st.Runs += s.Stats.Runs
	}
	st.EigenIters = eig.Iters
	st.Seconds = time.Since(start).Seconds()
	return m, p.spectralState(eig.Vectors), st, nil
}

// eigenvectors solves for the leading nev non-trivial eigenvectors of S
// and returns the block whose first columns are those the responses come
// from (responseCount says how many, pickResponses which), aligned with
// the warm start's, and their number.
func (p *srProblem) eigenvectors(ctx context.Context, aff *srAffinity, nev int, last *State) (eigen.Result, int, error) {
	n := aff.Dim()
	block := min(nev+srGuard, n-1)
	if block < nev {
		return eigen.Result{}, 0, fmt.Errorf("%d rows are too few for %d classes", n, nev+1)
	}
	u0 := aff.trivialVector()
	warm, whole := p.warmBlock(aff, last, block)
	var res eigen.Result
	var err error
	if n <= srDenseMax {
		res = denseTopEigen(aff, u0, block)
	} else if res, err = p.iterativeEigen(ctx, aff, u0, nev, block, warm, whole); err != nil {
		return res, 0, err
	}
	picked := p.responseCount(res.Values, nev)
	p.pickResponses(&res, nev, picked)
	if warm != nil {
		alignBlock(res.Vectors, warm, picked)
	}
	return res, picked, nil
}

// responseCount returns how many of the nev leading eigenvectors the
// responses come from, from their eigenvalues (values, leading first, the
// guard vectors' after them): c-1, and past them up to the widest gap in
// 1 - μ, taken as a ratio between neighbours (1 - μ below srDegenerate
// counts as srDegenerate; where the widest is shared, the last). Before the
// gap lie the classes and the clusters that no label reached, with
// eigenvalues as near 1 as the classes' own; past it, modes within a class
// (along a curved cluster, or between the labeled rows of the label block),
// which only add noise to the distances to the centroids: kept, they cost
// accuracy on generated glyphs at 5% of labels, and much of it on two
// half-moons with one label each (Example_spectralRegression in package
// train).
func (p *srProblem) responseCount(values []float64, nev int) int {
	gap := func(mu float64) float64 { return max(1-mu, srDegenerate) }
	count := len(p.present) - 1
	widest := 0.0
	for k := count; k < len(values) && k <= nev; k++ {
		if r := gap(values[k]) / gap(values[k-1]); r >= widest {
			count, widest = k, r
		}
	}
	return count
}

// pickResponses moves to the front of res the first picked of its first
// nev eigenvectors (leading first) that carry labels: whose mass on
// the labeled rows is at least srLabelFree times the labeled rows' share
// of the window. The others are clusters that no label reached; a response
// there would be near zero at every centroid and tell no class from
// another, and taking it in place of a labeled class's direction loses
// that class. When fewer than picked columns carry labels, the leading
// label-free ones fill in.
func (p *srProblem) pickResponses(res *eigen.Result, nev, picked int) {
	v := res.Vectors
	order, carrying := p.responseOrder(v, nev)
	if carrying >= picked && order[picked-1] == picked-1 {
		return // the leading picked columns all carry labels
	}
	n, _ := v.Dims()
	cols := mat.DenseCopyOf(v.Slice(0, n, 0, nev))
	vals := slices.Clone(res.Values)
	for to, from := range order {
		v.SetCol(to, mat.Col(nil, from, cols))
		res.Values[to] = vals[from]
	}
}

// responseOrder returns the first nev columns of v in the order
// pickResponses puts them, those that carry labels first (carrying of
// them), each group leading first.
func (p *srProblem) responseOrder(v *mat.Dense, nev int) (order []int, carrying int) {
	n, _ := v.Dims()
	share := float64(p.labeled) / float64(n)
	var free []int
	for k := range nev {
		if p.labeledMass(v, k) >= srLabelFree*share {
			order = append(order, k)
		} else {
			free = append(free, k)
		}
	}
	return append(order, free...), nev - len(free)
}

// neededVectors returns how many leading columns of the block x, with
// Ritz values theta, the eigensolver must solve to its tolerance: up to
// the last column the responses would come from (responseCount,
// pickResponses) if it stopped now. The columns past it are read only for
// their eigenvalue and their labeled mass, which decide that they are no
// response; they stay in the block for the next warm start. Past c-1 they
// lie in the bulk of the spectrum, where eigenvalues are close and
// converge slowly: solving them anyway costs a warm re-solve more
// products.
func (p *srProblem) neededVectors(x *mat.Dense, theta []float64, nev int) int {
	order, _ := p.responseOrder(x, nev)
	return slices.Max(order[:p.responseCount(theta, nev)]) + 1
}

// labeledMass returns the share of column k's squared norm on the labeled
// rows.
func (p *srProblem) labeledMass(v *mat.Dense, k int) float64 {
	var on, all float64
	for i, c := range p.class {
		x := v.At(i, k)
		all += x * x
		if c >= 0 {
			on += x * x
		}
	}
	if all == 0 {
		return 0
	}
	return on / all
}

// iterativeEigen finds the eigenvectors from the warm block, or from the
// label block on a cold start: rounds of srOrthoEvery products with S, each
// followed by a Rayleigh–Ritz check that ends the solve when the block
// already solves the problem, up to srDiffusions products; then LOBPCG.
// Only the whole last block (whole: no row new to the window) is checked
// before its first round: a start with rows filled in, or a cold one, is
// not a solution yet, and the check would cost as much as five products.
func (p *srProblem) iterativeEigen(ctx context.Context, aff *srAffinity, u0 []float64, nev, block int, warm *mat.Dense, whole bool) (eigen.Result, error) {
	needed := func(x *mat.Dense, theta []float64) int { return p.neededVectors(x, theta, nev) }
	check := eigen.Settings{Tol: p.params.Tolerance, MaxIter: -1, Needed: needed}
	seed, done := warm, 0
	if seed == nil {
		seed = p.labelBlock(aff, block)
	}
	if !whole {
		if diffused := diffuse(aff, u0, mat.DenseCopyOf(seed), srOrthoEvery); diffused != nil {
			seed, done = diffused, srOrthoEvery
		}
	}
	for ; ; done += srOrthoEvery {
		res, err := eigen.TopEigen(ctx, aff, u0, nev, block, seed, check)
		if err != nil || res.Converged {
			return res, err
		}
		if done < srDiffusions {
			seed = diffuse(aff, u0, res.Vectors, srOrthoEvery)
		}
		if done == srDiffusions || seed == nil {
			return eigen.TopEigen(ctx, aff, u0, nev, block, res.Vectors, eigen.Settings{Tol: check.Tol, Needed: needed})
		}
	}
}

// denseTopEigen solves the eigenproblem of S densely, with the trivial
// vector pushed to the bottom of the spectrum (S - 3·u0u0ᵀ; S's spectrum
// lies in [-1, 1]).
func denseTopEigen(aff *srAffinity, u0 []float64, block int) eigen.Result {
	s := aff.dense()
	n := aff.Dim()
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, s.At(i, j)-3*u0[i]*u0[j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(s, true) {
		panic("online: dense eigendecomposition of a finite matrix failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	x := mat.NewDense(n, block, nil)
	res := eigen.Result{Values: make([]float64, block), Vectors: x, Converged: true}
	for k := range block {
		src := n - 1 - k
		res.Values[k] = vals[src]
		for i := range n {
			x.Set(i, k, vecs.At(i, src))
		}
	}
	return res
}

// The eigensolver's start, cold (label indicators) or warm (the last
// solve's block), first goes through up to srDiffusions products with S
// (subspace iteration, with a Rayleigh–Ritz step and a convergence check
// every srOrthoEvery products): a product costs a fraction of an LOBPCG
// iteration, and they damp what lies outside the leading eigenspace, so
// that a cold or warm start then needs far fewer LOBPCG iterations, with
// the same classes (the eigensolver iterations of `streamer bench solve
// --classes` in docs/RESULTS.md).
const (
	srDiffusions = 40
	srOrthoEvery = 10
)

// labelBlock returns a cold start for the eigensolver: one column per
// labeled class, its labeled rows' indicator (scaled by D^{1/2}, as S's
// eigenvectors are, which is where the label block puts the leading
// ones); the other columns are left zero, to be filled at random.
func (p *srProblem) labelBlock(aff *srAffinity, block int) *mat.Dense {
	x := mat.NewDense(aff.Dim(), block, nil)
	for col, k := range p.present[:min(len(p.present), block)] {
		for _, i := range aff.members[k] {
			if s := aff.invSqrt[i]; s > 0 {
				x.Set(int(i), col, 1/s)
			}
		}
	}
	return x
}

// diffuse returns x, its all-zero columns filled at random, after products
// products with S, orthonormalized with u0 projected out every
// srOrthoEvery of them; nil when the block loses its rank. x may be
// changed.
func diffuse(aff *srAffinity, u0 []float64, x *mat.Dense, products int) *mat.Dense {
	n, block := x.Dims()
	eigen.FillRandom(x, 1)
	for done := 0; done < products; done += srOrthoEvery {
		if x = eigen.OrthonormalBasis(x, u0, nil); x == nil || blockCols(x) < block {
			return nil
		}
		y := mat.NewDense(n, block, nil)
		for range min(srOrthoEvery, products-done) {
			aff.MulBlock(y, x)
			x, y = y, x
		}
	}
	return x
}

// warmBlock returns the starting block from prev's warm state: the rows
// still in the window keep their values, new rows take the weighted mean
// of their neighbours' (0 when none is known); whole reports that no row
// was new. It returns nil without a usable warm state.
func (p *srProblem) warmBlock(aff *srAffinity, sp *State, block int) (x *mat.Dense, whole bool) {
	if sp == nil || sp.Block != block {
		return nil, false
	}
	at := sp.rowOf()
	n := aff.Dim()
	x = mat.NewDense(n, block, nil)
	known := make([]bool, n)
	found := 0
	for i := range n {
		if r, ok := at[p.key(i)]; ok {
			copy(x.RawRowView(i), sp.Vectors[r*block:(r+1)*block])
			known[i] = true
			found++
		}
	}
	if found == 0 {
		return nil, false
	}
	fillFromNeighbours(aff, x, known)
	return x, found == n
}

func (p *srProblem) key(row int) uint64 {
	if p.data.Keys == nil {
		return uint64(row)
	}
	return p.data.Keys[row]
}

// fillFromNeighbours sets each unknown row of x to the weighted mean of its
// known neighbours along the kNN edges, taken where the responses live,
// D^{-1/2}x (x_i = d_i^{1/2} Σ_j w_ij d_j^{-1/2} x_j / Σ_j w_ij): the
// eigen-equation θ y_i = Σ_j w_ij y_j / d_i with θ near 1. Averaging x
// itself, whose rows carry d^{1/2}, leaves a larger first residual after
// a slide.
func fillFromNeighbours(aff *srAffinity, x *mat.Dense, known []bool) {
	for i := range aff.n {
		if known[i] {
			continue
		}
		row := x.RawRowView(i)
		var total float64
		js, ws := aff.neighbours(i)
		for k, j := range js {
			if known[j] {
				linalg.Axpy(row, ws[k]*aff.invSqrt[j], x.RawRowView(int(j)))
				total += ws[k]
			}
		}
		if total > 0 && aff.invSqrt[i] > 0 {
			floatsScaleTo(row, 1/(total*aff.invSqrt[i]), row)
		}
	}
}

// alignBlock rotates the first nev columns of x, within their span, to be
// as close as possible to warm's (orthogonal Procrustes). Any orthonormal
// basis of the wanted eigenspace gives the same classifier, since nearest
// centroids are invariant under rotations of the embedding; aligning it
// keeps the responses, and so the warm-started regressions, stable from
// one solve to the next.
func alignBlock(x, warm *mat.Dense, nev int) {
	n, _ := x.Dims()
	xs := mat.DenseCopyOf(x.Slice(0, n, 0, nev))
	ws := warm.Slice(0, n, 0, nev)
	m := mat.NewDense(nev, nev, nil)
	m.Mul(xs.T(), ws)
	var svd mat.SVD
	if !svd.Factorize(m, mat.SVDFull) {
		return
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	q := mat.NewDense(nev, nev, nil)
	q.Mul(&u, v.T())
	rot := mat.NewDense(n, nev, nil)
	rot.Mul(xs, q)
	for i := range n {
		copy(x.RawRowView(i)[:nev], rot.RawRowView(i))
	}
}

// responses returns y_k = D^{-1/2} v_k for the first nev eigenvectors: the
// generalized eigenvectors of W y = μ D y.
func (p *srProblem) responses(aff *srAffinity, v *mat.Dense, nev int) [][]float64 {
	n := aff.Dim()
	ys := make([][]float64, nev)
	for k := range ys {
		ys[k] = make([]float64, n)
		for i := range n {
			ys[k][i] = aff.invSqrt[i] * v.At(i, k)
		}
	}
	return ys
}

// regressions sets m's problems to the ridge regressions of the responses:
// all at once through the shared factor on a dense window, else all at
// once in the dual by block CG, warm-started from prev's duals.
func (p *srProblem) regressions(ctx context.Context, m *model.Model, responses [][]float64, warm *State, factor *sharedFactor) error {
	sols, ok, err := p.ridgeShared(responses, factor)
	if err != nil {
		return fmt.Errorf("sr regressions: %w", err)
	}
	if ok {
		copy(m.Problems, sols)
		return nil
	}
	if sols, err = p.ridgeBlock(ctx, responses, warm); err != nil {
		return fmt.Errorf("sr regressions: %w", err)
	}
	copy(m.Problems, sols)
	return nil
}

// warmDuals returns the start of the dual system of ridgeBlock (n × r,
// row-major): prev's dual coefficients c_i divided by √C_i for the rows
// still in the window, 0 for the rows that entered since, and for every
// row when prev kept no duals for as many responses. On an unchanged
// window it is prev's solution, which needs no iteration.
func (p *srProblem) warmDuals(sp *State, responses int, scale []float64) []float64 {
	n := len(p.class)
	v := make([]float64, n*responses)
	if sp == nil || sp.Responses != responses || sp.Duals == nil {
		return v
	}
	at := sp.rowOf()
	for i := range n {
		r, ok := at[p.key(i)]
		if !ok || scale[i] == 0 {
			continue
		}
		for k := range responses {
			v[i*responses+k] = sp.Duals[r*responses+k] / scale[i]
		}
	}
	return v
}

// centroids returns each class's mean embedding over its labeled rows
// (z, from labeledEmbedding); a class without a labeled row in the window
// has none (nil).
func (p *srProblem) centroids(rows []int, z [][]float64) [][]float64 {
	cs := make([][]float64, len(p.classes))
	count := make([]float64, len(p.classes))
	for j, i := range rows {
		c := p.class[i]
		if cs[c] == nil {
			cs[c] = make([]float64, len(z[j]))
		}
		linalg.Axpy(cs[c], 1, z[j])
		count[c]++
	}
	for c := range cs {
		if cs[c] != nil {
			floatsScaleTo(cs[c], 1/count[c], cs[c])
		}
	}
	return cs
}

// labeledEmbedding returns the labeled rows of the window and their
// embeddings z = Aᵀx under m's regression weights.
func labeledEmbedding(m *model.Model, data Problem) ([]int, [][]float64) {
	var rows []int
	for i, l := range data.Labels {
		if l != "" {
			rows = append(rows, i)
		}
	}
	z := make([][]float64, len(rows))
	for j := range z {
		z[j] = make([]float64, len(m.Problems))
	}
	space := linalg.NewColumnSpace(data.X)
	d := data.X.Cols()
	out := make([]float64, len(rows))
	for k := range m.Problems {
		w := space.Compact(m.Problems[k].W)
		data.X.MulVec(out, rows, w[:d])
		for j := range rows {
			z[j][k] = out[j] + w[d]
		}
	}
	return rows, z
}

// calibrateCentroids fits one Platt sigmoid per class, class against the
// rest, on the centroid scores of the labeled rows.
func calibrateCentroids(m *model.Model, rows []int, z [][]float64, labels []string) []model.Platt {
	scores := make([][]float64, len(rows))
	for j := range rows {
		scores[j] = make([]float64, len(m.Classes))
		m.CentroidScores(z[j], scores[j])
	}
	cal := make([]model.Platt, len(m.Classes))
	out := make([]float64, len(rows))
	ys := make([]float64, len(rows))
	for c, name := range m.Classes {
		for j, i := range rows {
			out[j] = scores[j][c]
			ys[j] = -1
			if labels[i] == name {
				ys[j] = 1
			}
		}
		cal[c] = model.FitPlatt(out, ys)
	}
	return cal
}

// spectralState keeps the eigensolver's block by row key for the next
// solve's warm start.
func (p *srProblem) spectralState(v *mat.Dense) *State {
	n, b := v.Dims()
	sp := &State{Keys: make([]uint64, n), Vectors: make([]float64, 0, n*b), Block: b, gram: p.gram}
	for i := range n {
		sp.Keys[i] = p.key(i)
		sp.Vectors = append(sp.Vectors, v.RawRowView(i)...)
	}
	if p.duals != nil {
		sp.Duals, sp.Responses = p.duals, len(p.duals)/n
	}
	return sp
}

// blockCols returns the number of columns of the block m.
func blockCols(m *mat.Dense) int {
	_, c := m.Dims()
	return c
}
