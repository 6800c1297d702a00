package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/config"
	"streamer/pipeline"
	"streamer/publish"
	"streamer/snapshot"
)

// trainSnapshots runs a service of role all (on a group and predictions
// topic of its own) or learner until it has published at least n
// snapshots, then stops it: the snapshot topic then holds n versions or
// more, and nothing publishes another.
func trainSnapshots(t *testing.T, ctx context.Context, addrs []string, stream *streamWriter, role string, n int64) {
	t.Helper()
	trainer := startService(t, testConfig(t, addrs, "role="+role, "kafka.group=trainer", "kafka.topics.predictions=trainer-predictions"), testLogger(t))
	for trainer.svc.Status().Snapshots < n {
		before := trainer.svc.Status().Snapshots
		stream.write(t, ctx, 100)
		waitFor(t, fmt.Sprintf("snapshot %d", before+1), time.Minute, func() bool { return trainer.svc.Status().Snapshots > before })
	}
	if err := trainer.stop(); err != nil {
		t.Fatal(err)
	}
}

// trainedScorer is a started scorer whose snapshot topic holds a trained
// model, and what its tests write and read with.
type trainedScorer struct {
	stream *streamWriter
	cfg    config.Config
	svc    *Service
	conn   *brokers.Connection
	newest snapshot.Complete // the newest snapshot when the scorer started
}

// startTrainedScorer writes rows examples drawn with seed, trains one
// snapshot on them, then starts a scorer and waits until it has: the
// set-up of the tests of what a scorer does with the snapshots and orders
// that come after.
func startTrainedScorer(t *testing.T, ctx context.Context, addrs []string, seed uint64, rows int) trainedScorer {
	t.Helper()
	stream := newStreamWriter(t, addrs, seed)
	stream.write(t, ctx, rows)
	trainSnapshots(t, ctx, addrs, stream, config.RoleAll, 1)
	cfg := testConfig(t, addrs, "role=scorer")
	svc := startService(t, cfg, testLogger(t)).svc
	select {
	case <-svc.Started():
	case <-ctx.Done():
		t.Fatal("the scorer did not start")
	}
	conn := testConnection(t, cfg.Brokers(), addrs)
	newest, ok, _, err := conn.ReadSnapshots(ctx, cfg.Kafka.Topics.Snapshots, "default")
	if err != nil || !ok {
		t.Fatalf("the trained snapshot: %v, %v", ok, err)
	}
	return trainedScorer{stream: stream, cfg: cfg, svc: svc, conn: conn, newest: newest}
}

// republish publishes the model of c again under stamp st, as the learner
// of that term would have.
func republish(t *testing.T, ctx context.Context, w *publish.SnapshotWriter, c snapshot.Complete, st snapshot.Stamp) {
	t.Helper()
	snap, err := snapshot.Decode(c.Data)
	if err != nil {
		t.Fatal(err)
	}
	snap.Epoch, snap.Version = st.Epoch, st.Version
	data, err := snapshot.Encode(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Publish(ctx, snap.Name, st, data); err != nil {
		t.Fatal(err)
	}
}

// inForce returns the stamp of the model a scorer has in force.
func (s *Service) inForce() snapshot.Stamp {
	s.roles.mu.Lock()
	defer s.roles.mu.Unlock()
	return s.roles.inForce
}

// TestScorerBootstrapsFromCompactedTopic: a scorer started after the
// snapshot topic was compacted (a learner's older versions gone, the
// newest kept)
// becomes ready with the newest (epoch, version) and scores every example
// with it.
func TestScorerBootstrapsFromCompactedTopic(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stream := newStreamWriter(t, addrs, 11)
	stream.write(t, ctx, 200)
	trainSnapshots(t, ctx, addrs, stream, config.RoleLearner, 3)
	cfg := testConfig(t, addrs, "role=scorer")
	conn := testConnection(t, cfg.Brokers(), addrs)
	newest, ok, _, err := conn.ReadSnapshots(ctx, cfg.Kafka.Topics.Snapshots, "default")
	if err != nil || !ok || newest.Version < 3 || newest.Epoch == 0 {
		t.Fatalf("newest snapshot before compaction: v%d, %v, %v", newest.Version, ok, err)
	}
	cluster.Compact()
	for v := uint64(1); v < newest.Version; v++ {
		if _, err := conn.ReadSnapshotVersion(ctx, cfg.Kafka.Topics.Snapshots, "default", snapshot.AnyEpochVersion(v)); !errors.Is(err, brokers.ErrNoSnapshot) {
			t.Fatalf("version %d on the compacted snapshot topic: %v", v, err)
		}
	}

	preds := readPredictions(t, ctx, addrs)
	scorer := startService(t, cfg, testLogger(t)).svc
	select {
	case <-scorer.Started():
	case <-time.After(time.Minute):
		t.Fatal("the scorer did not start within a minute")
	}
	waitFor(t, "the scorer to be ready", 30*time.Second, func() bool { code, _ := readyz(t, scorer); return code == http.StatusOK })
	if got := scorer.inForce(); got != newest.Stamp() {
		t.Fatalf("in force %v after bootstrapping from the compacted topic, the newest snapshot is %v", got, newest.Stamp())
	}
	ids := stream.write(t, ctx, 200)
	waitFor(t, "a prediction of every example", time.Minute, func() bool { return preds.has(ids) == len(ids) })
	checkVersions(t, preds, ids, func(v uint64) bool { return v == newest.Version }, fmt.Sprint(newest.Version))
	preds.mu.Lock()
	defer preds.mu.Unlock()
	for _, id := range ids {
		if p := preds.byID[id][0]; p.Label == nil {
			t.Errorf("%s: prediction without a label: %+v", id, p)
		}
	}
}

// TestScorerPredictsOverHTTPAsOnTheTopic: for the same examples and model
// version, a scorer's POST /v1/predict answers, single and in a batch, the
// predictions it publishes on the predictions topic (but for the source).
func TestScorerPredictsOverHTTPAsOnTheTopic(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stream := newStreamWriter(t, addrs, 12)
	stream.write(t, ctx, 200)
	trainSnapshots(t, ctx, addrs, stream, config.RoleAll, 1)
	preds := readPredictions(t, ctx, addrs)
	scorer := startService(t, testConfig(t, addrs, "role=scorer"), testLogger(t)).svc
	<-scorer.Started()
	version := scorer.inForce().Version
	if version == 0 {
		t.Fatal("the started scorer has no model in force")
	}

	probe := probes(5)
	var msgs []kafka.Message
	for i, p := range probe {
		msgs = append(msgs, kafkaMessage("examples", fmt.Sprint("probe-", i), p))
	}
	if err := stream.w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	topic := make([]pipeline.Prediction, len(probe))
	waitFor(t, "the probes' predictions", time.Minute, func() bool {
		for i := range probe {
			var ok bool
			if topic[i], ok = preds.nth(fmt.Sprint("probe-", i), 1); !ok {
				return false
			}
		}
		return true
	})

	url := "http://" + scorer.HTTPAddr() + "/v1/predict"
	var got []pipeline.Prediction
	for _, p := range probe {
		code, body := post(t, url, p)
		var single pipeline.Prediction
		if err := json.Unmarshal(body, &single); code != http.StatusOK || err != nil {
			t.Fatalf("single: %d %s: %v", code, body, err)
		}
		got = append(got, single)
	}
	code, body := post(t, url, "["+strings.Join(probe, ",")+"]")
	var batch []pipeline.Prediction
	if err := json.Unmarshal(body, &batch); code != http.StatusOK || err != nil || len(batch) != len(probe) {
		t.Fatalf("batch: %d %s: %v", code, body, err)
	}
	if now := scorer.inForce().Version; now != version {
		t.Fatalf("the model in force moved from version %d to %d with no learner", version, now)
	}
	for i, g := range append(got, batch...) {
		want := topic[i%len(probe)]
		if want.ModelVersion != version || g.Source != httpSource || g.ModelVersion != version || g.Label == nil {
			t.Fatalf("probe %d: HTTP %+v, topic %+v, want model version %d", i%len(probe), g, want, version)
		}
		g.Source = want.Source
		if !reflect.DeepEqual(g, want) {
			gb, _ := g.Marshal()
			wb, _ := want.Marshal()
			t.Errorf("probe %d over HTTP: %s\non the topic: %s", i%len(probe), gb, wb)
		}
	}
}
