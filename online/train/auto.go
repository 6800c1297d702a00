package train

import (
	"cmp"
	"math"

	"streamer/internal/binomial"
	"streamer/online/newton"
	"streamer/online/spectral"
	"streamer/vector"
)

const (
	// autoMinEdges is the number of kNN edges between labeled rows below
	// which auto does not trust its estimate of the graph's homophily.
	autoMinEdges = 10
	// autoMinHomophily is the share of labeled-to-labeled kNN edges that
	// must join rows of the same class for auto to choose sr: a graph
	// whose neighbours share labels carries them to the unlabeled rows
	// (images: well above it; short text, where graph methods lose to a
	// linear model on the labels: well below).
	autoMinHomophily = 0.7
	// autoLambdaI is λ_I, the weight of the graph term, of the lapsvm that
	// auto runs on a graph that follows the labels better than chance but
	// not well enough for sr, and of the tsvm it runs on three classes or
	// more where the graph agrees no better than chance, when
	// solver.lambda_i is 0: with autoDegree, the best gain over supervised
	// on Debian's short descriptions, with the graph term on both lapsvm
	// and tsvm (docs/RESULTS.md, "Several classes"). Over the plain
	// Laplacian λ_I = 10 loses (autoLambdaIOverL).
	autoLambdaI = 10
	// autoLambdaIOverL is auto's λ_I over the plain Laplacian, when
	// graph.degree sets p = 1: the best of λ_I = 1, 3, 10 there on
	// Debian, the term on both lapsvm and tsvm (docs/RESULTS.md, "Several
	// classes").
	autoLambdaIOverL = 1
	// autoDegree is p of M = L^p under auto when graph.degree is 0. The
	// graph term of L^p penalizes outputs that vary over paths of p edges,
	// not only over single edges, so a label's smoothing reaches the rows
	// a short text's few neighbours connect it to. On Debian (as above,
	// λ_I = 10 for both terms) p = 3 gained most among 1 to 4, for about
	// twice the solving time of p = 1 (docs/RESULTS.md, "Several
	// classes").
	autoDegree = 3
	// autoMinTieEdges is the number of labeled kNN edges, fewer than
	// autoMinEdges, that must agree well enough for sr (autoMinHomophily,
	// by Laplace's rule) for a trial whose record is tied (no label since
	// on which sr and svm disagreed, as at the first solve) to serve sr
	// rather than svm. Against serving svm, it gains on streams of glyph
	// images (synth.Glyphs; about one label a class at the first solve,
	// which sr carries along the graph) and is even on Gaussian clusters
	// (docs/RESULTS.md, "Several classes").
	autoMinTieEdges = 3
	// autoMinZ is how many standard deviations the count of agreeing
	// labeled edges must lie above its expectation under labels drawn
	// independently of the graph for auto to use the graph at all.
	autoMinZ = 2
)

// chooseAuto returns the parameters auto stands for on data: tsvm for two
// classes (or without a graph); for three or more, sr when the window's
// kNN graph follows the labels, the supervised svm while too few labeled
// rows are neighbours to tell, lapsvm (λ_I by autoWeight unless p sets
// it) when the graph agrees with the labels more than chance would but
// not enough for sr, and tsvm with the same graph term when it agrees no
// more than chance: at the rare solves where it does on short text, the
// few labeled edges judge it poorly, and the term gains there.
//
// It also returns the algorithms tried against that choice (trainAuto
// then lets the labels that arrive decide): sr while the labeled edges
// are too few to judge the graph, and when enough of them agree more than
// chance would; over dense rows, the supervised svm beside lapsvm or tsvm
// with a graph term, in case the graph, judged by few edges, does not
// pay. Over sparse rows (text), where auto's weight of the term was
// chosen, the term is kept.
func chooseAuto(data Window, p Params) (choice Params, against []Algorithm) {
	p.Algorithm = TSVM
	if data.Laplacian == nil {
		p.LambdaI = 0 // no graph to weigh (two classes grow none)
	}
	if data.Graph == nil || ClassCount(data.Labels) < 3 {
		return p, nil
	}
	same, edges, follows := graphFollows(data)
	switch {
	case edges < autoMinEdges:
		p.Algorithm = SVM
		return p, []Algorithm{SR}
	case follows:
		p.Algorithm = SR
		return p, nil
	}
	if data.Laplacian == nil {
		return p, nil
	}
	p.LambdaI = cmp.Or(p.LambdaI, autoWeight(data.Laplacian))
	var guard []Algorithm
	if denseRows(data.Rows) {
		guard = []Algorithm{SVM}
	}
	if aboveChance(same, edges, chanceAgreement(data.Labels)) {
		p.Algorithm = LapSVM
		return p, append([]Algorithm{SR}, guard...)
	}
	return p, guard
}

// denseRows reports whether rows are dense vectors (a window holds one
// kind); false for none.
func denseRows(rows []vector.Vector) bool {
	return len(rows) > 0 && rows[0].IsDense()
}

// autoWeight returns auto's λ_I for the graph term over lap when
// solver.lambda_i is 0: autoLambdaIOverL over a Laplacian that reports
// the power 1, autoLambdaI over its powers.
func autoWeight(lap newton.Laplacian) float64 {
	if d, ok := lap.(interface{ Degree() int }); ok && d.Degree() == 1 {
		return autoLambdaIOverL
	}
	return autoLambdaI
}

// graphFollows counts the window's labeled kNN edges between rows that
// differ and those that join rows of one class, and reports whether they
// agree well enough for sr; Laplace's rule keeps a handful of agreeing
// edges from deciding. An edge between two copies of one row (a text
// that recurs word for word) agrees whatever the graph does for other
// rows: counted, copies would choose sr on short text, where it loses
// to a linear model.
func graphFollows(data Window) (same, edges int, follows bool) {
	copies := func(i, j int) bool { return data.Rows != nil && vector.Equal(data.Rows[i], data.Rows[j]) }
	same, edges = labeledEdges(data.Graph, data.Labels, copies)
	return same, edges, float64(same+1)/float64(edges+2) >= autoMinHomophily
}

// leansSR reports whether a trial whose record is tied serves sr: at
// least autoMinTieEdges labeled kNN edges, and they agree well enough for
// sr. With fewer than autoMinEdges, auto's rule chose svm.
func leansSR(data Window) bool {
	_, edges, follows := graphFollows(data)
	return follows && edges >= autoMinTieEdges
}

// DeniesLabels reports whether the labeled edges of the kNN graph g show
// that it does not follow the labels: the upper end of Wilson's interval
// (one standard deviation) of the share of them that join rows of one
// class lies below autoMinHomophily. Without labeled edges nothing is
// shown. It returns the edges' counts with it.
func DeniesLabels(g spectral.WeightedGraph, labels []string) (same, edges int, denies bool) {
	same, edges = Homophily(g, labels)
	_, upper := binomial.Wilson(same, edges, 1)
	return same, edges, edges > 0 && upper < autoMinHomophily
}

// aboveChance reports whether same agreeing edges of edges lie autoMinZ
// standard deviations above the binomial expectation edges·q.
func aboveChance(same, edges int, q float64) bool {
	n := float64(edges)
	sd := math.Sqrt(n * q * (1 - q))
	return float64(same)-n*q >= autoMinZ*sd
}

// chanceAgreement returns Σ_k p_k², the probability that two labeled rows
// drawn at random share a class (p_k is class k's share of the labels):
// the homophily of a graph that ignores the labels.
func chanceAgreement(labels []string) float64 {
	count := map[string]int{}
	n := 0
	for _, l := range labels {
		if l != "" {
			count[l]++
			n++
		}
	}
	var q float64
	for _, c := range count {
		p := float64(c) / float64(n)
		q += p * p
	}
	return q
}

// Homophily counts the edges of g that join two labeled rows, and of
// those the edges whose ends share a class.
func Homophily(g spectral.WeightedGraph, labels []string) (same, edges int) {
	return labeledEdges(g, labels, func(int, int) bool { return false })
}

// labeledEdges is Homophily over the edges that skip leaves.
func labeledEdges(g spectral.WeightedGraph, labels []string, skip func(i, j int) bool) (same, edges int) {
	for e := range g.Edges() {
		i, j, _ := g.Edge(e)
		if labels[i] == "" || labels[j] == "" || skip(i, j) {
			continue
		}
		edges++
		if labels[i] == labels[j] {
			same++
		}
	}
	return same, edges
}

// ClassCount returns the number of distinct classes among labels ("" is
// unlabeled).
func ClassCount(labels []string) int {
	seen := map[string]bool{}
	for _, l := range labels {
		if l != "" {
			seen[l] = true
		}
	}
	return len(seen)
}

// GraphDegree returns p of M = L^p for algorithm a when the configuration
// asks for degree: degree itself when set, autoDegree under auto when it is
// 0, and 1 otherwise.
func GraphDegree(a Algorithm, degree int) int {
	switch {
	case degree > 0:
		return degree
	case a == Auto:
		return autoDegree
	}
	return 1
}
