package kernel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"streamer/online/internal/onlinetest"
	"streamer/synth"
	"streamer/vector"
)

// TestKernelMapIsExactOnLandmarks checks φ(x_i)·φ(x_j) = k(x_i, x_j) when
// every row is a landmark, for dense and sparse rows.
func TestKernelMapIsExactOnLandmarks(t *testing.T) {
	dense, _ := synth.Gaussians(3, 40, 5, 1)
	sparse, _ := onlinetest.SparseProblem(7, 40, 60, 5, 10)
	for name, rows := range map[string][]vector.Vector{"dense": dense, "sparse": sparse} {
		km, err := NewMap(rows, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		phi, err := km.ApplyAll(context.Background(), rows)
		if err != nil {
			t.Fatal(err)
		}
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
	km, err := NewMap(landmarks, 0.5)
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
	km, err := NewMap(landmarks, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	if km.Rank != len(rows) || len(km.Landmarks) != len(rows) {
		t.Fatalf("rank %d over %d landmarks kept, want %d distinct", km.Rank, len(km.Landmarks), len(rows))
	}
	phi, err := km.ApplyAll(context.Background(), landmarks)
	if err != nil {
		t.Fatal(err)
	}
	for i := range landmarks {
		for j := range landmarks {
			want := math.Exp(-0.3 * vector.SquaredDistance(landmarks[i], landmarks[j]))
			if got := vector.Dot(phi[i], phi[j]); math.Abs(got-want) > 1e-8 {
				t.Fatalf("φ(x_%d)·φ(x_%d) = %v, kernel %v", i, j, got, want)
			}
		}
	}
	restored, err := RestoreMap(km.Landmarks, km.Gamma, km.Projection, km.Rank)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := RestoreMap(km.Landmarks, km.Gamma, rotateColumns(km.Projection, km.Rank), km.Rank)
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
	km, err := NewMap(rows[:30], 0)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := RestoreMap(km.Landmarks, km.Gamma, km.Projection, km.Rank)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*Map{"fitted": km, "restored": restored} {
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
	km, err = NewMap(dense, 0)
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
		km, err := NewMap(SampleLandmarks(rows, m, 1), 0)
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

func checkMedianGamma(t *testing.T, km *Map) {
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

// BenchmarkKernelMap fits the map of 1,000 landmarks of 64 values (fit) and
// maps 1,000 other rows through it (apply), as a learner's first kernel
// solve does with its window; then takes the kernel values of 1,000
// text-like rows (80 words, Zipfian) at 1,000 such landmarks through the
// inverted index and by merging the row with each landmark.
func BenchmarkKernelMap(b *testing.B) {
	benchmarkDenseKernelMap(b)
	text := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 2000, Seed: 3}).Rows
	km, err := NewMap(text[:1000], 0)
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
			if _, err := NewMap(rows[:1000], 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	km, err := NewMap(rows[:1000], 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("apply", func(b *testing.B) {
		for b.Loop() {
			if _, err := km.ApplyAll(context.Background(), rows[1000:]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestApplyAllStopsOnCancel: a done context stops the mapping, on one
// goroutine and on several, with its error and no rows.
func TestApplyAllStopsOnCancel(t *testing.T) {
	rows, _ := synth.Gaussians(3, 800, 5, 1)
	km, err := NewMap(rows[:100], 0.3)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, n := range []int{10, len(rows)} { // 10 × 100 products: one goroutine
		phi, err := km.ApplyAll(ctx, rows[:n])
		if !errors.Is(err, context.Canceled) || phi != nil {
			t.Errorf("%d rows: %d mapped, err = %v; want none and context.Canceled", n, len(phi), err)
		}
	}
}
