package service

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamer/brokers/embedded"
	"streamer/internal/testlevel"
)

// TestBrokerGoesAwayAndComesBack stops the cluster under a running service
// and starts it again on the same port with the same data: the service
// retries with backoff, says so in its log, does not crash, and every
// example gets its prediction.
func TestBrokerGoesAwayAndComesBack(t *testing.T) {
	testlevel.Long(t, "stops the brokers under a running service")
	dir := t.TempDir()
	listen, release := reservePort(t)
	release()
	start := func() *embedded.Cluster {
		c, err := embedded.Start(embedded.Config{Listen: listen, DataDir: dir, Partitions: 2})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cluster := start()
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t, addrs, "kafka.retry_backoff=100ms")
	var logs lockedBuffer
	run := startService(t, cfg, newTextLogger(&logs))
	svc := run.svc
	<-svc.Started()

	stream := newStreamWriter(t, addrs, 6)
	ids := stream.write(t, ctx, 200)
	waitFor(t, "the first examples", 30*time.Second, func() bool { return svc.Status().Pipeline.Examples >= 200 })
	stream.w.Close()

	cluster.Close()
	waitFor(t, "a retry in the log", 30*time.Second, func() bool {
		l := logs.String()
		return strings.Contains(l, "retrying") || strings.Contains(l, "kafka reader")
	})
	// An outage of several collapse steps: every kind of warning is
	// written at 0, 1, 3 and 7s at most, the rest counted.
	time.Sleep(outage)
	if run.exited() {
		t.Fatalf("the service exited while the broker was away: %v", run.result)
	}
	cluster = start()
	defer cluster.Close()

	stream.w = newStreamWriter(t, addrs, 0).w
	ids = append(ids, stream.write(t, ctx, 200)...)
	waitFor(t, "the examples after the outage", time.Minute, func() bool { return svc.Status().Pipeline.Examples >= 400 })
	preds := readPredictions(t, ctx, addrs)
	waitFor(t, "a prediction for every example", time.Minute, func() bool { return preds.has(ids) == len(ids) })
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "retrying") || strings.Contains(line, "kafka reader") {
			t.Log(line)
		}
	}
	checkWarningsCollapsed(t, logs.String())
}

// outage is how long TestBrokerGoesAwayAndComesBack keeps the brokers
// away once the service has noticed.
const outage = 8 * time.Second

// checkWarningsCollapsed checks the text logs of a run through an outage:
// no kind of warning (level and message) has more lines than the collapse
// steps of the outage allow (at 0, 1, 3 and 7s, a last one for the
// records held back, and as many again after a quiet minute, which a
// test this short never has), and some lines stand for repeats.
func checkWarningsCollapsed(t *testing.T, logs string) {
	t.Helper()
	lines := map[string]int{}
	records, written := 0, 0
	for _, line := range strings.Split(logs, "\n") {
		level, ok := textField(line, "level")
		if !ok || (level != "WARN" && level != "ERROR") {
			continue
		}
		msg, _ := textField(line, "msg")
		lines[level+" "+msg]++
		written++
		records++
		if r, ok := textField(line, "repeated"); ok {
			n, _ := strconv.Atoi(r)
			records += n
		}
	}
	for kind, n := range lines {
		if n > 5 {
			t.Errorf("%d lines of %q through an outage of %v", n, kind, outage)
		}
	}
	t.Logf("%d warnings and errors in %d lines, of %d kinds", records, written, len(lines))
	if records == written {
		t.Errorf("no line stands for repeated warnings: %d lines of %d kinds", written, len(lines))
	}
}

// textField returns the value of key in a line of slog's text handler,
// unquoted.
func textField(line, key string) (string, bool) {
	i := strings.Index(line, " "+key+"=")
	if i < 0 && strings.HasPrefix(line, key+"=") {
		i = -1
	} else if i < 0 {
		return "", false
	}
	rest := line[i+len(key)+2:]
	if strings.HasPrefix(rest, `"`) {
		if v, err := strconv.QuotedPrefix(rest); err == nil {
			u, _ := strconv.Unquote(v)
			return u, true
		}
	}
	v, _, _ := strings.Cut(rest, " ")
	return v, true
}
