package spectral

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"streamer/anngraph"
	"streamer/internal/testlevel"
	"streamer/online/eigen"
	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
	"streamer/synth"
	"streamer/vector"
)

// spectralData draws c Gaussian clusters in dim dimensions, labels a fraction of
// each class (at least two rows), and builds the exact kNN graph.
func spectralData(t testing.TB, n, dim, c int, labeledFrac float64, seed uint64) (Problem, []string, *anngraph.Laplacian) {
	t.Helper()
	xs, labels, truth := onlinetest.LabeledClusters(n, dim, c, labeledFrac, seed)
	lap := onlinetest.AnnLaplacian(t, xs, anngraph.Config{K: 8, Metric: anngraph.Euclidean, Exhaustive: true}, anngraph.LaplacianConfig{})
	return Problem{X: linalg.NewMatrix(xs, dim), Labels: labels, Graph: lap}, truth, lap
}

// classesOf returns the classes of labels in order of first appearance,
// as training numbers them.
func classesOf(labels []string) []string {
	var classes []string
	for _, l := range labels {
		if l != "" && !slices.Contains(classes, l) {
			classes = append(classes, l)
		}
	}
	return classes
}

// TestTopEigenMatchesDense checks LOBPCG's eigenpairs of the SR affinity
// against gonum's dense decomposition: the same eigenvalues, and the same
// invariant subspace (the projectors agree), on graphs with and without
// labels.
func TestTopEigenMatchesDense(t *testing.T) {
	for _, tt := range []struct {
		name  string
		n, c  int
		frac  float64
		delta float64
	}{
		{"unlabeled-heavy, 4 classes", 500, 4, 0.02, 0.1},
		{"many labels, 6 classes", 450, 6, 0.3, 0.5},
		{"binary", 400, 2, 0.05, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, _, lap := spectralData(t, tt.n, 5, tt.c, tt.frac, 3)
			classes := classesOf(data.Labels)
			p, err := newSRProblem(data, Settings{}.withDefaults(), classes)
			if err != nil {
				t.Fatal(err)
			}
			aff := newSRAffinity(lap, p.class, len(classes), tt.delta, 5)
			nev := len(classes) - 1
			got, err := eigen.TopEigen(context.Background(), aff, aff.trivialVector(), nev, nev+srGuard, nil, eigen.Settings{Tol: 1e-9, MaxIter: 2000})
			if err != nil || !got.Converged {
				t.Fatalf("not converged (%v) after %d iterations", err, got.Iters)
			}
			want := denseTopEigen(aff, aff.trivialVector(), nev+1)
			for k := range nev {
				if d := math.Abs(got.Values[k] - want.Values[k]); d > 1e-8 {
					t.Errorf("eigenvalue %d: %v, dense %v", k, got.Values[k], want.Values[k])
				}
			}
			if gap := want.Values[nev-1] - want.Values[nev]; gap < 1e-6 {
				t.Fatalf("no gap after the wanted eigenvalues (%v): the subspace is not defined", gap)
			}
			if d := projectorDistance(got.Vectors, want.Vectors, nev); d > 1e-6 {
				t.Errorf("invariant subspaces differ by %v", d)
			}
		})
	}
}

// TestSRAffinityKeepsThePNearest checks that SR's graph over a window's
// 8-NN graph with p neighbours is the one built over a p-NN graph of the
// same rows (the window's whole graph from p = 8 on): the same W and the
// same degrees, labels and the label block included.
func TestSRAffinityKeepsThePNearest(t *testing.T) {
	data, _, _ := spectralData(t, 300, 5, 4, 0.1, 13)
	rows, _ := synth.Clusters(synth.ClusterConfig{Points: 300, Dim: 5, Clusters: 4, Spread: 0.6, Seed: 13}) // spectralData's rows
	classes := classesOf(data.Labels)
	p, err := newSRProblem(data, Settings{}.withDefaults(), classes)
	if err != nil {
		t.Fatal(err)
	}
	graph := func(k int) *anngraph.Laplacian {
		return onlinetest.AnnLaplacian(t, rows, anngraph.Config{K: k, Metric: anngraph.Euclidean, Exhaustive: true}, anngraph.LaplacianConfig{Weights: anngraph.Binary})
	}
	window := graph(8)
	r := rand.New(rand.NewPCG(5, 6))
	src := mat.NewDense(len(rows), 3, nil)
	for i := range len(rows) {
		for j := range 3 {
			src.Set(i, j, r.NormFloat64())
		}
	}
	for _, nb := range []int{1, 3, 5, 8, 12} {
		got := newSRAffinity(window, p.class, len(classes), 0.3, nb)
		want := newSRAffinity(graph(min(nb, 8)), p.class, len(classes), 0.3, nb)
		if !slices.Equal(got.degrees(), want.degrees()) {
			t.Fatalf("p = %d: the degrees differ", nb)
		}
		a, b := mat.NewDense(len(rows), 3, nil), mat.NewDense(len(rows), 3, nil)
		got.MulBlock(a, src)
		want.MulBlock(b, src)
		if !mat.EqualApprox(a, b, 1e-12) {
			t.Fatalf("p = %d: the products with S differ", nb)
		}
	}
}

// projectorDistance returns max |(P_a - P_b)_ij| for the projectors on the
// first k columns of a and b.
func projectorDistance(a, b *mat.Dense, k int) float64 {
	n, _ := a.Dims()
	pa, pb := mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)
	sa, sb := a.Slice(0, n, 0, k), b.Slice(0, n, 0, k)
	pa.Mul(sa, sa.T())
	pb.Mul(sb, sb.T())
	pa.Sub(pa, pb)
	return mat.Norm(pa, math.Inf(1))
}

// TestSREigensolverSolvesTheResponses: the eigensolver holds to its
// tolerance only the columns the responses come from, and those are the
// dense decomposition's, picked as from it; the columns past them (in the
// bulk of the spectrum, where eigenvalues are close) may stop short, and
// neededVectors says which.
func TestSREigensolverSolvesTheResponses(t *testing.T) {
	testlevel.Long(t, "numerical; no concurrency to race")
	stoppedShort := 0 // columns looked at but not solved to the tolerance
	for _, seed := range []uint64{3, 4, 5} {
		data, _, lap := spectralData(t, 600, 5, 4, 0.05, seed)
		classes := classesOf(data.Labels)
		const tol = 1e-8
		p, err := newSRProblem(data, Settings{Tolerance: tol}.withDefaults(), classes)
		if err != nil {
			t.Fatal(err)
		}
		aff := newSRAffinity(lap, p.class, len(classes), 0.1, 5)
		nev := p.eigenCount(aff.Dim())
		if nev <= len(classes)-1 {
			t.Fatalf("seed %d: %d eigenvectors looked at, want more than c-1", seed, nev)
		}
		got, picked, err := p.eigenvectors(context.Background(), aff, nev, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := denseTopEigen(aff, aff.trivialVector(), nev+srGuard)
		wantPicked := p.responseCount(want.Values, nev)
		p.pickResponses(&want, nev, wantPicked)
		if picked != wantPicked {
			t.Fatalf("seed %d: %d responses, the dense decomposition gives %d", seed, picked, wantPicked)
		}
		if d := projectorDistance(got.Vectors, want.Vectors, picked); d > 1e-6 {
			t.Errorf("seed %d: the responses' subspace differs from the dense one by %v", seed, d)
		}
		needed := p.neededVectors(got.Vectors, got.Values, nev)
		ax := mat.NewDense(aff.Dim(), len(got.Values), nil)
		aff.MulBlock(ax, got.Vectors)
		norms := residualNorms(got.Vectors, ax, got.Values)
		for k, norm := range norms[:needed] {
			if norm > tol {
				t.Errorf("seed %d: column %d of the %d needed has residual %v > %v", seed, k, needed, norm, tol)
			}
		}
		if needed < picked {
			t.Errorf("seed %d: %d columns needed for %d responses", seed, needed, picked)
		}
		for _, norm := range norms[needed:nev] {
			if norm > tol {
				stoppedShort++
			}
		}
	}
	if stoppedShort == 0 {
		t.Error("every column looked at was solved to the tolerance: the test checks nothing of neededVectors")
	}
}

// TestSRResponsesAreGeneralizedEigenvectors checks the responses against
// the definition: W y = μ D y, yᵀ D y = 1, and yᵀ D 1 = 0.
func TestSRResponsesAreGeneralizedEigenvectors(t *testing.T) {
	data, _, lap := spectralData(t, 420, 4, 3, 0.05, 5)
	classes := classesOf(data.Labels)
	p, _ := newSRProblem(data, Settings{Tolerance: 1e-9}.withDefaults(), classes)
	aff := newSRAffinity(lap, p.class, len(classes), 0.1, 5)
	eig, _, err := p.eigenvectors(context.Background(), aff, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	ys := p.responses(aff, eig.Vectors, 2)
	deg := aff.degrees()
	for k, y := range ys {
		wy := mat.NewDense(len(y), 1, nil)
		aff.mulW(wy, mat.NewDense(len(y), 1, append([]float64(nil), y...)))
		var yDy, oneDy float64
		for i := range y {
			yDy += y[i] * deg[i] * y[i]
			oneDy += deg[i] * y[i]
		}
		mu := eig.Values[k]
		for i := range y {
			if d := math.Abs(wy.At(i, 0) - mu*deg[i]*y[i]); d > 1e-5 {
				t.Fatalf("response %d row %d: (Wy)_i = %v, μ(Dy)_i = %v", k, i, wy.At(i, 0), mu*deg[i]*y[i])
			}
		}
		if math.Abs(yDy-1) > 1e-8 || math.Abs(oneDy) > 1e-6 {
			t.Errorf("response %d: yᵀDy = %v (want 1), 1ᵀDy = %v (want 0)", k, yDy, oneDy)
		}
	}
}

// TestSRAllLabeledIsRegularizedDiscriminantAnalysis checks report §4.1:
// with every row labeled, the affinity is block-diagonal by class, the
// responses span the class indicators, and SR is ridge regression onto
// them (regularized discriminant analysis, SRDA). The reference builds
// the responses from the indicators and solves the ridge normal equations
// densely; distances in the embedding, which do not depend on the basis
// chosen for the responses, must agree.
func TestSRAllLabeledIsRegularizedDiscriminantAnalysis(t *testing.T) {
	for _, n := range []int{150, 360} { // dense eigensolver, then LOBPCG
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			data, truth, lap := spectralData(t, n, 6, 4, 0, 11)
			data.Labels = truth
			classes := classesOf(truth)
			set := Settings{Alpha: 0.5, Tolerance: 1e-11}.withDefaults()
			m, _, _, err := Solve(context.Background(), data, set, classes, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := newSRProblem(data, set, classes)
			aff := newSRAffinity(lap, p.class, len(classes), set.Delta, set.Neighbours)
			ref := rdaReference(data, p.class, len(classes), aff.degrees(), set.Alpha)
			probe, _ := synth.Clusters(synth.ClusterConfig{Points: 30, Dim: 6, Clusters: 4, Spread: 0.6, Seed: 99})
			for _, x := range probe {
				got := m.Scores(x, nil)
				want := ref.scores(x)
				for c := range got {
					if math.Abs(got[c]-want[c]) > 1e-6*(1+math.Abs(want[c])) {
						t.Fatalf("class %d: distance %v, reference %v", c, -got[c], -want[c])
					}
				}
			}
		})
	}
}

// rdaModel is the dense reference of SR with every row labeled.
type rdaModel struct {
	a         *mat.Dense // (d+1) × (c-1), bias last
	centroids [][]float64
	d         int
}

func rdaReference(data Problem, class []int, c int, deg []float64, alpha float64) rdaModel {
	n, d := data.X.Rows(), data.X.Cols()
	// D^{1/2}-scaled class indicators, minus the trivial vector,
	// orthonormalized: an orthonormal basis of S's eigenspace of 1 ⟂ u0.
	ind := mat.NewDense(n, c, nil)
	for i, k := range class {
		ind.Set(i, k, math.Sqrt(deg[i]))
	}
	u0 := make([]float64, n)
	for i := range u0 {
		u0[i] = math.Sqrt(deg[i])
	}
	scale := 1 / math.Sqrt(linalg.Dot(u0, u0))
	for i := range u0 {
		u0[i] *= scale
	}
	v := eigen.OrthonormalBasis(ind, u0, nil)
	_, nev := v.Dims()
	y := mat.NewDense(n, nev, nil)
	for i := range n {
		for k := range nev {
			y.Set(i, k, v.At(i, k)/math.Sqrt(deg[i]))
		}
	}
	xa := mat.NewDense(n, d+1, nil)
	for i := range n {
		row := make([]float64, d)
		data.X.MulTransVec(row, []int{i}, []float64{1})
		copy(xa.RawRowView(i), row)
		xa.Set(i, d, 1)
	}
	var g mat.Dense
	g.Mul(xa.T(), xa)
	for j := range d + 1 {
		g.Set(j, j, g.At(j, j)+alpha)
	}
	var rhs mat.Dense
	rhs.Mul(xa.T(), y)
	a := mat.NewDense(d+1, nev, nil)
	if err := a.Solve(&g, &rhs); err != nil {
		panic(err)
	}
	var z mat.Dense
	z.Mul(xa, a)
	m := rdaModel{a: a, d: d, centroids: make([][]float64, c)}
	count := make([]float64, c)
	for i, k := range class {
		if m.centroids[k] == nil {
			m.centroids[k] = make([]float64, nev)
		}
		for j := range nev {
			m.centroids[k][j] += z.At(i, j)
		}
		count[k]++
	}
	for k := range m.centroids {
		for j := range m.centroids[k] {
			m.centroids[k][j] /= count[k]
		}
	}
	return m
}

func (m rdaModel) scores(x vector.Vector) []float64 {
	_, nev := m.a.Dims()
	z := make([]float64, nev)
	for k := range nev {
		z[k] = m.a.At(m.d, k)
		for j, v := range x.Values {
			z[k] += v * m.a.At(j, k)
		}
	}
	out := make([]float64, len(m.centroids))
	for c, mu := range m.centroids {
		var d2 float64
		for k := range z {
			d2 += (z[k] - mu[k]) * (z[k] - mu[k])
		}
		out[c] = -math.Sqrt(d2)
	}
	return out
}

// TestRidgeBlockBoundsTheOutputs checks SR's regressions on a sparse
// window against a dense solve of each one's normal equations: on rows
// with more features than rows and a small ridge α (the regime of SR on
// text), every response's outputs end within eps·‖√C t‖ of the optimum's
// for every eps, a looser eps stops sooner, the duals reproduce the
// weights, the objective reported is the optimum's, and the same system solved one column at a time (the fallback
// when the block breaks down) lands within the same bound.
func TestRidgeBlockBoundsTheOutputs(t *testing.T) {
	rows, _ := onlinetest.SparseProblem(3, 80, 400, 6, 0)
	x := linalg.NewCSR(rows, 400, 1)
	r := rand.New(rand.NewPCG(3, 4))
	const responses, gamma, alpha = 3, 0.7, 1e-3
	ys := make([][]float64, responses)
	for k := range ys {
		ys[k] = make([]float64, len(rows))
		for i := range ys[k] {
			ys[k][i] = r.NormFloat64() / 9
		}
	}
	class := make([]int, len(rows))
	for i := range class {
		class[i] = -1 // unlabeled: cost γ², target y/γ
		if i < 20 {
			class[i] = i % 2
		}
	}
	problem := func(eps float64) *srProblem {
		params := Settings{Alpha: alpha, Gamma: gamma, Tolerance: eps / 10}
		return &srProblem{data: Problem{X: x}, params: params, class: class}
	}
	best := make([][]float64, responses) // the optimum's outputs, per response
	optimum := make([]float64, responses)
	for k, y := range ys {
		target, cost := make([]float64, len(y)), make([]float64, len(y))
		for i := range y {
			target[i], cost[i] = y[i], 1
			if class[i] < 0 {
				target[i], cost[i] = y[i]/gamma, gamma*gamma
			}
		}
		best[k], optimum[k] = denseRidge(x, target, cost, alpha)
	}
	d, space := x.Cols(), linalg.NewColumnSpace(x)
	// within checks compact weights w[k] (bias last); ‖√C t‖² is Σ y²,
	// as √C·t is y on every row.
	within := func(name string, eps float64, w [][]float64) {
		t.Helper()
		out := make([]float64, len(rows))
		for k := range w {
			x.MulVec(out, nil, w[k][:d])
			var dist, tt float64
			for i := range out {
				c := 1.0
				if class[i] < 0 {
					c = gamma * gamma
				}
				e := out[i] + w[k][d] - best[k][i]
				dist += c * e * e
				tt += ys[k][i] * ys[k][i]
			}
			if math.Sqrt(dist) > eps*math.Sqrt(tt) {
				t.Errorf("%s, eps %g, response %d: outputs %.3g from the optimum's, above %.3g", name, eps, k, math.Sqrt(dist), eps*math.Sqrt(tt))
			}
		}
	}
	iters := map[float64]int{}
	for _, eps := range []float64{1e-1, 1e-3, 1e-5} {
		p := problem(eps)
		sols, err := p.ridgeBlock(context.Background(), ys, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := make([][]float64, responses)
		for k := range w {
			w[k] = space.Compact(sols[k].W)
		}
		within("block", eps, w)
		iters[eps] = sols[0].Stats.CGLSIters
		checkDualsGiveWeights(t, x, p.duals, w)
		for k, sol := range sols {
			if f := sol.Stats.Objective; eps == 1e-5 && math.Abs(f-optimum[k]) > 1e-6*optimum[k] {
				t.Errorf("response %d: objective %.9g, optimum %.9g", k, f, optimum[k])
			}
		}
	}
	if iters[1e-1] >= iters[1e-5] {
		t.Errorf("eps 0.1 took %d block iterations, eps 1e-5 %d", iters[1e-1], iters[1e-5])
	}

	p := problem(1e-3)
	scale := p.rowScales()
	op := newDualRidge(x, scale, alpha, responses)
	v, rhs, tol := make([]float64, len(rows)*responses), make([]float64, len(rows)*responses), make([]float64, responses)
	for i := range rows {
		for k := range responses {
			rhs[i*responses+k] = ys[k][i]
			tol[k] += ys[k][i] * ys[k][i]
		}
	}
	for k := range tol {
		tol[k] = 1e-3 * math.Sqrt(tol[k])
	}
	if _, ok, err := solveColumns(context.Background(), op, v, rhs, tol, 10000); err != nil || !ok {
		t.Fatalf("column by column: converged %v, %v", ok, err)
	}
	a := op.weights(v)
	w := make([][]float64, responses)
	for k := range w {
		w[k] = make([]float64, d+1)
		for j := range w[k] {
			w[k][j] = a[j*responses+k]
		}
	}
	within("column by column", 1e-3, w)
}

// TestBiasDeflationKeepsTheResidual checks the identity the deflated
// solve's stopping rule relies on: for any V̂, the completed V has
// B − A·V equal to the projected system's residual, and the bias
// direction is in the projected operator's null space.
func TestBiasDeflationKeepsTheResidual(t *testing.T) {
	rows, _ := onlinetest.SparseProblem(4, 60, 300, 6, 0)
	x := linalg.NewCSR(rows, 300, 1)
	const s = 3
	r := rand.New(rand.NewPCG(4, 5))
	scale := make([]float64, len(rows))
	for i := range scale {
		scale[i] = 0.7
		if i%5 == 0 {
			scale[i] = 1
		}
	}
	op := newDualRidge(x, scale, 1e-3, s)
	d := newBiasDeflation(op)
	n := len(rows)
	v, b := make([]float64, n*s), make([]float64, n*s)
	for i := range v {
		v[i], b[i] = r.NormFloat64(), r.NormFloat64()
	}
	projected := d.project(b)
	av := make([]float64, n*s)
	d.apply(av, v)
	for i := range projected {
		projected[i] -= av[i]
	}
	d.complete(v, b)
	op.apply(av, v)
	var diff, norm2 float64
	for i := range av {
		res := b[i] - av[i]
		diff += (res - projected[i]) * (res - projected[i])
		norm2 += res * res
	}
	if math.Sqrt(diff) > 1e-9*math.Sqrt(norm2) {
		t.Errorf("residual of the completed solution differs from the projected one by %.3g (norm %.3g)", math.Sqrt(diff), math.Sqrt(norm2))
	}
	z := make([]float64, n*s)
	for i := range n {
		for k := range s {
			z[i*s+k] = scale[i]
		}
	}
	d.apply(av, z)
	if got, ref := linalg.Norm(av), linalg.Norm(d.w); got > 1e-9*ref {
		t.Errorf("the projected operator maps the bias direction to norm %.3g, A to %.3g", got, ref)
	}
}

// checkDualsGiveWeights checks that the compact weights w[k] (bias last)
// of every response are the rows summed with their dual coefficients
// (duals n × responses), the bias the coefficients' sum.
func checkDualsGiveWeights(t *testing.T, x *linalg.CSR, duals []float64, w [][]float64) {
	t.Helper()
	n, r := x.Rows(), len(w)
	c := make([]float64, n)
	a := make([]float64, x.Cols())
	for k, wk := range w {
		var bias float64
		for i := range c {
			c[i] = duals[i*r+k]
			bias += c[i]
		}
		x.MulTransVec(a, nil, c)
		a := append(a[:len(a):len(a)], bias)
		var diff, norm2 float64
		for j, v := range wk {
			diff += (v - a[j]) * (v - a[j])
			norm2 += v * v
		}
		if math.Sqrt(diff) > 1e-9*math.Sqrt(norm2) {
			t.Errorf("response %d: ‖a - Σ c_i x̃_i‖ = %.3g, ‖a‖ = %.3g", k, math.Sqrt(diff), math.Sqrt(norm2))
		}
	}
}

// TestFillFromNeighboursKeepsTheTrivialVector checks the warm start's fill
// of new rows on S's eigenvector of eigenvalue 1, D^{1/2}·1, whose
// response D^{-1/2}x is constant: the mean of the neighbours' responses
// gives each new row its exact value, however the degrees vary.
func TestFillFromNeighboursKeepsTheTrivialVector(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rows := make([]vector.Vector, 200)
	for i := range rows {
		v := make([]float64, 3)
		for j := range v {
			v[j] = rng.NormFloat64() * float64(1+i%3)
		}
		rows[i] = vector.Dense(v)
	}
	lap := onlinetest.AnnLaplacian(t, rows, anngraph.Config{K: 6, Metric: anngraph.Euclidean, Exhaustive: true}, anngraph.LaplacianConfig{})
	class := make([]int, len(rows))
	for i := range class {
		class[i] = -1
	}
	aff := newSRAffinity(lap, class, 1, 1, 6)
	want := aff.trivialVector()
	x := mat.NewDense(len(rows), 1, nil)
	known := make([]bool, len(rows))
	for i, v := range want {
		if known[i] = i%7 != 0; known[i] {
			x.Set(i, 0, v)
		}
	}
	fillFromNeighbours(aff, x, known)
	for i, v := range want {
		if got := x.At(i, 0); math.Abs(got-v) > 1e-12*math.Abs(v) {
			t.Fatalf("row %d (known %v): filled %v, want %v", i, known[i], got, v)
		}
	}
}

// TestRidgeBlockOnDenseMatchesSparse solves the same regressions over the
// same rows stored densely (the path of dense windows too wide for the
// shared Gram matrix) and sparsely: the weights agree to the tolerance.
func TestRidgeBlockOnDenseMatchesSparse(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n, d, responses = 120, 30, 2
	rows := make([]vector.Vector, n)
	for i := range rows {
		v := make([]float64, d)
		for j := range v {
			if r.IntN(3) == 0 {
				v[j] = r.NormFloat64()
			}
		}
		rows[i] = vector.Dense(v)
	}
	ys := make([][]float64, responses)
	for k := range ys {
		ys[k] = make([]float64, n)
		for i := range ys[k] {
			ys[k][i] = r.NormFloat64()
		}
	}
	class := make([]int, n)
	for i := range class {
		class[i] = -1
		if i%5 == 0 {
			class[i] = 0
		}
	}
	params := Settings{Alpha: 1e-2, Gamma: 0.5, Tolerance: 1e-9}
	weights := func(x linalg.Matrix) [][]float64 {
		p := &srProblem{data: Problem{X: x}, params: params, class: class}
		sols, err := p.ridgeBlock(context.Background(), ys, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := make([][]float64, responses)
		for k := range w {
			w[k] = sols[k].W
		}
		return w
	}
	dense, sparse := weights(linalg.NewDense(rows, d, 1)), weights(linalg.NewCSR(rows, d, 1))
	for k := range dense {
		if !onlinetest.CloseSlices(dense[k], sparse[k], 1e-6) {
			t.Errorf("response %d: dense weights %v, sparse %v", k, dense[k][:4], sparse[k][:4])
		}
	}
}

// TestSRResponseCount checks which eigenvectors past the first c-1 become
// responses: those before the widest gap in 1 - μ from the (c-1)-th on,
// the guard's value included, and all of them where every eigenvalue is
// degenerate.
func TestSRResponseCount(t *testing.T) {
	for _, tt := range []struct {
		name   string
		values []float64 // four looked at (two for the classes), then a guard
		want   int
	}{
		{"a gap after the classes", []float64{1, 0.999, 0.9, 0.85, 0.8}, 2},
		{"a wider gap after one more", []float64{1, 0.999, 0.998, 0.5, 0.4}, 3},
		{"the widest after the last wanted", []float64{1, 0.999, 0.998, 0.997, 0.5}, 4},
		{"all degenerate", []float64{1, 1 - 1e-15, 1 - 1e-12, 1 - 1e-9, 1}, 4},
		{"degenerate classes, a mode after", []float64{1, 1, 0.6, 0.6, 0.6}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &srProblem{present: []int{0, 1, 2}}
			if got := p.responseCount(tt.values, 4); got != tt.want {
				t.Errorf("responseCount(%v) = %d, want %d", tt.values, got, tt.want)
			}
		})
	}
}

// TestSRPicksResponsesThatCarryLabels checks that a leading eigenvector
// that is zero on every labeled row gives its place to the next one that
// carries labels, with its eigenvalue, and that a block whose leading
// columns all carry labels is left as it is.
func TestSRPicksResponsesThatCarryLabels(t *testing.T) {
	// Rows 0 and 1 are labeled; column 0 lives on rows 2-3 only.
	p := &srProblem{class: []int{0, 1, -1, -1, -1, -1}, labeled: 2}
	cols := [][]float64{
		{0, 0, 1, 1, 0, 0},
		{1, -1, 0, 0, 1, -1},
		{1, 1, 0, 0, -1, -1},
	}
	block := func(order ...int) *mat.Dense {
		v := mat.NewDense(6, len(order), nil)
		for to, from := range order {
			v.SetCol(to, cols[from])
		}
		return v
	}
	res := eigen.Result{Vectors: block(0, 1, 2), Values: []float64{1, 0.9, 0.8}}
	p.pickResponses(&res, 3, 2)
	if !mat.Equal(res.Vectors, block(1, 2, 0)) || !slices.Equal(res.Values, []float64{0.9, 0.8, 1}) {
		t.Errorf("picked %v, values %v; want columns 1, 2, 0", mat.Formatted(res.Vectors), res.Values)
	}
	res = eigen.Result{Vectors: block(1, 2, 0), Values: []float64{0.9, 0.8, 1}}
	p.pickResponses(&res, 3, 2)
	if !mat.Equal(res.Vectors, block(1, 2, 0)) {
		t.Errorf("a block whose leading columns carry labels was reordered: %v", mat.Formatted(res.Vectors))
	}
}

// residualNorms returns the norm of each column of A·x - x·diag(θ).
func residualNorms(x, ax *mat.Dense, theta []float64) []float64 {
	n, b := x.Dims()
	norms := make([]float64, b)
	for i := range n {
		xi, axi := x.RawRowView(i), ax.RawRowView(i)
		for k := range b {
			e := axi[k] - theta[k]*xi[k]
			norms[k] += e * e
		}
	}
	for k := range norms {
		norms[k] = math.Sqrt(norms[k])
	}
	return norms
}

// denseRidge returns the outputs o = Xw + b at the minimum of
// α/2 (‖w‖² + b²) + Σ_i c_i/2 (t_i - o_i)², and the minimum, by a dense
// solve of the normal equations (X̃ᵀCX̃ + αI) w̃ = X̃ᵀC t over X's columns
// and the bias.
func denseRidge(x linalg.Matrix, t, c []float64, alpha float64) ([]float64, float64) {
	n, d := x.Rows(), x.Cols()+1
	xh := mat.NewDense(n, d, nil)
	col := make([]float64, n)
	for j := range d - 1 {
		e := make([]float64, d-1)
		e[j] = 1
		x.MulVec(col, nil, e)
		xh.SetCol(j, col)
	}
	for i := range n {
		xh.Set(i, d-1, 1)
	}
	a := mat.NewSymDense(d, nil)
	rhs := mat.NewVecDense(d, nil)
	for i := range n {
		row := xh.RawRowView(i)
		for j := range d {
			rhs.SetVec(j, rhs.AtVec(j)+c[i]*t[i]*row[j])
			for k := j; k < d; k++ {
				a.SetSym(j, k, a.At(j, k)+c[i]*row[j]*row[k])
			}
		}
	}
	for j := range d {
		a.SetSym(j, j, a.At(j, j)+alpha)
	}
	var w mat.VecDense
	if err := w.SolveVec(a, rhs); err != nil {
		panic(err)
	}
	o := make([]float64, n)
	f := alpha / 2 * mat.Dot(&w, &w)
	for i := range n {
		o[i] = mat.Dot(xh.RowView(i), &w)
		e := t[i] - o[i]
		f += c[i] / 2 * e * e
	}
	return o, f
}

// TestSRStopsOnCancel: a solve whose context is done returns its error
// rather than a model, on a dense window (whose regressions go through
// the shared factor, computed beside the eigenvectors) as on a sparse one,
// and the factor stops summing its Gram matrix.
func TestSRStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dense, _, _ := spectralData(t, 400, 6, 3, 0.1, 4)
	sparse := dense
	rows := make([]vector.Vector, dense.X.Rows())
	for i := range rows {
		rows[i] = vector.Dense(slices.Clone(dense.X.(*linalg.Dense).Row(i)))
	}
	sparse.X = linalg.NewVectorRows(rows, 6, 1)
	for name, data := range map[string]Problem{"dense": dense, "sparse": sparse} {
		m, _, _, err := Solve(ctx, data, Settings{}, classesOf(data.Labels), nil)
		if !errors.Is(err, context.Canceled) || m != nil {
			t.Errorf("%s: model %v, err = %v; want none and context.Canceled", name, m != nil, err)
		}
	}
	p, err := newSRProblem(dense, Settings{}.withDefaults(), classesOf(dense.Labels))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.gramFor(ctx, dense.X.(*linalg.Dense), p.rowScales(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("the Gram matrix: err = %v, want context.Canceled", err)
	}
}
