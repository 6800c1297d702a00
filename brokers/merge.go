package brokers

import (
	"context"
	"sync"

	"github.com/segmentio/kafka-go"

	"streamer/internal/heap"
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
	heads   heap.Heap[*mergeSource] // the sources with a record in head, by before
	started bool
	stop    context.CancelFunc
	readers sync.WaitGroup
}

// mergeSource is one range being read into ch, which is closed when the
// range ends or its reader fails (err, written before the close). head is
// the record taken last from ch, and run how many records before it had
// its time.
type mergeSource struct {
	rank int
	ch   chan kafka.Message
	err  error
	head kafka.Message
	run  int
}

// receive takes the next record of s into head; false when ch is closed.
func (s *mergeSource) receive() bool {
	m, ok := <-s.ch
	if !ok {
		return false
	}
	if m.Time.Equal(s.head.Time) {
		s.run++
	} else {
		s.run = 0
	}
	s.head = m
	return true
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
		var heads []*mergeSource
		for _, s := range mr.srcs {
			if s.receive() {
				heads = append(heads, s)
			} else if s.err != nil {
				return kafka.Message{}, false, s.err
			}
		}
		mr.heads = heap.New(heads, (*mergeSource).before)
	}
	if mr.heads.Len() == 0 {
		return kafka.Message{}, false, nil
	}
	s := mr.heads.Top()
	m = s.head
	if s.receive() {
		mr.heads.ReplaceTop(s) // s holds its next record
	} else {
		mr.heads.Pop()
		if s.err != nil {
			return kafka.Message{}, false, s.err
		}
	}
	return m, true, nil
}

// Close stops the readers and waits for them.
func (mr *MergedReader) Close() {
	mr.stop()
	mr.readers.Wait()
}

// before orders sources by their head records: time, then rank, then run,
// then partition and offset.
func (a *mergeSource) before(b *mergeSource) bool {
	if !a.head.Time.Equal(b.head.Time) {
		return a.head.Time.Before(b.head.Time)
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if a.run != b.run {
		return a.run < b.run
	}
	if a.head.Partition != b.head.Partition {
		return a.head.Partition < b.head.Partition
	}
	return a.head.Offset < b.head.Offset
}
