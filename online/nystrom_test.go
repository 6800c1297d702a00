package online

import (
	"context"
	"math"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/synth"
	"streamer/vector"
)

// TestKernelMapIsExactOnLandmarks checks φ(x_i)·φ(x_j) = k(x_i, x_j) when
// every row is a landmark, for dense and sparse rows.
func TestKernelMapIsExactOnLandmarks(t *testing.T) {
	dense, _ := synth.Gaussians(3, 40, 5, 1)
	sparse, _ := sparseProblem(7, 40, 60, 5, 10)
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
