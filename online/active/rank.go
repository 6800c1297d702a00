package active

import (
	"cmp"
	"math"
	"slices"
)

// farHops is the number of kNN edges from the nearest labeled or requested
// row at which a row counts as far from every label: a label reaches the
// rows a few edges away (label spreading at α = 0.2 carries 0.2^h of it h
// edges), and no farther.
const farHops = 3

// Strategies name why a row was chosen (Reason.Strategy).
const (
	// StrategyInformative: the model's margin, weighted by the graph.
	StrategyInformative = "informative"
	// StrategyCover: no model yet; the graph alone, far from every label
	// and among many unlabeled rows.
	StrategyCover = "cover"
	// StrategyRandom: drawn at random among the unlabeled rows, for an
	// unbiased estimate of accuracy.
	StrategyRandom = "random"
)

// Reason is the scores behind a choice.
type Reason struct {
	Strategy string  `json:"strategy"`
	Score    float64 `json:"score"`
	// Margin is the difference between the probabilities of the two most
	// probable classes (absent before any model).
	Margin *float64 `json:"margin,omitempty"`
	// Reach counts the unlabeled, unrequested rows joined to the row in
	// the kNN graph (either lists the other).
	Reach int `json:"reach"`
	// Hops is the number of kNN edges to the nearest labeled or requested
	// row, farHops+1 when none is nearer.
	Hops int `json:"hops"`
	// RareClass is set when the predicted class has at most two labels in
	// the window.
	RareClass bool `json:"rare_class,omitempty"`
	// Likeness is the row's likeness to the most alike labeled or
	// requested row (pools ranked by uncertainty).
	Likeness *float64 `json:"likeness,omitempty"`
}

// ranker scores the rows of a pool for a request and keeps the scores up
// to date as rows are taken (labeled or requested).
type ranker struct {
	pool  *Pool
	adj   [][]int32
	taken []bool
	hops  []int
	// perClass counts the labeled rows of each class of pool.Classes.
	perClass []int
	// sources lists the taken rows, in the order taken; near holds each
	// row's likeness to the most alike of the first folded[i] of them
	// (pools with a Likeness, filled as rows are scored).
	sources []int
	near    []float64
	folded  []int
}

// newRanker returns a ranker over pool with the rows of taken (labeled or
// requested) as the labels' sources.
func newRanker(pool *Pool, taken []bool) *ranker {
	r := &ranker{pool: pool, adj: pool.symmetric(), taken: taken, hops: make([]int, pool.Len())}
	for i := range r.hops {
		r.hops[i] = farHops + 1
	}
	var sources []int
	for i, t := range taken {
		if t {
			sources = append(sources, i)
		}
	}
	r.lower(sources)
	if pool.Uncertainty && pool.Likeness != nil {
		r.sources, r.near, r.folded = sources, make([]float64, pool.Len()), make([]int, pool.Len())
	}
	index := make(map[string]int, len(pool.Classes))
	for k, c := range pool.Classes {
		index[c] = k
	}
	r.perClass = make([]int, len(pool.Classes))
	for _, l := range pool.Labels {
		if k, ok := index[l]; ok {
			r.perClass[k]++
		}
	}
	return r
}

// lower sets the hops of every row within farHops edges of sources to its
// distance from the nearest of them, where that is lower (breadth first).
func (r *ranker) lower(sources []int) {
	frontier := make([]int, 0, len(sources))
	for _, s := range sources {
		r.hops[s] = 0
		frontier = append(frontier, s)
	}
	for d := 1; d <= farHops && len(frontier) > 0; d++ {
		var next []int
		for _, i := range frontier {
			for _, j := range r.adj[i] {
				if r.hops[j] > d {
					r.hops[j] = d
					next = append(next, int(j))
				}
			}
		}
		frontier = next
	}
}

// take marks row i requested: it becomes a source of hops, and stops
// counting in its neighbours' reach.
func (r *ranker) take(i int) {
	r.taken[i] = true
	r.lower([]int{i})
	if r.near != nil {
		r.sources = append(r.sources, i)
	}
}

// eligible reports whether row i may be requested.
func (r *ranker) eligible(i int) bool { return !r.taken[i] && r.pool.candidate(i) }

// reason scores row i: the uncertainty (one minus half the margin, so
// that a row the model is sure of still counts half where it is far from
// every label and among many unlabeled rows; 1 before any model), twice
// for a predicted class of at most two labels, times one plus the rows a
// label would reach, times one plus the edges to the nearest label (at
// most farHops+1) over farHops+2. A row next to a label keeps some weight:
// labeled edges are what tells the learner that the graph follows the
// labels (docs/MATH.md, "The neighbours' vote").
func (r *ranker) reason(i int) Reason {
	if r.pool.Uncertainty {
		return r.uncertainty(i)
	}
	reach := 0
	for _, j := range r.adj[i] {
		if !r.taken[j] {
			reach++
		}
	}
	rs := Reason{Strategy: StrategyCover, Reach: reach, Hops: r.hops[i]}
	u := 1.0
	if probs := r.probs(i); probs != nil {
		best, margin := topTwo(probs)
		rs.Strategy, rs.Margin = StrategyInformative, &margin
		u = 1 - margin/2
		if r.perClass[best] <= 2 {
			rs.RareClass = true
			u *= 2
		}
	}
	rs.Score = u * float64(1+reach) * float64(1+rs.Hops) / float64(farHops+2)
	return rs
}

// uncertainty scores row i of a pool ranked by the model alone: one
// minus the margin times the row's density, twice for a predicted class
// of at most two labels (margin sampling weighted by information density,
// rare classes first), times one minus its likeness to the most alike
// labeled or requested row where the pool has a Likeness.
func (r *ranker) uncertainty(i int) Reason {
	rs := r.unlikened(i)
	if r.near != nil {
		like := r.likeness(i)
		rs.Likeness = &like
		rs.Score *= 1 - like
	}
	return rs
}

// unlikened is uncertainty without the likeness, which can only lower
// the score: a bound on it.
func (r *ranker) unlikened(i int) Reason {
	best, margin := topTwo(r.probs(i))
	rs := Reason{Strategy: StrategyInformative, Margin: &margin, Hops: r.hops[i], Score: 1 - margin}
	if r.pool.Density != nil {
		rs.Score *= max(r.pool.Density[i], 0)
	}
	if r.perClass[best] <= 2 {
		rs.RareClass = true
		rs.Score *= 2
	}
	return rs
}

// likeness returns row i's likeness to the most alike taken row, folding
// in the rows taken since it was last asked.
func (r *ranker) likeness(i int) float64 {
	like, _ := r.likenessBelow(i, math.Inf(1))
	return like
}

// likenessBelow is likeness, but stops folding, and reports false, once
// the likeness reaches limit: row i's score can then no longer beat the
// one it is compared with. What was folded is kept for the next call.
func (r *ranker) likenessBelow(i int, limit float64) (float64, bool) {
	for k := r.folded[i]; k < len(r.sources); k++ {
		r.near[i] = max(r.near[i], r.pool.Likeness(i, r.sources[k]))
		if r.near[i] >= limit {
			r.folded[i] = k + 1
			return r.near[i], false
		}
	}
	r.folded[i] = len(r.sources)
	return r.near[i], r.near[i] < limit
}

func (r *ranker) probs(i int) []float64 {
	if r.pool.Probs == nil {
		return nil
	}
	return r.pool.Probs[i]
}

// topTwo returns the most probable class and its margin over the second.
func topTwo(p []float64) (best int, margin float64) {
	first, second := math.Inf(-1), math.Inf(-1)
	for k, v := range p {
		switch {
		case v > first:
			best, first, second = k, v, first
		case v > second:
			second = v
		}
	}
	if math.IsInf(second, -1) {
		return best, 1
	}
	return best, first - second
}

// best returns the eligible row of highest score and its reason, or -1.
func (r *ranker) best() (int, Reason) {
	if r.near != nil {
		return r.bestLikened()
	}
	bi, br := -1, Reason{}
	for i := range r.taken {
		if !r.eligible(i) {
			continue
		}
		if rs := r.reason(i); bi < 0 || rs.Score > br.Score {
			bi, br = i, rs
		}
	}
	return bi, br
}

// bestLikened is best for a pool whose scores are weighed by likeness,
// which costs a comparison with every taken row: it scores the rows in
// the order of their scores without it, stops at the first whose score
// without it cannot beat the best found, and stops comparing a row with
// the taken ones once its likeness shows that it cannot either.
func (r *ranker) bestLikened() (int, Reason) {
	type bound struct {
		row   int
		score float64
	}
	var rows []bound
	for i := range r.taken {
		if r.eligible(i) {
			rows = append(rows, bound{i, r.unlikened(i).Score})
		}
	}
	slices.SortFunc(rows, func(a, b bound) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.row, b.row))
	})
	bi, br := -1, Reason{}
	for _, b := range rows {
		if bi >= 0 && b.score <= br.Score {
			break
		}
		limit := math.Inf(1)
		if bi >= 0 {
			limit = 1 - br.Score/b.score // a likeness at least this leaves no more than the best
		}
		if _, below := r.likenessBelow(b.row, limit); !below {
			continue
		}
		if rs := r.uncertainty(b.row); bi < 0 || rs.Score > br.Score {
			bi, br = b.row, rs
		}
	}
	return bi, br
}
