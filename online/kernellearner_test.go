package online

import (
	"context"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/online/kernel"
	"streamer/online/train"
	"streamer/synth"
)

// TestLearnerKeepsItsKernelMap checks that a learner with a kernel draws
// its landmarks at the first solve, keeps the same map at the next ones,
// and scores through it.
func TestLearnerKeepsItsKernelMap(t *testing.T) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 300, Dim: 5, Clusters: 3, Spread: 0.4, Seed: 3})
	l, err := NewLearner(LearnerConfig{
		Features: 5, Window: anngraph.Config{MaxExamples: 200, K: 5},
		Params: train.Params{Algorithm: train.SVM, Lambda: 1e-4}, Kernel: kernel.Config{Kind: "rbf", Landmarks: 50},
	})
	if err != nil {
		t.Fatal(err)
	}
	var first *kernel.Map
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
		m := l.InForce().Model
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
