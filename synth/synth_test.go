package synth

import (
	"math"
	"testing"
)

func TestG50CIsReproducibleAndBalanced(t *testing.T) {
	x1, y1 := G50C(7)
	x2, y2 := G50C(7)
	if len(x1) != 550 || len(x1[0].Values) != 50 {
		t.Fatalf("shape %d×%d", len(x1), len(x1[0].Values))
	}
	pos := 0
	for i := range x1 {
		if x1[i].Values[3] != x2[i].Values[3] || y1[i] != y2[i] {
			t.Fatal("same seed gave different data")
		}
		if y1[i] > 0 {
			pos++
		}
	}
	if pos < 225 || pos > 325 {
		t.Fatalf("%d positives of 550", pos)
	}
	// The Bayes rule sign(x₀) errs on about 5% of the points.
	errs := 0
	for i := range x1 {
		if math.Signbit(x1[i].Values[0]) != math.Signbit(y1[i]) {
			errs++
		}
	}
	if rate := float64(errs) / 550; rate < 0.02 || rate > 0.09 {
		t.Fatalf("Bayes-rule error %.3f, want about 0.05", rate)
	}
}

func TestSparseTextShape(t *testing.T) {
	d := GenerateSparseText(SparseTextConfig{Rows: 500, Dim: 1 << 16, NNZ: 40, Noise: 0.05, Seed: 1})
	var nnz, pos int
	for i, v := range d.Rows {
		if err := v.Validate(1 << 16); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if math.Abs(v.Norm()-1) > 1e-12 {
			t.Fatalf("row %d norm %v", i, v.Norm())
		}
		for _, x := range v.Values {
			if x <= 0 {
				t.Fatalf("row %d has non-positive value %v", i, x)
			}
		}
		nnz += v.NNZ()
		if d.Labels[i] > 0 {
			pos++
		}
	}
	if mean := float64(nnz) / 500; mean < 25 || mean > 55 {
		t.Fatalf("mean nnz %.1f, want about 40", mean)
	}
	if pos < 200 || pos > 300 {
		t.Fatalf("%d positives of 500", pos)
	}
	// Without noise the planted separator classifies every row.
	clean := GenerateSparseText(SparseTextConfig{Rows: 300, Dim: 1 << 16, NNZ: 40, Seed: 1})
	for i, v := range clean.Rows {
		s := v.DotDense(clean.Separator) - clean.Threshold
		if (s >= 0) != (clean.Labels[i] > 0) {
			t.Fatalf("row %d: score %v but label %v", i, s, clean.Labels[i])
		}
	}
}

func TestClusters(t *testing.T) {
	xs, cs := Clusters(ClusterConfig{Points: 100, Dim: 8, Clusters: 4, Seed: 3})
	if len(xs) != 100 || len(cs) != 100 || len(xs[0].Values) != 8 {
		t.Fatal("wrong shape")
	}
	for _, c := range cs {
		if c < 0 || c >= 4 {
			t.Fatalf("cluster %d", c)
		}
	}
}

func TestTextStream(t *testing.T) {
	a := NewTextStream(TextStreamConfig{Seed: 3})
	b := NewTextStream(TextStreamConfig{Seed: 3})
	classes := map[string]int{}
	for i := range 200 {
		da, db := a.Next(), b.Next()
		if da != db {
			t.Fatal("same seed, different documents")
		}
		if da.Text == "" || da.ID == "" {
			t.Fatalf("document %d: %+v", i, da)
		}
		classes[da.Label]++
	}
	if classes["ham"] < 60 || classes["spam"] < 60 {
		t.Fatalf("classes %v", classes)
	}
	seen := map[string]int{}
	for id := range 5000 {
		w := Word(id)
		if prev, ok := seen[w]; ok {
			t.Fatalf("Word(%d) = Word(%d) = %q", id, prev, w)
		}
		seen[w] = id
	}
}
