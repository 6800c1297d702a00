package online

import (
	"cmp"
	"math"
	"slices"

	"streamer/online/active"
	"streamer/vector"
)

// poolSample bounds the rows of a window without a kNN graph that a
// request pool links by their exact nearest neighbours (the candidates
// for a request): their pairs cost a distance each.
const poolSample = 500

// poolNeighbours is the length of the kNN lists of a sampled pool.
const poolNeighbours = 10

// RequestPool returns the pool the newest solve left for label requests
// (LearnerConfig.Requests), or nil before one.
func (l *Learner) RequestPool() *active.Pool { return l.pool.Load() }

// CoverPool returns a pool of the window as it is now, without a model's
// distributions: what label requests are chosen from before any model
// exists, by the graph alone. A window without a kNN graph links a sample
// of its rows by their exact nearest neighbours.
func (l *Learner) CoverPool() *active.Pool {
	l.mu.Lock()
	l.flushPending()
	l.winMu.Lock()
	view := l.window.snapshot()
	l.winMu.Unlock()
	l.mu.Unlock()
	return l.newPool(view, nil)
}

// newPool builds the pool of view, with the distributions of solved's
// model when it is not nil. The rows' ids and labels are read as they are
// now: a row evicted since view was taken has no id and is no candidate.
func (l *Learner) newPool(view windowView, solved *Solved) *active.Pool {
	n := len(view.keys)
	pool := &active.Pool{IDs: make([]string, n), Labels: make([]string, n), Neighbours: make([][]int32, n)}
	l.mu.Lock()
	for i, k := range view.keys {
		pool.IDs[i], pool.Labels[i] = l.idOf[k], l.labels[k]
	}
	l.mu.Unlock()
	modelled := solved != nil && solved.Model.Ready()
	switch {
	case modelled && !graphCarriesLabels(view):
		like := cosines(view.vecs)
		pool.Uncertainty, pool.Density, pool.Likeness = true, density(view, like, l.cfg.Features), like
	case view.graph != nil:
		for i := range n {
			if pool.IDs[i] == "" {
				continue
			}
			for _, nb := range view.graph.Neighbors(i) {
				pool.Neighbours[i] = append(pool.Neighbours[i], int32(nb.Row))
			}
		}
	default:
		linkSample(pool, view.vecs)
	}
	if modelled {
		addDistributions(pool, view.vecs, solved)
	}
	return pool
}

// graphCarriesLabels reports whether a label given to a row of view
// reaches its neighbours: the rows are dense. The nearest rows of a bag of
// words carry its label less often than a linear model does
// (VoteConfig.Off), with a graph or without.
func graphCarriesLabels(view windowView) bool {
	return len(view.vecs) > 0 && view.vecs[0].IsDense()
}

// addDistributions sets the class distributions of the pool's candidate
// rows (every unlabeled row of a pool ranked by uncertainty): the model's calibrated probabilities, blended with the row's
// spread labels as Solved.Predict blends a new row's vote.
func addDistributions(pool *active.Pool, vecs []vector.Vector, s *Solved) {
	m := s.Model
	pool.Classes, pool.Probs = m.Classes, make([][]float64, pool.Len())
	pool.Epoch, pool.Version = s.Stamp.Epoch, s.Stamp.Version
	var scores, votes []float64
	for i, nbrs := range pool.Neighbours {
		if pool.Uncertainty && (pool.IDs[i] == "" || pool.Labels[i] != "") || !pool.Uncertainty && len(nbrs) == 0 {
			continue
		}
		scores = m.Scores(vecs[i], scores)
		p := m.Distribution(scores)
		if s.Vote != nil && s.VoteWeight > 0 {
			var ok bool
			if votes, ok = s.Vote.Row(i, votes); ok {
				for k := range p {
					p[k] = (1-s.VoteWeight)*p[k] + s.VoteWeight*votes[k]
				}
			}
		}
		pool.Probs[i] = p
	}
}

// linkSample gives up to poolSample rows of the pool, spread evenly over
// the window, and up to poolSample of its newest labeled rows the lists of their exact nearest neighbours among
// themselves: the squared Euclidean distance between dense rows, 1 - cos
// between sparse ones.
func linkSample(pool *active.Pool, vecs []vector.Vector) {
	var rows []int
	in := make([]bool, len(vecs))
	step := max(1, float64(len(vecs))/poolSample)
	for x := 0.0; int(x) < len(vecs); x += step {
		in[int(x)] = true
	}
	labeled := 0
	for i := len(vecs) - 1; i >= 0 && labeled < poolSample; i-- { // the newest labels are sources of hops
		if pool.Labels[i] != "" {
			in[i] = true
			labeled++
		}
	}
	for i, ok := range in {
		if ok && pool.IDs[i] != "" {
			rows = append(rows, i)
		}
	}
	norms := make([]float64, len(rows))
	for a, i := range rows {
		norms[a] = vecs[i].Norm()
	}
	type near struct {
		row  int
		dist float64
	}
	dist := make([][]near, len(rows))
	for a := range rows {
		for b := a + 1; b < len(rows); b++ {
			d := sampleDistance(vecs[rows[a]], vecs[rows[b]], norms[a], norms[b])
			dist[a] = append(dist[a], near{rows[b], d})
			dist[b] = append(dist[b], near{rows[a], d})
		}
	}
	for a, i := range rows {
		slices.SortFunc(dist[a], func(x, y near) int { return cmp.Compare(x.dist, y.dist) })
		for _, nb := range dist[a][:min(poolNeighbours, len(dist[a]))] {
			pool.Neighbours[i] = append(pool.Neighbours[i], int32(nb.row))
		}
	}
}

func sampleDistance(a, b vector.Vector, na, nb float64) float64 {
	if a.IsDense() {
		return vector.SquaredDistance(a, b)
	}
	if na == 0 || nb == 0 {
		return 1
	}
	return 1 - vector.Dot(a, b)/(na*nb)
}

// density returns how typical of the window each row of view is: where
// the window has a kNN graph, the row's mean likeness to its neighbours
// in it (a row among many like it, not one that merely shares the
// window's common terms); else, and for a row without neighbours, its
// cosine with the rows' mean direction (vectors of dim features).
func density(view windowView, like func(i, j int) float64, dim int) []float64 {
	out := meanDirectionCosines(view.vecs, dim)
	if view.graph == nil {
		return out
	}
	for i := range out {
		nbrs := view.graph.Neighbors(i)
		if len(nbrs) == 0 {
			continue
		}
		sum := 0.0
		for _, nb := range nbrs {
			sum += like(i, nb.Row)
		}
		out[i] = sum / float64(len(nbrs))
	}
	return out
}

// meanDirectionCosines returns the cosine of each row of vecs (of dim
// features) and the rows' mean direction.
func meanDirectionCosines(vecs []vector.Vector, dim int) []float64 {
	mean := make([]float64, dim)
	norms := make([]float64, len(vecs))
	for i, x := range vecs {
		if norms[i] = x.Norm(); norms[i] > 0 {
			x.AddScaledTo(mean, 1/norms[i])
		}
	}
	meanNorm := math.Sqrt(vector.DenseDot(mean, mean))
	out := make([]float64, len(vecs))
	for i, x := range vecs {
		if norms[i] > 0 && meanNorm > 0 {
			out[i] = x.DotDense(mean) / (norms[i] * meanNorm)
		}
	}
	return out
}

// cosines returns the cosine of two rows of vecs, clamped at 0: how alike
// they are.
func cosines(vecs []vector.Vector) func(i, j int) float64 {
	norms := make([]float64, len(vecs))
	for i, x := range vecs {
		norms[i] = x.Norm()
	}
	return func(i, j int) float64 {
		if norms[i] == 0 || norms[j] == 0 {
			return 0
		}
		return max(0, vector.Dot(vecs[i], vecs[j])/(norms[i]*norms[j]))
	}
}
