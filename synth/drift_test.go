package synth

import (
	"math"
	"slices"
	"testing"
)

// TestDriftStream checks each kind's change: the same seed draws the same
// stream; swap relabels exactly the glyphs of its pairs from the change
// on; newclass holds its glyph back until then; rotate and shift have
// the stated Bayes rate, by the side of the boundary their generator
// knows, and shift moves the inputs' mean at the change only.
func TestDriftStream(t *testing.T) {
	for _, kind := range DriftKinds {
		a, err := DriftStream(DriftConfig{Kind: kind, Rows: 400, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := DriftStream(DriftConfig{Kind: kind, Rows: 400, Seed: 5})
		if !slices.Equal(a.Labels, b.Labels) || !slices.Equal(a.Rows[7].Values, b.Rows[7].Values) {
			t.Errorf("%s: two draws of one seed differ", kind)
		}
		if want := map[DriftKind]int{DriftRotate: 0}[kind]; kind == DriftRotate && a.Change != want || kind != DriftRotate && a.Change != 200 {
			t.Errorf("%s: change at %d", kind, a.Change)
		}
	}
	// The glyphs of one seed are drawn alike by swap and by newclass
	// before the change; swap's labels then differ exactly on its pairs.
	swap, _ := DriftStream(DriftConfig{Kind: DriftSwap, Rows: 3000, Seed: 9})
	swapped := map[string]string{"g1": "g7", "g7": "g1", "g3": "g8", "g8": "g3"}
	seen := map[string]bool{}
	for i := swap.Change; i < len(swap.Rows); i++ {
		seen[swap.Labels[i]] = true
	}
	for l := range swapped {
		if !seen[l] {
			t.Errorf("swap: no %s after the change", l)
		}
	}
	fresh, _ := DriftStream(DriftConfig{Kind: DriftNewClass, Rows: 3000, Seed: 9})
	for i, l := range fresh.Labels {
		if l == "g9" && i < fresh.Change {
			t.Fatalf("newclass: g9 at row %d, before the change at %d", i, fresh.Change)
		}
	}
	if !slices.Contains(fresh.Labels[fresh.Change:], "g9") {
		t.Error("newclass: no g9 after the change")
	}
	// Bayes rates: the least error of any boundary through the origin,
	// found by the side of the generator's own.
	for _, c := range []DriftConfig{
		{Kind: DriftRotate, Rows: 40000, Degrees: 1e-9, Seed: 1},
		{Kind: DriftRotate, Rows: 40000, Degrees: 1e-9, Noise: 0.05, Seed: 1},
		{Kind: DriftShift, Rows: 40000, Change: 0.999, Seed: 1},
	} {
		d, _ := DriftStream(c)
		u := boundaryNormal(c)
		wrong := 0
		for i, x := range d.Rows {
			side := "c0"
			if dot(u, x.Values) >= 0 {
				side = "c1"
			}
			if side != d.Labels[i] {
				wrong++
			}
		}
		if rate := float64(wrong) / float64(len(d.Rows)); math.Abs(rate-0.05) > 0.004 {
			t.Errorf("%s, noise %v: the boundary errs on %.4f, want 0.05", c.Kind, c.Noise, rate)
		}
	}
	moved, _ := DriftStream(DriftConfig{Kind: DriftShift, Rows: 20000, Seed: 2})
	mean := func(from, to int) []float64 {
		m := make([]float64, len(moved.Rows[0].Values))
		for _, x := range moved.Rows[from:to] {
			for j, v := range x.Values {
				m[j] += v / float64(to-from)
			}
		}
		return m
	}
	norm := func(v []float64) float64 { return math.Sqrt(dot(v, v)) }
	before, after := mean(0, moved.Change), mean(moved.Change, len(moved.Rows))
	gap := make([]float64, len(before))
	for j := range gap {
		gap[j] = after[j] - before[j]
	}
	if norm(before) > 0.1 || math.Abs(norm(gap)-2) > 0.1 {
		t.Errorf("shift: the inputs' mean sits %.3f from 0 before the change and moves by %.3f; want 0 and 2", norm(before), norm(gap))
	}
	if _, err := DriftStream(DriftConfig{Kind: "turn", Rows: 10}); err == nil {
		t.Error("an unknown kind: no error")
	}
}

// boundaryNormal returns the unrotated boundary's normal, drawn as
// linearDrift draws it.
func boundaryNormal(c DriftConfig) []float64 {
	c = c.withDefaults()
	r := newLinearRand(c)
	return randomUnit(r, c.Dim)
}
