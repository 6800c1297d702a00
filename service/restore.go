package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/config"
	"streamer/pipeline"
	"streamer/snapshot"
)

// restore loads the newest snapshot (the file when configured and present,
// else the topic, else the seed model), puts its model in force and
// rebuilds the window by reading the examples and labels topics again from
// the snapshot's window start up to the group's committed offsets, without
// publishing anything.
// Without a snapshot it rebuilds the last window.max_examples examples
// before the committed offsets, when there are any. A learner making
// label requests then reads back those made since the window's oldest
// example (recallRequests).
//
// The seed model scores under a version after those announced
// (seedVersion): in role all it is announced here, a learner announces it
// under its new epoch once it leads.
func (s *Service) restore(ctx context.Context) error {
	snap, seeded, err := s.loadSnapshot(ctx)
	if err != nil {
		return err
	}
	if snap != nil {
		if err := s.compatible(snap); err != nil {
			s.log.Error("snapshot refused; starting without it", "model_version", snap.Version, "error", err)
			snap = nil
		} else {
			if seeded && s.cfg.Role == config.RoleAll {
				if err := s.restampSeed(ctx, snap); err != nil {
					return err
				}
			}
			s.roles.seeded = seeded && s.cfg.Role == config.RoleLearner
			s.pipe.SetModel(pipeline.Restored(snap))
			s.restored.Store(snap.Version)
			s.countedBefore.Store(&snap.Stats)
			s.log.Info("restored snapshot", "model_version", snap.Version, "epoch", snap.Epoch, "created", snap.CreatedAt)
		}
	}
	t := s.cfg.Kafka.Topics
	sameWindow := true
	var reads []brokers.Range
	// Examples before labels at equal times, as package replay reads them.
	for rank, topic := range []string{t.Examples, t.Labels} {
		rs, same, err := s.rebuildRanges(ctx, topic, rank, snap)
		if err != nil {
			return err
		}
		reads = append(reads, rs...)
		sameWindow = sameWindow && same
	}
	oldest, err := s.rebuildWindow(ctx, reads)
	if err != nil {
		return err
	}
	if s.requests() && !oldest.IsZero() {
		if err := s.recallRequests(ctx, oldest); err != nil {
			return err
		}
	}
	if snap != nil && snap.Progress != nil {
		s.pipe.Resume(pipelineProgress(snap.Progress), sameWindow)
	}
	if snap != nil {
		s.roles.resume = resumeOffsets(snap)
	}
	return nil
}

// resumeOffsets are the snapshot's next offsets: where a learner, which
// commits nothing, goes on reading each partition.
func resumeOffsets(snap *snapshot.Snapshot) map[partitionKey]int64 {
	out := map[partitionKey]int64{}
	for _, o := range snap.Offsets {
		out[partitionKey{o.Topic, o.Partition}] = o.Next
	}
	return out
}

// loadSnapshot returns the newest usable snapshot, or nil; seeded says it
// is the seed model.
func (s *Service) loadSnapshot(ctx context.Context) (snap *snapshot.Snapshot, seeded bool, err error) {
	if path := s.cfg.Snapshot.File; path != "" {
		snap, err := snapshot.ReadFile(path)
		switch {
		case err == nil:
			return snap, false, nil
		case errors.Is(err, os.ErrNotExist):
		default:
			s.log.Error("snapshot file refused", "file", path, "error", err)
		}
	}
	c, ok, skipped, err := s.conn.ReadSnapshots(ctx, s.cfg.Kafka.Topics.Snapshots, s.cfg.Model.Name)
	if err != nil {
		return nil, false, err
	}
	if skipped > 0 {
		s.log.Warn("snapshot records skipped", "count", skipped)
	}
	if !ok {
		snap = s.loadSeed()
		return snap, snap != nil, nil
	}
	s.roles.newestEpoch.Store(c.Epoch)
	if snap, err = snapshot.Decode(c.Data); err != nil {
		s.log.Error("snapshot refused", "error", err)
		snap = s.loadSeed()
		return snap, snap != nil, nil
	}
	return snap, false, nil
}

// loadSeed returns the model.seed_file snapshot, or nil when there is none
// or it cannot be read. The file is never written.
func (s *Service) loadSeed() *snapshot.Snapshot {
	path := s.cfg.Model.SeedFile
	if path == "" {
		return nil
	}
	snap, err := snapshot.ReadFile(path)
	if err != nil {
		s.log.Error("seed model refused; starting without it", "file", path, "error", err)
		return nil
	}
	s.log.Info("starting from the seed model", "file", path, "model_version", snap.Version)
	return snap
}

// compatible checks that a snapshot's model fits this configuration.
func (s *Service) compatible(snap *snapshot.Snapshot) error {
	features, _, _ := s.cfg.SnapshotSettings()
	switch {
	case snap.Name != s.cfg.Model.Name:
		return fmt.Errorf("snapshot of model %q, this is %q", snap.Name, s.cfg.Model.Name)
	case snap.Features != features:
		return fmt.Errorf("snapshot features %+v differ from the configuration's %+v", snap.Features, features)
	case snap.Model.Map == nil && snap.Model.Dim != s.cfg.ModelDim():
		return fmt.Errorf("snapshot model dimension %d, configuration %d", snap.Model.Dim, s.cfg.ModelDim())
	case snap.Model.Map != nil && snap.Model.Map.InputDim() > s.cfg.ModelDim():
		return fmt.Errorf("snapshot kernel map's landmarks of dimension %d, configuration %d", snap.Model.Map.InputDim(), s.cfg.ModelDim())
	case !snap.Model.Ready():
		return errors.New("snapshot holds no trained model")
	}
	return nil
}

// rebuildRanges returns what to read again of topic to rebuild the window:
// in each partition, from where the window starts to the committed offset
// (ranked rank against the other topic's records of equal times). It
// reports whether that is exactly what the snapshot's window held: up to
// the snapshot's next offset in every partition.
func (s *Service) rebuildRanges(ctx context.Context, topic string, rank int, snap *snapshot.Snapshot) ([]brokers.Range, bool, error) {
	parts, err := s.conn.Partitions(ctx, topic)
	if errors.Is(err, brokers.ErrUnknownTopic) {
		return nil, true, nil // a topic that does not exist yet has nothing to rebuild
	}
	if err != nil {
		return nil, false, err
	}
	// A learner commits nothing: it rebuilds what its snapshot's window
	// held and goes on from there; kafka.group's offsets are the scorers'.
	committed := map[int]int64{}
	if s.cfg.Role != config.RoleLearner {
		if committed, err = s.conn.CommittedOffsets(ctx, s.cfg.Kafka.Group, topic, parts); err != nil {
			return nil, false, err
		}
	}
	ranges, err := s.conn.Offsets(ctx, topic, parts)
	if err != nil {
		return nil, false, err
	}
	var out []brokers.Range
	same := true
	for _, p := range parts {
		if s.cfg.Role != config.RoleLearner {
			s.backlog.Expect(topic, p, s.groupStart(committed, p, ranges[p]), ranges[p].End)
		}
		from, to := s.rebuildRange(topic, p, snap, committed, ranges[p].First)
		same = same && to == snapshotNext(snap, topic, p, to)
		if to > from {
			out = append(out, brokers.Range{Topic: topic, Partition: p, From: from, To: to, Rank: rank})
		}
	}
	return out, same, nil
}

// snapshotNext returns the snapshot's next offset of a partition, or
// otherwise when the snapshot has none: a partition the snapshot never read
// holds nothing of its window when nothing was committed in it either.
func snapshotNext(snap *snapshot.Snapshot, topic string, partition int, otherwise int64) int64 {
	if snap != nil {
		for _, o := range snap.Offsets {
			if o.Topic == topic && o.Partition == partition {
				return o.Next
			}
		}
	}
	if otherwise > 0 {
		return -1
	}
	return otherwise
}

// groupStart is where the group's reader starts reading partition p: its
// committed offset, else where kafka.start says.
func (s *Service) groupStart(committed map[int]int64, p int, r brokers.OffsetRange) int64 {
	if c, ok := committed[p]; ok {
		return c
	}
	if s.cfg.Kafka.Start == "latest" {
		return r.End
	}
	return r.First
}

// rebuildRange returns the offsets [from, to) of partition p to read again.
//
// A window that sampled its unlabeled examples (window.sample) spans more
// records than it holds, and its oldest row may lie far back (after a
// burst, several times its length). The rebuild inserts
// every record and the window evicts the oldest by count, so that of an
// examples partition only its last window.max_examples records can
// remain: the rebuild starts there instead of inserting every record of
// the span, most of them only to be evicted.
func (s *Service) rebuildRange(topic string, p int, snap *snapshot.Snapshot, committed map[int]int64, first int64) (from, to int64) {
	to, ok := committed[p]
	var pos *snapshot.Offset
	if snap != nil {
		for i := range snap.Offsets {
			if o := &snap.Offsets[i]; o.Topic == topic && o.Partition == p {
				pos = o
			}
		}
	}
	switch {
	case pos != nil && !ok:
		from, to = max(pos.WindowStart, first), pos.Next
	case pos != nil:
		from = max(pos.WindowStart, first)
	case ok:
		return max(first, to-int64(s.cfg.Window.MaxExamples)), to
	default:
		return 0, 0
	}
	if topic == s.cfg.Kafka.Topics.Examples {
		from = max(from, to-int64(s.cfg.Window.MaxExamples))
	}
	return from, to
}

// rebuildWindow reads the ranges again into the pipeline, every partition at
// once, in the order of the records' times (brokers.MergedReader): the
// window keeps its newest rows by count, and read one partition after the
// other, a rebuild that read more than the window holds (a restart after a
// crash, with records handled since the last snapshot) kept only rows of
// the partitions read last. It returns the time of the oldest example
// record read (zero when none).
func (s *Service) rebuildWindow(ctx context.Context, reads []brokers.Range) (oldest time.Time, err error) {
	mr := s.conn.ReadMerged(ctx, reads, 1024)
	defer mr.Close()
	n := map[partitionKey]int{}
	for {
		m, ok, err := mr.Next()
		if err != nil {
			return oldest, fmt.Errorf("rebuild: %w", err)
		}
		if !ok {
			break
		}
		s.rebuildRecord(m)
		n[partitionKey{m.Topic, m.Partition}]++
		if m.Topic == s.cfg.Kafka.Topics.Examples && (oldest.IsZero() || m.Time.Before(oldest)) {
			oldest = m.Time
		}
	}
	if err := ctx.Err(); err != nil {
		return oldest, fmt.Errorf("rebuild: %w", err)
	}
	for _, r := range reads {
		s.log.Info("window rebuilt", "topic", r.Topic, "partition", r.Partition, "from", r.From, "to", r.To, "records", n[partitionKey{r.Topic, r.Partition}])
	}
	return oldest, nil
}

// recallRequests reads back the label requests written since the oldest
// example of the rebuilt window was (less clockSkew), and has the pipeline
// remember those of examples the window holds: a restart then neither
// asks for an example twice nor takes an answer to a chosen request for a
// label that came unasked. A record that does not decode is passed over.
func (s *Service) recallRequests(ctx context.Context, oldest time.Time) error {
	topic := s.cfg.Kafka.Topics.LabelRequests
	parts, err := s.conn.Partitions(ctx, topic)
	if errors.Is(err, brokers.ErrUnknownTopic) {
		return nil // no request was ever written
	}
	if err != nil {
		return fmt.Errorf("recall label requests: %w", err)
	}
	from, err := s.conn.OffsetsForTime(ctx, topic, parts, oldest.Add(-clockSkew).UnixMilli())
	if err != nil {
		return fmt.Errorf("recall label requests: %w", err)
	}
	ends, err := s.conn.Offsets(ctx, topic, parts)
	if err != nil {
		return fmt.Errorf("recall label requests: %w", err)
	}
	var reads []brokers.Range
	for _, p := range parts {
		if f := from[p]; f >= 0 && f < ends[p].End {
			reads = append(reads, brokers.Range{Topic: topic, Partition: p, From: f, To: ends[p].End})
		}
	}
	var reqs []pipeline.LabelRequest
	mr := s.conn.ReadMerged(ctx, reads, 1024)
	defer mr.Close()
	for {
		m, ok, err := mr.Next()
		if err != nil {
			return fmt.Errorf("recall label requests: %w", err)
		}
		if !ok {
			break
		}
		var req pipeline.LabelRequest
		if json.Unmarshal(m.Value, &req) == nil && req.ID != "" {
			reqs = append(reqs, req)
		}
	}
	n := s.pipe.RecallRequests(reqs, time.Now())
	s.log.Info("label requests recalled", "topic", topic, "read", len(reqs), "of_window", n)
	return nil
}

// clockSkew is how much earlier than the example it is for a request's
// record may be stamped: the clocks of the examples' producers and of the
// learner differ.
const clockSkew = time.Hour

// rebuildRecord puts one record read again into the window; bad records
// were dead-lettered the first time and are only passed over.
func (s *Service) rebuildRecord(m kafka.Message) {
	src := pipeline.Source{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset}
	if m.Topic == s.cfg.Kafka.Topics.Examples {
		ex, err := s.pipe.DecodeExample(m.Value, m.Time)
		if err == nil {
			err = s.pipe.Restore(ex, src)
		}
		if err != nil {
			s.pipe.ExampleRefused(src)
			return
		}
		s.rebuilt.Add(1)
		return
	}
	if l, err := s.pipe.DecodeLabel(m.Value); err == nil {
		s.pipe.RestoreLabel(l, src)
	} else {
		s.pipe.LabelRefused(src)
	}
}
