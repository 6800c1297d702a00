package service

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"streamer/brokers/brokerstest"
)

// TestUnreadRecords: a partition's unread records come from the end seen
// before its first record, then from each record's high watermark; a
// labels partition is behind while it has some and its last record read
// is older than the newest example read.
func TestUnreadRecords(t *testing.T) {
	u := newUnreadRecords()
	labels := func(p int) partitionKey { return partitionKey{"labels", p} }
	u.expect(labels(0), 10, 20)
	u.expect(labels(1), 20, 20)
	u.expect(labels(2), 5, 9)
	u.expect(partitionKey{"examples", 0}, 100, 700)
	behind := func(want ...int) {
		t.Helper()
		if got := u.behindOf("labels", "examples"); !slices.Equal(got, want) {
			t.Fatalf("labels partitions behind %v, want %v", got, want)
		}
	}
	behind(0, 2) // never read
	read := func(topic string, p int, offset, hwm int64, at int64) {
		u.read(&kafka.Message{Topic: topic, Partition: p, Offset: offset, HighWaterMark: hwm, Time: time.Unix(at, 0)})
	}
	read("examples", 0, 100, 700, 50)
	read("labels", 0, 15, 20, 40)
	read("labels", 2, 7, 9, 41) // the last record before a commit marker
	behind(0)
	read("labels", 0, 16, 20, 50) // as far in time as the examples
	behind()
	read("examples", 0, 300, 700, 60)
	behind(0)
	read("labels", 0, 19, 20, 55) // read to its end
	behind()
	read("labels", 1, 20, 30, 56) // a burst arrived: behind again
	behind(1)
	if n := u.total("examples"); n != 398 {
		t.Fatalf("%d examples unread, want 398", n)
	}
	read("examples", 1, 40, 142, 61)
	if n := u.total("examples"); n != 498 {
		t.Fatalf("%d examples unread, want 498", n)
	}
}

// TestSolvesArePacedOnlyBehindABacklog: the pause after a solve applies
// while more examples wait on the brokers than make a solve due.
func TestSolvesArePacedOnlyBehindABacklog(t *testing.T) {
	svc, err := New(testConfig(t, []string{"127.0.0.1:1"}, "schedule.solve_examples=100"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if svc.backlogged() {
		t.Fatal("backlogged with nothing known on the brokers")
	}
	svc.unread.expect(partitionKey{"examples", 0}, 0, 60)
	svc.unread.expect(partitionKey{"labels", 0}, 0, 500)
	if svc.backlogged() {
		t.Fatal("backlogged with 60 examples unread, fewer than make a solve due")
	}
	svc.unread.expect(partitionKey{"examples", 1}, 0, 60)
	if !svc.backlogged() {
		t.Fatal("not backlogged with 120 examples unread")
	}
}

// TestAwaitLabelsEnds: the wait ends when the labels are read, at
// schedule.labels_wait, or at once when the context ends.
func TestAwaitLabelsEnds(t *testing.T) {
	svc, err := New(testConfig(t, []string{"127.0.0.1:1"}, "schedule.labels_wait=100ms"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	waits := func(ended string) float64 { return testutil.ToFloat64(svc.metrics.LabelsWaits.WithLabelValues(ended)) }
	if !svc.awaitLabels(context.Background()) || waits("read")+waits("timeout") != 0 {
		t.Fatal("waited with nothing unread")
	}
	svc.unread.expect(partitionKey{"labels", 0}, 0, 5)
	if !svc.awaitLabels(context.Background()) || waits("timeout") != 1 {
		t.Fatalf("waits that timed out: %v, want 1", waits("timeout"))
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		svc.unread.read(&kafka.Message{Topic: "labels", Partition: 0, Offset: 4, HighWaterMark: 5})
	}()
	svc.cfg.Schedule.LabelsWait = time.Minute
	if !svc.awaitLabels(context.Background()) || waits("read") != 1 {
		t.Fatalf("waits that ended with the labels read: %v, want 1", waits("read"))
	}
	svc.unread.expect(partitionKey{"labels", 0}, 0, 5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if svc.awaitLabels(ctx) {
		t.Fatal("awaitLabels reported a running context after it ended")
	}
}

// TestSolveWaitsForTheLabelsOfABacklog restarts a service on a backlog of
// examples and labels while the brokers hold every fetch of the labels
// partitions past what the window was rebuilt from: the examples are read,
// a solve is due, and it must wait for the labels. Once they are read, it
// solves on a window with every label.
func TestSolveWaitsForTheLabelsOfABacklog(t *testing.T) {
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t, addrs, "schedule.labels_wait=1m")
	svc, stop := runService(t, cfg)
	stream := newStreamWriter(t, addrs, 21)
	stream.write(t, ctx, 400)
	waitFor(t, "every example, scored and solved", time.Minute, func() bool {
		st := svc.Status().Pipeline
		return st.Examples >= 400 && st.ModelVersion > 0 && !svc.Pipeline().Learner().Changed()
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	version := svc.Status().Pipeline.ModelVersion

	conn := testConnection(t, cfg.Brokers(), addrs)
	ends, err := conn.Offsets(ctx, "labels", []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	for p, r := range ends {
		brokerstest.HoldFetches(cluster.Cluster, "labels", p, r.End, release)
	}
	stream.write(t, ctx, 400)

	svc2, stop2 := runService(t, cfg)
	// Scoring hands examples to the learner through a queue, so a solve
	// falls due a moment after the examples are scored.
	waitFor(t, "a solve due after the backlog's 400 examples", time.Minute, func() bool {
		return svc2.Status().Pipeline.Examples >= 400 && svc2.Pipeline().Due()
	})
	for deadline := time.Now().Add(5 * cfg.Schedule.SolveInterval); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if v := svc2.Status().Pipeline.ModelVersion; v != version {
			t.Fatalf("solved (version %d) with the labels of the backlog unread", v)
		}
	}
	if len(svc2.unread.behindOf("labels", "examples")) == 0 {
		t.Fatal("no labels partition behind while its fetches are held")
	}
	close(release)
	waitFor(t, "a solve once the labels are read", time.Minute, func() bool { return svc2.Status().Pipeline.ModelVersion > version })
	st := svc2.Status().Pipeline
	if st.LastSolve.Labeled != st.WindowLabeled {
		t.Errorf("the solve saw %d labeled rows; the window has %d", st.LastSolve.Labeled, st.WindowLabeled)
	}
	if got := testutil.ToFloat64(svc2.metrics.LabelsWaits.WithLabelValues("read")); got < 1 {
		t.Errorf("streamer_solve_label_waits_total{ended=read} is %v", got)
	}
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
}

// TestUnreadForgetsPartitionsReadElsewhere: a partition expected behind
// and never read, while others are, stops counting once forgotten; before
// any record is read nothing is forgotten (the process may still be
// joining its group).
func TestUnreadForgetsPartitionsReadElsewhere(t *testing.T) {
	u := newUnreadRecords()
	u.expect(partitionKey{"labels", 0}, 0, 10)
	u.expect(partitionKey{"labels", 1}, 0, 10)
	u.expect(partitionKey{"examples", 0}, 0, 900)
	u.forgetExpected("labels")
	if got := u.behindOf("labels", "examples"); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("behind %v after forgetting before any read, want [0 1]", got)
	}
	u.read(&kafka.Message{Topic: "examples", Partition: 1, Offset: 0, HighWaterMark: 2, Time: time.Unix(20, 0)})
	u.read(&kafka.Message{Topic: "labels", Partition: 1, Offset: 3, HighWaterMark: 10, Time: time.Unix(10, 0)})
	u.forgetExpected("labels")
	if got := u.behindOf("labels", "examples"); !slices.Equal(got, []int{1}) {
		t.Fatalf("behind %v, want [1]: partition 0 was never read, partition 1 is behind", got)
	}
	if n := u.total("examples"); n != 900 {
		t.Fatalf("%d examples unread, want 900: only labels were forgotten", n)
	}
	u.forgetExpected("examples")
	if n := u.total("examples"); n != 0 {
		t.Fatalf("%d examples unread after forgetting, want 0", n)
	}
}
