package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"streamer/online/internal/onlinetest"
	"streamer/online/kernel"
	"streamer/synth"
	"streamer/vector"
)

// modelKinds are the shapes of model the scoring tests run over: binary,
// one versus rest, and SR's centroids, by their weight vectors and classes.
var modelKinds = []struct {
	name       string
	p, classes int
	centroids  bool
}{{"binary", 1, 2, false}, {"one-vs-rest", 5, 5, false}, {"SR", 6, 7, true}}

// TestFoldedScoresAreMappedScores: a packed model with a kernel map,
// which scores through weights carried over to the landmarks, scores
// every row as mapping it first does: binary, one-vs-rest and SR models,
// dense and sparse rows, rows the map has not seen; and a copy of it
// without the map scores the mapped rows so.
func TestFoldedScoresAreMappedScores(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dense, _ := synth.Clusters(synth.ClusterConfig{Points: 60, Dim: 6, Clusters: 3, Seed: 4})
	sparse, _ := onlinetest.SparseProblem(8, 60, 40, 5, 10)
	for name, rows := range map[string][]vector.Vector{"dense": dense, "sparse": sparse} {
		km, err := kernel.NewMap(rows[:25], 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range modelKinds {
			m := randomModel(r, tc.p, km.Dim(), tc.classes, tc.centroids)
			m.Map = km
			var want [][]float64
			for _, x := range rows {
				want = append(want, m.Scores(x, nil))
			}
			m.Pack()
			if m.folded == nil {
				t.Fatalf("%s, %s: Pack did not fold the weights", name, tc.name)
			}
			unmapped := m.OverMappedRows() // as auto's trial scores rows mapped already
			for i, x := range rows {
				got := m.Scores(x, nil)
				if !slices.EqualFunc(got, want[i], func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }) {
					t.Fatalf("%s, %s, row %d: folded %v, mapped %v", name, tc.name, i, got, want[i])
				}
				if got := unmapped.Scores(km.Apply(x), nil); !slices.EqualFunc(got, want[i], func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }) {
					t.Fatalf("%s, %s, row %d: without the map %v, mapped %v", name, tc.name, i, got, want[i])
				}
			}
		}
	}
}

// TestFoldedSparseScoresConcurrently scores sparse rows through a folded
// map from several goroutines at once, as the service's scorers do: the
// buffers they share give each row the scores it gets alone.
func TestFoldedSparseScoresConcurrently(t *testing.T) {
	rows, _ := onlinetest.SparseProblem(10, 200, 60, 6, 10)
	km, err := kernel.NewMap(rows[:40], 0)
	if err != nil {
		t.Fatal(err)
	}
	m := randomModel(rand.New(rand.NewPCG(3, 4)), 5, km.Dim(), 5, false)
	m.Map = km
	m.Pack()
	want := make([][]float64, len(rows))
	for i, x := range rows {
		want[i] = m.Scores(x, nil)
	}
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for k := range rows {
				i := (k + 50*w) % len(rows)
				if got := m.Scores(rows[i], nil); !slices.Equal(got, want[i]) {
					errs <- fmt.Errorf("row %d: %v beside other scorers, %v alone", i, got, want[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestFoldedScoresAllocations checks that folded scoring adds each
// kernel value into the outputs as it is computed: at most one allocation
// a row (the 12 problems' outputs), not a slice of m kernel values as well.
func TestFoldedScoresAllocations(t *testing.T) {
	rows, _ := synth.Clusters(synth.ClusterConfig{Points: 300, Dim: 8, Clusters: 4, Seed: 2})
	km, err := kernel.NewMap(rows[:200], 0)
	if err != nil {
		t.Fatal(err)
	}
	m := randomModel(rand.New(rand.NewPCG(3, 4)), 12, km.Dim(), 10, true) // 10-class SR
	m.Map = km
	m.Pack()
	dst := make([]float64, 10)
	if allocs := testing.AllocsPerRun(20, func() { dst = m.Scores(rows[250], dst) }); allocs > 1 {
		t.Fatalf("folded Scores allocates %v times a row, want at most 1", allocs)
	}
}

// BenchmarkScoresKernel scores 64-value rows through a map of 1,000
// landmarks, by mapping each row (mapped) or through the weights carried
// over to the landmarks (folded): a 10-class SR model (12 problems) and
// a 10-class one-vs-rest one.
func BenchmarkScoresKernel(b *testing.B) {
	rows, _ := synth.Clusters(synth.ClusterConfig{Points: 3000, Dim: 64, Clusters: 10, Seed: 9})
	km, err := kernel.NewMap(rows[:1000], 0)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name       string
		p, classes int
		centroids  bool
	}{{"sr-10", 12, 10, true}, {"ovr-10", 10, 10, false}} {
		for _, folded := range []bool{false, true} {
			m := randomModel(r, tc.p, km.Dim(), tc.classes, tc.centroids)
			m.Map = km
			if folded {
				m.Pack()
			}
			b.Run(fmt.Sprintf("%s/folded=%v", tc.name, folded), func(b *testing.B) {
				dst := make([]float64, tc.classes)
				i := 0
				for b.Loop() {
					dst = m.Scores(rows[1000+i%2000], dst)
					i++
				}
			})
		}
	}
}
