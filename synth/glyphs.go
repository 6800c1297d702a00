package synth

import (
	"math"
	"math/rand/v2"

	"streamer/vector"
)

// GlyphConfig describes a set of glyph images.
type GlyphConfig struct {
	Images int
	// Deform scales every random deformation of a glyph (rotation, scale,
	// shear, shift, jitter of its strokes' points); 0 means 0.8, where a
	// linear model on few labels is far from right on every row, so that
	// the unlabeled rows have something to add (docs/RESULTS.md measures
	// glyph streams).
	Deform float64
	Seed   uint64
}

// point is a position in the unit square, y downwards.
type point struct{ x, y float64 }

// glyphStrokes holds the ten glyphs, shaped like the digits 0 to 9: each
// a few polylines in the unit square.
var glyphStrokes = [10][][]point{
	{ellipse(0.5, 0.5, 0.25, 0.38, 14)},
	{{{0.4, 0.25}, {0.55, 0.12}, {0.55, 0.88}}},
	{{{0.28, 0.3}, {0.4, 0.15}, {0.62, 0.15}, {0.72, 0.32}, {0.3, 0.85}, {0.75, 0.85}}},
	{{{0.3, 0.15}, {0.7, 0.2}, {0.45, 0.48}, {0.72, 0.65}, {0.6, 0.85}, {0.28, 0.82}}},
	{{{0.6, 0.88}, {0.6, 0.12}, {0.25, 0.6}, {0.78, 0.6}}},
	{{{0.72, 0.15}, {0.32, 0.15}, {0.3, 0.45}, {0.65, 0.5}, {0.68, 0.78}, {0.3, 0.85}}},
	{{{0.65, 0.12}, {0.35, 0.45}, {0.3, 0.75}, {0.5, 0.88}, {0.68, 0.7}, {0.5, 0.52}, {0.33, 0.62}}},
	{{{0.25, 0.15}, {0.75, 0.15}, {0.45, 0.88}}},
	{ellipse(0.5, 0.3, 0.18, 0.16, 10), ellipse(0.5, 0.68, 0.22, 0.2, 10)},
	{{{0.65, 0.4}, {0.45, 0.5}, {0.32, 0.35}, {0.45, 0.15}, {0.65, 0.22}, {0.65, 0.5}, {0.5, 0.88}}},
}

// ellipse returns a closed polyline of k segments around (cx, cy).
func ellipse(cx, cy, rx, ry float64, k int) []point {
	p := make([]point, 0, k+1)
	for i := range k + 1 {
		a := 2 * math.Pi * float64(i) / float64(k)
		p = append(p, point{cx + rx*math.Sin(a), cy - ry*math.Cos(a)})
	}
	return p
}

// Glyphs draws images of ten digit-like glyphs, each deformed at random
// and drawn with a pen of random width on an 8 × 8 grid of intensities
// 0 to 16: images whose classes lie on curved manifolds that a kNN graph
// follows better than a linear model. The second result is each image's
// glyph (0 to 9). No real images are involved.
func Glyphs(cfg GlyphConfig) ([]vector.Vector, []int) {
	deform := cfg.Deform
	if deform <= 0 {
		deform = 0.8
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 1))
	xs := make([]vector.Vector, cfg.Images)
	cs := make([]int, cfg.Images)
	for i := range xs {
		c := r.IntN(len(glyphStrokes))
		xs[i], cs[i] = vector.Dense(renderGlyph(r, glyphStrokes[c], deform)), c
	}
	return xs, cs
}

// renderGlyph deforms strokes and draws them: each of the 8 × 8 cells
// averages 4 × 4 samples of the pen, full within 1.5 pen widths of a
// stroke less the distance.
func renderGlyph(r *rand.Rand, strokes [][]point, deform float64) []float64 {
	segs := deformStrokes(r, strokes, deform)
	width := 0.06 + r.Float64()*0.06
	const grid, sub = 8, 4
	img := make([]float64, grid*grid)
	for py := range grid * sub {
		for px := range grid * sub {
			p := point{(float64(px) + 0.5) / (grid * sub), (float64(py) + 0.5) / (grid * sub)}
			d := math.Inf(1)
			for _, s := range segs {
				d = math.Min(d, segmentDistance(p, s[0], s[1]))
			}
			img[(py/sub)*grid+px/sub] += math.Max(0, math.Min(1, 1.5-d/width)) / (sub * sub)
		}
	}
	for i, v := range img {
		img[i] = math.Round(math.Min(16, v*16*1.3))
	}
	return img
}

// deformStrokes returns the segments of strokes after a random affine
// map (rotation, scale per axis, shear, shift) and a jitter of each
// point, all scaled by deform.
func deformStrokes(r *rand.Rand, strokes [][]point, deform float64) [][2]point {
	sym := func(scale float64) float64 { return (r.Float64()*2 - 1) * scale * deform }
	rot, sx, sy, shear := sym(0.3), 1+sym(0.2), 1+sym(0.2), sym(0.35)
	tx, ty := sym(0.08), sym(0.08)
	cos, sin := math.Cos(rot), math.Sin(rot)
	var segs [][2]point
	for _, stroke := range strokes {
		var last point
		for k, p := range stroke {
			x, y := (p.x+sym(0.04)-0.5)*sx, (p.y+sym(0.04)-0.5)*sy
			x += shear * y
			q := point{cos*x - sin*y + 0.5 + tx, sin*x + cos*y + 0.5 + ty}
			if k > 0 {
				segs = append(segs, [2]point{last, q})
			}
			last = q
		}
	}
	return segs
}

// segmentDistance returns the distance from p to the segment ab.
func segmentDistance(p, a, b point) float64 {
	dx, dy := b.x-a.x, b.y-a.y
	t := ((p.x-a.x)*dx + (p.y-a.y)*dy) / (dx*dx + dy*dy + 1e-12)
	t = math.Max(0, math.Min(1, t))
	return math.Hypot(a.x+t*dx-p.x, a.y+t*dy-p.y)
}
