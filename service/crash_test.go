package service

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/internal/testlevel"
	"streamer/pipeline"
	"streamer/snapshot"
	"streamer/synth"
)

// crashExamples is the size of the crash test's stream: 16,000 in CI,
// STREAMER_CRASH_EXAMPLES=200000 for the full run documented in docs/OPERATING.md.
func crashExamples(t *testing.T) int { return envCount(t, "STREAMER_CRASH_EXAMPLES", 16000) }

// envCount returns the positive count in the environment variable name,
// or def when it is not set.
func envCount(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive count", name, s)
	}
	return n
}

// buildStreamer builds the streamer command for tests that run it as a
// process.
func buildStreamer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "streamer")
	cmd := exec.Command("go", "build", "-o", bin, "streamer/cmd/streamer")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build streamer: %v\n%s", err, out)
	}
	return bin
}

// process is one `streamer run` process. The test that starts it owns it:
// it is killed, with its process group, when the test ends, whatever the
// path.
type process struct {
	cmd  *exec.Cmd
	log  string
	exit chan struct{} // closed when the process has exited
	err  error         // Wait's result, once exit is closed
}

// startProcess starts `streamer run` against addr, logging to a file in
// dir. It may be called from any goroutine: it reports errors instead of
// failing the test.
func startProcess(t *testing.T, bin string, addr, dir string, n int, extra ...string) (*process, error) {
	logPath := filepath.Join(dir, fmt.Sprintf("run-%d.log", n))
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"run",
		"--set", "kafka.brokers=" + addr,
		"--set", "http.listen=127.0.0.1:0",
		"--set", "kafka.partitions=2",
		"--set", "window.max_examples=2000",
		"--set", "schedule.solve_examples=500",
		"--set", "schedule.solve_labels=25",
		"--set", "schedule.solve_interval=1s",
		"--set", "snapshot.every_solves=1",
		"--set", "features.dim=65536",
		"--set", "solver.lambda_u=0.1",
		"--set", "shutdown.timeout=10s",
		"--set", "kafka.session_timeout=6s",
		"--set", "kafka.rebalance_timeout=6s",
	}
	for _, e := range extra {
		args = append(args, "--set", e)
	}
	cmd := exec.Command(bin, args...)
	ownChild(cmd)
	cmd.Stderr, cmd.Stdout = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &process{cmd: cmd, log: logPath, exit: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.exit) }()
	t.Cleanup(func() { p.kill() })
	return p, nil
}

// kill kills the process and its group with SIGKILL, and waits for it.
func (p *process) kill() {
	select {
	case <-p.exit:
		return
	default:
	}
	killGroup(p.cmd)
	<-p.exit
}

// signal sends sig to the process and waits up to timeout for it to exit;
// it reports whether it did.
func (p *process) signal(sig os.Signal, timeout time.Duration) bool {
	p.cmd.Process.Signal(sig)
	select {
	case <-p.exit:
		return true
	case <-time.After(timeout):
		return false
	}
}

// tail returns the last lines of the process's log, for a failure report.
func (p *process) tail(lines int) string {
	b, _ := os.ReadFile(p.log)
	l := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(l[max(0, len(l)-lines):], "\n")
}

// restoredVersion reads the model version a process logged it restored,
// 0 when it restored none; false until it logged either.
func (p *process) restoredVersion() (uint64, bool) {
	f, err := os.Open(p.log)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg     string `json:"msg"`
			Version uint64 `json:"model_version"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Msg {
		case "restored snapshot":
			return line.Version, true
		case "consuming":
			return 0, true
		}
	}
	return 0, false
}

// produceStream streams n generated examples at rate per second, revealing
// a tenth of the labels 50 examples later; it returns the true labels of
// the revealed examples and every id.
func produceStream(ctx context.Context, t *testing.T, addr string, n, rate int) (map[string]string, []string) {
	w := &kafka.Writer{Addr: kafka.TCP(addr), Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, AllowAutoTopicCreation: true, Transport: newTestTransport(t)}
	defer w.Close()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 11})
	revealed := map[string]string{}
	var ids []string
	var pending []kafka.Message
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	per := max(1, rate/100)
	for len(ids) < n {
		var msgs []kafka.Message
		for range per {
			if len(ids) == n {
				break
			}
			d := gen.Next()
			v, _ := json.Marshal(map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text})
			msgs = append(msgs, kafka.Message{Topic: "examples", Key: []byte(d.ID), Value: v})
			if len(ids)%10 == 0 {
				l, _ := json.Marshal(map[string]string{"id": d.ID, "label": d.Label})
				pending = append(pending, kafka.Message{Topic: "labels", Key: []byte(d.ID), Value: l, Time: time.Unix(int64(len(ids)+50), 0)})
				revealed[d.ID] = d.Label
			}
			ids = append(ids, d.ID)
		}
		for len(pending) > 0 && (pending[0].Time.Unix() <= int64(len(ids)) || len(ids) == n) {
			m := pending[0]
			m.Time = time.Time{}
			msgs = append(msgs, m)
			pending = pending[1:]
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			if ctx.Err() == nil {
				t.Errorf("produce: %v", err)
			}
			return revealed, ids
		}
		<-tick.C
	}
	return revealed, ids
}

// streamed is what produceStream wrote: every id, in order, and the true
// labels of the revealed examples.
type streamed struct {
	revealed map[string]string
	ids      []string
}

// produceInBackground runs produceStream in a goroutine of its own: the
// stream comes on the channel once written; stop ends it early and waits
// for the goroutine.
func produceInBackground(ctx context.Context, t *testing.T, addr string, n, rate int) (<-chan streamed, func()) {
	out := make(chan streamed, 1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		revealed, ids := produceStream(ctx, t, addr, n, rate)
		out <- streamed{revealed, ids}
	}()
	return out, func() { cancel(); <-done }
}

// accuracyAfterWarmUp is the prequential accuracy of first past the first
// eighth of the stream, where either run's accuracy depends on how much
// arrives before its first model.
func (s streamed) accuracyAfterWarmUp(first map[string]pipeline.Prediction) float64 {
	afterWarmUp := map[string]string{}
	for _, id := range s.ids[len(s.ids)/8:] {
		if l, ok := s.revealed[id]; ok {
			afterWarmUp[id] = l
		}
	}
	return accuracy(first, afterWarmUp)
}

// firstPredictions reads the predictions topic and keeps the first
// prediction of each example: the one made when it arrived. It may be
// called from any goroutine.
func firstPredictions(t *testing.T, ctx context.Context, addr string, ids []string) (map[string]pipeline.Prediction, error) {
	l := readPredictions(t, ctx, []string{addr})
	if err := poll(ctx, 3*time.Minute, func() bool { return l.has(ids) == len(ids) }); err != nil {
		return nil, fmt.Errorf("a prediction for every example (%d of %d): %w", l.has(ids), len(ids), err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	first := map[string]pipeline.Prediction{}
	for id, ps := range l.byID {
		first[id] = ps[0]
	}
	return first, nil
}

// poll checks cond every 20ms until it holds, timeout passes or ctx ends.
// Unlike waitFor it fails nothing, so goroutines other than the test's
// may use it.
func poll(ctx context.Context, timeout time.Duration, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %v: %w", timeout, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

func accuracy(first map[string]pipeline.Prediction, revealed map[string]string) float64 {
	ok, n := 0, 0
	for id, label := range revealed {
		p := first[id]
		if p.Label == nil {
			continue // before the first model
		}
		n++
		if *p.Label == label {
			ok++
		}
	}
	return float64(ok) / float64(n)
}

// accuracyByEighth is the accuracy over each eighth of the stream, in
// stream order, to show where a run lost it.
func accuracyByEighth(first map[string]pipeline.Prediction, revealed map[string]string, ids []string) string {
	var parts []string
	for i := range 8 {
		part := map[string]string{}
		for _, id := range ids[i*len(ids)/8 : (i+1)*len(ids)/8] {
			if l, ok := revealed[id]; ok {
				part[id] = l
			}
		}
		parts = append(parts, fmt.Sprintf("%.3f", accuracy(first, part)))
	}
	return strings.Join(parts, " ")
}

// TestCrashSafety streams examples with labels while a real `streamer run`
// process is killed with SIGKILL at random points and restarted each time.
// Every example must get a prediction, each restart must resume from the
// newest snapshot on the topic, and the prequential accuracy must stay
// within one point of an uninterrupted run over the same stream.
//
// The first eighth of the stream is left out of that comparison: there both
// runs predict with whatever model they have before the first solves, and
// how many examples arrive before those depends on the machine's load, not
// on crashes (on a loaded machine it ranged from 0.72 to 0.95 in either
// run, against 0.965 to 1.000 for every later eighth). The kills start
// once a snapshot has learned from that eighth, and stop at maxCrashKills:
// the producer runs longer on a slower machine, and without a cap the
// number of crashes, and so the examples predicted by a restored model
// while a restarted process catches up, grew with the load (16 kills cost
// 3 points on a machine running 15 other jobs; 7 and 8 cost 0.2).
func TestCrashSafety(t *testing.T) {
	testlevel.Long(t, "the crash test runs real processes; it runs without -short")
	bin := buildStreamer(t)
	n := crashExamples(t)
	rate := 1000 // examples a second: long enough for 6 to 8 kills after the first snapshot
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(n/rate)*time.Second*4+3*time.Minute)
	defer cancel()

	withinAPointOfCalm(t, "crashes", func(crash bool) (float64, error) { return runCrashing(t, ctx, bin, n, rate, crash) })
}

// withinAPointOfCalm runs the same stream twice at once, disturbed (run's
// argument true) and not, and fails the test unless both runs succeed and
// the disturbed run's prequential accuracy after the first eighth is
// within one point of the calm one's.
func withinAPointOfCalm(t *testing.T, disturbance string, run func(disturbed bool) (float64, error)) {
	t.Helper()
	var disturbed, calm float64
	var disturbedErr, calmErr error
	var wg sync.WaitGroup
	wg.Go(func() { disturbed, disturbedErr = run(true) })
	wg.Go(func() { calm, calmErr = run(false) })
	wg.Wait()
	if disturbedErr != nil || calmErr != nil {
		t.Fatalf("with %s: %v; without: %v", disturbance, disturbedErr, calmErr)
	}
	t.Logf("prequential accuracy after the first eighth: %.4f with %s, %.4f without", disturbed, disturbance, calm)
	if disturbed < calm-0.01 {
		t.Fatalf("accuracy with %s %.4f is more than a point below the uninterrupted %.4f", disturbance, disturbed, calm)
	}
}

// maxCrashKills is the number of SIGKILLs of one crash run.
const maxCrashKills = 8

// runCrashing runs the stream on its own cluster with one process, killed
// and restarted now and then when kill is set, and returns the prequential
// accuracy after the first eighth of the stream. It runs in a goroutine of its own: it returns errors rather
// than failing the test, and every process it starts is killed when the
// test ends, whatever happens here.
func runCrashing(t *testing.T, ctx context.Context, bin string, n, rate int, kill bool) (float64, error) {
	cluster, err := embedded.Start(embedded.Config{Partitions: 2})
	if err != nil {
		return 0, err
	}
	defer cluster.Close()
	addr := cluster.Addrs()[0]
	dir := t.TempDir()
	produced, stopProducing := produceInBackground(ctx, t, addr, n, rate)
	defer stopProducing()
	conn, err := (brokers.Config{Brokers: []string{addr}}).Connect([]string{addr})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	r := rand.New(rand.NewPCG(uint64(n), 3))
	proc, err := startProcess(t, bin, addr, dir, 0)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (float64, error) {
		return 0, fmt.Errorf("kill=%v: %w\nlast lines of %s:\n%s", kill, err, proc.log, proc.tail(20))
	}
	var res streamed
	kills := 0
	defer func() {
		if kill {
			t.Logf("%d kills", kills)
		}
	}()
	if kill {
		// Crashes start once a snapshot has learned from the warm-up, the
		// first eighth of the stream, which the comparison leaves out. A
		// crash before the first snapshot has nothing to recover: the
		// restarted process starts cold, and the examples that queued up
		// meanwhile are predicted without a model (one such run scored
		// 0.52, 0.71 and 0.85 in the first three eighths). A crash right
		// after the first solve restores a model of some 25 labels: the
		// kills come faster than a restarted process rejoins the group, so
		// that model scores every example that queues up meanwhile (four
		// runs in twenty scored 0.67 to 0.85 so).
		err := poll(ctx, time.Minute, func() bool {
			snap, err := newestSnapshot(ctx, conn)
			return err == nil && snap.Stats.Examples >= int64(n/8)
		})
		if err != nil {
			return fail(fmt.Errorf("a snapshot of the first eighth: %w", err))
		}
	}
	for runs := 1; ; runs++ {
		select {
		case res = <-produced:
		case <-time.After(time.Duration(400+r.IntN(1200)) * time.Millisecond):
		}
		if res.ids != nil || !kill || kills == maxCrashKills {
			if res.ids == nil {
				res = <-produced
			}
			break
		}
		proc.kill()
		kills++
		newest, err := newestSnapshot(ctx, conn)
		if err != nil {
			return fail(err)
		}
		if proc, err = startProcess(t, bin, addr, dir, runs); err != nil {
			return 0, err
		}
		if err := poll(ctx, time.Minute, func() bool { _, ok := proc.restoredVersion(); return ok }); err != nil {
			return fail(fmt.Errorf("the restarted process to start consuming: %w", err))
		}
		if got, _ := proc.restoredVersion(); got != newest.Version {
			t.Errorf("run %d restored version %d, the newest snapshot was %d", runs, got, newest.Version)
		}
	}
	t0 := time.Now()
	first, err := firstPredictions(t, ctx, addr, res.ids)
	if err != nil {
		return fail(err)
	}
	t.Logf("kill=%v: predictions read in %v", kill, time.Since(t0))
	// The last solves say how many labels the window held: the first thing
	// to look at when the crashing run's accuracy falls behind.
	t.Logf("kill=%v: the last process's last lines before SIGTERM:\n%s", kill, proc.tail(3))
	t0 = time.Now()
	if !proc.signal(syscall.SIGTERM, 30*time.Second) {
		return fail(fmt.Errorf("the process did not stop within 30s of SIGTERM"))
	}
	t.Logf("kill=%v: stopped in %v", kill, time.Since(t0))
	if proc.err != nil {
		return fail(fmt.Errorf("SIGTERM: the process exited with %v", proc.err))
	}
	t.Logf("kill=%v: accuracy by eighth of the stream: %s", kill, accuracyByEighth(first, res.revealed, res.ids))
	return res.accuracyAfterWarmUp(first), nil
}

// newestSnapshot returns the newest complete snapshot on the topic, the
// zero snapshot (version 0) when there is none.
func newestSnapshot(ctx context.Context, conn *brokers.Connection) (snapshot.Snapshot, error) {
	c, ok, _, err := conn.ReadSnapshots(ctx, "model-snapshots", "default")
	if err != nil && !strings.Contains(err.Error(), "Unknown Topic") {
		return snapshot.Snapshot{}, err
	}
	if !ok {
		return snapshot.Snapshot{}, nil
	}
	snap, err := snapshot.Decode(c.Data)
	if err != nil {
		return snapshot.Snapshot{}, err
	}
	return *snap, nil
}
