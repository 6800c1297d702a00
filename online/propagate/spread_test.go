package propagate

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"streamer/anngraph"
	"streamer/synth"
	"streamer/vector"
)

// blobs returns n points in each of two blobs far apart on the first
// axis, blob 0 first.
func blobs(n int, seed uint64) []vector.Vector {
	r := rand.New(rand.NewPCG(seed, 1))
	var xs []vector.Vector
	for b := range 2 {
		for range n {
			x := []float64{20 * float64(b), 0, 0}
			for j := range x {
				x[j] += r.NormFloat64()
			}
			xs = append(xs, vector.Dense(x))
		}
	}
	return xs
}

func viewOf(t *testing.T, xs []vector.Vector, k int) *anngraph.View {
	t.Helper()
	w, err := anngraph.New(anngraph.Config{MaxExamples: len(xs), K: k, Metric: anngraph.Euclidean, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		if _, err := w.Insert(uint64(i), time.Time{}, x); err != nil {
			t.Fatal(err)
		}
	}
	return w.Snapshot()
}

// denseSpread is the fixed point of the spreading, solved directly:
// F = (1-α)(I - αS)⁻¹Y with S = D^{-1/2}WD^{-1/2} of the view's lists made
// symmetric.
func denseSpread(v *anngraph.View, class []int, classes int, alpha float64) *mat.Dense {
	n := v.Len()
	w := mat.NewDense(n, n, nil)
	for i := range n {
		for _, nb := range v.Neighbors(i) {
			w.Set(i, nb.Row, 1)
			w.Set(nb.Row, i, 1)
		}
	}
	a := mat.NewDense(n, n, nil)
	for i := range n {
		var di float64
		for j := range n {
			di += w.At(i, j)
		}
		for j := range n {
			var dj float64
			for l := range n {
				dj += w.At(j, l)
			}
			if w.At(i, j) != 0 {
				a.Set(i, j, -alpha/math.Sqrt(di*dj))
			}
		}
		a.Set(i, i, a.At(i, i)+1)
	}
	y := mat.NewDense(n, classes, nil)
	for i, c := range class {
		if c >= 0 {
			y.Set(i, c, 1-alpha)
		}
	}
	var f mat.Dense
	if err := f.Solve(a, y); err != nil {
		panic(err)
	}
	return &f
}

// TestSpreadIsTheFixedPoint: the spread scores, normalized by row, are
// those of the direct solve of F = αSF + (1-α)Y.
func TestSpreadIsTheFixedPoint(t *testing.T) {
	xs := blobs(30, 1)
	v := viewOf(t, xs, 5)
	class := make([]int, len(xs))
	for i := range class {
		class[i] = -1
	}
	class[0], class[7], class[31], class[40] = 0, 0, 1, 2
	for _, alpha := range []float64{0.2, 0.5, 0.9} {
		vote := Spread(v, class, 3, Settings{Alpha: alpha})
		f := denseSpread(v, class, 3, alpha)
		for i := range xs {
			var sum float64
			for c := range 3 {
				sum += f.At(i, c)
			}
			for c := range 3 {
				want := 0.0
				if sum > 0 {
					want = f.At(i, c) / sum
				}
				if got := float64(vote.scores[i*3+c]); math.Abs(got-want) > 1e-5*max(1, want) {
					t.Fatalf("α %v row %d class %d: %v, direct solve %v", alpha, i, c, got, want)
				}
			}
		}
	}
}

// TestVoteFollowsTheGraph: a label spreads within its blob and not to
// the other, which no edge joins; a new point votes for its blob's class,
// and a blob that no label reached gives no vote.
func TestVoteFollowsTheGraph(t *testing.T) {
	xs := blobs(40, 2)
	v := viewOf(t, xs, 5)
	class := make([]int, len(xs))
	for i := range class {
		class[i] = -1
	}
	class[3] = 1 // one label, in blob 0
	vote := Spread(v, class, 2, Settings{})
	near := vector.Dense([]float64{0.3, -0.2, 0.1})
	got, ok := vote.Distribution(near, nil)
	if !ok || got[1] != 1 || got[0] != 0 {
		t.Fatalf("near blob 0: %v %v, want all on class 1", got, ok)
	}
	far := vector.Dense([]float64{20.1, 0, 0})
	if got, ok := vote.Distribution(far, nil); ok {
		t.Fatalf("near the unlabeled blob: %v, want no vote", got)
	}
	class[50] = 0 // and one in blob 1
	vote = Spread(v, class, 2, Settings{})
	if got, ok := vote.Distribution(far, nil); !ok || got[0] != 1 {
		t.Fatalf("near blob 1: %v %v, want all on class 0", got, ok)
	}
	if got, ok := vote.Distribution(vector.Dense([]float64{1, 2}), nil); ok {
		t.Fatalf("a vector of another length voted %v", got)
	}
}

// BenchmarkVote times one new row's vote over a window of 784-value rows
// (nearest-row search and the sum of their spread scores).
func BenchmarkVote(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, dim, classes = 5000, 784, 10
	xs := make([]vector.Vector, n+100)
	for i := range xs {
		x := make([]float64, dim)
		c := i % classes
		for j := range x {
			x[j] = r.NormFloat64()
			if j%classes == c {
				x[j] += 3
			}
		}
		xs[i] = vector.Dense(x)
	}
	w, err := anngraph.New(anngraph.Config{MaxExamples: n, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.InsertBatch(items(xs[:n])); err != nil {
		b.Fatal(err)
	}
	class := make([]int, n)
	for i := range class {
		class[i] = -1
		if i%50 == 0 {
			class[i] = i % classes
		}
	}
	vote := Spread(w.Snapshot(), class, classes, Settings{})
	var dst []float64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		dst, _ = vote.Distribution(xs[n+i%100], dst)
	}
}

func items(xs []vector.Vector) []anngraph.Item {
	out := make([]anngraph.Item, len(xs))
	for i, x := range xs {
		out[i] = anngraph.Item{Key: uint64(i), Vec: x}
	}
	return out
}

// BenchmarkVoteText times one new row's vote over a window of short
// text rows (80 terms of 2^18 hashed columns).
func BenchmarkVoteText(b *testing.B) {
	rows := synth.GenerateSparseText(synth.SparseTextConfig{Rows: 20100, Dim: 1 << 18, NNZ: 80, Topics: 10, TopicWords: 2000, Seed: 3}).Rows
	const n, classes = 20000, 2
	w, err := anngraph.New(anngraph.Config{MaxExamples: n, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.InsertBatch(items(rows[:n])); err != nil {
		b.Fatal(err)
	}
	class := make([]int, n)
	for i := range class {
		class[i] = -1
		if i%20 == 0 {
			class[i] = i % classes
		}
	}
	vote := Spread(w.Snapshot(), class, classes, Settings{})
	var dst []float64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		dst, _ = vote.Distribution(rows[n+i%100], dst)
	}
}
