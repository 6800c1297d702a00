package brokers

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestReadMergedOrdersByTime writes records of known times to three
// partitions of one topic and two of another, and reads ranges of them
// merged: every record of the ranges once, by time, then rank, then in
// turn from each partition among records of one time (a burst), whatever
// the partition each is in.
func TestReadMergedOrdersByTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := connectTestCluster(t, ctx, Topic{Name: "ex", Partitions: 3}, Topic{Name: "lab", Partitions: 2})
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, Balancer: kafka.BalancerFunc(func(m kafka.Message, parts ...int) int { return int(m.Key[0]) })}
	defer w.Close()
	base := time.UnixMilli(1_700_000_000_000)
	type rec struct {
		topic     string
		partition int
		ms        int64
	}
	// Times go back and forth between partitions; two records share a time
	// across topics and two across partitions.
	recs := []rec{
		{"ex", 2, 0}, {"ex", 0, 1}, {"ex", 1, 1}, {"ex", 2, 5}, {"lab", 1, 5}, {"ex", 0, 7},
		{"lab", 0, 2}, {"ex", 1, 3}, {"ex", 1, 9}, {"ex", 0, 8}, {"lab", 1, 6}, {"ex", 2, 8},
		{"ex", 2, 10}, {"ex", 2, 10}, {"ex", 2, 10}, {"ex", 0, 10}, {"ex", 0, 10},
	}
	for i, r := range recs {
		m := kafka.Message{Topic: r.topic, Key: []byte{byte(r.partition)}, Value: fmt.Appendf(nil, "%d", i), Time: base.Add(time.Duration(r.ms) * time.Millisecond)}
		if err := w.WriteMessages(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var ranges []Range
	for rank, topic := range []string{"ex", "lab"} {
		parts, err := conn.Partitions(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		ends, err := conn.Offsets(ctx, topic, parts)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			ranges = append(ranges, Range{Topic: topic, Partition: p, From: 0, To: ends[p].End, Rank: rank})
		}
	}
	mr := conn.ReadMerged(ctx, ranges, 2)
	defer mr.Close()
	var got []string
	for {
		m, ok, err := mr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, fmt.Sprintf("%s[%d]@%d#%s", m.Topic, m.Partition, m.Time.Sub(base).Milliseconds(), m.Value))
	}
	want := []string{
		"ex[2]@0#0", "ex[0]@1#1", "ex[1]@1#2", "lab[0]@2#6", "ex[1]@3#7", "ex[2]@5#3", "lab[1]@5#4",
		"lab[1]@6#10", "ex[0]@7#5", "ex[0]@8#9", "ex[2]@8#11", "ex[1]@9#8",
		"ex[0]@10#15", "ex[2]@10#12", "ex[0]@10#16", "ex[2]@10#13", "ex[2]@10#14",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("merged order\n %v\nwant\n %v", got, want)
	}
}

// TestReadMergedCloseStopsTheReaders stops a merged read after its first
// record: Close returns once the readers, blocked on full buffers, are
// stopped.
func TestReadMergedCloseStopsTheReaders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := connectTestCluster(t, ctx, Topic{Name: "ex", Partitions: 2})
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: "ex", Balancer: &kafka.RoundRobin{}, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	msgs := make([]kafka.Message, 100)
	for i := range msgs {
		msgs[i] = kafka.Message{Value: []byte("x")}
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	mr := conn.ReadMerged(ctx, []Range{{Topic: "ex", Partition: 0, From: 0, To: 50}, {Topic: "ex", Partition: 1, From: 0, To: 50}}, 1)
	if _, ok, err := mr.Next(); !ok || err != nil {
		t.Fatalf("first record: %v, %v", ok, err)
	}
	done := make(chan struct{})
	go func() { mr.Close(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Close did not stop the readers")
	}
}
