package online

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
)

// chooseAuto returns the algorithm auto stands for on data: tsvm for two
// classes (or without a graph); for three or more, sr when the window's
// kNN graph follows the labels and tsvm when it does not, and the
// supervised svm while too few labeled rows are neighbours to tell.
func chooseAuto(data TrainData) Algorithm {
	if data.Graph == nil || ClassCount(data.Labels) < 3 {
		return TSVM
	}
	same, edges := Homophily(data.Graph, data.Labels)
	switch {
	case edges < autoMinEdges:
		return SVM
	// Laplace's rule keeps a handful of agreeing edges from deciding.
	case float64(same+1)/float64(edges+2) < autoMinHomophily:
		return TSVM
	}
	return SR
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
