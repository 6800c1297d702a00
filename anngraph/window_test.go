package anngraph

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"streamer/anngraph/anngraphtest"
	"streamer/internal/testlevel"
	"streamer/synth"
	"streamer/vector"
)

func denseData(n, dim int, seed uint64) []vector.Vector {
	xs, _ := synth.Clusters(synth.ClusterConfig{Points: n, Dim: dim, Clusters: 5, Seed: seed})
	return xs
}

func sparseData(n int, seed uint64) []vector.Vector {
	return synth.GenerateSparseText(synth.SparseTextConfig{
		Rows: n, Dim: 1 << 12, NNZ: 30, Topics: 5, TopicWords: 300, Seed: seed,
	}).Rows
}

// exactNeighbors returns row i's k nearest other rows of v by brute force.
func exactNeighbors(v *View, i, k int) []Neighbor {
	var all []Neighbor
	for j := range v.Len() {
		if j == i {
			continue
		}
		dot := vector.Dot(v.Vector(i), v.Vector(j))
		all = append(all, Neighbor{Row: j, Distance: v.distance(v.sq[i], v.sq[j], dot)})
	}
	slices.SortFunc(all, func(a, b Neighbor) int {
		if a.Distance != b.Distance {
			return cmpFloat(a.Distance, b.Distance)
		}
		return a.Row - b.Row
	})
	return all[:min(k, len(all))]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkExact fails unless every list of v is an exact kNN list: the same
// distances as brute force, each listed row truly at its listed distance.
// Rows are compared through distances so that ties may fall either way.
func checkExact(t *testing.T, v *View) {
	t.Helper()
	for i := range v.Len() {
		got, want := v.Neighbors(i), exactNeighbors(v, i, v.K())
		if len(got) != len(want) {
			t.Fatalf("row %d lists %d neighbours, want %d", i, len(got), len(want))
		}
		for r := range got {
			if math.Abs(got[r].Distance-want[r].Distance) > 1e-9 {
				t.Fatalf("row %d neighbour %d at %v, exact %v (row %d)", i, r, got[r].Distance, want[r].Distance, want[r].Row)
			}
			j := got[r].Row
			true_ := v.distance(v.sq[i], v.sq[j], vector.Dot(v.Vector(i), v.Vector(j)))
			if math.Abs(true_-got[r].Distance) > 1e-9 {
				t.Fatalf("row %d lists row %d at %v, but it is at %v", i, j, got[r].Distance, true_)
			}
		}
	}
}

func TestExhaustiveEqualsExactKNN(t *testing.T) {
	tests := []struct {
		name   string
		data   []vector.Vector
		metric Metric
		window int
		k      int
	}{
		{"dense euclidean, no eviction", denseData(150, 6, 1), Euclidean, 200, 5},
		{"dense euclidean, sliding", denseData(400, 6, 2), Euclidean, 120, 5},
		{"dense cosine, sliding", denseData(400, 6, 3), Cosine, 120, 7},
		{"sparse cosine, sliding", sparseData(400, 4), Cosine, 120, 5},
		{"sparse euclidean, sliding", sparseData(300, 5), Euclidean, 100, 3},
		{"window smaller than k", denseData(30, 4, 6), Euclidean, 4, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := New(Config{MaxExamples: tt.window, K: tt.k, Metric: tt.metric, Exhaustive: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range tt.data {
				if _, err := w.Insert(uint64(i), time.Time{}, x); err != nil {
					t.Fatal(err)
				}
				if i%37 == 0 {
					checkExact(t, w.Snapshot())
				}
			}
			v := w.Snapshot()
			if v.Len() != min(tt.window, len(tt.data)) {
				t.Fatalf("view holds %d rows", v.Len())
			}
			checkExact(t, v)
			checkInvariants(t, w, nil)
		})
	}
}

func TestBuildIsAFullWindow(t *testing.T) {
	rows := denseData(120, 5, 7)
	v, err := Build(rows, Config{K: 6, Metric: Euclidean, Exhaustive: true, MaxExamples: 3})
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != len(rows) {
		t.Fatalf("Build kept %d of %d rows", v.Len(), len(rows))
	}
	for i := range rows {
		if v.Key(i) != uint64(i) {
			t.Fatalf("row %d has key %d", i, v.Key(i))
		}
	}
	checkExact(t, v)
	empty, err := Build(nil, Config{})
	if err != nil || empty.Len() != 0 {
		t.Fatalf("Build(nil) = %v, %v", empty, err)
	}
}

// recallOf is the mean recall of v's lists against brute force.
func recallOf(v *View) float64 {
	var hits, total float64
	for i := range v.Len() {
		want := exactNeighbors(v, i, v.K())
		exact := make([]float64, len(want))
		for r := range want {
			exact[r] = want[r].Distance
		}
		var listed []float64
		for _, nb := range v.Neighbors(i) {
			listed = append(listed, v.Distance(i, nb.Row))
		}
		h, n := anngraphtest.Recall(listed, exact, v.K())
		hits += h
		total += n
	}
	return hits / total
}

func TestGraphRecallWhileSliding(t *testing.T) {
	testlevel.Long(t, "slow under -race; the other tests cover the graph's structure")
	tests := []struct {
		name   string
		data   []vector.Vector
		metric Metric
	}{
		{"dense", denseData(3000, 24, 8), Euclidean},
		{"sparse", sparseData(3000, 9), Cosine},
		{"dense cosine", denseData(3000, 40, 10), Cosine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := New(Config{MaxExamples: 500, Metric: tt.metric, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range tt.data {
				if _, err := w.Insert(uint64(i), time.Time{}, x); err != nil {
					t.Fatal(err)
				}
			}
			if r := recallOf(w.Snapshot()); r < 0.95 {
				t.Fatalf("recall@10 %.3f after sliding 5 windows, want ≥ 0.95", r)
			}
		})
	}
}

// checkInvariants verifies the window's internal structures: every list
// entry and graph link refers to a live point, reverse lists and links
// mirror forward ones, lists are ordered. gone, when set, holds keys that
// were evicted and must not be referred to.
func checkInvariants(t *testing.T, w *Window, gone map[uint64]bool) {
	t.Helper()
	live := map[int32]bool{}
	for s := w.head; s >= 0; s = w.next[s] {
		live[s] = true
		if w.slotOf[w.keys[s]] != s {
			t.Fatalf("slot %d: key %d maps to slot %d", s, w.keys[s], w.slotOf[w.keys[s]])
		}
		if gone[w.keys[s]] {
			t.Fatalf("evicted key %d is live", w.keys[s])
		}
	}
	if len(live) != w.live || len(w.slotOf) != w.live {
		t.Fatalf("%d slots linked, live = %d, %d keys", len(live), w.live, len(w.slotOf))
	}
	refer := func(what string, from, to int32) {
		t.Helper()
		if !live[to] {
			t.Fatalf("%s of slot %d refers to free slot %d", what, from, to)
		}
		if to == from {
			t.Fatalf("%s of slot %d refers to itself", what, from)
		}
		if gone[w.keys[to]] {
			t.Fatalf("%s of slot %d refers to evicted key %d", what, from, w.keys[to])
		}
	}
	for s := range int32(len(w.keys)) {
		if !live[s] {
			if len(w.lists.nb) > int(s) && (len(w.lists.nb[s]) > 0 || len(w.lists.rev[s]) > 0) {
				t.Fatalf("free slot %d has kNN entries", s)
			}
			if w.graph != nil && int(s) < len(w.graph.nodes) && w.graph.nodes[s].level >= 0 {
				t.Fatalf("free slot %d is in the graph", s)
			}
			continue
		}
		l := w.lists.nb[s]
		if len(l) > w.lists.depth || len(l) < min(w.cfg.K, w.live-1) {
			t.Fatalf("slot %d lists %d entries (depth %d, K %d, live %d)", s, len(l), w.lists.depth, w.cfg.K, w.live)
		}
		for i, c := range l {
			refer("kNN list", s, c.id)
			if i > 0 && !closer(l[i-1], c) {
				t.Fatalf("list of slot %d is out of order", s)
			}
			if !slices.Contains(w.lists.rev[c.id], s) {
				t.Fatalf("slot %d lists %d without a reverse entry", s, c.id)
			}
		}
		for _, p := range w.lists.rev[s] {
			refer("reverse kNN list", s, p)
			if !slices.ContainsFunc(w.lists.nb[p], func(c cand) bool { return c.id == s }) {
				t.Fatalf("reverse entry %d → %d without a list entry", p, s)
			}
		}
		if w.graph == nil {
			continue
		}
		nd := w.graph.nodes[s]
		if nd.level < 0 {
			t.Fatalf("live slot %d is not in the graph", s)
		}
		for lv := range int(nd.level) + 1 {
			out, _ := w.graph.links(s, lv)
			for _, b := range out {
				refer("graph link", s, b)
				if int(w.graph.nodes[b].level) < lv {
					t.Fatalf("link %d → %d on layer %d above %d's level", s, b, lv, b)
				}
				if !slices.Contains(w.graph.nodes[b].in[lv], s) {
					t.Fatalf("link %d → %d on layer %d without its reverse", s, b, lv)
				}
			}
			if len(out) > w.graph.capacity(lv) {
				t.Fatalf("slot %d has %d links on layer %d", s, len(out), lv)
			}
			for _, a := range nd.in[lv] {
				refer("reverse graph link", s, a)
				if aout, _ := w.graph.links(a, lv); !slices.Contains(aout, s) {
					t.Fatalf("reverse link %d ← %d on layer %d without its link", s, a, lv)
				}
			}
		}
	}
	if w.graph != nil && w.live > 0 {
		if !live[w.graph.entry] || int(w.graph.nodes[w.graph.entry].level) != w.graph.top {
			t.Fatalf("entry %d (top %d) is not a live point of the top level", w.graph.entry, w.graph.top)
		}
	}
}

// TestNoReferenceToEvicted streams points through windows of every kind,
// one by one (Insert) and in batches of changing sizes (InsertBatch, two
// workers), and checks every structure as it goes.
func TestNoReferenceToEvicted(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		data []vector.Vector
	}{
		{"graph dense", Config{MaxExamples: 150, K: 5, M: 4, Metric: Euclidean}, denseData(1500, 8, 10)},
		{"graph sparse", Config{MaxExamples: 150, K: 5, M: 6}, sparseData(1500, 11)},
		{"graph dense cosine", Config{MaxExamples: 150, K: 5, M: 4, Metric: Cosine}, denseData(1500, 20, 15)},
		{"graph short lists", Config{MaxExamples: 100, K: 8, ListDepth: 8, M: 3, EfConstruction: 10}, denseData(1200, 8, 12)},
		{"exhaustive", Config{MaxExamples: 80, K: 5, Exhaustive: true}, denseData(600, 8, 13)},
		{"graph by age", Config{MaxExamples: 1000, MaxAge: 100 * time.Second, K: 5, M: 4}, denseData(1500, 8, 14)},
		{"graph by age, small", Config{MaxExamples: 40, MaxAge: 20 * time.Second, K: 5, M: 4}, denseData(800, 8, 16)},
	}
	for _, tt := range tests {
		for _, batched := range []bool{false, true} {
			name := tt.name
			if batched {
				name += ", batches"
			}
			t.Run(name, func(t *testing.T) {
				cfg := tt.cfg
				cfg.InsertWorkers = 2
				w, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				streamChecked(t, w, tt.data, batched)
			})
		}
	}
}

// streamedItems gives the points keys 0, 1, ... and times that mostly
// increase by a second and now and then step back.
func streamedItems(data []vector.Vector) []Item {
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Unix(1700000000, 0)
	items := make([]Item, len(data))
	for i, x := range data {
		ts := base.Add(time.Duration(i)*time.Second - time.Duration(r.IntN(30))*time.Second)
		items[i] = Item{Key: uint64(i), Time: ts, Vec: x}
	}
	return items
}

// streamChecked inserts the points, one by one or in batches of 1 to 70,
// checking the window's invariants every 97 points or so and at the end:
// every key is live or evicted exactly once, and no list refers to an
// evicted point.
func streamChecked(t *testing.T, w *Window, data []vector.Vector, batched bool) {
	t.Helper()
	items := streamedItems(data)
	r := rand.New(rand.NewPCG(3, 4))
	gone := map[uint64]bool{}
	for i := 0; i < len(items); {
		n := 1
		if batched {
			n = min(1+r.IntN(70), len(items)-i)
		}
		var ev []uint64
		var err error
		if batched {
			ev, err = w.InsertBatch(items[i : i+n])
		} else {
			ev, err = w.Insert(items[i].Key, items[i].Time, items[i].Vec)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ev {
			if gone[k] {
				t.Fatalf("key %d evicted twice", k)
			}
			gone[k] = true
		}
		if i/97 != (i+n)/97 {
			checkInvariants(t, w, gone)
		}
		i += n
	}
	checkInvariants(t, w, gone)
	if got := w.Len() + len(gone); got != len(data) {
		t.Fatalf("%d live + %d evicted ≠ %d inserted", w.Len(), len(gone), len(data))
	}
	v := w.Snapshot()
	for i := range v.Len() {
		for _, nb := range v.Neighbors(i) {
			if gone[v.Key(nb.Row)] || nb.Row == i {
				t.Fatalf("row %d lists row %d (key %d)", i, nb.Row, v.Key(nb.Row))
			}
		}
	}
}

func TestEvictionByCountIsFIFO(t *testing.T) {
	w, err := New(Config{MaxExamples: 3, K: 2, Metric: Euclidean})
	if err != nil {
		t.Fatal(err)
	}
	data := denseData(6, 3, 15)
	var got []uint64
	for i, x := range data {
		ev, err := w.Insert(uint64(100+i), time.Time{}, x)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev...)
	}
	if want := []uint64{100, 101, 102}; !slices.Equal(got, want) {
		t.Fatalf("evicted %v, want %v", got, want)
	}
	v := w.Snapshot()
	for i, want := range []uint64{103, 104, 105} {
		if v.Key(i) != want {
			t.Fatalf("row %d has key %d, want %d", i, v.Key(i), want)
		}
	}
}

func TestEvictionByAge(t *testing.T) {
	base := time.Unix(1700000000, 0)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	data := denseData(10, 3, 16)
	w, err := New(Config{MaxExamples: 100, MaxAge: 10 * time.Second, K: 2, Metric: Euclidean, Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		key     uint64
		ts      int
		evicted []uint64
		live    []uint64
	}{
		{1, 0, nil, []uint64{1}},
		{2, 5, nil, []uint64{1, 2}},
		{3, 3, nil, []uint64{1, 2, 3}}, // out of order but within the age
		{4, 10, nil, []uint64{1, 2, 3, 4}},
		{5, 14, []uint64{1, 3}, []uint64{2, 4, 5}}, // newest 14: older than 4 goes
		{6, 2, []uint64{6}, []uint64{2, 4, 5}},     // too old on arrival
		{7, 30, []uint64{2, 4, 5}, []uint64{7}},
		{8, 21, nil, []uint64{7, 8}}, // 21 ≥ 30-10
	}
	for _, s := range steps {
		ev, err := w.Insert(s.key, at(s.ts), data[s.key])
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ev)
		if !slices.Equal(ev, s.evicted) {
			t.Fatalf("insert %d at %ds evicted %v, want %v", s.key, s.ts, ev, s.evicted)
		}
		v := w.Snapshot()
		var live []uint64
		for i := range v.Len() {
			live = append(live, v.Key(i))
			if !v.Time(i).Equal(at(steps[v.Key(i)-1].ts)) {
				t.Fatalf("key %d has time %v", v.Key(i), v.Time(i))
			}
		}
		if !slices.Equal(live, s.live) {
			t.Fatalf("after insert %d the window holds %v, want %v", s.key, live, s.live)
		}
		checkExact(t, v)
	}
	if st := w.Stats(); st.Rejected != 1 || st.Evictions != 5 || st.Inserts != 7 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDeterministic(t *testing.T) {
	data := sparseData(900, 17)
	build := func(seed uint64) *View {
		w, err := New(Config{MaxExamples: 200, MaxAge: 500 * time.Second, K: 6, M: 5, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range data {
			if _, err := w.Insert(uint64(i*7), time.Unix(int64(i-i%3), 0), x); err != nil {
				t.Fatal(err)
			}
		}
		return w.Snapshot()
	}
	a, b := build(42), build(42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two windows fed the same sequence differ")
	}
	if c := build(43); reflect.DeepEqual(a.nbrs, c.nbrs) {
		t.Log("another seed gave the same lists (possible, not expected)")
	}
}

func TestInsertErrors(t *testing.T) {
	w, err := New(Config{MaxExamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Insert(1, time.Time{}, vector.Dense([]float64{1, 2, 3})); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		key  uint64
		v    vector.Vector
		want string
	}{
		{"duplicate key", 1, vector.Dense([]float64{1, 0, 0}), "already"},
		{"other kind", 2, vector.Sparse([]int32{1}, []float64{1}), "sparse"},
		{"other length", 3, vector.Dense([]float64{1, 2}), "want 3"},
		{"not finite", 4, vector.Dense([]float64{1, math.NaN(), 0}), "NaN"},
	}
	for _, tt := range tests {
		_, err := w.Insert(tt.key, time.Time{}, tt.v)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
	if w.Len() != 1 {
		t.Fatalf("Len = %d after failed inserts", w.Len())
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg   Config
		field string // "" when valid
	}{
		{Config{MaxExamples: 1}, ""},
		{Config{MaxExamples: 0}, "MaxExamples"},
		{Config{MaxExamples: 5, MaxAge: -time.Second}, "MaxAge"},
		{Config{MaxExamples: 5, K: -1}, "K"},
		{Config{MaxExamples: 5, ListDepth: -1}, "ListDepth"},
		{Config{MaxExamples: 5, Metric: 7}, "Metric"},
		{Config{MaxExamples: 5, M: 1}, "M"},
		{Config{MaxExamples: 5, EfConstruction: -2}, "EfConstruction"},
		{Config{MaxExamples: 5, EfSearch: -2}, "EfSearch"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%+v: %v", tt.cfg, err)
		case tt.field != "" && (err == nil || !strings.Contains(err.Error(), tt.field+" =")):
			t.Errorf("%+v: err = %v, want it to name %s", tt.cfg, err, tt.field)
		}
	}
	c := Config{MaxExamples: 5, K: 3}.withDefaults()
	if c.ListDepth != 6 || c.M != DefaultM || c.EfConstruction != DefaultEfConstruction || c.EfSearch != DefaultEfSearch {
		t.Errorf("defaults %+v", c)
	}
}

func TestSearch(t *testing.T) {
	data := denseData(600, 8, 18)
	for _, exhaustive := range []bool{true, false} {
		w, err := New(Config{MaxExamples: 600, Metric: Euclidean, Exhaustive: exhaustive})
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range data {
			if _, err := w.Insert(uint64(i), time.Time{}, x); err != nil {
				t.Fatal(err)
			}
		}
		got, err := w.Search(data[17], 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 || got[0].Key != 17 || got[0].Distance != 0 {
			t.Fatalf("exhaustive=%v: Search = %v, want key 17 first at 0", exhaustive, got)
		}
		v := w.Snapshot()
		for r, nb := range v.Neighbors(17)[:4] {
			if got[r+1].Key != v.Key(nb.Row) {
				t.Fatalf("exhaustive=%v: Search %v disagrees with the list %v", exhaustive, got, v.Neighbors(17))
			}
		}
	}
}

// TestEvictOldest: a window told to forget what came before a key evicts
// its oldest points up to it, in order, leaves no reference to them, and
// goes on inserting and sliding as before.
func TestEvictOldest(t *testing.T) {
	for _, cfg := range []Config{
		{MaxExamples: 300, K: 5, M: 4, Metric: Euclidean},
		{MaxExamples: 300, K: 5, Exhaustive: true},
	} {
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		items := streamedItems(denseData(600, 8, 21))
		gone := map[uint64]bool{}
		insert := func(from, to int) {
			for _, it := range items[from:to] {
				ev, err := w.Insert(it.Key, it.Time, it.Vec)
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range ev {
					gone[k] = true
				}
			}
		}
		insert(0, 250)
		got := w.EvictOldest(func(key uint64) bool { return key < 180 })
		if len(got) != 180 || got[0] != 0 || got[179] != 179 {
			t.Fatalf("exhaustive %v: evicted %d keys, %v…%v; want 0…179", cfg.Exhaustive, len(got), got[0], got[len(got)-1])
		}
		for _, k := range got {
			gone[k] = true
		}
		checkInvariants(t, w, gone)
		if w.Len() != 70 || w.Snapshot().Key(0) != 180 {
			t.Fatalf("exhaustive %v: %d points left, the oldest %d; want 70 from 180", cfg.Exhaustive, w.Len(), w.Snapshot().Key(0))
		}
		if none := w.EvictOldest(func(uint64) bool { return false }); len(none) != 0 {
			t.Fatalf("evicted %v when told to evict none", none)
		}
		insert(250, 600)
		checkInvariants(t, w, gone)
		if w.Len() != 300 {
			t.Fatalf("%d points after the slide, want 300", w.Len())
		}
	}
}
