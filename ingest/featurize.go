package ingest

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unicode"
	"unicode/utf8"

	"streamer/vector"
)

// Featurizer maps payloads into a feature space of Dim dimensions. The zero
// value uses the defaults written on each field. It holds configuration
// only, so one Featurizer may be used from any number of goroutines.
type Featurizer struct {
	// Dim is the size of the hashed feature space and the bound on explicit
	// sparse indices; 0 means 2^18. It need not be a power of two; at most
	// 2^31, so that every index fits an int32.
	Dim int
	// DenseDim, when positive, is the length every dense vector payload must
	// have. 0 accepts any length from 1 to Limits.MaxFeatures. Dense
	// vectors do not live in the hashed space, so Dim does not bound them.
	DenseDim int
	// Signed gives every hashed term (text and named features) a sign taken
	// from its hash, so that colliding terms cancel in expectation instead of
	// adding up (Weinberger et al., "Feature hashing for large scale
	// multitask learning", 2009). Off by default.
	Signed bool
	// Normalize scales numeric payloads (features, indices/values, vector,
	// LIBSVM lines) to unit L2 norm. Off by default: their values are kept
	// as given. Text is always normalized.
	Normalize bool
	// Weights, when non-nil, multiplies the sublinear term frequency of each
	// text term by a per-index weight: the hook for document-frequency (IDF)
	// weighting. Nil weighs every term 1.
	Weights TermWeights
}

// TermWeights gives a weight to each index of the hashed text space, such as
// an inverse document frequency. Implementations must be safe for
// concurrent use; keeping the frequencies up to date is their business.
type TermWeights interface {
	TermWeight(index int32) float64
}

// DefaultDim is the size of the hashed feature space when Featurizer.Dim is 0.
const DefaultDim = 1 << 18

const maxDim = 1 << 31

// Validate reports the first field that is out of range.
func (f Featurizer) Validate() error {
	switch {
	case f.Dim < 0 || f.Dim > maxDim:
		return fmt.Errorf("featurizer: Dim is %d, want 0 (default %d) or in [1, 2^31]", f.Dim, DefaultDim)
	case f.DenseDim < 0:
		return fmt.Errorf("featurizer: DenseDim is %d, want >= 0", f.DenseDim)
	}
	return nil
}

// dim returns the feature space size, with an out-of-range Dim (which
// Validate reports) taken as the default.
func (f Featurizer) dim() int {
	if f.Dim <= 0 || f.Dim > maxDim {
		return DefaultDim
	}
	return f.Dim
}

// Text featurizes s as a bag of lowercased unigrams and bigrams of adjacent
// tokens, hashed into [0, Dim), each weighted by its sublinear term
// frequency 1+ln(tf) (times Weights, if set), and scaled to unit L2 norm.
// A token is a maximal run of Unicode letters, digits and combining marks
// (marks are kept so that words of scripts such as Devanagari stay whole).
// Text with no token gives an empty sparse vector.
func (f Featurizer) Text(s string) vector.Vector {
	return textVector(f, s)
}

// stackTerms is the number of term hashes textVector keeps on the stack:
// texts of up to some 1,500 bytes, most of a stream's, cost no allocation
// for their terms.
const stackTerms = 512

func textVector[T ~string | ~[]byte](f Featurizer, s T) vector.Vector {
	var stack [stackTerms]uint64
	terms := stack[:0]
	if len(s)/3+2 > stackTerms {
		// English runs at about 6 bytes a token, two terms a token.
		terms = make([]uint64, 0, len(s)/3+2)
	}
	terms = appendTerms(terms, s)
	// Sorting by hash also sorts by index, because reduce is monotonic.
	sortTerms(terms)
	v := f.termVector(terms)
	normalize(v)
	return v
}

// sortTerms sorts term hashes in increasing order. A text's terms are a
// few dozen to a few hundred hashes of uniform top bits, so one counting
// pass on the top byte puts them in 256 buckets of about one each, and an
// insertion sort, which then only moves hashes within their bucket,
// finishes the order, faster than pdqsort on a text's number of terms
// (BenchmarkSortTerms times both; an LSD radix sort over all eight bytes
// was slower than either). Few terms, or more than the stack holds, go to
// slices.Sort.
func sortTerms(terms []uint64) {
	n := len(terms)
	if n < 32 || n > stackTerms {
		slices.Sort(terms)
		return
	}
	var start [257]int32 // start[b+1] counts bucket b, then bucket b starts at start[b]
	for _, h := range terms {
		start[h>>56+1]++
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	var bucketed [stackTerms]uint64
	for _, h := range terms {
		b := h >> 56
		bucketed[start[b]] = h
		start[b]++
	}
	copy(terms, bucketed[:n])
	for i := 1; i < n; i++ {
		h, j := terms[i], i
		for ; j > 0 && terms[j-1] > h; j-- {
			terms[j] = terms[j-1]
		}
		terms[j] = h
	}
}

// termVector merges sorted term hashes into a sparse vector: equal hashes
// are one term counted tf times, and terms that reduce to the same index
// are summed. A sum that cancels to within its rounding error is set to 0:
// its sign and size would be noise, which normalizing would blow up to the
// whole vector when every index cancels (signed hashing into a small Dim).
func (f Featurizer) termVector(terms []uint64) vector.Vector {
	dim := uint64(f.dim())
	n := distinctIndices(terms, dim)
	idx := make([]int32, 0, n)
	val := make([]float64, 0, n)
	var sum indexSum
	for i := 0; i < len(terms); {
		h := terms[i]
		tf := 1
		for i+tf < len(terms) && terms[i+tf] == h {
			tf++
		}
		i += tf
		j := reduce(h, dim)
		w := f.sign(h)
		if tf > 1 {
			w *= 1 + math.Log(float64(tf))
		}
		if f.Weights != nil {
			w *= f.Weights.TermWeight(j)
		}
		if k := len(idx) - 1; k >= 0 && idx[k] == j {
			sum.add(val[k], w)
			val[k] += w
			continue
		}
		sum.finish(val)
		idx = append(idx, j)
		val = append(val, w)
		sum.start()
	}
	sum.finish(val)
	return vector.Sparse(idx, val)
}

// indexSum follows the values summed into the last entry of a sparse
// vector being built, so that a sum that cancels to within its rounding
// error can be set to 0.
type indexSum struct {
	abs float64 // the sum of their magnitudes, kept once a second one joins (collisions are rare)
	n   int     // how many values
}

// start begins the sum of a new last entry.
func (s *indexSum) start() { s.n = 1 }

// add records w added to the last entry, whose value was prev.
func (s *indexSum) add(prev, w float64) {
	if s.n == 1 {
		s.abs = math.Abs(prev)
	}
	s.abs += math.Abs(w)
	s.n++
}

// finish sets the last of val to 0 when it is a sum no larger than the
// rounding error such a sum can carry, n·ε·Σ|w|.
func (s *indexSum) finish(val []float64) {
	if k := len(val) - 1; s.n > 1 && math.Abs(val[k]) <= float64(s.n)*epsilon*s.abs {
		val[k] = 0
	}
}

// epsilon is the unit roundoff of float64, 2^-53.
const epsilon = 0x1p-53

func distinctIndices(sorted []uint64, dim uint64) int {
	n := 0
	last := int32(-1)
	for _, h := range sorted {
		if j := reduce(h, dim); j != last {
			n++
			last = j
		}
	}
	return n
}

// sign is the sign of a hashed term: its lowest bit when Signed, which the
// index (taken from the highest bits by reduce) does not depend on.
func (f Featurizer) sign(h uint64) float64 {
	if f.Signed && h&1 == 1 {
		return -1
	}
	return 1
}

// nameTerm returns the index and sign of a named feature.
func (f Featurizer) nameTerm(name []byte) (int32, float64) {
	h := nameSeed()
	for _, c := range name {
		h = (h ^ uint64(c)) * fnvPrime
	}
	h = mix(h)
	return reduce(h, uint64(f.dim())), f.sign(h)
}

// Hashing is FNV-1a over the bytes of a term, started from a seed per kind
// of term (text token or feature name) so that the kinds cannot collide
// systematically, then finished with MurmurHash3's fmix64, which spreads
// FNV's weak high bits before reduce uses them.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
	// bigramKey sets bigrams apart from unigrams (golden ratio, 2^64/φ).
	bigramKey = 0x9e3779b97f4a7c15
)

func tokenSeed() uint64 { return seed('t') }
func nameSeed() uint64  { return seed('f') }

// seed is the FNV-1a state after the namespace byte ns.
func seed(ns byte) uint64 {
	h := uint64(fnvOffset)
	return (h ^ uint64(ns)) * fnvPrime
}

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// reduce maps h onto [0, dim) by a multiply-shift (Lemire, "Fast random
// integer generation in an interval", 2019): uniform for any dim, no
// division, and monotonic in h.
func reduce(h, dim uint64) int32 {
	hi, _ := bits.Mul64(h, dim)
	return int32(hi)
}

// bigram combines the raw hashes of two adjacent tokens; the rotation makes
// "a b" and "b a" differ.
func bigram(prev, cur uint64) uint64 {
	return mix(prev ^ bits.RotateLeft64(cur, 31) ^ bigramKey)
}

// appendTerms appends the hash of every unigram and bigram of s to dst.
// Tokens are hashed while they are read and lowercased, so none is copied.
func appendTerms[T ~string | ~[]byte](dst []uint64, s T) []uint64 {
	var prev, h uint64
	havePrev, inToken := false, false
	for i := 0; i < len(s); {
		c := s[i]
		var word bool
		if c < utf8.RuneSelf {
			i++
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if word = 'a' <= c && c <= 'z' || '0' <= c && c <= '9'; word {
				if !inToken {
					h, inToken = tokenSeed(), true
				}
				h = (h ^ uint64(c)) * fnvPrime
			}
		} else {
			r, n := decodeRune(s[i:])
			i += n
			if word = isWordRune(r); word {
				if !inToken {
					h, inToken = tokenSeed(), true
				}
				h = hashRune(h, unicode.ToLower(r))
			}
		}
		if !word && inToken {
			dst = appendToken(dst, prev, h, havePrev)
			prev, havePrev, inToken = h, true, false
		}
	}
	if inToken {
		dst = appendToken(dst, prev, h, havePrev)
	}
	return dst
}

func appendToken(dst []uint64, prev, h uint64, havePrev bool) []uint64 {
	dst = append(dst, mix(h))
	if havePrev {
		dst = append(dst, bigram(prev, h))
	}
	return dst
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func hashRune(h uint64, r rune) uint64 {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	for _, c := range buf[:n] {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// decodeRune is utf8.DecodeRune for either a string or a byte slice,
// without converting (and so copying) the whole of s.
func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], s)
	return utf8.DecodeRune(buf[:n])
}
