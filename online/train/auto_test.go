package train

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"streamer/online/newton"
	"streamer/vector"
)

// TestChooseAuto checks auto's choice: sr for several classes on a graph
// that follows the labels, tsvm for two classes, without a graph, and on a
// graph whose edges ignore the labels, lapsvm on a graph that follows the
// labels better than chance but not well enough for sr, and svm while it
// cannot tell; and the candidates tried against that choice: sr against
// svm while too few labeled rows are neighbours to tell, sr and svm
// against lapsvm, svm against tsvm with a graph term, but over text
// (sparse rows) no svm.
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
	for _, w := range []*Window{&clustered, &binary, &shuffled, &partial, &partialCubed, &shuffledCubed, &noGraph, &fewLabels} {
		w.Rows = rowsOf(600, func(i int) vector.Vector { return vector.Dense([]float64{float64(i), 0, 0, 0, 0, 0}) })
	}
	// Text: sparse rows, where the graph term is kept without the svm.
	shuffledText, partialText := shuffledCubed, partialCubed
	sparse := rowsOf(600, func(i int) vector.Vector { return vector.Sparse([]int32{int32(i)}, []float64{1}) })
	shuffledText.Rows, partialText.Rows = sparse, sparse
	for _, tt := range []struct {
		name    string
		data    Window
		lambdaI float64 // solver.lambda_i
		want    Algorithm
		wantLI  float64
		against []Algorithm // candidates tried against want
	}{
		{"clustered, 5 classes", clustered, 0, SR, 0, nil},
		{"two classes", binary, 0, TSVM, 0, nil},
		{"labels independent of the graph", shuffledCubed, 0, TSVM, autoLambdaI, []Algorithm{SVM}},
		{"labels independent of the graph, over L", shuffled, 0, TSVM, autoLambdaIOverL, []Algorithm{SVM}},
		{"graph follows the labels in part", partialCubed, 0, LapSVM, autoLambdaI, []Algorithm{SR, SVM}},
		{"graph follows the labels in part, over L", partial, 0, LapSVM, autoLambdaIOverL, []Algorithm{SR, SVM}},
		{"graph follows the labels in part, lambda_i set", partial, 0.25, LapSVM, 0.25, []Algorithm{SR, SVM}},
		{"labels independent of the graph, lambda_i set", shuffled, 0.25, TSVM, 0.25, []Algorithm{SVM}},
		{"no graph", noGraph, 0, TSVM, 0, nil},
		{"no graph, lambda_i set", noGraph, 0.25, TSVM, 0, nil},
		{"too few labeled neighbours to tell", fewLabels, 0, SVM, 0, []Algorithm{SR}},
		{"labels independent of the graph, text", shuffledText, 0, TSVM, autoLambdaI, nil},
		{"graph follows the labels in part, text", partialText, 0, LapSVM, autoLambdaI, []Algorithm{SR}},
	} {
		got, against := chooseAuto(tt.data, Params{Algorithm: Auto, LambdaI: tt.lambdaI})
		if got.Algorithm != tt.want || got.LambdaI != tt.wantLI || !slices.Equal(against, tt.against) {
			var same, edges int
			if tt.data.Graph != nil {
				same, edges = Homophily(tt.data.Graph, tt.data.Labels)
			}
			t.Errorf("%s: auto chose %s with lambda_i %v against %v; want %s with %v against %v (%d of %d labeled edges agree, chance %.3f)",
				tt.name, got.Algorithm, got.LambdaI, against, tt.want, tt.wantLI, tt.against, same, edges, chanceAgreement(tt.data.Labels))
		}
	}
}

// rowsOf returns n rows made by row.
func rowsOf(n int, row func(int) vector.Vector) []vector.Vector {
	rows := make([]vector.Vector, n)
	for i := range rows {
		rows[i] = row(i)
	}
	return rows
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

// TestCopiesDoNotJudgeTheGraph: edges between copies of one row (a text
// that recurs word for word) agree whatever the graph does for other
// rows, and auto's rule leaves them out: on edges between distinct rows
// that agree half the time, seventeen more that agree between labeled
// copies do not make it choose sr, where the same edges between distinct
// rows do.
func TestCopiesDoNotJudgeTheGraph(t *testing.T) {
	const n = 60
	classes := []string{"a", "b", "c"}
	labels := make([]string, n)
	for i := range labels {
		labels[i] = classes[i%3]
	}
	var g edgeList
	for i := range 20 { // rows 0..39: ten edges agree, ten do not
		j := 3 + 2*i
		if i%2 == 1 {
			j = 1 + 2*i
		}
		g = append(g, [2]int{2 * i, j})
	}
	for i := 40; i < n-3; i++ { // rows 40..59: each with the row three on, of its class
		g = append(g, [2]int{i, i + 3})
	}
	word := func(i int) vector.Vector { return vector.Sparse([]int32{int32(i)}, []float64{1}) }
	distinct := rowsOf(n, word)
	copies := rowsOf(n, func(i int) vector.Vector { // rows 40..59 copies of three texts, one a class
		if i >= 40 {
			return word(1000 + i%3)
		}
		return word(i)
	})
	for _, tt := range []struct {
		name    string
		rows    []vector.Vector
		edges   int
		follows bool
		want    Algorithm
	}{
		{"distinct rows", distinct, 37, true, SR},
		{"copies", copies, 20, false, TSVM},
	} {
		data := Window{Graph: g, Labels: labels, Rows: tt.rows}
		same, edges, follows := graphFollows(data)
		if edges != tt.edges || follows != tt.follows {
			t.Errorf("%s: %d of %d labeled edges agree, follows %v; want %d edges, follows %v", tt.name, same, edges, follows, tt.edges, tt.follows)
		}
		if got, _ := chooseAuto(data, Params{Algorithm: Auto}); got.Algorithm != tt.want {
			t.Errorf("%s: auto chose %s, want %s", tt.name, got.Algorithm, tt.want)
		}
	}
}

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

// TestDeniesLabels: the vote's test denies the graph only on evidence:
// no labeled edge shows nothing, a few disagreeing ones out of many
// agreeing do not deny it, and edges that join classes at random do.
func TestDeniesLabels(t *testing.T) {
	labels := []string{"a", "a", "b", "b", "", ""}
	agree, disagree, unlabeled := [2]int{0, 1}, [2]int{0, 2}, [2]int{0, 4}
	repeat := func(e [2]int, n int) edgeList {
		g := make(edgeList, n)
		for i := range g {
			g[i] = e
		}
		return g
	}
	for _, tt := range []struct {
		name   string
		g      edgeList
		denies bool
	}{
		{"no labeled edge", repeat(unlabeled, 20), false},
		{"ten agreeing", repeat(agree, 10), false},
		{"five of eight agreeing", append(repeat(agree, 5), repeat(disagree, 3)...), false},
		{"three of ten agreeing", append(repeat(agree, 3), repeat(disagree, 7)...), true},
		{"half of forty agreeing", append(repeat(agree, 20), repeat(disagree, 20)...), true},
	} {
		same, edges, denies := DeniesLabels(tt.g, labels)
		if denies != tt.denies {
			t.Errorf("%s (%d of %d agree): denies %v, want %v", tt.name, same, edges, denies, tt.denies)
		}
	}
}
