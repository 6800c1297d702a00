package anngraph

import (
	"fmt"
	"math"
	"slices"

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
	dim    int // length of dense vectors; for sparse, 1 + the largest index seen

	// The points by slot, with norms beside the vector's header so that a
	// distance starts with one cache miss, not three.
	pts []point

	// f32, set for graph windows, makes dense vectors live as float32 rows
	// of slab (stride values each, zero padded to a multiple of f32Align):
	// half the bytes a distance reads, contiguous for prefetching, and
	// SIMD kernels. Exhaustive windows keep float64 distances, which their
	// exact lists are checked against.
	f32     bool
	maxRows int // slots the window can use: the slab never grows past them
	slab    []float32
	stride  int
}

// touch loads the first cache lines of the points' vectors, and returns a
// sum of what it read for the caller to keep. A search then
// computes their distances one by one; loading their starts together first
// lets the memory system fetch them in parallel instead of one miss after
// another (anngraph/README.md, Distances, has what it saved an insert).
func (s *space) touch(ids []int32) float64 {
	if s.stride > 0 {
		prefetch(s.slab, s.stride, ids)
		return 0
	}
	var t float64
	for _, e := range ids {
		v := s.pts[e].v
		if n := len(v.Values); n > 24 {
			t += v.Values[0] + v.Values[8] + v.Values[16] + v.Values[24]
		} else if n > 0 {
			t += v.Values[0]
		}
		if len(v.Indices) > 16 {
			t += float64(v.Indices[0] + v.Indices[16])
		}
	}
	return t
}

type vectorKind uint8

const (
	kindUnknown vectorKind = iota
	kindDense
	kindSparse
)

// point is a vector with its norms cached, the query side of a distance.
// sc, when set, holds the vector scattered for fast sparse products.
type point struct {
	v   vector.Vector
	sq  float64
	inv float64
	sc  *scatter
	f   []float32 // the dense vector's float32 row, in float32 spaces
}

// scatter is a sparse vector spread out by index, so that its product with
// another sparse vector is one pass over the other: a bitmap of its indices
// (2^18 dimensions fit in 32 KiB, in L1 cache) and its values by index.
// Against the sorted-index merge, whose branches depend on the data, it
// makes a dot product several times faster when the other row is not in
// cache, as it mostly is not in a search (anngraph/README.md, Distances,
// has the figures).
type scatter struct {
	bits []uint64
	vals []float64
	v    vector.Vector // the vector scattered now
	row  []float32     // a dense query's float32 row, in float32 spaces
}

// maxScatterDim bounds the indices a scatter holds (16 MiB of values);
// vectors with larger indices use the merge.
const maxScatterDim = 1 << 21

func (sc *scatter) load(v vector.Vector) {
	sc.unload()
	for k, j := range v.Indices {
		sc.bits[j>>6] |= 1 << (uint32(j) & 63)
		sc.vals[j] = v.Values[k]
	}
	sc.v = v
}

func (sc *scatter) unload() {
	for _, j := range sc.v.Indices {
		sc.bits[j>>6] = 0
		sc.vals[j] = 0
	}
	sc.v = vector.Vector{}
}

// dot returns the product of the scattered vector with the sparse w, whose
// indices are all below the scatter's size.
func (sc *scatter) dot(w vector.Vector) float64 {
	var s float64
	vals := w.Values[:len(w.Indices)]
	for k, j := range w.Indices {
		if sc.bits[uint32(j)>>6]&(1<<(uint32(j)&63)) != 0 {
			s += vals[k] * sc.vals[j]
		}
	}
	return s
}

func (sc *scatter) grow(dim int) {
	if n := (dim + 63) / 64; n > len(sc.bits) {
		sc.bits = append(sc.bits, make([]uint64, n-len(sc.bits))...)
	}
	if dim > len(sc.vals) {
		sc.vals = append(sc.vals, make([]float64, dim-len(sc.vals))...)
	}
}

// prepare scatters the sparse p into sc, when the space's indices fit; in
// a float32 space it gives a dense p that has none its float32 row.
func (s *space) prepare(p *point, sc *scatter) {
	if s.stride > 0 && p.f == nil && p.v.IsDense() {
		sc.row = slices.Grow(sc.row[:0], s.stride)[:s.stride]
		clear(sc.row)
		for i, x := range p.v.Values[:min(len(p.v.Values), s.stride)] {
			sc.row[i] = float32(x)
		}
		p.f = sc.row
		return
	}
	if s.kind != kindSparse || p.v.IsDense() {
		return
	}
	dim := s.dim
	if n := len(p.v.Indices); n > 0 {
		dim = max(dim, int(p.v.Indices[n-1])+1)
	}
	if dim > maxScatterDim {
		return
	}
	sc.grow(dim)
	sc.load(p.v)
	p.sc = sc
}

// pointFor returns the point in slot x prepared in sc.
func (s *space) pointFor(x int32, sc *scatter) point {
	p := s.point(x)
	s.prepare(&p, sc)
	return p
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
	for int(slot) >= len(s.pts) {
		s.pts = append(s.pts, point{})
	}
}

func (s *space) set(slot int32, p point) {
	if s.kind == kindUnknown {
		s.kind = kindSparse
		if p.v.IsDense() {
			s.kind = kindDense
			s.dim = len(p.v.Values)
			if s.f32 {
				s.stride = (s.dim + f32Align - 1) / f32Align * f32Align
			}
		}
	}
	if s.stride > 0 {
		s.setRow(slot, p.v.Values)
	}
	if n := len(p.v.Indices); s.kind == kindSparse && n > 0 {
		s.dim = max(s.dim, int(p.v.Indices[n-1])+1)
	}
	s.grow(slot)
	p.sc = nil
	s.pts[slot] = p
}

// setRow writes the float32 row of slot, growing the slab by doubling.
func (s *space) setRow(slot int32, values []float64) {
	end := (int(slot) + 1) * s.stride
	if end > len(s.slab) {
		if end > cap(s.slab) {
			s.slab = slices.Grow(s.slab, max(end, min(2*cap(s.slab), s.maxRows*s.stride))-len(s.slab))
		}
		s.slab = s.slab[:end]
	}
	row := s.row(slot)
	for i, x := range values {
		row[i] = float32(x)
	}
}

// row returns slot's float32 row; it aliases the slab, so it is good until
// the next set.
func (s *space) row(slot int32) []float32 {
	i := int(slot) * s.stride
	return s.slab[i : i+s.stride : i+s.stride]
}

func (s *space) clear(slot int32) {
	s.pts[slot] = point{}
}

func (s *space) point(slot int32) point {
	p := s.pts[slot]
	if s.stride > 0 {
		p.f = s.row(slot)
	}
	return p
}

// distTo returns the internal distance from q to the point in slot b.
func (s *space) distTo(q *point, b int32) float64 {
	pb := &s.pts[b]
	if q.f != nil {
		if s.metric == Euclidean {
			return float64(l2F32(q.f, s.row(b)))
		}
		return s.fromDot(float64(dotF32(q.f, s.row(b))), q.sq, q.inv, pb.sq, pb.inv)
	}
	var dot float64
	if q.sc != nil {
		dot = q.sc.dot(pb.v)
	} else {
		dot = vector.Dot(q.v, pb.v)
	}
	return s.fromDot(dot, q.sq, q.inv, pb.sq, pb.inv)
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
