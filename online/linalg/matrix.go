package linalg

import (
	"runtime"
	"sync"

	"streamer/vector"
)

// Matrix is the data matrix X of a problem: n rows of d features, without
// the bias column (the solver appends the constant feature itself).
type Matrix interface {
	Rows() int
	Cols() int
	// MulVec sets dst[k] = x_{rows[k]}·w for every k; rows == nil means all
	// rows, in order. len(w) >= Cols().
	MulVec(dst []float64, rows []int, w []float64)
	// MulTransVec sets dst = Σ_k z[k]·x_{rows[k]}; rows == nil means all
	// rows. len(dst) == Cols().
	MulTransVec(dst []float64, rows []int, z []float64)
}

// Workers returns how many goroutines x's products use (1 for a
// matrix that does not say).
func Workers(x Matrix) int {
	if p, ok := x.(interface{ Workers() int }); ok {
		return p.Workers()
	}
	return 1
}

// parallelMinNNZ is the amount of work below which a product runs on one
// goroutine: starting workers costs more than it saves on small products.
const parallelMinNNZ = 1 << 16

// VectorRows is a Matrix over a slice of vectors, sparse or dense, used as
// they are (no copy). Products use up to Workers goroutines (0 means
// GOMAXPROCS). It is safe for concurrent use.
type VectorRows struct {
	rows    []vector.Vector
	cols    int
	nnz     int
	workers int
	scratch sync.Pool // []float64 accumulators of length cols for MulTransVec
}

// NewVectorRows returns the matrix whose rows are rows, in a space of cols
// features. Sparse indices must be below cols; dense rows at most cols long.
func NewVectorRows(rows []vector.Vector, cols, workers int) *VectorRows {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nnz := 0
	for _, r := range rows {
		nnz += r.NNZ()
	}
	m := &VectorRows{rows: rows, cols: cols, nnz: nnz, workers: workers}
	m.scratch.New = func() any { s := make([]float64, cols); return &s }
	return m
}

// Workers returns how many goroutines products use.
func (m *VectorRows) Workers() int { return m.workers }

// Rows returns n.
func (m *VectorRows) Rows() int { return len(m.rows) }

// Cols returns d.
func (m *VectorRows) Cols() int { return m.cols }

// Row returns row i.
func (m *VectorRows) Row(i int) vector.Vector { return m.rows[i] }

// NNZ returns the number of stored values over all rows.
func (m *VectorRows) NNZ() int { return m.nnz }

func (m *VectorRows) row(rows []int, k int) vector.Vector {
	if rows == nil {
		return m.rows[k]
	}
	return m.rows[rows[k]]
}

// split returns how many workers a product over count of the rows uses.
func (m *VectorRows) split(count int) int {
	if m.workers <= 1 || len(m.rows) == 0 {
		return 1
	}
	work := m.nnz * count / len(m.rows)
	if work < parallelMinNNZ {
		return 1
	}
	return min(m.workers, count)
}

// MulVec implements Matrix.
func (m *VectorRows) MulVec(dst []float64, rows []int, w []float64) {
	count := len(m.rows)
	if rows != nil {
		count = len(rows)
	}
	BalancedRange(count, m.split(count), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			dst[k] = m.row(rows, k).DotDense(w)
		}
	})
}

// MulTransVec implements Matrix.
func (m *VectorRows) MulTransVec(dst []float64, rows []int, z []float64) {
	count := len(m.rows)
	if rows != nil {
		count = len(rows)
	}
	transProduct(dst, count, m.split(count), &m.scratch, func(acc []float64, lo, hi int) {
		m.addTrans(acc, rows, z, lo, hi)
	})
}

func (m *VectorRows) addTrans(acc []float64, rows []int, z []float64, lo, hi int) {
	for k := lo; k < hi; k++ {
		if z[k] != 0 {
			m.row(rows, k).AddScaledTo(acc, z[k])
		}
	}
}

// NewMatrix returns the matrix of rows that suits them: a Dense one when
// at least half of the entries up to the highest feature used are stored
// (dense vectors, or LIBSVM files of dense data), else a CSR over compact
// columns.
func NewMatrix(rows []vector.Vector, features int) Matrix {
	nnz, cols := 0, 0
	for _, r := range rows {
		nnz += r.NNZ()
		if r.IsDense() {
			cols = max(cols, len(r.Values))
		} else if len(r.Indices) > 0 {
			cols = max(cols, int(r.Indices[len(r.Indices)-1])+1)
		}
	}
	if 2*nnz >= len(rows)*cols {
		return NewDense(rows, features, 0)
	}
	return NewCSR(rows, features, 0)
}
