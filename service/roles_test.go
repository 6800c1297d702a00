package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"streamer/config"
	"streamer/control"
	"streamer/internal/testlevel"
	"streamer/pipeline"
	"streamer/publish"
	"streamer/snapshot"
)

// readyz returns /readyz's status and body.
func readyz(t *testing.T, svc *Service) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + svc.HTTPAddr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestScorerFollowsSnapshots: a scorer is not ready, and reads nothing of
// the examples, until a snapshot is on the topic; then it scores every
// example with it, keeps no window, and puts in force only strictly newer
// (epoch, version) stamps. Its predictions, on the topic and over HTTP,
// carry the stamp of the model in force.
func TestScorerFollowsSnapshots(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scorer := startService(t, testConfig(t, addrs, "role=scorer"), testLogger(t))
	svc := scorer.svc
	waitFor(t, "the HTTP listener", 10*time.Second, func() bool { return svc.HTTPAddr() != "" })
	waitFor(t, "the scorer to say it has no model", 20*time.Second, func() bool {
		code, body := readyz(t, svc)
		return code == http.StatusServiceUnavailable && strings.Contains(body, "scorer")
	})
	stream := newStreamWriter(t, addrs, 5)
	ids := stream.write(t, ctx, 300)

	// A process of role all, on a group and predictions topic of its own,
	// learns and publishes snapshots.
	trainer := startService(t, testConfig(t, addrs, "kafka.group=trainer", "kafka.topics.predictions=trainer-predictions"), testLogger(t))
	ids = append(ids, stream.write(t, ctx, 300)...)
	waitFor(t, "a snapshot", time.Minute, func() bool { return trainer.svc.Status().Snapshots > 0 })
	if err := trainer.stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the scorer to be ready", time.Minute, func() bool { code, _ := readyz(t, svc); return code == http.StatusOK })
	preds := readPredictions(t, ctx, addrs)
	waitFor(t, "a prediction of every example", time.Minute, func() bool { return preds.has(ids) == len(ids) })
	if n, _ := svc.Pipeline().Learner().WindowSize(); n != 0 {
		t.Fatalf("the scorer's window holds %d examples", n)
	}
	preds.mu.Lock()
	for _, id := range ids {
		if p := preds.byID[id][0]; p.Label == nil || p.ModelVersion == 0 {
			t.Errorf("%s: prediction without a model: %+v", id, p)
		}
	}
	preds.mu.Unlock()

	conn := testConnection(t, svc.cfg.Brokers(), addrs)
	newest, _, _, err := conn.ReadSnapshots(ctx, "model-snapshots", "default")
	if err != nil {
		t.Fatal(err)
	}
	w := publish.NewSnapshotWriter(conn, "model-snapshots", publish.WriterConfig{MaxMessageBytes: 1 << 20})
	defer w.Close()
	before := svc.inForce()
	if before != newest.Stamp() {
		t.Fatalf("in force %v, the newest snapshot is %v", before, newest.Stamp())
	}
	steps := []struct {
		st   snapshot.Stamp
		want snapshot.Stamp
	}{
		{snapshot.Stamp{Version: before.Version}, before},                              // read again: not newer
		{snapshot.Stamp{Epoch: 3, Version: 1}, snapshot.Stamp{Epoch: 3, Version: 1}},   // a new term, whatever its version
		{snapshot.Stamp{Epoch: 2, Version: 500}, snapshot.Stamp{Epoch: 3, Version: 1}}, // a fenced learner's late snapshot
		{snapshot.Stamp{Epoch: 3, Version: 2}, snapshot.Stamp{Epoch: 3, Version: 2}},   // the next solve
	}
	for _, step := range steps {
		republish(t, ctx, w, newest, step.st)
		waitFor(t, "the scorer to read "+step.st.String(), 30*time.Second, func() bool {
			return svc.followed(step.st)
		})
		if got := svc.inForce(); got != step.want {
			t.Fatalf("after %v: in force %v, want %v", step.st, got, step.want)
		}
		ids := stream.write(t, ctx, 20)
		waitFor(t, "the predictions after "+step.st.String(), time.Minute, func() bool { return preds.has(ids) == len(ids) })
		checkStamps(t, preds, ids, step.want)
		checkHTTPStamp(t, svc, step.want)
	}
}

// checkStamps checks that every prediction of ids was made by the model of
// stamp want.
func checkStamps(t *testing.T, l *predictionLog, ids []string, want snapshot.Stamp) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		for _, p := range l.byID[id] {
			if got := (snapshot.Stamp{Epoch: p.ModelEpoch, Version: p.ModelVersion}); got != want || p.Label == nil {
				t.Fatalf("%s predicted by %v (label %v), want %v", id, got, p.Label, want)
			}
		}
	}
}

// checkHTTPStamp checks that svc's /v1/predict scores with the model of
// stamp want.
func checkHTTPStamp(t *testing.T, svc *Service, want snapshot.Stamp) {
	t.Helper()
	code, body := post(t, "http://"+svc.HTTPAddr()+"/v1/predict", probes(1)[0])
	var p pipeline.Prediction
	if err := json.Unmarshal(body, &p); code != http.StatusOK || err != nil {
		t.Fatalf("/v1/predict: %d %s: %v", code, body, err)
	}
	if got := (snapshot.Stamp{Epoch: p.ModelEpoch, Version: p.ModelVersion}); got != want {
		t.Fatalf("/v1/predict answered with %v, want %v: %s", got, want, body)
	}
}

// followed reports whether the last snapshot the follower read is st.
func (s *Service) followed(st snapshot.Stamp) bool {
	s.roles.mu.Lock()
	defer s.roles.mu.Unlock()
	return s.roles.lastRead == st
}

// TestLearnerHandsOver: of two learners, the first leads and the second
// waits as a standby (not ready, publishing nothing); when the first stops,
// it hands the lease over, and the second restores the first's last
// snapshot and leads at a later epoch, publishing under it.
func TestLearnerHandsOver(t *testing.T) {
	testlevel.Long(t, "waits for a lease to pass")
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	stream := newStreamWriter(t, addrs, 9)
	stream.write(t, ctx, 10) // the input topics exist before the learners start
	first := startService(t, testConfig(t, addrs, "role=learner"), testLogger(t))
	<-first.svc.Started()
	second := startService(t, testConfig(t, addrs, "role=learner"), testLogger(t))
	// Two snapshots: the first solved model, then one of more examples (a
	// solve reads every label on the brokers first, so one write of the
	// whole stream could be learned in one solve).
	stream.write(t, ctx, 600)
	waitFor(t, "the first learner's first snapshot", 2*time.Minute, func() bool { return first.svc.Status().Snapshots >= 1 })
	stream.write(t, ctx, 200)
	waitFor(t, "the first learner's second snapshot", 2*time.Minute, func() bool { return first.svc.Status().Snapshots >= 2 })
	waitFor(t, "the standby's HTTP listener", 10*time.Second, func() bool { return second.svc.HTTPAddr() != "" })
	if code, body := readyz(t, second.svc); code != http.StatusServiceUnavailable || !strings.Contains(body, "standby") {
		t.Fatalf("the standby's /readyz: %d %q", code, body)
	}
	if n := second.svc.Status().Snapshots; n != 0 {
		t.Fatalf("the standby published %d snapshots", n)
	}
	firstEpoch := first.svc.roles.epoch.Load()
	if firstEpoch == 0 {
		t.Fatal("the leading learner has no epoch")
	}
	var epoch dto.Metric
	if err := first.svc.metrics.ModelEpoch.Write(&epoch); err != nil || epoch.GetGauge().GetValue() != float64(firstEpoch) {
		t.Errorf("the leading learner's streamer_model_epoch is %v (%v), it leads at %d", epoch.GetGauge().GetValue(), err, firstEpoch)
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	conn := testConnection(t, first.svc.cfg.Brokers(), addrs)
	last, ok, _, err := conn.ReadSnapshots(ctx, "model-snapshots", "default")
	if err != nil || !ok || last.Epoch != firstEpoch {
		t.Fatalf("the first learner's last snapshot: %v, %v, epoch %d (it led at %d)", ok, err, last.Epoch, firstEpoch)
	}
	select {
	case <-second.svc.Started():
	case <-time.After(2 * time.Minute):
		t.Fatal("the standby did not take over within two minutes of the leader's stop")
	}
	if got := second.svc.Status().RestoredVersion; got != last.Version {
		t.Fatalf("the standby restored version %d, the last snapshot is %v", got, last.Stamp())
	}
	if e := second.svc.roles.epoch.Load(); e <= firstEpoch {
		t.Fatalf("the standby leads at epoch %d, not after %d", e, firstEpoch)
	}
	waitFor(t, "the new leader's snapshot", 2*time.Minute, func() bool { return second.svc.Status().Snapshots > 0 })
	newest, _, _, err := conn.ReadSnapshots(ctx, "model-snapshots", "default")
	if err != nil || !newest.Stamp().Newer(last.Stamp()) || newest.Epoch != second.svc.roles.epoch.Load() {
		t.Fatalf("newest snapshot %v after the hand-over (was %v): %v", newest.Stamp(), last.Stamp(), err)
	}
	// The restored model was announced under the new epoch before its
	// snapshot, as a restore of the first learner's last.
	restamped := snapshot.Stamp{Epoch: second.svc.roles.epoch.Load(), Version: last.Version}
	found := false
	for _, a := range readAnnouncements(t, ctx, conn) {
		if a.Stamp() == restamped {
			found = a.Origin == snapshot.OriginRestore && a.From != nil && *a.From == last.Stamp()
		}
	}
	if !found {
		t.Errorf("no announcement of %v as the restore of %v", restamped, last.Stamp())
	}
}

// TestScorerObeysPin: a scorer pinned to the version in force keeps
// scoring with it when a newer snapshot comes (which it still follows),
// and scores with the newest once unpinned.
func TestScorerObeysPin(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sc := startTrainedScorer(t, ctx, addrs, 6, 300)
	cfg, svc, conn, newest := sc.cfg, sc.svc, sc.conn, sc.newest
	pinned := newest.Version
	pin(t, ctx, conn, cfg, pinned)
	waitFor(t, "the pin obeyed", 30*time.Second, func() bool { st, ok := svc.pipe.Learner().Pinned(); return ok && st == newest.Stamp() })

	next := snapshot.Stamp{Epoch: newest.Epoch + 1, Version: pinned + 1}
	w := publish.NewSnapshotWriter(conn, cfg.Kafka.Topics.Snapshots, publish.WriterConfig{MaxMessageBytes: 1 << 20})
	defer w.Close()
	republish(t, ctx, w, newest, next)
	waitFor(t, "the newer snapshot followed", 30*time.Second, func() bool { return svc.followed(next) })
	if st := svc.pipe.Learner().Scoring().Stamp; st != newest.Stamp() {
		t.Fatalf("pinned to %v, %v scores", newest.Stamp(), st)
	}
	checkHTTPStamp(t, svc, newest.Stamp())
	if v := svc.pipe.Learner().InForce().Stamp.Version; v != next.Version {
		t.Fatalf("the newest model is version %d, want %d", v, next.Version)
	}
	if err := control.Write(ctx, conn, cfg.Kafka.Topics.Control, control.Pin{Model: "default", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the newest scores once unpinned", 30*time.Second, func() bool { return svc.pipe.Learner().Scoring().Stamp == next })
	checkHTTPStamp(t, svc, next)
}

// TestScorerCatchesUpBeforeANewPartition: what a scorer does before the
// first record of a partition it did not read yet: it returns only once
// its follower has offered every snapshot published before, so that the
// partition's predictions do not go back to an older model.
func TestScorerCatchesUpBeforeANewPartition(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sc := startTrainedScorer(t, ctx, addrs, 7, 300)
	svc, newest := sc.svc, sc.newest
	w := publish.NewSnapshotWriter(sc.conn, sc.cfg.Kafka.Topics.Snapshots, publish.WriterConfig{MaxMessageBytes: 4096})
	defer w.Close()
	for i := range uint64(3) {
		next := snapshot.Stamp{Epoch: newest.Epoch + 1, Version: newest.Version + 1 + i}
		republish(t, ctx, w, newest, next)
		svc.awaitSnapshots(100 + int(i))
		if !svc.followed(next) {
			t.Fatalf("caught up before the follower offered %v", next)
		}
	}
}

// TestScorerCatchesUpWhenAPartitionComesBack: a partition that moved to
// another scorer and comes back after a rebalance is caught up on again
// before its first record, like a partition never read: the other scorer
// may have scored it with a model this one has not read yet.
func TestScorerCatchesUpWhenAPartitionComesBack(t *testing.T) {
	testlevel.Long(t, "waits for two rebalances")
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stream := newStreamWriter(t, addrs, 7)
	stream.write(t, ctx, 300)
	trainSnapshots(t, ctx, addrs, stream, config.RoleAll, 1)
	catchUps := func(r *running) float64 { return testutil.ToFloat64(r.svc.metrics.CatchUps) }
	// Records keep coming while the test waits, so that every partition
	// has a first record in every generation.
	keepWriting := func(what string, cond func() bool) {
		t.Helper()
		waitFor(t, what, time.Minute, func() bool {
			stream.write(t, ctx, 20)
			return cond()
		})
	}
	a := startService(t, testConfig(t, addrs, "role=scorer"), testLogger(t))
	keepWriting("the first scorer to catch up on both partitions", func() bool { return catchUps(a) == 2 })
	b := startService(t, testConfig(t, addrs, "role=scorer"), testLogger(t))
	keepWriting("the second scorer to get a partition", func() bool { return catchUps(b) >= 1 })
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	before := catchUps(a)
	keepWriting("the first scorer to catch up on both partitions again", func() bool { return catchUps(a) >= before+2 })
}

// TestScorerPinsTheExactStamp: the learners of epochs 1 and 2 both made
// the version the scorer has in force (the same model, republished). An
// order of that version under any epoch (written before orders named
// epochs) pins the model in force; an order of one epoch pins that
// snapshot, which then scores, and says so in its predictions; an order of
// a stamp kept nowhere is not obeyed, and /readyz says so.
func TestScorerPinsTheExactStamp(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sc := startTrainedScorer(t, ctx, addrs, 7, 200)
	stream, cfg, svc, conn, newest := sc.stream, sc.cfg, sc.svc, sc.conn, sc.newest
	w := publish.NewSnapshotWriter(conn, cfg.Kafka.Topics.Snapshots, publish.WriterConfig{MaxMessageBytes: 1 << 20})
	defer w.Close()
	v := newest.Version
	for epoch := uint64(1); epoch <= 2; epoch++ {
		republish(t, ctx, w, newest, snapshot.Stamp{Epoch: epoch, Version: v})
	}
	e2 := snapshot.Stamp{Epoch: 2, Version: v}
	waitFor(t, "epoch 2 in force", 30*time.Second, func() bool { return svc.inForce() == e2 })

	pinnedTo := func(want snapshot.Stamp) func() bool {
		return func() bool { st, ok := svc.pipe.Learner().Pinned(); return ok && st == want }
	}
	pin(t, ctx, conn, cfg, v) // no epoch
	waitFor(t, "version of any epoch pinned", 30*time.Second, pinnedTo(e2))
	for _, st := range []snapshot.Stamp{{Epoch: 1, Version: v}, {Epoch: 0, Version: v}} {
		if err := control.Write(ctx, conn, cfg.Kafka.Topics.Control, control.PinStamp("default", st)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, st.String()+" pinned", 30*time.Second, pinnedTo(st))
		checkHTTPStamp(t, svc, st)
		ids := stream.write(t, ctx, 10)
		preds := readPredictions(t, ctx, addrs)
		waitFor(t, "the predictions while "+st.String()+" is pinned", time.Minute, func() bool { return preds.has(ids) == len(ids) })
		checkStamps(t, preds, ids, st)
	}

	missing := snapshot.Stamp{Epoch: 5, Version: v}
	if err := control.Write(ctx, conn, cfg.Kafka.Topics.Control, control.PinStamp("default", missing)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the missing stamp reported", 30*time.Second, func() bool {
		_, body := readyz(t, svc)
		return strings.Contains(body, fmt.Sprintf("pinned to version %d of epoch 5, which is not in force", v))
	})
	checkHTTPStamp(t, svc, snapshot.Stamp{Version: v})
}
