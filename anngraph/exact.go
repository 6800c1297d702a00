package anngraph

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"

	"streamer/vector"
)

// ExactDistances returns, for each of rows, the distances of its k nearest
// other rows of the view by brute force, nearest first, in the Metric's
// units and computed as the kNN lists' are: the reference that the lists'
// recall is measured against. It runs on up to two goroutines, joined
// before it returns.
func (v *View) ExactDistances(ctx context.Context, rows []int, k int) ([][]float64, error) {
	out := make([][]float64, len(rows))
	workers := min(runtime.GOMAXPROCS(0), 2)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for g := range workers {
		wg.Go(func() {
			b := bruteForce{v: v}
			for s := g; s < len(rows); s += workers {
				if err := ctx.Err(); err != nil {
					errs[g] = err
					return
				}
				out[s] = b.nearest(rows[s], k)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bruteForce computes exact distances from one row to all others. A sparse
// query is scattered into a dense buffer so that each distance costs one
// pass over the other row.
type bruteForce struct {
	v       *View
	scatter []float64
	ds      []float64
}

func (b *bruteForce) nearest(i, k int) []float64 {
	v := b.v
	q := v.vecs[i]
	if !q.IsDense() {
		for _, j := range q.Indices {
			if int(j) >= len(b.scatter) {
				b.scatter = slices.Grow(b.scatter, int(j)+1-len(b.scatter))[:int(j)+1]
			}
		}
		q.AddScaledTo(b.scatter, 1)
		defer func() {
			for _, j := range q.Indices {
				b.scatter[j] = 0
			}
		}()
	}
	b.ds = b.ds[:0]
	for j := range v.Len() {
		if j == i {
			continue
		}
		var dot float64
		if q.IsDense() {
			dot = vector.Dot(q, v.vecs[j])
		} else {
			x := v.vecs[j]
			for t, idx := range x.Indices {
				if int(idx) < len(b.scatter) {
					dot += x.Values[t] * b.scatter[idx]
				}
			}
		}
		b.ds = append(b.ds, v.distance(v.sq[i], v.sq[j], dot))
	}
	slices.Sort(b.ds)
	return slices.Clone(b.ds[:min(k, len(b.ds))])
}

// Distance returns the distance between rows i and j in the Metric's units,
// computed exactly in float64 from the rows' vectors. The distances in the
// kNN lists of a graph window are computed in float32 for dense vectors and
// may differ from it in the seventh digit.
func (v *View) Distance(i, j int) float64 {
	return v.distance(v.sq[i], v.sq[j], vector.Dot(v.vecs[i], v.vecs[j]))
}

// distance returns the distance in the Metric's units of two rows with the
// given squared norms and inner product.
func (v *View) distance(sqA, sqB, dot float64) float64 {
	if v.metric == Euclidean {
		return math.Sqrt(max(sqA+sqB-2*dot, 0))
	}
	if sqA == 0 || sqB == 0 {
		return 1
	}
	return min(max(1-dot/math.Sqrt(sqA*sqB), 0), 2)
}
