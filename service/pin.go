package service

import (
	"context"
	"fmt"
	"sync/atomic"

	"streamer/control"
	"streamer/online"
	"streamer/pipeline"
	"streamer/snapshot"
)

// pinning is what the service knows of its model's pin order
// (`streamer model pin`): the follower of the control topic, and why the
// pinned version is not in force when it could not be loaded.
type pinning struct {
	follower *control.Follower
	missing  atomic.Value  // string; "" when the order is obeyed
	retry    chan struct{} // a snapshot was published: a missing version may be there now
}

// catchUpPins reads the control topic to its end and obeys the model's
// last order, before anything is scored.
func (s *Service) catchUpPins(ctx context.Context) error {
	if s.pin.follower == nil {
		s.pin.follower = control.NewFollower(s.conn, s.cfg.Kafka.Topics.Control, s.cfg.Model.Name, s.log)
		s.pin.retry = make(chan struct{}, 1)
	}
	if err := s.pin.follower.CatchUp(ctx); err != nil {
		return err
	}
	s.applyPin(ctx)
	return nil
}

// followPins follows the control topic and obeys each new order, in
// background members of rt; a pinned version that could not be loaded is
// tried again after each snapshot published.
func (s *Service) followPins(rt *runtime) {
	rt.GoBackground("control topic follower", func(ctx context.Context) error {
		return s.pin.follower.Follow(ctx, s.cfg.Kafka.RetryBackoff)
	})
	rt.GoBackground("pin orders", s.obeyPins)
}

// obeyPins obeys each new order of the control topic until ctx ends.
func (s *Service) obeyPins(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.pin.follower.Changed():
		case <-s.pin.retry:
		}
		s.applyPin(ctx)
	}
}

// retryPin asks obeyPins to load a pinned version it could not find.
func (s *Service) retryPin() {
	if s.pin.retry == nil || s.pinMissing() == "" {
		return
	}
	select {
	case s.pin.retry <- struct{}{}:
	default:
	}
}

func (s *Service) pinMissing() string {
	m, _ := s.pin.missing.Load().(string)
	return m
}

// applyPin puts the order in force: pinned, the snapshot ordered scores
// (it is loaded from the history topic or the snapshot topic unless it is
// the newest model: a rollback), while the learner goes on solving and
// publishing; unpinned, the newest model scores.
func (s *Service) applyPin(ctx context.Context) {
	sel, pinned := s.pin.follower.Current()
	learner := s.pipe.Learner()
	newest := learner.InForce().Stamp.Version
	if !pinned {
		s.pin.missing.Store("")
		if _, was := learner.Pinned(); was {
			learner.Unpin()
			s.log.Info("model unpinned; the newest model scores", "model_version", newest)
		}
		return
	}
	if st, ok := learner.Pinned(); ok && sel.Matches(st) {
		return
	}
	m, err := s.pinnedModel(ctx, sel)
	if err != nil {
		if ctx.Err() == nil {
			s.pin.missing.Store(fmt.Sprintf("model pinned to %v, which is not in force: %v", sel, err))
			s.log.Error("pinned model not loaded", "model_version", sel.Version, "epoch", sel.Epoch, "any_epoch", sel.AnyEpoch, "error", err)
		}
		return
	}
	learner.Pin(m)
	s.pin.missing.Store("")
	s.log.Info("model pinned", "model_version", m.Stamp.Version, "epoch", m.Stamp.Epoch, "newest_version", newest)
}

// pinnedModel returns the model sel names, with its stamp and review
// thresholds: the newest model when it is that one, else the snapshot from
// the history topic, or from the snapshot topic.
func (s *Service) pinnedModel(ctx context.Context, sel snapshot.Selector) (online.Solved, error) {
	if cur := s.pipe.Learner().InForce(); sel.Matches(cur.Stamp) && cur.Model.Ready() {
		return online.Solved{Model: cur.Model, Stamp: cur.Stamp, Thresholds: cur.Thresholds, ThresholdsTarget: cur.ThresholdsTarget}, nil
	}
	data, err := s.conn.FindSnapshotVersion(ctx, s.cfg.Model.Name, sel, s.cfg.Snapshot.HistoryTopic, s.cfg.Kafka.Topics.Snapshots)
	if err != nil {
		return online.Solved{}, err
	}
	snap, err := snapshot.Decode(data)
	if err != nil {
		return online.Solved{}, fmt.Errorf("snapshot of %v: %w", sel, err)
	}
	if !sel.Matches(snap.Stamp()) {
		return online.Solved{}, fmt.Errorf("snapshot of %v holds %v", sel, snap.Stamp())
	}
	if err := s.compatible(snap); err != nil {
		return online.Solved{}, fmt.Errorf("snapshot of %v: %w", sel, err)
	}
	return pipeline.Restored(snap), nil
}

// pinStatus says, for /readyz, which model scores when the model is
// pinned; "" when it is not.
func (s *Service) pinStatus() string {
	if missing := s.pinMissing(); missing != "" {
		st := s.pipe.Learner().Scoring().Stamp
		return fmt.Sprintf("%s; version %d of epoch %d scores", missing, st.Version, st.Epoch)
	}
	if st, ok := s.pipe.Learner().Pinned(); ok {
		newest := s.pipe.Learner().InForce().Stamp.Version
		return fmt.Sprintf("model pinned to version %d of epoch %d (newest learned: %d)", st.Version, st.Epoch, newest)
	}
	return ""
}
