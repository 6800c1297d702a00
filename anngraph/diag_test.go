package anngraph

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sort"
	"testing"
	"time"

	"streamer/synth"
	"streamer/vector"
)

func TestDiag(t *testing.T) {
	if os.Getenv("ANN_DIAG") == "" {
		t.Skip()
	}
	window := envInt("ANN_WINDOW", 20000)
	slides := envInt("ANN_SLIDES", 1)
	var xs []vector.Vector
	var cs []int
	cfg := Config{MaxExamples: window, EfConstruction: envInt("ANN_EFC", 0), M: envInt("ANN_M", 0), ListDepth: envInt("ANN_DEPTH", 0)}
	if os.Getenv("ANN_SPARSE") != "" {
		xs = synth.GenerateSparseText(synth.SparseTextConfig{Rows: (slides + 1) * window, Seed: 1}).Rows
	} else {
		xs, cs = synth.Clusters(synth.ClusterConfig{Points: (slides + 1) * window, Dim: 784, Seed: 1})
		cfg.Metric = Euclidean
	}
	w, _ := New(cfg)
	start := time.Now()
	for i, x := range xs {
		w.Insert(uint64(i), time.Time{}, x)
		if (i+1)%window == 0 {
			st := w.Stats()
			fmt.Printf("%d points %.1fs dist/insert %.0f repairs %d\n", i+1, time.Since(start).Seconds(), float64(st.Distances)/float64(st.Inserts), st.ListRepairs)
			diag(w, 300)
			diagMissing(w, 200)
			diagBad(w, 300)
			diagReach(w)
			diagSearch(w, 300)
			if cs != nil {
				diagCluster(w, cs)
			}
		}
	}
}

func diag(w *Window, sample int) {
	v := w.Snapshot()
	rows := sampleRows(v.Len(), sample, 1)
	exact, _ := exactKNN(context.Background(), v, rows, v.K())
	hist := make([]int, 11)
	var sum float64
	for s, i := range rows {
		h, _ := recall(v.Neighbors(i), exact[s], v.K())
		hist[int(h)]++
		sum += h
	}
	g := w.graph
	deg0, in0, short := 0, 0, 0
	for s := w.head; s >= 0; s = w.next[s] {
		deg0 += len(g.nodes[s].out[0])
		if len(g.nodes[s].in[0]) == 0 {
			in0++
		}
		if len(w.lists.nb[s]) < w.cfg.K {
			short++
		}
	}
	fmt.Printf("  recall %.3f hist %v  mean out0 %.1f  in0=0: %d short lists %d top %d\n", sum/float64(len(rows)*v.K()), hist, float64(deg0)/float64(w.live), in0, short, g.top)
}

func diagMissing(w *Window, sample int) {
	v := w.Snapshot()
	rows := sampleRows(v.Len(), sample, 2)
	older, newer := 0, 0
	unreach := 0
	for _, i := range rows {
		type rd struct {
			r int
			d float64
		}
		var all []rd
		for j := range v.Len() {
			if j != i {
				all = append(all, rd{j, math.Sqrt(vector.SquaredDistance(v.Vector(i), v.Vector(j)))})
			}
		}
		sort.Slice(all, func(a, b int) bool { return all[a].d < all[b].d })
		listed := map[int]bool{}
		for _, nb := range v.Neighbors(i) {
			listed[nb.Row] = true
		}
		for _, e := range all[:v.K()] {
			if !listed[e.r] {
				if e.r < i {
					older++
				} else {
					newer++
				}
			}
		}
		_ = unreach
	}
	fmt.Printf("  missing: older %d newer %d\n", older, newer)
}

func TestDumpDense(t *testing.T) {
	path := os.Getenv("ANN_DUMP")
	if path == "" {
		t.Skip()
	}
	xs, _ := synth.Clusters(synth.ClusterConfig{Points: 120000, Dim: 784, Seed: 1})
	f, _ := os.Create(path)
	defer f.Close()
	buf := make([]byte, 4*784)
	for _, x := range xs {
		for j, v := range x.Values {
			binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(float32(v)))
		}
		f.Write(buf)
	}
}

func diagBad(w *Window, sample int) {
	v := w.Snapshot()
	rows := sampleRows(v.Len(), sample, 1)
	exact, _ := exactKNN(context.Background(), v, rows, v.K())
	slotOf := func(row int) int32 { return w.slotOf[v.Key(row)] }
	for s, i := range rows {
		h, _ := recall(v.Neighbors(i), exact[s], v.K())
		if h > 2 {
			continue
		}
		sl := slotOf(i)
		nd := w.graph.nodes[sl]
		fmt.Printf("  row %d hits %.0f level %d out0 %d in0 %d listed %.1f..%.1f exact %.1f..%.1f\n", i, h, nd.level, len(nd.out[0]), len(nd.in[0]),
			v.Neighbors(i)[0].Distance, v.Neighbors(i)[v.K()-1].Distance, exact[s][0], exact[s][v.K()-1])
	}
}

func diagReach(w *Window) {
	g := w.graph
	seen := map[int32]bool{g.entry: true}
	queue := []int32{g.entry}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, y := range g.nodes[x].out[0] {
			if !seen[y] {
				seen[y] = true
				queue = append(queue, y)
			}
		}
	}
	// upper layers
	up := 0
	for s := w.head; s >= 0; s = w.next[s] {
		if g.nodes[s].level > 0 {
			up++
		}
	}
	fmt.Printf("  reachable at layer 0 from entry: %d of %d; upper nodes %d levelCount %v\n", len(seen), w.live, up, g.levelCount)
}

func diagSearch(w *Window, sample int) {
	v := w.Snapshot()
	rows := sampleRows(v.Len(), sample, 3)
	exact, _ := exactKNN(context.Background(), v, rows, v.K())
	var sum float64
	wrong, partial := 0, 0
	for s, i := range rows {
		got, _ := w.Search(v.Vector(i), v.K()+1)
		var nb []Neighbor
		for _, m := range got[1:] {
			nb = append(nb, Neighbor{Distance: m.Distance})
		}
		h, _ := recall(nb, exact[s], v.K())
		sum += h
		if got[1].Distance > 30 {
			wrong++
		} else if h < 8 {
			partial++
		}
	}
	fmt.Printf("  search recall %.3f wrong-cluster %d partial %d\n", sum/float64(len(rows)*v.K()), wrong, partial)
}

func diagCluster(w *Window, cs []int) {
	g := w.graph
	// per cluster: BFS from newest member over same-cluster layer-0 links
	newest := map[int]int32{}
	size := map[int]int{}
	for s := w.head; s >= 0; s = w.next[s] {
		c := cs[w.keys[s]]
		newest[c] = s
		size[c]++
	}
	var fr []float64
	for c := 0; c < 50; c++ {
		st, ok := newest[c]
		if !ok {
			continue
		}
		seen := map[int32]bool{st: true}
		q := []int32{st}
		for len(q) > 0 {
			x := q[0]
			q = q[1:]
			for _, y := range g.nodes[x].out[0] {
				if !seen[y] && cs[w.keys[y]] == c {
					seen[y] = true
					q = append(q, y)
				}
			}
		}
		fr = append(fr, float64(len(seen))/float64(size[c]))
	}
	sort.Float64s(fr)
	fmt.Printf("  in-cluster reach from newest: min %.2f median %.2f max %.2f\n", fr[0], fr[len(fr)/2], fr[len(fr)-1])
}
