package service

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// unreadRecords knows, for each input partition, how many records the
// brokers hold that this process has not read yet. Two decisions rest on
// it. A due solve first waits for the labels (awaitLabels): a process
// catching up on a backlog reads the examples and the labels partitions at
// their own paces, and the examples may run ahead, so that a solve saw a
// window whose labels were still on the topic (2,000 rows with 89 of their
// 200 labels, in a crash test) and its model scored the rest of the
// backlog. Labels read early wait for their examples
// (join.pending_labels), so reading labels ahead costs nothing; the wait
// is for those as far in record time as the newest example read (behindOf).
// And solves and window inserts are paced only while the examples are
// behind (backlogged).
//
// A partition's count is what the reader last said of it: the high
// watermark of the fetch that brought its last record, or, before any
// record, the end a restore or an opening saw. That expectation may be
// wrong: in a group of several processes, the partition may go to
// another; forgetExpected drops it. It is safe for concurrent use.
type unreadRecords struct {
	mu     sync.Mutex
	behind map[partitionKey]int64 // records on the brokers not read yet, where some are
	// lastTime is the timestamp of the last record read of a partition,
	// absent before its first since expect: a partition in behind without
	// one is expected behind and not read yet.
	lastTime map[partitionKey]time.Time
	newest   map[string]time.Time // per topic, the newest timestamp read
	readAny  bool                 // some record was read
}

func newUnreadRecords() *unreadRecords {
	return &unreadRecords{
		behind: map[partitionKey]int64{}, lastTime: map[partitionKey]time.Time{}, newest: map[string]time.Time{},
	}
}

// expect records that a partition will be read from next and that its
// end is end, before any record of it is read.
func (u *unreadRecords) expect(key partitionKey, next, end int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.set(key, end-next)
	delete(u.lastTime, key)
}

// read records a record read. The last record of a fetch leaves its
// partition caught up, up to one record: the commit marker that ends a
// transactional producer's records, which no reader is given.
func (u *unreadRecords) read(m *kafka.Message) {
	key := partitionKey{m.Topic, m.Partition}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.set(key, m.HighWaterMark-(m.Offset+1)-1)
	u.readAny = true
	u.lastTime[key] = m.Time
	if m.Time.After(u.newest[m.Topic]) {
		u.newest[m.Topic] = m.Time
	}
}

// forgetExpected drops the partitions of topic that were expected behind
// and never read since, once this process reads others: it does not read
// those. Before any record is read (a process still joining its group),
// it forgets nothing.
func (u *unreadRecords) forgetExpected(topic string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.readAny {
		return
	}
	for k := range u.behind {
		if _, read := u.lastTime[k]; k.topic == topic && !read {
			delete(u.behind, k)
		}
	}
}

// set records a partition's unread records; the caller holds mu.
func (u *unreadRecords) set(key partitionKey, unread int64) {
	if unread > 0 {
		u.behind[key] = unread
	} else {
		delete(u.behind, key)
	}
}

// behindOf returns the partitions of topic, in order, that have records
// not read yet and were not read up to the newest record read of other:
// never read, or last read at an earlier timestamp. A backlog read in step
// (a drain, a replay) keeps every partition lagging until its end, but
// its labels are read as far as its examples; a catch-up that read the
// examples ahead of the labels leaves them behind.
func (u *unreadRecords) behindOf(topic, other string) []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	newest := u.newest[other]
	var out []int
	for k := range u.behind {
		if k.topic != topic {
			continue
		}
		if last, read := u.lastTime[k]; read && !last.Before(newest) {
			continue
		}
		out = append(out, k.partition)
	}
	slices.Sort(out)
	return out
}

// total returns the records of topic not read yet, over its partitions.
func (u *unreadRecords) total(topic string) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	var n int64
	for k, v := range u.behind {
		if k.topic == topic {
			n += v
		}
	}
	return n
}

// awaitLabels waits until every labels partition is read to its end or
// as far in time as the newest example read (the labels a live stream
// would have brought by then), or schedule.labels_wait has passed, or ctx
// ended; it reports whether ctx is still running. A live stream has its
// labels read within a fetch or two, and a backlog read in step has them
// read as far as its examples: the wait is for catch-ups that read the
// examples ahead. Timestamps are the records' (producer or broker time):
// labels stamped earlier than their examples shorten the wait.
func (s *Service) awaitLabels(ctx context.Context) bool {
	topic, examples := s.cfg.Kafka.Topics.Labels, s.cfg.Kafka.Topics.Examples
	lagging := s.unread.behindOf(topic, examples)
	if len(lagging) == 0 || s.cfg.Schedule.LabelsWait == 0 {
		return true
	}
	start := time.Now()
	deadline := time.NewTimer(s.cfg.Schedule.LabelsWait)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for len(lagging) > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			s.metrics.LabelsWaits.WithLabelValues("timeout").Inc()
			s.log.Warn("solving before every label on the topic was read", "waited", s.cfg.Schedule.LabelsWait.String(),
				"partitions", fmt.Sprint(lagging))
			// A partition expected behind at the start and not read for
			// a whole wait while others were is another process's (several
			// in one group): it is not waited for again, nor counted in a
			// backlog.
			s.unread.forgetExpected(topic)
			s.unread.forgetExpected(s.cfg.Kafka.Topics.Examples)
			return true
		case <-tick.C:
			lagging = s.unread.behindOf(topic, examples)
		}
	}
	s.metrics.LabelsWaits.WithLabelValues("read").Inc()
	s.log.Debug("waited for the labels before solving", "waited", time.Since(start).String())
	return true
}
