package linalg

import (
	"math"
	"runtime"
	"slices"
	"sync"

	"streamer/vector"
)

// CSR is a sparse Matrix in compressed sparse row form over a compacted
// column space: only the features that occur in its rows get a column, and
// the most frequent features get the lowest columns. Text is Zipfian, so
// the weights that products touch most often sit together in cache, and
// vector operations run over the features present rather than the whole
// hashed space. The solvers map solutions between the compact columns and
// the feature space (see ColumnMap). Values are stored as float32 (the
// products accumulate in float64): a product reads 8 bytes per non-zero
// instead of 12, which shortens a solve (BenchmarkCGLS; the solver's
// figures of docs/RESULTS.md) and moves its objective only far past the
// solver's tolerance. It is safe for concurrent use.
type CSR struct {
	indptr   []int
	indices  []int32 // compact columns
	values   []float32
	columns  []int32 // feature of each compact column
	features int
	workers  int
	scratch  sync.Pool
	// trans is the transpose for block products (transpose), built once.
	transOnce sync.Once
	trans     *cscIndex
}

// ColumnMap is implemented by matrices whose columns are a subset of a
// larger feature space: column j is feature Columns()[j] of Features().
// The solvers return weights over the whole feature space for such a
// matrix, and take warm starts over it.
type ColumnMap interface {
	Columns() []int32
	Features() int
}

// NewCSR builds a CSR matrix from rows of a space of features dimensions
// (dense rows are stored with all their values). Products use up to
// workers goroutines; 0 means GOMAXPROCS.
func NewCSR(rows []vector.Vector, features, workers int) *CSR {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	m := &CSR{features: features, workers: workers}
	m.columns, m.indices = compactColumns(rows, features)
	m.indptr = make([]int, len(rows)+1)
	m.values = make([]float32, 0, len(m.indices))
	for i, r := range rows {
		for _, v := range r.Values {
			m.values = append(m.values, float32(v))
		}
		m.indptr[i+1] = len(m.values)
	}
	ParallelRange(len(rows), workers, func(_, lo, hi int) {
		var keys []uint64
		for i := lo; i < hi; i++ {
			keys = sortRow(m.indices[m.indptr[i]:m.indptr[i+1]], m.values[m.indptr[i]:m.indptr[i+1]], keys)
		}
	})
	cols := len(m.columns)
	m.scratch.New = func() any { s := make([]float64, cols); return &s }
	return m
}

// compactColumns numbers the features present in rows by falling frequency
// and returns that numbering and every stored value's compact column.
func compactColumns(rows []vector.Vector, features int) (columns, indices []int32) {
	count := make([]int32, features)
	nnz := 0
	for _, r := range rows {
		nnz += r.NNZ()
		eachIndex(r, func(j int32) { count[j]++ })
	}
	for j, c := range count {
		if c > 0 {
			columns = append(columns, int32(j))
		}
	}
	byFrequency(columns, count)
	compact := count // reuse: feature -> compact column
	for c, j := range columns {
		compact[j] = int32(c)
	}
	indices = make([]int32, 0, nnz)
	for _, r := range rows {
		eachIndex(r, func(j int32) { indices = append(indices, compact[j]) })
	}
	return columns, indices
}

func eachIndex(r vector.Vector, fn func(int32)) {
	if r.IsDense() {
		for j := range r.Values {
			fn(int32(j))
		}
		return
	}
	for _, j := range r.Indices {
		fn(j)
	}
}

// byFrequency orders features by falling count, features equally
// frequent by feature. Each is sorted as one integer key: the count's
// complement above the feature.
func byFrequency(features, count []int32) {
	keys := make([]uint64, len(features))
	for k, j := range features {
		keys[k] = uint64(math.MaxInt32-count[j])<<32 | uint64(j)
	}
	slices.Sort(keys)
	for k, key := range keys {
		features[k] = int32(uint32(key))
	}
}

// sortRow sorts a row's entries by column, for sequential access to w.
// Each entry is sorted as one integer key, its column above its value's
// bits, in keys, which it returns for the next row.
func sortRow(idx []int32, val []float32, keys []uint64) []uint64 {
	if slices.IsSorted(idx) {
		return keys
	}
	keys = keys[:0]
	for k, j := range idx {
		keys = append(keys, uint64(j)<<32|uint64(math.Float32bits(val[k])))
	}
	slices.Sort(keys)
	for k, key := range keys {
		idx[k], val[k] = int32(key>>32), math.Float32frombits(uint32(key))
	}
	return keys
}

// Rows returns n.
func (m *CSR) Rows() int { return len(m.indptr) - 1 }

// Cols returns the number of compact columns.
func (m *CSR) Cols() int { return len(m.columns) }

// Columns implements ColumnMap.
func (m *CSR) Columns() []int32 { return m.columns }

// Features implements ColumnMap.
func (m *CSR) Features() int { return m.features }

// Workers returns how many goroutines products use.
func (m *CSR) Workers() int { return m.workers }

// NNZ returns the number of stored values.
func (m *CSR) NNZ() int { return len(m.values) }

func (m *CSR) split(count int) int {
	if m.workers <= 1 || m.Rows() == 0 {
		return 1
	}
	if len(m.values)*count/m.Rows() < parallelMinNNZ {
		return 1
	}
	return min(m.workers, count)
}

// MulVec implements Matrix.
func (m *CSR) MulVec(dst []float64, rows []int, w []float64) {
	count := m.Rows()
	if rows != nil {
		count = len(rows)
	}
	BalancedRange(count, m.split(count), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			i := k
			if rows != nil {
				i = rows[k]
			}
			dst[k] = m.rowDot(i, w)
		}
	})
}

func (m *CSR) rowDot(i int, w []float64) float64 {
	lo, hi := m.indptr[i], m.indptr[i+1]
	idx, val := m.indices[lo:hi], m.values[lo:hi]
	val = val[:len(idx)]
	var s0, s1 float64
	k := 0
	for ; k+2 <= len(idx); k += 2 {
		s0 += float64(val[k]) * w[idx[k]]
		s1 += float64(val[k+1]) * w[idx[k+1]]
	}
	if k < len(idx) {
		s0 += float64(val[k]) * w[idx[k]]
	}
	return s0 + s1
}

// MulTransVec implements Matrix.
func (m *CSR) MulTransVec(dst []float64, rows []int, z []float64) {
	count := m.Rows()
	if rows != nil {
		count = len(rows)
	}
	transProduct(dst, count, m.split(count), &m.scratch, func(acc []float64, lo, hi int) {
		for k := lo; k < hi; k++ {
			if z[k] == 0 {
				continue
			}
			i := k
			if rows != nil {
				i = rows[k]
			}
			m.rowAdd(acc, i, z[k])
		}
	})
}

func (m *CSR) rowAdd(acc []float64, i int, a float64) {
	lo, hi := m.indptr[i], m.indptr[i+1]
	idx, val := m.indices[lo:hi], m.values[lo:hi]
	val = val[:len(idx)]
	for k, j := range idx {
		acc[j] += a * float64(val[k])
	}
}

// ColumnSpace maps weights between a matrix's columns and its feature
// space; for a matrix without a ColumnMap the two are the same.
type ColumnSpace struct {
	Columns  []int32
	Features int
}

// NewColumnSpace returns the column space of x.
func NewColumnSpace(x Matrix) ColumnSpace {
	if cm, ok := x.(ColumnMap); ok {
		return ColumnSpace{Columns: cm.Columns(), Features: cm.Features()}
	}
	return ColumnSpace{Features: x.Cols()}
}

// compact returns the weights (bias last) of feature-space weights w over
// the matrix's columns.
func (s ColumnSpace) Compact(w []float64) []float64 {
	if s.Columns == nil {
		return w
	}
	c := make([]float64, len(s.Columns)+1)
	for k, j := range s.Columns {
		c[k] = w[j]
	}
	c[len(s.Columns)] = w[s.Features]
	return c
}

// expand returns the feature-space weights of column weights c; features
// absent from the matrix get weight 0, their exact optimum under ‖w‖².
func (s ColumnSpace) Expand(c []float64) []float64 {
	if s.Columns == nil {
		return c
	}
	w := make([]float64, s.Features+1)
	for k, j := range s.Columns {
		w[j] = c[k]
	}
	w[s.Features] = c[len(s.Columns)]
	return w
}
