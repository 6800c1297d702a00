package online

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"streamer/anngraph"
	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
	"streamer/synth"
	"streamer/vector"
)

// TestKernelMapIsExactOnLandmarks checks φ(x_i)·φ(x_j) = k(x_i, x_j) when
// every row is a landmark, for dense and sparse rows.
func TestKernelMapIsExactOnLandmarks(t *testing.T) {
	dense, _ := synth.Gaussians(3, 40, 5, 1)
	sparse, _ := onlinetest.SparseProblem(7, 40, 60, 5, 10)
	for name, rows := range map[string][]vector.Vector{"dense": dense, "sparse": sparse} {
		km, err := NewKernelMap(rows, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		phi := km.ApplyAll(rows)
		for i := range rows {
			for j := range rows {
				want := math.Exp(-0.3 * vector.SquaredDistance(rows[i], rows[j]))
				if got := vector.Dot(phi[i], phi[j]); math.Abs(got-want) > 1e-8 {
					t.Fatalf("%s: φ(x_%d)·φ(x_%d) = %v, kernel %v", name, i, j, got, want)
				}
			}
		}
	}
}

// TestKernelMapIsNystrom checks the map off the landmarks against a dense
// reference: φ(x)·φ(z) = k(x)ᵀ K_mm⁻¹ k(z), K_mm solved by gonum's LU.
func TestKernelMapIsNystrom(t *testing.T) {
	rows, _ := synth.Clusters(synth.ClusterConfig{Points: 60, Dim: 3, Clusters: 4, Seed: 5})
	landmarks, probes := rows[:25], rows[25:]
	km, err := NewKernelMap(landmarks, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if km.Rank != len(landmarks) {
		t.Fatalf("rank %d over %d distinct landmarks", km.Rank, len(landmarks))
	}
	kernels := func(x vector.Vector) *mat.VecDense {
		k := mat.NewVecDense(len(landmarks), nil)
		for i, z := range landmarks {
			k.SetVec(i, math.Exp(-0.5*vector.SquaredDistance(x, z)))
		}
		return k
	}
	kmm := mat.NewDense(len(landmarks), len(landmarks), nil)
	for i, z := range landmarks {
		kmm.SetRow(i, kernels(z).RawVector().Data)
	}
	for i, x := range probes {
		var sol mat.VecDense
		if err := sol.SolveVec(kmm, kernels(x)); err != nil {
			t.Fatal(err)
		}
		for j, z := range probes {
			want := mat.Dot(kernels(z), &sol)
			if got := vector.Dot(km.Apply(x), km.Apply(z)); math.Abs(got-want) > 1e-7 {
				t.Fatalf("φ(x_%d)·φ(x_%d) = %v, Nyström %v", i, j, got, want)
			}
		}
	}
}

// TestKernelMapDropsRepeatedLandmarks checks that landmarks the others
// span (here, copies) are dropped, that the map stays exact on every row,
// and that a restored map (square and triangular, or a rotation of it)
// maps as the fitted one.
func TestKernelMapDropsRepeatedLandmarks(t *testing.T) {
	rows, _ := synth.Gaussians(3, 20, 4, 1)
	landmarks := slices.Concat(rows, rows[:7], rows[3:5])
	km, err := NewKernelMap(landmarks, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	if km.Rank != len(rows) || len(km.Landmarks) != len(rows) {
		t.Fatalf("rank %d over %d landmarks kept, want %d distinct", km.Rank, len(km.Landmarks), len(rows))
	}
	phi := km.ApplyAll(landmarks)
	for i := range landmarks {
		for j := range landmarks {
			want := math.Exp(-0.3 * vector.SquaredDistance(landmarks[i], landmarks[j]))
			if got := vector.Dot(phi[i], phi[j]); math.Abs(got-want) > 1e-8 {
				t.Fatalf("φ(x_%d)·φ(x_%d) = %v, kernel %v", i, j, got, want)
			}
		}
	}
	restored, err := RestoreKernelMap(km.Landmarks, km.Gamma, km.Projection, km.Rank)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := RestoreKernelMap(km.Landmarks, km.Gamma, rotateColumns(km.Projection, km.Rank), km.Rank)
	if err != nil {
		t.Fatal(err)
	}
	if !restored.upper || rotated.upper {
		t.Fatalf("triangular projection read as upper %v, rotated one %v", restored.upper, rotated.upper)
	}
	for i, x := range landmarks {
		if got, want := restored.Apply(x), phi[i]; !slices.Equal(got.Values, want.Values) {
			t.Fatalf("restored φ(x_%d) = %v, fitted %v", i, got.Values, want.Values)
		}
		if got, want := rotated.Apply(x).SquaredNorm(), phi[i].SquaredNorm(); math.Abs(got-want) > 1e-9 {
			t.Fatalf("rotated ‖φ(x_%d)‖² = %v, fitted %v", i, got, want)
		}
	}
}

// rotateColumns returns the r-column projection p times a rotation by 0.3
// in the plane of its first and last columns.
func rotateColumns(p []float64, r int) []float64 {
	out := slices.Clone(p)
	c, s := math.Cos(0.3), math.Sin(0.3)
	for i := 0; i < len(p); i += r {
		a, b := p[i], p[i+r-1]
		out[i], out[i+r-1] = c*a-s*b, s*a+c*b
	}
	return out
}

// TestLandmarkIndexGivesTheDots checks that a sparse row's products with
// sparse landmarks through the inverted index are vector.Dot's to the bit,
// rows and landmarks sharing some features and not others, and that a
// restored map indexes its landmarks as well.
func TestLandmarkIndexGivesTheDots(t *testing.T) {
	rows, _ := onlinetest.SparseProblem(9, 80, 50, 6, 10)
	rows = append(rows, vector.Sparse([]int32{49, 60, 900}, []float64{1, -2, 3}), vector.Sparse(nil, nil))
	km, err := NewKernelMap(rows[:30], 0)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := RestoreKernelMap(km.Landmarks, km.Gamma, km.Projection, km.Rank)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*KernelMap{"fitted": km, "restored": restored} {
		if m.index == nil {
			t.Fatalf("%s: sparse landmarks without an index", name)
		}
		for i, x := range rows {
			dots := m.products(x, nil)
			for j, z := range m.Landmarks {
				if want := vector.Dot(x, z); dots[j] != want {
					t.Fatalf("%s: row %d · landmark %d = %v through the index, %v by vector.Dot", name, i, j, dots[j], want)
				}
			}
		}
	}
	dense, _ := synth.Gaussians(3, 10, 2, 1)
	km, err = NewKernelMap(dense, 0)
	if err != nil {
		t.Fatal(err)
	}
	if km.index != nil {
		t.Fatal("dense landmarks indexed")
	}
}

// TestKernelMapApproximatesWithMoreLandmarks checks Nyström's property on
// points that are not landmarks: the error of the kernel it reproduces
// falls as landmarks are added, and the median heuristic sets γ.
func TestKernelMapApproximatesWithMoreLandmarks(t *testing.T) {
	rows, _ := synth.Clusters(synth.ClusterConfig{Points: 400, Dim: 4, Clusters: 5, Seed: 2})
	probe, _ := synth.Clusters(synth.ClusterConfig{Points: 40, Dim: 4, Clusters: 5, Seed: 2})
	last := math.Inf(1)
	for _, m := range []int{10, 50, 200} {
		km, err := NewKernelMap(SampleLandmarks(rows, m, 1), 0)
		if err != nil {
			t.Fatal(err)
		}
		if m == 10 {
			checkMedianGamma(t, km)
		}
		var worst float64
		for i := range probe {
			for j := range probe {
				want := math.Exp(-km.Gamma * vector.SquaredDistance(probe[i], probe[j]))
				worst = max(worst, math.Abs(vector.Dot(km.Apply(probe[i]), km.Apply(probe[j]))-want))
			}
		}
		t.Logf("%d landmarks: largest kernel error %.2e", m, worst)
		if worst >= last {
			t.Errorf("%d landmarks: error %v did not fall below %v", m, worst, last)
		}
		last = worst
	}
	if last > 0.05 {
		t.Errorf("200 landmarks reproduce the kernel only to %v", last)
	}
}

func checkMedianGamma(t *testing.T, km *KernelMap) {
	t.Helper()
	var below, above int
	for i := range km.Landmarks {
		for j := range i {
			d := vector.SquaredDistance(km.Landmarks[i], km.Landmarks[j])
			switch {
			case d < 1/km.Gamma-1e-9:
				below++
			case d > 1/km.Gamma+1e-9:
				above++
			}
		}
	}
	if d := below - above; d < -1 || d > 1 {
		t.Errorf("1/γ = %v is not the median squared distance: %d pairs below, %d above", 1/km.Gamma, below, above)
	}
}

// TestLearnerKeepsItsKernelMap checks that a learner with a kernel draws
// its landmarks at the first solve, keeps the same map at the next ones,
// and scores through it.
func TestLearnerKeepsItsKernelMap(t *testing.T) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 300, Dim: 5, Clusters: 3, Spread: 0.4, Seed: 3})
	l, err := NewLearner(LearnerConfig{
		Features: 5, Window: anngraph.Config{MaxExamples: 200, K: 5},
		Params: Params{Algorithm: SVM, Lambda: 1e-4}, Kernel: KernelConfig{Kind: "rbf", Landmarks: 50},
	})
	if err != nil {
		t.Fatal(err)
	}
	var first *KernelMap
	for i, x := range xs {
		label := ""
		if i%5 == 0 {
			label = string(rune('a' + cs[i]))
		}
		if _, err := l.Observe(string(rune(i+1000)), time.Unix(int64(i), 0), x, label); err != nil {
			t.Fatal(err)
		}
		if i%100 != 99 {
			continue
		}
		if _, err := l.Solve(context.Background()); err != nil {
			t.Fatal(err)
		}
		m, _ := l.Model()
		if m.Map == nil || len(m.Map.Landmarks) != 50 || m.Dim != m.Map.Dim() {
			t.Fatalf("model without the map of 50 landmarks: %+v", m.Map)
		}
		if first == nil {
			first = m.Map
		} else if m.Map != first {
			t.Fatal("a re-solve replaced the kernel map")
		}
	}
	ok := 0
	for i, x := range xs {
		p, m, _, _ := l.Predict(x)
		if m.Classes[p.Class] == string(rune('a'+cs[i])) {
			ok++
		}
	}
	// The clusters overlap: a linear model scores 0.82 on these rows.
	if acc := float64(ok) / float64(len(xs)); acc < 0.8 {
		t.Errorf("accuracy %.3f through the kernel map", acc)
	}
}

// TestLapSVMOverKernelMapIsKernelLapSVM checks the representer argument of
// MATH.md "Kernel feature maps" end to end: LapSVM solved by the linear
// solver over the map with every row a landmark has the outputs of the
// kernel LapSVM f = Kα + b solved densely in α (same objective: squared
// hinge over l, λ/2 (αᵀKα + b²), λ_I/2 · fᵀMf / s).
func TestLapSVMOverKernelMapIsKernelLapSVM(t *testing.T) {
	rows, ys := synth.Gaussians(5, 60, 4, 1)
	y := make([]float64, len(rows))
	for i := 0; i < len(rows); i += 6 {
		y[i] = ys[i]
	}
	for _, tt := range []struct {
		name    string
		gamma   float64
		lambdaI float64
		lap     anngraph.LaplacianConfig
	}{
		{"normalized, p = 2", 0.1, 1, anngraph.LaplacianConfig{Normalized: true, Degree: 2}},
		{"D - W, binary", 0.05, 0.3, anngraph.LaplacianConfig{Weights: anngraph.Binary}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lap := g50cGraph(t, rows, 6, tt.lap)
			params := Params{Algorithm: LapSVM, Lambda: 1e-3, LambdaI: tt.lambdaI, Tolerances: Tolerances{Epsilon: 1e-12}}
			km, err := NewKernelMap(rows, tt.gamma)
			if err != nil {
				t.Fatal(err)
			}
			if km.Rank != len(rows) {
				t.Fatalf("map of rank %d over %d rows: the kernel matrix lost directions", km.Rank, len(rows))
			}
			phi := km.ApplyAll(rows)
			sol, err := Solve(context.Background(), Problem{X: linalg.NewVectorRows(phi, km.Rank, 1), Y: y, Laplacian: lap}, params, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := denseKernelLapSVM(t, rows, y, tt.gamma, lap, params.Lambda, params.LambdaI)
			for i := range rows {
				got := phi[i].DotDense(sol.W) + sol.W[km.Rank]
				if math.Abs(got-want[i]) > 1e-6*(1+math.Abs(want[i])) {
					t.Fatalf("row %d: f = %v over the map, %v for the kernel machine", i, got, want[i])
				}
			}
		})
	}
}

// denseKernelLapSVM returns the outputs f = Kα + b of kernel LapSVM with
// squared hinge, by Newton's method on the active set with dense solves of
// the stationarity conditions (sufficient, as K multiplies the gradient in
// α): λα + (1/l) I_A (f − y) + (λ_I/s) M f = 0 and
// λb + (1/l) 1_Aᵀ(f − y) + (λ_I/s) 1ᵀ M f = 0.
func denseKernelLapSVM(t *testing.T, rows []vector.Vector, y []float64, gamma float64, lap Laplacian, lambda, lambdaI float64) []float64 {
	t.Helper()
	n := len(rows)
	k := mat.NewDense(n+1, n+1, nil) // [K 1]: f = k·(α, b)
	for i := range n {
		for j := range n {
			k.Set(i, j, math.Exp(-gamma*vector.SquaredDistance(rows[i], rows[j])))
		}
		k.Set(i, n, 1)
	}
	m := mat.NewDense(n, n, nil)
	e, b, col := make([]float64, n), make([]float64, lap.FactorRows()), make([]float64, n)
	for j := range n {
		clear(e)
		e[j] = 1
		lap.MulFactor(b, e)
		lap.MulFactorTrans(col, b)
		m.SetCol(j, col)
	}
	var l float64
	for _, v := range y {
		if v != 0 {
			l++
		}
	}
	kn := k.Slice(0, n, 0, n+1)
	var mk mat.Dense // M [K 1], n × (n+1)
	mk.Mul(m, kn)
	active := make([]bool, n)
	f := make([]float64, n)
	for range 100 {
		a := mat.NewDense(n+1, n+1, nil)
		rhs := make([]float64, n+1)
		for i := range n + 1 {
			a.Set(i, i, lambda)
		}
		// Rows 0..n-1: the α conditions; row n: the b condition, which is
		// the sum of the α rows' loss and graph parts.
		for i := range n {
			for j := range n + 1 {
				v := lambdaI / lap.Scale() * mk.At(i, j)
				if active[i] {
					v += k.At(i, j) / l
				}
				a.Set(i, j, a.At(i, j)+v)
				a.Set(n, j, a.At(n, j)+v)
			}
			if active[i] {
				rhs[i] += y[i] / l
				rhs[n] += y[i] / l
			}
		}
		var x mat.VecDense
		if err := x.SolveVec(a, mat.NewVecDense(n+1, rhs)); err != nil {
			t.Fatal(err)
		}
		changed := false
		for i := range n {
			f[i] = mat.Dot(k.RowView(i), &x)
			now := y[i] != 0 && y[i]*f[i] < 1
			changed = changed || now != active[i]
			active[i] = now
		}
		if !changed {
			return f
		}
	}
	t.Fatal("dense kernel LapSVM: the active set did not settle in 100 Newton steps")
	return nil
}

// TestFoldedScoresAreMappedScores: a packed model with a kernel map,
// which scores through weights carried over to the landmarks, scores
// every row as mapping it first does: binary, one-vs-rest and SR models,
// dense and sparse rows, rows the map has not seen; and a copy of it
// without the map scores the mapped rows so.
func TestFoldedScoresAreMappedScores(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dense, _ := synth.Clusters(synth.ClusterConfig{Points: 60, Dim: 6, Clusters: 3, Seed: 4})
	sparse, _ := onlinetest.SparseProblem(8, 60, 40, 5, 10)
	for name, rows := range map[string][]vector.Vector{"dense": dense, "sparse": sparse} {
		km, err := NewKernelMap(rows[:25], 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name       string
			p, classes int
			centroids  bool
		}{{"binary", 1, 2, false}, {"one-vs-rest", 5, 5, false}, {"SR", 6, 7, true}} {
			m := randomModel(r, tc.p, km.Dim(), tc.classes, tc.centroids)
			m.Map = km
			var want [][]float64
			for _, x := range rows {
				want = append(want, m.Scores(x, nil))
			}
			m.Pack()
			if m.folded == nil {
				t.Fatalf("%s, %s: Pack did not fold the weights", name, tc.name)
			}
			unmapped := m.overMappedRows() // as auto's trial scores rows mapped already
			for i, x := range rows {
				got := m.Scores(x, nil)
				if !slices.EqualFunc(got, want[i], func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }) {
					t.Fatalf("%s, %s, row %d: folded %v, mapped %v", name, tc.name, i, got, want[i])
				}
				if got := unmapped.Scores(km.Apply(x), nil); !slices.EqualFunc(got, want[i], func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }) {
					t.Fatalf("%s, %s, row %d: without the map %v, mapped %v", name, tc.name, i, got, want[i])
				}
			}
		}
	}
}

// TestFoldedSparseScoresConcurrently scores sparse rows through a folded
// map from several goroutines at once, as the service's scorers do: the
// buffers they share give each row the scores it gets alone.
func TestFoldedSparseScoresConcurrently(t *testing.T) {
	rows, _ := onlinetest.SparseProblem(10, 200, 60, 6, 10)
	km, err := NewKernelMap(rows[:40], 0)
	if err != nil {
		t.Fatal(err)
	}
	m := randomModel(rand.New(rand.NewPCG(3, 4)), 5, km.Dim(), 5, false)
	m.Map = km
	m.Pack()
	want := make([][]float64, len(rows))
	for i, x := range rows {
		want[i] = m.Scores(x, nil)
	}
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for k := range rows {
				i := (k + 50*w) % len(rows)
				if got := m.Scores(rows[i], nil); !slices.Equal(got, want[i]) {
					errs <- fmt.Errorf("row %d: %v beside other scorers, %v alone", i, got, want[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestFoldedScoresAllocations checks that folded scoring adds each
// kernel value into the outputs as it is computed: at most one allocation
// a row (the 12 problems' outputs), not a slice of m kernel values as well.
func TestFoldedScoresAllocations(t *testing.T) {
	rows, _ := synth.Clusters(synth.ClusterConfig{Points: 300, Dim: 8, Clusters: 4, Seed: 2})
	km, err := NewKernelMap(rows[:200], 0)
	if err != nil {
		t.Fatal(err)
	}
	m := randomModel(rand.New(rand.NewPCG(3, 4)), 12, km.Dim(), 10, true) // 10-class SR
	m.Map = km
	m.Pack()
	dst := make([]float64, 10)
	if allocs := testing.AllocsPerRun(20, func() { dst = m.Scores(rows[250], dst) }); allocs > 1 {
		t.Fatalf("folded Scores allocates %v times a row, want at most 1", allocs)
	}
}

// BenchmarkScoresKernel scores 64-value rows through a map of 1,000
// landmarks, by mapping each row (mapped) or through the weights carried
// over to the landmarks (folded): a 10-class SR model (12 problems) and
// a 10-class one-vs-rest one.
func BenchmarkScoresKernel(b *testing.B) {
	rows, _ := synth.Clusters(synth.ClusterConfig{Points: 3000, Dim: 64, Clusters: 10, Seed: 9})
	km, err := NewKernelMap(rows[:1000], 0)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name       string
		p, classes int
		centroids  bool
	}{{"sr-10", 12, 10, true}, {"ovr-10", 10, 10, false}} {
		for _, folded := range []bool{false, true} {
			m := randomModel(r, tc.p, km.Dim(), tc.classes, tc.centroids)
			m.Map = km
			if folded {
				m.Pack()
			}
			b.Run(fmt.Sprintf("%s/folded=%v", tc.name, folded), func(b *testing.B) {
				dst := make([]float64, tc.classes)
				i := 0
				for b.Loop() {
					dst = m.Scores(rows[1000+i%2000], dst)
					i++
				}
			})
		}
	}
}

// BenchmarkKernelMap fits the map of 1,000 landmarks of 64 values (fit) and
// maps 1,000 other rows through it (apply), as a learner's first kernel
// solve does with its window; then takes the kernel values of 1,000
// text-like rows (80 words, Zipfian) at 1,000 such landmarks through the
// inverted index and by merging the row with each landmark.
func BenchmarkKernelMap(b *testing.B) {
	benchmarkDenseKernelMap(b)
	text := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 2000, Seed: 3}).Rows
	km, err := NewKernelMap(text[:1000], 0)
	if err != nil {
		b.Fatal(err)
	}
	index := km.index
	for _, indexed := range []bool{true, false} {
		b.Run(fmt.Sprintf("text-kernels/index=%v", indexed), func(b *testing.B) {
			km.index = nil
			if indexed {
				km.index = index
			}
			var k []float64
			for b.Loop() {
				for _, x := range text[1000:] {
					k = km.kernels(x, k)
				}
			}
		})
	}
}

func benchmarkDenseKernelMap(b *testing.B) {
	rows, _ := synth.Clusters(synth.ClusterConfig{Points: 2000, Dim: 64, Clusters: 10, Seed: 9})
	b.Run("fit", func(b *testing.B) {
		for b.Loop() {
			if _, err := NewKernelMap(rows[:1000], 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	km, err := NewKernelMap(rows[:1000], 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("apply", func(b *testing.B) {
		for b.Loop() {
			km.ApplyAll(rows[1000:])
		}
	})
}
