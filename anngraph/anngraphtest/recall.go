package anngraphtest

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
)

// SampleRows draws up to s distinct rows of n, in increasing order, the
// same ones for the same seed.
func SampleRows(n, s int, seed uint64) []int {
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

// Recall counts the listed neighbours of a row that are within its exact
// k-th distance: listed holds their distances, computed exactly, in the
// list's order, and exact the exact distances to the row's nearest, nearest
// first. Of the list's first k (or as many as exact has), hits are those
// within the k-th distance, ties included, and total is how many there
// should be.
func Recall(listed, exact []float64, k int) (hits, total float64) {
	want := min(k, len(exact))
	if want == 0 {
		return 0, 0
	}
	kth := exact[want-1]
	tol := 1e-9 * max(1, math.Abs(kth))
	for _, d := range listed[:min(len(listed), want)] {
		if d <= kth+tol {
			hits++
		}
	}
	return hits, float64(want)
}

// EnvInt reads a benchmark size from the environment variable name, for
// long runs; def when it is unset or not a positive integer.
func EnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
