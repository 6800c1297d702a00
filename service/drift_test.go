package service

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/publish"
	"streamer/snapshot"
)

// TestDriftAlarmIsSaid: once the labels of a stream the model learned
// start to say the opposite class, the labels detector alarms, and the
// alarm is counted, logged, said by /readyz (which stays ready) and
// written to the events topic with the model in force; the model solved
// after forgetting is published in a snapshot at once, and the labels it
// forgot stay forgotten after a restart, which says the alarm too.
func TestDriftAlarmIsSaid(t *testing.T) {
	if testing.Short() {
		t.Skip("streams a thousand examples through the service")
	}
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A window that keeps the first labels: the model learns the new ones
	// only once they outnumber the old, however fast it solves.
	var logs lockedBuffer
	// Snapshots only after the first solve and a drift reaction's, and
	// each written to a file too.
	file := filepath.Join(t.TempDir(), "model.snap")
	run := startService(t, testConfig(t, addrs, "drift.spacing=100000", "window.max_examples=2000",
		"snapshot.every_solves=1000", "snapshot.every=1h", "snapshot.file="+file), newTextLogger(&logs))
	svc, stop := run.svc, run.stop
	<-svc.Started()
	base := "http://" + svc.HTTPAddr()
	stream := newStreamWriter(t, addrs, 5)
	stream.write(t, ctx, 400)
	waitFor(t, "ready", 30*time.Second, func() bool { code, _ := get(t, base+"/readyz"); return code == http.StatusOK })
	if got := metric(t, base, `streamer_drift_alarms_total{detector="labels"}`); got != 0 {
		t.Fatalf("alarms before the change: %v", got)
	}
	// Labels scored against a model that learned: the detector's
	// reference is the model's error, not that of a first model solved
	// on a few labels while the backlog was read.
	stream.write(t, ctx, 400)
	waitFor(t, "a model solved on the first labels", 30*time.Second, func() bool { return svc.Pipeline().Stats().Solves >= 2 })
	classes := map[string]bool{}
	stream.relabel = func(l string) string {
		classes[l] = true
		for c := range classes {
			if c != l {
				return c
			}
		}
		return l
	}
	stream.write(t, ctx, 40) // every class seen
	stream.write(t, ctx, 800)
	waitFor(t, "a labels alarm", time.Minute, func() bool {
		return metric(t, base, `streamer_drift_alarms_total{detector="labels"}`) == 1
	})
	code, body := get(t, base+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "drift: watching labels") || !strings.Contains(body, "last: labels at example") || !strings.Contains(body, "classes: ") {
		t.Errorf("/readyz after the alarm: %d %q", code, body)
	}
	if metric(t, base, `streamer_drift_statistic{detector="labels"}`) < 0 || metric(t, base, `streamer_drift_threshold{detector="labels"}`) <= 0 {
		t.Error("no statistic or threshold of the labels detector on /metrics")
	}
	if l := logs.String(); !strings.Contains(l, `msg="drift alarm" detector=labels`) || !strings.Contains(l, "reactions=") || !strings.Contains(l, "classes=") {
		t.Errorf("no log line of the alarm with its detector, reactions and classes:\n%s", l)
	}
	ev := readDriftEvent(t, ctx, addrs, svc.cfg.Kafka.Topics.Events)
	if ev.Event != "drift_alarm" || ev.Detector != "labels" || ev.Model != svc.cfg.Model.Name || ev.ModelVersion == 0 ||
		ev.Statistic <= ev.Threshold || ev.Examples < 840 || ev.Time.IsZero() || !strings.Contains(strings.Join(ev.Reactions, ","), "forget") || len(ev.Classes) == 0 {
		t.Errorf("event %+v", ev)
	}
	waitFor(t, "the solve that forgets", 30*time.Second, func() bool { return len(svc.Pipeline().Learner().Unlabeled()) > 0 })
	// Scorers take the model that forgot at once, not some solves later.
	waitFor(t, "a snapshot of the model that forgot", 30*time.Second, func() bool {
		snap, err := snapshot.ReadFile(file)
		return err == nil && snap.Progress != nil && len(snap.Progress.Unlabeled) > 0
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	forgotten := svc.Pipeline().Learner().Unlabeled()

	// A restart reads the labels topic again, and forgets them again.
	again := startService(t, testConfig(t, addrs, "drift.spacing=100000", "window.max_examples=2000"), newTextLogger(&lockedBuffer{}))
	<-again.svc.Started()
	if got := again.svc.Pipeline().Learner().Unlabeled(); !slices.Equal(got, forgotten) {
		t.Errorf("after a restart %d labels forgotten, before it %d", len(got), len(forgotten))
	}
	readyz := "http://" + again.svc.HTTPAddr() + "/readyz"
	waitFor(t, "ready after the restart", 30*time.Second, func() bool { code, _ := get(t, readyz); return code == http.StatusOK })
	if _, body := get(t, readyz); !strings.Contains(body, "1 alarms; last: labels at example") {
		t.Errorf("/readyz after a restart does not say the alarm before it: %q", body)
	}
	if err := again.stop(); err != nil {
		t.Fatal(err)
	}
}

func readDriftEvent(t *testing.T, ctx context.Context, addrs []string, topic string) publish.DriftEvent {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Partition: 0, Dialer: &kafka.Dialer{Timeout: 10 * time.Second}})
	defer r.Close()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m, err := r.ReadMessage(rctx)
	if err != nil {
		t.Fatalf("read %s: %v", topic, err)
	}
	var ev publish.DriftEvent
	if err := json.Unmarshal(m.Value, &ev); err != nil {
		t.Fatalf("%s: %q: %v", topic, m.Value, err)
	}
	if string(m.Key) != ev.Model {
		t.Errorf("key %q, model %q", m.Key, ev.Model)
	}
	return ev
}

// TestDriftWatchSurvivesARestart: the labels the labels detector was
// shown since its last alarm go into the snapshot, and the service
// restarted from it takes them up (the detector is given them again:
// pipeline's TestDriftWatchContinuesAcrossARestart shows what that buys).
func TestDriftWatchSurvivesARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4)
	cfg := testConfig(t, f.addrs)
	svc, stop := runService(t, cfg)
	f.feed(t, svc, 6, 100, true)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	before := svc.Pipeline().Progress().Drift
	if before == nil || strings.Count(before.Fed, "1") < 20 {
		t.Fatalf("the labels detector was given too few labels to test: %+v", before)
	}

	svc2, _ := runService(t, cfg)
	<-svc2.Started()
	after := svc2.Pipeline().Progress().Drift
	if after == nil || !slices.Equal(after.Labels(), before.Labels()) {
		t.Fatalf("after the restart the drift watch holds %+v, before it %+v", after, before)
	}
	t.Logf("%d labels taken up, %d given to the detector", len(after.IDs), strings.Count(after.Fed, "1"))
}
