package consumer

import (
	"slices"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// Backlog knows, for each input partition, how many records the brokers
// hold that this process has not read yet. Two decisions rest on it
// (Schedule). A due solve first waits for the labels (AwaitLabels): a process
// catching up on a backlog reads the examples and the labels partitions at
// their own paces, and the examples may run ahead, so that a solve saw a
// window whose labels were still on the topic (2,000 rows with 89 of their
// 200 labels, in a crash test) and its model scored the rest of the
// backlog. Labels read early wait for their examples
// (join.pending_labels), so reading labels ahead costs nothing; the wait
// is for those as far in record time as the newest example read
// (BehindOf). And solves and window inserts are paced only while the
// examples are behind (Backlogged).
//
// A partition's count is what the reader last said of it: the high
// watermark of the fetch that brought its last record, or, before any
// record, the end a restore or an opening saw. That expectation may be
// wrong: in a group of several processes, the partition may go to
// another; ForgetExpected drops it. It is safe for concurrent use.
type Backlog struct {
	mu     sync.Mutex
	behind map[partitionKey]int64 // records on the brokers not read yet, where some are
	// lastTime is the timestamp of the last record read of a partition,
	// absent before its first since Expect: a partition in behind without
	// one is expected behind and not read yet.
	lastTime map[partitionKey]time.Time
	newest   map[string]time.Time // per topic, the newest timestamp read
	readAny  bool                 // some record was read
}

// NewBacklog returns a backlog that knows of no partition.
func NewBacklog() *Backlog {
	return &Backlog{
		behind: map[partitionKey]int64{}, lastTime: map[partitionKey]time.Time{}, newest: map[string]time.Time{},
	}
}

// Expect records that a partition will be read from next and that its
// end is end, before any record of it is read.
func (u *Backlog) Expect(topic string, partition int, next, end int64) {
	key := partitionKey{topic, partition}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.set(key, end-next)
	delete(u.lastTime, key)
}

// Read records a record read. The last record of a fetch leaves its
// partition caught up, up to one record: the commit marker that ends a
// transactional producer's records, which no reader is given.
func (u *Backlog) Read(m *kafka.Message) {
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

// ForgetExpected drops the partitions of topic that were expected behind
// and never read since, once this process reads others: it does not read
// those. Before any record is read (a process still joining its group),
// it forgets nothing.
func (u *Backlog) ForgetExpected(topic string) {
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
func (u *Backlog) set(key partitionKey, unread int64) {
	if unread > 0 {
		u.behind[key] = unread
	} else {
		delete(u.behind, key)
	}
}

// BehindOf returns the partitions of topic, in order, that have records
// not read yet and were not read up to the newest record read of other:
// never read, or last read at an earlier timestamp. A backlog read in step
// (a drain, a replay) keeps every partition lagging until its end, but
// its labels are read as far as its examples; a catch-up that read the
// examples ahead of the labels leaves them behind.
func (u *Backlog) BehindOf(topic, other string) []int {
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

// Total returns the records of topic not read yet, over its partitions.
func (u *Backlog) Total(topic string) int64 {
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
