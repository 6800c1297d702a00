package service

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// unreadLabels knows, for each partition of the labels topic, whether the
// brokers hold label records this process has not read yet, so that a
// solve can first wait for them (awaitLabels). A process catching up on a
// backlog reads the examples and the labels partitions at their own paces,
// and the examples may run ahead: a solve then sees a window whose labels
// are still on the topic (2,000 rows with 89 of their 200 labels, in a
// crash test), and its model scores the rest of the backlog. Labels read
// early wait for their examples (join.pending_labels), so reading every
// label first costs nothing.
//
// A partition is behind from what the reader last said of it: the high
// watermark of the fetch that brought its last record, or, before any
// record, the end a restore or an opening saw. It is safe for concurrent
// use.
type unreadLabels struct {
	mu     sync.Mutex
	behind map[int]int64 // partition → records on the brokers not read yet
}

func newUnreadLabels() *unreadLabels { return &unreadLabels{behind: map[int]int64{}} }

// expect records that a partition will be read from next and that its
// end is end, before any record of it is read.
func (u *unreadLabels) expect(partition int, next, end int64) {
	u.set(partition, end-next)
}

// read records a label record read. The last record of a fetch leaves
// its partition caught up, up to one record: the commit marker that ends
// a transactional producer's records, which no reader is given.
func (u *unreadLabels) read(m *kafka.Message) {
	u.set(m.Partition, m.HighWaterMark-(m.Offset+1)-1)
}

func (u *unreadLabels) set(partition int, unread int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if unread > 0 {
		u.behind[partition] = unread
	} else {
		delete(u.behind, partition)
	}
}

// lagging returns the partitions with records not read yet, in order.
func (u *unreadLabels) lagging() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]int, 0, len(u.behind))
	for p := range u.behind {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// awaitLabels waits until no labels partition has records left to read,
// or schedule.labels_wait has passed, or ctx ended; it reports whether ctx
// is still running. A live stream has its labels read within a fetch or
// two: the wait is for catch-ups.
func (s *Service) awaitLabels(ctx context.Context) bool {
	lagging := s.unread.lagging()
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
			return true
		case <-tick.C:
			lagging = s.unread.lagging()
		}
	}
	s.metrics.LabelsWaits.WithLabelValues("read").Inc()
	s.log.Debug("waited for the labels before solving", "waited", time.Since(start).String())
	return true
}
