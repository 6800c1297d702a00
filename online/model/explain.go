package model

import (
	"math"
	"slices"

	"streamer/vector"
)

// Space says what the terms of an Attribution are.
type Space int

const (
	// Features: the terms are the input's features, x_j times a weight.
	Features Space = iota
	// Landmarks: the terms are a kernel map's landmarks, k(x, z_i) times
	// the weight folded onto landmark i (kernel.Map.Fold).
	Landmarks
)

// String names the space as predictions write it.
func (s Space) String() string {
	if s == Landmarks {
		return "landmarks"
	}
	return "features"
}

// Attribution splits one class's score for an input into a term per input
// (a feature, or a kernel map's landmark) and a bias: Bias plus the sum of
// Contribution is Score, up to rounding.
type Attribution struct {
	Class int
	Score float64
	Bias  float64
	Space Space
	// Index, Value and Contribution hold one term each: the feature or
	// landmark, its input (x_j or k(x, z_i)) and its share of the score.
	Index        []int32
	Value        []float64
	Contribution []float64
}

// Attribute splits class's score for x (Scores(x)[class]) over x's inputs.
//
// A linear problem's output w·x + b splits as w_j·x_j and b (negated for
// the first class of a binary model, whose score is −o). A centroid
// model's score −‖z − μ_c‖ is homogeneous of degree 1 in z − μ_c, so it
// equals g·(z − μ_c) with g = −(z − μ_c)/‖z − μ_c‖ (Euler's theorem); as
// z = Aᵀx + b is linear in x, the score splits as x_j·(A g)_j and a bias
// g·(b − μ_c), exactly, at this x (g is the direction from the centroid,
// which depends on x). Over a kernel map the outputs are linear in the
// landmarks' kernel values (Fold), and the terms are the landmarks.
func (m *Model) Attribute(x vector.Vector, class int) Attribution {
	a := Attribution{Class: class, Score: m.Scores(x, nil)[class]}
	coef, bias := m.classWeights(x, class)
	if coef == nil {
		a.Bias = a.Score
		return a
	}
	a.Bias = bias
	n := x.NNZ()
	if m.Map != nil {
		n = len(m.Map.Landmarks)
	}
	a.Index, a.Value, a.Contribution = make([]int32, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	if m.Map != nil {
		a.Space = Landmarks
		for i, k := range m.Map.Kernels(x) {
			a.add(int32(i), k, coef)
		}
		return a
	}
	if x.IsDense() {
		for j, v := range x.Values[:min(len(x.Values), m.Dim)] {
			a.add(int32(j), v, coef)
		}
		return a
	}
	x = clipSparse(x, m.Dim)
	for n, j := range x.Indices {
		a.add(j, x.Values[n], coef)
	}
	return a
}

func (a *Attribution) add(j int32, v float64, coef func(int32) float64) {
	if v == 0 {
		return
	}
	a.Index = append(a.Index, j)
	a.Value = append(a.Value, v)
	a.Contribution = append(a.Contribution, v*coef(j))
}

// classWeights returns the weight of each input in class's score at x and
// the bias, as a function of the input's index; nil for a class whose
// score is no linear function here (a centroid class without a centroid,
// or x at its centroid).
func (m *Model) classWeights(x vector.Vector, class int) (func(int32) float64, float64) {
	weights, bias := m.problemWeights()
	if m.Centroids == nil {
		k, sign := class, 1.0
		if m.Binary() {
			k = 0
			if class == 0 {
				sign = -1
			}
		}
		w := weights[k]
		return func(j int32) float64 { return sign * w(j) }, sign * bias[k]
	}
	mu := m.Centroids[class]
	if mu == nil {
		return nil, 0
	}
	z := m.embedding(x)
	g := make([]float64, len(z))
	var norm float64
	for k := range z {
		g[k] = z[k] - mu[k]
		norm += g[k] * g[k]
	}
	if norm = math.Sqrt(norm); norm == 0 {
		return nil, 0
	}
	var b float64
	for k := range g {
		g[k] /= -norm
		b += g[k] * (bias[k] - mu[k])
	}
	return func(j int32) float64 {
		var s float64
		for k, gk := range g {
			s += gk * weights[k](j)
		}
		return s
	}, b
}

// problemWeights returns each problem's weight of input j, and its bias:
// over the features, or over the landmarks for a model with a kernel map.
func (m *Model) problemWeights() ([]func(int32) float64, []float64) {
	w := make([]func(int32) float64, len(m.Problems))
	b := make([]float64, len(m.Problems))
	folded := m.folded
	if m.Map != nil && folded == nil {
		folded = m.Map.Fold(m.weights())
	}
	for k, s := range m.Problems {
		if m.Map != nil {
			p := folded.P
			w[k] = func(i int32) float64 { return folded.W[int(i)*p+k] }
			b[k] = folded.Bias[k]
			continue
		}
		ws := s.W
		w[k] = func(j int32) float64 { return ws[j] }
		b[k] = ws[m.Dim]
	}
	return w, b
}

// embedding returns the outputs of a centroid model's problems for x.
func (m *Model) embedding(x vector.Vector) []float64 {
	z := make([]float64, len(m.Problems))
	if m.Map != nil {
		folded := m.folded
		if folded == nil {
			folded = m.Map.Fold(m.weights())
		}
		m.Map.FoldedOutputs(folded, x, z)
		return z
	}
	m.embed(x, z)
	return z
}

// Top returns the positions of the k terms of largest contribution in
// absolute value, largest first, and the sum of the other terms'
// contributions: Bias + the k terms + rest = Score.
func (a Attribution) Top(k int) (top []int, rest float64) {
	k = min(max(k, 0), len(a.Contribution))
	top = make([]int, 0, k+1)
	larger := func(i, j int) bool { return math.Abs(a.Contribution[i]) > math.Abs(a.Contribution[j]) }
	// One pass, keeping the k largest in order: k is a handful, the terms
	// a text's hundreds.
	for i := range a.Contribution {
		if len(top) == k && (k == 0 || !larger(i, top[k-1])) {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, i, func(t, i int) int {
			if larger(i, t) {
				return 1
			}
			return -1
		})
		top = slices.Insert(top, at, i)
		if len(top) > k {
			top = top[:k]
		}
	}
	var kept float64
	for _, i := range top {
		kept += a.Contribution[i]
	}
	for _, c := range a.Contribution {
		rest += c
	}
	return top, rest - kept
}
