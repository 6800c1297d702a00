package online

import (
	"math"

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
// the window, and up to poolSample of its newest labeled rows the lists of
// their exact nearest neighbours among themselves, nearest first: the
// squared Euclidean distance between dense rows, 1 - cos between sparse
// ones that share a term. Of rows equally near, the older comes first.
func linkSample(pool *active.Pool, vecs []vector.Vector) {
	rows := sampleRows(pool, len(vecs))
	lists := make([]nearest, len(rows))
	distances := newSampleDistances(vecs, rows)
	for a := range rows {
		distances.from(a)
		for b := a + 1; b < len(rows); b++ {
			d, near := distances.to(b)
			if !near {
				continue
			}
			lists[a].offer(int32(rows[b]), d)
			lists[b].offer(int32(rows[a]), d)
		}
		distances.done(a)
	}
	for a, i := range rows {
		pool.Neighbours[i] = append(pool.Neighbours[i], lists[a].rows...)
	}
}

// sampleRows returns the rows linkSample links, oldest first: every
// len/poolSample-th row and the newest poolSample labeled rows (the
// sources of a label's hops), of those the window still holds.
func sampleRows(pool *active.Pool, n int) []int {
	in := make([]bool, n)
	step := max(1, float64(n)/poolSample)
	for x := 0.0; int(x) < n; x += step {
		in[int(x)] = true
	}
	labeled := 0
	for i := n - 1; i >= 0 && labeled < poolSample; i-- {
		if pool.Labels[i] != "" {
			in[i] = true
			labeled++
		}
	}
	var rows []int
	for i, ok := range in {
		if ok && pool.IDs[i] != "" {
			rows = append(rows, i)
		}
	}
	return rows
}

// nearest is a list of at most poolNeighbours rows, nearest first.
type nearest struct {
	rows  []int32
	dists []float64
}

// offer adds row at distance d where it is among the nearest; a row
// equally near as one listed goes after it.
func (n *nearest) offer(row int32, d float64) {
	k := len(n.rows)
	if k == poolNeighbours && d >= n.dists[k-1] {
		return
	}
	if k < poolNeighbours {
		n.rows, n.dists = append(n.rows, 0), append(n.dists, 0)
		k++
	}
	i := k - 1
	for ; i > 0 && n.dists[i-1] > d; i-- {
		n.rows[i], n.dists[i] = n.rows[i-1], n.dists[i-1]
	}
	n.rows[i], n.dists[i] = row, d
}

// sampleDistances measures the distances from one sampled row to the
// others. A sparse row is spread over a dense scratch once, so that each
// distance from it costs the other row's non-zeros alone.
type sampleDistances struct {
	vecs    []vector.Vector
	rows    []int
	norms   []float64
	scratch []float64
	a       int
}

func newSampleDistances(vecs []vector.Vector, rows []int) *sampleDistances {
	s := &sampleDistances{vecs: vecs, rows: rows, norms: make([]float64, len(rows))}
	dim := 0
	for a, i := range rows {
		s.norms[a] = vecs[i].Norm()
		for _, j := range vecs[i].Indices {
			dim = max(dim, int(j)+1)
		}
	}
	s.scratch = make([]float64, dim)
	return s
}

// from makes sampled row a the one distances are measured from.
func (s *sampleDistances) from(a int) {
	s.a = a
	if v := s.vecs[s.rows[a]]; !v.IsDense() {
		v.AddScaledTo(s.scratch, 1)
	}
}

// done clears the scratch of sampled row a.
func (s *sampleDistances) done(a int) {
	if v := s.vecs[s.rows[a]]; !v.IsDense() {
		for _, j := range v.Indices {
			s.scratch[j] = 0
		}
	}
}

// to returns the distance from the current row to sampled row b, and
// whether b may be its neighbour: any dense row may, a sparse one only if
// the two share a term with a product above zero.
func (s *sampleDistances) to(b int) (float64, bool) {
	v, w := s.vecs[s.rows[s.a]], s.vecs[s.rows[b]]
	if v.IsDense() {
		return vector.SquaredDistance(v, w), true
	}
	na, nb := s.norms[s.a], s.norms[b]
	if na == 0 || nb == 0 {
		return 1, false
	}
	dot := w.DotDense(s.scratch)
	return 1 - dot/(na*nb), dot > 0
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
