package service

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/brokerstest"
	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/internal/testlevel"
	"streamer/pipeline"
	"streamer/publish"
	"streamer/snapshot"
	"streamer/synth"
)

// scaleRate is the examples/s of the scale-out test's stream: 400 in CI,
// STREAMER_SCALE_RATE=2000 for the full run documented in docs/SCALING.md.
func scaleRate(t *testing.T) int { return envCount(t, "STREAMER_SCALE_RATE", 400) }

// logEvent is one JSON log line of a process, with the fields the roles
// log.
type logEvent struct {
	Time       time.Time `json:"time"`
	Msg        string    `json:"msg"`
	Epoch      uint64    `json:"epoch"`
	Version    uint64    `json:"model_version"`
	Generation uint64    `json:"generation"`
	Error      string    `json:"error"`
}

// events returns the lines of the process's log whose message is msg.
func (p *process) events(msg string) []logEvent {
	f, err := os.Open(p.log)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []logEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e logEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Msg == msg {
			out = append(out, e)
		}
	}
	return out
}

// producer writes generated examples, a tenth of them labeled 50 examples
// later, at a steady rate until stop is closed, and returns every id it
// wrote. It runs in a goroutine of its own.
func produceUntil(ctx context.Context, addr string, rate int, stop <-chan struct{}) ([]string, error) {
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, Transport: tr}
	defer w.Close()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 13})
	var ids []string
	var pending []kafka.Message
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	per := max(1, rate/100)
	for {
		select {
		case <-stop:
			return ids, nil
		case <-ctx.Done():
			return ids, ctx.Err()
		case <-tick.C:
		}
		var msgs []kafka.Message
		var batch []string
		for range per {
			d := gen.Next()
			v, _ := json.Marshal(map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text})
			msgs = append(msgs, kafka.Message{Topic: "examples", Key: []byte(d.ID), Value: v})
			if (len(ids)+len(batch))%10 == 0 {
				l, _ := json.Marshal(map[string]string{"id": d.ID, "label": d.Label})
				pending = append(pending, kafka.Message{Topic: "labels", Key: []byte(d.ID), Value: l})
			}
			batch = append(batch, d.ID)
		}
		for len(pending) > 5 {
			msgs = append(msgs, pending[0])
			pending = pending[1:]
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			return ids, fmt.Errorf("produce: %w", err)
		}
		ids = append(ids, batch...)
	}
}

// scaleOut is the scale-out test's deployment: processes on one cluster.
type scaleOut struct {
	t    *testing.T
	bin  string
	addr string
	dir  string
	n    int
}

// startScaleOut builds the binary and starts a cluster of 8 partitions with
// the input topics created, for processes to run on; the cluster stops
// when the test ends.
func startScaleOut(t *testing.T, ctx context.Context) (*scaleOut, *brokers.Connection) {
	t.Helper()
	bin := buildStreamer(t)
	cluster, err := embedded.Start(embedded.Config{Partitions: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	addr := cluster.Addrs()[0]
	conn := testConnection(t, brokers.Config{Brokers: []string{addr}}, []string{addr})
	if err := conn.EnsureTopics(ctx, brokers.Topic{Name: "examples", Partitions: 8}, brokers.Topic{Name: "labels", Partitions: 8}); err != nil {
		t.Fatal(err)
	}
	return &scaleOut{t: t, bin: bin, addr: addr, dir: t.TempDir()}, conn
}

func (so *scaleOut) start(role string, extra ...string) *process {
	so.t.Helper()
	args := append([]string{"role=" + role, "kafka.partitions=8", "kafka.session_timeout=6s", "kafka.rebalance_timeout=6s",
		"kafka.retry_backoff=200ms", "window.max_examples=1500", "log.level=info"}, extra...)
	p, err := startProcess(so.t, so.bin, so.addr, so.dir, so.n, args...)
	if err != nil {
		so.t.Fatal(err)
	}
	so.n++
	return p
}

// waitEvent waits until p logs msg and returns the first such line.
func (so *scaleOut) waitEvent(ctx context.Context, p *process, msg string, timeout time.Duration) logEvent {
	so.t.Helper()
	var e []logEvent
	if err := poll(ctx, timeout, func() bool { e = p.events(msg); return len(e) > 0 }); err != nil {
		so.t.Fatalf("%q in %s: %v\nlast lines:\n%s", msg, p.log, err, p.tail(30))
	}
	return e[0]
}

// TestScaleOut runs the roles as real processes on one broker of 8
// partitions: one learner, one standby and three scorers. While examples
// stream in it SIGKILLs a scorer, then the active learner (the standby
// takes over), starts a new standby, and SIGSTOPs the new active learner
// past its session before it SIGCONTs it. Every example must get a
// prediction; at every scorer the (epoch, version) of the models put in
// force must only increase; no scorer may put in force a snapshot the
// paused learner wrote after it was fenced; and the paused learner must
// step down.
func TestScaleOut(t *testing.T) {
	testlevel.Long(t, "the scale-out test runs real processes; it runs without -short")
	rate := scaleRate(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	so, conn := startScaleOut(t, ctx)
	addr := so.addr
	active := so.start(config.RoleLearner)
	first := so.waitEvent(ctx, active, "learner leading", time.Minute)
	standby := so.start(config.RoleLearner)
	so.waitEvent(ctx, standby, "lease standby", time.Minute)
	var scorers []*process
	for range 3 {
		scorers = append(scorers, so.start(config.RoleScorer))
	}

	stop := make(chan struct{})
	var ids []string
	var produceErr error
	var producing sync.WaitGroup
	producing.Go(func() { ids, produceErr = produceUntil(ctx, addr, rate, stop) })
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		producing.Wait()
	}()
	for _, s := range scorers {
		so.waitEvent(ctx, s, "consuming", 2*time.Minute)
	}

	// A scorer dies: its partitions go to the others after the session.
	scorers[0].kill()
	scorerKilled := time.Now()
	t.Logf("scorer 0 killed")

	// The active learner dies: the standby takes over at a later epoch.
	so.waitEvent(ctx, active, "snapshot published", time.Minute)
	killed := time.Now()
	active.kill()
	second := so.waitEvent(ctx, standby, "learner leading", time.Minute)
	published := active.events("snapshot published")
	last := published[len(published)-1]
	// The kill may land after a snapshot is on the topic and before the
	// learner logs it: the standby then restores a later version of the
	// same epoch than the last one logged.
	if r := so.waitEvent(ctx, standby, "restored snapshot", time.Minute); r.Epoch != last.Epoch || r.Version < last.Version {
		t.Errorf("the standby restored e%d/v%d, the dead learner's last logged snapshot was e%d/v%d", r.Epoch, r.Version, last.Epoch, last.Version)
	}
	announced := so.waitEvent(ctx, standby, "snapshot published", time.Minute)
	t.Logf("takeover: epoch %d -> %d, leading %v and first snapshot %v after the kill",
		first.Epoch, second.Epoch, second.Time.Sub(killed).Round(time.Millisecond), announced.Time.Sub(killed).Round(time.Millisecond))
	if second.Epoch <= first.Epoch {
		t.Fatalf("the standby leads at epoch %d, not after the dead learner's %d", second.Epoch, first.Epoch)
	}
	paused := standby

	// The new active learner is paused past its session: a new standby
	// takes over; when the paused one resumes it must find itself fenced.
	third := so.start(config.RoleLearner)
	so.waitEvent(ctx, third, "lease standby", time.Minute)
	if err := paused.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	publishedBefore := len(paused.events("snapshot published"))
	leading := so.waitEvent(ctx, third, "learner leading", time.Minute)
	if leading.Epoch <= second.Epoch {
		t.Fatalf("the third learner leads at epoch %d, not after the paused one's %d", leading.Epoch, second.Epoch)
	}
	// Resume the paused learner once a scorer has the new term's model.
	err := poll(ctx, time.Minute, func() bool {
		for _, e := range scorers[1].events("snapshot put in force") {
			if e.Epoch >= leading.Epoch {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no scorer put the third learner's model in force: %v\n%s", err, scorers[1].tail(20))
	}
	if err := paused.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-paused.exit:
	case <-time.After(time.Minute):
		t.Fatalf("the fenced learner did not step down within a minute of SIGCONT\n%s", paused.tail(20))
	}
	if paused.err == nil || len(paused.events("lease lost")) == 0 {
		t.Errorf("the fenced learner exited with %v, without saying it lost the lease\n%s", paused.err, paused.tail(20))
	}
	late := len(paused.events("snapshot published")) - publishedBefore
	t.Logf("the fenced learner published %d snapshots after it was paused", late)
	// A fenced learner stops publishing at its next heartbeat, which
	// usually comes before its next snapshot; write what it would have
	// written had the snapshot come first: its epoch, a higher version.
	forged := forgeLateSnapshot(t, ctx, conn, second.Epoch)
	for _, s := range scorers[1:] {
		err := poll(ctx, time.Minute, func() bool {
			for _, e := range s.events("snapshot ignored: not newer than the model in force") {
				if (snapshot.Stamp{Epoch: e.Epoch, Version: e.Version}) == forged {
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Errorf("a scorer did not ignore the fenced learner's late %v: %v\n%s", forged, err, s.tail(10))
		}
	}

	// Stream a little more under the third learner, then check.
	so.waitEvent(ctx, third, "snapshot published", time.Minute)
	close(stop)
	producing.Wait()
	if produceErr != nil {
		t.Fatal(produceErr)
	}
	got, err := firstPredictions(t, ctx, addr, ids)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d examples, %d with a prediction", len(ids), len(got))
	gap, part, at := longestOutputGap(t, ctx, conn)
	t.Logf("longest pause in the predictions of an input partition: %v (examples[%d], %v after the scorer's kill)",
		gap.Round(time.Millisecond), part, at.Sub(scorerKilled).Round(time.Millisecond))
	for i, s := range scorers {
		checkInForce(t, i, s, second.Epoch)
	}
}

// longestOutputGap reads the predictions topic and returns the longest
// time between two predictions of examples of one input partition (by
// their Kafka timestamps, set when a scorer's writer sends them), that
// partition, and when the pause began. The stream goes on throughout, so
// a pause is time in which the partition had no scorer, or its scorer was
// stopped by a rebalance. Predictions made again for records consumed
// twice are counted where they were made.
func longestOutputGap(t *testing.T, ctx context.Context, conn *brokers.Connection) (time.Duration, int, time.Time) {
	t.Helper()
	p, err := brokerstest.LongestPause(ctx, conn, "predictions", time.Time{}, predictionSource)
	if err != nil {
		t.Fatal(err)
	}
	return p.Duration, p.Key, p.After
}

// predictionSource returns the input partition of a prediction record.
func predictionSource(m kafka.Message) (int, error) {
	var p pipeline.Prediction
	if err := json.Unmarshal(m.Value, &p); err != nil {
		return 0, err
	}
	return p.Source.Partition, nil
}

// forgeLateSnapshot publishes the newest snapshot on the topic again under
// the fenced epoch with a version above any, as a fenced learner that
// wrote before its heartbeat told it would, and returns its stamp.
func forgeLateSnapshot(t *testing.T, ctx context.Context, conn *brokers.Connection, fenced uint64) snapshot.Stamp {
	t.Helper()
	c, ok, _, err := conn.ReadSnapshots(ctx, "model-snapshots", "default")
	if err != nil || !ok {
		t.Fatalf("newest snapshot: %v, %v", ok, err)
	}
	late := snapshot.Stamp{Epoch: fenced, Version: c.Version + 100}
	w := publish.NewSnapshotWriter(conn, "model-snapshots", publish.WriterConfig{MaxMessageBytes: 4096})
	defer w.Close()
	republish(t, ctx, w, c, late)
	return late
}

// checkInForce checks that the (epoch, version) of the models a scorer
// put in force only increased, and that it never put in force a model of
// the fenced epoch once it had one of a later epoch.
func checkInForce(t *testing.T, i int, p *process, fenced uint64) {
	t.Helper()
	var prev snapshot.Stamp
	laterSeen := false
	for _, e := range p.events("snapshot put in force") {
		st := snapshot.Stamp{Epoch: e.Epoch, Version: e.Version}
		if !st.Newer(prev) {
			t.Errorf("scorer %d put %v in force after %v", i, st, prev)
		}
		if laterSeen && e.Epoch == fenced {
			t.Errorf("scorer %d put the fenced learner's %v in force after a later epoch's model", i, st)
		}
		laterSeen = laterSeen || e.Epoch > fenced
		prev = st
	}
	t.Logf("scorer %d: last model in force %v, %d snapshots ignored", i, prev, len(p.events("snapshot ignored: not newer than the model in force")))
}
