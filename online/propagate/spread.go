package propagate

import (
	"math"

	"streamer/anngraph"
	"streamer/vector"
)

// Settings are the spreading's and the vote's. The zero value of a field
// means the default written beside it.
type Settings struct {
	// Alpha is α, the share of a row's score that its neighbours carry to
	// it at each step; 1-α stays with its own label. 0 means 0.2, as
	// scikit-learn's LabelSpreading: a label reaches the rows a few edges
	// away, and no farther.
	Alpha float64
	// Neighbours is the number of nearest window rows whose spread labels
	// a new row's vote sums; 0 means 10.
	Neighbours int
	// Candidates is the search's list of candidates for them, at least
	// Neighbours: more find nearer rows at more distances computed; 0
	// means twice Neighbours.
	Candidates int
}

// maxSteps bounds the spreading's iterations, which stop once no score
// moves by more than spreadTolerance: a step shrinks what is left to
// spread by α, so at α = 0.2 some 13 steps reach it, at 0.9 some 200.
const (
	maxSteps        = 200
	spreadTolerance = 1e-9
)

func (s Settings) withDefaults() Settings {
	if s.Alpha == 0 {
		s.Alpha = 0.2
	}
	if s.Neighbours == 0 {
		s.Neighbours = 10
	}
	if s.Candidates == 0 {
		s.Candidates = 2 * s.Neighbours
	}
	return s
}

// Vote is the spread labels of a window, and the vote of a new row's
// nearest window rows. It is immutable and safe for concurrent use.
type Vote struct {
	view    *anngraph.View
	classes int
	k, ef   int
	// scores holds each window row's class distribution, row-major: its
	// spread scores normalized to sum to 1, or all zero where no label
	// reached it.
	scores []float32
}

// Spread spreads the labels of the view's rows (class[i] in
// [0, classes), or -1 for an unlabeled row) over the view's kNN graph,
// made symmetric: F ← α·D^{-1/2}WD^{-1/2}·F + (1-α)·Y until it settles.
func Spread(view *anngraph.View, class []int, classes int, s Settings) *Vote {
	s = s.withDefaults()
	g := symmetric(view)
	n := view.Len()
	f := make([]float64, n*classes)
	next := make([]float64, n*classes)
	for i, c := range class {
		if c >= 0 {
			f[i*classes+c] = 1
		}
	}
	for range maxSteps {
		change := g.step(next, f, class, classes, s.Alpha)
		f, next = next, f
		if change < spreadTolerance {
			break
		}
	}
	return &Vote{view: view, classes: classes, k: s.Neighbours, ef: s.Candidates, scores: normalizedRows(f, classes)}
}

// graph is a symmetric graph in compressed rows, with its degrees'
// inverse square roots.
type graph struct {
	start  []int32
	adj    []int32
	invSqD []float64
}

// symmetric joins i and j when either lists the other in the view.
func symmetric(view *anngraph.View) graph {
	n := view.Len()
	count := make([]int32, n+1)
	for i := range n {
		for _, nb := range view.Neighbors(i) {
			count[i+1]++
			count[nb.Row+1]++
		}
	}
	for i := range n {
		count[i+1] += count[i]
	}
	adj := make([]int32, count[n])
	fill := append([]int32(nil), count[:n]...)
	for i := range n {
		for _, nb := range view.Neighbors(i) {
			adj[fill[i]], fill[i] = int32(nb.Row), fill[i]+1
			adj[fill[nb.Row]], fill[nb.Row] = int32(i), fill[nb.Row]+1
		}
	}
	g := graph{start: count, adj: dedupRows(count, adj), invSqD: make([]float64, n)}
	for i := range n {
		if d := g.start[i+1] - g.start[i]; d > 0 {
			g.invSqD[i] = 1 / math.Sqrt(float64(d))
		}
	}
	return g
}

// dedupRows removes repeated entries of each row (i and j listing each
// other), compacting adj and moving start to match.
func dedupRows(start, adj []int32) []int32 {
	out := adj[:0]
	seen := map[int32]bool{}
	from := start[0]
	for i := 0; i+1 < len(start); i++ {
		clear(seen)
		row := adj[from:start[i+1]]
		from = start[i+1]
		start[i] = int32(len(out))
		for _, j := range row {
			if !seen[j] {
				seen[j] = true
				out = append(out, j)
			}
		}
	}
	start[len(start)-1] = int32(len(out))
	return out
}

// step sets next = α·S·f + (1-α)·Y and returns the largest change.
func (g graph) step(next, f []float64, class []int, classes int, alpha float64) float64 {
	var change float64
	for i := range class {
		row := next[i*classes : (i+1)*classes]
		clear(row)
		for _, j := range g.adj[g.start[i]:g.start[i+1]] {
			w := alpha * g.invSqD[i] * g.invSqD[j]
			for c, v := range f[int(j)*classes : int(j+1)*classes] {
				row[c] += w * v
			}
		}
		if c := class[i]; c >= 0 {
			row[c] += 1 - alpha
		}
		for c, v := range row {
			change = max(change, math.Abs(v-f[i*classes+c]))
		}
	}
	return change
}

// normalizedRows returns each row of f scaled to sum to 1, as float32;
// a row that sums to 0 stays 0.
func normalizedRows(f []float64, classes int) []float32 {
	out := make([]float32, len(f))
	for i := 0; i < len(f); i += classes {
		var sum float64
		for _, v := range f[i : i+classes] {
			sum += v
		}
		if sum <= 0 {
			continue
		}
		for c, v := range f[i : i+classes] {
			out[i+c] = float32(v / sum)
		}
	}
	return out
}

// Distribution sets dst to the vote of x's nearest window rows, the mean
// of their class distributions, and returns it (grown when too short),
// with false when no label reached any of them.
func (v *Vote) Distribution(x vector.Vector, dst []float64) ([]float64, bool) {
	return v.DistributionOf(v.Search(x), dst)
}

// Search returns the window rows nearest x that vote, nearest first.
func (v *Vote) Search(x vector.Vector) []anngraph.Neighbor {
	return v.view.Search(x, v.k, v.ef)
}

// DistributionOf is Distribution over rows that Search found.
func (v *Vote) DistributionOf(near []anngraph.Neighbor, dst []float64) ([]float64, bool) {
	dst = grow(dst, v.classes)
	var sum float64
	for _, nb := range near {
		for c, s := range v.scores[nb.Row*v.classes : (nb.Row+1)*v.classes] {
			dst[c] += float64(s)
			sum += float64(s)
		}
	}
	if sum == 0 {
		return dst, false
	}
	for c := range dst {
		dst[c] /= sum
	}
	return dst, true
}

// View returns the window the vote is over.
func (v *Vote) View() *anngraph.View { return v.view }

// Classes returns the number of classes the vote is over.
func (v *Vote) Classes() int { return v.classes }

func grow(dst []float64, n int) []float64 {
	if cap(dst) < n {
		return make([]float64, n)
	}
	dst = dst[:n]
	clear(dst)
	return dst
}

// Row returns the spread class distribution of row i of the view the vote
// was spread over (all zero where no label reached it), written into dst
// (grown when too short), and whether a label reached it.
func (v *Vote) Row(i int, dst []float64) ([]float64, bool) {
	dst = grow(dst, v.classes)
	var sum float64
	for c, s := range v.scores[i*v.classes : (i+1)*v.classes] {
		dst[c] = float64(s)
		sum += float64(s)
	}
	return dst, sum > 0
}
