package active

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Budget is how many requests a Selector may make: PerMinute a minute of
// the clock it is given, or Fraction of the examples that arrive. One of
// them is set; the zero Budget makes no requests.
type Budget struct {
	PerMinute float64
	Fraction  float64
}

// ParseBudget reads a budget as the active.budget key writes it: "5%" or
// "0.05" (a fraction of the arriving examples, at most 1), "30/min" or
// "30/m" (requests a minute), "2/s" (a second) or "120/h" (an hour); "0"
// or "" makes none.
func ParseBudget(s string) (Budget, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Budget{}, nil
	}
	if num, unit, ok := strings.Cut(s, "/"); ok {
		n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || n < 0 {
			return Budget{}, fmt.Errorf("budget %q: want a count per unit such as 30/min", s)
		}
		switch strings.TrimSpace(unit) {
		case "s", "sec", "second":
			return Budget{PerMinute: 60 * n}, nil
		case "m", "min", "minute":
			return Budget{PerMinute: n}, nil
		case "h", "hour":
			return Budget{PerMinute: n / 60}, nil
		}
		return Budget{}, fmt.Errorf("budget %q: the unit must be s, min or h", s)
	}
	num, percent := strings.CutSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return Budget{}, fmt.Errorf("budget %q: want a fraction of the examples (5%% or 0.05) or a rate (30/min)", s)
	}
	if percent {
		f /= 100
	}
	if f < 0 || f > 1 {
		return Budget{}, fmt.Errorf("budget %q: a fraction of the examples must be in [0, 1]", s)
	}
	return Budget{Fraction: f}, nil
}

// String writes b as ParseBudget reads it.
func (b Budget) String() string {
	switch {
	case b.PerMinute > 0:
		return strconv.FormatFloat(b.PerMinute, 'g', -1, 64) + "/min"
	case b.Fraction > 0:
		return strconv.FormatFloat(100*b.Fraction, 'g', -1, 64) + "%"
	}
	return "0"
}

// Zero reports whether b makes no requests.
func (b Budget) Zero() bool { return b.PerMinute <= 0 && b.Fraction <= 0 }

// accrue returns the requests that elapsed time and arrived examples add
// to the budget.
func (b Budget) accrue(elapsed time.Duration, arrived int64) float64 {
	if b.PerMinute > 0 {
		return b.PerMinute * elapsed.Minutes()
	}
	return b.Fraction * float64(arrived)
}

// burst bounds the requests a budget may owe at once: a minute's worth of
// a rate, so that a pause does not end in a flood; a fraction of the
// examples owes all it accrued, so that it spends what it would reveal.
func (b Budget) burst() float64 {
	if b.PerMinute > 0 {
		return max(1, b.PerMinute)
	}
	return math.Inf(1)
}
