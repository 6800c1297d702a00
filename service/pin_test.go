package service

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"streamer/brokers"
	"streamer/config"
	"streamer/control"
	"streamer/snapshot"
)

// TestPinAndRollback runs a service that keeps every snapshot in its
// history, pins an old version (a rollback: its model is loaded from the
// history), and checks that the predictions keep that version while the
// learner goes on solving and publishing, also across a restart; unpinned,
// the newest model scores again.
func TestPinAndRollback(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := testConfig(t, addrs)
	conn := testConnection(t, cfg.Brokers(), addrs)
	preds := readPredictions(t, ctx, addrs)
	stream := newStreamWriter(t, addrs, 5)
	svc, stop := runService(t, cfg)
	learner := svc.Pipeline().Learner()

	// The history keeps every version published.
	for len(stream.write(t, ctx, 100)) > 0 {
		if v := learner.InForce().Stamp.Version; v >= 3 {
			break
		}
		waitFor(t, "a solve", 30*time.Second, func() bool { return !learner.Changed() })
	}
	waitFor(t, "three versions in the history", 30*time.Second, func() bool {
		entries, _, err := conn.SnapshotHistory(ctx, "default", cfg.Snapshot.HistoryTopic)
		return err == nil && len(entries) >= 3
	})
	entries, _, err := conn.SnapshotHistory(ctx, "default", cfg.Snapshot.HistoryTopic)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if e.Version != uint64(i+1) || e.CreatedAt.IsZero() || e.Window == 0 || e.Examples == 0 {
			t.Fatalf("history entry %d: %+v", i, e)
		}
	}

	// Compacted, the snapshot topic keeps the newest version only: version
	// 1 is in the history alone.
	cluster.Compact()
	if _, err := conn.ReadSnapshotVersion(ctx, cfg.Kafka.Topics.Snapshots, "default", snapshot.AnyEpochVersion(1)); !errors.Is(err, brokers.ErrNoSnapshot) {
		t.Fatalf("version 1 on the compacted snapshot topic: %v", err)
	}

	// Pinned to version 1 (a rollback, from the history): predictions stay
	// on it while solves go on.
	ordered := time.Now()
	pin(t, ctx, conn, cfg, 1)
	waitFor(t, "version 1 pinned", 30*time.Second, func() bool { st, ok := learner.Pinned(); return ok && st.Version == 1 })
	t.Logf("rolled back to version 1 %v after the order was written", time.Since(ordered).Round(time.Millisecond))
	if code, body := get(t, "http://"+svc.HTTPAddr()+"/readyz"); code != 200 || !strings.Contains(body, "pinned to version 1") {
		t.Fatalf("/readyz while pinned: %d %q", code, body)
	}
	if g := gauge(t, svc, "streamer_model_pinned_version"); g != 1 {
		t.Fatalf("streamer_model_pinned_version %v, want 1", g)
	}
	before := learner.InForce().Stamp.Version
	published := svc.Status().Snapshots
	pinned := stream.write(t, ctx, 300)
	waitFor(t, "predictions while pinned", time.Minute, func() bool { return preds.has(pinned) == len(pinned) })
	waitFor(t, "a solve while pinned", 30*time.Second, func() bool {
		v := learner.InForce().Stamp.Version
		return v > before && svc.Status().Snapshots > published
	})
	checkVersions(t, preds, pinned, func(v uint64) bool { return v == 1 }, "1")

	// A restart obeys the pin before it scores.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	svc, stop = runService(t, cfg)
	learner = svc.Pipeline().Learner()
	<-svc.Started()
	if st, ok := learner.Pinned(); !ok || st.Version != 1 {
		t.Fatalf("restarted pinned to %v (%v), want version 1", st, ok)
	}
	if v := learner.InForce().Stamp.Version; v <= 1 {
		t.Fatalf("restarted at version %d: the newest model was not restored", v)
	}

	// Unpinned: the newest model scores.
	if err := control.Write(ctx, conn, cfg.Kafka.Topics.Control, control.Pin{Model: "default", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "unpinned", 30*time.Second, func() bool { _, ok := learner.Pinned(); return !ok })
	newest := learner.InForce().Stamp.Version
	after := stream.write(t, ctx, 200)
	waitFor(t, "predictions after unpinning", time.Minute, func() bool { return preds.has(after) == len(after) })
	checkVersions(t, preds, after, func(v uint64) bool { return v >= newest }, "the newest")
	if g := gauge(t, svc, "streamer_model_pinned_version"); g != 0 {
		t.Fatalf("streamer_model_pinned_version %v after unpinning, want 0", g)
	}
	if _, body := get(t, "http://"+svc.HTTPAddr()+"/readyz"); strings.Contains(body, "pinned") {
		t.Fatalf("/readyz after unpinning: %q", body)
	}
	if err := stop(); err != nil {
		t.Fatalf("stopping the restarted service: %v", err)
	}
}

func pin(t *testing.T, ctx context.Context, conn *brokers.Connection, cfg config.Config, version uint64) {
	t.Helper()
	p := control.Pin{Model: cfg.Model.Name, Pinned: true, Version: version, At: time.Now()}
	if err := control.Write(ctx, conn, cfg.Kafka.Topics.Control, p); err != nil {
		t.Fatal(err)
	}
}

// checkVersions checks the model version of every prediction of ids.
func checkVersions(t *testing.T, l *predictionLog, ids []string, ok func(uint64) bool, want string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		for _, p := range l.byID[id] {
			if !ok(p.ModelVersion) {
				t.Fatalf("%s predicted by version %d, want %s", id, p.ModelVersion, want)
			}
		}
	}
}
