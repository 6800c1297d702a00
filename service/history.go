package service

import (
	"context"

	"streamer/brokers"
	"streamer/publish"
	"streamer/snapshot"
)

// historyTopic returns the history topic as the service creates it, and
// false when snapshot.history_topic is empty.
func (s *Service) historyTopic() (brokers.Topic, bool) {
	name := s.cfg.Snapshot.HistoryTopic
	return brokers.Topic{Name: name, Partitions: 1, Retention: s.cfg.Snapshot.HistoryRetention}, name != ""
}

// newHistoryWriter returns the writer of the history topic, or nil when
// there is none.
func (s *Service) newHistoryWriter() *publish.SnapshotWriter {
	t, ok := s.historyTopic()
	if !ok {
		return nil
	}
	return publish.NewSnapshotWriter(s.conn, t.Name, s.writerConfig())
}

// publishHistory writes a snapshot just published to the history topic, in
// the same chunks. A snapshot missing from the history costs only a
// version to roll back to: it is logged, not retried.
func (s *Service) publishHistory(ctx context.Context, snap *snapshot.Snapshot, data []byte) {
	if s.history == nil {
		return
	}
	if err := s.history.Publish(ctx, snap.Name, snap.Stamp(), data); err != nil && ctx.Err() == nil {
		s.log.Error("snapshot not kept in the history", "topic", s.cfg.Snapshot.HistoryTopic, "model_version", snap.Version, "error", err)
	}
}
