package online

import (
	"strconv"
	"testing"

	"streamer/online/active"
	"streamer/synth"
)

// BenchmarkLinkSample links the pool of a 20,000-row text window with a
// label for one row in twenty, before any model: the cover pool label
// requests are chosen from. The rows are synth's text-like rows, 80 words
// of 2^18 features each.
func BenchmarkLinkSample(b *testing.B) {
	const rows = 20000
	vecs := synth.GenerateSparseText(synth.SparseTextConfig{Rows: rows, Seed: 1}).Rows
	ids, labels := make([]string, rows), make([]string, rows)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
		if i%20 == 0 {
			labels[i] = "a"
		}
	}
	for b.Loop() {
		pool := &active.Pool{IDs: ids, Labels: labels, Neighbours: make([][]int32, rows)}
		linkSample(pool, vecs)
	}
}
