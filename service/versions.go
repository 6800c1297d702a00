package service

import (
	"context"
	"fmt"
	"time"

	"streamer/brokers"
	"streamer/online"
	"streamer/online/model"
	"streamer/snapshot"
)

// Every model version is announced on the versions topic
// (kafka.topics.versions) before it scores anything: its stamp, when and
// on what window it was solved, without its weights
// (snapshot.Announcement). Most versions never reach a snapshot: a
// restart that numbered its solves on from its snapshot's version would
// give the numbers of the versions solved after that snapshot, which may
// have stamped predictions, to new models. A restart numbers after the
// highest version announced, and `streamer model list` finds every
// version that stamped a prediction.
//
// A model whose announcement cannot be written (the brokers are away, a
// learner lost its lease) is dropped: the model in force goes on scoring,
// its version is never used again (the record may have been written, its
// acknowledgement lost), and the next trigger solves again under a new
// version. While the brokers are away no prediction can be published
// either, so only the solves are lost; waiting instead would hold the
// solver, and a shutdown, for as long as the outage.

// versionsTopic returns the versions topic as the service creates it.
func (s *Service) versionsTopic() brokers.Topic {
	return brokers.Topic{Name: s.cfg.Kafka.Topics.Versions, Partitions: 1}
}

// announceTimeout bounds the writing of one announcement.
const announceTimeout = 10 * time.Second

// reserveVersions reads the highest version announced of the model and
// keeps the learner's solves beyond it; it returns the highest epoch
// announced, which a learner's new term must pass.
func (s *Service) reserveVersions(ctx context.Context) (epoch uint64, err error) {
	epoch, version, found, err := s.conn.NewestAnnounced(ctx, s.cfg.Kafka.Topics.Versions, s.cfg.Model.Name)
	if err != nil {
		return 0, err
	}
	if found {
		s.pipe.Learner().ReserveVersions(version)
		s.log.Info("model versions reserved", "topic", s.cfg.Kafka.Topics.Versions, "model_version", version, "epoch", epoch)
	}
	return epoch, nil
}

// announceSolved is the learner's Announcer: it announces a model a
// solve made.
func (s *Service) announceSolved(ctx context.Context, a online.Announcement) error {
	return s.announce(ctx, snapshot.Announcement{
		Epoch: a.Stamp.Epoch, Version: a.Stamp.Version, Algorithm: a.Algorithm,
		Window: a.SolvedOn.Window, Labeled: a.SolvedOn.Labeled, Objective: a.SolvedOn.Objective,
		Origin: snapshot.OriginSolve,
	})
}

// announceRestamped announces a model put in force under a stamp other
// than its snapshot's (snapshot.OriginRestore, snapshot.OriginSeed).
func (s *Service) announceRestamped(ctx context.Context, origin string, st model.Stamp, from model.Stamp, on model.SolvedOn, algorithm string) error {
	return s.announce(ctx, snapshot.Announcement{
		Epoch: st.Epoch, Version: st.Version, Algorithm: algorithm,
		Window: on.Window, Labeled: on.Labeled, Objective: on.Objective,
		Origin: origin, From: &from,
	})
}

// announce writes a, of this model, now, unless this process may not
// publish (a learner without the lease).
func (s *Service) announce(ctx context.Context, a snapshot.Announcement) error {
	if err := s.mayPublish(); err != nil {
		return err
	}
	a.Name, a.CreatedAt = s.cfg.Model.Name, time.Now().UTC()
	bounded, cancel := context.WithTimeout(ctx, announceTimeout)
	defer cancel()
	start := time.Now()
	err := s.versions.Announce(bounded, a)
	took := time.Since(start)
	if err != nil {
		return fmt.Errorf("versions topic %s: %w", s.cfg.Kafka.Topics.Versions, s.conn.Explain(ctx, err))
	}
	s.metrics.AnnounceTime.Observe(took.Seconds())
	s.lastAnnounce.Store(int64(took))
	return nil
}

// seedVersion is the version the seed model (model.seed_file) scores
// under: its own, unless another model of this name was announced under it
// or later, then the one after the highest announced.
func (s *Service) seedVersion(own uint64) uint64 {
	if reserved := s.pipe.Learner().Reserved(); own <= reserved {
		return reserved + 1
	}
	return own
}

// restampSeed stamps the seed model of role all with its version
// (seedVersion) and announces it, before it is put in force.
func (s *Service) restampSeed(ctx context.Context, seed *snapshot.Snapshot) error {
	st := model.Stamp{Version: s.seedVersion(seed.Version)}
	if err := s.announceRestamped(ctx, snapshot.OriginSeed, st, seed.Stamp(), seed.SolvedOn(), seed.Params.Algorithm); err != nil {
		return err
	}
	seed.Epoch, seed.Version = st.Epoch, st.Version
	return nil
}

// restampRestored puts the restored model (or the seed model) in force
// under the learner's new epoch, announced first, so that its snapshot
// announces the term to the scorers; false when there is no model or it
// could not be announced.
func (s *Service) restampRestored(ctx context.Context, epoch uint64) bool {
	learner := s.pipe.Learner()
	cur := learner.InForce()
	if !cur.Model.Ready() || cur.Stamp.Epoch == epoch {
		return cur.Model.Ready()
	}
	origin, st := snapshot.OriginRestore, model.Stamp{Epoch: epoch, Version: cur.Stamp.Version}
	if s.roles.seeded {
		origin, st.Version = snapshot.OriginSeed, s.seedVersion(cur.Stamp.Version)
	}
	if err := s.announceRestamped(ctx, origin, st, cur.Stamp, cur.SolvedOn, s.cfg.Solver.Algorithm); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("restored model not announced under the new epoch", "model_version", st.Version, "epoch", epoch, "error", err)
		}
		return false
	}
	cur.Stamp = st
	learner.SetModel(cur)
	s.roles.seeded = false
	return true
}
