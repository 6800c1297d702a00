package replay

import (
	"container/heap"
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
)

// source reads one partition range in order.
type source struct {
	topic string
	rank  int // examples before labels at equal times
	part  PartitionRange
	ch    chan kafka.Message
	err   error
}

// readRange reads [From, To) of one partition into src.ch and closes it.
func readRange(ctx context.Context, conn *brokers.Connection, src *source) {
	defer close(src.ch)
	if src.part.To <= src.part.From {
		return
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: conn.Addrs, Dialer: conn.Dialer, Topic: src.topic, Partition: src.part.Partition,
		MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 100 * time.Millisecond, QueueCapacity: 4096,
	})
	defer closeWithin(r, 5*time.Second)
	if err := r.SetOffset(src.part.From); err != nil {
		src.err = fmt.Errorf("%s[%d]: %w", src.topic, src.part.Partition, err)
		return
	}
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() == nil {
				src.err = fmt.Errorf("read %s[%d]: %w", src.topic, src.part.Partition, err)
			}
			return
		}
		if m.Offset >= src.part.To {
			return
		}
		select {
		case src.ch <- m:
		case <-ctx.Done():
			return
		}
		if m.Offset+1 >= src.part.To {
			return
		}
	}
}

// closeWithin closes r, leaving it behind if Close hangs (kafka-go's can).
func closeWithin(r *kafka.Reader, d time.Duration) {
	done := make(chan struct{})
	go func() { r.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// merger yields the records of several sources in one deterministic order:
// by record time, then examples before labels, then partition and offset.
type merger struct {
	heads headHeap
	srcs  []*source
}

type head struct {
	m   kafka.Message
	src *source
}

type headHeap []head

func (h headHeap) Len() int { return len(h) }
func (h headHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if !a.m.Time.Equal(b.m.Time) {
		return a.m.Time.Before(b.m.Time)
	}
	if a.src.rank != b.src.rank {
		return a.src.rank < b.src.rank
	}
	if a.m.Partition != b.m.Partition {
		return a.m.Partition < b.m.Partition
	}
	return a.m.Offset < b.m.Offset
}
func (h headHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *headHeap) Push(x any)   { *h = append(*h, x.(head)) }
func (h *headHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newMerger(srcs []*source) *merger {
	mg := &merger{srcs: srcs}
	for _, s := range srcs {
		if m, ok := <-s.ch; ok {
			mg.heads = append(mg.heads, head{m, s})
		}
	}
	heap.Init(&mg.heads)
	return mg
}

// next returns the next record; ok is false when every source is done.
func (mg *merger) next() (kafka.Message, bool, error) {
	if len(mg.heads) == 0 {
		for _, s := range mg.srcs {
			if s.err != nil {
				return kafka.Message{}, false, s.err
			}
		}
		return kafka.Message{}, false, nil
	}
	h := mg.heads[0]
	if m, ok := <-h.src.ch; ok {
		mg.heads[0] = head{m, h.src}
		heap.Fix(&mg.heads, 0)
	} else {
		heap.Pop(&mg.heads)
		if h.src.err != nil {
			return kafka.Message{}, false, h.src.err
		}
	}
	return h.m, true, nil
}
