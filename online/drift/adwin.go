package drift

import (
	"fmt"
	"math"
)

// ADWINConfig describes an ADWIN. Zero fields mean the defaults written
// beside them.
type ADWINConfig struct {
	// Delta is δ: at each check of a window whose values do not change,
	// the probability that it is cut, and so of a false alarm, is at most
	// δ; 0 means 10⁻⁶. A check comes once per Block values.
	Delta float64
	// MinChange is the smallest rise of the mean that alarms; 0 means
	// 0.1. A smaller change, or a fall, cuts the window without an
	// alarm: the window stays as long as its values have not changed,
	// and the slow moves of what it watches (a model replaced by the
	// next) are not alarms.
	MinChange float64
	// Block is the number of values between checks, and the window is
	// cut only between blocks; 0 means 32. MaxBlocks bounds the window:
	// 0 means 256 (8,192 values).
	Block     int
	MaxBlocks int
}

func (c ADWINConfig) withDefaults() ADWINConfig {
	if c.Delta == 0 {
		c.Delta = 1e-6
	}
	if c.MinChange == 0 {
		c.MinChange = 0.1
	}
	if c.Block == 0 {
		c.Block = 32
	}
	if c.MaxBlocks == 0 {
		c.MaxBlocks = 256
	}
	return c
}

// Validate names the first bad field.
func (c ADWINConfig) Validate() error {
	switch {
	case c.Delta < 0 || c.Delta >= 1:
		return fmt.Errorf("delta must be in (0, 1), got %v", c.Delta)
	case c.MinChange < 0 || c.MinChange >= 1:
		return fmt.Errorf("min_change must be in (0, 1), got %v", c.MinChange)
	case c.Block < 0 || c.MaxBlocks < 0 || c.MaxBlocks == 1:
		return fmt.Errorf("block must be >= 0 and max_blocks >= 2, got %d and %d", c.Block, c.MaxBlocks)
	}
	return nil
}

// block is Block consecutive values: their sum and the position of the
// first.
type block struct {
	sum   float64
	since int64
}

// ADWIN is Bifet and Gavaldà's adaptive window (ADWIN, 2007) over values
// in [0, 1], kept in blocks: once per block it compares the mean of every
// older part of the window with that of the newer part, and cuts the
// older part off where they differ by more than chance allows. With n0
// and n1 values on either side of a split, Hoeffding's inequality for
// the difference of their means bounds the chance of a gap of ε by
// 2·exp(−2ε² / (1/n0 + 1/n1)); the cut is at
//
//	ε_cut = sqrt((1/n0 + 1/n1) · ln(2m/δ) / 2)
//
// with m the splits tested, so that a check of a stationary window cuts
// with probability at most δ. A cut alarms when the newer part's mean is
// above the older's by at least MinChange too; the window then restarts
// from the newer part.
type ADWIN struct {
	cfg    ADWINConfig
	blocks []block // complete blocks, oldest first
	cur    block
	curN   int
	// stat and threshold are the rise and the cut of the split that came
	// nearest alarming at the last check.
	stat, threshold float64
	since           int64
}

// NewADWIN returns an empty window.
func NewADWIN(cfg ADWINConfig) *ADWIN {
	cfg = cfg.withDefaults()
	return &ADWIN{cfg: cfg, blocks: make([]block, 0, cfg.MaxBlocks)}
}

// Add puts the value x (clamped to [0, 1]) at position into the window and
// reports whether the window's mean rose by at least MinChange.
func (d *ADWIN) Add(x float64, position int64) bool {
	if d.curN == 0 {
		d.cur.since = position
	}
	d.cur.sum += min(1, max(0, x))
	d.curN++
	if d.curN < d.cfg.Block {
		return false
	}
	if len(d.blocks) == d.cfg.MaxBlocks {
		d.blocks = append(d.blocks[:0], d.blocks[1:]...)
	}
	d.blocks = append(d.blocks, d.cur)
	d.cur, d.curN = block{}, 0
	return d.check()
}

// check tests every split between blocks, cuts the window where the
// means differ, and reports an alarm.
func (d *ADWIN) check() bool {
	d.stat, d.threshold = 0, 0
	for {
		cut, rise := d.split()
		if cut == 0 {
			return false
		}
		if rise {
			d.since = d.blocks[cut].since
			d.blocks = append(d.blocks[:0], d.blocks[cut:]...)
			return true
		}
		// A fall, or a rise below MinChange: the older part goes, without
		// an alarm, and the rest is tested again.
		d.blocks = append(d.blocks[:0], d.blocks[cut:]...)
	}
}

// split returns the split (the index of the newer part's first block) to
// cut at, 0 when none differs; rise reports a cut that alarms. Of the
// splits that differ it prefers one that alarms, then the one whose gap
// exceeds its cut the most.
func (d *ADWIN) split() (cut int, rise bool) {
	k := len(d.blocks)
	if k < 2 {
		return 0, false
	}
	var total float64
	for _, b := range d.blocks {
		total += b.sum
	}
	size := float64(d.cfg.Block)
	lnTerm := math.Log(2 * float64(k-1) / d.cfg.Delta)
	var older float64
	best := math.Inf(-1)
	for i := 1; i < k; i++ {
		older += d.blocks[i-1].sum
		n0, n1 := float64(i)*size, float64(k-i)*size
		gap := (total-older)/n1 - older/n0
		eps := math.Sqrt((1/n0 + 1/n1) * lnTerm / 2)
		need := max(eps, d.cfg.MinChange)
		if gap-need > d.stat-d.threshold || d.threshold == 0 {
			d.stat, d.threshold = gap, need
		}
		if math.Abs(gap) <= eps {
			continue
		}
		alarms := gap >= need
		switch {
		case alarms && !rise, alarms == rise && math.Abs(gap)-eps > best:
			cut, rise, best = i, alarms, math.Abs(gap)-eps
		}
	}
	return cut, rise
}

// Statistic returns the largest rise of the newer part's mean over the
// older's, of the splits tested at the last check.
func (d *ADWIN) Statistic() float64 { return d.stat }

// Threshold returns the rise that split needed to alarm: its ε_cut, or
// MinChange when larger.
func (d *ADWIN) Threshold() float64 { return d.threshold }

// Since returns the position of the first value after the last cut that
// alarmed.
func (d *ADWIN) Since() int64 { return d.since }

// Len returns the number of values in the window.
func (d *ADWIN) Len() int { return len(d.blocks)*d.cfg.Block + d.curN }

// Reset empties the window.
func (d *ADWIN) Reset() {
	d.blocks, d.cur, d.curN, d.stat, d.threshold = d.blocks[:0], block{}, 0, 0, 0
}
