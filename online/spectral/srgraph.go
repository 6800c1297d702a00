package spectral

import (
	"math"
	"runtime"
	"slices"

	"gonum.org/v1/gonum/mat"

	"streamer/online/linalg"
)

// WeightedGraph is a window's kNN graph as Spectral Regression reads it:
// each undirected edge once, with its weight s(i, j) (heat, cosine or
// binary). The graph of package anngraph implements it.
type WeightedGraph interface {
	Vertices() int
	Edges() int
	// Edge returns edge e's ends and weight.
	Edge(e int) (i, j int, w float64)
	// Rank returns the smaller of the positions (0 for the nearest) at
	// which edge e's ends list each other: the edges of rank below p form
	// the symmetrized p-NN graph.
	Rank(e int) int
}

// srAffinity is the label-augmented affinity W of Spectral Regression
// (MATH.md): the edges of the symmetrized p-NN graph (p at most the
// window's k) weighted δ·s(i, j), without the edges that join two labeled
// rows of different classes, plus the label block
// Σ_k (1/l_k) 1_k 1_kᵀ, which is applied as that rank-c sum and never
// stored as edges. As a Operator it is S = D^{-1/2} W D^{-1/2}.
type srAffinity struct {
	n int
	// The kNN edges as a symmetric sparse matrix: row i's neighbours are
	// adj[start[i]:start[i+1]], with weights wt, each undirected edge
	// stored from both ends so that a product gathers by row (rows run in
	// parallel and write only their own output).
	start   []int32
	adj     []int32
	wt      []float64
	members [][]int32 // labeled rows of each class
	invL    []float64 // 1/l_k
	invSqrt []float64 // D^{-1/2}, 0 for a row without edges
	workers int
}

// newSRAffinity builds W over the edges of g of rank below p, with row
// classes class (-1 unlabeled).
func newSRAffinity(g WeightedGraph, class []int, nclass int, delta float64, p int) *srAffinity {
	a := &srAffinity{n: g.Vertices(), members: make([][]int32, nclass), invL: make([]float64, nclass), workers: runtime.GOMAXPROCS(0)}
	a.setEdges(g, class, delta, p)
	for i, c := range class {
		if c >= 0 {
			a.members[c] = append(a.members[c], int32(i))
		}
	}
	for k, m := range a.members {
		if len(m) > 0 {
			a.invL[k] = 1 / float64(len(m))
		}
	}
	a.invSqrt = a.degrees()
	for i, d := range a.invSqrt {
		if d > 0 {
			a.invSqrt[i] = 1 / math.Sqrt(d)
		}
	}
	return a
}

// setEdges stores g's edges of rank below p weighted δ·s(i, j), both
// ways, leaving out those that join two labeled rows of different classes.
func (a *srAffinity) setEdges(g WeightedGraph, class []int, delta float64, p int) {
	kept := func(e, i, j int) bool {
		return g.Rank(e) < p && (class[i] < 0 || class[j] < 0 || class[i] == class[j])
	}
	a.start = make([]int32, a.n+1)
	for e := range g.Edges() {
		if i, j, _ := g.Edge(e); kept(e, i, j) {
			a.start[i+1]++
			a.start[j+1]++
		}
	}
	for i := range a.n {
		a.start[i+1] += a.start[i]
	}
	a.adj = make([]int32, a.start[a.n])
	a.wt = make([]float64, a.start[a.n])
	next := slices.Clone(a.start[:a.n])
	for e := range g.Edges() {
		i, j, w := g.Edge(e)
		if !kept(e, i, j) {
			continue
		}
		a.adj[next[i]], a.wt[next[i]] = int32(j), delta*w
		a.adj[next[j]], a.wt[next[j]] = int32(i), delta*w
		next[i]++
		next[j]++
	}
}

// neighbours returns row i's neighbours and their weights.
func (a *srAffinity) neighbours(i int) ([]int32, []float64) {
	lo, hi := a.start[i], a.start[i+1]
	return a.adj[lo:hi], a.wt[lo:hi]
}

// degrees returns D = W·1.
func (a *srAffinity) degrees() []float64 {
	d := make([]float64, a.n)
	for i := range a.n {
		_, ws := a.neighbours(i)
		for _, w := range ws {
			d[i] += w
		}
	}
	for k, m := range a.members {
		for _, i := range m {
			d[i] += float64(len(m)) * a.invL[k] // = 1: the block's row sum
		}
	}
	return d
}

// Dim implements Operator.
func (a *srAffinity) Dim() int { return a.n }

// MulBlock sets dst = D^{-1/2} W D^{-1/2} src.
func (a *srAffinity) MulBlock(dst, src *mat.Dense) {
	_, b := src.Dims()
	scaled := mat.NewDense(a.n, b, nil)
	for i := range a.n {
		floatsScaleTo(scaled.RawRowView(i), a.invSqrt[i], src.RawRowView(i))
	}
	a.mulW(dst, scaled)
	for i := range a.n {
		row := dst.RawRowView(i)
		floatsScaleTo(row, a.invSqrt[i], row)
	}
}

// mulW sets dst = W·src: the kNN part gathered row by row in parallel
// (RowBlockDot), then the label block as its rank-c sum.
func (a *srAffinity) mulW(dst, src *mat.Dense) {
	in := src.RawMatrix()
	linalg.ParallelRange(a.n, a.workers, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			js, ws := a.neighbours(i)
			linalg.RowBlockDot(dst.RawRowView(i), in.Data, in.Stride, js, ws)
		}
	})
	_, b := src.Dims()
	sum := make([]float64, b)
	for k, m := range a.members {
		clear(sum)
		for _, i := range m {
			linalg.Axpy(sum, 1, src.RawRowView(int(i)))
		}
		for _, i := range m {
			linalg.Axpy(dst.RawRowView(int(i)), a.invL[k], sum)
		}
	}
}

// trivialVector returns D^{1/2}·1 normalized: S's eigenvector of
// eigenvalue 1, which carries no information and is deflated.
func (a *srAffinity) trivialVector() []float64 {
	u := make([]float64, a.n)
	for i, s := range a.invSqrt {
		if s > 0 {
			u[i] = 1 / s
		}
	}
	if nrm := linalg.Norm(u); nrm > 0 {
		for i := range u {
			u[i] /= nrm
		}
	}
	return u
}

// dense returns S as a dense symmetric matrix, for small windows and tests.
func (a *srAffinity) dense() *mat.SymDense {
	id := mat.NewDense(a.n, a.n, nil)
	for i := range a.n {
		id.Set(i, i, 1)
	}
	out := mat.NewDense(a.n, a.n, nil)
	a.MulBlock(out, id)
	s := mat.NewSymDense(a.n, nil)
	for i := range a.n {
		for j := i; j < a.n; j++ {
			s.SetSym(i, j, (out.At(i, j)+out.At(j, i))/2)
		}
	}
	return s
}

func floatsScaleTo(dst []float64, c float64, src []float64) {
	for k, v := range src {
		dst[k] = c * v
	}
}
