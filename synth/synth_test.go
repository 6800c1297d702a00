package synth

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
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

// TestGlyphs checks the glyph images: the same seed draws the same ones;
// 64 whole intensities from 0 to 16, none blank; every glyph drawn; the
// glyphs told apart by their mean images when barely deformed; and the
// images of a glyph spread further from its mean as Deform grows.
func TestGlyphs(t *testing.T) {
	a, ca := Glyphs(GlyphConfig{Images: 300, Seed: 3})
	b, cb := Glyphs(GlyphConfig{Images: 300, Seed: 3})
	for i := range a {
		if ca[i] != cb[i] || !slices.Equal(a[i].Values, b[i].Values) {
			t.Fatalf("image %d differs between two draws of one seed", i)
		}
		var ink float64
		for _, v := range a[i].Values {
			if v < 0 || v > 16 || v != math.Round(v) {
				t.Fatalf("image %d has intensity %v", i, v)
			}
			ink += v
		}
		if len(a[i].Values) != 64 || ink == 0 {
			t.Fatalf("image %d: %d values, ink %v", i, len(a[i].Values), ink)
		}
	}
	spread := func(deform float64) (float64, float64) {
		xs, cs := Glyphs(GlyphConfig{Images: 1000, Deform: deform, Seed: 4})
		mean := make([][]float64, 10)
		count := make([]float64, 10)
		for i, x := range xs {
			if mean[cs[i]] == nil {
				mean[cs[i]] = make([]float64, 64)
			}
			floats.Add(mean[cs[i]], x.Values)
			count[cs[i]]++
		}
		for c := range mean {
			if count[c] == 0 {
				t.Fatalf("deform %v: glyph %d never drawn", deform, c)
			}
			floats.Scale(1/count[c], mean[c])
		}
		var dist, right float64
		for i, x := range xs {
			dist += floats.Distance(x.Values, mean[cs[i]], 2) / float64(len(xs))
			nearest := 0
			for c := range mean {
				if floats.Distance(x.Values, mean[c], 2) < floats.Distance(x.Values, mean[nearest], 2) {
					nearest = c
				}
			}
			if nearest == cs[i] {
				right += 1 / float64(len(xs))
			}
		}
		return dist, right
	}
	calm, calmRight := spread(0.1)
	wild, _ := spread(1)
	if calmRight < 0.99 {
		t.Errorf("barely deformed glyphs: the nearest mean image is right on %.3f, want 0.99", calmRight)
	}
	if wild < 1.5*calm {
		t.Errorf("distance to the glyph's mean image: %.1f at Deform 1, %.1f at 0.1; want it to grow", wild, calm)
	}
}
