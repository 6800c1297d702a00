package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// startLoggedService starts a cluster and a service on it with the test
// configuration and extra, logging as text at info into the buffer it
// returns, and waits until the service consumes.
func startLoggedService(t *testing.T, extra ...string) (*running, []string, *lockedBuffer) {
	t.Helper()
	addrs := startCluster(t).Addrs()
	logs := &lockedBuffer{}
	run := startService(t, testConfig(t, addrs, extra...), newTextLogger(logs))
	<-run.svc.Started()
	return run, addrs, logs
}

// TestCaughtUpConsumerLogsNoWarning runs the service on empty topics, then
// on a few records until it has caught up: waiting at the end of a
// partition is normal operation and logs no warning (kafka-go's reader
// used to time out its own fetches there, "unknown error … i/o timeout").
func TestCaughtUpConsumerLogsNoWarning(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, addrs, logs := startLoggedService(t)
	stream := newStreamWriter(t, addrs, 21)
	stream.write(t, ctx, 200)
	waitFor(t, "every example", 30*time.Second, func() bool { return run.svc.Status().Pipeline.Examples >= 200 })
	// Several fetches wait at the end of every partition meanwhile.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(logs.String(), "level=WARN") {
			break
		}
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			t.Errorf("normal operation logged: %s", line)
		}
	}
}

// TestSkippedSolvesLogOnce streams examples without labels (but the
// first): every trigger tries a solve and skips it, each counted, but a
// reason is logged once, not at every trigger. Two reasons may follow
// each other: no labeled row while the one label is on its way, then
// one class.
func TestSkippedSolvesLogOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, addrs, logs := startLoggedService(t, "schedule.solve_examples=20")
	stream := newStreamWriter(t, addrs, 22)
	stream.rate = 1 << 30 // one label, the first example's
	skipped := func() float64 { return testutil.ToFloat64(run.svc.metrics.Solves.WithLabelValues("skipped")) }
	for skipped() < 3 {
		if ctx.Err() != nil {
			t.Fatalf("%v skipped solves after %d examples", skipped(), stream.n)
		}
		stream.write(t, ctx, 40)
		time.Sleep(50 * time.Millisecond)
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if _, reason, ok := strings.Cut(line, `msg="solve skipped" reason=`); ok {
			reasons = append(reasons, reason)
		}
	}
	repeated := false
	for i := 1; i < len(reasons); i++ {
		repeated = repeated || reasons[i] == reasons[i-1]
	}
	if len(reasons) == 0 || repeated || float64(len(reasons)) >= skipped() {
		t.Errorf("%v skipped solves logged with the reasons %q, want each reason once in a row:\n%s", skipped(), reasons, logs.String())
	}
}
