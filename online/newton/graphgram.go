package newton

import (
	"sync"

	"streamer/online/linalg"
)

// directGraphMaxCols is the widest dense problem (columns plus the bias)
// whose Newton systems with the graph term are solved directly. With the
// graph term every CGLS iteration passes over every row and through the
// graph, and the term's spread of scales asks hundreds of iterations per
// Newton step; the direct solver instead forms X̃ᵀMX̃ once per window
// (2·n·d² flops plus d products with M, shared by every class) and
// factors a d × d matrix per Newton step. That is several times faster
// than CGLS on windows of at least as many rows as columns
// (BenchmarkTrainDenseMultiClass measures a dense lapsvm fit). On
// windows of fewer rows it can cost more than a step's iterations, but
// its cost is bounded, while CGLS's is not: with the few labels of a
// stream's first solves, a tsvm with the graph term over a window of
// fewer rows than columns can run to the iteration cap at every Newton
// step. So the width alone decides (docs/MATH.md, "Dense windows are
// solved directly").
const directGraphMaxCols = 1025

// graphGramBlock is the number of columns of M·X̃ formed at a time.
const graphGramBlock = 64

// GraphGram is X̃ᵀMX̃ of a dense window (X̃ with the bias column, M = BᵀB
// the graph term's matrix), formed on first use and then shared, read
// only, by the window's binary problems.
type GraphGram struct {
	once sync.Once
	x    *linalg.Dense
	lap  Laplacian
	g    []float64 // d1 × d1, row-major, symmetric
}

// NewGraphGram returns the shared X̃ᵀMX̃ of x and lap, or nil when x is
// not dense or too wide for the direct solver.
func NewGraphGram(x linalg.Matrix, lap Laplacian) *GraphGram {
	d, ok := x.(*linalg.Dense)
	if !ok || lap == nil || d.Cols()+1 > directGraphMaxCols {
		return nil
	}
	return &GraphGram{x: d, lap: lap}
}

// matrix returns X̃ᵀMX̃, d1 × d1 row-major, forming it on the first call.
func (gg *GraphGram) matrix() []float64 {
	gg.once.Do(gg.form)
	return gg.g
}

// form computes X̃ᵀMX̃ by blocks of columns: M·X̃ on a block, one column
// per product with B and Bᵀ (in parallel), then X̃ᵀ times the block
// (the window's transposed block product).
func (gg *GraphGram) form() {
	n, d := gg.x.Rows(), gg.x.Cols()
	d1 := d + 1
	gg.g = make([]float64, d1*d1)
	mx := make([]float64, n*graphGramBlock)
	xtmx := make([]float64, d*graphGramBlock)
	workers := min(gg.x.Workers(), graphGramBlock)
	bufs := make([]graphGramBuffers, workers)
	for w := range bufs {
		bufs[w] = graphGramBuffers{col: make([]float64, n), mcol: make([]float64, n), bo: make([]float64, gg.lap.FactorRows())}
	}
	for lo := 0; lo < d1; lo += graphGramBlock {
		width := min(graphGramBlock, d1-lo)
		linalg.ParallelRange(width, workers, func(w, first, last int) {
			col, mcol, bo := bufs[w].col, bufs[w].mcol, bufs[w].bo
			for j := first; j < last; j++ {
				gg.column(col, lo+j)
				gg.lap.MulFactor(bo, col)
				gg.lap.MulFactorTrans(mcol, bo)
				for i, v := range mcol {
					mx[i*width+j] = v
				}
			}
		})
		gg.x.MulTransBlock(xtmx[:d*width], mx[:n*width], width)
		for j := range d {
			copy(gg.g[j*d1+lo:j*d1+lo+width], xtmx[j*width:(j+1)*width])
		}
		bias := gg.g[d*d1+lo : d*d1+lo+width]
		for i := range n {
			linalg.Axpy(bias, 1, mx[i*width:(i+1)*width])
		}
	}
}

// graphGramBuffers are one worker's vectors for the products with B, Bᵀ.
type graphGramBuffers struct{ col, mcol, bo []float64 }

// column sets dst to column j of X̃: feature j, or the bias's ones.
func (gg *GraphGram) column(dst []float64, j int) {
	d := gg.x.Cols()
	if j == d {
		for i := range dst {
			dst[i] = 1
		}
		return
	}
	for i := range dst {
		dst[i] = gg.x.Row(i)[j]
	}
}
