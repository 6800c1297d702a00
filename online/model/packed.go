package model

import (
	"streamer/online/linalg"
	"streamer/vector"
)

// packedWeights holds the weights of a model's problems feature-major:
// the p weights of feature j side by side. Scoring a sparse row with p
// problems one after another reads p scattered entries per feature, each
// a cache miss in weight vectors of 2^18 features; packed, it reads one
// block of p. A binary SR model has 4 problems, one per response, so
// packing matters even for two classes; BenchmarkScores measures both
// ways.
type packedWeights struct {
	p    int
	w    []float64 // w[j*p+k]: problem k's weight of feature j
	bias []float64 // bias[k]: problem k's bias
}

// packWeights packs the problems' weights, or returns nil for fewer than
// two problems, which gain nothing from it.
func packWeights(problems []Solution, dim int) *packedWeights {
	p := len(problems)
	if p < 2 {
		return nil
	}
	pw := &packedWeights{p: p, w: make([]float64, dim*p), bias: make([]float64, p)}
	for k, s := range problems {
		for j, v := range s.W[:dim] {
			pw.w[j*p+k] = v
		}
		pw.bias[k] = s.W[dim]
	}
	return pw
}

// outputs sets z[k] to problem k's output for x, as output does: features
// at dim and beyond are left out. A sparse row's products are summed as
// output sums them, in order and then the bias, six problems at a time
// in registers (RowBlockDot).
func (pw *packedWeights) outputs(x vector.Vector, dim int, z []float64) {
	p := pw.p
	z = z[:p]
	if x.IsDense() {
		copy(z, pw.bias)
		for j, v := range x.Values[:min(len(x.Values), dim)] {
			linalg.AddScaled(z, v, pw.w[j*p:j*p+p])
		}
		return
	}
	x = clipSparse(x, dim)
	linalg.RowBlockDot(z, pw.w, p, x.Indices, x.Values)
	for k, b := range pw.bias {
		z[k] += b
	}
}

// weights returns the problems' weight vectors.
func (m *Model) weights() [][]float64 {
	w := make([][]float64, len(m.Problems))
	for k, s := range m.Problems {
		w[k] = s.W
	}
	return w
}

// Pack prepares m for scoring: with two problems or more, it keeps their
// weights feature-major as well (see packedWeights), and with a kernel
// map, carried over to the landmarks (kernel.Map.Fold); Scores then reads
// them. It is done once; a model must be packed before it is shared with
// the goroutines that score with it, as the learner's SetModel and Pin do.
func (m *Model) Pack() {
	if m == nil {
		return
	}
	if m.packed == nil {
		m.packed = packWeights(m.Problems, m.Dim)
	}
	if m.Map != nil && m.folded == nil {
		m.folded = m.Map.Fold(m.weights())
	}
}
