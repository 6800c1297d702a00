package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"streamer/vector"
)

// DriftKind names a stream with a known change (DriftStream).
type DriftKind string

// The kinds of change DriftStream draws.
const (
	// DriftRotate turns the boundary between two classes in Dim dense
	// features, a little at every row, from the row at Change on.
	DriftRotate DriftKind = "rotate"
	// DriftSwap swaps the labels of two pairs of glyphs at Change: the
	// images stay as they were, what they mean changes.
	DriftSwap DriftKind = "swap"
	// DriftNewClass draws nine glyphs before Change and all ten from it.
	DriftNewClass DriftKind = "newclass"
	// DriftShift moves the inputs of a two-class stream in Dim dense
	// features at Change, keeping the boundary.
	DriftShift DriftKind = "shift"
)

// DriftKinds lists every kind.
var DriftKinds = []DriftKind{DriftRotate, DriftSwap, DriftNewClass, DriftShift}

// DriftConfig describes a stream with a known change. Zero fields mean the
// defaults written beside them.
type DriftConfig struct {
	Kind DriftKind
	Rows int
	// Change is the fraction of the stream before the change: where
	// another concept starts, or the rotation; 0 means 0.5, but for a
	// rotation, which turns from the first row.
	Change float64
	// Dim is the number of features of rotate and shift; 0 means 20.
	Dim int
	// Degrees is the angle the boundary turns through from Change to the
	// end of the stream (rotate); 0 means 360.
	Degrees float64
	// Noise is the probability that a label of rotate or shift is
	// flipped, for inputs drawn from one standard Gaussian: the Bayes
	// rate is 1 − Noise. With Noise 0 rotate draws two unit Gaussians
	// whose means sit ±1.645 from the boundary instead (the classes
	// overlap: the Bayes rate is 95%), and shift uses 0.05.
	Noise float64
	// Separation, with Noise, draws two unit Gaussians whose means sit
	// ±Separation from the boundary instead of one, and flips each label
	// with probability Noise: a Bayes rate of
	// 1 − Noise − (1 − 2·Noise)·Φ(−Separation).
	Separation float64
	// Shift is how far the inputs move at Change (shift), in standard
	// deviations, half along the boundary's normal and half across it;
	// 0 means 2.
	Shift float64
	// Deform scales the glyphs' deformations (swap, newclass); 0 means
	// 0.8 (GlyphConfig).
	Deform float64
	Seed   uint64
}

func (c DriftConfig) withDefaults() DriftConfig {
	if c.Change == 0 && c.Kind != DriftRotate {
		c.Change = 0.5
	}
	if c.Dim <= 0 {
		c.Dim = 20
	}
	if c.Degrees == 0 {
		c.Degrees = 360
	}
	if c.Noise == 0 && c.Kind == DriftShift {
		c.Noise = 0.05
	}
	if c.Shift == 0 {
		c.Shift = 2
	}
	if c.Deform <= 0 {
		c.Deform = 0.8
	}
	return c
}

// Validate names the first bad field.
func (c DriftConfig) Validate() error {
	switch {
	case c.Kind != DriftRotate && c.Kind != DriftSwap && c.Kind != DriftNewClass && c.Kind != DriftShift:
		return fmt.Errorf("kind %q: want rotate, swap, newclass or shift", c.Kind)
	case c.Rows < 1:
		return fmt.Errorf("rows must be >= 1, got %d", c.Rows)
	case c.Change < 0 || c.Change >= 1:
		return fmt.Errorf("change must be in [0, 1), got %v", c.Change)
	case c.Dim < 0 || (c.Dim > 0 && c.Dim < 3):
		return fmt.Errorf("dim must be >= 3, got %d", c.Dim)
	case c.Noise < 0 || c.Noise >= 0.5:
		return fmt.Errorf("noise must be in [0, 0.5), got %v", c.Noise)
	case c.Deform < 0:
		return fmt.Errorf("deform must be >= 0, got %v", c.Deform)
	}
	return nil
}

// Drift is a generated stream with a known change.
type Drift struct {
	Rows   []vector.Vector
	Labels []string
	// Change is the index of the first row after the change.
	Change int
}

// overlapMean puts two unit Gaussians' means ±overlapMean from the
// boundary: Φ(−1.645) = 5% of either class lies beyond it.
const overlapMean = 1.6448536269514722

// swapPairs are the glyphs whose labels DriftSwap exchanges: two pairs
// that look alike no more than others.
var swapPairs = [][2]int{{1, 7}, {3, 8}}

// newGlyph is the glyph DriftNewClass holds back until the change.
const newGlyph = 9

// DriftStream draws the stream of cfg, reproducibly from its seed.
func DriftStream(cfg DriftConfig) (Drift, error) {
	if err := cfg.Validate(); err != nil {
		return Drift{}, err
	}
	cfg = cfg.withDefaults()
	d := Drift{Rows: make([]vector.Vector, cfg.Rows), Labels: make([]string, cfg.Rows), Change: int(cfg.Change * float64(cfg.Rows))}
	switch cfg.Kind {
	case DriftRotate, DriftShift:
		linearDrift(cfg, &d)
	default:
		glyphDrift(cfg, &d)
	}
	return d, nil
}

// linearDrift draws the two-class streams of rotate and shift: the
// boundary is the hyperplane through the origin normal to u, which turns
// in the plane of two random orthonormal directions (rotate), or stays
// while the inputs move (shift).
func linearDrift(cfg DriftConfig, d *Drift) {
	r := newLinearRand(cfg)
	a := randomUnit(r, cfg.Dim)
	b := orthonormal(r, a)
	across := orthonormal(r, a)
	shift := make([]float64, cfg.Dim)
	for j := range shift {
		shift[j] = cfg.Shift * (a[j] + across[j]) / math.Sqrt2
	}
	u := make([]float64, cfg.Dim)
	for i := range d.Rows {
		angle := 0.0
		if cfg.Kind == DriftRotate && i >= d.Change {
			angle = cfg.Degrees * math.Pi / 180 * float64(i-d.Change) / float64(max(1, cfg.Rows-d.Change))
		}
		for j := range u {
			u[j] = math.Cos(angle)*a[j] + math.Sin(angle)*b[j]
		}
		x := make([]float64, cfg.Dim)
		for j := range x {
			x[j] = r.NormFloat64()
		}
		if cfg.Kind == DriftShift && i >= d.Change {
			for j := range x {
				x[j] += shift[j]
			}
		}
		var class int
		if mean := cfg.mean(); mean > 0 {
			class = r.IntN(2)
			for j := range x {
				x[j] += float64(2*class-1) * mean * u[j]
			}
			if r.Float64() < cfg.Noise {
				class = 1 - class
			}
		} else {
			if dot(u, x) >= 0 {
				class = 1
			}
			if r.Float64() < cfg.Noise {
				class = 1 - class
			}
		}
		d.Rows[i], d.Labels[i] = vector.Dense(x), fmt.Sprintf("c%d", class)
	}
}

func newLinearRand(cfg DriftConfig) *rand.Rand {
	return rand.New(rand.NewPCG(cfg.Seed, 0x510e527fade682d1))
}

// glyphDrift draws the glyph streams of swap and newclass.
func glyphDrift(cfg DriftConfig, d *Drift) {
	r := rand.New(rand.NewPCG(cfg.Seed, 0x9b05688c2b3e6c1f))
	for i := range d.Rows {
		c := r.IntN(len(glyphStrokes))
		for cfg.Kind == DriftNewClass && i < d.Change && c == newGlyph {
			c = r.IntN(len(glyphStrokes))
		}
		label := c
		if cfg.Kind == DriftSwap && i >= d.Change {
			for _, p := range swapPairs {
				switch c {
				case p[0]:
					label = p[1]
				case p[1]:
					label = p[0]
				}
			}
		}
		d.Rows[i], d.Labels[i] = vector.Dense(renderGlyph(r, glyphStrokes[c], cfg.Deform)), fmt.Sprintf("g%d", label)
	}
}

// mean returns how far the class means of rotate and shift sit from the
// boundary, 0 for one Gaussian labelled by the side of the boundary.
func (c DriftConfig) mean() float64 {
	if c.Noise == 0 {
		return overlapMean
	}
	return c.Separation
}

func randomUnit(r *rand.Rand, dim int) []float64 {
	v := make([]float64, dim)
	for j := range v {
		v[j] = r.NormFloat64()
	}
	scale(v, 1/math.Sqrt(dot(v, v)))
	return v
}

// orthonormal returns a random unit vector orthogonal to the unit a.
func orthonormal(r *rand.Rand, a []float64) []float64 {
	v := randomUnit(r, len(a))
	p := dot(v, a)
	for j := range v {
		v[j] -= p * a[j]
	}
	scale(v, 1/math.Sqrt(dot(v, v)))
	return v
}

func dot(a, b []float64) float64 {
	var s float64
	for j := range a {
		s += a[j] * b[j]
	}
	return s
}

func scale(v []float64, f float64) {
	for j := range v {
		v[j] *= f
	}
}
