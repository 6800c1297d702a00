package drift

import "math"

// Recency standardizes where an arrival's nearest rows sit in a window of
// n rows kept in arrival order: rows holds their indices, 0 the oldest,
// n−1 the newest. While the stream does not change, the window's rows and
// the arrival are exchangeable, so the k nearest are k rows drawn at
// random without replacement, whatever the data: their mean relative
// index u has mean 1/2 and variance (n+1)(n−k) / (12·k·(n−1)²). Recency
// returns (u − 1/2) / sd(u), standard under that null. After a change the
// arrivals' nearest rows are the newest ones, drawn after it: inputs that
// moved, or a class that appeared, push it up by several units. It
// returns 0 and false for fewer than two rows or a window of fewer than
// k+1.
func Recency(rows []int, n int) (float64, bool) {
	k := len(rows)
	if k < 2 || n <= k {
		return 0, false
	}
	var sum float64
	for _, r := range rows {
		sum += float64(r)
	}
	nf, kf := float64(n), float64(k)
	u := sum / kf / (nf - 1)
	sd := math.Sqrt((nf + 1) * (nf - kf) / (12 * kf * (nf - 1) * (nf - 1)))
	return (u - 0.5) / sd, true
}
