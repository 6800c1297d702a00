package service

import (
	"context"
	"time"
)

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

// solvePacer keeps solves to schedule.solve_share of the time while the
// examples are backlogged. Solves are due after so many examples or
// labels, which a live stream brings slowly, but a backlog (a catch-up
// drain, a burst) brings faster than a solve of the whole window ends:
// solved back to back, they took one core or both from scoring the
// backlog.
//
// A solve is charged before it starts, at the cost its window predicts:
// the last solve's time per window row, times the rows now. The pause
// before it, counted from the end of the last solve, is that estimate
// plus what the last solve cost beyond its own estimate, times
// (1 − share)/share. Charged only after it ran, the first solve of a
// catch-up, on the few rows read by then, bought an early pause, and the
// next, on a window 16 times larger, took both cores for most of the
// drain (3.5 s of a 5.8 s drain of 218,360 examples).
type solvePacer struct {
	share    float64
	lastEnd  time.Time
	perRow   time.Duration // the last solve's time per window row; 0 before the first
	debt     time.Duration // the last solve's time beyond its estimate
	estimate time.Duration // the estimate of the solve under way
}

// notBefore returns when a solve of a window of rows may start behind a
// backlog, and takes its estimate as the charge that done settles.
func (p *solvePacer) notBefore(rows int) time.Time {
	p.estimate = p.perRow * time.Duration(rows)
	if p.share >= 1 || p.lastEnd.IsZero() {
		return time.Time{}
	}
	charge := p.estimate + p.debt
	if charge <= 0 {
		return time.Time{}
	}
	return p.lastEnd.Add(time.Duration(float64(charge) * (1 - p.share) / p.share))
}

// done records a solve of rows that took busy and ended now.
func (p *solvePacer) done(busy time.Duration, rows int, now time.Time) {
	p.debt = busy - p.estimate
	p.lastEnd = now
	if rows > 0 {
		p.perRow = busy / time.Duration(rows)
	}
}

// pace waits until t while the examples stay backlogged: a solve that the
// pacer holds back starts at once when the backlog is read, since the
// cores it would take from scoring are then idle. It reports false when
// ctx ended.
func (s *Service) pace(ctx context.Context, until time.Time) bool {
	for s.backlogged() {
		d := time.Until(until)
		if d <= 0 {
			break
		}
		if !sleep(ctx, min(d, 50*time.Millisecond)) {
			return false
		}
	}
	return ctx.Err() == nil
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
