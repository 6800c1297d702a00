package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// BlockMatrix is implemented by matrices that multiply a block of s vectors
// at once, stored row-major (entry (i, j) at i·s + j), as block CG asks:
// one pass over the stored values serves every vector (though on large
// sparse windows the block leaves the cache that one vector stays in:
// BenchmarkBlockProducts). Every output entry is
// summed in a fixed order (a dense matrix's transposed product by shares
// of the rows, added in order), so the products are the same on every
// run.
type BlockMatrix interface {
	// MulBlock sets dst (Rows × s) = X·p for p (Cols × s).
	MulBlock(dst, p []float64, s int)
	// MulTransBlock sets dst (Cols × s) = Xᵀ·z for z (Rows × s).
	MulTransBlock(dst, z []float64, s int)
}

// BlockProducts returns x's block products: its own, or column by column
// through MulVec and MulTransVec for a matrix without them.
func BlockProducts(x Matrix) BlockMatrix {
	if b, ok := x.(BlockMatrix); ok {
		return b
	}
	return columnProducts{x}
}

func (m *CSR) MulBlock(dst, p []float64, s int) {
	BalancedRange(m.Rows(), m.blockWorkers(s), func(_, lo, hi int) {
		sparseRowsBlock(dst, p, s, m.indptr, m.indices, m.values, lo, hi)
	})
}

func (m *CSR) MulTransBlock(dst, z []float64, s int) {
	t := m.transpose()
	balancedChunks(t.chunks, m.blockWorkers(s), func(lo, hi int) {
		sparseRowsBlock(dst, z, s, t.colptr, t.rows, t.values, lo, hi)
	})
}

// sparseRowsBlock sets rows lo to hi of dst (s values each) to the
// products of the compressed rows (ptr, idx, vals; a CSR matrix's rows or
// its transpose's) with the block src. Each row's outputs are summed six
// at a time in registers (then three, then one), the row's values read
// once per group: adding every value into all s outputs in memory loads
// and stores each output once per value, and groups of 4, 8 or 12 were
// slower than 6 (BenchmarkBlockProducts). Every output is summed over the
// row's values in order.
func sparseRowsBlock(dst, src []float64, s int, ptr []int, idx []int32, vals []float32, lo, hi int) {
	for i := lo; i < hi; i++ {
		RowBlockDot(dst[i*s:(i+1)*s], src, s, idx[ptr[i]:ptr[i+1]], vals[ptr[i]:ptr[i+1]])
	}
}

// RowBlockDot sets out to the products of the sparse row (idx, vals) with
// the first len(out) columns of the row-major block src whose rows start
// stride values apart, as sparseRowsBlock says.
func RowBlockDot[V float32 | float64](out, src []float64, stride int, idx []int32, vals []V) {
	c := 0
	for ; c+6 <= len(out); c += 6 {
		rowDot6(out[c:c+6], src[c:], stride, idx, vals)
	}
	if c+3 <= len(out) {
		rowDot3(out[c:c+3], src[c:], stride, idx, vals)
		c += 3
	}
	vals = vals[:len(idx)]
	for ; c < len(out); c++ {
		var o float64
		for k, j := range idx {
			o += float64(vals[k]) * src[int(j)*stride+c]
		}
		out[c] = o
	}
}

// rowDot6 sets out's six values to the row's (idx, vals) products with
// six columns of the block src whose rows start s values apart, starting
// at src's first.
func rowDot6[V float32 | float64](out, src []float64, s int, idx []int32, vals []V) {
	vals = vals[:len(idx)]
	var o0, o1, o2, o3, o4, o5 float64
	for k, j := range idx {
		v, w := float64(vals[k]), src[int(j)*s:]
		w = w[:6]
		o0 += v * w[0]
		o1 += v * w[1]
		o2 += v * w[2]
		o3 += v * w[3]
		o4 += v * w[4]
		o5 += v * w[5]
	}
	out = out[:6]
	out[0], out[1], out[2], out[3], out[4], out[5] = o0, o1, o2, o3, o4, o5
}

// rowDot3 is rowDot6 for three columns.
func rowDot3[V float32 | float64](out, src []float64, s int, idx []int32, vals []V) {
	vals = vals[:len(idx)]
	var o0, o1, o2 float64
	for k, j := range idx {
		v, w := float64(vals[k]), src[int(j)*s:]
		w = w[:3]
		o0 += v * w[0]
		o1 += v * w[1]
		o2 += v * w[2]
	}
	out = out[:3]
	out[0], out[1], out[2] = o0, o1, o2
}

// blockWorkers returns how many goroutines a product with a block of s
// vectors uses: the matrix's workers, unless it is too little work.
func (m *CSR) blockWorkers(s int) int {
	if len(m.values)*s < parallelMinNNZ {
		return 1
	}
	return m.workers
}

// cscIndex is a CSR matrix's transpose, its values by column, for products
// with Xᵀ in which each column's sum is one goroutine's: no per-worker
// accumulators of every column to add up. chunks cuts the columns into
// runs of about equal non-zeros (the frequent columns come first), for the
// workers to take in turn.
type cscIndex struct {
	colptr []int
	rows   []int32
	values []float32
	chunks []int
}

// transpose returns m's transpose, built on first use (a counting sort of
// the non-zeros).
func (m *CSR) transpose() *cscIndex {
	m.transOnce.Do(func() {
		cols := m.Cols()
		t := &cscIndex{colptr: make([]int, cols+1), rows: make([]int32, len(m.values)), values: make([]float32, len(m.values))}
		for _, j := range m.indices {
			t.colptr[j+1]++
		}
		for j := range cols {
			t.colptr[j+1] += t.colptr[j]
		}
		next := append([]int(nil), t.colptr[:cols]...)
		for i := range m.Rows() {
			for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
				j := m.indices[k]
				t.rows[next[j]], t.values[next[j]] = int32(i), m.values[k]
				next[j]++
			}
		}
		t.chunks = nnzChunks(t.colptr, m.workers*balanceChunks)
		m.trans = t
	})
	return m.trans
}

func (m *Dense) MulBlock(dst, p []float64, s int) {
	if m.cols == 0 {
		clear(dst[:m.n*s])
		return
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, m.block(0, m.n), General(p, m.cols, s), 0, General(dst, m.n, s))
}

// MulTransBlock sums, on each of m's workers over its contiguous share of
// the rows, z_ik·x_i into column k's sum (SIMD axpys as long as a row),
// adds the shares in order and writes the sums by rows of dst. gonum's
// Gemm with the transposed rows as first factor is slower
// (BenchmarkDenseBlockProducts measures both).
func (m *Dense) MulTransBlock(dst, z []float64, s int) {
	d := m.cols
	workers := max(1, min(m.workers, m.n))
	parts := make([][]float64, workers) // s × d each: column k's sum in row k
	ParallelRange(m.n, workers, func(w, lo, hi int) {
		acc := make([]float64, s*d)
		for i := lo; i < hi; i++ {
			row := m.Row(i)
			for k, v := range z[i*s : (i+1)*s] {
				if v != 0 {
					Axpy(acc[k*d:(k+1)*d], v, row)
				}
			}
		}
		parts[w] = acc
	})
	sum := parts[0]
	for _, part := range parts[1:] {
		if part != nil {
			Axpy(sum, 1, part)
		}
	}
	for k := range s {
		for j, v := range sum[k*d : (k+1)*d] {
			dst[j*s+k] = v
		}
	}
}

// columnProducts multiplies a block one column at a time.
type columnProducts struct{ x Matrix }

func (c columnProducts) MulBlock(dst, p []float64, s int) {
	c.each(dst, p, s, c.x.Rows(), c.x.Cols(), func(out, in []float64) { c.x.MulVec(out, nil, in) })
}

func (c columnProducts) MulTransBlock(dst, z []float64, s int) {
	c.each(dst, z, s, c.x.Cols(), c.x.Rows(), func(out, in []float64) { c.x.MulTransVec(out, nil, in) })
}

// each gathers column j of src (in rows × s), applies mul into a vector of
// out entries and scatters it into column j of dst.
func (columnProducts) each(dst, src []float64, s, out, in int, mul func(out, in []float64)) {
	u, v := make([]float64, in), make([]float64, out)
	for j := range s {
		for i := range in {
			u[i] = src[i*s+j]
		}
		mul(v, u)
		for i := range out {
			dst[i*s+j] = v[i]
		}
	}
}

// General views data as an n × s row-major BLAS matrix.
func General(data []float64, n, s int) blas64.General {
	return blas64.General{Rows: n, Cols: s, Stride: s, Data: data}
}
