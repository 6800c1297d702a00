package online

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/online/model"
	"streamer/online/train"
	"streamer/synth"
)

// TestAutoGrowsGraphOnThirdClass checks that a learner on auto keeps a
// plain window while the labels name two classes (tsvm, no graph), and
// grows the kNN graph and solves with sr once a third class is labeled.
func TestAutoGrowsGraphOnThirdClass(t *testing.T) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 900, Dim: 6, Clusters: 3, Spread: 0.5, Seed: 9})
	l, err := NewLearner(LearnerConfig{
		Features: 6, Window: anngraph.Config{MaxExamples: 2000, K: 8, Metric: anngraph.Euclidean, Exhaustive: true},
		Params: train.Params{Algorithm: train.Auto}, SolveExamples: 1 << 30, SolveLabels: 1 << 30,
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
	if _, plain := l.window.(*plainWindow); !plain || rep.Algorithm != train.TSVM {
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
	if _, graph := l.window.(graphWindow); !graph || rep.Algorithm != train.SR || rep.Window != len(xs) {
		t.Fatalf("three classes: window graph = %v, algorithm %s, window %d; want the graph, sr and %d rows", graph, rep.Algorithm, rep.Window, len(xs))
	}
}

// TestRestoredAutoModelIsNotSolvedAgain: a restart puts a multi-class
// auto model in force and rebuilds its window, as a plain one, from the
// topics; the window marked solved (MarkSolved), growing the kNN graph
// over the same rows at the next trigger is no reason to solve again. A
// new label is.
func TestRestoredAutoModelIsNotSolvedAgain(t *testing.T) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 600, Dim: 6, Clusters: 3, Spread: 0.5, Seed: 9})
	newLearner := func() *Learner {
		l, err := NewLearner(LearnerConfig{
			Features: 6, Window: anngraph.Config{MaxExamples: 2000, K: 8, Metric: anngraph.Euclidean, Exhaustive: true},
			Params: train.Params{Algorithm: train.Auto}, SolveExamples: 1 << 30, SolveLabels: 1 << 30,
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range xs {
			label := ""
			if i%10 == 0 {
				label = fmt.Sprint(cs[i])
			}
			if _, err := l.Observe(fmt.Sprint(i), time.Unix(int64(i), 0), xs[i], label); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	first := newLearner()
	if _, err := first.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	cur := first.InForce()
	m, version, on := cur.Model, cur.Stamp.Version, cur.SolvedOn
	restarted := newLearner()
	restarted.SetModel(Solved{Model: m, Stamp: model.Stamp{Version: version}, SolvedOn: on})
	restarted.MarkSolved()
	if _, err := restarted.Solve(context.Background()); !errors.Is(err, ErrUnchanged) {
		t.Fatalf("the restored window solved again (error %v), want ErrUnchanged", err)
	}
	if _, graph := restarted.window.(graphWindow); !graph {
		t.Fatal("no graph grown over the restored window")
	}
	restarted.Label("1", fmt.Sprint(cs[1]))
	if _, err := restarted.Solve(context.Background()); err != nil {
		t.Fatalf("a new label did not lead to a solve: %v", err)
	}
}

// TestAutoGrowsABoundedGraphBehindABacklog: behind a backlog (Run's share
// below 1) the graph that auto grows takes every labeled row and the
// newest unlabeled rows, growBacklogRows in all, and counts the others as
// thinned out of the kept fraction; without a backlog it takes every row.
func TestAutoGrowsABoundedGraphBehindABacklog(t *testing.T) {
	const n = 3000
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: n, Dim: 6, Clusters: 3, Spread: 0.5, Seed: 9})
	label := func(i int) string {
		if i%20 == 0 {
			return fmt.Sprint(cs[i])
		}
		return ""
	}
	for _, share := range []float64{0.25, 1} {
		l, err := NewLearner(LearnerConfig{
			Features: 6, Window: anngraph.Config{MaxExamples: 5000, K: 8, Metric: anngraph.Euclidean},
			Params: train.Params{Algorithm: train.Auto}, Queue: 2 * n, SolveExamples: 1 << 30, SolveLabels: 1 << 30,
		})
		if err != nil {
			t.Fatal(err)
		}
		startPacedRun(t, l, func() float64 { return share })
		observe(t, l, xs, 0, n, label)
		if err := l.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Solve(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, graph := l.window.(graphWindow); !graph {
			t.Fatalf("share %v: no graph grown", share)
		}
		labeled := n / 20
		want := n
		if share < 1 {
			want = growBacklogRows
		}
		if rows, inWindow := l.WindowSize(); rows != want || inWindow != labeled {
			t.Fatalf("share %v: %d rows with %d labeled, want %d with %d", share, rows, inWindow, want, labeled)
		}
		// The unlabeled rows taken are the newest.
		oldest, room := n, want-labeled
		for ; room > 0; oldest-- {
			if label(oldest-1) == "" {
				room--
			}
		}
		for i := range n {
			if _, in := l.keyOf[fmt.Sprint(i)]; in != (label(i) != "" || i >= oldest) {
				t.Fatalf("share %v: row %d (label %q) in the window: %v", share, i, label(i), in)
			}
		}
		s := l.Sampling()
		if thinned := uint64(n - want); s.Thinned != thinned {
			t.Fatalf("share %v: %d thinned, want %d", share, s.Thinned, thinned)
		}
		if got, kept := s.KeptFraction(), float64(want-labeled)/float64(n-labeled); math.Abs(got-kept) > 1e-12 {
			t.Fatalf("share %v: kept fraction %v, want %v", share, got, kept)
		}
	}
}

// TestLearnerBuildsAutosDegree: the Laplacian a Learner hands the solver
// is auto's L^p (GraphDegree) with the degree left at 0 (once three classes
// grew its graph), and L for lapsvm.
func TestLearnerBuildsAutosDegree(t *testing.T) {
	for _, tt := range []struct {
		algo train.Algorithm
		want int
	}{{train.Auto, train.GraphDegree(train.Auto, 0)}, {train.LapSVM, 1}} {
		l := newTestLearner(t, tt.algo, 200)
		for i, r := range textRows(60, 1) {
			label := fmt.Sprint("c", i%3)
			if _, err := l.Observe(r.id, time.Unix(int64(i), 0), r.v, label); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Solve(context.Background()); err != nil {
			t.Fatalf("%s: %v", tt.algo, err)
		}
		view := l.window.snapshot()
		if view.graph == nil {
			t.Fatalf("%s: no graph after a solve over three classes", tt.algo)
		}
		lap, err := view.laplacian(l.cfg.Graph)
		if err != nil {
			t.Fatal(err)
		}
		if lap.Degree() != tt.want {
			t.Errorf("%s: Laplacian of degree %d, want %d", tt.algo, lap.Degree(), tt.want)
		}
	}
}
