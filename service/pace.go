package service

import "time"

// solvePause is how long the solver waits after a solve that took busy
// before it starts the next, so that solves take at most share of the
// time: busy·(1 − share)/share. Solves are due after so many examples or
// labels, which a live stream brings slowly, but a backlog (a catch-up
// drain, a burst) brings faster than a solve of the whole window ends:
// solved back to back, they took one core or both from scoring the
// backlog. Share 1 never pauses.
func solvePause(busy time.Duration, share float64) time.Duration {
	if share >= 1 || share <= 0 {
		return 0
	}
	return time.Duration(float64(busy) * (1 - share) / share)
}
