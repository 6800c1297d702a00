package service

import "time"

// backlogged reports whether the brokers hold more examples this process
// has not read than make a solve due (schedule.solve_examples): a catch-up
// or a burst, which solves back to back would take the cores from
// scoring. Without a backlog a solve is not paced: the cores it uses
// would be idle, and the model in force improves sooner (a young model
// kept 0.9 s after a solve of 0.3 s scored the next 900 examples of a
// 1,000/s stream).
func (s *Service) backlogged() bool {
	return s.unread.total(s.cfg.Kafka.Topics.Examples) > int64(s.cfg.Schedule.SolveExamples)
}

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

// insertShare is the share of the time the learner's window inserts may
// take now: schedule.insert_share behind a backlog, all of it otherwise.
// A graph insert costs far more than scoring an example (some 50 µs of
// one core against 1 ms for sparse text at ef_construction 200), so that
// inserting as fast as it could took a core from scoring a catch-up
// drain; the examples it does not insert meanwhile are sampled out
// (window.sample), and labeled ones wait in the queue.
func (s *Service) insertShare() float64 {
	if s.backlogged() {
		return s.cfg.Schedule.InsertShare
	}
	return 1
}
