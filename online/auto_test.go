package online

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/online/model"
	"streamer/online/newton"
	"streamer/synth"
)

// TestChooseAuto checks auto's choice: sr for several classes on a graph
// that follows the labels, tsvm for two classes, without a graph, and on a
// graph whose edges ignore the labels, lapsvm on a graph that follows the
// labels better than chance but not well enough for sr, and svm while it
// cannot tell; and where sr is a candidate against that choice (lapsvm,
// and svm while too few labeled rows are neighbours to tell).
func TestChooseAuto(t *testing.T) {
	clustered, _, _ := srData(t, 600, 6, 5, 0.2, 4)
	binary, _, _ := srData(t, 600, 6, 2, 0.2, 4)
	shuffled, _, _ := srData(t, 600, 6, 5, 0.2, 4)
	shuffled.Labels = relabel(shuffled.Labels, 1, 5, 1)
	partial, _, _ := srData(t, 600, 6, 5, 0.2, 4)
	partial.Labels = relabel(partial.Labels, 0.5, 5, 2)
	// srData's Laplacian is L itself; auto's default is its third power.
	partialCubed, shuffledCubed := partial, shuffled
	partialCubed.Laplacian = poweredLaplacian{partial.Laplacian, autoDegree}
	shuffledCubed.Laplacian = poweredLaplacian{shuffled.Laplacian, autoDegree}
	noGraph := clustered
	noGraph.Graph, noGraph.Laplacian = nil, nil
	fewLabels, _, _ := srData(t, 600, 6, 5, 0, 4) // two labels a class: too few neighbours to judge
	for _, tt := range []struct {
		name    string
		data    TrainData
		lambdaI float64 // solver.lambda_i
		want    Algorithm
		wantLI  float64
		trial   bool // sr a candidate against want
	}{
		{"clustered, 5 classes", clustered, 0, SR, 0, false},
		{"two classes", binary, 0, TSVM, 0, false},
		{"labels independent of the graph", shuffledCubed, 0, TSVM, autoLambdaI, false},
		{"labels independent of the graph, over L", shuffled, 0, TSVM, autoLambdaIOverL, false},
		{"graph follows the labels in part", partialCubed, 0, LapSVM, autoLambdaI, true},
		{"graph follows the labels in part, over L", partial, 0, LapSVM, autoLambdaIOverL, true},
		{"graph follows the labels in part, lambda_i set", partial, 0.25, LapSVM, 0.25, true},
		{"labels independent of the graph, lambda_i set", shuffled, 0.25, TSVM, 0.25, false},
		{"no graph", noGraph, 0, TSVM, 0, false},
		{"no graph, lambda_i set", noGraph, 0.25, TSVM, 0, false},
		{"too few labeled neighbours to tell", fewLabels, 0, SVM, 0, true},
	} {
		got, trial := chooseAuto(tt.data, Params{Algorithm: Auto, LambdaI: tt.lambdaI})
		if got.Algorithm != tt.want || got.LambdaI != tt.wantLI || trial != tt.trial {
			var same, edges int
			if tt.data.Graph != nil {
				same, edges = Homophily(tt.data.Graph, tt.data.Labels)
			}
			t.Errorf("%s: auto chose %s with lambda_i %v, sr a candidate: %v; want %s with %v, %v (%d of %d labeled edges agree, chance %.3f)",
				tt.name, got.Algorithm, got.LambdaI, trial, tt.want, tt.wantLI, tt.trial, same, edges, chanceAgreement(tt.data.Labels))
		}
	}
}

// poweredLaplacian reports another power p of M = L^p than the one it
// applies, for the choice of auto's weight.
type poweredLaplacian struct {
	newton.Laplacian
	p int
}

func (l poweredLaplacian) Degree() int { return l.p }

// relabel returns labels with each labeled row, with probability frac,
// given a class drawn uniformly from c.
func relabel(labels []string, frac float64, c int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 2))
	out := slices.Clone(labels)
	for i, l := range out {
		if l != "" && r.Float64() < frac {
			out[i] = fmt.Sprint(r.IntN(c))
		}
	}
	return out
}

// edgeList is a WeightedGraph given by its edges.
type edgeList [][2]int

func (g edgeList) Vertices() int { return 0 }
func (g edgeList) Edges() int    { return len(g) }
func (g edgeList) Edge(e int) (int, int, float64) {
	return g[e][0], g[e][1], 1
}
func (g edgeList) Rank(int) int { return 0 }

// TestAboveChanceIsCalibrated checks the test auto uses the graph by: on
// random graphs whose edges ignore the labels (skewed class sizes, so that
// chance agreement is not 1/c) it fires about as often as a one-sided 2σ
// test should (2.3%), and on graphs whose edges join rows of one class
// with probability 0.3 more than chance it fires nearly always.
func TestAboveChanceIsCalibrated(t *testing.T) {
	const trials, n, edges = 400, 300, 200
	sizes := []float64{0.4, 0.25, 0.15, 0.1, 0.1}
	r := rand.New(rand.NewPCG(3, 4))
	draw := func() string {
		u, k := r.Float64(), 0
		for ; k < len(sizes)-1 && u >= sizes[k]; k++ {
			u -= sizes[k]
		}
		return fmt.Sprint(k)
	}
	for _, tt := range []struct {
		name     string
		follow   float64 // probability that an edge is drawn inside a class
		min, max int     // of trials that fire
	}{
		{"independent", 0, 0, trials * 6 / 100},
		{"homophilous", 0.3, trials * 95 / 100, trials},
	} {
		fired := 0
		for range trials {
			labels := make([]string, n)
			byClass := map[string][]int{}
			for i := range labels {
				labels[i] = draw()
				byClass[labels[i]] = append(byClass[labels[i]], i)
			}
			g := make(edgeList, edges)
			for e := range g {
				i := r.IntN(n)
				j := r.IntN(n)
				if r.Float64() < tt.follow {
					same := byClass[labels[i]]
					j = same[r.IntN(len(same))]
				}
				g[e] = [2]int{i, j}
			}
			same, m := Homophily(g, labels)
			if aboveChance(same, m, chanceAgreement(labels)) {
				fired++
			}
		}
		if fired < tt.min || fired > tt.max {
			t.Errorf("%s: fired in %d of %d trials, want %d to %d", tt.name, fired, trials, tt.min, tt.max)
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
			Params: Params{Algorithm: Auto}, SolveExamples: 1 << 30, SolveLabels: 1 << 30,
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
	m, version, on := first.ModelSolvedOn()
	restarted := newLearner()
	restarted.SetModel(m, model.Stamp{Version: version}, on)
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
			Params: Params{Algorithm: Auto}, Queue: 2 * n, SolveExamples: 1 << 30, SolveLabels: 1 << 30,
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

// TestGraphDegree: a graph.degree of 0 iterates the Laplacian under auto
// (autoDegree) and not for an algorithm named; a degree set is kept.
func TestGraphDegree(t *testing.T) {
	for _, tt := range []struct {
		algo   Algorithm
		degree int
		want   int
	}{
		{Auto, 0, autoDegree},
		{Auto, 1, 1},
		{Auto, 2, 2},
		{LapSVM, 0, 1},
		{LapRLS, 0, 1},
		{TSVM, 0, 1},
		{LapSVM, 4, 4},
	} {
		if got := GraphDegree(tt.algo, tt.degree); got != tt.want {
			t.Errorf("GraphDegree(%s, %d) = %d, want %d", tt.algo, tt.degree, got, tt.want)
		}
	}
}

// TestLearnerBuildsAutosDegree: the Laplacian a Learner hands the solver
// is L^autoDegree under auto with the degree left at 0 (once three classes
// grew its graph), and L for lapsvm.
func TestLearnerBuildsAutosDegree(t *testing.T) {
	for _, tt := range []struct {
		algo Algorithm
		want int
	}{{Auto, autoDegree}, {LapSVM, 1}} {
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
