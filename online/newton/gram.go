package newton

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"streamer/online/linalg"
)

// directMaxCols is the widest dense problem (columns plus the bias) whose
// Newton systems are solved directly. Forming XᵀCX costs about d/4 CGLS
// iterations from scratch and d/(2n) of one per row whose cost changed,
// the Cholesky factorization d³/3; a Newton step of a d-column problem
// takes CGLS some d/2 to d iterations. Below this width the direct solve
// is the cheaper one even when every row changes.
const directMaxCols = 129

// gramRebuild bounds the rank-one updates applied to a Gram matrix, as a
// multiple of its rows, before it is formed again from scratch, so that
// rounding errors of the updates cannot accumulate.
const gramRebuild = 4

// gram solves the Newton system of eq. 6.4 for a narrow dense problem
// without a graph term directly: (λI + X̃ᵀCX̃) w = X̃ᵀCY by Cholesky, X̃ the
// rows with the constant bias feature. The exact Newton point is what CGLS
// approximates to ε. X̃ᵀCX̃ is kept from one system to the next and updated
// by rank-one terms for the positions whose cost C changed: a finite Newton
// step changes the active set on a few rows, a TSVM switch on a few pairs,
// and annealing λ_u rescales the unlabeled rows' costs.
type gram struct {
	x       *linalg.Dense
	d1      int       // columns plus the bias
	h       []float64 // upper triangle of X̃ᵀCX̃ at cost, d1 × d1 row-major
	cost    []float64 // the cost per position that h holds
	factor  []float64 // Cholesky factor of λI + h
	z       []float64 // C·Y per position
	pos     []float64 // up to gramBlock rows √ΔC·x̃ of positions whose cost rose
	neg     []float64 // up to gramBlock rows √-ΔC·x̃ of positions whose cost fell
	updates int       // rank-one updates since h was last formed
	// graph, when set, adds the graph term: κ·X̃ᵀMX̃ joins λI in every
	// system (κ the solver's).
	graph *GraphGram
}

// newGram returns the direct solver for x, or nil when x is too wide for
// it or not dense.
func newGram(x linalg.Matrix) *gram {
	d, ok := x.(*linalg.Dense)
	if !ok || d.Cols()+1 > directMaxCols {
		return nil
	}
	return newDenseGram(d)
}

func newDenseGram(x *linalg.Dense) *gram {
	d1 := x.Cols() + 1
	return &gram{x: x, d1: d1, h: make([]float64, d1*d1), factor: make([]float64, d1*d1)}
}

// newGraphDirect returns the direct solver of problems with the graph
// term over gg's window (nil when gg is nil: the window is not dense or
// too wide).
func newGraphDirect(gg *GraphGram) *gram {
	if gg == nil {
		return nil
	}
	g := newDenseGram(gg.x)
	g.graph = gg
	return g
}

// solve sets w to the Newton point of the system with per-position costs
// cost and targets target at the solver s, and reports whether the
// factorization succeeded (it can only fail on a numerically singular
// system, when the caller falls back to CGLS).
func (g *gram) solve(s *newton, cost, target, w []float64) bool {
	g.update(s, cost)
	copy(g.factor, g.h)
	if g.graph != nil {
		linalg.Axpy(g.factor, s.kappa, g.graph.matrix())
	}
	for j := range g.d1 {
		g.factor[j*g.d1+j] += s.lambda
	}
	t, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: g.d1, Stride: g.d1, Data: g.factor})
	if !ok {
		g.cost = g.cost[:0] // form h again next time
		return false
	}
	g.z = linalg.Grow(&g.z, len(cost))
	for p, c := range cost {
		g.z[p] = c * target[p]
	}
	s.mulTransVec(w, s.rows, g.z)
	lapack64.Potrs(t, blas64.General{Rows: g.d1, Cols: 1, Stride: 1, Data: w})
	return true
}

// update brings h to the costs cost: by rank-one terms for the positions
// whose cost changed, or from scratch when that is as cheap or when too
// many updates were applied since h was formed.
func (g *gram) update(s *newton, cost []float64) {
	fresh := len(g.cost) != len(cost)
	changed, held := 0, 0
	if !fresh {
		for p, c := range cost {
			if c != g.cost[p] {
				changed++
			}
			if c != 0 {
				held++
			}
		}
		fresh = changed >= held || g.updates+changed > gramRebuild*len(cost)
	}
	if fresh {
		clear(g.h)
		g.cost = append(g.cost[:0], make([]float64, len(cost))...)
		g.updates = 0
	}
	g.pos, g.neg = g.pos[:0], g.neg[:0]
	for p, c := range cost {
		delta := c - g.cost[p]
		switch {
		case delta > 0:
			g.pos = g.appendRow(g.pos, s.matrixRow(p), math.Sqrt(delta), 1)
		case delta < 0:
			g.neg = g.appendRow(g.neg, s.matrixRow(p), math.Sqrt(-delta), -1)
		}
	}
	linalg.AddOuter(g.h, g.d1, 1, g.pos)
	linalg.AddOuter(g.h, g.d1, -1, g.neg)
	if !fresh {
		g.updates += changed
	}
	copy(g.cost, cost)
}

// gramBlock is the number of gathered rows added to h at a time.
const gramBlock = 64

// appendRow appends a·x̃_row (the row with its bias feature) to buf, first
// adding buf's rows to h with sign alpha when it holds gramBlock rows.
func (g *gram) appendRow(buf []float64, row int, a, alpha float64) []float64 {
	if len(buf) == gramBlock*g.d1 {
		linalg.AddOuter(g.h, g.d1, alpha, buf)
		buf = buf[:0]
	}
	for _, v := range g.x.Row(row) {
		buf = append(buf, a*v)
	}
	return append(buf, a)
}
