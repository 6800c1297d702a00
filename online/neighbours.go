package online

import (
	"cmp"
	"math"
	"slices"

	"streamer/anngraph"
	"streamer/vector"
)

// Neighbour is a labeled window row near an example: its id, its label
// and its cosine similarity to the example.
type Neighbour struct {
	ID         string
	Label      string
	Similarity float64
}

// Neighbourhood holds the labeled rows of the kNN graph window a model was
// solved on, for explanations: which labeled examples an example is
// nearest to, by the graph's distance. It is immutable and safe for
// concurrent use.
type Neighbourhood struct {
	metric anngraph.Metric
	ids    []string
	labels []string
	vecs   []vector.Vector
	sq     []float64
}

// newNeighbourhood keeps the labeled rows of a view (labels[i] "" for an
// unlabeled row).
func newNeighbourhood(metric anngraph.Metric, view windowView, ids, labels []string) *Neighbourhood {
	n := &Neighbourhood{metric: metric}
	for i, lab := range labels {
		if lab == "" {
			continue
		}
		n.ids = append(n.ids, ids[i])
		n.labels = append(n.labels, lab)
		n.vecs = append(n.vecs, view.vecs[i])
		n.sq = append(n.sq, view.vecs[i].SquaredNorm())
	}
	return n
}

// Nearest returns the k labeled rows nearest to x, nearest first. It
// compares x with every labeled row: they are a small share of the
// window, and an explanation is asked for one example at a time.
func (n *Neighbourhood) Nearest(x vector.Vector, k int) []Neighbour {
	if n == nil || k <= 0 {
		return nil
	}
	type scored struct {
		row       int
		dist, cos float64
	}
	xsq := x.SquaredNorm()
	all := make([]scored, len(n.ids))
	for i, v := range n.vecs {
		dot := vector.Dot(x, v)
		cos := 0.0
		if xsq > 0 && n.sq[i] > 0 {
			cos = dot / math.Sqrt(xsq*n.sq[i])
		}
		dist := 1 - cos
		if n.metric == anngraph.Euclidean {
			dist = math.Sqrt(max(xsq+n.sq[i]-2*dot, 0))
		}
		all[i] = scored{row: i, dist: dist, cos: cos}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(a.dist, b.dist) })
	out := make([]Neighbour, 0, min(k, len(all)))
	for _, s := range all[:min(k, len(all))] {
		out = append(out, Neighbour{ID: n.ids[s.row], Label: n.labels[s.row], Similarity: s.cos})
	}
	return out
}
