package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/lease"
	"streamer/pipeline"
)

// runLearner runs the learner role: it waits as a standby until it holds
// the lease, restores the newest snapshot, announces its epoch by
// publishing the restored model under it, then learns from every
// partition until the run ends (it publishes a last snapshot and hands
// the lease on) or it loses the lease (it stops at once, publishes nothing
// more and Run returns an error wrapping errLeaseLost: the process exits,
// and whoever restarts it makes it a standby again).
func (s *Service) runLearner(rt *runtime) error {
	ctx := rt.ctx
	s.setWaiting("learner: standby, waiting for the lease")
	if err := s.createTopics(ctx); err != nil {
		return startFailure(ctx, err)
	}
	s.log.Info("learner standby: waiting for the lease", "topic", s.cfg.Kafka.Topics.Lease, "group", s.leaseGroup())
	term, err := lease.Campaign(ctx, s.leaseConfig())
	if err != nil {
		return startFailure(ctx, fmt.Errorf("lease: %w", err))
	}
	s.roles.term = term
	defer s.closeTerm(term)
	s.metrics.LeaseHeld.Set(1)
	s.setWaiting("learner: restoring the newest snapshot")
	if s.cfg.Snapshot.Restore {
		if err := s.retry(ctx, "restore", func() error { return s.restore(ctx) }); err != nil {
			return startFailure(ctx, err)
		}
	}
	if err := s.retry(ctx, "read the control topic", func() error { return s.catchUpPins(ctx) }); err != nil {
		return nil // only ctx ends a retry
	}
	// The generation orders the terms of one group; a snapshot topic
	// that outlived its group (a group deleted, a new cluster) may hold
	// later epochs, which a new term must still pass.
	epoch := max(term.Generation(), s.roles.newestEpoch.Load()+1)
	s.roles.epoch.Store(epoch)
	s.pipe.Learner().SetEpoch(epoch)
	s.log.Info("learner leading", "epoch", epoch, "generation", term.Generation())
	s.setWaiting("")
	return s.stream(rt, s.consumeLeading(term))
}

func (s *Service) leaseGroup() string { return s.cfg.Kafka.Group + "-lease" }

func (s *Service) leaseConfig() lease.Config {
	return lease.Config{
		Brokers: s.conn.Addrs, Dialer: s.conn.Dialer, Group: s.leaseGroup(), Topic: s.cfg.Kafka.Topics.Lease,
		SessionTimeout: s.cfg.Kafka.SessionTimeout, RebalanceTimeout: s.cfg.Kafka.RebalanceTimeout,
		HeartbeatInterval: s.cfg.Kafka.SessionTimeout / 4, JoinBackoff: s.cfg.Kafka.RetryBackoff, Log: s.log,
	}
}

// closeTerm leaves the lease group, so that a standby takes over without
// waiting for a session timeout.
func (s *Service) closeTerm(term *lease.Term) {
	if err := brokers.CloseWithin(term, s.cfg.Kafka.CloseTimeout); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Warn("leave the lease group", "error", err)
	}
	s.metrics.LeaseHeld.Set(0)
}

// consumeLeading is the consumer of a learner that holds term: it
// announces its epoch, then reads every partition of the examples and
// labels topics into the pipeline, until the run ends or the lease is
// lost, which ends the run with an error wrapping errLeaseLost.
func (s *Service) consumeLeading(term *lease.Term) consumer {
	return func(rt *runtime, _ context.Context, out outputs, trigger chan<- struct{}) {
		rt.GoBackground("lease", func(ctx context.Context) error {
			select {
			case <-term.Lost():
				return fmt.Errorf("%w: %w", errLeaseLost, term.Err())
			case <-ctx.Done():
				return nil
			}
		})
		if err := s.publishSnapshot(rt.ctx, out.snapshots); err != nil && rt.ctx.Err() == nil {
			s.log.Warn("restored model not announced under the new epoch", "error", err)
		}
		s.readPartitions(rt.ctx, out.records, trigger)
	}
}

// readPartitions reads every partition of the examples and labels topics
// by direct assignment, from where the snapshot left each one, and hands
// the records to the pipeline in order per partition, until ctx ends. It
// looks for new partitions (a topic created, partitions added) every
// partitionWatchInterval.
func (s *Service) readPartitions(ctx context.Context, writer *kafka.Writer, trigger chan<- struct{}) {
	records := make(chan kafka.Message, 256)
	fetchCtx, stopFetching := context.WithCancel(ctx)
	readers := map[partitionKey]*kafka.Reader{}
	var wg sync.WaitGroup
	defer func() {
		stopFetching()
		wg.Wait()
		for _, r := range readers {
			s.closeAll(r)
		}
	}()
	open := func() {
		for _, r := range s.openNewPartitions(ctx, readers) {
			wg.Go(func() { s.fetchInto(fetchCtx, r, records) })
		}
	}
	open()
	s.assigned.Store(true)
	close(s.started)
	s.log.Info("learning", "partitions", len(readers), "epoch", s.roles.epoch.Load())
	watch := time.NewTicker(partitionWatchInterval)
	defer watch.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-watch.C:
			open()
		case m := <-records:
			s.learnRecord(ctx, m, writer)
			if s.pipe.Due() {
				select {
				case trigger <- struct{}{}:
				default:
				}
			}
		}
	}
}

// partitionWatchInterval is how often a learner looks for input
// partitions it does not read yet.
const partitionWatchInterval = 2 * time.Second

// openNewPartitions opens a reader of each input partition that readers
// lacks, adds it there and returns the new ones. A reader starts at the
// snapshot's next offset, or at kafka.start for a partition the snapshot
// does not name. A topic that does not exist yet has no partitions.
func (s *Service) openNewPartitions(ctx context.Context, readers map[partitionKey]*kafka.Reader) []*kafka.Reader {
	var out []*kafka.Reader
	for _, topic := range []string{s.cfg.Kafka.Topics.Examples, s.cfg.Kafka.Topics.Labels} {
		parts, err := s.conn.Partitions(ctx, topic)
		if errors.Is(err, brokers.ErrUnknownTopic) || ctx.Err() != nil {
			continue
		}
		var ranges map[int]brokers.OffsetRange
		if err == nil {
			ranges, err = s.conn.Offsets(ctx, topic, parts)
		}
		if err != nil {
			s.metrics.Retries.WithLabelValues("partitions").Inc()
			s.log.Warn("input partitions not listed; trying again", "topic", topic, "error", s.conn.Explain(ctx, err))
			continue
		}
		for _, p := range parts {
			key := partitionKey{topic, p}
			if readers[key] != nil {
				continue
			}
			start := s.learnerStart(key, ranges[p])
			r, err := s.partitionReader(key, start)
			if err != nil {
				s.log.Warn("input partition not opened; trying again", "topic", topic, "partition", p, "error", err)
				continue
			}
			s.unread.expect(key, start, ranges[p].End)
			readers[key] = r
			out = append(out, r)
		}
	}
	return out
}

// learnerStart is where a learner reads a partition from: the snapshot's
// next offset (not before the oldest the brokers keep), or where
// kafka.start says.
func (s *Service) learnerStart(key partitionKey, r brokers.OffsetRange) int64 {
	if next, ok := s.roles.resume[key]; ok {
		return max(next, r.First)
	}
	if s.cfg.Kafka.Start == "latest" {
		return r.End
	}
	return r.First
}

// partitionReader returns a reader of one partition at offset start.
func (s *Service) partitionReader(key partitionKey, start int64) (*kafka.Reader, error) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: s.conn.Addrs, Dialer: s.conn.Dialer, Topic: key.topic, Partition: key.partition,
		MinBytes: 1, MaxBytes: max(2*s.cfg.Limits.MaxMessageBytes, 1<<20), MaxWait: brokers.FetchMaxWait,
		QueueCapacity: 100, ReadBackoffMin: 50 * time.Millisecond, ReadBackoffMax: 2 * time.Second,
		ErrorLogger: s.readerErrorLogger(),
	})
	if err := r.SetOffset(start); err != nil {
		r.Close()
		return nil, fmt.Errorf("%v at %d: %w", key, start, err)
	}
	return r, nil
}

// fetchInto sends the records of one partition reader to out until ctx
// ends.
func (s *Service) fetchInto(ctx context.Context, r *kafka.Reader, out chan<- kafka.Message) {
	for {
		m, err := r.FetchMessage(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.metrics.Retries.WithLabelValues("fetch").Inc()
			s.log.Warn("fetch failed; retrying", "topic", r.Config().Topic, "partition", r.Config().Partition, "error", err)
			sleep(ctx, s.cfg.Kafka.RetryBackoff)
			continue
		}
		select {
		case out <- m:
		case <-ctx.Done():
			return
		}
	}
}

// learnRecord runs one record through the pipeline. Its prediction is
// scored prequentially and not published (the scorers publish theirs);
// bad examples are the scorers' dead letters, bad labels the learner's,
// which alone reads the labels.
func (s *Service) learnRecord(ctx context.Context, m kafka.Message, writer *kafka.Writer) {
	s.metrics.Consumed.WithLabelValues(m.Topic).Inc()
	s.unread.read(&m)
	src := pipeline.Source{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset}
	t := s.cfg.Kafka.Topics
	if m.Topic == t.Examples {
		ex, err := s.pipe.DecodeExample(m.Value, m.Time)
		if err == nil {
			_, err = s.pipe.Example(ex, src)
		}
		if err != nil {
			s.pipe.ExampleRefused(src)
			s.log.Debug("example not learned", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset, "error", err)
		}
		return
	}
	l, err := s.pipe.DecodeLabel(m.Value)
	if err == nil {
		s.pipe.Label(l, src)
		return
	}
	s.pipe.LabelRefused(src)
	var b batch
	s.deadLetter(&b, t.LabelsDLQ, "labels", &m, err)
	if err := s.retry(ctx, "write", func() error { return writer.WriteMessages(ctx, b.out...) }); err != nil && ctx.Err() == nil {
		s.log.Error("dead letter not written", "error", err)
	}
}
