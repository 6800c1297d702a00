package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/pipeline"
	"streamer/service/consumer"
	"streamer/snapshot"
)

// runScorer runs the scorer role: it reads the snapshot topic to its end
// and waits for a model before it joins kafka.group on the examples topic,
// then scores as role all does, while it keeps following the snapshot
// topic, outside any group, and puts every newer model in force.
func (s *Service) runScorer(rt *runtime) error {
	ctx := rt.ctx
	s.setWaiting("scorer: reading the snapshot topic")
	if err := s.createTopics(ctx); err != nil {
		return startFailure(ctx, err)
	}
	if err := s.registerPredictionSchema(ctx); err != nil {
		return startFailure(ctx, err)
	}
	caughtUp := make(chan struct{})
	rt.GoBackground("snapshot follower", func(ctx context.Context) error { s.followSnapshots(ctx, caughtUp); return nil })
	if err := s.retry(ctx, "read the control topic", func() error { return s.catchUpPins(ctx) }); err != nil {
		return nil // only ctx ends a retry
	}
	if !s.awaitModel(ctx, caughtUp) {
		return nil
	}
	s.setWaiting("")
	return s.stream(rt, s.consumeGroup)
}

// awaitModel waits until the follower has read the snapshot topic to the
// end it had at start and a model is in force; false when ctx ended first.
func (s *Service) awaitModel(ctx context.Context, caughtUp <-chan struct{}) bool {
	select {
	case <-caughtUp:
	case <-ctx.Done():
		return false
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.pipe.Learner().Scoring().Model.Ready() {
			return true
		}
		s.setWaiting("scorer: no snapshot of model " + s.cfg.Model.Name + " on the snapshot topic yet")
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// followSnapshots reads the snapshot topic from its start until ctx ends,
// with a partition reader of its own (no group), and offers every
// complete snapshot of the model to offerSnapshot. caughtUp is closed once
// it has read up to the end the topic had when it started.
func (s *Service) followSnapshots(ctx context.Context, caughtUp chan<- struct{}) {
	topic := s.cfg.Kafka.Topics.Snapshots
	var first, end int64
	err := s.retry(ctx, "snapshot topic end", func() error {
		r, err := s.conn.Offsets(ctx, topic, []int{0})
		first, end = r[0].First, r[0].End
		return err
	})
	if err != nil {
		return
	}
	s.roles.followedTo.Store(first)
	var once sync.Once
	done := func() { once.Do(func() { close(caughtUp) }) }
	defer done()
	if end <= first {
		done()
	}
	r := s.snapshotReader(topic)
	defer s.closeAll(r)
	asm := snapshot.NewAssembler()
	asm.OnComplete = func(name string, c snapshot.Complete) {
		if name == s.cfg.Model.Name {
			s.offerSnapshot(c)
		}
	}
	for {
		m, err := r.FetchMessage(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.log.Warn("snapshot topic read failed; retrying", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(s.cfg.Kafka.RetryBackoff):
			}
			continue
		}
		if err := asm.Add(snapshotRecord(m)); err != nil {
			s.log.Warn("snapshot record skipped", "offset", m.Offset, "error", err)
		}
		s.roles.followedTo.Store(m.Offset + 1)
		if m.Offset+1 >= end {
			done()
		}
	}
}

// catchUpOnAssignment waits, before the first record a scorer reads from
// an input partition in a group generation, until its follower has read
// the snapshot topic up to the end it has now: the partition may come from
// a scorer that was ahead, and its predictions' model_version must not go
// back. It waits at most kafka.session_timeout, then scores with what it
// has. A partition that moved away and comes back waits again: the
// consumer forgets the partitions it read at every new generation
// (newGeneration).
func (s *Service) catchUpOnAssignment(partition int) {
	if s.roles.partitions == nil {
		s.roles.partitions = map[int]bool{}
	}
	s.roles.partitions[partition] = true
	s.metrics.CatchUps.Inc()
	s.awaitSnapshots(partition)
}

// newGeneration is called by the consumer goroutine before the first
// record of a new group generation: every partition then counts as new.
func (s *Service) newGeneration() {
	clear(s.roles.partitions)
}

// awaitSnapshots waits, at most kafka.session_timeout, until the follower
// has read the snapshot topic up to its end now.
func (s *Service) awaitSnapshots(partition int) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Kafka.SessionTimeout)
	defer cancel()
	ranges, err := s.conn.Offsets(ctx, s.cfg.Kafka.Topics.Snapshots, []int{0})
	if err != nil {
		s.log.Warn("snapshot topic end not read; scoring without catching up", "partition", partition, "error", err)
		return
	}
	end := ranges[0].End
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for s.roles.followedTo.Load() < end {
		select {
		case <-ctx.Done():
			s.log.Warn("snapshot topic not caught up; scoring with the model in force", "partition", partition,
				"followed_to", s.roles.followedTo.Load(), "end", end)
			return
		case <-tick.C:
		}
	}
}

// snapshotReader reads partition 0 of the snapshot topic from its start.
func (s *Service) snapshotReader(topic string) *kafka.Reader {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: s.conn.Addrs, Dialer: s.conn.Dialer, Topic: topic, Partition: 0,
		MinBytes: 1, MaxBytes: max(2*s.cfg.Kafka.MaxMessageBytes, 1<<20), MaxWait: brokers.FetchMaxWait,
		ReadBackoffMin: 50 * time.Millisecond, ReadBackoffMax: time.Second,
		ErrorLogger: consumer.ReaderErrorLogger(s.log),
	})
	r.SetOffset(kafka.FirstOffset) //nolint:errcheck // a new reader without a group accepts any offset
	return r
}

func snapshotRecord(m kafka.Message) snapshot.Record {
	rec := snapshot.Record{Key: string(m.Key), Value: m.Value, Headers: map[string]string{}}
	for _, h := range m.Headers {
		rec.Headers[h.Key] = string(h.Value)
	}
	return rec
}

// offerSnapshot puts c in force when it is strictly newer than the model
// in force (snapshot.Stamp.Newer) and fits the configuration. The swap is
// atomic for the consumer and /v1/predict: a batch is scored by one model
// or the other. A pin order (pin.go) still decides which model scores:
// the newest, or the pinned version while it lasts.
func (s *Service) offerSnapshot(c snapshot.Complete) {
	s.roles.mu.Lock()
	defer s.roles.mu.Unlock()
	st, was := c.Stamp(), s.roles.inForce
	s.roles.lastRead = st
	if !st.Newer(was) {
		s.metrics.SnapshotsIgnored.Inc()
		s.log.Info("snapshot ignored: not newer than the model in force", "epoch", st.Epoch, "model_version", st.Version,
			"in_force_epoch", was.Epoch, "in_force_version", was.Version)
		return
	}
	snap, err := snapshot.Decode(c.Data)
	if err == nil {
		err = s.compatible(snap)
	}
	if err != nil {
		s.log.Error("snapshot refused", "epoch", st.Epoch, "model_version", st.Version, "error", err)
		return
	}
	restored := pipeline.Restored(snap)
	restored.Stamp = st
	s.pipe.SetModel(restored)
	s.roles.inForce = st
	s.restored.Store(snap.Version)
	s.metrics.ModelEpoch.Set(float64(st.Epoch))
	s.log.Info("snapshot put in force", "epoch", st.Epoch, "model_version", st.Version, "created", snap.CreatedAt)
}

// errLeaseLost ends a learner that lost its lease.
var errLeaseLost = errors.New("learner stepped down")
