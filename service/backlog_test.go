package service

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"streamer/brokers/brokerstest"
)

// TestSolveWaitsForTheLabelsOfABacklog restarts a service on a backlog of
// examples and labels while the brokers hold every fetch of the labels
// partitions past what the window was rebuilt from: the examples are read,
// a solve is due, and it must wait for the labels. Once they are read, it
// solves on a window with every label.
func TestSolveWaitsForTheLabelsOfABacklog(t *testing.T) {
	t.Parallel()
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
	if len(svc2.backlog.BehindOf("labels", "examples")) == 0 {
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
