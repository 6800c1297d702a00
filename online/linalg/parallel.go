package linalg

import (
	"sort"
	"sync"
	"sync/atomic"
)

// transProduct sets dst to the sum of add over workers contiguous chunks of
// [0, count), the same chunks on every run: each worker clears its own
// accumulator (the first uses dst itself) and adds its chunk into it, then
// the others' accumulators are added into dst, on every worker for a long
// dst, each over its own span. For a given number of workers the sums keep
// one order, which replays rely on.
func transProduct(dst []float64, count, workers int, scratch *sync.Pool, add func(acc []float64, lo, hi int)) {
	if workers == 1 {
		clear(dst)
		add(dst, 0, count)
		return
	}
	bufs := make([]*[]float64, workers)
	ParallelRange(count, workers, func(w, lo, hi int) {
		bufs[w] = &dst
		if w != 0 {
			bufs[w] = scratch.Get().(*[]float64)
		}
		clear(*bufs[w])
		add(*bufs[w], lo, hi)
	})
	if bufs[0] == nil {
		clear(dst)
	}
	reducers := 1
	if len(dst) >= VectorMinLen {
		reducers = workers
	}
	ParallelRange(len(dst), reducers, func(_, lo, hi int) {
		for _, b := range bufs[1:] {
			if b != nil {
				Axpy(dst[lo:hi], 1, (*b)[lo:hi])
			}
		}
	})
	for _, b := range bufs[1:] {
		if b != nil {
			scratch.Put(b)
		}
	}
}

// ParallelRange calls fn(w, lo, hi) on worker w's contiguous chunk of
// [0, n), for w < workers, and waits for all of them.
func ParallelRange(n, workers int, fn func(w, lo, hi int)) {
	if workers <= 1 || n < 2 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := chunk(n, workers, w)
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, lo, hi)
		}()
	}
	wg.Wait()
}

// chunk returns worker w's share [lo, hi) of [0, n) cut into workers
// contiguous chunks.
func chunk(n, workers, w int) (lo, hi int) {
	return n * w / workers, n * (w + 1) / workers
}

// balanceChunks is how many chunks per worker BalancedRange cuts a range
// into: enough that a worker slowed down (by the other core's memory
// traffic, or by another process) hands its share to the others.
const balanceChunks = 16

// BalancedRange calls fn(w, lo, hi) on chunks of [0, n) that workers
// goroutines take in turn until none is left; worker w calls fn only from
// its own goroutine, possibly several times, and perhaps never. It waits
// for all of them.
func BalancedRange(n, workers int, fn func(w, lo, hi int)) {
	if workers <= 1 || n < 2 {
		fn(0, 0, n)
		return
	}
	chunks := min(n, workers*balanceChunks)
	var next atomic.Int64
	take := func(w int) {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			lo, hi := chunk(n, chunks, c)
			fn(w, lo, hi)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			take(w)
		}()
	}
	take(0)
	wg.Wait()
}

// nnzChunks returns the boundaries of up to count runs of the rows (or
// columns) of pointer array ptr holding about equal numbers of non-zeros.
func nnzChunks(ptr []int, count int) []int {
	n, nnz := len(ptr)-1, ptr[len(ptr)-1]
	bounds := []int{0}
	for c := 1; c < count; c++ {
		at := sort.SearchInts(ptr, nnz*c/count)
		if at > bounds[len(bounds)-1] && at < n {
			bounds = append(bounds, at)
		}
	}
	return append(bounds, n)
}

// balancedChunks calls fn on the runs between consecutive bounds, taken in
// turn by workers goroutines, and waits for all of them.
func balancedChunks(bounds []int, workers int, fn func(lo, hi int)) {
	BalancedRange(len(bounds)-1, workers, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			fn(bounds[c], bounds[c+1])
		}
	})
}
