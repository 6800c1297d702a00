package brokerstest

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
)

// connect starts an embedded cluster for the test, connects to it and
// creates topics.
func connect(t *testing.T, ctx context.Context, topics ...brokers.Topic) *brokers.Connection {
	t.Helper()
	cluster, err := embedded.Start(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	conn, err := brokers.Config{Brokers: []string{brokers.Embedded}}.Connect(cluster.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	if err := conn.EnsureTopics(ctx, topics...); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestLongestPause writes records of two keys at chosen times over two
// partitions: the longest pause is that of one key, across partitions,
// and records before since are left out.
func TestLongestPause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := connect(t, ctx, brokers.Topic{Name: "out", Partitions: 2})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	records := []struct {
		partition, key int
		s              float64
	}{
		{0, 1, 0}, {0, 2, 0}, {1, 2, 15}, {0, 1, 20}, // key 1 waits 20s, before since
		{0, 1, 30}, {1, 1, 31}, {0, 2, 33}, {1, 1, 35}, {1, 2, 34}, {0, 1, 36},
	}
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: "out",
		Balancer: kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return int(m.Key[0] - '0') }), BatchTimeout: time.Millisecond}
	defer w.Close()
	for _, r := range records {
		m := kafka.Message{Key: []byte(strconv.Itoa(r.partition)), Value: []byte(strconv.Itoa(r.key)), Time: at(r.s)}
		if err := w.WriteMessages(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	keyOf := func(m kafka.Message) (int, error) { return strconv.Atoi(string(m.Value)) }
	for _, tc := range []struct {
		since time.Time
		want  Pause
	}{
		{time.Time{}, Pause{Duration: 20 * time.Second, Key: 1, After: at(0)}},
		{at(25), Pause{Duration: 4 * time.Second, Key: 1, After: at(31)}},
		{at(40), Pause{}},
	} {
		got, err := LongestPause(ctx, conn, "out", tc.since, keyOf)
		if err != nil || got.Duration != tc.want.Duration || got.Key != tc.want.Key || !got.After.Equal(tc.want.After) {
			t.Errorf("since %v: %+v, %v; want %+v", tc.since, got, err, tc.want)
		}
	}
}

// TestGroupWatchCountsRebalances: a second member joining a stable group
// of one is a rebalance, after which the group is stable with two.
func TestGroupWatchCountsRebalances(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := connect(t, ctx, brokers.Topic{Name: "in", Partitions: 2})
	watch := WatchGroup(conn.Client(), "g", 10*time.Millisecond)
	watchCtx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	running.Go(func() { watch.Run(watchCtx) })
	defer func() { stop(); running.Wait() }()
	var readers sync.WaitGroup
	t.Cleanup(readers.Wait) // last: after every reader's context ended and it closed
	member := func() {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: conn.Addrs, Dialer: conn.Dialer, GroupID: "g", Topic: "in",
			HeartbeatInterval: 100 * time.Millisecond, SessionTimeout: 6 * time.Second, RebalanceTimeout: 6 * time.Second, MaxWait: 100 * time.Millisecond})
		t.Cleanup(func() { r.Close() })
		readCtx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		readers.Go(func() { r.FetchMessage(readCtx) }) // joins the group; ends with the test
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	member()
	waitUntil("stable with one member", func() bool { return watch.StableWith(1) })
	before := watch.Rebalances()
	member()
	waitUntil("stable with two members", func() bool { return watch.StableWith(2) })
	if n := watch.Rebalances() - before; n < 1 {
		t.Fatalf("%d rebalances seen as a second member joined", n)
	}
	state, members, err := DescribeGroup(ctx, conn.Client(), "g")
	if err != nil || state != "Stable" || len(members) != 2 {
		t.Fatalf("DescribeGroup = %s, %v, %v; want Stable with two members", state, members, err)
	}
}
