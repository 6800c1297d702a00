package brokers

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// Range is the records [From, To) of one partition of Topic. Rank orders
// the records of equal times of different ranges, lower first (a replay
// puts examples before labels).
type Range struct {
	Topic     string
	Partition int
	From, To  int64
	Rank      int
}

// MergedReader reads several ranges at once, each with a ReadRange of its
// own, and yields their records in one deterministic order: by record
// time, then rank; records of one time and rank in turn from each range
// (the first of each range at that time, then the second of each, ...),
// ranges in the order of their partitions. That is the order in which one
// consumer of every partition would have met them, as far as the
// brokers' times tell: a replay learns in it, and a restore rebuilds its
// window in it, so that a window that keeps the newest rows keeps those of
// every partition, not those of the partition read last. Times are in
// milliseconds, and a burst puts hundreds of records of every partition
// in one: taken partition after partition there, the newest rows would
// again be those of the last partitions.
type MergedReader struct {
	srcs    []*mergeSource
	heads   headHeap
	started bool
	stop    context.CancelFunc
	readers sync.WaitGroup
}

// mergeSource is one range being read into ch, which is closed when the
// range ends or its reader fails (err, written before the close).
type mergeSource struct {
	rank int
	ch   chan kafka.Message
	err  error
	// at and run are the time of the last record taken from ch and how
	// many records before it had that time.
	at  time.Time
	run int
}

// receive takes the next record of s, with its place in the run of
// records of its time.
func (s *mergeSource) receive() (mergeHead, bool) {
	m, ok := <-s.ch
	if !ok {
		return mergeHead{}, false
	}
	if m.Time.Equal(s.at) {
		s.run++
	} else {
		s.at, s.run = m.Time, 0
	}
	return mergeHead{m: m, src: s, run: s.run}, true
}

// ReadMerged starts reading ranges, buffering up to buffer records of
// each. Close stops the readers and waits for them; every reader stops too
// when ctx ends.
func (c *Connection) ReadMerged(ctx context.Context, ranges []Range, buffer int) *MergedReader {
	ctx, stop := context.WithCancel(ctx)
	mr := &MergedReader{stop: stop}
	for _, r := range ranges {
		src := &mergeSource{rank: r.Rank, ch: make(chan kafka.Message, buffer)}
		mr.srcs = append(mr.srcs, src)
		mr.readers.Go(func() { c.readInto(ctx, r, src) })
	}
	return mr
}

// readInto reads r into src.ch and closes it.
func (c *Connection) readInto(ctx context.Context, r Range, src *mergeSource) {
	defer close(src.ch)
	err := c.ReadRange(ctx, r.Topic, r.Partition, r.From, r.To, func(m kafka.Message) error {
		select {
		case src.ch <- m:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err != nil && ctx.Err() == nil {
		src.err = err
	}
}

// Next returns the next record; ok is false when every range is read, or
// when ctx ended (the caller tells them apart by ctx). A reader's error
// ends the reading.
func (mr *MergedReader) Next() (m kafka.Message, ok bool, err error) {
	if !mr.started {
		mr.started = true
		for _, s := range mr.srcs {
			if h, ok := s.receive(); ok {
				mr.heads = append(mr.heads, h)
			} else if s.err != nil {
				return kafka.Message{}, false, s.err
			}
		}
		heap.Init(&mr.heads)
	}
	if len(mr.heads) == 0 {
		return kafka.Message{}, false, nil
	}
	h := mr.heads[0]
	if next, ok := h.src.receive(); ok {
		mr.heads[0] = next
		heap.Fix(&mr.heads, 0)
	} else {
		heap.Pop(&mr.heads)
		if h.src.err != nil {
			return kafka.Message{}, false, h.src.err
		}
	}
	return h.m, true, nil
}

// Close stops the readers and waits for them.
func (mr *MergedReader) Close() {
	mr.stop()
	mr.readers.Wait()
}

type mergeHead struct {
	m   kafka.Message
	src *mergeSource
	run int // records of src before m with m's time
}

type headHeap []mergeHead

func (h headHeap) Len() int { return len(h) }
func (h headHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if !a.m.Time.Equal(b.m.Time) {
		return a.m.Time.Before(b.m.Time)
	}
	if a.src.rank != b.src.rank {
		return a.src.rank < b.src.rank
	}
	if a.run != b.run {
		return a.run < b.run
	}
	if a.m.Partition != b.m.Partition {
		return a.m.Partition < b.m.Partition
	}
	return a.m.Offset < b.m.Offset
}
func (h headHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *headHeap) Push(x any)   { *h = append(*h, x.(mergeHead)) }
func (h *headHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
