package anngraph

import (
	"fmt"
	"math"

	"streamer/vector"
)

// space holds the vectors of the live points by slot, with their cached
// norms, and computes distances between them.
//
// Distances inside the package are "internal": the squared Euclidean
// distance for Euclidean (it orders like the distance and needs no square
// root) and 1 - cos for Cosine. report converts them to the Metric's units.
type space struct {
	metric Metric
	kind   vectorKind
	dim    int // length of dense vectors, once known

	vecs []vector.Vector
	sq   []float64 // ‖x‖²
	inv  []float64 // 1/‖x‖, 0 for a zero vector (Cosine only)
}

type vectorKind uint8

const (
	kindUnknown vectorKind = iota
	kindDense
	kindSparse
)

// point is a vector with its norms cached, the query side of a distance.
type point struct {
	v   vector.Vector
	sq  float64
	inv float64
}

func (s *space) newPoint(v vector.Vector) point {
	p := point{v: v, sq: v.SquaredNorm()}
	if s.metric == Cosine && p.sq > 0 {
		p.inv = 1 / math.Sqrt(p.sq)
	}
	return p
}

// check reports whether v may enter the space: well formed, and of the kind
// (and, dense, of the length) of the vectors already seen.
func (s *space) check(v vector.Vector) error {
	kind := kindSparse
	if v.IsDense() {
		kind = kindDense
	}
	if s.kind != kindUnknown && kind != s.kind {
		return fmt.Errorf("vector is %s but the window holds %s vectors", kind, s.kind)
	}
	dim := 0
	if kind == kindDense && s.kind == kindDense {
		dim = s.dim
	}
	if err := v.Validate(dim); err != nil {
		return err
	}
	if kind == kindDense && len(v.Values) == 0 {
		return fmt.Errorf("dense vector has no values")
	}
	return nil
}

func (k vectorKind) String() string {
	switch k {
	case kindDense:
		return "dense"
	case kindSparse:
		return "sparse"
	}
	return "unknown"
}

// grow makes room for slot.
func (s *space) grow(slot int32) {
	for int(slot) >= len(s.vecs) {
		s.vecs = append(s.vecs, vector.Vector{})
		s.sq = append(s.sq, 0)
		s.inv = append(s.inv, 0)
	}
}

func (s *space) set(slot int32, p point) {
	if s.kind == kindUnknown {
		s.kind = kindSparse
		if p.v.IsDense() {
			s.kind = kindDense
			s.dim = len(p.v.Values)
		}
	}
	s.grow(slot)
	s.vecs[slot], s.sq[slot], s.inv[slot] = p.v, p.sq, p.inv
}

func (s *space) clear(slot int32) {
	s.vecs[slot] = vector.Vector{}
	s.sq[slot], s.inv[slot] = 0, 0
}

func (s *space) point(slot int32) point {
	return point{v: s.vecs[slot], sq: s.sq[slot], inv: s.inv[slot]}
}

// distTo returns the internal distance from q to the point in slot b.
func (s *space) distTo(q *point, b int32) float64 {
	return s.fromDot(vector.Dot(q.v, s.vecs[b]), q.sq, q.inv, s.sq[b], s.inv[b])
}

// dist returns the internal distance between the points in slots a and b.
func (s *space) dist(a, b int32) float64 {
	return s.fromDot(vector.Dot(s.vecs[a], s.vecs[b]), s.sq[a], s.inv[a], s.sq[b], s.inv[b])
}

func (s *space) fromDot(dot, sqA, invA, sqB, invB float64) float64 {
	if s.metric == Euclidean {
		return max(sqA+sqB-2*dot, 0)
	}
	return min(max(1-dot*invA*invB, 0), 2)
}

// report converts an internal distance to the Metric's units.
func (s *space) report(d float64) float64 {
	if s.metric == Euclidean {
		return math.Sqrt(d)
	}
	return d
}
