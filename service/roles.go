package service

import (
	"errors"
	"sync"
	"sync/atomic"

	"streamer/config"
	"streamer/ingest"
	"streamer/lease"
	"streamer/pipeline"
	"streamer/snapshot"
)

// roles is the state of the scorer and learner roles; it is idle in role
// all.
type roles struct {
	// waiting says why a scorer or learner is not ready yet ("" when it
	// is): /readyz answers it with a 503.
	waiting atomic.Value

	mu       sync.Mutex
	inForce  snapshot.Stamp // of the model in force, for a scorer
	lastRead snapshot.Stamp // of the last snapshot a scorer's follower read

	// followedTo is the offset of the snapshot topic up to which a
	// scorer's follower has read and offered every snapshot.
	followedTo atomic.Int64
	// partitions are the input partitions a scorer has read from in the
	// reader's current group generation; only the consumer goroutine uses
	// it.
	partitions map[int]bool

	// epoch stamps a learner's snapshots; newestEpoch is the highest epoch
	// its restore saw on the snapshot topic.
	epoch       atomic.Uint64
	newestEpoch atomic.Uint64
	// term is the lease a learner holds; nil in the other roles.
	term *lease.Term
	// resume is where a learner reads each partition from, after its
	// restore: the snapshot's next offsets.
	resume map[partitionKey]int64
	// seeded says that a learner's model in force is model.seed_file's,
	// put in force at restore and not announced yet.
	seeded bool
}

// setWaiting sets the reason the role is not ready; "" when it is.
func (s *Service) setWaiting(reason string) { s.roles.waiting.Store(reason) }

func (s *Service) waitingReason() string {
	r, _ := s.roles.waiting.Load().(string)
	return r
}

// groupTopics are the topics the process reads in kafka.group: a scorer
// reads only the examples.
func (s *Service) groupTopics() []string {
	t := s.cfg.Kafka.Topics
	if s.cfg.Role == config.RoleScorer {
		return []string{t.Examples}
	}
	return []string{t.Examples, t.Labels}
}

// partitionKey names one input partition.
type partitionKey struct {
	topic     string
	partition int
}

// learns reports whether the process keeps a window and solves.
func (s *Service) learns() bool { return s.cfg.Role != config.RoleScorer }

// scoreExample is a scorer's prediction of a consumed example: it scores
// with the model in force and learns nothing (the other roles also put
// the example in the window).
func (s *Service) scoreExample(ex ingest.Example, src pipeline.Source) (pipeline.Prediction, error) {
	if !s.roles.partitions[src.Partition] {
		s.catchUpOnAssignment(src.Partition)
	}
	preds, err := s.pipe.Score([]ingest.Example{ex}, src)
	if err != nil {
		return pipeline.Prediction{}, err
	}
	return preds[0], nil
}

// errNotHolder refuses a learner's snapshot while its lease is not held.
var errNotHolder = errors.New("the lease is not held now (the group rebalances, or it was lost)")

// mayPublish reports whether a snapshot may be published now: always in
// role all; for a learner, only while a generation that grants it the
// lease runs.
func (s *Service) mayPublish() error {
	if s.cfg.Role != config.RoleLearner {
		return nil
	}
	if t := s.roles.term; t == nil || !t.Held() {
		return errNotHolder
	}
	return nil
}
