package anngraph

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
)

// envInt reads a benchmark size from the environment, for long runs.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// sampleRows draws up to s distinct rows of n, in increasing order.
func sampleRows(n, s int, seed uint64) []int {
	if s >= n {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	r := rand.New(rand.NewPCG(seed, 0x9b05688c2b3e6c1f))
	rows := r.Perm(n)[:s]
	slices.Sort(rows)
	return rows
}

// recall counts the listed neighbours within the exact K-th distance.
func recall(listed []Neighbor, exact []float64, k int) (hits, total float64) {
	want := min(k, len(exact))
	if want == 0 {
		return 0, 0
	}
	kth := exact[want-1]
	tol := 1e-9 * max(1, math.Abs(kth))
	for _, nb := range listed[:min(len(listed), want)] {
		if nb.Distance <= kth+tol {
			hits++
		}
	}
	return hits, float64(want)
}
