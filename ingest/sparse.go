package ingest

import (
	"cmp"
	"math"
	"slices"

	"streamer/vector"
)

// entry is one value of a numeric payload before it is merged into a sparse
// vector. Explicit entries carry an index given by the input, which must not
// repeat; hashed ones (named features) may collide and are summed.
type entry struct {
	index    int32
	explicit bool
	value    float64
}

// sparseFromEntries sorts es and merges it into a sparse vector. Values on
// one index are summed in order of value, so the sum does not depend on the
// order of the input; a sum that cancels to within its rounding error is
// 0, as in termVector.
func sparseFromEntries(es []entry, field string) (vector.Vector, error) {
	slices.SortFunc(es, func(a, b entry) int {
		if c := cmp.Compare(a.index, b.index); c != 0 {
			return c
		}
		return cmp.Compare(a.value, b.value)
	})
	idx := make([]int32, 0, len(es))
	val := make([]float64, 0, len(es))
	explicitHere := false
	var sum indexSum
	for _, e := range es {
		k := len(idx) - 1
		if k < 0 || idx[k] != e.index {
			sum.finish(val)
			idx = append(idx, e.index)
			val = append(val, e.value)
			explicitHere = e.explicit
			sum.start()
			continue
		}
		if e.explicit && explicitHere {
			return vector.Vector{}, decodeErr(ReasonBadIndex, field, "index %d is given twice", e.index)
		}
		explicitHere = explicitHere || e.explicit
		sum.add(val[k], e.value)
		if val[k] += e.value; math.IsInf(val[k], 0) {
			return vector.Vector{}, decodeErr(ReasonNonFinite, field, "values on index %d sum to %v", e.index, val[k])
		}
	}
	sum.finish(val)
	return vector.Sparse(idx, val), nil
}

// sparseFromExplicit makes a sparse vector of explicit indices and their
// values, taking the slices as they are when the indices already increase.
func sparseFromExplicit(idx []int32, val []float64, field string) (vector.Vector, error) {
	if increasing(idx) {
		return vector.Sparse(idx, val), nil
	}
	es := make([]entry, len(idx))
	for k, j := range idx {
		es[k] = entry{index: j, explicit: true, value: val[k]}
	}
	return sparseFromEntries(es, field)
}

func increasing(idx []int32) bool {
	for k := 1; k < len(idx); k++ {
		if idx[k] <= idx[k-1] {
			return false
		}
	}
	return true
}

// normalize scales v in place to unit L2 norm. It divides by the largest
// magnitude first, so that the sum of squares cannot overflow for values
// near math.MaxFloat64; a zero vector is left as is.
func normalize(v vector.Vector) {
	var m float64
	for _, x := range v.Values {
		m = max(m, math.Abs(x))
	}
	if m == 0 {
		return
	}
	for k := range v.Values {
		v.Values[k] /= m
	}
	v.Normalize()
}

// addSparse returns a + b, of sparse vectors with sorted indices.
func addSparse(a, b vector.Vector) vector.Vector {
	n := a.NNZ() + b.NNZ()
	idx := make([]int32, 0, n)
	val := make([]float64, 0, n)
	i, j := 0, 0
	for i < len(a.Indices) || j < len(b.Indices) {
		switch {
		case j == len(b.Indices) || i < len(a.Indices) && a.Indices[i] < b.Indices[j]:
			idx, val = append(idx, a.Indices[i]), append(val, a.Values[i])
			i++
		case i == len(a.Indices) || b.Indices[j] < a.Indices[i]:
			idx, val = append(idx, b.Indices[j]), append(val, b.Values[j])
			j++
		default:
			idx, val = append(idx, a.Indices[i]), append(val, a.Values[i]+b.Values[j])
			i++
			j++
		}
	}
	return vector.Sparse(idx, val)
}
