package service

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamer/brokers/embedded"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestBrokerGoesAwayAndComesBack stops the cluster under a running service
// and starts it again on the same port with the same data: the service
// retries with backoff, says so in its log, does not crash, and every
// example gets its prediction.
func TestBrokerGoesAwayAndComesBack(t *testing.T) {
	dir := t.TempDir()
	listen := "127.0.0.1:" + strconv.Itoa(freePort(t))
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
}
