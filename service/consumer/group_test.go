package consumer

import (
	"maps"
	"testing"

	"github.com/segmentio/kafka-go"
)

// TestPublishedOffsetsKeepTheHighestOfEachPartition: the offsets handed to
// a commit are the highest published of each topic partition, whatever the
// order of the batches that were published since the last take.
func TestPublishedOffsetsKeepTheHighestOfEachPartition(t *testing.T) {
	at := func(topic string, partition int, offset int64) kafka.Message {
		return kafka.Message{Topic: topic, Partition: partition, Offset: offset}
	}
	p := newPublishedOffsets()
	var b batch
	for _, m := range []kafka.Message{at("examples", 0, 7), at("labels", 0, 3), at("examples", 1, 2), at("examples", 0, 9)} {
		b.consumed(&m)
	}
	p.add(b.last)
	p.add([]kafka.Message{at("examples", 1, 5), at("examples", 0, 8)})
	got, closed := p.take()
	type tp struct {
		topic     string
		partition int
	}
	offsets := map[tp]int64{}
	for _, m := range got {
		offsets[tp{m.Topic, m.Partition}] = m.Offset
	}
	want := map[tp]int64{{"examples", 0}: 9, {"labels", 0}: 3, {"examples", 1}: 5}
	if closed || len(got) != len(want) || !maps.Equal(offsets, want) {
		t.Fatalf("take = %v, %v; want %v, false", got, closed, want)
	}
	select {
	case <-p.ready:
	default:
		t.Fatal("no token after add")
	}
	if got, _ := p.take(); len(got) != 0 {
		t.Fatalf("second take = %v, want nothing", got)
	}
	p.close()
	if _, closed := p.take(); !closed {
		t.Fatal("take after close does not report it")
	}
}
