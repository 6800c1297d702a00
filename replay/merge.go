package replay

import (
	"container/heap"
	"context"

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
	err := conn.ReadRange(ctx, src.topic, src.part.Partition, src.part.From, src.part.To, func(m kafka.Message) error {
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
