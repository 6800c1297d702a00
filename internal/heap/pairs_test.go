package heap

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

type kv struct {
	k float64
	v int32
}

func kvOrder(a, b kv) int { return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.v, b.v)) }

// TestPairsAgainstSorted runs random pushes, pops and replacements of the
// top, with many equal keys and values, against a sorted slice.
func TestPairsAgainstSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var h Pairs[float64, int32]
	var ref []kv // sorted
	insert := func(x kv) {
		i, _ := slices.BinarySearchFunc(ref, x, kvOrder)
		ref = slices.Insert(ref, i, x)
	}
	for step := range 20000 {
		x := kv{float64(r.IntN(30)) / 4, int32(r.IntN(10) - 5)}
		switch op := r.IntN(3); {
		case op == 0 || len(ref) == 0:
			h.Push(x.k, x.v)
			insert(x)
		case op == 1:
			if k, v := h.Pop(); k != ref[0].k || v != ref[0].v {
				t.Fatalf("step %d: Pop = (%v, %v), want %v", step, k, v, ref[0])
			}
			ref = ref[1:]
		default:
			h.ReplaceTop(x.k, x.v)
			ref = ref[1:]
			insert(x)
		}
		if h.Len() != len(ref) {
			t.Fatalf("step %d: %d pairs, want %d", step, h.Len(), len(ref))
		}
		if len(ref) == 0 {
			continue
		}
		if k, v := h.Top(); k != ref[0].k || v != ref[0].v {
			t.Fatalf("step %d: top (%v, %v), want %v", step, k, v, ref[0])
		}
	}
	var all []kv
	for k, v := range h.All() {
		all = append(all, kv{k, v})
	}
	slices.SortFunc(all, kvOrder)
	if !slices.Equal(all, ref) {
		t.Fatalf("All = %v, want %v in some order", all, ref)
	}
	h.Reset()
	if h.Len() != 0 {
		t.Fatalf("%d pairs after Reset", h.Len())
	}
}

// TestPairsNegatedIsDescending: pairs pushed negated pop in descending
// order of the pairs, as a heap of the farthest first keeps them.
func TestPairsNegatedIsDescending(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	xs := make([]kv, 500)
	for i := range xs {
		xs[i] = kv{float64(r.IntN(50)), int32(r.IntN(500))}
	}
	var h Pairs[float64, int32]
	for _, x := range xs {
		h.Push(-x.k, -x.v)
	}
	slices.SortFunc(xs, func(a, b kv) int { return kvOrder(b, a) })
	for i, want := range xs {
		if k, v := h.Pop(); -k != want.k || -v != want.v {
			t.Fatalf("pop %d: (%v, %v), want %v", i, -k, -v, want)
		}
	}
}
