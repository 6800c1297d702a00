package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"streamer/config"
)

// Schedule paces the solver and the learner's window inserts by the
// backlog: a due solve first waits for the labels on the brokers
// (AwaitLabels), and behind a backlog solves and inserts take their share
// of the time (Pace, InsertShare). Every field is required.
type Schedule struct {
	Config  config.Config
	Backlog *Backlog
	Metrics *Metrics
	Log     *slog.Logger
}

// Backlogged reports whether the brokers hold more examples this process
// has not read than make a solve due (schedule.solve_examples): a catch-up
// or a burst, which solves back to back would take the cores from
// scoring. Without a backlog a solve is not paced: the cores it uses
// would be idle, and the model in force improves sooner (a young model
// kept past its solve scores every example that arrives meanwhile).
func (s *Schedule) Backlogged() bool {
	return s.Backlog.Total(s.Config.Kafka.Topics.Examples) > int64(s.Config.Schedule.SolveExamples)
}

// SolvePacer keeps solves to schedule.solve_share of the time while the
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
// next, on a window many times larger, took both cores for most of the
// drain (docs/RESULTS.md, "Drain").
type SolvePacer struct {
	Share    float64 // schedule.solve_share
	lastEnd  time.Time
	perRow   time.Duration // the last solve's time per window row; 0 before the first
	debt     time.Duration // the last solve's time beyond its estimate
	estimate time.Duration // the estimate of the solve under way
}

// NotBefore returns when a solve of a window of rows may start behind a
// backlog, and takes its estimate as the charge that Done settles.
func (p *SolvePacer) NotBefore(rows int) time.Time {
	p.estimate = p.perRow * time.Duration(rows)
	if p.Share >= 1 || p.lastEnd.IsZero() {
		return time.Time{}
	}
	charge := p.estimate + p.debt
	if charge <= 0 {
		return time.Time{}
	}
	return p.lastEnd.Add(time.Duration(float64(charge) * (1 - p.Share) / p.Share))
}

// Done records a solve of rows that took busy and ended now.
func (p *SolvePacer) Done(busy time.Duration, rows int, now time.Time) {
	p.debt = busy - p.estimate
	p.lastEnd = now
	if rows > 0 {
		p.perRow = busy / time.Duration(rows)
	}
}

// Pace waits until t while the examples stay backlogged: a solve that the
// pacer holds back starts at once when the backlog is read, since the
// cores it would take from scoring are then idle. It reports false when
// ctx ended.
func (s *Schedule) Pace(ctx context.Context, until time.Time) bool {
	for s.Backlogged() {
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

// InsertShare is the share of the time the learner's window inserts may
// take now: schedule.insert_share behind a backlog, all of it otherwise.
// A graph insert costs far more than scoring an example (anngraph's
// BenchmarkFill against the drain's scoring rate), so that inserting as
// fast as it could took a core from scoring a catch-up drain; the examples it does not insert meanwhile are sampled out
// (window.sample), and labeled ones wait in the queue.
func (s *Schedule) InsertShare() float64 {
	if s.Backlogged() {
		return s.Config.Schedule.InsertShare
	}
	return 1
}

// AwaitLabels waits until every labels partition is read to its end or
// as far in time as the newest example read (the labels a live stream
// would have brought by then), or schedule.labels_wait has passed, or ctx
// ended; it reports whether ctx is still running. A live stream has its
// labels read within a fetch or two, and a backlog read in step has them
// read as far as its examples: the wait is for catch-ups that read the
// examples ahead. Timestamps are the records' (producer or broker time):
// labels stamped earlier than their examples shorten the wait.
func (s *Schedule) AwaitLabels(ctx context.Context) bool {
	topic, examples := s.Config.Kafka.Topics.Labels, s.Config.Kafka.Topics.Examples
	lagging := s.Backlog.BehindOf(topic, examples)
	if len(lagging) == 0 || s.Config.Schedule.LabelsWait == 0 {
		return true
	}
	start := time.Now()
	deadline := time.NewTimer(s.Config.Schedule.LabelsWait)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for len(lagging) > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			s.Metrics.LabelsWaits.WithLabelValues("timeout").Inc()
			s.Log.Warn("solving before every label on the topic was read", "waited", s.Config.Schedule.LabelsWait.String(),
				"partitions", fmt.Sprint(lagging))
			// A partition expected behind at the start and not read for
			// a whole wait while others were is another process's (several
			// in one group): it is not waited for again, nor counted in a
			// backlog.
			s.Backlog.ForgetExpected(topic)
			s.Backlog.ForgetExpected(s.Config.Kafka.Topics.Examples)
			return true
		case <-tick.C:
			lagging = s.Backlog.BehindOf(topic, examples)
		}
	}
	s.Metrics.LabelsWaits.WithLabelValues("read").Inc()
	s.Log.Debug("waited for the labels before solving", "waited", time.Since(start).String())
	return true
}
