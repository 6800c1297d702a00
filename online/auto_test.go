package online

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/synth"
)

// TestChooseAuto checks auto's choice: sr for several classes on a graph
// that follows the labels, tsvm for two classes, without a graph, and on a
// graph whose edges ignore the labels, svm while it cannot tell.
func TestChooseAuto(t *testing.T) {
	clustered, _, _ := srData(t, 600, 6, 5, 0.2, 4)
	binary, _, _ := srData(t, 600, 6, 2, 0.2, 4)
	shuffled, _, _ := srData(t, 600, 6, 5, 0.2, 4)
	r := rand.New(rand.NewPCG(1, 2))
	for i, l := range shuffled.Labels {
		if l != "" {
			shuffled.Labels[i] = fmt.Sprint(r.IntN(5))
		}
	}
	noGraph := clustered
	noGraph.Graph = nil
	fewLabels, _, _ := srData(t, 600, 6, 5, 0, 4) // two labels a class: too few neighbours to judge
	for _, tt := range []struct {
		name string
		data TrainData
		want Algorithm
	}{
		{"clustered, 5 classes", clustered, SR},
		{"two classes", binary, TSVM},
		{"labels independent of the graph", shuffled, TSVM},
		{"no graph", noGraph, TSVM},
		{"too few labeled neighbours to tell", fewLabels, SVM},
	} {
		if got := chooseAuto(tt.data); got != tt.want {
			same, edges := Homophily(tt.data.Graph, tt.data.Labels)
			t.Errorf("%s: auto chose %s, want %s (%d of %d labeled edges agree)", tt.name, got, tt.want, same, edges)
		}
	}
}

// TestAutoGrowsGraphOnThirdClass checks that a learner on auto keeps a
// plain window while the labels name two classes (tsvm, no graph), and
// grows the kNN graph and solves with sr once a third class is labeled.
func TestAutoGrowsGraphOnThirdClass(t *testing.T) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 900, Dim: 6, Clusters: 3, Spread: 0.5, Seed: 9})
	l, err := NewLearner(LearnerConfig{
		Features: 6, Window: anngraph.Config{MaxExamples: 2000, K: 8, Metric: anngraph.Euclidean, Exhaustive: true},
		Params: Params{Algorithm: Auto}, SolveExamples: 1 << 30, SolveLabels: 1 << 30,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(0, 0)
	observe := func(i int, labeled bool) {
		label := ""
		if labeled {
			label = fmt.Sprint(cs[i])
		}
		if _, err := l.Observe(fmt.Sprint(i), ts.Add(time.Duration(i)*time.Second), xs[i], label); err != nil {
			t.Fatal(err)
		}
	}
	for i := range xs {
		observe(i, cs[i] != 2 && i%10 == 0) // labels of classes 0 and 1 only
	}
	rep, err := l.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, plain := l.window.(*plainWindow); !plain || rep.Algorithm != TSVM {
		t.Fatalf("two classes: window plain = %v, algorithm %s; want a plain window and tsvm", plain, rep.Algorithm)
	}
	for i := range xs {
		if cs[i] == 2 && i%10 == 0 {
			l.Label(fmt.Sprint(i), "2")
		}
	}
	rep, err = l.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, graph := l.window.(graphWindow); !graph || rep.Algorithm != SR || rep.Window != len(xs) {
		t.Fatalf("three classes: window graph = %v, algorithm %s, window %d; want the graph, sr and %d rows", graph, rep.Algorithm, rep.Window, len(xs))
	}
}
