package spectral

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"streamer/online/linalg"
	"streamer/vector"
)

// srGramRefresh is the number of solves after which the Gram matrix is
// summed again from every row, so that rounding in the updates cannot
// build up; srGramMaxChange is the share of changed rows above which
// summing again is cheaper than updating.
const (
	srGramRefresh   = 64
	srGramMaxChange = 0.25
)

// srGram is X̃ᵀCX̃ of a dense SR solve (X̃ with the bias column, C = 1 on
// labeled rows and γ² on unlabeled ones), with the rows it sums, so that
// the next solve of a window that slid adds the rows that came and
// subtracts those that went (n·d² flops become changed·d²).
type srGram struct {
	keys    []uint64
	rows    []vector.Vector // the rows summed, as the window held them
	scale   []float64       // √C of each row
	g       *mat.SymDense
	updates int // solves since it was last summed from every row
}

// gramFor returns X̃ᵀCX̃ for the rows of x with row scales scale: prev's
// updated when it can be, else summed from every row. The result can be
// updated by the next solve only when the window's rows and keys are
// known. It stops early, with ctx's error, when ctx is done.
func (p *srProblem) gramFor(ctx context.Context, x *linalg.Dense, scale []float64, prev *srGram) (*srGram, error) {
	d := x.Cols() + 1
	// Rows are matched across solves by key: without keys (or rows) the
	// sum cannot be updated, and is not kept for it.
	rows := p.data.Rows
	if p.data.Keys == nil {
		rows = nil
	}
	next := &srGram{keys: p.keysOf(), rows: rows, scale: scale}
	if rows != nil && prev != nil && prev.rows != nil && prev.g.SymmetricDim() == d && prev.updates < srGramRefresh {
		g, ok, err := prev.updated(ctx, next, d, x.Workers())
		if err != nil {
			return nil, err
		}
		if ok {
			next.g, next.updates = g, prev.updates+1
			return next, nil
		}
	}
	g, err := summedGram(ctx, x, scale)
	if err != nil {
		return nil, err
	}
	next.g = g
	return next, nil
}

func (p *srProblem) keysOf() []uint64 {
	keys := make([]uint64, p.data.X.Rows())
	for i := range keys {
		keys[i] = p.key(i)
	}
	return keys
}

// updated returns g's Gram matrix moved to next's rows: minus the rows
// that left or changed scale, plus those that came or changed, each sum on
// up to workers goroutines. It returns false when too many rows changed
// for an update to pay, and ctx's error when ctx is done.
func (g *srGram) updated(ctx context.Context, next *srGram, d, workers int) (*mat.SymDense, bool, error) {
	at := make(map[uint64]int, len(g.keys))
	for i, k := range g.keys {
		at[k] = i
	}
	var added []int
	kept := make([]bool, len(g.keys))
	for i, k := range next.keys {
		j, ok := at[k]
		if ok && next.scale[i] == g.scale[j] && sameVector(next.rows[i], g.rows[j]) {
			kept[j] = true
			continue
		}
		added = append(added, i)
	}
	var removed []int
	for j, ok := range kept {
		if !ok {
			removed = append(removed, j)
		}
	}
	if float64(len(added)+len(removed)) > srGramMaxChange*float64(len(next.keys)) {
		return nil, false, nil
	}
	in, err := rowsGram(ctx, d, len(added), workers, next.fillPicked(added))
	if err != nil {
		return nil, false, err
	}
	gone, err := rowsGram(ctx, d, len(removed), workers, g.fillPicked(removed))
	if err != nil {
		return nil, false, err
	}
	out := mat.NewSymDense(d, nil)
	out.CopySym(g.g)
	out.AddSym(out, in)
	gone.ScaleSym(-1, gone)
	out.AddSym(out, gone)
	return out, true, nil
}

// fillPicked returns rowsGram's fill of g's rows picked: row k is
// s_i·x̃_i for i = picked[k].
func (g *srGram) fillPicked(picked []int) func(k int, dst []float64) {
	return func(k int, dst []float64) {
		i := picked[k]
		g.rows[i].AddScaledTo(dst[:len(dst)-1], g.scale[i])
		dst[len(dst)-1] = g.scale[i]
	}
}

// summedGram returns X̃ᵀCX̃ summed over every row of x (row scales √C).
func summedGram(ctx context.Context, x *linalg.Dense, scale []float64) (*mat.SymDense, error) {
	d := x.Cols() + 1
	return rowsGram(ctx, d, x.Rows(), x.Workers(), func(i int, dst []float64) {
		floatsScaleTo(dst[:d-1], scale[i], x.Row(i))
		dst[d-1] = scale[i]
	})
}

// rowsGram returns Σ_k r_k r_kᵀ over count rows of d values, row k written
// by fill into a cleared slice, in blocks of up to srGramBlock rows by
// rank-k updates on up to workers goroutines, whose sums are added in
// order (a few hundred rows that slid are split between the workers too).
// Between blocks it stops when ctx is done, returning ctx's error.
func rowsGram(ctx context.Context, d, count, workers int, fill func(k int, dst []float64)) (*mat.SymDense, error) {
	size := max(1, min(srGramBlock, (count+workers-1)/workers)) // every worker gets rows
	blocks := (count + size - 1) / size
	workers = max(1, min(workers, blocks))
	grams := make([]*mat.SymDense, workers)
	linalg.ParallelRange(blocks, workers, func(w, lo, hi int) {
		g := mat.NewSymDense(d, nil)
		a := mat.NewDense(size, d, nil)
		for blk := lo; blk < hi && ctx.Err() == nil; blk++ {
			first, last := blk*size, min(count, (blk+1)*size)
			for k := first; k < last; k++ {
				row := a.RawRowView(k - first)
				clear(row)
				fill(k, row)
			}
			g.SymRankK(g, 1, a.Slice(0, last-first, 0, d).T())
		}
		grams[w] = g
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if grams[0] == nil {
		grams[0] = mat.NewSymDense(d, nil)
	}
	for w := 1; w < len(grams); w++ {
		if grams[w] != nil {
			grams[0].AddSym(grams[0], grams[w])
		}
	}
	return grams[0], nil
}

// sameVector reports whether a and b are the same vector in memory: a row
// kept under its key but mapped again (a new kernel map) is another row.
func sameVector(a, b vector.Vector) bool {
	return len(a.Values) == len(b.Values) && len(a.Indices) == len(b.Indices) &&
		(len(a.Values) == 0 || &a.Values[0] == &b.Values[0])
}
