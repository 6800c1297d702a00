package service

import (
	"context"
	"errors"
	"slices"
	"time"

	"streamer/online"
	"streamer/online/model"
	"streamer/online/train"
	"streamer/pipeline"
	"streamer/publish"
	"streamer/service/consumer"
	"streamer/snapshot"
)

// solveLoop re-solves when the consumer says enough examples or labels
// arrived, or the learner that enough examples landed in its window, or
// every solve_interval when the window changed, but, while the examples
// are backlogged, never sooner than schedule.solve_share allows
// (consumer.SolvePacer), and publishes snapshots as snapshotCadence says.
// Label requests are chosen and written here too (requests.go).
// Solves run here, beside the consumer, which keeps scoring with the model
// in force. A solve or a snapshot that fails is tried again at the next
// trigger: the loop logs and counts the failure, and returns nil when ctx
// ends.
func (s *Service) solveLoop(ctx context.Context, trigger <-chan struct{}, out outputs) error {
	snaps := out.snapshots
	tick := time.NewTicker(s.cfg.Schedule.SolveInterval)
	defer tick.Stop()
	cadence := newSnapshotCadence(s.cfg.Snapshot.EverySolves, s.cfg.Snapshot.Every, time.Now())
	pacer := consumer.SolvePacer{Share: s.cfg.Schedule.SolveShare}
	landed := s.pipe.Learner().LandedDue()
	lastSkip := "" // why the last solve was skipped, "" after one that ran
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-trigger:
		case <-landed:
		case <-tick.C:
		}
		window, _ := s.pipe.Learner().WindowSize()
		if !s.schedule.Pace(ctx, pacer.NotBefore(window)) || !s.schedule.AwaitLabels(ctx) {
			return nil
		}
		start := time.Now()
		// A solve that began after a drift reaction holds it.
		reacted := s.reacted.Swap(false)
		if rows, ok := s.solve(ctx, &lastSkip); ok {
			pacer.Done(time.Since(start), rows, time.Now())
			cadence.solved(shapeOf(s.pipe.Learner().InForce()), reacted)
		} else if reacted {
			s.reacted.Store(true)
		}
		if cadence.due(time.Now()) && s.publishSnapshot(ctx, snaps) == nil {
			cadence.published(shapeOf(s.pipe.Learner().InForce()), time.Now())
		}
		if s.requests() {
			s.publishRequests(ctx, out.records)
		}
	}
}

// snapshotCadence says when the solve loop publishes a snapshot: after
// the process's first solve (until a snapshot exists, scorers have no
// model at all and a restart has nothing to restore), then after
// everySolves solves or every, and after the first solve that follows a
// drift reaction or whose model is another than the last snapshot's
// (modelShape.another), which scorers should not wait for.
type snapshotCadence struct {
	everySolves int
	every       time.Duration
	solves      int       // since the last snapshot
	last        time.Time // of the last snapshot, or of the start
	first, soon bool
	shape       modelShape // of the last snapshot's model
}

// modelShape is what makes a model another to its scorers: the classes
// it can predict, the algorithm that solved it (auto's choice, which
// changes the model's accuracy more than a solve of the same algorithm)
// and the labels it learned from.
type modelShape struct {
	classes   []string
	algorithm train.Algorithm
	labeled   int
}

func shapeOf(s online.Solved) modelShape {
	return modelShape{classes: s.Model.Classes, algorithm: s.Algorithm, labeled: s.SolvedOn.Labeled}
}

// another reports whether a model of shape m is another than one of
// shape last: it predicts other classes, another algorithm solved it, or
// it learned from twice the labels or more. While the first labels come
// (and again after a drift reaction forgot some), each model learns from
// many more than the last snapshot's; once the window's labels are
// steady, they never double.
func (m modelShape) another(last modelShape) bool {
	return m.algorithm != last.algorithm || !slices.Equal(m.classes, last.classes) || m.labeled >= 2*max(last.labeled, 1)
}

func newSnapshotCadence(everySolves int, every time.Duration, now time.Time) *snapshotCadence {
	return &snapshotCadence{everySolves: everySolves, every: every, last: now, first: true}
}

// solved counts a solve whose model is of shape, and that followed a
// drift reaction when reacted.
func (c *snapshotCadence) solved(shape modelShape, reacted bool) {
	c.solves++
	c.soon = c.soon || reacted || shape.another(c.shape)
}

// due reports whether a snapshot is to be published now.
func (c *snapshotCadence) due(now time.Time) bool {
	return c.solves > 0 && (c.first || c.soon || c.solves >= c.everySolves || now.Sub(c.last) >= c.every)
}

// published records a snapshot of a model of shape published at now.
func (c *snapshotCadence) published(shape modelShape, now time.Time) {
	c.solves, c.last, c.first, c.soon, c.shape = 0, now, false, false, shape
}

// solve runs one re-solve and reports whether a new model is in force,
// and the rows of the window it solved. A skipped solve is counted each
// time but logged only when its reason differs from lastSkip's: behind a
// backlog a window without labels is tried at every trigger.
func (s *Service) solve(ctx context.Context, lastSkip *string) (rows int, ok bool) {
	rep, err := s.pipe.Solve(ctx)
	switch {
	case errors.Is(err, online.ErrUnchanged):
		return 0, false
	case pipeline.IsSkip(err):
		s.metrics.Solves.WithLabelValues("skipped").Inc()
		if reason := err.Error(); reason != *lastSkip {
			s.log.Info("solve skipped", "reason", reason)
			*lastSkip = reason
		}
		return 0, false
	case ctx.Err() != nil:
		return 0, false
	case errors.Is(err, online.ErrUnannounced):
		s.metrics.Solves.WithLabelValues("unannounced").Inc()
		s.log.Warn("model dropped: its version was not announced; the next trigger solves again", "model_version", rep.Version, "error", err)
		return 0, false
	case err != nil:
		s.metrics.Solves.WithLabelValues("error").Inc()
		s.log.Error("solve failed", "error", err)
		return 0, false
	}
	*lastSkip = ""
	st := s.pipe.Stats()
	s.metrics.Solves.WithLabelValues("ok").Inc()
	s.metrics.SolveTime.Observe(rep.Seconds)
	s.log.Info("solved", solvedAttrs(rep, time.Duration(s.lastAnnounce.Load()).Seconds(), st.SSLRecent.Accuracy())...)
	return rep.Window, true
}

// solvedAttrs returns the attributes of a solve's log line: what it ran
// and how long it took, the last model's announcement and the recent
// accuracy, and where they apply the labels' half-life, the neighbours'
// vote with the labeled edges that decide it, and auto's trial.
func solvedAttrs(rep online.SolveReport, announceSeconds, recentAccuracy float64) []any {
	attrs := []any{"algorithm", rep.Algorithm, "lambda", rep.Lambda, "model_version", rep.Version, "window", rep.Window, "labeled", rep.Labeled,
		"objective", rep.Objective, "newton_steps", rep.NewtonSteps, "cgls_iters", rep.CGLSIters,
		"seconds", rep.Seconds, "announce_seconds", announceSeconds, "recent_accuracy", recentAccuracy}
	if rep.LabelHalfLife > 0 {
		attrs = append(attrs, "label_half_life", rep.LabelHalfLife)
	}
	if rep.VoteWeight > 0 || rep.LabeledEdges > 0 { // docs/MATH.md, "The neighbours' vote"
		attrs = append(attrs, "vote_weight", rep.VoteWeight, "labeled_edges", rep.LabeledEdges, "agreeing_edges", rep.AgreeingEdges)
	}
	if rep.Trial != nil { // auto weighed candidates against its rule's choice (docs/MATH.md, "Choosing an algorithm")
		attrs = append(attrs, "trial", rep.Trial)
	}
	return attrs
}

// buildSnapshot returns the snapshot of the model in force and the stream
// position, or nil while there is no model.
func (s *Service) buildSnapshot() *snapshot.Snapshot {
	cur := s.pipe.Learner().InForce()
	m, on := cur.Model, cur.SolvedOn
	if !m.Ready() {
		return nil
	}
	kept := *m
	kept.Problems = make([]model.Solution, len(m.Problems))
	for k, p := range m.Problems {
		// The per-row warm state is rebuilt from the outputs on restore.
		kept.Problems[k] = model.Solution{W: p.W, Temperature: p.Temperature}
	}
	features, params, window := s.cfg.SnapshotSettings()
	stats := s.streamCounts()
	stats.WindowSize, stats.Labeled, stats.Objective = on.Window, on.Labeled, on.Objective
	snap := &snapshot.Snapshot{
		Name: s.cfg.Model.Name, Version: cur.Stamp.Version, Epoch: cur.Stamp.Epoch, CreatedAt: time.Now().UTC(),
		Features: features, Params: params, Window: window, Model: kept,
		Stats: stats, Progress: snapshotProgress(s.pipe.Progress()),
		ReviewThresholds: cur.Thresholds, ReviewTargetPrecision: cur.ThresholdsTarget,
	}
	for _, p := range s.pipe.Positions() {
		snap.Offsets = append(snap.Offsets, snapshot.Offset{Topic: p.Topic, Partition: p.Partition, WindowStart: p.Start, Next: p.Next})
	}
	return snap
}

// streamCounts returns the stream's counts up to now: this process's, on
// from those of the snapshot it restored. What a process that crashed
// read after its last snapshot is not counted (nor scored in the
// prequential accuracy): the restart reads it again into the window only.
func (s *Service) streamCounts() snapshot.Stats {
	st := s.pipe.Stats()
	out := snapshot.Stats{
		Examples: st.Examples, Labels: st.Labels, Predictions: st.Predictions, Solves: st.Solves,
		Accuracy: st.SSL.Accuracy(),
	}
	if b := s.countedBefore.Load(); b != nil {
		out.Examples += b.Examples
		out.Labels += b.Labels
		out.Predictions += b.Predictions
		out.Solves += b.Solves
	}
	return out
}

// publishSnapshot publishes the current snapshot to the topic and, when
// configured, to the file.
func (s *Service) publishSnapshot(ctx context.Context, w *publish.SnapshotWriter) error {
	if err := s.mayPublish(); err != nil {
		return err
	}
	snap := s.buildSnapshot()
	if snap == nil {
		return nil
	}
	data, err := snapshot.Encode(snap)
	if err != nil {
		return err
	}
	if err := w.Publish(ctx, snap.Name, snap.Stamp(), data); err != nil {
		if ctx.Err() == nil {
			s.log.Error("snapshot not published", "model_version", snap.Version, "error", err)
		}
		return err
	}
	s.publishHistory(ctx, snap, data)
	s.retryPin()
	if s.cfg.Snapshot.File != "" {
		if err := snapshot.WriteFile(s.cfg.Snapshot.File, snap); err != nil {
			s.log.Error("snapshot file not written", "error", err)
			return err
		}
	}
	s.snapshots.Add(1)
	s.metrics.Snapshots.Inc()
	s.metrics.ModelEpoch.Set(float64(snap.Epoch)) // a learner's model in force is the one it published
	s.log.Info("snapshot published", "model_version", snap.Version, "epoch", snap.Epoch, "bytes", len(data))
	return nil
}

// finalSnapshot publishes a last snapshot at shutdown, so that a restart
// resumes from where this run stopped.
func (s *Service) finalSnapshot(ctx context.Context, w *publish.SnapshotWriter) {
	if ctx.Err() != nil {
		return
	}
	if err := s.publishSnapshot(ctx, w); err != nil {
		s.log.Warn("final snapshot not published", "error", err)
	}
}

// logStopped logs the end of a run: the examples read and, when the
// learner stopped with examples still queued for its window, how many it
// dropped (a restart rebuilds them from the topics).
func (s *Service) logStopped() {
	args := []any{"examples", s.pipe.Stats().Examples}
	if d := s.pipe.Learner().Sampling().Dropped; d > 0 {
		args = append(args, "dropped_from_window_queue", d)
	}
	s.log.Info("stopped", args...)
}
