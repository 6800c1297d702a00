package service

import (
	"context"
	"errors"
	"fmt"

	"streamer/brokers"
	"streamer/lease"
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
	var announced uint64
	if err := s.retry(ctx, "read the versions topic", func() (err error) { announced, err = s.reserveVersions(ctx); return err }); err != nil {
		return nil
	}
	// The generation orders the terms of one group; a snapshot topic
	// that outlived its group (a group deleted, a new cluster) may hold
	// later epochs, which a new term must still pass, and so may the
	// versions topic (a term that announced versions and died before its
	// first snapshot).
	epoch := max(term.Generation(), s.roles.newestEpoch.Load()+1, announced+1)
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

// consumeLeading is the input of a learner that holds term: it
// announces its epoch, then reads every partition of the examples and
// labels topics into the pipeline, until the run ends or the lease is
// lost, which ends the run with an error wrapping errLeaseLost.
func (s *Service) consumeLeading(term *lease.Term) input {
	return func(rt *runtime, _ context.Context, out outputs, trigger chan<- struct{}) {
		rt.GoBackground("lease", func(ctx context.Context) error {
			select {
			case <-term.Lost():
				return fmt.Errorf("%w: %w", errLeaseLost, term.Err())
			case <-ctx.Done():
				return nil
			}
		})
		if s.restampRestored(rt.ctx, s.roles.epoch.Load()) {
			if err := s.publishSnapshot(rt.ctx, out.snapshots); err != nil && rt.ctx.Err() == nil {
				s.log.Warn("restored model not published under the new epoch", "error", err)
			}
		}
		s.consumer.Assigned(rt.ctx, out.records, trigger, s.learnerStart, func(partitions int) {
			close(s.started)
			s.log.Info("learning", "partitions", partitions, "epoch", s.roles.epoch.Load())
		})
	}
}

// learnerStart is where a learner reads a partition from: the snapshot's
// next offset (not before the oldest the brokers keep), or where
// kafka.start says.
func (s *Service) learnerStart(topic string, partition int, r brokers.OffsetRange) int64 {
	if next, ok := s.roles.resume[partitionKey{topic, partition}]; ok {
		return max(next, r.First)
	}
	if s.cfg.Kafka.Start == "latest" {
		return r.End
	}
	return r.First
}
