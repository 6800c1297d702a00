package ingest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"streamer/vector"
)

// referenceText is Featurizer.Text written the slow, obvious way: lowercase,
// split into tokens, count unigrams and bigrams as strings in a map, then
// hash. It shares only the hash functions with the real one.
func referenceText(f Featurizer, s string) map[int32]float64 {
	tokens := strings.FieldsFunc(strings.Map(unicode.ToLower, s), func(r rune) bool { return !isWordRune(r) })
	tokenHash := func(tok string) uint64 {
		h := tokenSeed()
		for k := 0; k < len(tok); k++ {
			h = (h ^ uint64(tok[k])) * fnvPrime
		}
		return h
	}
	counts := map[uint64]int{}
	for k, tok := range tokens {
		counts[mix(tokenHash(tok))]++
		if k > 0 {
			counts[bigram(tokenHash(tokens[k-1]), tokenHash(tok))]++
		}
	}
	out := map[int32]float64{}
	abs := map[int32]float64{}
	summed := map[int32]int{}
	for h, tf := range counts {
		j, w := reduce(h, uint64(f.dim())), (1+math.Log(float64(tf)))*f.sign(h)
		out[j] += w
		abs[j] += math.Abs(w)
		summed[j]++
	}
	var norm float64
	for j, x := range out {
		if summed[j] > 1 && math.Abs(x) <= float64(summed[j])*0x1p-53*abs[j] {
			out[j] = 0 // cancelled, up to rounding
		}
		norm += out[j] * out[j]
	}
	for j := range out {
		if norm > 0 {
			out[j] /= math.Sqrt(norm)
		}
	}
	return out
}

// randomText strings together words from several scripts, with case,
// punctuation, repeats, digits, combining marks and invalid UTF-8.
func randomText(r *rand.Rand, words int) string {
	pool := []string{
		"the", "The", "THE", "cat", "naïve", "nai\u0308ve", "école", "ÉCOLE", "Straße",
		"δίκτυο", "ΔΊΚΤΥΟ", "кошка", "猫", "東京", "हिन्दी", "2024", "x86_64", "a", "I",
		"\u212a", "k", "\u0130stanbul", "😀", "\xff", "don't",
	}
	seps := []string{" ", "  ", ", ", ". ", "\n", "\t", "-", "—", "_", "/", "…", "😀"}
	var b strings.Builder
	for range words {
		b.WriteString(pool[r.IntN(len(pool))])
		b.WriteString(seps[r.IntN(len(seps))])
	}
	return b.String()
}

func TestTextAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		f := Featurizer{Dim: []int{1, 7, 64, 1000, 0}[trial%5], Signed: trial%2 == 1}
		s := randomText(r, r.IntN(40))
		got := f.Text(s)
		want := referenceText(f, s)
		if err := got.Validate(f.dim()); err != nil || got.IsDense() {
			t.Fatalf("trial %d: Text(%q) is not a valid sparse vector: %v", trial, s, err)
		}
		if got.NNZ() != len(want) {
			t.Fatalf("trial %d: Text(%q) has %d entries, reference %d", trial, s, got.NNZ(), len(want))
		}
		for k, j := range got.Indices {
			if math.Abs(got.Values[k]-want[j]) > 1e-12 {
				t.Fatalf("trial %d: Text(%q)[%d] = %v, reference %v", trial, s, j, got.Values[k], want[j])
			}
		}
	}
}

func TestTextUnitNormAndDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, f := range []Featurizer{{}, {Dim: 1000, Signed: true}} {
		for range 50 {
			s := randomText(r, 1+r.IntN(200))
			v := f.Text(s)
			if v.NNZ() == 0 {
				continue
			}
			if math.Abs(v.Norm()-1) > 1e-12 {
				t.Fatalf("norm of Text(%q) = %v", s, v.Norm())
			}
			w := f.Text(s)
			if !slices.Equal(v.Indices, w.Indices) || !slices.Equal(v.Values, w.Values) {
				t.Fatalf("Text(%q) differs between calls", s)
			}
		}
	}
}

func TestTextTokens(t *testing.T) {
	f := Featurizer{Dim: 1 << 30} // large enough that these few terms do not collide
	tests := []struct {
		a, b  string
		equal bool
	}{
		{"Hello, World!", "hello world", true},
		{"ÉCOLE", "école", true},
		{"nai\u0308ve", "nai\u0308ve!", true},
		{"new york", "york new", false}, // same unigrams, other bigram
		{"a b c", "a c b", false},
		{"x", "x x", false}, // tf 1 vs a sublinear tf of 2 plus a bigram
	}
	for _, tt := range tests {
		a, b := f.Text(tt.a), f.Text(tt.b)
		equal := slices.Equal(a.Indices, b.Indices) && slices.Equal(a.Values, b.Values)
		if equal != tt.equal {
			t.Errorf("Text(%q) == Text(%q) is %v, want %v", tt.a, tt.b, equal, tt.equal)
		}
	}
	for s, nnz := range map[string]int{
		"a":             1,
		"a b":           3,
		"a b c":         5,
		"nai\u0308ve":   1, // the combining mark stays in the word
		"hi there, you": 5,
		"東京 タワー":        3,
		"":              0,
		"!?":            0,
	} {
		if got := f.Text(s).NNZ(); got != nnz {
			t.Errorf("Text(%q) has %d entries, want %d", s, got, nnz)
		}
	}
}

func TestTextSublinearTF(t *testing.T) {
	f := Featurizer{Dim: 1 << 30}
	v := f.Text("a a a a") // unigram a: tf 4; bigram a a: tf 3
	if v.NNZ() != 2 {
		t.Fatalf("Text has %d entries, want 2", v.NNZ())
	}
	uni := f.Text("a").Indices[0]
	k := slices.Index(v.Indices, uni)
	if k < 0 {
		t.Fatalf("unigram index %d not in %v", uni, v.Indices)
	}
	got := v.Values[k] / v.Values[1-k]
	if want := (1 + math.Log(4)) / (1 + math.Log(3)); math.Abs(got-want) > 1e-12 {
		t.Fatalf("unigram/bigram weight = %v, want %v", got, want)
	}
}

func TestCollisionsSummed(t *testing.T) {
	var d Decoder
	d.Featurizer.Dim = 1 // every name lands on index 0
	ex, err := d.DecodeExample([]byte(`{"id":"a","features":{"x":2,"y":3,"0":0.5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ex.Vector.Indices, []int32{0}) || ex.Vector.Values[0] != 5.5 {
		t.Fatalf("vector = %+v, want {0: 5.5}", ex.Vector)
	}
	if v := d.Featurizer.Text("a b c a"); v.NNZ() != 1 || v.Values[0] != 1 {
		t.Fatalf("Text in one dimension = %+v, want {0: 1}", v)
	}
}

func TestFeaturesOrderIndependent(t *testing.T) {
	d := Decoder{Featurizer: Featurizer{Dim: 3}}
	a, errA := d.DecodeExample([]byte(`{"id":"a","features":{"x":0.1,"y":0.2,"z":0.3,"w":1e-17,"2":7}}`))
	b, errB := d.DecodeExample([]byte(`{"id":"a","features":{"2":7,"w":1e-17,"z":0.3,"y":0.2,"x":0.1}}`))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if !slices.Equal(a.Vector.Indices, b.Vector.Indices) || !slices.Equal(a.Vector.Values, b.Vector.Values) {
		t.Fatalf("key order changed the vector: %+v vs %+v", a.Vector, b.Vector)
	}
}

func TestNamespaces(t *testing.T) {
	f := Featurizer{Dim: 1 << 30}
	text := f.Text("a b")
	for _, name := range []string{"a", "b", "a b", "a\x00b", "ab"} {
		j, _ := f.nameTerm([]byte(name))
		if slices.Contains(text.Indices, j) {
			t.Errorf("feature name %q lands on a text term of %q", name, "a b")
		}
	}
}

func TestSignedHashing(t *testing.T) {
	f := Featurizer{Signed: true}
	v := f.Text(randomText(rand.New(rand.NewPCG(1, 1)), 300))
	var neg int
	for _, x := range v.Values {
		if x < 0 {
			neg++
		}
	}
	if neg == 0 || neg == v.NNZ() {
		t.Fatalf("%d of %d values negative, want a mix", neg, v.NNZ())
	}
	if math.Abs(v.Norm()-1) > 1e-12 {
		t.Fatalf("norm = %v", v.Norm())
	}
}

type constWeights float64

func (w constWeights) TermWeight(int32) float64 { return float64(w) }

type dropIndex int32

func (d dropIndex) TermWeight(j int32) float64 {
	if j == int32(d) {
		return 0
	}
	return 1
}

func TestTermWeightsHook(t *testing.T) {
	s := "the cat sat on the mat"
	plain := Featurizer{}.Text(s)
	scaled := Featurizer{Weights: constWeights(3)}.Text(s)
	for k := range plain.Values {
		if math.Abs(plain.Values[k]-scaled.Values[k]) > 1e-15 {
			t.Fatalf("a constant weight changed the normalized vector")
		}
	}
	dropped := Featurizer{Weights: dropIndex(plain.Indices[0])}.Text(s)
	if dropped.Values[0] != 0 || math.Abs(dropped.Norm()-1) > 1e-12 {
		t.Fatalf("zero weight on index %d: %+v", plain.Indices[0], dropped)
	}
}

// TestTermsThatCancelSumToZero gives termVector signed terms on one index
// whose weights cancel exactly, -(1+ln 2) - (1+ln 3) - 1 + (1+ln 3) +
// (1+ln 2) + 1, but leave 4.4e-16 when summed in this order: normalized,
// that rounding error would be the whole vector.
func TestTermsThatCancelSumToZero(t *testing.T) {
	f := Featurizer{Dim: 1, Signed: true} // odd hashes are negative
	v := f.termVector([]uint64{3, 3, 5, 5, 5, 7, 10, 10, 10, 12, 12, 14})
	normalize(v)
	if v.NNZ() != 1 || v.Values[0] != 0 {
		t.Fatalf("cancelling terms gave %v, want [0]", v.Values)
	}
}

// TestNamedFeaturesThatCancelSumToZero hashes three named features onto
// one index: 0.1 + 0.2 - 0.3 is 0, summed in order of value it is 2.8e-17,
// which normalizing would make the whole vector.
func TestNamedFeaturesThatCancelSumToZero(t *testing.T) {
	d := Decoder{Featurizer: Featurizer{Dim: 1, Normalize: true}}
	ex, err := d.DecodeExample([]byte(`{"id": "a", "features": {"x": 0.1, "y": 0.2, "z": -0.3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ex.Vector.NNZ() != 1 || ex.Vector.Values[0] != 0 {
		t.Fatalf("cancelling features gave %v, want [0]", ex.Vector.Values)
	}
}

func TestTextAllocations(t *testing.T) {
	s := benchTexts(1, 2048)[0]
	f := Featurizer{}
	allocs := testing.AllocsPerRun(20, func() { f.Text(s) })
	if allocs > 3 { // term hashes, indices, values
		t.Fatalf("Text allocates %v times, want at most 3", allocs)
	}
}

func TestSparseFromEntriesOverflow(t *testing.T) {
	_, err := sparseFromEntries([]entry{{index: 0, value: math.MaxFloat64}, {index: 0, value: math.MaxFloat64}}, "features")
	checkDecodeError(t, err, ReasonNonFinite, "features")
}

func TestNormalizeZero(t *testing.T) {
	v := vector.Sparse([]int32{1}, []float64{0})
	normalize(v)
	if v.Values[0] != 0 {
		t.Fatalf("normalize changed a zero vector: %v", v.Values)
	}
}

// TestSortTermsMatchesSlicesSort holds the bucketed sort to slices.Sort
// over random hashes of every length it handles, with duplicates, skewed
// top bytes and the lengths at its fallbacks.
func TestSortTermsMatchesSlicesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 31, 32, 33, 80, 300, stackTerms - 1, stackTerms, stackTerms + 1, 2000} {
		for trial := range 20 {
			terms := make([]uint64, n)
			for i := range terms {
				switch trial % 3 {
				case 0:
					terms[i] = r.Uint64()
				case 1: // many duplicates
					terms[i] = r.Uint64N(8) << 60
				case 2: // one top byte
					terms[i] = 0xab<<56 | r.Uint64N(1<<20)
				}
			}
			want := slices.Clone(terms)
			slices.Sort(want)
			sortTerms(terms)
			if !slices.Equal(terms, want) {
				t.Fatalf("n %d, trial %d: not the order of slices.Sort", n, trial)
			}
		}
	}
}

func BenchmarkSortTerms(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{80, 300} {
		terms := make([]uint64, n)
		for i := range terms {
			terms[i] = r.Uint64()
		}
		work := make([]uint64, n)
		b.Run(fmt.Sprintf("bucketed/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(work, terms)
				sortTerms(work)
			}
		})
		b.Run(fmt.Sprintf("slices.Sort/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(work, terms)
				slices.Sort(work)
			}
		})
	}
}
