package linalg

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"

	"streamer/vector"
)

// Dense is a Matrix of dense rows stored one after another in one slice.
// Its columns are the first Cols() features of a feature space of
// Features() (a window of 784-value vectors in a service configured for
// 2^18 hashed features has 784 columns), so the solver's vectors have the
// length of the rows, not of the space; the solvers map weights between
// the two (see ColumnMap). Products over all rows are BLAS matrix–vector
// products.
// It is safe for concurrent use.
type Dense struct {
	values   []float64 // row i is values[i*cols : (i+1)*cols]
	n, cols  int
	columns  []int32 // 0 … cols-1
	features int
	workers  int
	scratch  sync.Pool // []float64 accumulators of length cols for MulTransVec
}

// NewDense packs rows, dense or sparse, into a dense matrix whose columns
// are features 0 … c-1 of a space of features, c the highest feature any row
// uses plus one. Products use up to workers goroutines; 0 means GOMAXPROCS.
func NewDense(rows []vector.Vector, features, workers int) *Dense {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	cols := 0
	for _, r := range rows {
		if r.IsDense() {
			cols = max(cols, len(r.Values))
		} else if len(r.Indices) > 0 {
			cols = max(cols, int(r.Indices[len(r.Indices)-1])+1)
		}
	}
	m := &Dense{values: make([]float64, len(rows)*cols), n: len(rows), cols: cols, features: features, workers: workers}
	for i, r := range rows {
		r.AddScaledTo(m.Row(i), 1)
	}
	m.columns = make([]int32, cols)
	for j := range m.columns {
		m.columns[j] = int32(j)
	}
	m.scratch.New = func() any { s := make([]float64, cols); return &s }
	return m
}

// Rows returns n.
func (m *Dense) Rows() int { return m.n }

// Workers returns how many goroutines products use.
func (m *Dense) Workers() int { return m.workers }

// Cols returns the number of columns.
func (m *Dense) Cols() int { return m.cols }

// Columns implements ColumnMap.
func (m *Dense) Columns() []int32 { return m.columns }

// Features implements ColumnMap.
func (m *Dense) Features() int { return m.features }

// Row returns row i, shared with the matrix.
func (m *Dense) Row(i int) []float64 { return m.values[i*m.cols : (i+1)*m.cols : (i+1)*m.cols] }

func (m *Dense) split(count int) int {
	if m.workers <= 1 || count*m.cols < parallelMinNNZ {
		return 1
	}
	return min(m.workers, count)
}

// block returns rows lo … hi-1 as a BLAS matrix.
func (m *Dense) block(lo, hi int) blas64.General {
	return blas64.General{Rows: hi - lo, Cols: m.cols, Stride: m.cols, Data: m.values[lo*m.cols : hi*m.cols]}
}

// MulVec implements Matrix.
func (m *Dense) MulVec(dst []float64, rows []int, w []float64) {
	count := m.n
	if rows != nil {
		count = len(rows)
	}
	if m.cols == 0 {
		clear(dst[:count])
		return
	}
	w = w[:m.cols]
	BalancedRange(count, m.split(count), func(_, lo, hi int) {
		if rows == nil {
			blas64.Gemv(blas.NoTrans, 1, m.block(lo, hi), blas64.Vector{N: m.cols, Inc: 1, Data: w},
				0, blas64.Vector{N: hi - lo, Inc: 1, Data: dst[lo:hi]})
			return
		}
		for k := lo; k < hi; k++ {
			dst[k] = floats.Dot(m.Row(rows[k]), w)
		}
	})
}

// MulTransVec implements Matrix.
func (m *Dense) MulTransVec(dst []float64, rows []int, z []float64) {
	count := m.n
	if rows != nil {
		count = len(rows)
	}
	transProduct(dst, count, m.split(count), &m.scratch, func(acc []float64, lo, hi int) {
		if m.cols == 0 {
			return
		}
		if rows == nil {
			blas64.Gemv(blas.Trans, 1, m.block(lo, hi), blas64.Vector{N: hi - lo, Inc: 1, Data: z[lo:hi]},
				1, blas64.Vector{N: m.cols, Inc: 1, Data: acc})
			return
		}
		for k := lo; k < hi; k++ {
			if z[k] != 0 {
				floats.AddScaled(acc, z[k], m.Row(rows[k]))
			}
		}
	})
}
