package kernel

import (
	"sync"

	"streamer/vector"
)

// landmarkIndex is an inverted index of sparse landmarks: for each
// feature, the landmarks that carry it and their values. A sparse row's
// products with every landmark then cost a step per non-zero term, where
// merging the row with each landmark costs the row's length a landmark,
// which on text was most of a kernel row's time (BenchmarkKernelMap).
type landmarkIndex struct {
	spans    map[int32][2]int32 // feature → [lo, hi) of landmark and value
	landmark []int32
	value    []float64
	scratch  sync.Pool // *[]float64 of one product a landmark, for scoring
}

// newLandmarkIndex returns the index of the landmarks, or nil when one of
// them is dense (a dense row is not worth indexing).
func newLandmarkIndex(landmarks []vector.Vector) *landmarkIndex {
	count := map[int32]int32{}
	for _, z := range landmarks {
		if z.IsDense() {
			return nil
		}
		for _, f := range z.Indices {
			count[f]++
		}
	}
	ix := &landmarkIndex{spans: make(map[int32][2]int32, len(count))}
	var at int32
	for f, n := range count {
		ix.spans[f] = [2]int32{at, at}
		at += n
	}
	ix.landmark, ix.value = make([]int32, at), make([]float64, at)
	for i, z := range landmarks {
		for k, f := range z.Indices {
			s := ix.spans[f]
			ix.landmark[s[1]], ix.value[s[1]] = int32(i), z.Values[k]
			ix.spans[f] = [2]int32{s[0], s[1] + 1}
		}
	}
	return ix
}

// products sets dst[i] = x·z_i for a sparse x. Each product adds its terms
// in the order of x's indices, as vector.Dot does, so both give the same
// bits.
func (ix *landmarkIndex) products(x vector.Vector, dst []float64) {
	clear(dst)
	for k, f := range x.Indices {
		s, ok := ix.spans[f]
		if !ok {
			continue
		}
		v := x.Values[k]
		for j := s[0]; j < s[1]; j++ {
			dst[ix.landmark[j]] += v * ix.value[j]
		}
	}
}
