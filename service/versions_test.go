package service

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"streamer/brokers"
	"streamer/brokers/brokerstest"
	"streamer/brokers/embedded"
	"streamer/internal/testlevel"
	"streamer/pipeline"
	"streamer/snapshot"
)

// TestModelVersionsAreUniqueAcrossACrash SIGKILLs a `streamer run` that
// publishes a snapshot of its first model only, so that the versions it
// solved after it stamped predictions and reached no topic but the
// versions topic, and restarts it from that snapshot. No two models may
// carry one version: every stamp is announced once, the restarted process
// numbers after every version the killed one stamped, and `streamer model
// list` lists every version a prediction carries, those without a
// snapshot as not pinnable.
func TestModelVersionsAreUniqueAcrossACrash(t *testing.T) {
	testlevel.Long(t, "the crash test runs real processes; it runs without -short")
	bin := buildStreamer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cluster, err := embedded.Start(embedded.Config{Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	addr := cluster.Addrs()[0]
	conn, err := (brokers.Config{Brokers: []string{addr}}).Connect([]string{addr})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dir := t.TempDir()
	const n, rate = 8000, 400
	produced, stopProducing := produceInBackground(ctx, t, addr, n, rate)
	defer stopProducing()
	preds := readPredictions(t, ctx, []string{addr})
	// Only each process's first model is snapshotted while it runs: one
	// algorithm, since a model of another would be published at once.
	sets := []string{"snapshot.every_solves=1000", "snapshot.every=1h", "schedule.solve_examples=200", "solver.algorithm=tsvm"}
	proc, err := startProcess(t, bin, addr, dir, 0, sets...)
	if err != nil {
		t.Fatal(err)
	}

	var first snapshot.Snapshot
	err = poll(ctx, 2*time.Minute, func() bool {
		if first.Version == 0 {
			first, _ = newestSnapshot(ctx, conn)
		}
		return first.Version > 0 && highestStamped(preds.all()) >= first.Version+3
	})
	if err != nil {
		t.Fatalf("three versions after the first snapshot (version %d) stamping predictions: %v\n%s", first.Version, err, proc.tail(20))
	}
	proc.kill()
	ends, err := conn.Offsets(ctx, "predictions", []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := poll(ctx, time.Minute, func() bool { return preds.readUpTo(ends) }); err != nil {
		t.Fatalf("the killed process's predictions read back: %v", err)
	}
	stampedBefore := highestStamped(preds.upTo(ends))
	announcedBefore := readAnnouncements(t, ctx, conn)
	t.Logf("killed after snapshot version %d; its predictions stamped up to version %d, %d versions announced",
		first.Version, stampedBefore, len(announcedBefore))

	proc, err = startProcess(t, bin, addr, dir, 1, sets...)
	if err != nil {
		t.Fatal(err)
	}
	if err := poll(ctx, time.Minute, func() bool { _, ok := proc.restoredVersion(); return ok }); err != nil {
		t.Fatalf("the restarted process to start: %v\n%s", err, proc.tail(20))
	}
	if got, _ := proc.restoredVersion(); got != first.Version {
		t.Errorf("restored version %d, the snapshot was %d", got, first.Version)
	}
	res := <-produced
	err = poll(ctx, 2*time.Minute, func() bool {
		return preds.has(res.ids) == len(res.ids) && highestStamped(preds.all()) > stampedBefore
	})
	if err != nil {
		t.Fatalf("every example predicted, some by a model of the restarted process: %d of %d: %v\n%s", preds.has(res.ids), len(res.ids), err, proc.tail(20))
	}
	if !proc.signal(syscall.SIGTERM, 30*time.Second) {
		t.Fatal("the process did not stop within 30s of SIGTERM")
	}

	announced := readAnnouncements(t, ctx, conn)
	byStamp := map[snapshot.Stamp]snapshot.Announcement{}
	for _, a := range announced {
		if prev, ok := byStamp[a.Stamp()]; ok {
			t.Errorf("%v announced twice: %+v and %+v", a.Stamp(), prev, a)
		}
		byStamp[a.Stamp()] = a
	}
	for _, a := range announced[len(announcedBefore):] {
		if a.Version <= stampedBefore {
			t.Errorf("the restarted process announced version %d, which the killed one may have stamped (up to %d)", a.Version, stampedBefore)
		}
	}
	// The restarted process scores with the model it restored, then with
	// models numbered after every version the killed one stamped.
	reused := map[uint64]int{}
	for _, p := range preds.after(ends) {
		if v := p.ModelVersion; p.Label != nil && v != first.Version && v <= stampedBefore {
			reused[v]++
		}
	}
	if len(reused) > 0 {
		t.Errorf("the restarted process stamped predictions (by version: %v) with numbers the killed one used (up to %d) and it did not restore (%d)",
			reused, stampedBefore, first.Version)
	}
	stamped := map[snapshot.Stamp]int{}
	for _, p := range preds.all() {
		if p.Label != nil {
			stamped[snapshot.Stamp{Epoch: p.ModelEpoch, Version: p.ModelVersion}]++
		}
	}
	for st, count := range stamped {
		if _, ok := byStamp[st]; !ok {
			t.Errorf("%v stamped %d predictions and was never announced", st, count)
		}
	}

	listed := listModelVersions(t, bin, addr)
	unpinnable := 0
	for st, count := range stamped {
		k, ok := listed[st]
		switch {
		case !ok:
			t.Errorf("%v stamped %d predictions and streamer model list does not list it", st, count)
		case !k.Announced || k.Window != byStamp[st].Window:
			t.Errorf("%v listed as %+v, announced as %+v", st, k, byStamp[st])
		case !k.Snapshot:
			unpinnable++
		}
	}
	if unpinnable == 0 {
		t.Errorf("every stamped version has a snapshot: the test killed no process between snapshots")
	}
	t.Logf("%d versions stamped %d predictions, %d of them without a snapshot; announcements took %s",
		len(stamped), len(preds.all()), unpinnable, announceSeconds(t, dir))
}

// all returns every prediction read so far.
func (l *predictionLog) all() []pipeline.Prediction {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []pipeline.Prediction
	for _, ps := range l.order {
		out = append(out, ps...)
	}
	return out
}

// readUpTo reports whether every partition was read up to its end in ends.
func (l *predictionLog) readUpTo(ends map[int]brokers.OffsetRange) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, r := range ends {
		if int64(len(l.order[p])) < r.End {
			return false
		}
	}
	return true
}

// upTo returns the predictions of each partition before its end in ends.
func (l *predictionLog) upTo(ends map[int]brokers.OffsetRange) []pipeline.Prediction {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []pipeline.Prediction
	for p, r := range ends {
		out = append(out, l.order[p][:min(int64(len(l.order[p])), r.End)]...)
	}
	return out
}

// after returns the predictions of each partition from its end in ends.
func (l *predictionLog) after(ends map[int]brokers.OffsetRange) []pipeline.Prediction {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []pipeline.Prediction
	for p, r := range ends {
		out = append(out, l.order[p][min(int64(len(l.order[p])), r.End):]...)
	}
	return out
}

// highestStamped is the highest model version among preds.
func highestStamped(preds []pipeline.Prediction) uint64 {
	var v uint64
	for _, p := range preds {
		v = max(v, p.ModelVersion)
	}
	return v
}

func readAnnouncements(t *testing.T, ctx context.Context, conn *brokers.Connection) []snapshot.Announcement {
	t.Helper()
	var out []snapshot.Announcement
	if _, err := conn.ReadAnnouncements(ctx, "model-versions", "default", func(a snapshot.Announcement) { out = append(out, a) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// listModelVersions runs `streamer model list --json` on the cluster.
func listModelVersions(t *testing.T, bin, addr string) map[snapshot.Stamp]snapshot.Known {
	t.Helper()
	out, err := exec.Command(bin, "model", "list", "--json", "--set", "kafka.brokers="+addr).Output()
	if err != nil {
		t.Fatalf("streamer model list: %v", err)
	}
	listed := map[snapshot.Stamp]snapshot.Known{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var k snapshot.Known
		if err := json.Unmarshal([]byte(line), &k); err != nil {
			t.Fatalf("streamer model list printed %q: %v", line, err)
		}
		listed[k.Stamp()] = k
	}
	return listed
}

// announceSeconds summarizes the announce_seconds of the solves that the
// processes of dir logged, the cost an announcement adds to a solve,
// beside the solves' own seconds.
func announceSeconds(t *testing.T, dir string) string {
	t.Helper()
	var announce, solve []float64
	for i := 0; ; i++ {
		f, err := os.Open(fmt.Sprintf("%s/run-%d.log", dir, i))
		if err != nil {
			break
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var line struct {
				Msg      string  `json:"msg"`
				Announce float64 `json:"announce_seconds"`
				Solve    float64 `json:"seconds"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "solved" {
				announce, solve = append(announce, line.Announce), append(solve, line.Solve)
			}
		}
		f.Close()
	}
	if len(announce) == 0 {
		return "nothing: no solve logged"
	}
	slices.Sort(announce)
	slices.Sort(solve)
	n := len(announce)
	return fmt.Sprintf("%.2fms median, %.2fms at most, over %d solves of %.1fms median (%.1f to %.1fms)",
		1e3*announce[n/2], 1e3*announce[n-1], n, 1e3*solve[n/2], 1e3*solve[0], 1e3*solve[n-1])
}

// TestUnannouncedModelIsDropped: while its announcement cannot be
// written, a solve's model is dropped: the model in force goes on
// scoring, the dropped version is counted and never used, and once the
// versions topic takes records again the next solve is announced under a
// later version and scores.
func TestUnannouncedModelIsDropped(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	logs := &lockedBuffer{}
	run := startService(t, testConfig(t, addrs), newTextLogger(logs))
	svc := run.svc
	<-svc.Started()
	stream := newStreamWriter(t, addrs, 41)
	stream.write(t, ctx, 400)
	waitFor(t, "a model", 30*time.Second, func() bool { return svc.Status().Pipeline.ModelVersion > 0 })
	conn := testConnection(t, testConfig(t, addrs).Brokers(), addrs)
	preds := readPredictions(t, ctx, addrs)

	release := make(chan struct{})
	brokerstest.RefuseProduce(cluster.Cluster, "model-versions", release)
	dropped := func() float64 { return testutil.ToFloat64(svc.metrics.Solves.WithLabelValues("unannounced")) }
	var ids []string
	dropSolves := func(n float64) {
		for dropped() < n {
			if ctx.Err() != nil {
				t.Fatalf("%v of %v solves dropped while the versions topic refused records", dropped(), n)
			}
			ids = append(ids, stream.write(t, ctx, 50)...)
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A solve announced as the refusal began may come in force meanwhile:
	// the model in force is taken at the first dropped solve.
	dropSolves(1)
	inForce := svc.Status().Pipeline.ModelVersion
	dropSolves(2)
	if v := svc.Status().Pipeline.ModelVersion; v != inForce {
		t.Fatalf("model version %d in force after two dropped solves, %d after the first: want it unchanged", v, inForce)
	}
	waitFor(t, "the predictions of the examples written meanwhile", 30*time.Second, func() bool { return preds.has(ids) == len(ids) })
	for _, p := range preds.all() {
		if p.ModelVersion > inForce {
			t.Fatalf("%s stamped with version %d, not announced", p.ID, p.ModelVersion)
		}
	}
	droppedVersion := loggedVersion(t, logs.String(), "model dropped: its version was not announced; the next trigger solves again")

	close(release)
	waitFor(t, "a model announced after the refusal", 30*time.Second, func() bool {
		stream.write(t, ctx, 20)
		return svc.Status().Pipeline.ModelVersion > droppedVersion
	})
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, a := range readAnnouncements(t, ctx, conn) {
		if seen[a.Version] || a.Version == droppedVersion {
			t.Errorf("version %d announced again, or the dropped one", a.Version)
		}
		seen[a.Version] = true
	}
	for _, p := range preds.all() {
		if p.Label != nil && !seen[p.ModelVersion] {
			t.Errorf("%s stamped with version %d, never announced", p.ID, p.ModelVersion)
		}
	}
}

// loggedVersion returns the model_version of the first text log line of
// msg.
func loggedVersion(t *testing.T, logs, msg string) uint64 {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		if m, _ := textField(line, "msg"); m == msg {
			v, _ := textField(line, "model_version")
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("%q: model_version %q", line, v)
			}
			return n
		}
	}
	t.Fatalf("no %q in the log:\n%s", msg, logs)
	return 0
}
