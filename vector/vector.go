package vector

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// Vector is a feature vector. A sparse vector has strictly increasing
// Indices and one value per index; a dense vector has nil Indices and one
// value per dimension. Use Sparse and Dense to build one: they keep the
// distinction even for an empty sparse vector.
type Vector struct {
	Indices []int32
	Values  []float64
}

// Sparse returns a sparse vector over the given sorted indices. It does not
// copy or check its arguments; call Validate on outside input.
func Sparse(indices []int32, values []float64) Vector {
	if indices == nil {
		indices = []int32{}
	}
	return Vector{Indices: indices, Values: values}
}

// Dense returns a dense vector over values. It does not copy values.
func Dense(values []float64) Vector {
	return Vector{Values: values}
}

// IsDense reports whether v stores every dimension.
func (v Vector) IsDense() bool { return v.Indices == nil }

// NNZ returns the number of stored values.
func (v Vector) NNZ() int { return len(v.Values) }

// Validate checks that v is well formed for a space of dim dimensions:
// indices strictly increasing and in [0, dim), values finite, and a dense
// vector exactly dim long. A dim of 0 skips the range and length checks.
func (v Vector) Validate(dim int) error {
	if v.IsDense() {
		if dim > 0 && len(v.Values) != dim {
			return fmt.Errorf("dense vector has %d values, want %d", len(v.Values), dim)
		}
	} else if err := v.validateIndices(dim); err != nil {
		return err
	}
	for k, x := range v.Values {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("value %d is %v", k, x)
		}
	}
	return nil
}

func (v Vector) validateIndices(dim int) error {
	if len(v.Indices) != len(v.Values) {
		return fmt.Errorf("%d indices but %d values", len(v.Indices), len(v.Values))
	}
	prev := int32(-1)
	for _, j := range v.Indices {
		switch {
		case j < 0:
			return fmt.Errorf("negative index %d", j)
		case dim > 0 && int(j) >= dim:
			return fmt.Errorf("index %d out of range [0, %d)", j, dim)
		case j <= prev:
			return errors.New("indices are not strictly increasing")
		}
		prev = j
	}
	return nil
}

// Dot returns the inner product of v and w. Two sparse vectors are merged
// over their sorted indices; a sparse and a dense one index the dense one.
func Dot(v, w Vector) float64 {
	switch {
	case v.IsDense() && w.IsDense():
		return DenseDot(v.Values, w.Values)
	case v.IsDense():
		return w.DotDense(v.Values)
	case w.IsDense():
		return v.DotDense(w.Values)
	}
	return sparseDot(v.Indices, v.Values, w.Indices, w.Values)
}

func sparseDot(ai []int32, av []float64, bi []int32, bv []float64) float64 {
	var s float64
	i, j := 0, 0
	for i < len(ai) && j < len(bi) {
		switch {
		case ai[i] < bi[j]:
			i++
		case ai[i] > bi[j]:
			j++
		default:
			s += av[i] * bv[j]
			i++
			j++
		}
	}
	return s
}

// DenseDot returns the inner product of a and the first len(a) values of b,
// with gonum's assembly kernel.
func DenseDot(a, b []float64) float64 {
	return floats.Dot(a, b[:len(a)])
}

// DotDense returns v·w for a dense w that is at least as long as v's space.
func (v Vector) DotDense(w []float64) float64 {
	if v.IsDense() {
		return DenseDot(v.Values, w)
	}
	var s float64
	for k, j := range v.Indices {
		s += v.Values[k] * w[j]
	}
	return s
}

// AddScaledTo adds a·v to the dense dst.
func (v Vector) AddScaledTo(dst []float64, a float64) {
	if v.IsDense() {
		floats.AddScaled(dst[:len(v.Values)], a, v.Values)
		return
	}
	for k, j := range v.Indices {
		dst[j] += a * v.Values[k]
	}
}

// SquaredNorm returns ‖v‖².
func (v Vector) SquaredNorm() float64 { return DenseDot(v.Values, v.Values) }

// Norm returns ‖v‖.
func (v Vector) Norm() float64 { return math.Sqrt(v.SquaredNorm()) }

// Normalize scales v in place to unit norm; a zero vector is left as is.
func (v Vector) Normalize() {
	n := v.Norm()
	if n == 0 {
		return
	}
	for k := range v.Values {
		v.Values[k] /= n
	}
}

// SquaredDistance returns ‖v - w‖².
func SquaredDistance(v, w Vector) float64 {
	if v.IsDense() && w.IsDense() {
		return denseSquaredDistance(v.Values, w.Values)
	}
	d := v.SquaredNorm() + w.SquaredNorm() - 2*Dot(v, w)
	return math.Max(d, 0)
}

func denseSquaredDistance(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1 float64
	k := 0
	for ; k+2 <= len(a); k += 2 {
		d0 := a[k] - b[k]
		d1 := a[k+1] - b[k+1]
		s0 += d0 * d0
		s1 += d1 * d1
	}
	for ; k < len(a); k++ {
		d := a[k] - b[k]
		s0 += d * d
	}
	return s0 + s1
}

// Equal reports whether v and w are the same vector, stored alike: both
// dense or both sparse, with the same indices and values.
func Equal(v, w Vector) bool {
	return v.IsDense() == w.IsDense() && slices.Equal(v.Indices, w.Indices) && slices.Equal(v.Values, w.Values)
}

// Clone returns a deep copy of v.
func (v Vector) Clone() Vector {
	c := Vector{Values: append([]float64(nil), v.Values...)}
	if !v.IsDense() {
		c.Indices = append([]int32{}, v.Indices...)
	}
	return c
}
