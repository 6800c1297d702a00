package online

import "math"

const (
	// autoMinEdges is the number of kNN edges between labeled rows below
	// which auto does not trust its estimate of the graph's homophily.
	autoMinEdges = 10
	// autoMinHomophily is the share of labeled-to-labeled kNN edges that
	// must join rows of the same class for auto to choose sr: a graph
	// whose neighbours share labels carries them to the unlabeled rows
	// (images: above 0.9; short text, where graph methods lose to a
	// linear model on the labels: below 0.5).
	autoMinHomophily = 0.7
	// autoLambdaI is λ_I, the weight of the graph term, of the lapsvm that
	// auto runs on a graph that follows the labels better than chance but
	// not well enough for sr, when solver.lambda_i is 0. Measured on
	// Debian's short descriptions (13 classes, 5% of labels, windows of
	// 1,000 to 5,000 rows, normalized Laplacian, accuracy on the unlabeled
	// rows against svm): λ_I = 0.1, 1, 10, 100 moved it by +0.4, +1.1,
	// +0.3, −7.8 points (label seeds 1–2), λ_I = 1 and 3 by +0.8 and +0.5
	// (seeds 1–3). tsvm with the same graph term gained +1.2, and as much
	// as lapsvm in the stream, for 8 times the solve time.
	autoLambdaI = 1
	// autoMinZ is how many standard deviations the count of agreeing
	// labeled edges must lie above its expectation under labels drawn
	// independently of the graph for auto to use the graph at all.
	autoMinZ = 2
)

// chooseAuto returns the parameters auto stands for on data: tsvm for two
// classes (or without a graph); for three or more, sr when the window's
// kNN graph follows the labels, the supervised svm while too few labeled
// rows are neighbours to tell, lapsvm (λ_I = autoLambdaI unless p sets
// it) when the graph agrees with the labels more than chance would but
// not enough for sr, and tsvm when it agrees no more than chance.
//
// It also reports whether sr is a candidate against a choice of svm or
// lapsvm (trainAuto then lets the labels that arrive decide): when the
// labeled edges, however few, agree well enough for sr, or enough of them
// agree more than chance would.
func chooseAuto(data TrainData, p Params) (choice Params, srCandidate bool) {
	p.Algorithm = TSVM
	if data.Graph == nil || ClassCount(data.Labels) < 3 {
		return p, false
	}
	same, edges := Homophily(data.Graph, data.Labels)
	// Laplace's rule keeps a handful of agreeing edges from deciding.
	follows := float64(same+1)/float64(edges+2) >= autoMinHomophily
	above := data.Laplacian != nil && edges >= autoMinEdges && aboveChance(same, edges, chanceAgreement(data.Labels))
	switch {
	case edges < autoMinEdges:
		p.Algorithm = SVM
	case follows:
		p.Algorithm = SR
		return p, false
	case above:
		p.Algorithm = LapSVM
		if p.LambdaI == 0 {
			p.LambdaI = autoLambdaI
		}
	}
	return p, follows || above
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
func Homophily(g WeightedGraph, labels []string) (same, edges int) {
	for e := range g.Edges() {
		i, j, _ := g.Edge(e)
		if labels[i] == "" || labels[j] == "" {
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
