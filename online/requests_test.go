package online

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/online/active"
	"streamer/vector"
)

func TestDensityWithoutAGraphIsTheCosineToTheMeanDirection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const dim = 12
	for trial := range 20 {
		vecs := make([]vector.Vector, 2+rng.IntN(20))
		for i := range vecs {
			var idx []int32
			var val []float64
			for j := range dim {
				if rng.IntN(3) == 0 {
					idx, val = append(idx, int32(j)), append(val, rng.Float64())
				}
			}
			vecs[i] = vector.Sparse(idx, val)
		}
		mean := make([]float64, dim)
		for _, x := range vecs {
			if n := x.Norm(); n > 0 {
				for k, j := range x.Indices {
					mean[j] += x.Values[k] / n
				}
			}
		}
		got := density(windowView{vecs: vecs}, cosines(vecs), dim)
		for i, x := range vecs {
			var dot, xx, mm float64
			dense := make([]float64, dim)
			for k, j := range x.Indices {
				dense[j] = x.Values[k]
			}
			for j := range dim {
				dot, xx, mm = dot+dense[j]*mean[j], xx+dense[j]*dense[j], mm+mean[j]*mean[j]
			}
			want := 0.0
			if xx > 0 && mm > 0 {
				want = dot / math.Sqrt(xx*mm)
			}
			if math.Abs(got[i]-want) > 1e-9 {
				t.Fatalf("trial %d row %d: density %v, want %v", trial, i, got[i], want)
			}
		}
	}
}

func TestDensityRanksAClusterAboveAnOutlier(t *testing.T) {
	vecs := []vector.Vector{
		vector.Sparse([]int32{0, 1}, []float64{1, 1}),
		vector.Sparse([]int32{0, 1}, []float64{1, 0.9}),
		vector.Sparse([]int32{0, 1, 2}, []float64{1, 1, 0.1}),
		vector.Sparse([]int32{5}, []float64{3}),
	}
	d := density(windowView{vecs: vecs}, cosines(vecs), 6)
	for i := range 3 {
		if d[i] <= d[3] {
			t.Errorf("row %d of the cluster has density %v, the outlier %v", i, d[i], d[3])
		}
	}
}

// TestDensityWithAGraphIsTheMeanLikenessToTheNeighbours: in a window with
// a kNN graph a row's density is its mean cosine with its neighbours, so
// that a row of a tight cluster ranks above one that shares the window's
// common terms and has no close neighbour, which the mean direction
// ranks first.
func TestDensityWithAGraphIsTheMeanLikenessToTheNeighbours(t *testing.T) {
	var vecs []vector.Vector
	for i := range 5 { // two clusters of near-copies sharing term 0
		jitter := 0.01 * float64(i)
		vecs = append(vecs,
			vector.Sparse([]int32{0, 1}, []float64{1, 3 + jitter}),
			vector.Sparse([]int32{0, 2}, []float64{1, 3 - jitter}))
	}
	generic := len(vecs)
	vecs = append(vecs, vector.Sparse([]int32{0, 1, 2}, []float64{1, 1, 1}))
	w, err := anngraph.New(anngraph.Config{MaxExamples: 100, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if _, err := w.Insert(uint64(i+1), time.Unix(int64(i), 0), v); err != nil {
			t.Fatal(err)
		}
	}
	view := graphWindow{w}.snapshot()
	like := cosines(view.vecs)
	got := density(view, like, 3)
	for i := range view.vecs {
		nbrs := view.graph.Neighbors(i)
		if len(nbrs) == 0 {
			t.Fatalf("row %d has no neighbours", i)
		}
		want := 0.0
		for _, nb := range nbrs {
			if nb.Row == i {
				t.Fatalf("row %d lists itself", i)
			}
			want += like(i, nb.Row) / float64(len(nbrs))
		}
		if math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("row %d: density %v, want its mean cosine with its neighbours %v", i, got[i], want)
		}
	}
	byDirection := meanDirectionCosines(view.vecs, 3)
	row := func(key uint64) int {
		for i, k := range view.keys {
			if k == key {
				return i
			}
		}
		t.Fatalf("key %d is not in the window", key)
		return -1
	}
	g := row(uint64(generic + 1))
	for key := range uint64(generic) {
		i := row(key + 1)
		if byDirection[i] >= byDirection[g] {
			t.Fatalf("the mean direction ranks row %d (%v) above the generic row (%v): the test shows nothing", i, byDirection[i], byDirection[g])
		}
		if got[i] <= got[g] {
			t.Errorf("clustered row %d has density %v, the generic row %v", i, got[i], got[g])
		}
	}
}

// TestLinkSampleListsTheExactNearest: the lists of a sampled pool are
// those of sorting every other sampled row by its distance, the older of
// rows equally near first, on dense rows and on sparse ones, where a row
// that shares no term is no neighbour.
func TestLinkSampleListsTheExactNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 12 {
		n := 1 + rng.IntN(2*poolSample)
		dense := trial%2 == 1
		vecs := make([]vector.Vector, n)
		pool := &active.Pool{IDs: make([]string, n), Labels: make([]string, n), Neighbours: make([][]int32, n)}
		for i := range vecs {
			vecs[i] = randomRow(rng, dense)
			if rng.IntN(10) > 0 {
				pool.IDs[i] = strconv.Itoa(i)
			}
			if rng.IntN(4) == 0 {
				pool.Labels[i] = "a"
			}
		}
		linkSample(pool, vecs)
		rows := sampleRows(pool, n)
		if len(rows) > 2*poolSample {
			t.Fatalf("trial %d: %d rows sampled, more than %d", trial, len(rows), 2*poolSample)
		}
		for k := 0; k < len(rows); k += 1 + len(rows)/40 { // some 40 rows of each pool
			i := rows[k]
			want := nearestByBruteForce(vecs, rows, i)
			if !slices.Equal(pool.Neighbours[i], want) {
				t.Fatalf("trial %d (dense %v), row %d: neighbours %v, want %v", trial, dense, i, pool.Neighbours[i], want)
			}
		}
		for i, nb := range pool.Neighbours {
			if len(nb) > 0 && !slices.Contains(rows, i) {
				t.Fatalf("trial %d: row %d is not sampled but has neighbours", trial, i)
			}
		}
	}
}

// randomRow draws a row of 40 features: dense, or sparse with a few terms
// of a small vocabulary, now and then none.
func randomRow(rng *rand.Rand, dense bool) vector.Vector {
	const dim = 40
	if dense {
		v := make([]float64, dim)
		for j := range v {
			v[j] = float64(rng.IntN(5)) // small integers: ties happen
		}
		return vector.Dense(v)
	}
	var idx []int32
	var val []float64
	for j := range dim {
		if rng.IntN(12) == 0 {
			idx, val = append(idx, int32(j)), append(val, 1+float64(rng.IntN(3)))
		}
	}
	return vector.Sparse(idx, val)
}

// nearestByBruteForce lists the poolNeighbours rows of rows nearest to i,
// by a stable sort of every other row's distance.
func nearestByBruteForce(vecs []vector.Vector, rows []int, i int) []int32 {
	type near struct {
		row  int
		dist float64
	}
	var all []near
	for _, j := range rows {
		if j == i {
			continue
		}
		d := vector.SquaredDistance(vecs[i], vecs[j])
		if !vecs[i].IsDense() {
			dot := vector.Dot(vecs[i], vecs[j])
			if dot <= 0 {
				continue
			}
			d = 1 - dot/(vecs[i].Norm()*vecs[j].Norm())
		}
		all = append(all, near{j, d})
	}
	slices.SortStableFunc(all, func(x, y near) int { return cmp.Compare(x.dist, y.dist) })
	var out []int32
	for _, nb := range all[:min(poolNeighbours, len(all))] {
		out = append(out, int32(nb.row))
	}
	return out
}
