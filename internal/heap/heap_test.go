package heap

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// item is a key with a tag that the order does not see, to tell apart
// items that tie.
type item struct{ key, tag int }

func byKey(a, b item) bool { return a.key < b.key }

// randomItems returns n items whose keys, drawn from few values, tie often.
func randomItems(r *rand.Rand, n int) []item {
	xs := make([]item, n)
	for i := range xs {
		xs[i] = item{key: r.IntN(n/4 + 1), tag: i}
	}
	return xs
}

// TestPopsInOrder: a heap made by New, or by Push one by one, pops its
// items in key order, for every size up to 70 and a few larger ones.
func TestPopsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1000, 4097}
	for n := range 71 {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		xs := randomItems(r, n)
		want := slices.Clone(xs)
		slices.SortStableFunc(want, func(a, b item) int { return cmp.Compare(a.key, b.key) })
		pushed := New[item](nil, byKey)
		for _, x := range xs {
			pushed.Push(x)
		}
		made := New(slices.Clone(xs), byKey)
		for name, h := range map[string]*Heap[item]{"New": &made, "Push": &pushed} {
			for k := range want {
				if top := h.Top(); top.key != want[k].key {
					t.Fatalf("%s, n %d: top %d is %+v, want key %d", name, n, k, top, want[k].key)
				}
				if got := h.Pop(); got.key != want[k].key {
					t.Fatalf("%s, n %d: pop %d gave %+v, want key %d", name, n, k, got, want[k].key)
				}
			}
			if h.Len() != 0 {
				t.Fatalf("%s, n %d: %d left after %d pops", name, n, h.Len(), n)
			}
		}
	}
}

// TestAgainstSorted runs random pushes, pops and replacements of the top
// against a sorted slice.
func TestAgainstSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := New[int](nil, func(a, b int) bool { return a < b })
	var ref []int // sorted
	for step := range 20000 {
		switch op := r.IntN(3); {
		case op == 0 || len(ref) == 0:
			x := r.IntN(100)
			h.Push(x)
			i, _ := slices.BinarySearch(ref, x)
			ref = slices.Insert(ref, i, x)
		case op == 1:
			if got := h.Pop(); got != ref[0] {
				t.Fatalf("step %d: Pop = %d, want %d", step, got, ref[0])
			}
			ref = ref[1:]
		default:
			x := r.IntN(100)
			h.ReplaceTop(x)
			ref = ref[1:]
			i, _ := slices.BinarySearch(ref, x)
			ref = slices.Insert(ref, i, x)
		}
		if h.Len() != len(ref) || len(ref) > 0 && h.Top() != ref[0] {
			t.Fatalf("step %d: %d items, top %v; want %d, %v", step, h.Len(), h.Items(), len(ref), ref)
		}
	}
	items := slices.Sorted(slices.Values(h.Items()))
	if !slices.Equal(items, ref) {
		t.Fatalf("Items = %v, want %v in some order", h.Items(), ref)
	}
}

// TestReplaceTopOfChangedItem: a pointer item whose key grew moves down
// when its heap is told so, as a merged read's source does when its head
// moves on.
func TestReplaceTopOfChangedItem(t *testing.T) {
	a, b, c := &item{key: 1}, &item{key: 2}, &item{key: 3}
	h := New([]*item{c, a, b}, func(x, y *item) bool { return x.key < y.key })
	top := h.Top()
	top.key = 5
	h.ReplaceTop(top)
	var got []int
	for h.Len() > 0 {
		got = append(got, h.Pop().key)
	}
	if !slices.Equal(got, []int{2, 3, 5}) {
		t.Fatalf("popped %v, want [2 3 5]", got)
	}
}

// TestPopLetsGo: a popped pointer is not kept in the heap's room.
func TestPopLetsGo(t *testing.T) {
	h := New[*item](nil, func(x, y *item) bool { return x.key < y.key })
	for k := range 4 {
		h.Push(&item{key: k})
	}
	for h.Len() > 0 {
		h.Pop()
	}
	for _, p := range h.Items()[:4] {
		if p != nil {
			t.Fatal("the heap's room keeps a popped item")
		}
	}
}

// BenchmarkPushPop pushes 256 candidates of a graph search (a distance
// and a slot, ordered by both) and pops them all, in a Heap ordered by a
// function and in Pairs: one op is one push and one pop.
func BenchmarkPushPop(b *testing.B) {
	type cand struct {
		d  float64
		id int32
	}
	closer := func(a, b cand) bool { return a.d < b.d || a.d == b.d && a.id < b.id }
	r := rand.New(rand.NewPCG(5, 6))
	xs := make([]cand, 256)
	for i := range xs {
		xs[i] = cand{d: r.Float64(), id: int32(i)}
	}
	var sink float64
	b.Run("Heap", func(b *testing.B) {
		h := New(make([]cand, 0, len(xs)), closer)
		for b.Loop() {
			for _, x := range xs {
				h.Push(x)
			}
			for h.Len() > 0 {
				sink += h.Pop().d
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/item")
	})
	b.Run("Pairs", func(b *testing.B) {
		var h Pairs[float64, int32]
		for b.Loop() {
			for _, x := range xs {
				h.Push(x.d, x.id)
			}
			for h.Len() > 0 {
				d, _ := h.Pop()
				sink += d
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/item")
	})
	_ = sink
}
